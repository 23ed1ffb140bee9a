package sim

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/naming"
	environment "github.com/ferryhq/ferry/internal/target"
)

// publishScope is a target's asset store as a session of its publish role
// sees it. The simulation has no S3 of its own: next stores the objects,
// and publishScope enforces, per call, what the bootstrap template grants
// (its PublishRole policy and the asset bucket's policy): the caller must
// be a live session of the target's publish role, in the target's
// account, and may read, create and delete only objects under its own
// project-config's prefix (naming.TargetAssetResource with its session
// tags); listing the bucket is allowed. Anything else is AccessDenied, as
// S3 answers a request IAM refuses.
type publishScope struct {
	w     *World
	t     environment.Target
	creds aws.CredentialsProvider
	next  cloud.AssetStore
}

var _ cloud.AssetStore = publishScope{}

// allow checks the caller may do action (an IAM action of S3) on key (""
// for the bucket).
func (p publishScope) allow(ctx context.Context, op, action, key string) error {
	c, err := p.creds.Retrieve(ctx)
	if err != nil {
		return opError("S3", op, fmt.Errorf("failed to retrieve credentials: %w", err))
	}
	w := p.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.authenticate(c.AccessKeyID, p.t.AccountID); err != nil {
		return opError("S3", op, err)
	}
	s := w.sessions[c.AccessKeyID]
	bucket := naming.AssetBucketName(p.t.AccountID, p.t.Region, p.t.Qualifier)
	resource := "arn:aws:s3:::" + bucket
	scope := naming.Expand(naming.TargetAssetResource, s.tags[naming.TagProjectName], s.tags[naming.TagConfigName])
	ok := s.role == naming.PublishRoleName(p.t.AccountID, p.t.Region, p.t.Qualifier)
	if key != "" {
		resource += "/" + key
		ok = ok && naming.WildcardMatch(scope, key)
	}
	if !ok {
		return opError("S3", op, apiErrf("AccessDenied", "User: %s is not authorized to perform: %s on resource: %q", s.arn(), action, resource))
	}
	return nil
}

// HeadObject is authorized by s3:GetObject, as S3 does.
func (p publishScope) HeadObject(ctx context.Context, in *s3.HeadObjectInput, optFns ...func(*s3.Options)) (*s3.HeadObjectOutput, error) {
	if err := p.allow(ctx, "HeadObject", "s3:GetObject", aws.ToString(in.Key)); err != nil {
		return nil, err
	}
	return p.next.HeadObject(ctx, in, optFns...)
}

func (p publishScope) GetObject(ctx context.Context, in *s3.GetObjectInput, optFns ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	if err := p.allow(ctx, "GetObject", "s3:GetObject", aws.ToString(in.Key)); err != nil {
		return nil, err
	}
	return p.next.GetObject(ctx, in, optFns...)
}

func (p publishScope) PutObject(ctx context.Context, in *s3.PutObjectInput, optFns ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	if err := p.allow(ctx, "PutObject", "s3:PutObject", aws.ToString(in.Key)); err != nil {
		return nil, err
	}
	return p.next.PutObject(ctx, in, optFns...)
}

func (p publishScope) DeleteObject(ctx context.Context, in *s3.DeleteObjectInput, optFns ...func(*s3.Options)) (*s3.DeleteObjectOutput, error) {
	if err := p.allow(ctx, "DeleteObject", "s3:DeleteObject", aws.ToString(in.Key)); err != nil {
		return nil, err
	}
	return p.next.DeleteObject(ctx, in, optFns...)
}

// ListObjectsV2 is authorized by s3:ListBucket on the bucket.
func (p publishScope) ListObjectsV2(ctx context.Context, in *s3.ListObjectsV2Input, optFns ...func(*s3.Options)) (*s3.ListObjectsV2Output, error) {
	if err := p.allow(ctx, "ListObjectsV2", "s3:ListBucket", ""); err != nil {
		return nil, err
	}
	return p.next.ListObjectsV2(ctx, in, optFns...)
}
