package s3server_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/local/s3server"
	"github.com/ferryhq/ferry/internal/local/s3server/s3test"
)

const bucket = "ferry-deployer-123456789012-us-east-1"

func put(ctx context.Context, c *s3.Client, key, body string, ifNoneMatch bool) error {
	in := &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader(body)}
	if ifNoneMatch {
		in.IfNoneMatch = aws.String("*")
	}
	_, err := c.PutObject(ctx, in)
	return err
}

func TestRoundTripAndVirtualLastModified(t *testing.T) {
	start0 := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	clk := clock.NewVirtual(start0)
	srv := s3test.Start(t, clk, bucket)
	c := srv.Client()
	ctx := t.Context()

	tests := []struct {
		name    string
		advance time.Duration
		key     string
		body    string
	}{
		{"at start", 0, "p/c/a", "one"},
		{"an hour later", time.Hour, "p/c/b", "two"},
		{"a day later", 24 * time.Hour, "p/c/c", "three"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			now := clk.Advance(tc.advance)
			require.NoError(t, put(ctx, c, tc.key, tc.body, false))
			out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(tc.key)})
			require.NoError(t, err)
			defer out.Body.Close()
			got, err := io.ReadAll(out.Body)
			require.NoError(t, err)
			assert.Equal(t, tc.body, string(got))
			assert.True(t, now.Truncate(time.Second).Equal(aws.ToTime(out.LastModified)),
				"LastModified %s, virtual now %s", aws.ToTime(out.LastModified), now)
		})
	}
}

func TestIfNoneMatchAndErrorClassification(t *testing.T) {
	srv := s3test.Start(t, clock.NewVirtual(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)), bucket)
	c := srv.Client()
	ctx := t.Context()

	require.NoError(t, put(ctx, c, "k", "first", true))
	err := put(ctx, c, "k", "second", true)
	require.Error(t, err)
	assert.True(t, cloud.IsPreconditionFailed(err), "second conditional put: %v", err)
	assert.False(t, cloud.IsNotFound(err))

	_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("missing")})
	require.Error(t, err)
	assert.True(t, cloud.IsNotFound(err), "get missing: %v", err)
	_, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("missing")})
	require.Error(t, err)
	assert.True(t, cloud.IsNotFound(err), "head missing: %v", err)
	_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("no-such-bucket"), Key: aws.String("k")})
	require.Error(t, err)
	assert.False(t, cloud.IsNotFound(err), "a missing bucket is not a missing object: %v", err)
}

func TestHandlerServesTheSameBackend(t *testing.T) {
	srv := s3test.Start(t, nil, bucket)
	ctx := t.Context()
	require.NoError(t, put(ctx, srv.Client(), "shared", "bytes", false))

	mounted := httptest.NewServer(srv.Handler())
	defer mounted.Close()
	out, err := s3server.NewClient(mounted.URL).GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("shared")})
	require.NoError(t, err)
	defer out.Body.Close()
	got, err := io.ReadAll(out.Body)
	require.NoError(t, err)
	assert.True(t, bytes.Equal([]byte("bytes"), got))
}

func TestStartErrors(t *testing.T) {
	tests := []struct {
		name string
		opts s3server.Options
		want string
	}{
		{"invalid bucket name", s3server.Options{Buckets: []string{"Not_A_Bucket"}}, `create bucket "Not_A_Bucket"`},
		{"bad address", s3server.Options{Addr: "256.0.0.1:0"}, "listen on 256.0.0.1:0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := s3server.Start(tc.opts)
			require.Error(t, err)
			assert.Nil(t, srv)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestCloseTwice(t *testing.T) {
	srv, err := s3server.Start(s3server.Options{})
	require.NoError(t, err)
	require.NoError(t, srv.Close())
	assert.NoError(t, srv.Close())
	_, err = srv.Client().ListBuckets(t.Context(), &s3.ListBucketsInput{}, func(o *s3.Options) { o.RetryMaxAttempts = 1 })
	assert.Error(t, err, "a closed server answers nothing")
}

// TestWebPagesCannotUseTheServer: the standalone server, like the region
// that mounts it, refuses a write from a web page of another origin and
// answers no CORS header (package sameorigin), while the SDK (no Origin)
// writes and reads; an object is served as an attachment.
func TestWebPagesCannotUseTheServer(t *testing.T) {
	srv := s3test.Start(t, nil, bucket)
	ctx := t.Context()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, srv.URL()+"/"+bucket+"/page.html", strings.NewReader("<script></script>"))
	require.NoError(t, err)
	req.Header.Set("Origin", "http://evil.example")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)

	require.NoError(t, put(ctx, srv.Client(), "page.html", "<script></script>", false))
	req, err = http.NewRequestWithContext(ctx, http.MethodGet, srv.URL()+"/"+bucket+"/page.html", nil)
	require.NoError(t, err)
	req.Header.Set("Origin", "http://evil.example")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"), "no other origin reads an object")
	assert.Equal(t, "attachment", resp.Header.Get("Content-Disposition"))
}
