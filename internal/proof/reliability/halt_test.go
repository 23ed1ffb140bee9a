package reliability

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/local/region"
	"github.com/ferryhq/ferry/internal/store/halt"
	"github.com/ferryhq/ferry/internal/tuning"
)

// TestHaltDuringEachState writes a halt marker as the new release's
// execution enters each state. A halt before Deploy creates anything ends
// in FailureClean with nothing created; a later one ends in FailureClean
// at the next check (during the bake, rolled back: the
// previous groups serve again before the new ones leave); during CleanUpSuccess (past the point
// of no return) the release may still succeed. Every run keeps the
// invariants and the halted execution removes the marker.
func TestHaltDuringEachState(t *testing.T) {
	sc := reference(t)
	states := []string{execution.TaskValidate, execution.TaskLock, execution.TaskValidateResources, execution.TaskPublish,
		execution.TaskDeploy, "Healthy?", "WaitForHealthy", execution.TaskCheckHealthy, execution.TaskBake, "WaitForBake", execution.TaskCleanUpSuccess}
	beforeDeploy := []string{execution.TaskValidate, execution.TaskLock, execution.TaskValidateResources, execution.TaskPublish, execution.TaskDeploy}
	for _, state := range states {
		t.Run(state, func(t *testing.T) {
			var once sync.Once
			var haltedAt time.Time
			res, err := sc.Run(context.Background(), RunOptions{OnState: func(reg *region.Region, s string) {
				if s != state {
					return
				}
				once.Do(func() {
					haltedAt = reg.Clock().Now()
					err := halt.New(reg.S3(), reg.Bucket()).Put(context.Background(), "acme/shop", "production",
						halt.Marker{By: "reliability", Reason: "halt during " + state, At: haltedAt})
					require.NoError(t, err)
				})
			}})
			require.NoError(t, err)
			require.False(t, haltedAt.IsZero(), "the execution never entered %s", state)
			assert.Empty(t, res.Violations)
			assert.False(t, res.HaltMarker, "the halted execution removes the marker")
			if state == execution.TaskCleanUpSuccess {
				assert.Contains(t, []string{execution.EndSuccess, execution.EndFailureClean}, res.End, "%s: %s", res.Error, res.Cause)
				return
			}
			require.Equal(t, execution.EndFailureClean, res.End, "%s: %s", res.Error, res.Cause)
			assert.Equal(t, "HaltError", res.Error)
			if slices.Contains(beforeDeploy, state) {
				for _, c := range res.Calls {
					assert.NotContains(t, []string{"CreateAutoScalingGroup", "CreateLaunchTemplate", "PutScalingPolicy", "PutMetricAlarm"}, c.Op,
						"a halt before Deploy creates anything: %s was called", c)
				}
				return
			}
			// The halt is acted on by the next task that checks (its wait
			// is the pacing's, bounded in package pacing's tests); the
			// clean-up then retires the release's groups gracefully
			// (drained, termination hooks run: the reference release's hook
			// has no one to complete it, so it waits out its heartbeat).
			cleanUp := firstVisit(t, res, execution.TaskCleanUpFailure)
			next := nextCheck(t, res, state, haltedAt)
			assert.Equal(t, next, cleanUp, "halted at %s, checked at %s, cleaning up from %s", haltedAt, next, cleanUp)
			assert.LessOrEqual(t, res.EndedAt.Sub(cleanUp), retireBound, "the clean-up took %s", res.EndedAt.Sub(cleanUp))
		})
	}
}

// TestEveryTaskTwice: every task invoked twice (a retry after success,
// the second result given to the state machine) leaves the same world and
// the same records as once.
func TestEveryTaskTwice(t *testing.T) {
	once := clean(t)
	twice, err := reference(t).Run(context.Background(), RunOptions{Twice: true})
	require.NoError(t, err)
	require.Equal(t, execution.EndSuccess, twice.End, "%s: %s", twice.Error, twice.Cause)
	assert.Empty(t, twice.Violations)
	assert.JSONEq(t, mustJSON(t, once.After), mustJSON(t, twice.After), "the world after the deploy")
	assert.Equal(t, once.Objects, twice.Objects, "the deployer bucket's records")
	assert.Equal(t, once.EndedAt, twice.EndedAt)
	for _, inv := range twice.Invocations {
		assert.Empty(t, inv.Err, "%s failed on its second invocation", inv.Task)
	}
}

// TestNeverHealthyTimesOut: a release that never becomes healthy fails
// (TimeoutError) within one health-check interval after its timeout, and
// ends FailureClean once its groups are retired, with the previous
// release still serving.
func TestNeverHealthyTimesOut(t *testing.T) {
	sc := reference(t)
	res, err := sc.Run(context.Background(), RunOptions{Next: filepath.Join("..", "..", "..", "testdata", "reliability", "v2-never-healthy.json")})
	require.NoError(t, err)
	require.Equal(t, execution.EndFailureClean, res.End, "%s: %s", res.Error, res.Cause)
	assert.Equal(t, "TimeoutError", res.Error)
	assert.Empty(t, res.Violations)
	const timeout = 120 * time.Second // the release's timeout
	took := firstVisit(t, res, execution.TaskCleanUpFailure).Sub(res.StartedAt)
	assert.GreaterOrEqual(t, took, timeout)
	assert.LessOrEqual(t, took, timeout+sc.Interval, "failed %s after the start", took)
	assert.LessOrEqual(t, res.EndedAt.Sub(res.StartedAt), timeout+sc.Interval+retireBound)
}

// retireBound is the longest the reference release's groups take to
// retire: the deregistration delay (30 s), the termination hook's
// heartbeat timeout (30 s, no one completes it), the terminate time (at
// most 40 s) and a retirement step's wait on each side.
const retireBound = 30*time.Second + 30*time.Second + 40*time.Second + 2*tuning.RetireCheckInterval

// nextCheck is when the first task that reads the halt marker (a check,
// a bake's check, a canary's step) started from the visit of state at at
// on (that visit itself when it is one).
func nextCheck(t *testing.T, res *Result, state string, at time.Time) time.Time {
	t.Helper()
	from := slices.IndexFunc(res.Visits, func(v Visit) bool { return v.State == state && v.At.Equal(at) })
	require.GreaterOrEqual(t, from, 0, "no visit of %s at %s", state, at)
	for _, v := range res.Visits[from:] {
		if slices.Contains([]string{execution.TaskCheckHealthy, execution.TaskBake, execution.TaskNextStep}, v.State) {
			return v.At
		}
	}
	t.Fatalf("no check after %s at %s", state, at)
	return time.Time{}
}

// firstVisit is when res's execution first entered state.
func firstVisit(t *testing.T, res *Result, state string) time.Time {
	t.Helper()
	for _, v := range res.Visits {
		if v.State == state {
			return v.At
		}
	}
	t.Fatalf("the execution never entered %s", state)
	return time.Time{}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}
