package deployer

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/halt"
)

// canaryRelease is a release of web (min 2, max 4, spread 0.5: desired
// 2, launch 3, healthy 2) rolled out in steps 1, "50%", "100%", each held
// for stepWait seconds.
func (h *harness) canaryRelease(stepWait int) *release.Release {
	r := h.baseRelease()
	r.Services["web"].Rollout = &release.Rollout{
		Steps:           []release.Step{{N: 1}, {N: 50, Percent: true}, {N: 100, Percent: true}},
		StepWaitSeconds: stepWait,
	}
	return r
}

// untilNextStep waits and checks as the state machine does until a
// check says a canary's step is stable (next_step).
func (x *run) untilNextStep() {
	x.h.t.Helper()
	for checks := 0; !x.state.Health.NextStep; checks++ {
		require.Less(x.h.t, checks, 300, "no step stable: %+v", x.state.Health)
		x.h.clk.Advance(time.Duration(x.state.Health.WaitSeconds) * time.Second)
		require.NoError(x.h.t, x.step(execution.TaskCheckHealthy))
	}
}

// canaryStep is what a canary looked like when NextStep took a step.
type canaryStep struct {
	at               time.Duration
	desired, minSize int32
	step             int
}

// TestCanarySteps: a canary's new group starts at its first step's
// capacity, takes each next step only once the step held its target for
// step_wait_seconds, and the previous group serves alongside, in its load
// balancers at its capacity, until the last step is stable; then the
// swap. No connection is cut.
func TestCanarySteps(t *testing.T) {
	h := newHarness(t)
	r1 := h.baseRelease()
	h.start(r1).succeed()
	old := naming.GroupName(project, config, "web", r1.ReleaseID)
	_, oldServing := serving(h.groups()[old])

	r2 := h.canaryRelease(120)
	x := h.start(r2)
	require.NoError(t, x.steps(upToDeploy...))
	name := naming.GroupName(project, config, "web", r2.ReleaseID)
	g := h.groups()[name]
	assert.Equal(t, [2]int32{1, 1}, [2]int32{g.Desired, g.Min}, "the first step: one instance")
	assert.Equal(t, int32(4), g.Max)
	s := x.state.Health.Services["web"]
	assert.Equal(t, [3]int{1, 3, 1}, [3]int{s.Step, s.Steps, s.Target})
	assert.False(t, x.state.Health.NextStep)

	start := h.clk.Now()
	var taken []canaryStep
	for checks := 0; !x.state.Health.Healthy; checks++ {
		require.Less(t, checks, 300, "not healthy: %+v", x.state.Health)
		h.clk.Advance(time.Duration(x.state.Health.WaitSeconds) * time.Second)
		require.NoError(t, x.step(execution.TaskCheckHealthy))
		attached, n := serving(h.groups()[old])
		assert.True(t, attached, "the previous group serves alongside the canary")
		assert.Equal(t, oldServing, n, "at its capacity")
		if !x.state.Health.NextStep {
			continue
		}
		require.NoError(t, x.step(execution.TaskNextStep))
		g := h.groups()[name]
		s := x.state.Health.Services["web"]
		taken = append(taken, canaryStep{h.clk.Now().Sub(start), g.Desired, g.Min, s.Step})
		assert.Nil(t, s.HealthySince, "a new step earns its stability again")
	}
	require.Len(t, taken, 2)
	assert.Equal(t, [3]int32{2, 2, 2}, [3]int32{taken[0].desired, taken[0].minSize, int32(taken[0].step)}, "50% of 3, rounded up")
	assert.Equal(t, [3]int32{3, 2, 3}, [3]int32{taken[1].desired, taken[1].minSize, int32(taken[1].step)}, "the whole group, at the release's min_size")
	assert.GreaterOrEqual(t, taken[1].at-taken[0].at, 120*time.Second, "each step held for step_wait_seconds")
	assert.GreaterOrEqual(t, taken[0].at, 120*time.Second)

	require.NoError(t, x.stepRetrying(execution.TaskBake))
	require.NoError(t, x.stepRetrying(execution.TaskCleanUpSuccess))
	assert.True(t, x.state.Retire.Done)
	g = h.groups()[name]
	assert.Equal(t, [2]int32{2, 2}, [2]int32{g.Desired, g.Min}, "settled at the release's desired capacity")
	assert.Equal(t, "Delete in progress", h.groups()[old].Status)
	assert.Zero(t, h.world.CutConnections())
}

// TestCanaryHaltLeavesThePreviousFleet: a halt at a canary step fails the
// release before the point of no return: its group (at the step's
// capacity, never more) is cleaned up, and the previous group served
// throughout, untouched.
func TestCanaryHaltLeavesThePreviousFleet(t *testing.T) {
	h := newHarness(t)
	r1 := h.baseRelease()
	h.start(r1).succeed()
	old := naming.GroupName(project, config, "web", r1.ReleaseID)
	before := h.groups()[old]

	r2 := h.canaryRelease(60)
	x := h.start(r2)
	require.NoError(t, x.steps(upToDeploy...))
	x.untilNextStep()
	require.NoError(t, h.halts.Put(t.Context(), project, config, halt.Marker{By: caller, Reason: "canary errors", At: h.clk.Now()}))
	err := x.step(execution.TaskNextStep)
	var halted *failure.HaltError
	require.ErrorAs(t, err, &halted)
	assert.Equal(t, int32(1), h.groups()[naming.GroupName(project, config, "web", r2.ReleaseID)].Desired, "no step taken after the halt")

	require.NoError(t, x.fail(err))
	g, found := h.groups()[naming.GroupName(project, config, "web", r2.ReleaseID)]
	assert.True(t, !found || g.Status != "", "the canary's group is gone")
	after := h.groups()[old]
	assert.Equal(t, before.LoadBalancers, after.LoadBalancers)
	assert.Equal(t, before.TargetGroups, after.TargetGroups)
	assert.Equal(t, before.Desired, after.Desired)
	assert.Zero(t, h.world.CutConnections())
}

// TestAlarmDuringACanaryStepHalts: an alarm the release names that fires
// while the canary's first instance serves halts before the next step:
// only that instance ever ran.
func TestAlarmDuringACanaryStepHalts(t *testing.T) {
	h := newHarness(t)
	h.start(h.baseRelease()).succeed()
	r2 := h.canaryRelease(600)
	r2.Timeout = 1800
	r2.Alarms = []string{"deploy-test-errors"}
	name := naming.GroupName(project, config, "web", r2.ReleaseID)
	h.putAlarmAfter(t, "deploy-test-errors", name, projectTags, 3)
	x := h.start(r2)
	require.NoError(t, x.steps(upToDeploy...))
	_, err := x.untilHealthy(300)
	var halted *failure.HaltError
	require.ErrorAs(t, err, &halted)
	assert.Equal(t, "alarm in ALARM: deploy-test-errors", halted.Reason)
	s := x.state.Health.Services["web"]
	assert.Equal(t, 1, s.Step, "halted at the first step")
	assert.Len(t, h.groups()[name].Instances, 1, "one instance ever ran")
	require.NoError(t, x.fail(err))
	assert.Zero(t, h.world.CutConnections())
}

// TestNextStepIsIdempotent: NextStep run again with the same State (a
// retry after a lost answer) sets the same sizes and reports the same.
func TestNextStepIsIdempotent(t *testing.T) {
	h := newHarness(t)
	r := h.canaryRelease(0)
	x := h.start(r)
	require.NoError(t, x.steps(upToDeploy...))
	x.untilNextStep()
	first, err := x.invoke(execution.TaskNextStep, x.state)
	require.NoError(t, err)
	g := h.groups()[naming.GroupName(project, config, "web", r.ReleaseID)]
	again, err := x.invoke(execution.TaskNextStep, x.state)
	require.NoError(t, err)
	assert.JSONEq(t, string(first), string(again))
	assert.Equal(t, g, h.groups()[naming.GroupName(project, config, "web", r.ReleaseID)])
	assert.Equal(t, int32(2), g.Desired)
}

// TestNextStepKeepsTheDeploysOnTheirWay: a canary step carries on the
// count of deploys on their way beside the release (Health.Underway),
// so the checks of its next step still read their share of the account's
// Describe bucket and count them again.
func TestNextStepKeepsTheDeploysOnTheirWay(t *testing.T) {
	h := newHarness(t)
	x := h.start(h.canaryRelease(0))
	require.NoError(t, x.steps(upToDeploy...))
	x.untilNextStep()
	x.state.Health.Underway = 3
	require.NoError(t, x.step(execution.TaskNextStep))
	assert.Equal(t, 3, x.state.Health.Underway)
}
