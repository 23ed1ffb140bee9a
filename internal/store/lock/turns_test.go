package lock_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/local/s3server/s3test"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/store/lock"
)

var steps = lock.StepQueue{Calls: 36, Refill: 9, Span: 60, Share: 20, Horizon: 5 * time.Minute}

const acct, reg = "111111111111", "us-east-1"

// A lone step goes now with no bound on its calls; a step beside it
// waits until its turn's seconds are clear of that one's and the refill
// of the seconds after them brings back its calls, its calls bounded;
// one more, after those two; another account's steps are not beside
// any; a step alone once the turns before have been refilled goes now,
// and one asking for fewer calls than a share holds a turn of those.
func TestTurnsTake(t *testing.T) {
	e := newEnv(t)
	s := lock.NewTurns(e.client, bucket)
	ctx := t.Context()
	now := t0.Add(300 * time.Millisecond)

	turn, err := s.Take(ctx, acct, reg, "a", 0, now, steps)
	require.NoError(t, err)
	assert.Equal(t, lock.StepTurn{Held: true}, turn, "alone: now, as many calls as it needs")

	turn, err = s.Take(ctx, acct, reg, "b", 0, now.Add(100*time.Millisecond), steps)
	require.NoError(t, err)
	assert.Equal(t, lock.StepTurn{Wait: 4 * time.Second, Calls: 20, Beside: 1, Held: true}, turn,
		"a's 36 may fall in t0 and t0+1: b's 20 more need runs of four seconds from t0+1 (36 + 3 x 9 >= 56), t0+4 on")

	turn, err = s.Take(ctx, acct, reg, "c", 0, now.Add(200*time.Millisecond), steps)
	require.NoError(t, err)
	c := turn.Wait
	assert.Contains(t, []time.Duration{6 * time.Second, 7 * time.Second}, c, "after b's seconds (t0+4, t0+5), with a's and b's calls refilled, passing over as many seconds with room as its name chooses, fewer than the one turn beside it and one")
	assert.Equal(t, lock.StepTurn{Wait: c, Calls: 20, Beside: 1, Held: true}, turn)

	turn, err = s.Take(ctx, "222222222222", reg, "x", 0, now, steps)
	require.NoError(t, err)
	assert.Equal(t, lock.StepTurn{Held: true}, turn, "another account's bucket")
	turn, err = s.Take(ctx, "222222222222", reg, "x", 0, now.Add(50*time.Millisecond), steps)
	require.NoError(t, err)
	assert.Equal(t, lock.StepTurn{Held: true}, turn, "x's step taken again (a retry) is not beside its own turn")

	late := now.Add(20 * time.Second)
	turn, err = s.Take(ctx, acct, reg, "d", 0, late, steps)
	require.NoError(t, err)
	assert.Equal(t, lock.StepTurn{Held: true}, turn, "the turns before have passed, their calls refilled")

	turn, err = s.Take(ctx, acct, reg, "f", 0, late.Add(200*time.Millisecond), steps)
	require.NoError(t, err)
	f := turn.Wait
	assert.Contains(t, []time.Duration{4 * time.Second, 5 * time.Second}, f, "beside d's whole turn: f's first second with refilled room after it, or the next")
	assert.Equal(t, lock.StepTurn{Wait: f, Calls: 20, Beside: 1, Held: true}, turn)

	turn, err = s.Take(ctx, acct, reg, "g", 10, late.Add(300*time.Millisecond), steps)
	require.NoError(t, err)
	assert.Equal(t, 10, turn.Calls, "a turn of the 10 calls it asks for")
	assert.True(t, turn.Held)
	gAt := late.Add(300*time.Millisecond + turn.Wait)

	turn, err = s.Take(ctx, acct, reg, "h", 5, late.Add(time.Minute), steps)
	require.NoError(t, err)
	assert.Equal(t, lock.StepTurn{Calls: 5, Held: true}, turn, "alone, a step asking for 5 calls takes a turn of 5, and makes no more")

	keys := e.keys(t, naming.TurnsPrefix(acct, reg))
	assert.ElementsMatch(t, []string{
		naming.TurnKey(acct, reg, naming.StartStamp(now), 36, "a"),
		naming.TurnKey(acct, reg, naming.StartStamp(now.Add(4100*time.Millisecond)), 20, "b"),
		naming.TurnKey(acct, reg, naming.StartStamp(now.Add(200*time.Millisecond+c)), 20, "c"),
		naming.TurnKey(acct, reg, naming.StartStamp(late), 36, "d"),
		naming.TurnKey(acct, reg, naming.StartStamp(late.Add(200*time.Millisecond+f)), 20, "f"),
		naming.TurnKey(acct, reg, naming.StartStamp(gAt), 10, "g"),
		naming.TurnKey(acct, reg, naming.StartStamp(late.Add(time.Minute)), 5, "h"),
	}, keys, "the turns kept; those given up are deleted")
	assertWithinBucket(t, keys, steps)
}

// Steps taking turns all at once, at moments scattered over a few
// seconds, each for as many calls as it asks, and again a few seconds
// later: whatever the order of their writes and listings, the turns
// kept never put more than StepQueue.Calls in any second, nor more than
// the refill allows in any run of seconds (assertWithinBucket).
func TestTurnsConcurrentNeverOverfill(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			e := newEnv(t)
			s := lock.NewTurns(e.client, bucket)
			rng := rand.New(rand.NewPCG(seed, 7))
			const n = 24
			nows, wants := make([]time.Time, n), make([]int, n)
			for i := range nows {
				nows[i] = t0.Add(time.Duration(rng.IntN(3000)) * time.Millisecond)
				if i >= n/2 {
					nows[i] = nows[i].Add(5 * time.Second)
				}
				wants[i] = rng.IntN(steps.Share + 1) // 0: a share
			}
			turns := make([]lock.StepTurn, n)
			for _, half := range [][2]int{{0, n / 2}, {n / 2, n}} {
				var wg sync.WaitGroup
				for i := half[0]; i < half[1]; i++ {
					wg.Go(func() {
						turn, err := s.Take(t.Context(), acct, reg, fmt.Sprintf("r%02d", i), wants[i], nows[i], steps)
						assert.NoError(t, err)
						turns[i] = turn
					})
				}
				wg.Wait()
			}
			held := 0
			for _, turn := range turns {
				if !turn.Held {
					assert.GreaterOrEqual(t, turn.Wait, time.Second, "a step that holds no turn takes one again later")
					continue
				}
				held++
				assert.Equal(t, turn.Wait.Truncate(time.Second), turn.Wait, "whole seconds")
			}
			keys := e.keys(t, naming.TurnsPrefix(acct, reg))
			assert.Len(t, keys, held, "one turn kept by each step that holds one, none by the others")
			assert.GreaterOrEqual(t, held, n/3, "a third hold one at the first take at least")
			assertWithinBucket(t, keys, steps)
		})
	}
}

// assertWithinBucket checks the turns kept (their keys) from their keys
// alone, by brute force over every run of whole seconds (up to q.Span
// long): a turn's calls may fall anywhere in the second after it begins,
// so a run holds the calls of every turn that second overlaps, and those
// come to q.Calls + q.Refill x (w-1) at most over w seconds.
func assertWithinBucket(t *testing.T, keys []string, q lock.StepQueue) {
	t.Helper()
	prefix := naming.TurnsPrefix(acct, reg)
	type span struct {
		from, to int64 // the whole seconds the turn's calls may fall in
		calls    int
	}
	var turns []span
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, k := range keys {
		at, calls, _, ok := naming.TurnOf(prefix, k)
		require.True(t, ok, k)
		sp := span{from: at.Unix(), to: at.Add(time.Second - time.Nanosecond).Unix(), calls: calls}
		turns = append(turns, sp)
		lo, hi = min(lo, sp.from), max(hi, sp.to)
	}
	for from := lo; from <= hi; from++ {
		for w := 1; w <= q.Span; w++ {
			to := from + int64(w) - 1
			n := 0
			for _, sp := range turns {
				if sp.from <= to && sp.to >= from {
					n += sp.calls
				}
			}
			assert.LessOrEqual(t, n, q.Calls+q.Refill*(w-1), "seconds %d to %d", from-t0.Unix(), to-t0.Unix())
		}
	}
}

// A step with no turn overlapping now's seconds goes alone only when
// the turns before it left the refill room for its calls: turns of 36
// at t0 and t0+4 (72 over those five seconds, 36 + 4 x 9) leave a
// whole turn at t0+6 no room (108 over seven seconds, more than 36 + 6
// x 9), and a share the room a second later (92 over eight, within
// 99); at t0-3 and t0-1, they leave it room now (108 over ten
// seconds, within 117). The step's own turns before now are counted, their calls spent
// from the same bucket; its own turn within now's seconds is the one it
// took before (a retry), not beside it.
func TestTurnsAfterTheRefill(t *testing.T) {
	base := t0.Truncate(time.Second)
	now := base.Add(6 * time.Second)
	for _, tt := range []struct {
		name   string
		before map[time.Duration]string // when, whose
		want   lock.StepTurn
	}{
		{"others' turns before", map[time.Duration]string{0: "x", 4 * time.Second: "y"}, lock.StepTurn{Wait: time.Second, Calls: 20, Held: true}},
		{"its own turns before", map[time.Duration]string{0: "me", 4 * time.Second: "me"}, lock.StepTurn{Wait: time.Second, Calls: 20, Held: true}},
		{"refilled", map[time.Duration]string{-3 * time.Second: "x", -time.Second: "y"}, lock.StepTurn{Held: true}},
		{"its own turn taken before, within now's seconds", map[time.Duration]string{0: "x", 4 * time.Second: "y", 6*time.Second - 700*time.Millisecond: "me"}, lock.StepTurn{Wait: time.Second, Calls: 20, Held: true}},
		{"another's turn within now's seconds", map[time.Duration]string{6*time.Second - 700*time.Millisecond: "z"}, lock.StepTurn{Wait: 3 * time.Second, Calls: 20, Beside: 1, Held: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			for d, who := range tt.before {
				e.put(t, naming.TurnKey(acct, reg, naming.StartStamp(base.Add(d)), 36, who), "")
			}
			turn, err := lock.NewTurns(e.client, bucket).Take(t.Context(), acct, reg, "me", 0, now, steps)
			require.NoError(t, err)
			assert.Equal(t, tt.want, turn)
		})
	}
}

// A turn that cannot be written or listed is an error, never a turn:
// throttling is retryable (Amazon S3 API Reference: 503 SlowDown).
func TestTurnsFailClosed(t *testing.T) {
	s := lock.NewTurns(s3test.Failing(t, http.StatusServiceUnavailable, "SlowDown"), bucket)
	_, err := s.Take(t.Context(), acct, reg, "me", 0, t0, steps)
	require.Error(t, err)
	assert.True(t, failure.IsRetryable(err), "%v", err)
}

// keys lists the keys under prefix.
func (e env) keys(t *testing.T, prefix string) []string {
	t.Helper()
	out, err := e.client.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	require.NoError(t, err)
	var keys []string
	for _, o := range out.Contents {
		keys = append(keys, aws.ToString(o.Key))
	}
	return keys
}

// countingS3 counts the writes and deletes a Take makes.
type countingS3 struct {
	lock.StartsS3
	puts, deletes atomic.Int32
}

func (c *countingS3) PutObject(ctx context.Context, in *s3.PutObjectInput, optFns ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	c.puts.Add(1)
	return c.StartsS3.PutObject(ctx, in, optFns...)
}

func (c *countingS3) DeleteObject(ctx context.Context, in *s3.DeleteObjectInput, optFns ...func(*s3.Options)) (*s3.DeleteObjectOutput, error) {
	c.deletes.Add(1)
	return c.StartsS3.DeleteObject(ctx, in, optFns...)
}

// A turn is looked for up to the horizon, the turns that begin up to a
// span's seconds past it listed at once (one second at a time here): with room at the horizon itself, the
// step takes it there; with none, it holds none and takes one again
// after the horizon. Either way it writes no turn it finds no room for
// in its first listing.
func TestTurnsWithinTheHorizon(t *testing.T) {
	q := lock.StepQueue{Calls: 36, Refill: 36, Span: 1, Share: 20, Horizon: 3 * time.Second}
	base := t0.Truncate(time.Second)
	now := base.Add(500 * time.Millisecond)
	for _, tt := range []struct {
		name    string
		others  []time.Duration
		want    lock.StepTurn
		puts    int32
		deletes int32
	}{
		{"room at the horizon", []time.Duration{200 * time.Millisecond, 1700 * time.Millisecond}, lock.StepTurn{Wait: 3 * time.Second, Calls: 20, Beside: 2, Held: true}, 2, 1},
		{"none within it", []time.Duration{200 * time.Millisecond, 1700 * time.Millisecond, 4200 * time.Millisecond}, lock.StepTurn{Wait: 3 * time.Second, Calls: 20, Beside: 2}, 1, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			for i, d := range tt.others {
				e.put(t, naming.TurnKey(acct, reg, naming.StartStamp(base.Add(d)), 36, fmt.Sprintf("x%d", i)), "")
			}
			c := &countingS3{StartsS3: e.client}
			turn, err := lock.NewTurns(c, bucket).Take(t.Context(), acct, reg, "me", 0, now, q)
			require.NoError(t, err)
			assert.Equal(t, tt.want, turn)
			assert.Equal(t, tt.puts, c.puts.Load(), "writes")
			assert.Equal(t, tt.deletes, c.deletes.Load(), "deletes")
		})
	}
}
