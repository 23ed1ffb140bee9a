package halt_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/local/s3server/s3test"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/store/halt"
)

const (
	bucket  = "ferry-deployer-123456789012-us-east-1"
	project = "coinbase-deploy-test"
	config  = "development"
)

// t0 is mid-second on purpose: S3 keeps LastModified to the second.
var t0 = time.Date(2030, 5, 6, 7, 8, 9, 500_000_000, time.UTC)

type env struct {
	client *s3.Client
	clk    *clock.Virtual
	halts  *halt.Halts
}

func newEnv(t *testing.T) env {
	t.Helper()
	clk := clock.NewVirtual(t0)
	srv := s3test.StartVersioned(t, clk, bucket)
	return env{client: srv.Client(), clk: clk, halts: halt.New(srv.Client(), bucket)}
}

func (e env) putRaw(t *testing.T, body string) {
	t.Helper()
	s3test.Put(t, e.client, bucket, naming.HaltKey(project, config), body)
}

func TestPutGetClear(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	m := halt.Marker{By: "arn:aws:iam::123456789012:user/alice", Reason: "bad build", At: t0}

	_, _, found, err := e.halts.Get(ctx, project, config)
	require.NoError(t, err)
	assert.False(t, found)

	require.NoError(t, e.halts.Put(ctx, project, config, m))
	got, written, found, err := e.halts.Get(ctx, project, config)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, m, got)
	assert.Equal(t, t0.Truncate(time.Second), written.UTC())

	require.NoError(t, e.halts.Clear(ctx, project, config))
	_, _, found, err = e.halts.Get(ctx, project, config)
	require.NoError(t, err)
	assert.False(t, found)
	require.NoError(t, e.halts.Clear(ctx, project, config), "clearing an absent marker")
}

func TestCheckFreshness(t *testing.T) {
	m := halt.Marker{By: "alice", Reason: "stop"}
	tests := []struct {
		name string
		// writtenAt is when the marker is written, relative to the
		// execution's start (t0); nil means no marker.
		writtenAt *time.Duration
		body      string
		want      *halt.Marker
	}{
		{name: "no marker"},
		{name: "older than the execution", writtenAt: dur(-time.Hour), want: nil},
		{name: "a second before the start", writtenAt: dur(-time.Second), want: nil},
		{name: "same second, earlier, counts (fail closed)", writtenAt: dur(-400 * time.Millisecond), want: &m},
		{name: "at the start", writtenAt: dur(0), want: &m},
		{name: "after the start", writtenAt: dur(time.Minute), want: &m},
		{name: "old unreadable marker ignored", writtenAt: dur(-time.Hour), body: "garbage"},
		{name: "fresh unreadable marker is a halt", writtenAt: dur(time.Minute), body: "garbage",
			want: &halt.Marker{Reason: halt.UnreadableReason, At: t0.Add(time.Minute).Truncate(time.Second)}},
		{name: "fresh empty marker is a halt", writtenAt: dur(time.Minute), body: "\n",
			want: &halt.Marker{Reason: halt.UnreadableReason, At: t0.Add(time.Minute).Truncate(time.Second)}},
		{name: "fresh huge marker is a halt", writtenAt: dur(time.Minute), body: strings.Repeat("{", limits.MaxStateObjectBytes+10),
			want: &halt.Marker{Reason: halt.UnreadableReason, At: t0.Add(time.Minute).Truncate(time.Second)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := clock.NewVirtual(t0.Add(-2 * time.Hour))
			srv := s3test.StartVersioned(t, clk, bucket)
			e := env{client: srv.Client(), clk: clk, halts: halt.New(srv.Client(), bucket)}
			ctx := t.Context()

			if tc.writtenAt != nil {
				clk.Set(t0.Add(*tc.writtenAt))
				if tc.body != "" {
					e.putRaw(t, tc.body)
				} else {
					require.NoError(t, e.halts.Put(ctx, project, config, m))
				}
			}
			clk.Set(t0.Add(2 * time.Hour))

			got, err := e.halts.Check(ctx, project, config, t0)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func dur(d time.Duration) *time.Duration { return &d }

func TestGetUnreadable(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"not JSON", "halt!", "not JSON"},
		{"empty", "", "empty object"},
		{"wrong type", `{"reason":42}`, "not JSON"},
		{"trailing data", `{"reason":"x"}]`, "data after the object"},
		{"huge", `{"reason":"` + strings.Repeat("x", limits.MaxStateObjectBytes) + `"}`, "larger than"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.putRaw(t, tc.body)
			_, written, found, err := e.halts.Get(t.Context(), project, config)
			require.ErrorIs(t, err, halt.ErrUnreadable)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), naming.HaltKey(project, config))
			assert.True(t, found)
			assert.Equal(t, t0.Truncate(time.Second), written.UTC())
		})
	}
}

func TestFailuresFailClosed(t *testing.T) {
	tests := []struct {
		name          string
		status        int
		code          string
		wantRetryable bool
	}{
		{"throttled", http.StatusServiceUnavailable, "SlowDown", true},
		{"server error", http.StatusInternalServerError, "InternalError", true},
		{"access denied", http.StatusForbidden, "AccessDenied", false},
		{"missing bucket", http.StatusNotFound, "NoSuchBucket", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := halt.New(s3test.Failing(t, tc.status, tc.code), bucket)
			ctx := t.Context()

			got, err := h.Check(ctx, project, config, t0)
			require.Error(t, err, "a failed read is never \"no halt\"")
			assert.Nil(t, got)
			assert.Equal(t, tc.wantRetryable, failure.IsRetryable(err), "%v", err)

			for _, err := range []error{
				h.Put(ctx, project, config, halt.Marker{Reason: "x"}),
				h.Clear(ctx, project, config),
			} {
				require.Error(t, err)
				assert.Equal(t, tc.wantRetryable, failure.IsRetryable(err), "%v", err)
			}
		})
	}
}
