package sim_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/naming"
	environment "github.com/ferryhq/ferry/internal/target"
)

// storedAssets is an asset store that accepts every call and records it:
// what reaches it, the simulation let through.
type storedAssets struct{ calls []string }

func (s *storedAssets) HeadObject(_ context.Context, in *s3.HeadObjectInput, _ ...func(*s3.Options)) (*s3.HeadObjectOutput, error) {
	s.calls = append(s.calls, "HeadObject "+aws.ToString(in.Key))
	return &s3.HeadObjectOutput{}, nil
}

func (s *storedAssets) GetObject(_ context.Context, in *s3.GetObjectInput, _ ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	s.calls = append(s.calls, "GetObject "+aws.ToString(in.Key))
	return &s3.GetObjectOutput{}, nil
}

func (s *storedAssets) PutObject(_ context.Context, in *s3.PutObjectInput, _ ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	s.calls = append(s.calls, "PutObject "+aws.ToString(in.Key))
	return &s3.PutObjectOutput{}, nil
}

func (s *storedAssets) DeleteObject(_ context.Context, in *s3.DeleteObjectInput, _ ...func(*s3.Options)) (*s3.DeleteObjectOutput, error) {
	s.calls = append(s.calls, "DeleteObject "+aws.ToString(in.Key))
	return &s3.DeleteObjectOutput{}, nil
}

func (s *storedAssets) ListObjectsV2(_ context.Context, in *s3.ListObjectsV2Input, _ ...func(*s3.Options)) (*s3.ListObjectsV2Output, error) {
	s.calls = append(s.calls, "ListObjectsV2 "+aws.ToString(in.Prefix))
	return &s3.ListObjectsV2Output{}, nil
}

// TestPublishRoleScope: a publish role session reads, creates and
// deletes only its own project-config's assets, as the bootstrap
// template's PublishRole policy grants (AssetObjects on
// naming.TargetAssetResource, with the session's tags for its policy
// variables: "IAM policy elements: Variables and tags", IAM User Guide),
// and may list the bucket (AssetBucketList); S3 answers anything else
// 403 AccessDenied.
func TestPublishRoleScope(t *testing.T) {
	f := newFixture(t)
	stored := &storedAssets{}
	conn := f.world.Connector(deployer, func(environment.Target) cloud.AssetStore { return stored }, cloud.ConnectorOptions{})
	c, err := conn.Connect(f.ctx, environment.Target{AccountID: deployer, Region: region},
		cloud.Session{Project: ownProject, Config: ownConfig, ReleaseID: "r1"})
	require.NoError(t, err)
	sum := strings.Repeat("a", 64)
	bucket := aws.String(naming.AssetBucketName(deployer, region, ""))
	do := func(op, key string) error {
		var err error
		k := aws.String(key)
		switch op {
		case "HeadObject":
			_, err = c.Assets.HeadObject(f.ctx, &s3.HeadObjectInput{Bucket: bucket, Key: k})
		case "GetObject":
			_, err = c.Assets.GetObject(f.ctx, &s3.GetObjectInput{Bucket: bucket, Key: k})
		case "PutObject":
			_, err = c.Assets.PutObject(f.ctx, &s3.PutObjectInput{Bucket: bucket, Key: k})
		case "DeleteObject":
			_, err = c.Assets.DeleteObject(f.ctx, &s3.DeleteObjectInput{Bucket: bucket, Key: k})
		case "ListObjectsV2":
			_, err = c.Assets.ListObjectsV2(f.ctx, &s3.ListObjectsV2Input{Bucket: bucket, Prefix: k})
		}
		return err
	}
	own := naming.TargetAssetKey(ownProject, ownConfig, sum)
	for _, tt := range []struct {
		op, key string
		allowed bool
	}{
		{"HeadObject", own, true},
		{"GetObject", own, true},
		{"PutObject", own, true},
		{"DeleteObject", own, true},
		{"ListObjectsV2", naming.TargetAssetPrefix(ownProject, ownConfig), true},
		{"ListObjectsV2", "", true},
		{"PutObject", naming.TargetAssetKey(otherProject, ownConfig, sum), false},
		{"DeleteObject", naming.TargetAssetKey(otherProject, ownConfig, sum), false},
		{"DeleteObject", naming.TargetAssetKey(ownProject, "production", sum), false},
		{"GetObject", naming.TargetAssetKey(ownProject, "production", sum), false},
		{"DeleteObject", "assets/" + sum, false},
		{"PutObject", "index.html", false},
	} {
		t.Run(tt.op+" "+tt.key, func(t *testing.T) {
			stored.calls = nil
			err := do(tt.op, tt.key)
			if tt.allowed {
				require.NoError(t, err)
				assert.Equal(t, []string{tt.op + " " + tt.key}, stored.calls)
				return
			}
			require.Error(t, err)
			assert.True(t, cloud.IsCode(err, "AccessDenied"), "%v", err)
			assert.Contains(t, err.Error(), "assumed-role/"+naming.PublishRoleName(deployer, region, ""))
			assert.Empty(t, stored.calls, "a refused call stores nothing")
		})
	}
}
