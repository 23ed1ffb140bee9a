package deployer

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
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
			assert.Equal(t, 1, got.Throttled)
			assert.False(t, got.Healthy, "fails closed: a check that learned nothing is not healthy")
			assert.False(t, got.NextStep)
			assert.Equal(t, before.Checks+1, got.Checks)
			assert.Equal(t, before.Services, got.Services, "the previous check's report")
			assert.GreaterOrEqual(t, got.WaitSeconds, int(tuning.HealthCheckInterval.Seconds()*0.8), "the schedule's pace, jittered")

			h.world.Faults().Clear()
			_, err = x.untilHealthy(100)
			require.NoError(t, err)
			assert.Zero(t, x.state.Health.Throttled)
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
	for _, op := range []string{"DescribeTargetHealth", "DetachLoadBalancerTargetGroups", "UpdateAutoScalingGroup", "DeleteAutoScalingGroup", "DeleteAlarms", "DeleteLaunchTemplate"} {
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

// throttledRound makes AWS throttle the next two calls of op, runs task
// (ValidateResources or Deploy) once, and checks that it asked for a
// jittered wait instead of failing. It returns the fault rule's id.
func throttledRound(t *testing.T, h *harness, x *run, task, op string) int {
	t.Helper()
	id, err := h.world.Faults().Add(sim.Rule{Op: op, Times: 2, Err: sim.Throttling()})
	require.NoError(t, err)
	require.NoError(t, x.once(task))
	p := x.state.Deploy
	if task == execution.TaskValidateResources {
		p = x.state.Resources
	}
	require.NotNil(t, p)
	assert.False(t, p.Done)
	assert.Equal(t, 1, p.Throttled)
	every := tuning.ThrottledSteps.Paces[0].Every.Seconds()
	assert.InDelta(t, every, p.WaitSeconds, 1+every*tuning.ThrottledSteps.Jitter)
	return id
}

// TestThrottledDeployWaits: a Deploy AWS throttles asks for a wait and
// makes the rest when it runs again, without duplicating anything (a
// round that made groups and was throttled after is paced instead:
// TestThrottledPartRoundPaced); one
// throttled for good takes limits.MaxThrottledSteps rounds, then fails
// as a transient failure (the task's retry, then clean up).
func TestThrottledDeployWaits(t *testing.T) {
	for _, op := range []string{"CreateLaunchTemplate", "CreateAutoScalingGroup", "PutScalingPolicy", "PutMetricAlarm", "DescribeAutoScalingGroups"} {
		t.Run(op, func(t *testing.T) {
			h := newHarness(t)
			r := h.baseRelease()
			r.Services["worker"] = &release.Service{InstanceType: "t3.small", SecurityGroups: []string{"ec2::coinbase/deploy-test::development-worker"}}
			x := h.start(r)
			require.NoError(t, x.steps(upToDeploy[:4]...))
			id := throttledRound(t, h, x, execution.TaskDeploy, op)
			require.NoError(t, x.step(execution.TaskDeploy))
			assert.Equal(t, 2, h.world.Faults().Applied(id))
			assert.True(t, x.state.Deploy.Done)
			assert.Len(t, h.groups(), 2)
			assert.Len(t, h.account().LaunchTemplates, 2)
			_, err := x.untilHealthy(100)
			require.NoError(t, err)
		})
	}
	forGood := func(t *testing.T, timeout int) (throttled int, err error) {
		h := newHarness(t)
		r := h.baseRelease()
		r.Timeout = timeout
		x := h.start(r)
		require.NoError(t, x.steps(upToDeploy[:4]...))
		id, aerr := h.world.Faults().Add(sim.Rule{Op: "CreateAutoScalingGroup", Err: sim.Throttling()})
		require.NoError(t, aerr)
		err = x.step(execution.TaskDeploy)
		return h.world.Faults().Applied(id), err
	}
	t.Run("for good", func(t *testing.T) {
		throttled, err := forGood(t, 7200)
		assert.Equal(t, failure.NameRetryable, failure.NameOf(err), "%v", err)
		assert.Equal(t, limits.MaxThrottledSteps+1, throttled)
	})
	t.Run("past the timeout", func(t *testing.T) {
		throttled, err := forGood(t, 600)
		assert.Equal(t, failure.NameTimeout, failure.NameOf(err), "%v", err)
		assert.Less(t, throttled, limits.MaxThrottledSteps)
	})
}

// TestThrottledAlarmsDelayNoLaunch: a Deploy round AWS throttles while
// it puts the scaling policies' alarms (CloudWatch's PutMetricAlarm
// quota, 3 a second per account: CloudWatch service quotas) has made
// every service's group already: the alarms wait for the next round,
// the launches do not.
func TestThrottledAlarmsDelayNoLaunch(t *testing.T) {
	h := newHarness(t)
	r := h.baseRelease()
	require.NotNil(t, r.Services["web"].Autoscaling, "web has scaling policies")
	r.Services["worker"] = &release.Service{InstanceType: "t3.small", SecurityGroups: []string{"ec2::coinbase/deploy-test::development-worker"}}
	x := h.start(r)
	require.NoError(t, x.steps(upToDeploy[:4]...))
	throttledRound(t, h, x, execution.TaskDeploy, "PutMetricAlarm")
	assert.Len(t, h.groups(), 2, "every group is made before any alarm")
	require.NoError(t, x.step(execution.TaskDeploy))
	assert.True(t, x.state.Deploy.Done)
}

// TestThrottledChecksBackOff: each check in a row AWS throttles doubles
// the wait, up to tuning.MaxThrottledCheckWait; each check that is not
// throttled halves it again, back to the schedule's pace.
func TestThrottledChecksBackOff(t *testing.T) {
	h := newHarness(t)
	r := h.baseRelease()
	r.Timeout = 7200
	x := h.start(r)
	require.NoError(t, x.steps(upToDeploy...))
	h.clk.Advance(5 * time.Minute)
	require.NoError(t, x.step(execution.TaskCheckHealthy))
	_, err := h.world.Faults().Add(sim.Rule{Op: "DescribeAutoScalingGroups", Err: sim.Throttling()})
	require.NoError(t, err)
	var waits []int
	for n := 1; n <= 8; n++ {
		h.clk.Advance(time.Duration(x.state.Health.WaitSeconds) * time.Second)
		require.NoError(t, x.step(execution.TaskCheckHealthy))
		assert.Equal(t, n, x.state.Health.Throttled)
		waits = append(waits, x.state.Health.WaitSeconds)
	}
	for i := 1; i < len(waits); i++ {
		assert.True(t, waits[i] == int(tuning.MaxThrottledCheckWait.Seconds()) || waits[i] > waits[i-1]*3/2, "the wait doubles: %v", waits)
	}
	assert.Equal(t, int(tuning.MaxThrottledCheckWait.Seconds()), waits[len(waits)-1], "up to its bound: %v", waits)
	h.world.Faults().Clear()
	for n := 7; n >= 0; n-- {
		h.clk.Advance(time.Duration(x.state.Health.WaitSeconds) * time.Second)
		require.NoError(t, x.step(execution.TaskCheckHealthy))
		require.Equal(t, n, x.state.Health.Throttled, "one less for each check not throttled")
		if n > 0 && !x.state.Health.Healthy {
			assert.Greater(t, x.state.Health.WaitSeconds, waits[0], "still backed off")
		}
	}
	assert.LessOrEqual(t, x.state.Health.WaitSeconds, waits[0], "back to the schedule's pace")
}

// TestThrottledResourceChecksWait: ValidateResources AWS throttles asks
// for a wait and checks again; its rounds count with Deploy's against
// limits.MaxThrottledSteps.
func TestThrottledResourceChecksWait(t *testing.T) {
	for _, op := range []string{"DescribeImages", "DescribeTargetGroups", "DescribeAccountLimits"} {
		t.Run(op, func(t *testing.T) {
			h := newHarness(t)
			x := h.start(h.baseRelease())
			require.NoError(t, x.steps(upToDeploy[:2]...))
			id := throttledRound(t, h, x, execution.TaskValidateResources, op)
			require.NoError(t, x.step(execution.TaskValidateResources))
			assert.Equal(t, 2, h.world.Faults().Applied(id))
			assert.True(t, x.state.Resources.Done)
			assert.Equal(t, 2, x.state.Resources.Throttled)
			require.NoError(t, x.steps(upToDeploy[3:]...))
			assert.Equal(t, 2, x.state.Deploy.Throttled, "the count goes on into Deploy's")
			_, err := x.untilHealthy(100)
			require.NoError(t, err)
		})
	}
	t.Run("a refusal is no throttle", func(t *testing.T) {
		h := newHarness(t)
		x := h.start(h.baseRelease())
		require.NoError(t, x.steps(upToDeploy[:2]...))
		_, err := h.world.Faults().Add(sim.Rule{Op: "DescribeImages", Err: sim.AccessDenied()})
		require.NoError(t, err)
		assert.Error(t, x.step(execution.TaskValidateResources))
	})
}

// TestThrottledCleanUpFailureWaits: a clean-up after a failure whose
// rollback or removal AWS throttles (Auto Scaling's one shared request
// bucket, busiest when many deploys fail at once: Amazon EC2 Auto Scaling
// API Reference, API request rate) takes the step again after a wait
// instead of failing through the state machine's retries: the release's
// groups are removed, the previous release's stands.
func TestThrottledCleanUpFailureWaits(t *testing.T) {
	for _, op := range []string{"DescribeAutoScalingGroups", "DescribeLoadBalancerTargetGroups"} {
		t.Run(op, func(t *testing.T) {
			h := newHarness(t)
			prev, next := h.baseRelease(), h.baseRelease()
			x := h.atSwap(prev, next)
			x.state.Error = &execution.Error{Error: failure.NameHalt, Cause: "halted"}
			id, err := h.world.Faults().Add(sim.Rule{Op: op, Times: 2, Err: sim.Throttling()})
			require.NoError(t, err)
			x.ctx.RetryCount = tuning.TaskRetryMaxAttempts // no task retry follows
			require.NoError(t, x.step(execution.TaskCleanUpFailure))
			assert.Equal(t, 2, h.world.Faults().Applied(id), "every throttle met")
			h.clk.Advance(10 * time.Minute)
			assert.NotContains(t, h.groups(), naming.GroupName(project, config, "web", next.ReleaseID), "the release removed")
			assert.Contains(t, h.groups(), naming.GroupName(project, config, "web", prev.ReleaseID), "the previous release stands")
		})
	}
}

// TestThrottledRetirementStepsBack: a retirement step AWS throttled waits
// tuning.ThrottledRetireSteps before it runs again, longer than a
// deploy's throttled round (tuning.ThrottledSteps): throttling says the
// account's callers ask too much of a shared bucket (Auto Scaling's one:
// Amazon EC2 Auto Scaling API Reference, Welcome, API request rate), and
// a retirement, which no release timeout bounds, steps back the furthest
// so the deploys and health checks racing theirs get the tokens.
func TestThrottledRetirementStepsBack(t *testing.T) {
	h := newHarness(t)
	x := h.atSwap(h.baseRelease(), h.baseRelease())
	_, err := h.world.Faults().Add(sim.Rule{Op: "DetachLoadBalancerTargetGroups", Times: 1, Err: sim.Throttling()})
	require.NoError(t, err)
	require.NoError(t, x.once(execution.TaskCleanUpSuccess))
	require.NotNil(t, x.state.Retire)
	assert.False(t, x.state.Retire.Done)
	assert.Equal(t, 1, x.state.Retire.Throttled)
	slowest := tuning.ThrottledSteps.Every(0).Seconds() * (1 + tuning.ThrottledSteps.Jitter)
	assert.Greater(t, float64(x.state.Retire.WaitSeconds), slowest, "longer than any throttled deploy round's wait")
	assert.GreaterOrEqual(t, float64(x.state.Retire.WaitSeconds), tuning.ThrottledRetireSteps.Every(0).Seconds()*(1-tuning.ThrottledRetireSteps.Jitter))
	require.NoError(t, x.step(execution.TaskCleanUpSuccess))
	assert.True(t, x.state.Retire.Done, "then it goes on")
}

// TestDeployListsGroupsOnce: a round of Deploy lists the project-config's
// groups once (DescribeAutoScalingGroups by its tags, as Resolve finds
// the previous groups) and makes the release's from that listing: a round
// AWS throttled runs again whole, and on the account's one Auto Scaling
// bucket (Amazon EC2 Auto Scaling API Reference, Welcome, API request
// rate) every describe a round repeats is one less token for a create.
func TestDeployListsGroupsOnce(t *testing.T) {
	h := newHarness(t)
	x := h.start(h.baseRelease())
	require.NoError(t, x.steps(execution.TaskValidate, execution.TaskLock, execution.TaskValidateResources, execution.TaskPublish))
	h.world.ResetCalls()
	require.NoError(t, x.once(execution.TaskDeploy))
	require.True(t, x.state.Deploy.Done)
	assert.Equal(t, 1, h.world.Calls()["DescribeAutoScalingGroups"])
}
