package lock_test

import (
	"context"
	"fmt"
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

var steps = lock.StepQueue{Calls: 36, Share: 20, Horizon: 5 * time.Minute}

const acct, reg = "111111111111", "us-east-1"

// A lone step goes now with no bound on its calls; a step beside it
// waits until its turn's seconds are clear of that one's, its calls
// bounded; one more fits beside that second turn when the two fit in
// the calls; another account's steps are not beside any.
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
	assert.Equal(t, lock.StepTurn{Wait: 2 * time.Second, Calls: 20, Beside: 1, Held: true}, turn, "a's turn takes the seconds its calls may fall in, t0 and t0+1")

	turn, err = s.Take(ctx, acct, reg, "c", 0, now.Add(200*time.Millisecond), steps)
	require.NoError(t, err)
	c := turn.Wait
	assert.Contains(t, []time.Duration{4 * time.Second, 5 * time.Second}, c, "b's 20 and c's would be 40 in t0+2 or t0+3: after b's, passing over as many seconds with room as its name chooses, fewer than the one turn beside it and one")
	assert.Equal(t, lock.StepTurn{Wait: c, Calls: 20, Beside: 1, Held: true}, turn)

	turn, err = s.Take(ctx, "222222222222", reg, "x", 0, now, steps)
	require.NoError(t, err)
	assert.Equal(t, lock.StepTurn{Held: true}, turn, "another account's bucket")
	turn, err = s.Take(ctx, "222222222222", reg, "x", 0, now.Add(50*time.Millisecond), steps)
	require.NoError(t, err)
	assert.Equal(t, lock.StepTurn{Held: true}, turn, "x's step taken again (a retry) is not beside its own turn")

	late := now.Add(10 * time.Second)
	turn, err = s.Take(ctx, acct, reg, "d", 0, late, steps)
	require.NoError(t, err)
	assert.Equal(t, lock.StepTurn{Held: true}, turn, "the turns before have passed")

	turn, err = s.Take(ctx, acct, reg, "f", 0, late.Add(200*time.Millisecond), steps)
	require.NoError(t, err)
	assert.Equal(t, lock.StepTurn{Wait: 2 * time.Second, Calls: 20, Beside: 1, Held: true}, turn, "beside d's whole turn: f's first second with room after it")

	turn, err = s.Take(ctx, acct, reg, "g", 10, late.Add(300*time.Millisecond), steps)
	require.NoError(t, err)
	assert.Contains(t, []time.Duration{2 * time.Second, 3 * time.Second}, turn.Wait, "a turn of the 10 calls it asks for fits beside f's 20")
	assert.Equal(t, 10, turn.Calls)
	gAt := late.Add(300*time.Millisecond + turn.Wait)

	assert.ElementsMatch(t, []string{
		naming.TurnKey(acct, reg, naming.StartStamp(now), 36, "a"),
		naming.TurnKey(acct, reg, naming.StartStamp(now.Add(2100*time.Millisecond)), 20, "b"),
		naming.TurnKey(acct, reg, naming.StartStamp(now.Add(200*time.Millisecond+c)), 20, "c"),
		naming.TurnKey(acct, reg, naming.StartStamp(late), 36, "d"),
		naming.TurnKey(acct, reg, naming.StartStamp(late.Add(2200*time.Millisecond)), 20, "f"),
		naming.TurnKey(acct, reg, naming.StartStamp(gAt), 10, "g"),
	}, e.keys(t, naming.TurnsPrefix(acct, reg)), "the turns kept; those given up are deleted")
}

// Steps taking turns all at once, at moments scattered over a few
// seconds, each for as many calls as it asks: whatever the order of their writes and listings, the turns
// kept never put more than StepQueue.Calls in any second, the calls of a
// turn falling in the second after it begins (a lone step's turn counts
// the whole of them).
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
				wants[i] = rng.IntN(steps.Share + 1) // 0: a share
			}
			turns := make([]lock.StepTurn, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					turn, err := s.Take(t.Context(), acct, reg, fmt.Sprintf("r%02d", i), wants[i], nows[i], steps)
					assert.NoError(t, err)
					turns[i] = turn
				})
			}
			wg.Wait()
			perSecond := map[int64]int{}
			held := 0
			for i, turn := range turns {
				if !turn.Held {
					assert.GreaterOrEqual(t, turn.Wait, time.Second, "a step that holds no turn takes one again later")
					continue
				}
				held++
				calls := turn.Calls
				if calls == 0 {
					calls = steps.Calls
				}
				at := nows[i].Add(turn.Wait)
				perSecond[at.Unix()] += calls
				if at.Truncate(time.Second) != at {
					perSecond[at.Unix()+1] += calls
				}
				assert.Equal(t, turn.Wait.Truncate(time.Second), turn.Wait, "whole seconds")
			}
			for second, calls := range perSecond {
				assert.LessOrEqual(t, calls, steps.Calls, "second %d", second-t0.Unix())
			}
			assert.Len(t, e.keys(t, naming.TurnsPrefix(acct, reg)), held, "one turn kept by each step that holds one, none by the others")
			assert.GreaterOrEqual(t, held, n/3, "a third hold one at the first take at least")
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

// A turn is looked for up to the horizon, the turns that begin up to two
// seconds past it listed at once: with room at the horizon itself, the
// step takes it there; with none, it holds none and takes one again
// after the horizon. Either way it writes no turn it finds no room for
// in its first listing.
func TestTurnsWithinTheHorizon(t *testing.T) {
	q := lock.StepQueue{Calls: 36, Share: 20, Horizon: 3 * time.Second}
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
