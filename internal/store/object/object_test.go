package object_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/local/s3server/s3test"
	"github.com/ferryhq/ferry/internal/store/object"
)

const bucket = "ferry-deployer-123456789012-us-east-1"

var t0 = time.Date(2030, 5, 6, 7, 8, 9, 0, time.UTC)

type doc struct {
	Name string `json:"name"`
}

func newStore(t *testing.T, errs object.Errors) *object.Deletable {
	t.Helper()
	srv := s3test.Start(t, clock.NewVirtual(t0), bucket)
	return object.NewDeletable(srv.Client(), bucket, errs)
}

func TestPutGetDelete(t *testing.T) {
	s := newStore(t, object.Errors{})
	ctx := t.Context()

	_, found, err := s.Get(ctx, "k", 100)
	require.NoError(t, err)
	assert.False(t, found, "absent")

	wrote, err := s.PutJSON(ctx, "k", doc{Name: "a"}, object.Write{Once: true})
	require.NoError(t, err)
	assert.True(t, wrote)
	wrote, err = s.PutJSON(ctx, "k", doc{Name: "b"}, object.Write{Once: true})
	require.NoError(t, err, "a create-only write that loses is no error")
	assert.False(t, wrote)

	var d doc
	obj, found, err := s.GetJSON(ctx, "k", 100, "unreadable doc", &d)
	require.NoError(t, err)
	assert.True(t, found)
	assert.Equal(t, doc{Name: "a"}, d, "the first write won")
	assert.NotEmpty(t, obj.ETag)
	assert.Equal(t, t0, obj.LastModified)

	_, err = s.Put(ctx, "k", []byte(`{"name":"c"}`), object.Write{})
	require.NoError(t, err, "an unconditional write replaces")
	deleted, err := s.Delete(ctx, "delete", "k", obj.ETag)
	require.NoError(t, err)
	assert.False(t, deleted, "If-Match on an ETag that changed deletes nothing")

	obj, _, err = s.Get(ctx, "k", 100)
	require.NoError(t, err)
	assert.Equal(t, `{"name":"c"}`, string(obj.Body))
	deleted, err = s.Delete(ctx, "delete", "k", obj.ETag)
	require.NoError(t, err)
	assert.True(t, deleted)
	deleted, err = s.Delete(ctx, "delete", "k", "")
	require.NoError(t, err, "deleting what is gone")
	assert.True(t, deleted)
}

func TestGetRefusesWhatItCannotRead(t *testing.T) {
	tests := []struct {
		name, body, want string
		tooLarge         bool
	}{
		{"empty", "", "unreadable doc: empty object", false},
		{"blank", " \n", "unreadable doc: empty object", false},
		{"not JSON", "{", "unreadable doc: not JSON", false},
		{"data after the object", `{"name":"a"} {}`, "unreadable doc: not JSON: data after the object", false},
		{"too large", `{"name":"` + strings.Repeat("x", 100) + `"}`, "read k: object is larger than 64 bytes", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t, object.Errors{Prefix: "thing: ", Refuse: failure.AsLock})
			ctx := t.Context()
			_, err := s.Put(ctx, "k", []byte(tc.body), object.Write{})
			require.NoError(t, err)

			var d doc
			obj, found, err := s.GetJSON(ctx, "k", 64, "unreadable doc", &d)
			require.Error(t, err, "an unreadable object is never absent")
			assert.False(t, found)
			assert.Equal(t, failure.NameLock, failure.NameOf(err), "named by the store's Errors")
			assert.Contains(t, err.Error(), "lock: thing: read k: ")
			assert.Contains(t, err.Error(), tc.want)
			var big *object.TooLargeError
			assert.Equal(t, tc.tooLarge, errors.As(err, &big))
			if tc.tooLarge {
				assert.Equal(t, 64, big.Limit)
				assert.Equal(t, t0, obj.LastModified, "a too large object still says when it was written")
			}
		})
	}
}

func TestFailuresAreNamed(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		code      string
		errs      object.Errors
		wantName  string
		wantStart string
	}{
		{"throttled", http.StatusServiceUnavailable, "SlowDown", object.Errors{Prefix: "halt: "}, failure.NameRetryable, "transient: halt: "},
		{"server error", http.StatusInternalServerError, "InternalError", object.Errors{Refuse: failure.AsLock}, failure.NameRetryable, "transient: "},
		{"access denied, unnamed", http.StatusForbidden, "AccessDenied", object.Errors{Prefix: "ledger: "}, failure.NameInternal, "ledger: "},
		{"access denied, a lock error", http.StatusForbidden, "AccessDenied", object.Errors{Refuse: failure.AsLock}, failure.NameLock, "lock: "},
		{"missing bucket is not absent", http.StatusNotFound, "NoSuchBucket", object.Errors{}, failure.NameInternal, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := object.NewDeletable(s3test.Failing(t, tc.status, tc.code), bucket, tc.errs)
			ctx := t.Context()
			_, found, errGet := s.Get(ctx, "k", 100)
			assert.False(t, found)
			_, errPut := s.Put(ctx, "k", []byte("{}"), object.Write{Once: true})
			_, errDelete := s.Delete(ctx, "delete", "k", "")
			for i, err := range []error{errGet, errPut, errDelete} {
				require.Error(t, err, "call %d", i)
				assert.Equal(t, tc.wantName, failure.NameOf(err), "call %d: %v", i, err)
				assert.True(t, strings.HasPrefix(err.Error(), tc.wantStart), "call %d: %v", i, err)
			}
		})
	}
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name, body string
		want       doc
		wantErr    string
	}{
		{"object", `{"name":"a"}`, doc{Name: "a"}, ""},
		{"trailing space", "{\"name\":\"a\"}\n", doc{Name: "a"}, ""},
		{"unknown fields are ignored", `{"name":"a","more":1}`, doc{Name: "a"}, ""},
		{"empty", "", doc{}, "empty object"},
		{"not JSON", "nope", doc{}, "not JSON"},
		{"two values", `{} {}`, doc{}, "not JSON: data after the object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got doc
			err := object.Decode([]byte(tc.body), &got)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}
