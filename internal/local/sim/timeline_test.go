package sim_test

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInstanceTimes: the times InstanceTimes reports are the moments the
// APIs change their answers: Pending until InService, the target healthy
// from HealthyAt on (never for a never-healthy instance).
func TestInstanceTimes(t *testing.T) {
	tests := []struct {
		name    string
		image   string
		healthy bool
	}{
		{"healthy", amiOK, true},
		{"never-healthy", amiBad, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.group(t, "g", tt.image, 3)
			times, found := f.world.InstanceTimes(deployer, region, "g")
			require.True(t, found)
			require.Len(t, times, 3)
			for k, it := range times {
				if k > 0 {
					assert.Less(t, times[k-1].ID, it.ID, "sorted by id")
				}
				assert.Equal(t, start, it.Launched)
				assert.True(t, it.InService.After(it.Launched))
				assert.True(t, it.Terminating.IsZero())
				if tt.healthy {
					assert.True(t, it.HealthyAt.After(it.InService))
				} else {
					assert.True(t, it.HealthyAt.IsZero())
				}
			}
			// Each instance on a world of its own (ids, and so times, are
			// deterministic), so no clock setting is behind the world.
			for k, it := range times {
				g := newFixture(t)
				g.group(t, "g", tt.image, 3)
				g.clk.Set(it.InService.Add(-time.Second))
				assert.Equal(t, astypes.LifecycleStatePending, lifecycleOf(t, g, "g", it.ID), "instance %d just before InService", k)
				g.clk.Set(it.InService)
				assert.Equal(t, astypes.LifecycleStateInService, lifecycleOf(t, g, "g", it.ID), "instance %d at InService", k)
				if tt.healthy {
					g.clk.Set(it.HealthyAt.Add(-time.Second))
					assert.Equal(t, "initial", targetState(t, g, it.ID), "instance %d just before HealthyAt", k)
					g.clk.Set(it.HealthyAt)
					assert.Equal(t, "healthy", targetState(t, g, it.ID), "instance %d at HealthyAt", k)
				}
			}
			tg := f.tgARN(t)
			last := times[0].InService
			for _, it := range times {
				if it.HealthyAt.After(last) {
					last = it.HealthyAt
				}
			}
			f.clk.Set(last.Add(time.Minute))
			out, err := f.c.ELBv2.DescribeTargetHealth(f.ctx, &elbv2.DescribeTargetHealthInput{TargetGroupArn: aws.String(tg)})
			require.NoError(t, err)
			for _, d := range out.TargetHealthDescriptions {
				want := "healthy"
				if !tt.healthy {
					want = "unhealthy"
				}
				assert.Equal(t, want, string(d.TargetHealth.State), aws.ToString(d.Target.Id))
			}
		})
	}
}

func TestInstanceTimesUnknown(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct{ account, region, group string }{
		{"999999999999", region, "g"},
		{deployer, "eu-north-1", "g"},
		{deployer, region, "missing"},
	} {
		times, found := f.world.InstanceTimes(c.account, c.region, c.group)
		assert.False(t, found, c)
		assert.Empty(t, times, c)
	}
}

func lifecycleOf(t *testing.T, f *fixture, group, id string) astypes.LifecycleState {
	t.Helper()
	g := f.describe(t, group)
	require.NotNil(t, g)
	for _, i := range g.Instances {
		if aws.ToString(i.InstanceId) == id {
			return i.LifecycleState
		}
	}
	t.Fatalf("instance %s not in group %s", id, group)
	return ""
}

func targetState(t *testing.T, f *fixture, id string) string {
	t.Helper()
	out, err := f.c.ELBv2.DescribeTargetHealth(f.ctx, &elbv2.DescribeTargetHealthInput{TargetGroupArn: aws.String(f.tgARN(t))})
	require.NoError(t, err)
	for _, d := range out.TargetHealthDescriptions {
		if aws.ToString(d.Target.Id) == id {
			return string(d.TargetHealth.State)
		}
	}
	t.Fatalf("instance %s is not a target", id)
	return ""
}
