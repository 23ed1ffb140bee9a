package region

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/fleet"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
)

// spotReleaseJSON is testdata/spot-fleet-release.json as the client
// uploads it.
func spotReleaseJSON(t *testing.T, id string, created time.Time, mutate ...func(*release.Release)) []byte {
	t.Helper()
	rel, err := release.ReadFile(filepath.Join("..", "..", "..", "testdata", "spot-fleet-release.json"))
	require.NoError(t, err)
	rel.ReleaseID, rel.CreatedAt, rel.CreatedBy = id, created.UTC(), "arn:aws:iam::111111111111:user/alice"
	rel.BakeSeconds = 600
	for _, m := range mutate {
		m(rel)
	}
	raw, err := json.Marshal(rel)
	require.NoError(t, err)
	return raw
}

// TestSpotFleetDeploy deploys a mixed Spot fleet (weighted overrides,
// an On-Demand base, 25% On-Demand above it) through the real definition
// and handlers while EC2 interrupts one of its Spot instances during
// CheckHealthy and one during the bake ("Spot Instance interruption
// notices", "EC2 instance rebalance recommendations", EC2 User Guide):
//
//   - With Capacity Rebalancing and the recommendation ahead of the
//     notice, the group launches each replacement and terminates the
//     instance once the replacement passes its health check ("Capacity
//     Rebalancing", Auto Scaling User Guide): no capacity is lost, the
//     terminations count against no max_terms, and the deploy succeeds
//     at its capacity in weighted units.
//   - Without it, each interruption is an instance lost, as any other:
//     with max_terms 0 the deploy halts during CheckHealthy; with
//     max_terms 1 the first is tolerated, the second, in the bake, rolls
//     back: the previous fleet serves again.
func TestSpotFleetDeploy(t *testing.T) {
	tests := []struct {
		name      string
		rebalance bool
		maxTerms  int
		lead      time.Duration // the recommendation ahead of the notice
		end       string
		bake      bool   // the path reaches the bake
		cause     string // in the halt's cause
	}{
		{name: "with capacity rebalance", rebalance: true, lead: 5 * time.Minute, end: execution.EndSuccess, bake: true},
		{name: "without, max_terms 0", end: execution.EndFailureClean,
			cause: "service web: 1 instance of its new group terminated during the deploy, more than its max_terms of 0"},
		{name: "without, max_terms 1", maxTerms: 1, end: execution.EndFailureClean, bake: true,
			cause: "service web: 2 instances of its new group terminated during the deploy, more than its max_terms of 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			var r *Region
			group := naming.GroupName(testProject, testConfig, "web", "r-spot")
			interrupted := map[string]int{}
			r, clk := newTestRegion(t, Options{Intercept: func(ctx context.Context, req execution.Request, next Invoke) (json.RawMessage, error) {
				if req.Execution.Name == "r-spot" && (req.Task == execution.TaskCheckHealthy || req.Task == execution.TaskBake) {
					if interrupted[req.Task] == 0 && len(spotOf(t, r, group)) > 0 {
						ids, err := r.World().InterruptSpot(account0(r), region0(r), group, 1, tt.lead)
						require.NoError(t, err)
						interrupted[req.Task] += len(ids)
					}
				}
				return next(ctx, req)
			}})
			prev, err := r.StartRelease(ctx, releaseJSON(t, clk, "r-prev"))
			require.NoError(t, err)
			require.NoError(t, prev.Wait(ctx))
			require.Equal(t, execution.EndSuccess, last(prev.Path()))

			x, err := r.StartRelease(ctx, spotReleaseJSON(t, "r-spot", clk.Now().Add(-time.Minute), func(rel *release.Release) {
				rel.Services["web"].MixedInstances.CapacityRebalance = tt.rebalance
				rel.Services["web"].Autoscaling.MaxTerms = tt.maxTerms
			}))
			require.NoError(t, err)
			require.NoError(t, x.Wait(ctx))
			d := x.Describe()
			path := x.Path()
			require.Equal(t, tt.end, last(path), "%s: %s", d.Error, d.Cause)
			assert.Equal(t, 1, interrupted[execution.TaskCheckHealthy], "interrupted during CheckHealthy")
			assert.Equal(t, tt.bake, slices.Contains(path, execution.TaskBake), "the bake reached: %v", path)
			if tt.bake {
				assert.Equal(t, 1, interrupted[execution.TaskBake], "and during the bake")
			}
			if tt.end != execution.EndSuccess {
				assert.Contains(t, d.Cause, tt.cause)
				served, _ := inServiceIn(t, r.World(), webELB)
				assert.Positive(t, served[naming.GroupName(testProject, testConfig, "web", "r-prev")], "the previous fleet serves")
				return
			}
			out, err := r.World().Clients(account0(r), region0(r)).AutoScaling.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{group}})
			require.NoError(t, err)
			require.Len(t, out.AutoScalingGroups, 1)
			g := out.AutoScalingGroups[0]
			require.NotNil(t, g.MixedInstancesPolicy, "made with its mixed instances policy")
			assert.True(t, aws.ToBool(g.CapacityRebalance))
			assert.Equal(t, "", fleet.LaunchDrift(g), "launches from the template ferry made, through its policy")
			units := 0
			for _, i := range g.Instances {
				if !strings.HasPrefix(string(i.LifecycleState), "Terminating") {
					units += fleet.Weight(i)
				}
			}
			assert.GreaterOrEqual(t, units, int(aws.ToInt32(g.DesiredCapacity)), "at its desired capacity in weighted units")
			assert.Equal(t, 6, int(aws.ToInt32(g.DesiredCapacity)), "min_size 6 units")
		})
	}
}

// spotOf are the Spot instances of group in r's world.
func spotOf(t *testing.T, r *Region, group string) []string {
	t.Helper()
	return r.World().SpotInstances(account0(r), region0(r), group)
}

func account0(r *Region) string { return r.World().Snapshot().Accounts[0].Account }
func region0(r *Region) string  { return r.World().Snapshot().Accounts[0].Region }
