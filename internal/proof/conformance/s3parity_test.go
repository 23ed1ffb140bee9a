package conformance

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/local/s3server"
)

// parityCheck is one thing a user of the local region sees of S3 with an
// SDK or the AWS CLI: what AWS documents, and what moto 5.2.1 answers
// where it differs.
type parityCheck struct {
	name string
	// see makes its calls on a fresh versioned bucket and says what it
	// saw, as a string to compare.
	see func(ctx context.Context, t *testing.T, c *s3.Client, bucket string) string
	aws string
	// moto, when set, is moto's different answer, and motoNote why the
	// test follows AWS's documentation instead.
	moto     *string
	motoNote string
}

func md5hex(b []byte) string { h := md5.Sum(b); return hex.EncodeToString(h[:]) }

// multipartETag is S3's ETag of an object completed from parts: the MD5
// of the concatenated binary MD5s of its parts, "-", the number of parts.
func multipartETag(parts ...[]byte) string {
	var sums []byte
	for _, p := range parts {
		h := md5.Sum(p)
		sums = append(sums, h[:]...)
	}
	return `"` + md5hex(sums) + fmt.Sprintf("-%d", len(parts)) + `"`
}

// rawHeader is a header of the HTTP answer behind an SDK result.
func rawHeader(md middleware.Metadata, name string) string {
	if r, ok := awsmiddleware.GetRawResponse(md).(*smithyhttp.Response); ok {
		return r.Header.Get(name)
	}
	return ""
}

// Parts of a multipart upload: every part but the last must be at least
// 5 MiB (UploadPart, Amazon S3 API Reference).
var (
	partOne = bytes.Repeat([]byte("ferry-part-one "), 5<<20/15+1)
	partTwo = []byte("the last part is small")
)

// put puts body at key as the AWS CLI's s3api put-object does without
// --content-type: with no Content-Type header (the Go SDK would send
// application/octet-stream).
func put(ctx context.Context, t *testing.T, c *s3.Client, bucket, key, body string) {
	t.Helper()
	untyped := func(stack *middleware.Stack) error {
		return stack.Build.Add(middleware.BuildMiddlewareFunc("untyped", func(ctx context.Context, in middleware.BuildInput, next middleware.BuildHandler) (middleware.BuildOutput, middleware.Metadata, error) {
			if r, ok := in.Request.(*smithyhttp.Request); ok {
				r.Header.Del("Content-Type")
			}
			return next.HandleBuild(ctx, in)
		}), middleware.After)
	}
	_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader(body)},
		s3.WithAPIOptions(untyped))
	require.NoError(t, err)
}

// parityChecks, each from the Amazon S3 API Reference
// (https://docs.aws.amazon.com/AmazonS3/latest/API/):
func parityChecks() []parityCheck {
	return []parityCheck{{
		// CompleteMultipartUpload, GetObject, HeadObject, ListObjectsV2:
		// "If an object is created by either the Multipart Upload or Part
		// Copy operation, the ETag is not an MD5 digest" (Object, ETag);
		// S3's is the MD5 of the parts' MD5s and "-N".
		name: "a multipart object's ETag is the MD5 of its parts' MD5s, -N, everywhere",
		see: func(ctx context.Context, t *testing.T, c *s3.Client, bucket string) string {
			key := aws.String("assets/big")
			up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: key})
			require.NoError(t, err)
			var done []s3types.CompletedPart
			for i, p := range [][]byte{partOne, partTwo} {
				n := aws.Int32(int32(i + 1))
				out, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: key, UploadId: up.UploadId,
					PartNumber: n, Body: bytes.NewReader(p)})
				require.NoError(t, err)
				done = append(done, s3types.CompletedPart{ETag: out.ETag, PartNumber: n})
			}
			completed, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(bucket), Key: key,
				UploadId: up.UploadId, MultipartUpload: &s3types.CompletedMultipartUpload{Parts: done}})
			require.NoError(t, err)
			head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: key})
			require.NoError(t, err)
			get, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: key})
			require.NoError(t, err)
			_ = get.Body.Close()
			list, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
			require.NoError(t, err)
			require.Len(t, list.Contents, 1)
			return strings.Join([]string{"complete " + aws.ToString(completed.ETag), "head " + aws.ToString(head.ETag),
				"get " + aws.ToString(get.ETag), "list " + aws.ToString(list.Contents[0].ETag)}, "; ")
		},
		aws: fmt.Sprintf("complete %[1]s; head %[1]s; get %[1]s; list %[1]s", multipartETag(partOne, partTwo)),
	}, {
		// PutObject, ContentType, and Common Request Headers: "Content-Type
		// ... Default: binary/octet-stream".
		name: "an object put without a type is binary/octet-stream",
		see: func(ctx context.Context, t *testing.T, c *s3.Client, bucket string) string {
			put(ctx, t, c, bucket, "p/c/release.json", `{"hello": "text"}`)
			head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("p/c/release.json")})
			require.NoError(t, err)
			get, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("p/c/release.json")})
			require.NoError(t, err)
			_ = get.Body.Close()
			return "head " + aws.ToString(head.ContentType) + "; get " + aws.ToString(get.ContentType)
		},
		aws: "head binary/octet-stream; get binary/octet-stream",
	}, {
		// ListObjectVersions: versions are "ordered first by key and then
		// by version. Keys are sorted lexicographically; versions are
		// sorted from most to least recent" (the response's Version and
		// DeleteMarker, with IsLatest on the newest of each key).
		name: "ListObjectVersions lists keys in order, each newest first",
		see: func(ctx context.Context, t *testing.T, c *s3.Client, bucket string) string {
			put(ctx, t, c, bucket, "b", "b1")
			put(ctx, t, c, bucket, "a", "a1")
			put(ctx, t, c, bucket, "b", "b2")
			put(ctx, t, c, bucket, "a", "a2")
			_, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String("b")})
			require.NoError(t, err)
			out, err := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String(bucket)})
			require.NoError(t, err)
			etags := map[string]string{md5hex([]byte("a1")): "a1", md5hex([]byte("a2")): "a2", md5hex([]byte("b1")): "b1", md5hex([]byte("b2")): "b2"}
			var seen []string
			for _, v := range out.Versions {
				seen = append(seen, fmt.Sprintf("%s:%s latest=%v", aws.ToString(v.Key), etags[strings.Trim(aws.ToString(v.ETag), `"`)], aws.ToBool(v.IsLatest)))
			}
			for _, m := range out.DeleteMarkers {
				seen = append(seen, fmt.Sprintf("%s:marker latest=%v", aws.ToString(m.Key), aws.ToBool(m.IsLatest)))
			}
			return strings.Join(seen, ", ")
		},
		aws: "a:a2 latest=true, a:a1 latest=false, b:b2 latest=false, b:b1 latest=false, b:marker latest=true",
	}, {
		// GetObjectAttributes: the attributes asked for (ETag without
		// quotes, ObjectSize, StorageClass STANDARD), the version id as a
		// header; an attribute it does not know is 400 InvalidArgument.
		name: "GetObjectAttributes answers the attributes asked for",
		see: func(ctx context.Context, t *testing.T, c *s3.Client, bucket string) string {
			put(ctx, t, c, bucket, "p/c/lock", "held by r1")
			out, err := c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: aws.String(bucket), Key: aws.String("p/c/lock"),
				ObjectAttributes: []s3types.ObjectAttributes{s3types.ObjectAttributesEtag, s3types.ObjectAttributesObjectSize, s3types.ObjectAttributesStorageClass}})
			if err != nil {
				o := observe(err, 0)
				return fmt.Sprintf("GetObjectAttributes failed: status %d, code %q", o.Status, o.Code)
			}
			_, bad := c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: aws.String(bucket), Key: aws.String("p/c/lock"),
				ObjectAttributes: []s3types.ObjectAttributes{"Colour"}})
			_, missing := c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: aws.String(bucket), Key: aws.String("p/c/none"),
				ObjectAttributes: []s3types.ObjectAttributes{s3types.ObjectAttributesEtag}})
			return fmt.Sprintf("etag %s size %d class %s versioned %v; unknown attribute %s; missing key %s",
				aws.ToString(out.ETag), aws.ToInt64(out.ObjectSize), out.StorageClass, aws.ToString(out.VersionId) != "",
				observe(bad, 0).Code, observe(missing, 0).Code)
		},
		aws:  fmt.Sprintf("etag %s size 10 class STANDARD versioned true; unknown attribute InvalidArgument; missing key NoSuchKey", md5hex([]byte("held by r1"))),
		moto: aws.String(`GetObjectAttributes failed: status 200, code ""`),
		motoNote: "moto 5.2.1 answers GetObjectAttributes' Last-Modified in ISO 8601 (2026-01-02T15:04:05.000Z), where the API " +
			"defines an HTTP date (Mon, 02 Jan 2006 15:04:05 GMT): the SDK cannot read the answer",
	}, {
		// Error responses: NoSuchKey, "The specified key does not exist."
		name: "a missing key is NoSuchKey with S3's message",
		see: func(ctx context.Context, t *testing.T, c *s3.Client, bucket string) string {
			_, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("p/c/none")})
			var ae smithy.APIError
			require.ErrorAs(t, err, &ae)
			return ae.ErrorCode() + ": " + ae.ErrorMessage()
		},
		aws: "NoSuchKey: The specified key does not exist.",
	}, {
		// Common Response Headers: Date is "the date and time Amazon S3
		// responded", Last-Modified the object's creation date: an answer
		// to a write is dated at the object's Last-Modified, on the
		// server's one clock.
		name: "Date and Last-Modified follow one clock",
		see: func(ctx context.Context, t *testing.T, c *s3.Client, bucket string) string {
			put(ctx, t, c, bucket, "p/c/halt", "stop")
			head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("p/c/halt")})
			require.NoError(t, err)
			date, err := http.ParseTime(rawHeader(head.ResultMetadata, "Date"))
			require.NoError(t, err)
			skew := date.Sub(aws.ToTime(head.LastModified))
			return fmt.Sprintf("Date - Last-Modified within [0, 5s]: %v", skew >= 0 && skew <= 5*time.Second)
		},
		aws: "Date - Last-Modified within [0, 5s]: true",
	}, {
		// DeleteObject: "To remove a specific version, you must use the
		// versionId query parameter"; deleting the delete marker that is
		// the current version makes the version before it current again
		// ("Working with delete markers", Amazon S3 User Guide: "To
		// undelete an object, you must delete the delete marker").
		name: "deleting the delete marker undeletes the object",
		see: func(ctx context.Context, t *testing.T, c *s3.Client, bucket string) string {
			put(ctx, t, c, bucket, "p/c/current", "r1")
			del, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String("p/c/current")})
			require.NoError(t, err)
			_, err = c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String("p/c/current"), VersionId: del.VersionId})
			if err != nil {
				return "undelete: " + observe(err, 0).Code
			}
			get, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("p/c/current")})
			if err != nil {
				return "get after the undelete: " + observe(err, 0).Code
			}
			defer get.Body.Close()
			return "get after the undelete: " + aws.ToString(get.ETag)
		},
		aws: `get after the undelete: "` + md5hex([]byte("r1")) + `"`,
	}}
}

// TestS3ParityAgainstMoto runs each parityCheck on a fresh versioned
// bucket of moto_server and of the local server (on a virtual clock set a
// year ahead, as the local region runs) with the same SDK client: the
// local server must see what AWS documents; moto too, except where the
// check records how moto differs. Without moto_server on PATH it checks
// the local server alone.
func TestS3ParityAgainstMoto(t *testing.T) {
	ctx := context.Background()
	noRetry := func(o *s3.Options) { o.RetryMaxAttempts = 1 }
	var mc *s3.Client // nil without moto: the local server is checked alone
	moto, err := StartMoto(ctx)
	switch {
	case errors.Is(err, ErrNoMoto):
		t.Logf("checking the local server alone: %v", err)
	case err != nil:
		require.NoError(t, err)
	default:
		t.Cleanup(func() { _ = moto.Close() })
		mc = s3server.NewClient(moto.URL, noRetry)
	}
	clk := clock.NewVirtual(time.Now().Add(365 * 24 * time.Hour).Truncate(time.Second))

	for i, check := range parityChecks() {
		t.Run(check.name, func(t *testing.T) {
			bucket := fmt.Sprintf("ferry-parity-%d", i)
			local, err := s3server.Start(s3server.Options{Clock: clk, Versioned: []string{bucket}})
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, local.Close()) })
			assert.Equal(t, check.aws, check.see(ctx, t, s3server.NewClient(local.URL(), noRetry), bucket), "the local server answers as AWS documents")
			if mc == nil {
				return
			}
			_, err = mc.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)})
			require.NoError(t, err)
			_, err = mc.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String(bucket),
				VersioningConfiguration: &s3types.VersioningConfiguration{Status: s3types.BucketVersioningStatusEnabled}})
			require.NoError(t, err)
			gotMoto := check.see(ctx, t, mc, bucket)
			if check.moto == nil {
				assert.Equal(t, check.aws, gotMoto, "moto answers as AWS documents")
				return
			}
			assert.Equal(t, *check.moto, gotMoto, "moto differs from AWS as recorded: %s", check.motoNote)
			t.Logf("moto differs from AWS here: %s", check.motoNote)
		})
	}
}
