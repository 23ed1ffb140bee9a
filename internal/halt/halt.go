package halt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/naming"
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
	client S3
	bucket string
}

// New returns the halt markers of bucket.
func New(client S3, bucket string) *Halts {
	return &Halts{client: client, bucket: bucket}
}

// Put writes the halt marker of project/config, replacing any older one
// (writing again refreshes its LastModified, so halting twice is safe).
// Transient failures are *failure.RetryableError.
func (h *Halts) Put(ctx context.Context, project, config string, m Marker) error {
	key := naming.HaltKey(project, config)
	body, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("halt: encode %s: %w", key, err)
	}
	_, err = h.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket:        aws.String(h.bucket),
		Key:           aws.String(key),
		Body:          bytes.NewReader(body),
		ContentLength: aws.Int64(int64(len(body))),
		ContentType:   aws.String("application/json"),
	})
	if err != nil {
		return classify("write "+key, err)
	}
	return nil
}

// Get reads the halt marker of project/config and when S3 says it was
// written (LastModified, 1-second granularity). found is false only when
// the marker does not exist. A marker that exists but cannot be read returns
// found=true, its written time and an error wrapping ErrUnreadable; any
// other failure is returned with found=false (transient ones as
// *failure.RetryableError).
func (h *Halts) Get(ctx context.Context, project, config string) (m Marker, written time.Time, found bool, err error) {
	key := naming.HaltKey(project, config)
	out, err := h.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(h.bucket), Key: aws.String(key)})
	if err != nil {
		if cloud.IsNotFound(err) {
			return Marker{}, time.Time{}, false, nil
		}
		return Marker{}, time.Time{}, false, classify("read "+key, err)
	}
	defer out.Body.Close()
	written = aws.ToTime(out.LastModified)
	body, err := io.ReadAll(io.LimitReader(out.Body, limits.MaxStateObjectBytes+1))
	if err != nil {
		return Marker{}, time.Time{}, false, classify("read "+key, err)
	}
	if err := decode(body, &m); err != nil {
		return Marker{}, written, true, fmt.Errorf("halt: read %s: %w: %w", key, ErrUnreadable, err)
	}
	return m, written, true, nil
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
	key := naming.HaltKey(project, config)
	_, err := h.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(h.bucket), Key: aws.String(key)})
	if err != nil && !cloud.IsNotFound(err) {
		return classify("delete "+key, err)
	}
	return nil
}

func decode(body []byte, m *Marker) error {
	if len(body) > limits.MaxStateObjectBytes {
		return fmt.Errorf("larger than %d bytes", limits.MaxStateObjectBytes)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return errors.New("empty object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(m); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("not JSON: data after the object")
	}
	return nil
}

func classify(op string, err error) error {
	if cloud.IsTransient(err) {
		return &failure.RetryableError{Op: "halt: " + op, Err: err}
	}
	return fmt.Errorf("halt: %s: %w", op, err)
}
