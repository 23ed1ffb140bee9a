package lock_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/local/s3server/s3test"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/store/lock"
)

const (
	bucket  = "ferry-deployer-123456789012-us-east-1"
	project = "coinbase-deploy-test"
	config  = "development"
)

var t0 = time.Date(2030, 5, 6, 7, 8, 9, 0, time.UTC)

type env struct {
	client *s3.Client
	clk    *clock.Virtual
	locks  *lock.Locks
}

func newEnv(t *testing.T) env {
	t.Helper()
	clk := clock.NewVirtual(t0)
	c := s3test.StartVersioned(t, clk, bucket).Client()
	return env{client: c, clk: clk, locks: lock.New(c, bucket, clk)}
}

func (e env) put(t *testing.T, key, body string) {
	t.Helper()
	s3test.Put(t, e.client, bucket, key, body)
}

func holder(release, execution string) lock.Holder {
	return lock.Holder{ReleaseID: release, Execution: execution}
}

func TestRaceExactlyOneWinner(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	const racers, rounds = 32, 50
	for round := range rounds {
		cfg := fmt.Sprintf("race%02d", round)
		errs := make([]error, racers)
		var wg sync.WaitGroup
		startLine := make(chan struct{})
		for i := range racers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-startLine
				errs[i] = e.locks.Acquire(ctx, project, cfg, holder(fmt.Sprintf("r%02d-%02d", round, i), fmt.Sprintf("exec-%02d", i)))
			}()
		}
		close(startLine)
		wg.Wait()

		winners := 0
		winner := ""
		for i, err := range errs {
			if err == nil {
				winners++
				winner = fmt.Sprintf("r%02d-%02d", round, i)
				continue
			}
			var exists *failure.LockExistsError
			require.ErrorAs(t, err, &exists, "round %d racer %d", round, i)
		}
		require.Equal(t, 1, winners, "round %d", round)
		h, found, err := e.locks.Get(ctx, project, cfg)
		require.NoError(t, err)
		require.True(t, found)
		assert.Equal(t, winner, h.ReleaseID, "round %d", round)
		for _, err := range errs {
			var exists *failure.LockExistsError
			if errors.As(err, &exists) {
				assert.Equal(t, winner, exists.Holder, "round %d: losers name the winner", round)
			}
		}
	}
}

// TestAcquire: each case takes the lock from its own starting state and
// checks what it needs to.
func TestAcquire(t *testing.T) {
	// acquireAfter runs setup on a fresh bucket, then Acquire for h.
	acquireAfter := func(t *testing.T, h lock.Holder, setup func(ctx context.Context, e env)) (env, error) {
		e := newEnv(t)
		if setup != nil {
			setup(t.Context(), e)
		}
		return e, e.locks.Acquire(t.Context(), project, config, h)
	}
	takeAndRelease := func(t *testing.T) func(ctx context.Context, e env) {
		return func(ctx context.Context, e env) {
			require.NoError(t, e.locks.Acquire(ctx, project, config, holder("r1", "e1")))
			require.NoError(t, e.locks.Release(ctx, project, config, "r1"))
		}
	}
	held := func(t *testing.T) func(ctx context.Context, e env) {
		return func(ctx context.Context, e env) {
			require.NoError(t, e.locks.Acquire(ctx, project, config, holder("r1", "e1")))
		}
	}

	t.Run("free lock is taken, since from the clock", func(t *testing.T) {
		e, err := acquireAfter(t, holder("r1", "e1"), nil)
		require.NoError(t, err)
		h, found, err := e.locks.Get(t.Context(), project, config)
		require.NoError(t, err)
		require.True(t, found)
		assert.Equal(t, lock.Holder{ReleaseID: "r1", Execution: "e1", Since: t0}, h)
		exec, started, err := e.locks.Started(t.Context(), project, config, "r1")
		require.NoError(t, err)
		assert.True(t, started)
		assert.Equal(t, "e1", exec)
	})
	t.Run("re-entrant for the same release and execution, since kept", func(t *testing.T) {
		e, err := acquireAfter(t, holder("r1", "e1"), func(ctx context.Context, e env) {
			require.NoError(t, e.locks.Acquire(ctx, project, config, holder("r1", "e1")))
			e.clk.Advance(time.Minute)
		})
		require.NoError(t, err)
		h, _, err := e.locks.Get(t.Context(), project, config)
		require.NoError(t, err)
		assert.Equal(t, t0, h.Since)
	})
	t.Run("held by another release", func(t *testing.T) {
		e, err := acquireAfter(t, holder("r2", "e2"), held(t))
		var exists *failure.LockExistsError
		require.ErrorAs(t, err, &exists)
		assert.Equal(t, failure.LockExistsError{Project: project, Config: config, Holder: "r1", Execution: "e1", Since: t0}, *exists)
		assert.Equal(t, failure.NameLockExists, failure.NameOf(err))
		_, started, err := e.locks.Started(t.Context(), project, config, "r2")
		require.NoError(t, err)
		assert.False(t, started, "a refused release leaves no run-once marker")
	})
	t.Run("the same release under another execution while it holds the lock", func(t *testing.T) {
		e, err := acquireAfter(t, holder("r1", "e2"), held(t))
		var bad *failure.BadReleaseError
		require.ErrorAs(t, err, &bad)
		assert.Equal(t, []string{"release_id: release r1 already ran (execution e1)"}, bad.Problems)
		h, found, err := e.locks.Get(t.Context(), project, config)
		require.NoError(t, err)
		require.True(t, found, "the running execution keeps its lock")
		assert.Equal(t, "e1", h.Execution)
	})
	t.Run("replay of a finished release is refused and leaves the lock free", func(t *testing.T) {
		e, err := acquireAfter(t, holder("r1", "e2"), takeAndRelease(t))
		var bad *failure.BadReleaseError
		require.ErrorAs(t, err, &bad)
		assert.Contains(t, err.Error(), "release r1 already ran (execution e1)")
		_, found, err := e.locks.Get(t.Context(), project, config)
		require.NoError(t, err)
		assert.False(t, found)
	})
	t.Run("the same execution after its own release (a retried Lock task) is allowed", func(t *testing.T) {
		_, err := acquireAfter(t, holder("r1", "e1"), takeAndRelease(t))
		require.NoError(t, err)
	})
	t.Run("holder without an execution", func(t *testing.T) {
		_, err := acquireAfter(t, holder("r1", ""), nil)
		var le *failure.LockError
		require.ErrorAs(t, err, &le)
	})
}

// markerRacer writes the run-once marker of a release for another execution
// just after the lock is taken: the replay race the atomic marker closes.
type markerRacer struct {
	*s3.Client
	release, execution string
	once               sync.Once
}

func (m *markerRacer) PutObject(ctx context.Context, in *s3.PutObjectInput, optFns ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	out, err := m.Client.PutObject(ctx, in, optFns...)
	if err == nil && aws.ToString(in.Key) == naming.LockKey(project, config) {
		m.once.Do(func() {
			body := fmt.Sprintf(`{"release_id":%q,"execution":%q}`, m.release, m.execution)
			_, err = m.Client.PutObject(ctx, &s3.PutObjectInput{
				Bucket: in.Bucket, Key: aws.String(naming.StartedKey(project, config, m.release)),
				Body: strings.NewReader(body), IfNoneMatch: aws.String("*"),
			})
		})
	}
	return out, err
}

func TestAcquireLosesTheMarkerRaceAndReleasesTheLock(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	racer := &markerRacer{Client: e.client, release: "r1", execution: "other"}
	locks := lock.New(racer, bucket, e.clk)

	err := locks.Acquire(ctx, project, config, holder("r1", "e1"))
	var bad *failure.BadReleaseError
	require.ErrorAs(t, err, &bad)
	assert.Contains(t, err.Error(), "release r1 already ran (execution other)")
	_, found, err := locks.Get(ctx, project, config)
	require.NoError(t, err)
	assert.False(t, found, "the lock taken for the replay is released again")
}

func TestRelease(t *testing.T) {
	tests := []struct {
		name     string
		setup    func(t *testing.T, e env)
		release  string
		wantErr  string
		wantHeld string
		// notHolder: the error wraps ErrNotHolder.
		notHolder bool
	}{
		{name: "absent lock", release: "r1"},
		{
			name: "by the holder",
			setup: func(t *testing.T, e env) {
				require.NoError(t, e.locks.Acquire(t.Context(), project, config, holder("r1", "e1")))
			},
			release: "r1",
		},
		{
			name: "by another release is refused",
			setup: func(t *testing.T, e env) {
				require.NoError(t, e.locks.Acquire(t.Context(), project, config, holder("r1", "e1")))
			},
			release:   "r2",
			wantErr:   "held by release r1 (execution e1) since 2030-05-06T07:08:09Z, not by r2",
			wantHeld:  "r1",
			notHolder: true,
		},
		{
			name:     "unreadable lock is not removed",
			setup:    func(t *testing.T, e env) { e.put(t, naming.LockKey(project, config), "garbage") },
			release:  "r1",
			wantErr:  "unreadable lock",
			wantHeld: "",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			ctx := t.Context()
			if tc.setup != nil {
				tc.setup(t, e)
			}
			err := e.locks.Release(ctx, project, config, tc.release)
			if tc.wantErr == "" {
				require.NoError(t, err)
				_, found, err := e.locks.Get(ctx, project, config)
				require.NoError(t, err)
				assert.False(t, found)
				return
			}
			var le *failure.LockError
			require.ErrorAs(t, err, &le)
			assert.Contains(t, err.Error(), tc.wantErr)
			assert.Equal(t, tc.notHolder, errors.Is(err, lock.ErrNotHolder))
			if tc.wantHeld != "" {
				h, found, err := e.locks.Get(ctx, project, config)
				require.NoError(t, err)
				require.True(t, found)
				assert.Equal(t, tc.wantHeld, h.ReleaseID)
			}
		})
	}
}

func TestGarbage(t *testing.T) {
	huge := `{"release_id":"r1","execution":"e1","pad":"` + strings.Repeat("x", limits.MaxStateObjectBytes) + `"}`
	tests := []struct {
		name string
		key  string
		body string
		want string
	}{
		{"lock not JSON", naming.LockKey(project, config), "not json at all", "unreadable lock: not JSON"},
		{"lock empty", naming.LockKey(project, config), "", "unreadable lock: empty object"},
		{"lock whitespace", naming.LockKey(project, config), " \n\t", "unreadable lock: empty object"},
		{"lock null", naming.LockKey(project, config), "null", "unreadable lock: no release_id"},
		{"lock array", naming.LockKey(project, config), "[1,2]", "unreadable lock: not JSON"},
		{"lock wrong types", naming.LockKey(project, config), `{"release_id":7}`, "unreadable lock: not JSON"},
		{"lock bad since", naming.LockKey(project, config), `{"release_id":"r","since":"yesterday"}`, "unreadable lock: not JSON"},
		{"lock trailing data", naming.LockKey(project, config), `{"release_id":"r"} {}`, "data after the object"},
		{"lock trailing bracket", naming.LockKey(project, config), `{"release_id":"r"}]`, "data after the object"},
		{"lock huge", naming.LockKey(project, config), huge, fmt.Sprintf("object is larger than %d bytes", limits.MaxStateObjectBytes)},
		{"marker not JSON", naming.StartedKey(project, config, "r1"), "{", "unreadable run-once marker: not JSON"},
		{"marker empty", naming.StartedKey(project, config, "r1"), "", "unreadable run-once marker: empty object"},
		{"marker without execution", naming.StartedKey(project, config, "r1"), `{"release_id":"r1"}`, "unreadable run-once marker: no execution"},
		{"marker huge", naming.StartedKey(project, config, "r1"), huge, "larger than"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			ctx := t.Context()
			e.put(t, tc.key, tc.body)

			err := e.locks.Acquire(ctx, project, config, holder("r1", "e1"))
			var le *failure.LockError
			require.ErrorAs(t, err, &le)
			assert.Contains(t, err.Error(), tc.want)
			assert.Equal(t, failure.NameLock, failure.NameOf(err))

			if tc.key == naming.LockKey(project, config) {
				_, found, err := e.locks.Get(ctx, project, config)
				require.ErrorAs(t, err, &le)
				assert.False(t, found)
			} else {
				_, started, err := e.locks.Started(ctx, project, config, "r1")
				require.ErrorAs(t, err, &le)
				assert.False(t, started)
			}
		})
	}
}

// failingLocks are locks in a bucket whose every request fails with one S3
// error, to check how failures other than "not found" are classified.
func failingLocks(t *testing.T, status int, code string) *lock.Locks {
	t.Helper()
	return lock.New(s3test.Failing(t, status, code), bucket, clock.NewVirtual(t0))
}

func TestFailuresFailClosed(t *testing.T) {
	tests := []struct {
		name   string
		status int
		code   string
		want   string
	}{
		{"throttled", http.StatusServiceUnavailable, "SlowDown", failure.NameRetryable},
		{"server error", http.StatusInternalServerError, "InternalError", failure.NameRetryable},
		{"access denied", http.StatusForbidden, "AccessDenied", failure.NameLock},
		{"missing bucket", http.StatusNotFound, "NoSuchBucket", failure.NameLock},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			locks := failingLocks(t, tc.status, tc.code)
			ctx := t.Context()

			_, found, err := locks.Get(ctx, project, config)
			assert.False(t, found)
			assert.Equal(t, tc.want, failure.NameOf(err), "get: %v", err)

			_, started, err := locks.Started(ctx, project, config, "r1")
			assert.False(t, started)
			assert.Equal(t, tc.want, failure.NameOf(err), "started: %v", err)

			assert.Equal(t, tc.want, failure.NameOf(locks.Acquire(ctx, project, config, holder("r1", "e1"))))
			assert.Equal(t, tc.want, failure.NameOf(locks.Release(ctx, project, config, "r1")))
		})
	}
}

// TestRunOnceMarkerExpires: the run-once marker is one of the release's
// objects, written with the tag the deployer bucket's lifecycle rule
// expires; the lock is not (a lock left by a dirty failure stays until a
// person removes it).
func TestRunOnceMarkerExpires(t *testing.T) {
	e := newEnv(t)
	rec := s3test.NewTaggingRecorder(e.client)
	require.NoError(t, lock.New(rec, bucket, e.clk).Acquire(t.Context(), project, config, holder("r-1", "exec-1")))
	assert.Equal(t, map[string]string{
		naming.LockKey(project, config):           "",
		naming.StartedKey(project, config, "r-1"): naming.ObjectTagExpire + "=" + naming.ObjectTagExpireRelease,
	}, rec.Tagging)
}

// TestConsume: the first execution that consumes a release is the only
// one that ever runs it; a retry of that execution is accepted; the marker
// names the verified caller; Acquire then takes the lock for that
// execution only.
func TestConsume(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	const caller = "arn:aws:sts::111111111111:assumed-role/Deployers/alice"
	require.NoError(t, e.locks.Consume(ctx, project, config, "r1", "x1", caller, "AROAEXAMPLE:alice"))
	require.NoError(t, e.locks.Consume(ctx, project, config, "r1", "x1", caller, "AROAEXAMPLE:alice"), "a retry")

	run, found, err := e.locks.RunOf(ctx, project, config, "r1")
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, lock.Run{ReleaseID: "r1", Execution: "x1", At: t0, CreatedBy: caller, CreatedByID: "AROAEXAMPLE:alice"}, run)

	err = e.locks.Consume(ctx, project, config, "r1", "x2", caller, "AROAEXAMPLE:alice")
	var bad *failure.BadReleaseError
	require.ErrorAs(t, err, &bad)
	assert.Contains(t, err.Error(), "already ran (execution x1)")

	err = e.locks.Acquire(ctx, project, config, holder("r1", "x2"))
	require.ErrorAs(t, err, &bad, "another execution never takes the lock for a consumed release")
	_, held, err := e.locks.Get(ctx, project, config)
	require.NoError(t, err)
	assert.False(t, held)
	require.NoError(t, e.locks.Acquire(ctx, project, config, holder("r1", "x1")))

	_, found, err = e.locks.RunOf(ctx, project, config, "never")
	require.NoError(t, err)
	assert.False(t, found)
}

// replacingClient replaces the lock with another release's just before
// the first DeleteObject goes out: the lock changes between Release's read
// and its delete.
type replacingClient struct {
	*s3.Client
	t    *testing.T
	done bool
}

func (c *replacingClient) DeleteObject(ctx context.Context, in *s3.DeleteObjectInput, optFns ...func(*s3.Options)) (*s3.DeleteObjectOutput, error) {
	if !c.done {
		c.done = true
		s3test.Put(c.t, c.Client, bucket, aws.ToString(in.Key), `{"release_id":"r2","execution":"e2","since":"2030-05-06T07:08:09Z"}`)
	}
	return c.Client.DeleteObject(ctx, in, optFns...)
}

// TestReleaseNeverRemovesAReplacedLock: a lock replaced between Release's
// read and its delete stays; the release is retryable, and the retry reads
// the new holder and refuses. The local server checks If-Match and deletes
// as one step, as S3 does: "If the ETag doesn't match, the delete operation
// fails with a 412 Precondition Failed response" ("How to perform
// conditional deletes", Amazon S3 User Guide,
// https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-deletes.html).
// Once released, the lock can be taken again: in the versioned deployer
// bucket the release left a delete marker, and "If the current version of
// the object is a delete marker, Amazon S3 behaves as if the object was
// deleted" (GetObject, https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObject.html).
func TestReleaseNeverRemovesAReplacedLock(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	require.NoError(t, e.locks.Acquire(ctx, project, config, holder("r1", "e1")))

	racing := lock.New(&replacingClient{Client: e.client, t: t}, bucket, e.clk)
	err := racing.Release(ctx, project, config, "r1")
	var retry *failure.RetryableError
	require.ErrorAs(t, err, &retry)
	assert.Contains(t, err.Error(), "the lock changed while being released")
	h, found, err := e.locks.Get(ctx, project, config)
	require.NoError(t, err)
	require.True(t, found, "the replaced lock is not removed")
	assert.Equal(t, "r2", h.ReleaseID)

	err = racing.Release(ctx, project, config, "r1")
	require.ErrorIs(t, err, lock.ErrNotHolder, "the retry reads the new holder")

	require.NoError(t, e.locks.Release(ctx, project, config, "r2"))
	require.NoError(t, e.locks.Acquire(ctx, project, config, holder("r3", "e3")), "a released lock is taken again")
	h, found, err = e.locks.Get(ctx, project, config)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, "r3", h.ReleaseID)
}
