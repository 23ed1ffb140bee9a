package halt

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/store/object"
)

// S3 is the S3 API the halt marker calls.
type S3 interface {
	PutObject(ctx context.Context, params *s3.PutObjectInput, optFns ...func(*s3.Options)) (*s3.PutObjectOutput, error)
	GetObject(ctx context.Context, params *s3.GetObjectInput, optFns ...func(*s3.Options)) (*s3.GetObjectOutput, error)
	DeleteObject(ctx context.Context, params *s3.DeleteObjectInput, optFns ...func(*s3.Options)) (*s3.DeleteObjectOutput, error)
}

var _ S3 = (*s3.Client)(nil)

// Marker is the body of a halt marker: who asked, why, and when by their
// clock. Freshness is judged by S3's LastModified, not by At.
type Marker struct {
	By     string    `json:"by"`
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
}

// UnreadableReason is the Reason of the marker Check returns for a fresh
// marker whose body cannot be read.
const UnreadableReason = "unreadable halt marker"

// ErrUnreadable is in the chain of the error Get returns for a marker that
// exists but whose body is not a halt marker (empty, not JSON, too large).
var ErrUnreadable = errors.New("unreadable halt marker")

// Halts reads and writes the halt markers of one deployer bucket. It is safe
// for concurrent use.
type Halts struct {
	store *object.Deletable
}

// New returns the halt markers of bucket.
func New(client S3, bucket string) *Halts {
	return &Halts{store: object.NewDeletable(client, bucket, object.Errors{Prefix: "halt: "})}
}

// Put writes the halt marker of project/config, replacing any older one
// (writing again refreshes its LastModified, so halting twice is safe).
// Transient failures are *failure.RetryableError.
func (h *Halts) Put(ctx context.Context, project, config string, m Marker) error {
	_, err := h.store.PutJSON(ctx, naming.HaltKey(project, config), m, object.Write{})
	return err
}

// Get reads the halt marker of project/config and when S3 says it was
// written (LastModified, 1-second granularity). found is false only when
// the marker does not exist. A marker that exists but cannot be read returns
// found=true, its written time and an error wrapping ErrUnreadable; any
// other failure is returned with found=false (transient ones as
// *failure.RetryableError).
func (h *Halts) Get(ctx context.Context, project, config string) (m Marker, written time.Time, found bool, err error) {
	key := naming.HaltKey(project, config)
	obj, found, err := h.store.Get(ctx, key, limits.MaxStateObjectBytes)
	var tooLarge *object.TooLargeError
	switch {
	case errors.As(err, &tooLarge):
		return Marker{}, obj.LastModified, true, fmt.Errorf("halt: read %s: %w: %w", key, ErrUnreadable, tooLarge)
	case err != nil || !found:
		return Marker{}, time.Time{}, false, err
	}
	if err := object.Decode(obj.Body, &m); err != nil {
		return Marker{}, obj.LastModified, true, fmt.Errorf("halt: read %s: %w: %w", key, ErrUnreadable, err)
	}
	return m, obj.LastModified, true, nil
}

// Check returns the halt marker of project/config if S3 says it was written
// at or after since (the execution's start), and nil if there is none or it
// is older. LastModified has 1-second granularity, so the comparison is
// written >= since.Truncate(time.Second): a marker written in the same
// second as the start counts (fail closed).
//
// A fresh marker whose body cannot be read is still a halt: Check returns a
// Marker with Reason UnreadableReason and At the written time. A stale
// unreadable marker is ignored like any stale marker. Any failure other
// than "not found" is returned as an error (fail closed): the caller must
// not treat it as "no halt". A marker whose LastModified S3 did not report
// counts as fresh.
func (h *Halts) Check(ctx context.Context, project, config string, since time.Time) (*Marker, error) {
	m, written, found, err := h.Get(ctx, project, config)
	switch {
	case !found && err == nil:
		return nil, nil
	case err != nil && !errors.Is(err, ErrUnreadable):
		return nil, err
	}
	// A marker without a LastModified cannot be proven old: it counts.
	if !written.IsZero() && written.Before(since.Truncate(time.Second)) {
		return nil, nil
	}
	if err != nil {
		return &Marker{Reason: UnreadableReason, At: written}, nil
	}
	return &m, nil
}

// Clear removes the halt marker of project/config. A marker that does not
// exist is not an error. Transient failures are *failure.RetryableError.
func (h *Halts) Clear(ctx context.Context, project, config string) error {
	_, err := h.store.Delete(ctx, "delete", naming.HaltKey(project, config), "")
	return err
}
