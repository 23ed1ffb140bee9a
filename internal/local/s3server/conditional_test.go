package s3server_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/local/s3server"
)

// startServer starts a server with bucket, versioned or not, and returns
// a client that does not retry.
func startServer(t *testing.T, versioned bool) (*s3server.Server, *s3.Client) {
	t.Helper()
	opts := s3server.Options{Buckets: []string{bucket}}
	if versioned {
		opts = s3server.Options{Versioned: []string{bucket}}
	}
	srv, err := s3server.Start(opts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	return srv, s3server.NewClient(srv.URL(), noRetry)
}

// TestConditionalDelete checks If-Match on DeleteObject, in a bucket
// without versioning and in a versioned one.
//
// AWS ("How to perform conditional deletes", Amazon S3 User Guide,
// https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-deletes.html):
// "If there's an existing object with the same key name and matching
// ETag, the DeleteObject requests succeeds, and returns a 204 No content
// response. If the ETag doesn't match, the delete operation fails with a
// 412 Precondition Failed response"; If-Match: * checks that the object
// exists; "Conditional delete evaluations only apply to the current
// version of the object", and when the key has no current object ("the
// object key no longer exists") the answer is 404 Not Found, NoSuchKey.
// A delete without If-Match of a key that does not exist succeeds
// (DeleteObject, https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteObject.html).
// In a versioned bucket a successful delete adds a delete marker
// ("Deleting objects from versioning-enabled buckets",
// https://docs.aws.amazon.com/AmazonS3/latest/userguide/DeletingObjectVersions.html).
func TestConditionalDelete(t *testing.T) {
	tests := []struct {
		name string
		// exists: the key holds "v1" (etag etagV1); marker: then deleted
		// (a delete marker in a versioned bucket, gone otherwise).
		exists, marker bool
		ifMatch        *string
		wantStatus     int
		wantCode       string
	}{
		{"matching ETag", true, false, aws.String(etagV1), http.StatusNoContent, ""},
		{"matching ETag unquoted", true, false, aws.String(strings.Trim(etagV1, `"`)), http.StatusNoContent, ""},
		{"star on an object", true, false, aws.String("*"), http.StatusNoContent, ""},
		{"stale ETag", true, false, aws.String(`"0123456789abcdef0123456789abcdef"`), http.StatusPreconditionFailed, "PreconditionFailed"},
		{"star on no object", false, false, aws.String("*"), http.StatusNotFound, "NoSuchKey"},
		{"ETag on no object", false, false, aws.String(etagV1), http.StatusNotFound, "NoSuchKey"},
		{"ETag on a deleted object", true, true, aws.String(etagV1), http.StatusNotFound, "NoSuchKey"},
		{"no condition on no object", false, false, nil, http.StatusNoContent, ""},
	}
	for _, versioned := range []bool{false, true} {
		_, c := startServer(t, versioned)
		ctx := t.Context()
		for _, tc := range tests {
			t.Run(fmt.Sprintf("%s versioned=%v", tc.name, versioned), func(t *testing.T) {
				key := "p/c/" + strings.ReplaceAll(tc.name, " ", "-")
				if tc.exists {
					require.NoError(t, put(ctx, c, key, "v1", false))
				}
				if tc.marker {
					_, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
					require.NoError(t, err)
				}
				out, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), IfMatch: tc.ifMatch})
				if tc.wantCode != "" {
					status, code, _ := apiError(t, err)
					assert.Equal(t, tc.wantStatus, status)
					assert.Equal(t, tc.wantCode, code)
					if tc.exists && !tc.marker {
						got, _ := getBody(t, c, bucket, key, false)
						assert.Equal(t, "v1", got, "the object is still there")
					}
					return
				}
				require.NoError(t, err)
				_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
				assert.True(t, cloud.IsNotFound(err), "deleted: %v", err)
				if versioned && tc.exists {
					assert.True(t, aws.ToBool(out.DeleteMarker), "a versioned delete adds a delete marker")
					assert.NotEmpty(t, aws.ToString(out.VersionId), "the delete marker's version")
				}
			})
		}
	}
}

// etagV1 is the ETag of "v1" (its MD5).
const etagV1 = `"6654c734ccab8f440ff0825eb443dc7f"`

// TestDirectoryBucketConditionsRefused: x-amz-if-match-size and
// x-amz-if-match-last-modified-time on DeleteObject are answered 501
// NotImplemented and delete nothing, rather than be ignored.
//
// AWS: both are "only supported for directory buckets" (DeleteObject,
// https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteObject.html);
// the deployer bucket is a general purpose bucket.
func TestDirectoryBucketConditionsRefused(t *testing.T) {
	_, c := startServer(t, false)
	ctx := t.Context()
	require.NoError(t, put(ctx, c, "k", "v1", false))
	_, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String("k"), IfMatchSize: aws.Int64(2)})
	status, code, _ := apiError(t, err)
	assert.Equal(t, http.StatusNotImplemented, status)
	assert.Equal(t, "NotImplemented", code)
	got, _ := getBody(t, c, bucket, "k", false)
	assert.Equal(t, "v1", got)
}

// TestConditionalDeleteRace runs conditional deletes against writes of
// one key, concurrently, in a versioned bucket, then reads the key's
// history: every delete marker must directly follow the version whose
// ETag its delete named. A delete whose check passed on one version and
// that then removed a newer one would leave a marker after that newer
// version. This holds whatever the interleaving, so the test does not
// depend on timing.
//
// AWS: the condition and the delete are one step ("If-Match ... If the
// ETag doesn't match, the delete operation fails", and "Conditional delete
// evaluations only apply to the current version of the object", "How to
// perform conditional deletes",
// https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-deletes.html);
// versions are listed with their ETags and delete markers in the order
// they were stored (ListObjectVersions,
// https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectVersions.html).
func TestConditionalDeleteRace(t *testing.T) {
	_, c := startServer(t, true)
	ctx := t.Context()
	const key, writers, deleters, rounds = "p/c/lock", 3, 6, 50

	var mu sync.Mutex
	deletedAfter := map[string]string{} // delete marker version -> the ETag its delete named
	var errs []error
	fail := func(err error) { mu.Lock(); errs = append(errs, err); mu.Unlock() }

	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				if err := put(ctx, c, key, fmt.Sprintf("writer %d round %d", w, i), false); err != nil {
					fail(err)
				}
			}
		}()
	}
	for range deleters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
				if cloud.IsNotFound(err) {
					continue
				} else if err != nil {
					fail(err)
					continue
				}
				out, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), IfMatch: head.ETag})
				switch {
				case err == nil:
					mu.Lock()
					deletedAfter[aws.ToString(out.VersionId)] = aws.ToString(head.ETag)
					mu.Unlock()
				case cloud.IsPreconditionFailed(err), cloud.IsNotFound(err):
				default:
					fail(err)
				}
			}
		}()
	}
	wg.Wait()
	require.Empty(t, errs)

	list, err := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String(bucket), Prefix: aws.String(key)})
	require.NoError(t, err)
	require.False(t, aws.ToBool(list.IsTruncated))
	type entry struct{ version, etag string }
	var history []entry // an ETag of "" is a delete marker
	for _, v := range list.Versions {
		history = append(history, entry{aws.ToString(v.VersionId), aws.ToString(v.ETag)})
	}
	for _, m := range list.DeleteMarkers {
		history = append(history, entry{aws.ToString(m.VersionId), ""})
	}
	slices.SortFunc(history, func(a, b entry) int { return strings.Compare(a.version, b.version) })
	require.Len(t, history, writers*rounds+len(deletedAfter), "every write and every successful delete is in the history")

	markers := 0
	for i, e := range history {
		if e.etag != "" {
			continue
		}
		markers++
		named, ok := deletedAfter[e.version]
		require.True(t, ok, "delete marker %s comes from a conditional delete", e.version)
		require.Positive(t, i, "a delete marker follows a version")
		assert.Equal(t, named, history[i-1].etag,
			"delete marker %s follows the version whose ETag its delete named, not a newer one", e.version)
	}
	assert.Equal(t, len(deletedAfter), markers)
	t.Logf("%d writes, %d conditional deletes succeeded", writers*rounds, markers)
}
