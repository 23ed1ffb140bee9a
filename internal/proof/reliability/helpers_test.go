package reliability

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// baseRuns are the reference scenario's base runs, each made once per
// test binary.
var baseRuns = map[Base]*baseRun{BaseSuccess: {}, BaseFailure: {}, BaseRollback: {}}

type baseRun struct {
	once sync.Once
	res  *Result
	err  error
}

// base returns the reference scenario's base run of b.
func base(t *testing.T, b Base) *Result {
	t.Helper()
	r := baseRuns[b]
	r.once.Do(func() {
		sc, err := Reference("../../..")
		if err != nil {
			r.err = err
			return
		}
		r.res, r.err = sc.Run(context.Background(), RunOptions{Schedule: Schedule{Base: b}})
	})
	require.NoError(t, r.err)
	return r.res
}

// reference returns the reference scenario of this repository.
func reference(t *testing.T) *Scenario {
	t.Helper()
	sc, err := Reference("../../..")
	require.NoError(t, err)
	return sc
}

// clean returns the reference scenario's clean run.
func clean(t *testing.T) *Result { t.Helper(); return base(t, BaseSuccess) }

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
// first health check.
func failed(t *testing.T) *Result { t.Helper(); return base(t, BaseFailure) }

// rolledBack returns the reference scenario's rollback base run: halted
// at its first wait in the bake.
func rolledBack(t *testing.T) *Result { t.Helper(); return base(t, BaseRollback) }
