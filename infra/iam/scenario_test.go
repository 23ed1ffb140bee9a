package iam

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/deployer"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/local/region"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/pipeline"
	"github.com/ferryhq/ferry/internal/proof/reliability"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/asset"
)

// s3Call is one S3 request ferry made, with what IAM sees of it.
type s3Call struct {
	Store       string // "deployer" (the deployer bucket) or "assets" (a target's asset bucket)
	Op          string
	Bucket, Key string
	IfNoneMatch bool
	IfMatch     bool
	Tagging     bool
}

type s3Log struct {
	mu    sync.Mutex
	calls []s3Call
}

func (l *s3Log) add(c s3Call) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, c)
}

// recordingStore records the deployer's calls on its bucket.
type recordingStore struct {
	next deployer.Store
	log  *s3Log
}

func (r recordingStore) PutObject(ctx context.Context, in *s3.PutObjectInput, o ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	r.log.add(s3Call{Store: "deployer", Op: "PutObject", Bucket: aws.ToString(in.Bucket), Key: aws.ToString(in.Key),
		IfNoneMatch: in.IfNoneMatch != nil, IfMatch: in.IfMatch != nil, Tagging: in.Tagging != nil})
	return r.next.PutObject(ctx, in, o...)
}

func (r recordingStore) GetObject(ctx context.Context, in *s3.GetObjectInput, o ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	r.log.add(s3Call{Store: "deployer", Op: "GetObject", Bucket: aws.ToString(in.Bucket), Key: aws.ToString(in.Key)})
	return r.next.GetObject(ctx, in, o...)
}

func (r recordingStore) HeadObject(ctx context.Context, in *s3.HeadObjectInput, o ...func(*s3.Options)) (*s3.HeadObjectOutput, error) {
	r.log.add(s3Call{Store: "deployer", Op: "HeadObject", Bucket: aws.ToString(in.Bucket), Key: aws.ToString(in.Key)})
	return r.next.HeadObject(ctx, in, o...)
}

func (r recordingStore) DeleteObject(ctx context.Context, in *s3.DeleteObjectInput, o ...func(*s3.Options)) (*s3.DeleteObjectOutput, error) {
	r.log.add(s3Call{Store: "deployer", Op: "DeleteObject", Bucket: aws.ToString(in.Bucket), Key: aws.ToString(in.Key), IfMatch: in.IfMatch != nil})
	return r.next.DeleteObject(ctx, in, o...)
}

func (r recordingStore) ListObjectsV2(ctx context.Context, in *s3.ListObjectsV2Input, o ...func(*s3.Options)) (*s3.ListObjectsV2Output, error) {
	r.log.add(s3Call{Store: "deployer", Op: "ListObjectsV2", Bucket: aws.ToString(in.Bucket), Key: aws.ToString(in.Prefix)})
	return r.next.ListObjectsV2(ctx, in, o...)
}

// recordingAssets records Publish's calls on the target's asset bucket.
type recordingAssets struct {
	next cloud.AssetStore
	log  *s3Log
}

func (r recordingAssets) HeadObject(ctx context.Context, in *s3.HeadObjectInput, o ...func(*s3.Options)) (*s3.HeadObjectOutput, error) {
	r.log.add(s3Call{Store: "assets", Op: "HeadObject", Bucket: aws.ToString(in.Bucket), Key: aws.ToString(in.Key)})
	return r.next.HeadObject(ctx, in, o...)
}

func (r recordingAssets) PutObject(ctx context.Context, in *s3.PutObjectInput, o ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	r.log.add(s3Call{Store: "assets", Op: "PutObject", Bucket: aws.ToString(in.Bucket), Key: aws.ToString(in.Key),
		IfNoneMatch: in.IfNoneMatch != nil, Tagging: in.Tagging != nil})
	return r.next.PutObject(ctx, in, o...)
}

func (r recordingAssets) ListObjectsV2(ctx context.Context, in *s3.ListObjectsV2Input, o ...func(*s3.Options)) (*s3.ListObjectsV2Output, error) {
	r.log.add(s3Call{Store: "assets", Op: "ListObjectsV2", Bucket: aws.ToString(in.Bucket), Key: aws.ToString(in.Prefix)})
	return r.next.ListObjectsV2(ctx, in, o...)
}

func (r recordingAssets) DeleteObject(ctx context.Context, in *s3.DeleteObjectInput, o ...func(*s3.Options)) (*s3.DeleteObjectOutput, error) {
	r.log.add(s3Call{Store: "assets", Op: "DeleteObject", Bucket: aws.ToString(in.Bucket), Key: aws.ToString(in.Key)})
	return r.next.DeleteObject(ctx, in, o...)
}

func (r recordingAssets) GetObject(ctx context.Context, in *s3.GetObjectInput, o ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	r.log.add(s3Call{Store: "assets", Op: "GetObject", Bucket: aws.ToString(in.Bucket), Key: aws.ToString(in.Key)})
	return r.next.GetObject(ctx, in, o...)
}

const (
	deployerAccount = "111111111111"
	targetAccount   = "222222222222"
	awsRegion       = region.DefaultRegion
	project         = "coinbase/deploy-test"
)

// scenario runs a representative set of deploys on a local region (the
// real handlers and state machine over the simulated AWS): a first deploy
// with an asset, lifecycle hook, scaling policies and alarms; a second that
// retires the first (CleanUpSuccess deletes groups, templates, alarms); a
// release whose fleet never turns healthy (CleanUpFailure); and a deploy
// into another account. It returns the simulation's call log and every S3
// call the deployer made.
func scenario(t *testing.T) ([]sim.Call, []s3Call) {
	t.Helper()
	ctx := t.Context()
	spec, err := sim.Load(filepath.Join("..", "..", "testdata", "worlds", "deploy-test.json"))
	require.NoError(t, err)
	clk := clock.NewVirtual(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	log := &s3Log{}
	r, err := region.New(ctx, region.Options{
		World: spec, Clock: clk,
		Store:  func(next deployer.Store) deployer.Store { return recordingStore{next: next, log: log} },
		Assets: func(next cloud.AssetStore) cloud.AssetStore { return recordingAssets{next: next, log: log} },
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close() })

	dir := t.TempDir()
	conf := filepath.Join(dir, "app.conf")
	require.NoError(t, os.WriteFile(conf, []byte("listen 8000\n"), 0o644))
	deploy := func(id, config string, want string, mutate func(*release.Release)) {
		t.Helper()
		rel, err := release.ReadFile(filepath.Join("..", "..", "testdata", "deploy-test-release.json"))
		require.NoError(t, err)
		rel.ReleaseID, rel.ConfigName = id, config
		rel.CreatedAt = clk.Now().Add(-time.Minute).UTC()
		rel.CreatedBy = "arn:aws:iam::111111111111:user/alice"
		sum, size, _, err := asset.Upload(ctx, r.S3(), r.Bucket(), project, config, conf)
		require.NoError(t, err)
		rel.Assets = map[string]*release.Asset{"conf": {Path: "app.conf", SHA256: sum, Size: size}}
		if mutate != nil {
			mutate(rel)
		}
		raw, err := json.Marshal(rel)
		require.NoError(t, err)
		x, err := r.StartRelease(ctx, raw)
		require.NoError(t, err)
		require.NoError(t, x.Wait(ctx))
		d := x.Describe()
		path := x.Path()
		require.Equal(t, want, path[len(path)-1], "%s: %v: %s %s", id, path, d.Error, d.Cause)
		clk.Advance(time.Hour)
	}
	scaled := func(rel *release.Release) {
		rel.Lifecycle = map[string]*release.LifecycleHook{"termhook": {
			Transition: "autoscaling:EC2_INSTANCE_TERMINATING", Role: "asg_lifecycle_hooks", SNS: "asg_lifecycle_hooks", HeartbeatTimeout: 300}}
		rel.Services["web"].Autoscaling = &release.Autoscaling{MinSize: 1, MaxSize: 3, Policies: []release.Policy{
			{Type: "cpu_scale_up", Threshold: 80, ScalingAdjustment: 1},
			{Type: "cpu_scale_down", Threshold: 10, ScalingAdjustment: -1},
		}}
		rel.Services["web"].EBSVolumeSize = 20
	}
	deploy("r-first", "development", execution.EndSuccess, scaled)
	deploy("r-second", "development", execution.EndSuccess, func(rel *release.Release) {
		scaled(rel)
		// Its canary analysis reads the groups' metrics (GetMetricData)
		// and records each judgement.
		rel.Analysis = &release.Analysis{Metrics: []release.AnalysisMetric{{Namespace: "AWS/EC2", Name: "CPUUtilization"}}}
	})
	deploy("r-broken", "development", execution.EndFailureClean, func(rel *release.Release) {
		scaled(rel)
		rel.AMI = "ubuntu-broken"
		rel.Timeout = 600
	})
	deploy("r-production", "production", execution.EndSuccess, func(rel *release.Release) {
		rel.AccountID = targetAccount
		rel.Services["web"].SecurityGroups = []string{"ec2::coinbase/deploy-test::production"}
		rel.Services["web"].ELBs, rel.Services["web"].TargetGroups = nil, nil
	})
	promote(t, r, clk, conf)
	log.mu.Lock()
	defer log.mu.Unlock()
	return r.World().CallLog(), append([]s3Call(nil), log.calls...)
}

// promote promotes the deploy-test release, with an asset, through
// development and staging (the promotion matrix's pipeline): the
// promotion's own calls (its request, its
// record, the pipeline registered, the releases and the asset it copies to
// staging) join the recorded ones.
func promote(t *testing.T, r *region.Region, clk *clock.Virtual, conf string) {
	t.Helper()
	ctx := t.Context()
	raw, err := os.ReadFile(filepath.Join("..", "..", reliability.PromotionPipeline))
	require.NoError(t, err)
	p, err := pipeline.Decode(raw)
	require.NoError(t, err)
	for _, config := range []string{"development", "staging"} {
		_, err := r.S3().PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(r.Bucket()),
			Key: aws.String(naming.PipelineKey(project, config)), Body: bytes.NewReader(raw)})
		require.NoError(t, err)
	}
	rel, err := release.ReadFile(filepath.Join("..", "..", "testdata", "deploy-test-release.json"))
	require.NoError(t, err)
	rel.ConfigName = ""
	sum, size, _, err := asset.Upload(ctx, r.S3(), r.Bucket(), project, "development", conf)
	require.NoError(t, err)
	rel.Assets = map[string]*release.Asset{"conf": {Path: "app.conf", SHA256: sum, Size: size}}
	x, err := r.StartPromotion(ctx, &pipeline.Request{PromotionID: "r-promotion", CreatedAt: clk.Now().Add(-time.Minute).UTC(),
		CreatedBy: "alice", Pipeline: p, Release: rel})
	require.NoError(t, err)
	require.NoError(t, x.Wait(ctx))
	path := x.Path()
	d := x.Describe()
	require.Equal(t, execution.EndSuccess, path[len(path)-1], "the promotion: %s %s", d.Error, d.Cause)
}
