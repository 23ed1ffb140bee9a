package lock_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/store/lock"
)

var queue = lock.Queue{Every: 500 * time.Millisecond, Horizon: time.Minute}

// A lone deploy waits 0; the k-th of deploys that started together
// waits k turns; a deploy to another account, or one that starts after
// the queue has drained, waits 0; a retry of a start does not count
// itself.
func TestStartsTakeTurns(t *testing.T) {
	e := newEnv(t)
	s := lock.NewStarts(e.client, bucket)
	ctx := t.Context()

	turn, err := s.Take(ctx, "111111111111", "us-east-1", "r0", t0, t0, queue)
	require.NoError(t, err)
	assert.Equal(t, lock.Turn{}, turn, "a lone deploy")

	for k := 1; k < 5; k++ {
		turn, err := s.Take(ctx, "111111111111", "us-east-1", fmt.Sprintf("r%d", k), t0, t0, queue)
		require.NoError(t, err)
		assert.Equal(t, lock.Turn{Wait: time.Duration(k) * queue.Every, Ahead: k}, turn, "the %d-th of a burst", k)
	}
	again, err := s.Take(ctx, "111111111111", "us-east-1", "r4", t0, t0.Add(time.Second), queue)
	require.NoError(t, err)
	assert.Equal(t, lock.Turn{Wait: time.Second, Ahead: 4}, again, "a retry of r4 a second later: the rest of its turn, itself not ahead")

	other, err := s.Take(ctx, "222222222222", "us-east-1", "x", t0, t0, queue)
	require.NoError(t, err)
	assert.Equal(t, lock.Turn{}, other, "another account's buckets")

	late := t0.Add(10 * time.Second)
	turn, err = s.Take(ctx, "111111111111", "us-east-1", "r9", late, late, queue)
	require.NoError(t, err)
	assert.Equal(t, lock.Turn{Ahead: 5}, turn, "the queue drained before it started")

	long := late.Add(2 * queue.Horizon)
	turn, err = s.Take(ctx, "111111111111", "us-east-1", "r10", long, long, queue)
	require.NoError(t, err)
	assert.Equal(t, lock.Turn{}, turn, "starts past the horizon are not looked at")

	e.put(t, naming.StartsPrefix("111111111111", "us-east-1")+"not-a-start", "")
	turn, err = s.Take(ctx, "111111111111", "us-east-1", "r11", long, long, queue)
	require.NoError(t, err)
	assert.Equal(t, 1, turn.Ahead, "a key that is no start marker is skipped")
}

// Deploys starting together, all at once: each writes before it lists,
// so the i-th to write waits i turns at least (no two both go first),
// and none more than the burst's length.
func TestStartsConcurrentNeverAllFirst(t *testing.T) {
	e := newEnv(t)
	s := lock.NewStarts(e.client, bucket)
	const n = 20
	waits := make([]time.Duration, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			turn, err := s.Take(t.Context(), "111111111111", "us-east-1", fmt.Sprintf("r%02d", i), t0, t0, queue)
			assert.NoError(t, err)
			waits[i] = turn.Wait
		})
	}
	wg.Wait()
	slices.Sort(waits)
	for i, w := range waits {
		assert.GreaterOrEqual(t, w, time.Duration(i)*queue.Every, "the %d-th to write saw those before it: %v", i, waits)
		assert.LessOrEqual(t, w, (n-1)*queue.Every)
	}
}
