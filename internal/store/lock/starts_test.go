package lock_test

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/local/s3server/s3test"
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

// A deploy is on its way from its start (Take) until it arrives
// (Arrive): Underway counts the markers of a target within the horizon,
// but the caller's own, another target's, one cleared (twice: Arrive is
// idempotent) or one older than the horizon.
func TestStartsUnderwayUntilArrived(t *testing.T) {
	e := newEnv(t)
	s := lock.NewStarts(e.client, bucket)
	ctx := t.Context()
	const acct, reg = "111111111111", "us-east-1"
	underway := func(deploy string, now time.Time) int {
		t.Helper()
		n, err := s.Underway(ctx, acct, reg, deploy, now, time.Hour)
		require.NoError(t, err)
		return n
	}
	assert.Zero(t, underway("me", t0), "no deploy started")
	for k := range 4 {
		_, err := s.Take(ctx, acct, reg, fmt.Sprintf("r%d", k), t0, t0, queue)
		require.NoError(t, err)
	}
	_, err := s.Take(ctx, "222222222222", reg, "x", t0, t0, queue)
	require.NoError(t, err)
	_, err = s.Take(ctx, acct, reg, "me", t0, t0, queue)
	require.NoError(t, err)
	assert.Equal(t, 4, underway("me", t0.Add(time.Minute)), "the others of its target, itself not")

	require.NoError(t, s.Arrive(ctx, acct, reg, "r0", t0))
	require.NoError(t, s.Arrive(ctx, acct, reg, "r0", t0), "a marker already cleared")
	require.NoError(t, s.Arrive(ctx, acct, reg, "r1", t0.Add(time.Second)), "another start's key: nothing to clear")
	assert.Equal(t, 3, underway("me", t0.Add(time.Minute)), "r0 arrived")
	assert.Equal(t, 3, underway("me", t0.Add(time.Hour-time.Millisecond)), "within the horizon")
	assert.Zero(t, underway("me", t0.Add(time.Hour+time.Second)), "a marker past the horizon is a deploy no longer on its way")
}

// A listing that fails is an error, never a count of nobody on the way:
// throttling is retryable (Amazon S3 API Reference, ListObjectsV2: 503
// SlowDown), and a refused clear is an error too.
func TestStartsUnderwayFailsClosed(t *testing.T) {
	s := lock.NewStarts(s3test.Failing(t, http.StatusServiceUnavailable, "SlowDown"), bucket)
	n, err := s.Underway(t.Context(), "111111111111", "us-east-1", "me", t0, time.Hour)
	require.Error(t, err)
	assert.True(t, failure.IsRetryable(err), "%v", err)
	assert.Zero(t, n)
	require.Error(t, s.Arrive(t.Context(), "111111111111", "us-east-1", "me", t0))
}
