package region

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/asset"
)

// recordingAssets records the calls made through it.
type recordingAssets struct {
	next  cloud.AssetStore
	mu    sync.Mutex
	calls []string
}

func (r *recordingAssets) record(op string, bucket, key *string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, op+" "+aws.ToString(bucket)+"/"+aws.ToString(key))
}

func (r *recordingAssets) HeadObject(ctx context.Context, in *s3.HeadObjectInput, optFns ...func(*s3.Options)) (*s3.HeadObjectOutput, error) {
	r.record("HeadObject", in.Bucket, in.Key)
	return r.next.HeadObject(ctx, in, optFns...)
}

func (r *recordingAssets) PutObject(ctx context.Context, in *s3.PutObjectInput, optFns ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	r.record("PutObject", in.Bucket, in.Key)
	return r.next.PutObject(ctx, in, optFns...)
}

func (r *recordingAssets) GetObject(ctx context.Context, in *s3.GetObjectInput, optFns ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	r.record("GetObject", in.Bucket, in.Key)
	return r.next.GetObject(ctx, in, optFns...)
}

func (r *recordingAssets) ListObjectsV2(ctx context.Context, in *s3.ListObjectsV2Input, optFns ...func(*s3.Options)) (*s3.ListObjectsV2Output, error) {
	r.record("ListObjectsV2", in.Bucket, in.Prefix)
	return r.next.ListObjectsV2(ctx, in, optFns...)
}

func (r *recordingAssets) DeleteObject(ctx context.Context, in *s3.DeleteObjectInput, optFns ...func(*s3.Options)) (*s3.DeleteObjectOutput, error) {
	r.record("DeleteObject", in.Bucket, in.Key)
	return r.next.DeleteObject(ctx, in, optFns...)
}

// TestLocalAssetsOption: Options.Assets wraps the asset store Publish
// writes the target's assets through.
func TestLocalAssetsOption(t *testing.T) {
	rec := &recordingAssets{}
	r, clk := newTestRegion(t, Options{Assets: func(next cloud.AssetStore) cloud.AssetStore {
		rec.next = next
		return rec
	}})
	path := filepath.Join(t.TempDir(), "app.conf")
	require.NoError(t, os.WriteFile(path, []byte("listen 8000\n"), 0o644))
	ctx := context.Background()
	sum, size, _, err := asset.Upload(ctx, r.S3(), r.Bucket(), testProject, testConfig, path)
	require.NoError(t, err)

	raw := releaseJSON(t, clk, "20260301T120000Z-a55e75", func(rel *release.Release) {
		rel.Assets = map[string]*release.Asset{"conf": {Path: "app.conf", SHA256: sum, Size: size}}
	})
	x, err := r.StartRelease(ctx, raw)
	require.NoError(t, err)
	require.NoError(t, x.Wait(ctx))
	require.Equal(t, asl.StatusSucceeded, x.Describe().Status, x.Describe().Cause)

	target := naming.AssetBucketName("111111111111", DefaultRegion, "") + "/" + naming.TargetAssetKey(testProject, testConfig, sum)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	prefix := naming.AssetBucketName("111111111111", DefaultRegion, "") + "/" + naming.TargetAssetPrefix(testProject, testConfig)
	assert.Equal(t, []string{"HeadObject " + target, "PutObject " + target, "ListObjectsV2 " + prefix}, rec.calls,
		"Publish, then CleanUpSuccess's collection of the published assets")
}

// Published assets are create-only (If-None-Match: *, which the asset
// bucket's policy requires): an object already at an asset's key that is
// not the asset is never overwritten, and the release fails naming it.
func TestPublishNeverOverwritesAnAsset(t *testing.T) {
	r, clk := newTestRegion(t, Options{})
	path := filepath.Join(t.TempDir(), "app.conf")
	require.NoError(t, os.WriteFile(path, []byte("listen 8000\n"), 0o644))
	ctx := context.Background()
	sum, size, _, err := asset.Upload(ctx, r.S3(), r.Bucket(), testProject, testConfig, path)
	require.NoError(t, err)
	bucket := naming.AssetBucketName("111111111111", DefaultRegion, "")
	_, err = r.S3().PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(naming.TargetAssetKey(testProject, testConfig, sum)),
		Body: strings.NewReader("something else")})
	require.NoError(t, err)

	x, err := r.StartRelease(ctx, releaseJSON(t, clk, "20260301T120000Z-a55e76", func(rel *release.Release) {
		rel.Assets = map[string]*release.Asset{"conf": {Path: "app.conf", SHA256: sum, Size: size}}
	}))
	require.NoError(t, err)
	require.NoError(t, x.Wait(ctx))
	assert.Equal(t, "FailureClean", last(x.Path()))
	assert.Contains(t, x.Describe().Cause, "published assets are never overwritten")
	obj, err := r.S3().GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(naming.TargetAssetKey(testProject, testConfig, sum))})
	require.NoError(t, err)
	defer obj.Body.Close()
	got, _ := io.ReadAll(obj.Body)
	assert.Equal(t, "something else", string(got), "the object there is untouched")
}
