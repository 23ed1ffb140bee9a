package s3server

import (
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConditionalDeleteHoldsTheKey interleaves a write of the key between
// a conditional delete's check and its delete: the write must wait for the
// delete and land after it, so the delete removes the version it checked
// and the newer object survives. (Were the check and the delete two steps,
// the write would land between them and the delete would remove it.)
// The interleaving is forced, not timed: the delete waits, after its
// check, until the write is queued on the key's lock or has finished.
//
// AWS: "Conditional delete evaluations only apply to the current version
// of the object", and a delete whose ETag does not match that version
// fails ("How to perform conditional deletes", Amazon S3 User Guide,
// https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-deletes.html).
func TestConditionalDeleteHoldsTheKey(t *testing.T) {
	for _, versioned := range []bool{false, true} {
		t.Run(map[bool]string{false: "unversioned", true: "versioned"}[versioned], func(t *testing.T) {
			const bucket, key = "ferry-deployer-123456789012-us-east-1", "p/c/lock"
			opts := Options{Buckets: []string{bucket}}
			if versioned {
				opts = Options{Versioned: []string{bucket}}
			}
			srv, err := Start(opts)
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, srv.Close()) })
			f := srv.fidelity
			c := NewClient(srv.URL(), func(o *s3.Options) { o.RetryMaxAttempts = 1 })
			ctx := t.Context()
			putBody := func(body string) error {
				_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader(body)})
				return err
			}

			require.NoError(t, putBody("held by release A"))
			head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
			require.NoError(t, err)

			written := make(chan error, 1)
			f.checked = func(k objectKey) {
				go func() { written <- putBody("held by release B") }()
				for f.locks.holders(k) < 2 {
					select {
					case err := <-written:
						written <- err
						return
					default:
						runtime.Gosched()
					}
				}
			}
			_, err = c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), IfMatch: head.ETag})
			require.NoError(t, err)
			require.NoError(t, <-written)

			out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
			require.NoError(t, err, "the newer object survives the delete of the older one")
			defer out.Body.Close()
			got, err := io.ReadAll(out.Body)
			require.NoError(t, err)
			assert.Equal(t, "held by release B", string(got))
		})
	}
}
