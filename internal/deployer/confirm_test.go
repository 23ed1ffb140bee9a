package deployer

import (
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/stretchr/testify/assert"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/health"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/tuning"
)

// checkScene is a release of n services whose new groups each have
// inService instances in service, and their previous reports.
func checkScene(n int, inService func(i int) int, prev func(i int) execution.ServiceHealth) (*execution.State, []string, []string, map[string]asgtypes.AutoScalingGroup, map[string]execution.ServiceHealth) {
	st := &execution.State{ProjectName: "p", ConfigName: "c", ReleaseID: "r1", Health: &execution.Health{Checks: 3}}
	tags := []asgtypes.TagDescription{
		{Key: aws.String(naming.TagProjectName), Value: aws.String("p")}, {Key: aws.String(naming.TagConfigName), Value: aws.String("c")},
		{Key: aws.String(naming.TagDeployWith), Value: aws.String(naming.DeployWithValue)}, {Key: aws.String(naming.TagReleaseID), Value: aws.String("r1")},
	}
	var services, names []string
	groups, caps := map[string]asgtypes.AutoScalingGroup{}, map[string]execution.ServiceHealth{}
	for i := range n {
		svc := fmt.Sprintf("svc%02d", i)
		name := naming.GroupName("p", "c", svc, "r1")
		services, names = append(services, svc), append(names, name)
		g := asgtypes.AutoScalingGroup{AutoScalingGroupName: aws.String(name), Tags: tags}
		var ids []string
		for k := range inService(i) {
			id := fmt.Sprintf("i-%03d%03d", i, k)
			ids = append(ids, id)
			g.Instances = append(g.Instances, asgtypes.Instance{InstanceId: aws.String(id), LifecycleState: asgtypes.LifecycleStateInService})
		}
		groups[name] = g
		p := prev(i)
		if p.HealthySince != nil {
			p.Instances = health.Digest(ids)
		}
		caps[svc] = p
	}
	return st, services, names, groups, caps
}

// TestToAskBudget: with more services to ask than
// tuning.ServicesAskedPerCheck, a check asks that many: those at their
// target first (to confirm them), then those nearest it; the others'
// counts are carried on (held). A check of every balancer (the bake, the
// swap's gate) asks them all.
func TestToAskBudget(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 10, 0, 0, time.UTC)
	long := now.Add(-2 * time.Minute)
	n := tuning.ServicesAskedPerCheck + 10
	st, services, names, groups, caps := checkScene(n, func(i int) int { return 2 + i%3 }, func(i int) execution.ServiceHealth {
		if i == n-1 { // at its target, window over: to confirm
			return execution.ServiceHealth{Healthy: 4, Target: 4, StableSeconds: 60, HealthySince: &long}
		}
		return execution.ServiceHealth{Target: 4, StableSeconds: 60}
	})
	ask, held := toAsk(st, services, names, groups, caps, now, balancersUnsettled)
	asked := 0
	for _, svc := range services {
		if ask[svc] {
			asked++
		}
		assert.NotEqual(t, ask[svc], held[svc], svc)
	}
	assert.Equal(t, tuning.ServicesAskedPerCheck, asked)
	assert.True(t, ask[services[n-1]], "the service to confirm first")
	for i, svc := range services[:n-1] {
		if 2+i%3 == 4 {
			assert.True(t, ask[svc], "%s: all its target in service", svc)
		}
	}
	ask, _ = toAsk(st, services, names, groups, caps, now, balancersAll)
	for _, svc := range services {
		assert.True(t, ask[svc], svc)
	}
}

// TestHoldingConfirmed: a service confirmed stable (its load balancers
// asked once its window was over) is held afterwards, with the same
// instances; one whose window is over unconfirmed, or whose instances
// changed, is not.
func TestHoldingConfirmed(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 10, 0, 0, time.UTC)
	long := now.Add(-2 * time.Minute)
	for _, tc := range []struct {
		name      string
		confirmed bool
		changed   bool
		want      bool
	}{
		{"confirmed", true, false, true},
		{"window over, not confirmed", false, false, false},
		{"confirmed, an instance replaced", true, true, false},
	} {
		_, _, names, groups, caps := checkScene(1, func(int) int { return 2 }, func(int) execution.ServiceHealth {
			return execution.ServiceHealth{Healthy: 2, Target: 2, StableSeconds: 60, HealthySince: &long, Confirmed: tc.confirmed}
		})
		g := groups[names[0]]
		if tc.changed {
			g.Instances[0].InstanceId = aws.String("i-new")
		}
		assert.Equal(t, tc.want, holding(caps["svc00"], g, now), tc.name)
	}
}

// TestWindowConfirmsInTurns: with more windows to confirm than
// tuning.ConfirmPerCheck, the next check is at the end of the
// ConfirmPerCheck-th earliest, not the last; confirmed services count no
// more; with fewer, at the last window's end.
func TestWindowConfirmsInTurns(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 10, 0, 0, time.UTC)
	report := func(n int, confirmed int) map[string]execution.ServiceHealth {
		out := map[string]execution.ServiceHealth{}
		for i := range n {
			since := now.Add(-time.Duration(59-i) * time.Second) // window ends in i+1 s
			out[fmt.Sprintf("s%02d", i)] = execution.ServiceHealth{Healthy: 1, Target: 1, StableSeconds: 60, HealthySince: &since, Confirmed: i < confirmed}
		}
		return out
	}
	assert.Equal(t, 5*time.Second, window(report(5, 0), now))
	n := tuning.ConfirmPerCheck + 15
	assert.Equal(t, time.Duration(tuning.ConfirmPerCheck)*time.Second, window(report(n, 0), now))

	// Windows over: confirmed ones are done, unconfirmed ones due now.
	over := report(n, 0)
	for i := range tuning.ConfirmPerCheck {
		s := over[fmt.Sprintf("s%02d", i)]
		past := now.Add(-2 * time.Minute)
		s.HealthySince, s.Confirmed = &past, true
		over[fmt.Sprintf("s%02d", i)] = s
	}
	assert.Equal(t, time.Duration(n)*time.Second, window(over, now), "15 left: the last window's end")
	for i := range 6 {
		s := over[fmt.Sprintf("s%02d", i)]
		s.Confirmed = false
		over[fmt.Sprintf("s%02d", i)] = s
	}
	assert.Equal(t, time.Duration(2*tuning.ConfirmPerCheck-6)*time.Second, window(over, now), "those due now count")
}
