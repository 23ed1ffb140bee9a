package deployer

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/store/halt"
	"github.com/ferryhq/ferry/internal/tuning"
)

// atBake deploys a first release to Success and runs a second, with a
// bake of bake seconds, up to the end of its health checks: the bake is
// next. It returns the two release ids and the second's run.
func (h *harness) atBake(bake int, alarms ...string) (prev, next string, x *run) {
	h.t.Helper()
	r1 := h.baseRelease()
	r2 := h.baseRelease()
	r2.ReleaseID = "r2-130240"
	r2.BakeSeconds = bake
	r2.Alarms = alarms
	for _, a := range alarms {
		// In ALARM after six minutes of the new instances in service:
		// after the health checks, during a ten-minute bake.
		h.putAlarmAfter(h.t, a, naming.GroupName(project, config, "web", r2.ReleaseID), projectTags, 6)
	}
	return r1.ReleaseID, r2.ReleaseID, h.atSwap(r1, r2)
}

// serving describes a group as the load balancers see it: attached to
// any, and how many of its instances are in service.
func serving(g sim.GroupSnapshot) (attached bool, inService int) {
	for _, i := range g.Instances {
		if i.Lifecycle == "InService" {
			inService++
		}
	}
	return len(g.LoadBalancers)+len(g.TargetGroups) > 0, inService
}

// TestBakeThenRetire: with bake_seconds the previous group leaves its
// load balancers once the new one is healthy, stays at its capacity
// (its scaling alarms suspended) for the whole bake, and only then is
// retired; nothing is cut.
func TestBakeThenRetire(t *testing.T) {
	h := newHarness(t)
	prev, _, x := h.atBake(600)
	old := naming.GroupName(project, config, "web", prev)
	_, before := serving(h.groups()[old])

	require.NoError(t, x.once(execution.TaskBake))
	require.NotNil(t, x.state.Bake)
	assert.False(t, x.state.Bake.Done)
	assert.Equal(t, []string{old}, x.state.Bake.Standby)
	assert.Equal(t, 600, x.state.Bake.LeftSeconds)
	sb, found, err := h.ledger.GetStandby(t.Context(), project, config, x.state.ReleaseID)
	require.NoError(t, err)
	require.True(t, found, "the standby record is written before anything is detached")
	require.Len(t, sb.Groups, 1)
	assert.Equal(t, []string{"coinbase-deploy-test-web-elb"}, sb.Groups[0].LoadBalancers)
	assert.Len(t, sb.Groups[0].TargetGroups, 1)
	assert.Equal(t, []string{"AlarmNotification", "ScheduledActions"}, sb.Groups[0].Suspended)

	checks := 1
	for ; !x.state.Bake.Done; checks++ {
		h.clk.Advance(time.Duration(x.state.Bake.WaitSeconds) * time.Second)
		require.NoError(t, x.once(execution.TaskBake))
		g := h.groups()[old]
		attached, n := serving(g)
		assert.False(t, attached, "the previous group stands by out of its load balancers")
		assert.Equal(t, before, n, "at its capacity")
		assert.Subset(t, g.Suspended, []string{"AlarmNotification", "ScheduledActions"})
	}
	assert.Equal(t, 121, checks, "a check every 5 s for 600 s")
	require.NoError(t, x.step(execution.TaskCleanUpSuccess))
	assert.True(t, x.state.Retire.Done)
	assert.Equal(t, "Delete in progress", h.groups()[old].Status, "retired after the bake")
	assert.Zero(t, h.world.CutConnections())
}

// TestAlarmDuringBakeRollsBack: an alarm the release names that goes to
// ALARM during the bake rolls back: the previous group is attached again
// and passes its health checks before the new one leaves, nothing is
// cut, the release ends FailureClean with the previous one serving, and
// its outcome names the group that serves again.
func TestAlarmDuringBakeRollsBack(t *testing.T) {
	h := newHarness(t)
	prev, next, x := h.atBake(600, "deploy-test-errors")
	old := naming.GroupName(project, config, "web", prev)
	err := x.step(execution.TaskBake)
	var halted *failure.HaltError
	require.ErrorAs(t, err, &halted, "the alarm fires during the bake")
	assert.Equal(t, "alarm in ALARM: deploy-test-errors", halted.Reason)
	attached, _ := serving(h.groups()[old])
	require.False(t, attached, "the previous group stood by")

	x.state.Error = &execution.Error{Error: failure.NameOf(err), Cause: failure.Cause(err)}
	var restoring []execution.RestoringGroup
	for steps := 0; ; steps++ {
		require.NoError(t, x.once(execution.TaskCleanUpFailure))
		if x.state.Retire.Done {
			break
		}
		restoring = append(restoring, x.state.Retire.Restoring...)
		if len(x.state.Retire.Restoring) > 0 {
			attached, _ := serving(h.groups()[old])
			assert.True(t, attached, "back in its load balancers")
			for name, g := range h.groups() {
				if g.Tags[naming.TagReleaseID] == next {
					attached, _ := serving(g)
					assert.True(t, attached, "%s serves until the previous group is healthy again", name)
				}
			}
		}
		require.Less(t, steps, 200)
		h.clk.Advance(time.Duration(x.state.Retire.WaitSeconds) * time.Second)
	}
	require.NotEmpty(t, restoring, "the rollback waited for the previous group's health checks")
	assert.Equal(t, old, restoring[0].Name)
	assert.Equal(t, []string{old}, x.state.RolledBack)
	require.NoError(t, x.stepRetrying(execution.TaskReleaseLock))

	attached, n := serving(h.groups()[old])
	assert.True(t, attached)
	assert.Positive(t, n)
	assert.Empty(t, h.groups()[old].Suspended, "its scaling processes run again")
	for name, g := range h.groups() {
		if g.Tags[naming.TagReleaseID] == next {
			assert.Equal(t, "Delete in progress", g.Status, "%s of the rolled-back release is being deleted", name)
			assert.Empty(t, g.Instances, "%s was deleted empty", name)
		}
	}
	o, found, err := h.ledger.GetOutcome(t.Context(), project, config, next)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, execution.EndFailureClean, o.End)
	assert.Equal(t, []string{old}, o.RolledBack)
	cur, _, err := h.ledger.GetCurrent(t.Context(), project, config)
	require.NoError(t, err)
	assert.Equal(t, prev, cur.ReleaseID, "the previous release is current")
	assert.Zero(t, h.world.CutConnections(), "no request cut through the bake and the rollback")
}

// TestHaltDuringBakeRollsBack: a halt marker written during the bake
// rolls back the same way.
func TestHaltDuringBakeRollsBack(t *testing.T) {
	h := newHarness(t)
	prev, _, x := h.atBake(600)
	require.NoError(t, x.once(execution.TaskBake))
	h.clk.Advance(time.Minute)
	require.NoError(t, h.halts.Put(t.Context(), project, config, halt.Marker{By: "oncall", Reason: "errors up", At: h.clk.Now()}))
	h.clk.Advance(time.Duration(x.state.Bake.WaitSeconds) * time.Second)
	err := x.step(execution.TaskBake)
	var halted *failure.HaltError
	require.ErrorAs(t, err, &halted)
	require.NoError(t, x.fail(err))
	assert.Equal(t, []string{naming.GroupName(project, config, "web", prev)}, x.state.RolledBack)
	attached, n := serving(h.groups()[naming.GroupName(project, config, "web", prev)])
	assert.True(t, attached)
	assert.Positive(t, n)
	assert.Zero(t, h.world.CutConnections())
}

// TestRollbackNeverLeavesNothingServing: a previous group gone during the
// bake leaves nothing to roll back to: the release's groups are left
// serving and it ends dirty, naming why.
func TestRollbackNeverLeavesNothingServing(t *testing.T) {
	h := newHarness(t)
	prev, next, x := h.atBake(600)
	require.NoError(t, x.once(execution.TaskBake))
	old := naming.GroupName(project, config, "web", prev)
	_, err := h.world.Clients(account, region).AutoScaling.DeleteAutoScalingGroup(t.Context(), &autoscaling.DeleteAutoScalingGroupInput{AutoScalingGroupName: aws.String(old), ForceDelete: aws.Bool(true)})
	require.NoError(t, err)
	x.state.Error = &execution.Error{Error: failure.NameHalt, Cause: "{}"}
	x.ctx.RetryCount = tuning.TaskRetryMaxAttempts // the last attempt: a group not shown is gone
	err = x.step(execution.TaskCleanUpFailure)
	var ce *failure.CleanUpError
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, ce.Leftovers[0], "left serving")
	for name, g := range h.groups() {
		if g.Tags[naming.TagReleaseID] == next {
			attached, n := serving(g)
			assert.True(t, attached, "%s still serves", name)
			assert.Positive(t, n)
		}
	}
}

// TestBakeIsTheReleasesToSay: a State that claims no bake for a release
// with one (a forged or corrupted state document) still bakes: the bake
// comes from the verified release, never from the State.
func TestBakeIsTheReleasesToSay(t *testing.T) {
	h := newHarness(t)
	prev, _, x := h.atBake(600)
	x.state.BakeSeconds = 0
	require.NoError(t, x.once(execution.TaskBake))
	assert.False(t, x.state.Bake.Done, "the release bakes for 600 s")
	assert.Equal(t, 600, x.state.BakeSeconds)
	attached, _ := serving(h.groups()[naming.GroupName(project, config, "web", prev)])
	assert.False(t, attached, "the previous group stands by")
}

// TestRollbackRestoresTheReleasesLoadBalancers: a previous group the
// world took out of the classic load balancer its release names before
// the bake stands by attached only to its target group. A halt during
// the bake rolls back: the previous group goes back into the load
// balancers its release names as well as those it was attached to, and
// the new group leaves only once it is healthy there, so the load
// balancer is never left with no instance (the chaos harness's
// late_rollback_drift seeds). A standby record written before Bake kept
// what the release names has it read from the previous release.
func TestRollbackRestoresTheReleasesLoadBalancers(t *testing.T) {
	tests := []struct {
		name                string
		oldRecord, detachTG bool
	}{
		{name: "named in the standby record"},
		{name: "record without them: the previous release read again", oldRecord: true},
		{name: "detached from the target group too: judged where it is put back", detachTG: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			prev, next, x := h.atBake(600)
			old, newGroup := naming.GroupName(project, config, "web", prev), naming.GroupName(project, config, "web", next)
			h.detachFromOutside(old, tt.detachTG)
			h.clk.Advance(time.Minute)
			require.Equal(t, map[string]int{newGroup: 3}, h.inService(webELB), "only the new group serves in the classic load balancer")
			cutByWorld := h.world.CutConnections()

			require.NoError(t, x.once(execution.TaskBake))
			sb, found, err := h.ledger.GetStandby(t.Context(), project, config, x.state.ReleaseID)
			require.NoError(t, err)
			require.True(t, found)
			require.Len(t, sb.Groups, 1)
			assert.Empty(t, sb.Groups[0].LoadBalancers, "not attached to the classic load balancer")
			assert.Equal(t, tt.detachTG, len(sb.Groups[0].TargetGroups) == 0)
			require.NotNil(t, sb.Groups[0].Named)
			assert.Equal(t, []string{webELB}, sb.Groups[0].Named.LoadBalancers, "what its release names")
			assert.Len(t, sb.Groups[0].Named.TargetGroups, 1)
			if tt.oldRecord {
				sb.Groups[0].Named = nil
				require.NoError(t, h.ledger.PutStandby(t.Context(), project, config, sb))
			}

			h.clk.Advance(time.Minute)
			require.NoError(t, h.halts.Put(t.Context(), project, config, halt.Marker{By: "oncall", Reason: "errors up", At: h.clk.Now()}))
			h.clk.Advance(time.Duration(x.state.Bake.WaitSeconds) * time.Second)
			err = x.step(execution.TaskBake)
			var halted *failure.HaltError
			require.ErrorAs(t, err, &halted)
			require.NoError(t, x.fail(err))

			assert.Equal(t, []string{old}, x.state.RolledBack)
			assert.Contains(t, h.groups()[old].LoadBalancers, webELB, "attached again to the load balancer its release names")
			assert.Equal(t, map[string]int{old: 2}, h.inService(webELB), "the previous group serves there again, healthy")
			assert.Equal(t, map[string]int{old: 2}, h.inService(webTG))
			assert.Equal(t, cutByWorld, h.world.CutConnections(), "ferry cut nothing")
		})
	}
}
