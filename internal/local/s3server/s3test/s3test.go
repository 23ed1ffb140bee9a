package s3test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/local/s3server"
)

// Start starts an in-memory S3 server on clk (nil means the system clock)
// with buckets created, and closes it when t ends; a failure to start or to
// close fails t. Its Client talks to it.
func Start(t testing.TB, clk clock.Clock, buckets ...string) *s3server.Server {
	t.Helper()
	srv, err := s3server.Start(s3server.Options{Clock: clk, Buckets: buckets})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	return srv
}

// StartVersioned is Start with every bucket's versioning enabled, as the
// deployer bucket's is in AWS: tests of the deployer bucket's objects
// (lock, halt marker, ledger, assets) use it.
func StartVersioned(t testing.TB, clk clock.Clock, buckets ...string) *s3server.Server {
	t.Helper()
	srv, err := s3server.Start(s3server.Options{Clock: clk, Versioned: buckets})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	return srv
}

// Put writes body at key in bucket as it is, with no condition, bypassing
// the code under test (a test's setup of a bucket's contents). A failure
// fails t.
func Put(t testing.TB, c *s3.Client, bucket, key, body string) {
	t.Helper()
	_, err := c.PutObject(context.Background(), &s3.PutObjectInput{
		Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader(body),
	})
	require.NoError(t, err)
}

// Failing returns a client of a server that answers every request with
// status and the S3 error code (the error document is left out of answers
// to HEAD, as S3 does), closed when t ends. The client does not retry, so
// nothing sleeps.
func Failing(t testing.TB, status int, code string) *s3.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(status)
		if r.Method != http.MethodHead {
			fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>injected</Message></Error>`, code)
		}
	}))
	t.Cleanup(srv.Close)
	return s3server.NewClient(srv.URL, func(o *s3.Options) { o.RetryMaxAttempts = 1 })
}

// TaggingRecorder passes every call to the S3 client it wraps and records
// the Tagging of each PutObject by key (the local S3 server does not keep
// tags sent with PutObject). It is not safe for concurrent use.
type TaggingRecorder struct {
	*s3.Client
	// Tagging maps each key written to the Tagging it was written with.
	Tagging map[string]string
}

// NewTaggingRecorder wraps c.
func NewTaggingRecorder(c *s3.Client) *TaggingRecorder {
	return &TaggingRecorder{Client: c, Tagging: map[string]string{}}
}

// PutObject records in.Tagging, then writes through the wrapped client.
func (r *TaggingRecorder) PutObject(ctx context.Context, in *s3.PutObjectInput, optFns ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	r.Tagging[aws.ToString(in.Key)] = aws.ToString(in.Tagging)
	return r.Client.PutObject(ctx, in, optFns...)
}

// Denying passes every call to the S3 client it wraps, except the ones
// Deny selects: those are answered 403 AccessDenied with S3's error
// document, as an IAM or bucket policy refusal is. It is not safe for
// concurrent use while Deny or Observe changes.
type Denying struct {
	*s3.Client
	// Deny selects the calls to refuse by operation ("GetObject") and key
	// (a listing's prefix); nil refuses none.
	Deny func(op, key string) bool
	// Observe, when set, sees every call, denied or not, with its
	// context (a test spends its modelled time there: package fanout).
	Observe func(ctx context.Context, op, key string)
	denied  *s3.Client
}

// NewDenying wraps c; its refusals come from a server closed when t ends.
func NewDenying(t testing.TB, c *s3.Client) *Denying {
	t.Helper()
	return &Denying{Client: c, denied: Failing(t, http.StatusForbidden, "AccessDenied")}
}

// to is the client that answers op on key.
func (d *Denying) to(ctx context.Context, op string, key *string) *s3.Client {
	if d.Observe != nil {
		d.Observe(ctx, op, aws.ToString(key))
	}
	if d.Deny != nil && d.Deny(op, aws.ToString(key)) {
		return d.denied
	}
	return d.Client
}

// PutObject writes through the wrapped client unless denied.
func (d *Denying) PutObject(ctx context.Context, in *s3.PutObjectInput, optFns ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	return d.to(ctx, "PutObject", in.Key).PutObject(ctx, in, optFns...)
}

// GetObject reads through the wrapped client unless denied.
func (d *Denying) GetObject(ctx context.Context, in *s3.GetObjectInput, optFns ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	return d.to(ctx, "GetObject", in.Key).GetObject(ctx, in, optFns...)
}

// HeadObject reads through the wrapped client unless denied.
func (d *Denying) HeadObject(ctx context.Context, in *s3.HeadObjectInput, optFns ...func(*s3.Options)) (*s3.HeadObjectOutput, error) {
	return d.to(ctx, "HeadObject", in.Key).HeadObject(ctx, in, optFns...)
}

// DeleteObject deletes through the wrapped client unless denied.
func (d *Denying) DeleteObject(ctx context.Context, in *s3.DeleteObjectInput, optFns ...func(*s3.Options)) (*s3.DeleteObjectOutput, error) {
	return d.to(ctx, "DeleteObject", in.Key).DeleteObject(ctx, in, optFns...)
}

// ListObjectsV2 lists through the wrapped client unless denied.
func (d *Denying) ListObjectsV2(ctx context.Context, in *s3.ListObjectsV2Input, optFns ...func(*s3.Options)) (*s3.ListObjectsV2Output, error) {
	return d.to(ctx, "ListObjectsV2", in.Prefix).ListObjectsV2(ctx, in, optFns...)
}
