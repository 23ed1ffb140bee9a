package s3server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/local/s3server"
)

// TestVersionedOption: a bucket in Options.Versioned has versioning
// enabled, one only in Buckets has never had it, and each PutObject in
// the versioned one answers with a new version id.
//
// AWS: GetBucketVersioning answers Status Enabled for a bucket with
// versioning enabled and no Status for a bucket that never had it
// (GetBucketVersioning, https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetBucketVersioning.html);
// "If you enable versioning for a bucket, Amazon S3 automatically
// generates a unique version ID for the object being stored", returned as
// x-amz-version-id (PutObject, https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutObject.html).
func TestVersionedOption(t *testing.T) {
	const plain = "ferry-assets-123456789012-us-east-1"
	srv, err := s3server.Start(s3server.Options{Buckets: []string{plain, bucket}, Versioned: []string{bucket}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	c := s3server.NewClient(srv.URL(), noRetry)
	ctx := t.Context()

	tests := []struct {
		bucket     string
		wantStatus types.BucketVersioningStatus
	}{
		{bucket, types.BucketVersioningStatusEnabled},
		{plain, ""},
	}
	for _, tc := range tests {
		t.Run(tc.bucket, func(t *testing.T) {
			v, err := c.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: aws.String(tc.bucket)})
			require.NoError(t, err)
			assert.Equal(t, tc.wantStatus, v.Status)
			var ids []string
			for _, body := range []string{"one", "two"} {
				out, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(tc.bucket), Key: aws.String("k"), Body: strings.NewReader(body)})
				require.NoError(t, err)
				ids = append(ids, aws.ToString(out.VersionId))
			}
			if tc.wantStatus == "" {
				assert.Equal(t, []string{"", ""}, ids, "no version ids without versioning")
				return
			}
			assert.NotEmpty(t, ids[0])
			assert.NotEmpty(t, ids[1])
			assert.NotEqual(t, ids[0], ids[1])
		})
	}
}

// TestVersionedLifecycle walks one key of a versioned bucket through
// writes, a delete and a new conditional write, as the lock and the halt
// marker do in the deployer bucket.
//
// AWS ("Working with objects in a versioning-enabled bucket", Amazon S3
// User Guide, https://docs.aws.amazon.com/AmazonS3/latest/userguide/manage-objects-versioned-bucket.html):
// a GetObject without a version returns the current version and one with
// a versionId that version (GetObject,
// https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObject.html),
// and so does HeadObject (HeadObject, versionId,
// https://docs.aws.amazon.com/AmazonS3/latest/API/API_HeadObject.html);
// a DeleteObject without a version "inserts a delete marker, which
// becomes the current version of the object", answered with
// x-amz-delete-marker: true and the marker's x-amz-version-id
// (DeleteObject, https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteObject.html);
// "If the current version of the object is a delete marker, Amazon S3
// behaves as if the object was deleted" (GetObject), so a GetObject is 404
// NoSuchKey, listings leave the key out, and If-None-Match: * writes it
// again; the versions under the marker stay readable by id. Each version
// keeps its own checksum.
func TestVersionedLifecycle(t *testing.T) {
	_, c := startServer(t, true)
	ctx := t.Context()
	const key = "p/c/halt"
	putVersion := func(body string, sha bool) string {
		in := &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader(body)}
		if sha {
			in.ChecksumSHA256 = aws.String(sumSHA256(body))
		}
		out, err := c.PutObject(ctx, in)
		require.NoError(t, err)
		return aws.ToString(out.VersionId)
	}
	v1 := putVersion("first", true)
	v2 := putVersion("second!", false)

	got, out := getBody(t, c, bucket, key, true)
	assert.Equal(t, "second!", got)
	assert.Equal(t, v2, aws.ToString(out.VersionId))
	only(t, out, algorithmCases[2], sumCRC64NVME("second!"))

	old, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), VersionId: aws.String(v1), ChecksumMode: types.ChecksumModeEnabled})
	require.NoError(t, err)
	only(t, *old, algorithmCases[4], sumSHA256("first"))
	require.NoError(t, old.Body.Close())

	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), VersionId: aws.String(v1), ChecksumMode: types.ChecksumModeEnabled})
	require.NoError(t, err)
	assert.Equal(t, v1, aws.ToString(head.VersionId), "HeadObject answers for the version asked")
	assert.Equal(t, int64(len("first")), aws.ToInt64(head.ContentLength))
	assert.Equal(t, `"8b04d5e3775d298e78455efc5ca404d5"`, aws.ToString(head.ETag)) // MD5 of "first"
	only(t, headChecksums(head), algorithmCases[4], sumSHA256("first"))

	del, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	require.NoError(t, err)
	assert.True(t, aws.ToBool(del.DeleteMarker))
	marker := aws.ToString(del.VersionId)
	assert.NotEmpty(t, marker)
	assert.NotContains(t, []string{v1, v2}, marker)

	_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	status, code, _ := apiError(t, err)
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, "NoSuchKey", code)
	_, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	assert.True(t, cloud.IsNotFound(err), "head after delete: %v", err)
	list, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String("p/")})
	require.NoError(t, err)
	assert.Empty(t, list.Contents, "a deleted key is not listed")
	kept, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), VersionId: aws.String(v2)})
	require.NoError(t, err, "the versions under a delete marker stay")
	require.NoError(t, kept.Body.Close())

	again, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader("third"), IfNoneMatch: aws.String("*")})
	require.NoError(t, err, "If-None-Match: * writes over a delete marker")
	got, _ = getBody(t, c, bucket, key, false)
	assert.Equal(t, "third", got)

	versions, err := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String(bucket), Prefix: aws.String(key)})
	require.NoError(t, err)
	assert.Len(t, versions.Versions, 3)
	require.Len(t, versions.DeleteMarkers, 1)
	assert.Equal(t, marker, aws.ToString(versions.DeleteMarkers[0].VersionId))
	assert.NotEqual(t, aws.ToString(again.VersionId), marker)
}

// TestDeleteVersion: deleting one version removes it; deleting the
// current one makes the newest older version current, as S3 does
// ("Deleting object versions from a versioning-enabled bucket", Amazon S3
// User Guide, https://docs.aws.amazon.com/AmazonS3/latest/userguide/DeletingObjectVersions.html),
// and deleting the delete marker that is the current version
// undeletes the object ("Working with delete markers": "To undelete an
// object, you must delete the delete marker"). If-Match with a version is
// refused, not ignored. Each step runs on what the one before left.
func TestDeleteVersion(t *testing.T) {
	_, c := startServer(t, true)
	ctx := t.Context()
	var ids []string
	for _, body := range []string{"one", "two", "three"} {
		out, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("k"), Body: strings.NewReader(body)})
		require.NoError(t, err)
		ids = append(ids, aws.ToString(out.VersionId))
	}
	marker := func() string {
		out, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String("k")})
		require.NoError(t, err)
		require.True(t, aws.ToBool(out.DeleteMarker))
		return aws.ToString(out.VersionId)
	}
	tests := []struct {
		name     string
		version  func() string
		ifMatch  *string
		wantCode string
		current  string // the body current after the step
	}{
		{"an older version", func() string { return ids[1] }, nil, "", "three"},
		{"with If-Match", func() string { return ids[0] }, aws.String("*"), "NotImplemented", "three"},
		{"the current version", func() string { return ids[2] }, nil, "", "one"},
		{"the delete marker that is current (undelete)", marker, nil, "", "one"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			version := tc.version()
			_, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String("k"), VersionId: aws.String(version), IfMatch: tc.ifMatch})
			if tc.wantCode != "" {
				status, code, _ := apiError(t, err)
				assert.Equal(t, http.StatusNotImplemented, status)
				assert.Equal(t, tc.wantCode, code)
				_, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("k"), VersionId: aws.String(version)})
				assert.NoError(t, err, "the version is still there")
			} else {
				require.NoError(t, err)
				_, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("k"), VersionId: aws.String(version)})
				assert.Error(t, err, "the version is gone")
			}
			got, _ := getBody(t, c, bucket, "k", false)
			assert.Equal(t, tc.current, got)
			list, err := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String(bucket)})
			require.NoError(t, err)
			assert.Empty(t, list.DeleteMarkers)
			require.NotEmpty(t, list.Versions)
			assert.True(t, aws.ToBool(list.Versions[0].IsLatest), "the current version is listed first, latest")
		})
	}
}
