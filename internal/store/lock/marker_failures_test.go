package lock_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/local/s3server/s3test"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/store/lock"
)

// TestConsumeNeedsBoth: a run-once marker names a release and an
// execution: either missing is a LockError, and nothing is written.
func TestConsumeNeedsBoth(t *testing.T) {
	for _, tc := range []struct{ release, execution string }{{"", "x1"}, {"r1", ""}} {
		e := newEnv(t)
		err := e.locks.Consume(t.Context(), project, config, tc.release, tc.execution, "", "")
		var le *failure.LockError
		require.ErrorAs(t, err, &le, "%+v", tc)
		_, found, err := e.locks.RunOf(t.Context(), project, config, tc.release)
		require.NoError(t, err)
		assert.False(t, found, "no marker written")
	}
}

// TestMarkerWriteRefused: the run-once marker's write is refused
// (AccessDenied, a 403: not transient): Consume and Acquire fail with it,
// not retryable, never reading an absent marker as a race to retry; the
// lock Acquire took stays held (the state machine's ReleaseLock releases
// it: only a marker naming another execution makes Acquire release it).
func TestMarkerWriteRefused(t *testing.T) {
	e := newEnv(t)
	deny := s3test.NewDenying(t, e.client)
	deny.Deny = func(op, key string) bool { return op == "PutObject" && key == naming.StartedKey(project, config, "r1") }
	locks := lock.New(deny, bucket, e.clk)

	err := locks.Consume(t.Context(), project, config, "r1", "x1", "", "")
	require.Error(t, err)
	assert.False(t, failure.IsRetryable(err), "%v", err)

	err = locks.Acquire(t.Context(), project, config, holder("r1", "x1"))
	require.Error(t, err)
	assert.False(t, failure.IsRetryable(err), "%v", err)
	h, held, err := locks.Get(t.Context(), project, config)
	require.NoError(t, err)
	require.True(t, held, "the lock stays")
	assert.Equal(t, "r1", h.ReleaseID)
}

// releaseDenied is markerRacer whose DeleteObject is refused.
type releaseDenied struct {
	*markerRacer
	denied *s3.Client
}

func (r releaseDenied) DeleteObject(ctx context.Context, in *s3.DeleteObjectInput, optFns ...func(*s3.Options)) (*s3.DeleteObjectOutput, error) {
	return r.denied.DeleteObject(ctx, in, optFns...)
}

// TestAcquireLosesTheMarkerRaceAndCannotRelease: the marker race is lost
// (see TestAcquireLosesTheMarkerRaceAndReleasesTheLock) and releasing the
// lock taken for it fails: the error says both, so the lock left is
// known.
func TestAcquireLosesTheMarkerRaceAndCannotRelease(t *testing.T) {
	e := newEnv(t)
	racer := releaseDenied{markerRacer: &markerRacer{Client: e.client, release: "r1", execution: "other"},
		denied: s3test.Failing(t, http.StatusForbidden, "AccessDenied")}
	err := lock.New(racer, bucket, e.clk).Acquire(t.Context(), project, config, holder("r1", "e1"))
	var bad *failure.BadReleaseError
	require.ErrorAs(t, err, &bad)
	assert.Contains(t, err.Error(), "release r1 already ran (execution other)")
	assert.Contains(t, err.Error(), "AccessDenied", "the failed release is named")
}
