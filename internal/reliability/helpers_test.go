package reliability

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

var (
	cleanOnce  sync.Once
	cleanRes   *Result
	cleanErr   error
	failedOnce sync.Once
	failedRes  *Result
	failedErr  error
)

// reference returns the reference scenario of this repository.
func reference(t *testing.T) *Scenario {
	t.Helper()
	sc, err := Reference("../..")
	require.NoError(t, err)
	return sc
}

// clean returns the reference scenario's clean run (made once per test
// binary).
func clean(t *testing.T) *Result {
	t.Helper()
	cleanOnce.Do(func() {
		sc, err := Reference("../..")
		if err != nil {
			cleanErr = err
			return
		}
		cleanRes, cleanErr = sc.Run(context.Background(), RunOptions{})
	})
	require.NoError(t, cleanErr)
	return cleanRes
}

// callIndex returns the index of the n-th (1-based) call of the clean run
// that made op in task (with key when not empty).
func callIndex(t *testing.T, res *Result, task, op, key string, n int) int {
	t.Helper()
	for i, c := range res.Calls {
		if c.Task == task && c.Op == op && (key == "" || c.Key == key) {
			n--
			if n == 0 {
				return i
			}
		}
	}
	require.Failf(t, "no such call", "the clean run has no call %s %s %s in %s", op, key, "", task)
	return -1
}

// failed returns the reference scenario's failure base run: halted at its
// first health check (made once per test binary).
func failed(t *testing.T) *Result {
	t.Helper()
	failedOnce.Do(func() {
		sc, err := Reference("../..")
		if err != nil {
			failedErr = err
			return
		}
		failedRes, failedErr = sc.Run(context.Background(), RunOptions{Schedule: Schedule{Base: BaseFailure}})
	})
	require.NoError(t, failedErr)
	return failedRes
}

var (
	rolledBackOnce sync.Once
	rolledBackRes  *Result
	rolledBackErr  error
)

// rolledBack returns the reference scenario's rollback base run: halted
// at its first wait in the bake (made once per test binary).
func rolledBack(t *testing.T) *Result {
	t.Helper()
	rolledBackOnce.Do(func() {
		sc, err := Reference("../..")
		if err != nil {
			rolledBackErr = err
			return
		}
		rolledBackRes, rolledBackErr = sc.Run(context.Background(), RunOptions{Schedule: Schedule{Base: BaseRollback}})
	})
	require.NoError(t, rolledBackErr)
	return rolledBackRes
}
