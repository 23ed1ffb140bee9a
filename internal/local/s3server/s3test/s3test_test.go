package s3test_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/local/s3server"
	"github.com/ferryhq/ferry/internal/local/s3server/s3test"
)

const bucket = "ferry-deployer-123456789012-us-east-1"

func TestStartAndPut(t *testing.T) {
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	c := s3test.Start(t, clock.NewVirtual(at), bucket).Client()
	s3test.Put(t, c, bucket, "p/c/k", "body")

	out, err := c.GetObject(t.Context(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("p/c/k")})
	require.NoError(t, err)
	defer out.Body.Close()
	got, err := io.ReadAll(out.Body)
	require.NoError(t, err)
	assert.Equal(t, "body", string(got))
	assert.Equal(t, at, aws.ToTime(out.LastModified).UTC(), "the server runs on the given clock")
}

// TestStartVersioned: StartVersioned's buckets keep versions, Start's do
// not. AWS: with versioning enabled "Amazon S3 automatically generates a
// unique version ID for the object being stored", returned as
// x-amz-version-id (PutObject,
// https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutObject.html).
func TestStartVersioned(t *testing.T) {
	tests := []struct {
		name          string
		start         func(testing.TB, clock.Clock, ...string) *s3server.Server
		wantVersioned bool
	}{
		{"Start", s3test.Start, false},
		{"StartVersioned", s3test.StartVersioned, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.start(t, nil, bucket).Client()
			out, err := c.PutObject(t.Context(), &s3.PutObjectInput{
				Bucket: aws.String(bucket), Key: aws.String("k"), Body: strings.NewReader("body")})
			require.NoError(t, err)
			assert.Equal(t, tc.wantVersioned, aws.ToString(out.VersionId) != "")
		})
	}
}

func TestFailing(t *testing.T) {
	tests := []struct {
		name   string
		status int
		code   string
	}{
		{"throttled", http.StatusServiceUnavailable, "SlowDown"},
		{"access denied", http.StatusForbidden, "AccessDenied"},
		{"missing bucket", http.StatusNotFound, "NoSuchBucket"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := s3test.Failing(t, tc.status, tc.code)
			ctx := t.Context()

			_, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("k")})
			var apiErr smithy.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, tc.code, apiErr.ErrorCode())

			_, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("k")})
			var resp *awshttp.ResponseError
			require.True(t, errors.As(err, &resp), "%v", err)
			assert.Equal(t, tc.status, resp.HTTPStatusCode())
		})
	}
}
