package deployer

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/sim"
	"github.com/ferryhq/ferry/internal/tuning"
)

// A throttled call did nothing and says "slow down": AWS answers it with
// 400 Throttling (RequestLimitExceeded for EC2) once the account's token
// bucket for the API is empty, and "we recommend that you use an
// exponential backoff and retry" (Elastic Load Balancing User Guide,
// Request throttling; Amazon EC2 API Reference, Request throttling). The
// SDK's retryer backs off first; a throttle that outlasts it, in one of
// the deploy's loops, makes the loop wait for its next round instead of
// failing the release.

// TestThrottledHealthCheckWaits: a check whose describes are throttled
// learns nothing: it is not healthy, keeps the previous report, counts as
// a check and waits the schedule's pace; the next check goes on.
func TestThrottledHealthCheckWaits(t *testing.T) {
	for _, op := range []string{"DescribeAutoScalingGroups", "DescribeTargetHealth", "DescribeAlarms"} {
		t.Run(op, func(t *testing.T) {
			h := newHarness(t)
			r := h.baseRelease()
			r.Alarms = []string{"deploy-test-errors"}
			h.putAlarm(t, "deploy-test-errors", "a-group-with-no-data", projectTags)
			x := h.start(r)
			require.NoError(t, x.steps(upToDeploy...))
			h.clk.Advance(5 * time.Minute)
			require.NoError(t, x.step(execution.TaskCheckHealthy))
			before := *x.state.Health

			_, err := h.world.Faults().Add(sim.Rule{Op: op, Err: sim.Throttling()})
			require.NoError(t, err)
			h.clk.Advance(time.Minute)
			require.NoError(t, x.step(execution.TaskCheckHealthy), "a throttled check is no failure")
			got := x.state.Health
			assert.True(t, got.Throttled)
			assert.False(t, got.Healthy, "fails closed: a check that learned nothing is not healthy")
			assert.False(t, got.NextStep)
			assert.Equal(t, before.Checks+1, got.Checks)
			assert.Equal(t, before.Services, got.Services, "the previous check's report")
			assert.GreaterOrEqual(t, got.WaitSeconds, int(tuning.HealthCheckInterval.Seconds()*0.8), "the schedule's pace, jittered")

			h.world.Faults().Clear()
			_, err = x.untilHealthy(100)
			require.NoError(t, err)
			assert.False(t, x.state.Health.Throttled)
		})
	}
}

// TestThrottledHealthCheckStillTimesOut: throttling never extends a
// release's timeout, and a throttle mixed with a refusal is the refusal.
func TestThrottledHealthCheckStillTimesOut(t *testing.T) {
	h := newHarness(t)
	x := h.start(h.baseRelease())
	require.NoError(t, x.steps(upToDeploy...))
	_, err := h.world.Faults().Add(sim.Rule{Op: "DescribeAutoScalingGroups", Err: sim.Throttling()})
	require.NoError(t, err)
	_, err = x.untilHealthy(limitsChecks)
	assert.Equal(t, failure.NameTimeout, failure.NameOf(err), "%v", err)

	h = newHarness(t)
	x = h.start(h.baseRelease())
	require.NoError(t, x.steps(upToDeploy...))
	_, err = h.world.Faults().Add(sim.Rule{Op: "DescribeAutoScalingGroups", Err: sim.AccessDenied()})
	require.NoError(t, err)
	h.clk.Advance(time.Minute)
	assert.Error(t, x.step(execution.TaskCheckHealthy))
}

// limitsChecks is more checks than any timeout takes.
const limitsChecks = 2000

// TestThrottledRetirementWaits: past the point of no return, a throttled
// step of the retirement is taken again after the wait: the release
// succeeds, the previous groups are gone, the lock is released.
func TestThrottledRetirementWaits(t *testing.T) {
	for _, op := range []string{"DetachLoadBalancerTargetGroups", "UpdateAutoScalingGroup", "DeleteAutoScalingGroup", "DeleteAlarms", "DeleteLaunchTemplate"} {
		t.Run(op, func(t *testing.T) {
			h := newHarness(t)
			prev, next := h.baseRelease(), h.baseRelease()
			x := h.atSwap(prev, next)
			id, err := h.world.Faults().Add(sim.Rule{Op: op, Times: 3, Err: sim.Throttling()})
			require.NoError(t, err)
			require.NoError(t, x.step(execution.TaskCleanUpSuccess))
			assert.Equal(t, 3, h.world.Faults().Applied(id), "every throttle met")
			h.clk.Advance(10 * time.Minute)
			assert.NotContains(t, h.groups(), naming.GroupName(project, config, "web", prev.ReleaseID))
			assert.Contains(t, h.groups(), naming.GroupName(project, config, "web", next.ReleaseID))
			o, found, err := h.ledger.GetOutcome(t.Context(), project, config, next.ReleaseID)
			require.NoError(t, err)
			require.True(t, found)
			assert.Equal(t, execution.EndSuccess, o.End)
			_, held, err := h.locks.Get(t.Context(), project, config)
			require.NoError(t, err)
			assert.False(t, held)
		})
	}
}

// TestThrottledRetirementIsBounded: a retirement or clean-up AWS
// throttles for good takes limits.MaxThrottledSteps throttled steps, each
// after a jittered wait, within limits.MaxRetireSteps (the harness asserts
// it); then the throttle is the task's error. Past the point of no return
// that is FailureDirty naming what is left, the new groups serving and
// the lock kept: never a rollback.
func TestThrottledRetirementIsBounded(t *testing.T) {
	for _, task := range []string{execution.TaskCleanUpSuccess, execution.TaskCleanUpFailure} {
		t.Run(task, func(t *testing.T) {
			h := newHarness(t)
			prev, next := h.baseRelease(), h.baseRelease()
			x := h.atSwap(prev, next)
			doomed, kept := naming.GroupName(project, config, "web", prev.ReleaseID), naming.GroupName(project, config, "web", next.ReleaseID)
			if task == execution.TaskCleanUpFailure {
				doomed, kept = kept, doomed
				x.state.Error = &execution.Error{Error: failure.NameHalt, Cause: "halted"}
			}
			id, err := h.world.Faults().Add(sim.Rule{Op: "DeleteAutoScalingGroup", Err: sim.Throttling()})
			require.NoError(t, err)
			x.ctx.RetryCount = tuning.TaskRetryMaxAttempts // the last attempt: no task retry follows
			began := h.clk.Now()
			err = x.step(task)
			var ce *failure.CleanUpError
			require.ErrorAs(t, err, &ce, "%v", err)
			assert.Equal(t, limits.MaxThrottledSteps+1, h.world.Faults().Applied(id), "every throttled step, and the one that failed")
			waited := h.clk.Now().Sub(began)
			assert.GreaterOrEqual(t, waited, time.Duration(limits.MaxThrottledSteps)*12*time.Second)
			assert.Contains(t, h.groups(), kept, "the other release's group stands")
			assert.Contains(t, h.groups(), doomed, "left, and named")
			assert.Contains(t, ce.Error(), doomed)
			_, held, err := h.locks.Get(t.Context(), project, config)
			require.NoError(t, err)
			assert.True(t, held, "a dirty failure keeps the lock")
		})
	}
}
