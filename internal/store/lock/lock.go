package lock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/store/object"
)

// S3 is the S3 API the lock calls.
type S3 interface {
	PutObject(ctx context.Context, params *s3.PutObjectInput, optFns ...func(*s3.Options)) (*s3.PutObjectOutput, error)
	GetObject(ctx context.Context, params *s3.GetObjectInput, optFns ...func(*s3.Options)) (*s3.GetObjectOutput, error)
	DeleteObject(ctx context.Context, params *s3.DeleteObjectInput, optFns ...func(*s3.Options)) (*s3.DeleteObjectOutput, error)
}

var _ S3 = (*s3.Client)(nil)

// ErrNotHolder is wrapped by the *failure.LockError Release returns when
// another release holds the lock (errors.Is finds it).
var ErrNotHolder = errors.New("not the holder")

// Holder is the body of a lock: which release holds it, the execution that
// took it and since when.
type Holder struct {
	ReleaseID string    `json:"release_id"`
	Execution string    `json:"execution"`
	Since     time.Time `json:"since"`
}

// Run is the body of a release's run-once marker: the execution that
// consumed the release, when, and who asked for it as the deployer
// verified it.
type Run struct {
	ReleaseID string    `json:"release_id"`
	Execution string    `json:"execution"`
	At        time.Time `json:"at"`
	// CreatedBy is the caller the release's identity proof names (its
	// full IAM ARN) and CreatedByID its unique id (GetCallerIdentity's
	// UserId: AIDA... for a user, AROA...:SESSION for a role session),
	// which no name the caller chose can imitate; empty when the deployer
	// verifies no proofs.
	CreatedBy   string `json:"created_by,omitempty"`
	CreatedByID string `json:"created_by_id,omitempty"`
}

// Locks takes, reads and releases the project-config locks and run-once
// markers of one deployer bucket. It is safe for concurrent use.
type Locks struct {
	store *object.Deletable
	clk   clock.Clock
}

// New returns the locks of bucket. clk stamps Holder.Since when the caller
// leaves it zero, and the run-once marker.
func New(client S3, bucket string, clk clock.Clock) *Locks {
	return &Locks{store: object.NewDeletable(client, bucket, object.Errors{Refuse: failure.AsLock}), clk: clk}
}

// Acquire takes the lock of project/config for h.ReleaseID with one
// PutObject If-None-Match: *, then writes the release's run-once marker the
// same way unless h.Execution consumed the release already (Consume). A
// zero h.Since is set from the clock.
//
// It is idempotent for one execution: if the lock is already held by
// h.ReleaseID under h.Execution, and the marker names h.Execution, Acquire
// succeeds without writing (a retried Lambda).
//
// Errors:
//   - the lock is held by another release: *failure.LockExistsError naming
//     the holder, its execution and since when;
//   - the release already ran or runs under another execution (the marker,
//     or the lock, names a different execution): *failure.BadReleaseError;
//     a lock this call took is released again first;
//   - the lock or marker object is unreadable: *failure.LockError;
//   - throttling, a 5xx or a broken connection: *failure.RetryableError
//     (running Acquire again is safe).
func (l *Locks) Acquire(ctx context.Context, project, config string, h Holder) error {
	if h.ReleaseID == "" || h.Execution == "" {
		return &failure.LockError{Op: "acquire", Err: errors.New("holder needs a release id and an execution")}
	}
	if h.Since.IsZero() {
		h.Since = l.clk.Now().UTC()
	}

	// Refuse a replay before touching the lock, so a replayed input never
	// holds the lock, even briefly, against a legitimate deploy.
	exec, consumed, err := l.Started(ctx, project, config, h.ReleaseID)
	switch {
	case err != nil:
		return err
	case consumed && exec != h.Execution:
		return alreadyRan(h.ReleaseID, exec)
	}

	took, err := l.take(ctx, project, config, h)
	if err != nil || consumed {
		return err
	}
	if err := l.markStarted(ctx, project, config, h, "", ""); err != nil {
		var bad *failure.BadReleaseError
		if took && errors.As(err, &bad) {
			if rerr := l.Release(ctx, project, config, h.ReleaseID); rerr != nil {
				return errors.Join(err, rerr)
			}
		}
		return err
	}
	return nil
}

// create writes v as JSON at key unless an object is there already
// (If-None-Match: *): wrote is false, with no error, when one is. op names
// the write in errors ("take", "write"); tagging, when not empty, is the
// object's tags (x-amz-tagging).
func (l *Locks) create(ctx context.Context, op, key, tagging string, v any) (wrote bool, err error) {
	return l.store.PutJSON(ctx, key, v, object.Write{Op: op, Once: true, Tagging: tagging})
}

// take writes the lock; took says whether this call wrote it (false when
// h's release and execution already held it).
func (l *Locks) take(ctx context.Context, project, config string, h Holder) (took bool, err error) {
	key := naming.LockKey(project, config)
	if took, err := l.create(ctx, "take", key, "", h); took || err != nil {
		return took, err
	}
	cur, found, err := l.Get(ctx, project, config)
	if err != nil {
		return false, err
	}
	switch {
	case !found:
		// The holder released it between our write and our read: the
		// state moved under us, try again.
		return false, &failure.RetryableError{Op: "take " + key, Err: errors.New("the lock changed while being taken")}
	case cur.ReleaseID != h.ReleaseID:
		return false, &failure.LockExistsError{
			Project: project, Config: config,
			Holder: cur.ReleaseID, Execution: cur.Execution, Since: cur.Since,
		}
	case cur.Execution != h.Execution:
		return false, alreadyRan(h.ReleaseID, cur.Execution)
	}
	return false, nil
}

// Consume writes the run-once marker of releaseID for execution (and the
// verified caller's ARN createdBy and unique id createdByID, "" for none)
// with one
// PutObject If-None-Match: *, or accepts a marker that names execution
// already: the first execution that consumes a release is the only one
// that ever runs it, whatever its outcome. It is idempotent for one
// execution (a retried Lambda).
//
// Errors: a marker naming another execution is a *failure.BadReleaseError
// (the release already ran); an unreadable marker a *failure.LockError;
// throttling, a 5xx or a broken connection a *failure.RetryableError.
func (l *Locks) Consume(ctx context.Context, project, config, releaseID, execution, createdBy, createdByID string) error {
	if releaseID == "" || execution == "" {
		return &failure.LockError{Op: "consume", Err: errors.New("a release id and an execution are required")}
	}
	return l.markStarted(ctx, project, config, Holder{ReleaseID: releaseID, Execution: execution}, createdBy, createdByID)
}

// markStarted writes the run-once marker, or accepts one that names h's
// execution.
func (l *Locks) markStarted(ctx context.Context, project, config string, h Holder, createdBy, createdByID string) error {
	key := naming.StartedKey(project, config, h.ReleaseID)
	m := Run{ReleaseID: h.ReleaseID, Execution: h.Execution, At: l.clk.Now().UTC(), CreatedBy: createdBy, CreatedByID: createdByID}
	// The marker is one of the release's objects: the bucket's lifecycle
	// rule expires it with them (a replay that late fails Validate's
	// created_at window anyway).
	if wrote, err := l.create(ctx, "write", key, naming.ReleaseObjectTagging(), m); wrote || err != nil {
		return err
	}
	exec, ok, err := l.Started(ctx, project, config, h.ReleaseID)
	switch {
	case err != nil:
		return err
	case !ok:
		return &failure.RetryableError{Op: "write " + key, Err: errors.New("the run-once marker changed while being written")}
	case exec != h.Execution:
		return alreadyRan(h.ReleaseID, exec)
	}
	return nil
}

// Release removes the lock of project/config if releaseID holds it. It reads
// the lock, compares the holder, then deletes it with If-Match on the ETag
// it read. S3 checks the condition and deletes as one step (AWS S3 does, and
// so does the local server), so a lock replaced in between is never
// deleted: the delete fails with 412 PreconditionFailed, returned as a
// *failure.RetryableError whose retry reads the new holder.
//
// A lock that does not exist is not an error. A lock held by another
// release is a *failure.LockError naming the holder; an unreadable lock is a
// *failure.LockError; transient failures are *failure.RetryableError.
func (l *Locks) Release(ctx context.Context, project, config, releaseID string) error {
	key := naming.LockKey(project, config)
	cur, etag, found, err := l.get(ctx, project, config)
	if err != nil || !found {
		return err
	}
	if cur.ReleaseID != releaseID {
		return &failure.LockError{
			Op:  "release " + key,
			Err: fmt.Errorf("%w: held by release %s (execution %s) since %s, not by %s", ErrNotHolder, cur.ReleaseID, cur.Execution, cur.Since.UTC().Format(time.RFC3339), releaseID),
		}
	}
	deleted, err := l.store.Delete(ctx, "release", key, etag)
	if err == nil && !deleted {
		return &failure.RetryableError{Op: "release " + key, Err: errors.New("the lock changed while being released")}
	}
	return err
}

// Get reads the lock of project/config. found is false only when the lock
// object does not exist. An unreadable lock (not JSON, empty, too large, no
// release id) is a *failure.LockError; a transient failure a
// *failure.RetryableError; any other read failure a *failure.LockError.
func (l *Locks) Get(ctx context.Context, project, config string) (h Holder, found bool, err error) {
	h, _, found, err = l.get(ctx, project, config)
	return h, found, err
}

func (l *Locks) get(ctx context.Context, project, config string) (h Holder, etag string, found bool, err error) {
	key := naming.LockKey(project, config)
	obj, found, err := l.store.GetJSON(ctx, key, limits.MaxStateObjectBytes, "unreadable lock", &h)
	if err != nil || !found {
		return Holder{}, "", false, err
	}
	if h.ReleaseID == "" {
		return Holder{}, "", false, &failure.LockError{Op: "read " + key, Err: errors.New("unreadable lock: no release_id")}
	}
	return h, obj.ETag, true, nil
}

// Started reports whether the run-once marker of releaseID exists and which
// execution wrote it. started is false only when the marker does not exist;
// an unreadable marker is a *failure.LockError.
func (l *Locks) Started(ctx context.Context, project, config, releaseID string) (execution string, ok bool, err error) {
	m, ok, err := l.RunOf(ctx, project, config, releaseID)
	return m.Execution, ok, err
}

// RunOf reads the run-once marker of releaseID. found is false only when
// the marker does not exist; an unreadable marker is a *failure.LockError.
func (l *Locks) RunOf(ctx context.Context, project, config, releaseID string) (m Run, found bool, err error) {
	key := naming.StartedKey(project, config, releaseID)
	_, found, err = l.store.GetJSON(ctx, key, limits.MaxStateObjectBytes, "unreadable run-once marker", &m)
	if err != nil || !found {
		return Run{}, false, err
	}
	if m.Execution == "" {
		return Run{}, false, &failure.LockError{Op: "read " + key, Err: errors.New("unreadable run-once marker: no execution")}
	}
	return m, true, nil
}

func alreadyRan(releaseID, execution string) error {
	return failure.BadRelease(fmt.Sprintf("release_id: release %s already ran (execution %s)", releaseID, execution))
}
