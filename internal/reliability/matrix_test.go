package reliability

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/naming"
)

// TestCleanRun: the reference deploy succeeds without a violation, and its
// call sequence covers every task of a successful deploy.
func TestCleanRun(t *testing.T) {
	res := clean(t)
	require.Equal(t, execution.EndSuccess, res.End, "%s: %s", res.Error, res.Cause)
	assert.Empty(t, res.Violations)
	var tasks []string
	for _, inv := range res.Invocations {
		if len(tasks) == 0 || tasks[len(tasks)-1] != inv.Task {
			tasks = append(tasks, inv.Task)
		}
	}
	assert.Equal(t, []string{execution.TaskValidate, execution.TaskLock, execution.TaskValidateResources, execution.TaskPublish,
		execution.TaskDeploy, execution.TaskCheckHealthy, execution.TaskCleanUpSuccess}, tasks)
	for _, c := range res.Calls {
		assert.NotZero(t, c.Invocation, "call %s belongs to no invocation", c)
	}
	assert.Greater(t, countAWS(res.Calls), 0)
	assert.Greater(t, len(res.Calls)-countAWS(res.Calls), 0, "S3 calls are recorded")
}

// TestMatrixSample runs a deterministic sample of the matrix (every 7th
// call index times every fault kind) and asserts zero violations. The full
// matrix is make reliability.
func TestMatrixSample(t *testing.T) {
	if testing.Short() {
		t.Skip("the matrix sample deploys dozens of times")
	}
	m, err := reference(t).RunMatrix(context.Background(), MatrixOptions{Every: 7, Offset: 3, Workers: 2})
	require.NoError(t, err)
	var out bytes.Buffer
	m.Report(&out)
	t.Log("\n" + out.String())
	assert.Empty(t, m.Violations())
	assert.Len(t, m.Entries, ((len(m.Clean.Calls)-3+6)/7)*len(Kinds()))
}

// TestTargetsTheCall: a fault made from index i fails exactly the clean
// run's call i (the run follows the clean calls up to it).
func TestTargetsTheCall(t *testing.T) {
	res := clean(t)
	sc := reference(t)
	for _, i := range []int{0, callIndex(t, res, execution.TaskDeploy, "CreateAutoScalingGroup", "", 1), len(res.Calls) - 1} {
		f, err := Target(res, i, Throttling)
		require.NoError(t, err)
		got, err := sc.Run(context.Background(), RunOptions{Fault: f})
		require.NoError(t, err)
		assert.True(t, got.Fired, "fault %s", f)
		assert.Equal(t, res.Calls[i].Task, got.FiredIn)
		require.Greater(t, len(got.Calls), i)
		assert.Equal(t, res.Calls[:i+1], got.Calls[:i+1], "the calls up to the fault are the clean run's")
		assert.Equal(t, execution.EndSuccess, got.End, "a throttled call is retried")
		assert.Empty(t, got.Violations)
	}
	_, err := Target(res, len(res.Calls), Throttling)
	assert.Error(t, err)
}

// TestFaultsFound are the runs of the matrix that showed bugs: each must
// end without a violation. The comments say what the matrix saw.
func TestFaultsFound(t *testing.T) {
	res := clean(t)
	sc := reference(t)
	id := res.ReleaseID
	const p, c = "acme/shop", "production"
	tests := []struct {
		name string
		kind Kind
		idx  int
		// found is what the matrix showed before the fix (or now).
		found string
	}{
		{"lock: invocation dies after taking the lock", LambdaDied,
			callIndex(t, res, execution.TaskLock, "PutObject", naming.LockKey(p, c), 1),
			"fixed in 263973a: FailureClean with the lock still held (Lock's catch skipped ReleaseLock; Lambda.Unknown not retried)"},
		{"lock: run-once marker write denied after the lock was taken", AccessDenied,
			callIndex(t, res, execution.TaskLock, "PutObject", naming.StartedKey(p, c, id), 1),
			"fixed in 263973a: FailureClean with the lock still held"},
		{"clean-up success: invocation dies after its work", LambdaDied,
			callIndex(t, res, execution.TaskCleanUpSuccess, "DeleteObject", naming.LockKey(p, c), 1),
			"fixed in 263973a: FailureDirty with the lock released and the outcome Success"},
		{"clean-up success: release unreadable", AccessDenied,
			callIndex(t, res, execution.TaskCleanUpSuccess, "GetObject", naming.ReleaseKey(p, c, id), 1),
			"fixed (CleanUpSuccess names what it leaves in a FailureDirty outcome; the lock is released last): FailureDirty without an outcome (nothing names the leftovers)"},
		{"clean-up success: describing the groups denied", AccessDenied,
			callIndex(t, res, execution.TaskCleanUpSuccess, "DescribeAutoScalingGroups", "", 1),
			"fixed (CleanUpSuccess names what it leaves in a FailureDirty outcome; the lock is released last): FailureDirty without an outcome"},
		{"clean-up success: reading the user data denied", AccessDenied,
			callIndex(t, res, execution.TaskCleanUpSuccess, "GetObject", naming.UserDataKey(p, c, id, "web"), 1),
			"fixed (CleanUpSuccess names what it leaves in a FailureDirty outcome; the lock is released last): FailureDirty without an outcome (after the previous groups were deleted)"},
		{"clean-up success: writing the current record denied", AccessDenied,
			callIndex(t, res, execution.TaskCleanUpSuccess, "PutObject", naming.CurrentKey(p, c), 1),
			"fixed (CleanUpSuccess names what it leaves in a FailureDirty outcome; the lock is released last): FailureDirty without an outcome"},
		{"clean-up success: releasing the lock denied", AccessDenied,
			callIndex(t, res, execution.TaskCleanUpSuccess, "DeleteObject", naming.LockKey(p, c), 1),
			"fixed (CleanUpSuccess names what it leaves in a FailureDirty outcome; the lock is released last): FailureDirty, but the outcome (written before the lock is released) says Success"},
		{"clean-up success: removing the halt marker denied", AccessDenied,
			callIndex(t, res, execution.TaskCleanUpSuccess, "DeleteObject", naming.HaltKey(p, c), 1),
			"fixed (CleanUpSuccess names what it leaves in a FailureDirty outcome; the lock is released last): FailureDirty with the lock already released and the outcome Success"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Target(res, tt.idx, tt.kind)
			require.NoError(t, err)
			got, err := sc.Run(context.Background(), RunOptions{Fault: f})
			require.NoError(t, err)
			assert.True(t, got.Fired)
			assert.Empty(t, got.Violations, "fault %s ended %s (%s: %s); the matrix found: %s", f, got.End, got.Error, got.Cause, tt.found)
		})
	}
}
