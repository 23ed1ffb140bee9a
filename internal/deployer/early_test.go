package deployer

import (
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/fleet"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/halt"
	"github.com/ferryhq/ferry/internal/store/ledger"
	"github.com/ferryhq/ferry/internal/tuning"
)

// haltedBelowTarget deploys a release over another, kills an instance of
// the previous group once the new one serves (Auto Scaling replaces it:
// TerminateInstanceInAutoScalingGroup with ShouldDecrementDesiredCapacity
// false, Amazon EC2 Auto Scaling API Reference; its Launch process
// suspended first with noLaunch, so it cannot), halts the release during
// CheckHealthy and runs the failure path. It returns the previous and new
// groups, the run, the failure path's error, and every call of ferry's
// that took the web load balancer or target group below the previous
// release's healthy target (2) from the kill on.
func (h *harness) haltedBelowTarget(noLaunch bool) (old, next string, x *run, err error, below []string) {
	t := h.t
	r1, r2 := h.baseRelease(), h.baseRelease()
	h.start(r1).succeed()
	h.clk.Advance(time.Hour)
	r2.CreatedAt = h.clk.Now().Add(-time.Minute)
	x = h.start(r2)
	require.NoError(t, x.steps(upToDeploy...))
	old, next = naming.GroupName(project, config, "web", r1.ReleaseID), naming.GroupName(project, config, "web", r2.ReleaseID)
	for h.inService(webELB)[next] < 3 {
		h.clk.Advance(time.Duration(x.state.Health.WaitSeconds) * time.Second)
		require.NoError(t, x.step(execution.TaskCheckHealthy))
		require.False(t, x.state.Health.Healthy, "still within the stability window")
	}
	c := h.world.Clients(account, region).AutoScaling.(*sim.AutoScaling)
	if noLaunch {
		_, err = c.SuspendProcesses(t.Context(), &autoscaling.SuspendProcessesInput{AutoScalingGroupName: aws.String(old), ScalingProcesses: []string{"Launch"}})
		require.NoError(t, err)
	}
	_, err = c.TerminateInstanceInAutoScalingGroup(t.Context(), &autoscaling.TerminateInstanceInAutoScalingGroupInput{
		InstanceId: aws.String(h.groups()[old].Instances[0].ID), ShouldDecrementDesiredCapacity: aws.Bool(false)})
	require.NoError(t, err)

	// Every call from now on is ferry's.
	var mu sync.Mutex
	h.world.Observe(func(ch sim.Change) {
		if ch.Call == nil {
			return // the world's own: an instance booted or died
		}
		web := func(b sim.BalancerState) bool {
			return b.Account == account && b.Region == region && (b.Name == webELB || b.Name == webTG)
		}
		was := map[string]int{}
		for _, b := range ch.Before.Balancers {
			if web(b) {
				was[b.Name] = b.Healthy()
			}
		}
		for _, b := range ch.After.Balancers {
			if web(b) && b.Healthy() < was[b.Name] && b.Healthy() < 2 {
				mu.Lock()
				below = append(below, ch.Call.Op+" took "+b.Name+" below 2 healthy")
				mu.Unlock()
			}
		}
	})
	h.clk.Advance(time.Second)
	require.Equal(t, 1, h.inService(webELB)[old], "the previous group is below its target")
	require.NoError(t, h.halts.Put(t.Context(), project, config, halt.Marker{By: "oncall", Reason: "errors up", At: h.clk.Now()}))
	h.clk.Advance(time.Duration(x.state.Health.WaitSeconds) * time.Second)
	err = x.step(execution.TaskCheckHealthy)
	var halted *failure.HaltError
	require.ErrorAs(t, err, &halted)
	err = x.fail(err)
	h.world.Observe(nil)
	return old, next, x, err, below
}

// TestEarlyRollbackKeepsThePreviousTarget: an instance of the previous
// group is killed from outside while the release is judged, and a halt
// fails the release before its swap. CleanUpFailure takes none of the
// release's groups out of the web load balancer and target group while
// the previous group is below its healthy target there: no call of
// ferry's takes either below it, nothing is cut, and the release ends
// FailureClean once the replacement serves.
func TestEarlyRollbackKeepsThePreviousTarget(t *testing.T) {
	h := newHarness(t)
	old, _, x, err, below := h.haltedBelowTarget(false)
	require.NoError(t, err)
	assert.Empty(t, below, "no call of ferry's takes a load balancer below the previous release's target")
	assert.Zero(t, h.world.CutConnections(), "nothing cut, never dark")
	assert.Equal(t, map[string]int{old: 2}, h.inService(webELB), "the previous group serves at its target")
	assert.Empty(t, x.state.RolledBack, "the previous group never stood by")
	o, found, err := h.ledger.GetOutcome(t.Context(), project, config, x.state.ReleaseID)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, execution.EndFailureClean, o.End)
}

// TestEarlyRollbackNeverCuts: the previous group cannot replace the
// instance killed (its Launch process suspended): past
// tuning.RollbackTimeout the release ends FailureDirty, its own group
// left serving beside the previous one and named with why.
func TestEarlyRollbackNeverCuts(t *testing.T) {
	h := newHarness(t)
	start := h.clk.Now()
	old, next, x, err, below := h.haltedBelowTarget(true)
	var ce *failure.CleanUpError
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, ce.Leftovers, "previous group "+old+", back in its load balancers with 1 of 2 instances healthy")
	assert.Contains(t, ce.Leftovers, "auto scaling group "+next)
	assert.Greater(t, h.clk.Now().Sub(start), tuning.RollbackTimeout)
	assert.Empty(t, below)
	assert.Zero(t, h.world.CutConnections())
	assert.Equal(t, map[string]int{old: 1, next: 3}, h.inService(webELB), "the release's group still serves")
	o, found, err := h.ledger.GetOutcome(t.Context(), project, config, x.state.ReleaseID)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, execution.EndFailureDirty, o.End)
}

// TestRestorationOf: a previous group is judged in the load balancers its
// release names for its service, at that service's healthy target from
// the capacity it was deployed with (capacity.Compute); without its
// release (or the service in it), in those it is attached to, at that
// capacity; never above its desired capacity now.
func TestRestorationOf(t *testing.T) {
	prev := &release.Release{Services: map[string]*release.Service{
		"web": {Autoscaling: &release.Autoscaling{MinSize: 2, MaxSize: 10, Spread: 0.25}},
	}}
	named := map[string]ledger.Balancers{"g": {LoadBalancers: []string{"named-elb"}, TargetGroups: []string{"named-tg"}}}
	attached := asgtypes.AutoScalingGroup{LoadBalancerNames: []string{"attached-elb"}, TargetGroupARNs: []string{"attached-tg"}, DesiredCapacity: aws.Int32(8)}
	byName := fleet.Serving{LoadBalancers: []string{"named-elb"}, TargetGroups: []string{"named-tg"}}
	byAttachment := fleet.Serving{LoadBalancers: []string{"attached-elb"}, TargetGroups: []string{"attached-tg"}}
	tests := []struct {
		name    string
		service string
		prev    *release.Release
		desired *int32
		want    restoration
	}{
		{"its release's load balancers, its healthy target", "web", prev, aws.Int32(8), restoration{name: "g", serving: byName, want: 6}},
		{"never above its desired capacity now", "web", prev, aws.Int32(1), restoration{name: "g", serving: byName, want: 1}},
		{"no desired capacity shown: not capped", "web", prev, nil, restoration{name: "g", serving: byName, want: 6}},
		{"no release: its attachments, its deployed capacity", "web", nil, aws.Int32(8), restoration{name: "g", serving: byAttachment, want: 7}},
		{"a service its release lacks: its attachments", "worker", prev, aws.Int32(8), restoration{name: "g", serving: byAttachment, want: 7}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := attached
			g.DesiredCapacity = tc.desired
			got, err := restorationOf(ledger.CurrentGroup{Service: tc.service, Group: "g", Desired: 7}, g, tc.prev, named)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestEarlyRollbackLeavesWhatTheReleaseDoesNotShare: the release leaves
// one of the web service's load balancers (detach), the world takes the
// previous group out of it, and a halt fails the release before its
// swap: the release's groups never served there, so the clean-up neither
// waits for it nor attaches the previous group back to it.
func TestEarlyRollbackLeavesWhatTheReleaseDoesNotShare(t *testing.T) {
	for _, tg := range []bool{false, true} {
		t.Run(map[bool]string{false: "classic load balancer", true: "target group"}[tg], func(t *testing.T) {
			h := newHarness(t)
			r1, r2 := h.baseRelease(), h.baseRelease()
			if tg {
				r2.Services["web"].TargetGroups = nil
				r2.Services["web"].Detach = &release.Detach{TargetGroups: []string{webTG}}
			} else {
				r2.Services["web"].ELBs = nil
				r2.Services["web"].Detach = &release.Detach{ELBs: []string{webELB}}
			}
			h.start(r1).succeed()
			h.clk.Advance(time.Hour)
			r2.CreatedAt = h.clk.Now().Add(-time.Minute)
			x := h.start(r2)
			require.NoError(t, x.steps(upToDeploy...))
			old := naming.GroupName(project, config, "web", r1.ReleaseID)
			c := h.world.Clients(account, region).AutoScaling.(*sim.AutoScaling)
			if tg {
				out, err := c.DescribeAutoScalingGroups(t.Context(), &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{old}})
				require.NoError(t, err)
				require.Len(t, out.AutoScalingGroups, 1)
				_, err = c.DetachLoadBalancerTargetGroups(t.Context(), &autoscaling.DetachLoadBalancerTargetGroupsInput{
					AutoScalingGroupName: aws.String(old), TargetGroupARNs: out.AutoScalingGroups[0].TargetGroupARNs})
				require.NoError(t, err)
			} else {
				h.detachFromOutside(old, false)
			}
			require.NoError(t, h.halts.Put(t.Context(), project, config, halt.Marker{By: "oncall", Reason: "errors up", At: h.clk.Now()}))
			h.clk.Advance(time.Duration(x.state.Health.WaitSeconds) * time.Second)
			err := x.step(execution.TaskCheckHealthy)
			require.Error(t, err)
			require.NoError(t, x.fail(err))
			g := h.groups()[old]
			if tg {
				assert.Empty(t, g.TargetGroups, "not attached back to the target group the release left")
			} else {
				assert.Empty(t, g.LoadBalancers, "not attached back to the load balancer the release left")
			}
			assertFailedClean(t, h, r2, failure.NameHalt)
		})
	}
}
