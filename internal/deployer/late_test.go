package deployer

import (
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/fleet"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/store/halt"
)

// deletedEmpty asserts that every group the world deleted was empty when
// it was deleted: no instance of it was still there (let alone in its
// load balancers) when DeleteAutoScalingGroup was accepted.
func (h *harness) deletedEmpty() {
	h.t.Helper()
	for _, g := range h.world.Fleet() {
		if g.DeleteRequested.IsZero() {
			continue
		}
		for _, i := range g.Instances {
			assert.False(h.t, i.Gone.IsZero() || i.Gone.After(g.DeleteRequested),
				"%s was deleted at %s with %s still in it", g.Name, g.DeleteRequested, i.ID)
		}
	}
}

// TestLateRollbackRetiresGracefully: a release baking for three hours
// whose alarm fires two and a half hours in (long past the execution's
// start, its timeout and tuning.RetireTimeout) rolls back, and its own
// groups still leave gracefully (detached, drained, scaled in) before
// they are deleted: the time since the execution started never turns a
// retirement into a ForceDelete of a serving group.
func TestLateRollbackRetiresGracefully(t *testing.T) {
	h := newHarness(t)
	r1 := h.baseRelease()
	r2 := h.baseRelease()
	r2.ReleaseID = "r2-130240"
	r2.BakeSeconds = 10800
	r2.Alarms = []string{"deploy-test-errors"}
	h.putAlarmAfter(t, "deploy-test-errors", naming.GroupName(project, config, "web", r2.ReleaseID), projectTags, 150)
	x := h.atSwap(r1, r2)

	err := x.step(execution.TaskBake)
	var halted *failure.HaltError
	require.ErrorAs(t, err, &halted, "the alarm fires during the bake")
	require.Greater(t, h.clk.Now().Sub(x.ctx.StartTime), 2*time.Hour+10*time.Minute)
	require.NoError(t, x.fail(err))

	o, found, err := h.ledger.GetOutcome(t.Context(), project, config, r2.ReleaseID)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, execution.EndFailureClean, o.End)
	for name, g := range h.groups() {
		if g.Tags[naming.TagReleaseID] == r2.ReleaseID {
			assert.Equal(t, "Delete in progress", g.Status, "%s of the rolled-back release is being deleted", name)
		}
	}
	h.deletedEmpty()
	assert.Zero(t, h.world.CutConnections(), "no request cut")
}

// TestRollbackRestoresStandbyCapacity: the previous group standing by is
// scaled in during the bake (someone sets it to zero); a halt then rolls
// back: the rollback sets its recorded capacity back before it waits for
// its instances, which come, pass their health checks, and the release
// ends FailureClean with the previous group serving at its capacity.
func TestRollbackRestoresStandbyCapacity(t *testing.T) {
	h := newHarness(t)
	prev, next, x := h.atBake(600)
	old := naming.GroupName(project, config, "web", prev)
	require.NoError(t, x.once(execution.TaskBake))
	want := h.groups()[old].Desired
	require.Positive(t, want)
	_, err := h.world.Clients(account, region).AutoScaling.UpdateAutoScalingGroup(t.Context(), &autoscaling.UpdateAutoScalingGroupInput{
		AutoScalingGroupName: aws.String(old), MinSize: aws.Int32(0), DesiredCapacity: aws.Int32(0),
	})
	require.NoError(t, err)
	h.clk.Advance(2 * time.Minute)
	require.Empty(t, h.groups()[old].Instances, "scaled in while standing by")
	require.NoError(t, h.halts.Put(t.Context(), project, config, halt.Marker{By: "oncall", Reason: "errors up", At: h.clk.Now()}))
	h.clk.Advance(time.Duration(x.state.Bake.WaitSeconds) * time.Second)
	err = x.step(execution.TaskBake)
	var halted *failure.HaltError
	require.ErrorAs(t, err, &halted)
	require.NoError(t, x.fail(err))

	o, found, err := h.ledger.GetOutcome(t.Context(), project, config, next)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, execution.EndFailureClean, o.End, "%+v", o)
	g := h.groups()[old]
	assert.Equal(t, want, g.Desired, "its recorded capacity is back")
	attached, n := serving(g)
	assert.True(t, attached)
	assert.Equal(t, int(want), n)
	h.deletedEmpty()
	assert.Zero(t, h.world.CutConnections())
}

// TestNewFleetRecheckedUntilScaleIn: the new group passes the swap's gate
// and then falls below its healthy target (its instances crash) while
// the previous group is only detached and draining: the next step of the
// retirement sees it, puts the previous group back in exactly the load
// balancers and target groups the deleting record names, never scales it
// in, and ends FailureDirty naming both fleets serving and the lock kept.
func TestNewFleetRecheckedUntilScaleIn(t *testing.T) {
	h := newHarness(t)
	r1 := h.baseRelease()
	r2 := h.baseRelease()
	r2.ReleaseID = "r2-130240"
	x := h.atSwap(r1, r2)
	old := naming.GroupName(project, config, "web", r1.ReleaseID)
	before := h.groups()[old]
	require.NoError(t, x.once(execution.TaskCleanUpSuccess))
	require.False(t, x.state.Retire.Done)
	attached, _ := serving(h.groups()[old])
	require.False(t, attached, "the previous group left its load balancers")
	plan, found, err := h.ledger.GetDeleting(t.Context(), project, config, r2.ReleaseID)
	require.NoError(t, err)
	require.True(t, found)
	require.Len(t, plan.Attached, 1, "the deleting record keeps how the previous group served")
	assert.Equal(t, before.LoadBalancers, plan.Attached[0].LoadBalancers)
	assert.Len(t, plan.Attached[0].TargetGroups, len(before.TargetGroups))
	assert.Equal(t, int(before.Desired), plan.Attached[0].Desired)

	// The new group crashes 20 s after the gate: all but target-1 of its
	// healthy instances die (the group replaces them, not yet healthy).
	h.clk.Advance(20 * time.Second)
	s := x.state.Health.Services["web"]
	api := h.world.Clients(account, region).AutoScaling.(*sim.AutoScaling)
	for _, i := range h.groups()[naming.GroupName(project, config, "web", r2.ReleaseID)].Instances[:s.Healthy-s.Target+1] {
		_, err := api.TerminateInstanceInAutoScalingGroup(t.Context(), &autoscaling.TerminateInstanceInAutoScalingGroupInput{
			InstanceId: aws.String(i.ID), ShouldDecrementDesiredCapacity: aws.Bool(false),
		})
		require.NoError(t, err)
	}
	err = x.step(execution.TaskCleanUpSuccess)
	var ce *failure.CleanUpError
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, strings.Join(ce.Leftovers, "\n"), "serving beside the new release's groups")
	assert.Contains(t, strings.Join(ce.Leftovers, "\n"), "(kept)")

	g := h.groups()[old]
	assert.Equal(t, before.LoadBalancers, g.LoadBalancers, "back in its classic load balancers")
	assert.Equal(t, before.TargetGroups, g.TargetGroups, "and its target groups")
	assert.Equal(t, before.Desired, g.Desired, "never scaled in")
	assert.Equal(t, before.Suspended, g.Suspended, "its processes as they were")
	assert.Empty(t, g.Status)
	for _, i := range g.Instances {
		assert.Equal(t, "InService", i.Lifecycle, "%s was not terminated", i.ID)
	}
	o, found, err := h.ledger.GetOutcome(t.Context(), project, config, r2.ReleaseID)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, execution.EndFailureDirty, o.End)
	h.deletedEmpty()
	assert.Zero(t, h.world.CutConnections())
}

// TestSwapPastItsBoundEndsDirty: the previous group's termination hook
// holds its instances in Terminating:Wait (a 7200 s heartbeat, nobody
// completing it) past tuning.RetireTimeout from the point of no return:
// the swap never deletes the group with its hooks pending; it ends
// FailureDirty naming the group and its pending hooks.
func TestSwapPastItsBoundEndsDirty(t *testing.T) {
	h := newHarness(t)
	r1 := h.baseRelease()
	withTerminationHook(r1, 7200)
	r2 := h.baseRelease()
	x := h.atSwap(r1, r2)
	old := naming.GroupName(project, config, "web", r1.ReleaseID)
	err := x.step(execution.TaskCleanUpSuccess)
	var ce *failure.CleanUpError
	require.ErrorAs(t, err, &ce)
	left := strings.Join(ce.Leftovers, "\n")
	assert.Contains(t, left, "auto scaling group "+old+" (not deleted)")
	assert.Contains(t, left, "waiting on a termination hook (Terminating:Wait)")
	assert.Empty(t, h.groups()[old].Status, "not deleted")
	o, found, err := h.ledger.GetOutcome(t.Context(), project, config, r2.ReleaseID)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, execution.EndFailureDirty, o.End)
	h.deletedEmpty()
	assert.Zero(t, h.world.CutConnections())
}

// TestSwapLeavesStandbyInstances: someone put an instance of the previous
// group in Standby (EnterStandby, to inspect it): a scale-in never
// terminates it ("Temporarily remove instances from your Auto Scaling
// group", Auto Scaling User Guide), so the group would never empty. The
// swap neither exits nor terminates it: once the rest has gone it ends
// FailureDirty at once, naming the instance in Standby, and deletes
// nothing.
func TestSwapLeavesStandbyInstances(t *testing.T) {
	h := newHarness(t)
	r1 := h.baseRelease()
	r2 := h.baseRelease()
	x := h.atSwap(r1, r2)
	old := naming.GroupName(project, config, "web", r1.ReleaseID)
	_, err := h.world.Clients(account, region).AutoScaling.(*sim.AutoScaling).EnterStandby(t.Context(), &autoscaling.EnterStandbyInput{
		AutoScalingGroupName: aws.String(old), InstanceIds: []string{h.groups()[old].Instances[0].ID}, ShouldDecrementDesiredCapacity: aws.Bool(false),
	})
	require.NoError(t, err)
	start := h.clk.Now()
	err = x.step(execution.TaskCleanUpSuccess)
	var ce *failure.CleanUpError
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, strings.Join(ce.Leftovers, "\n"), "1 in Standby")
	assert.Less(t, h.clk.Now().Sub(start), 10*time.Minute, "at once, not at the retirement's bound")
	g := h.groups()[old]
	assert.Empty(t, g.Status, "not deleted")
	require.Len(t, g.Instances, 1)
	assert.Equal(t, "Standby", g.Instances[0].Lifecycle)
	h.deletedEmpty()
	assert.Zero(t, h.world.CutConnections())
}

// TestSwapRemovesScaleInProtection: someone protected the previous
// group's instances from scale-in (SetInstanceProtection): a scale-in
// would never terminate them ("Use instance scale-in protection", Auto
// Scaling User Guide). The swap removes the protection, through the
// deploy role, before it scales the group in, and the release succeeds
// with the group deleted empty and nothing cut.
func TestSwapRemovesScaleInProtection(t *testing.T) {
	h := newHarness(t)
	r1 := h.baseRelease()
	r2 := h.baseRelease()
	x := h.atSwap(r1, r2)
	old := naming.GroupName(project, config, "web", r1.ReleaseID)
	var ids []string
	for _, i := range h.groups()[old].Instances {
		ids = append(ids, i.ID)
	}
	_, err := h.world.Clients(account, region).AutoScaling.SetInstanceProtection(t.Context(), &autoscaling.SetInstanceProtectionInput{
		AutoScalingGroupName: aws.String(old), InstanceIds: ids, ProtectedFromScaleIn: aws.Bool(true),
	})
	require.NoError(t, err)
	require.NoError(t, x.step(execution.TaskCleanUpSuccess))
	assert.True(t, x.state.Retire.Done)
	assert.Equal(t, "Delete in progress", h.groups()[old].Status)
	assert.Equal(t, 1, h.world.Calls()["SetInstanceProtection"]-1, "one call of the swap's, besides the test's")
	h.deletedEmpty()
	assert.Zero(t, h.world.CutConnections())
}

// TestCleanUpFailureLeavesStandbyGroupNamed: someone put an instance of
// the release's new group in Standby before its rollback: the group never
// empties, so CleanUpFailure ends FailureDirty having removed nothing, and
// its outcome names everything the removal would have removed (the group,
// its launch template, its alarms) as well as what keeps the group
// standing: no resource of the release is left that no record names.
func TestCleanUpFailureLeavesStandbyGroupNamed(t *testing.T) {
	h := newHarness(t)
	r := h.baseRelease()
	x := h.start(r)
	require.NoError(t, x.steps(upToDeploy...))
	name := naming.GroupName(project, config, "web", r.ReleaseID)
	for h.groups()[name].Instances[0].Lifecycle != "InService" {
		h.clk.Advance(time.Second)
	}
	_, err := h.world.Clients(account, region).AutoScaling.(*sim.AutoScaling).EnterStandby(t.Context(), &autoscaling.EnterStandbyInput{
		AutoScalingGroupName: aws.String(name), InstanceIds: []string{h.groups()[name].Instances[0].ID}, ShouldDecrementDesiredCapacity: aws.Bool(false),
	})
	require.NoError(t, err)
	x.state.Error = &execution.Error{Error: failure.NameTimeout, Cause: `{"errorMessage":"timed out","errorType":"TimeoutError"}`}
	err = x.step(execution.TaskCleanUpFailure)
	var ce *failure.CleanUpError
	require.ErrorAs(t, err, &ce)
	o, found, err := h.ledger.GetOutcome(t.Context(), project, config, r.ReleaseID)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, execution.EndFailureDirty, o.End)
	assert.Subset(t, o.Leftovers, fleet.Leftovers(name))
	assert.Contains(t, strings.Join(o.Leftovers, "\n"), "1 in Standby")
	assert.Empty(t, h.groups()[name].Status, "not deleted")
}
