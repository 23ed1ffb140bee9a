package bench

import (
	"context"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/deployer"
	"github.com/ferryhq/ferry/internal/fanout"
)

// s3Calls counts the S3 calls of the deployer, by operation ("s3:GetObject"),
// on its own bucket and on the targets' asset buckets, and spends each
// one's cost on its context's Timeline (package fanout).
type s3Calls struct {
	cost time.Duration
	mu   sync.Mutex
	ops  map[string]int
}

func newS3Calls(cost time.Duration) *s3Calls { return &s3Calls{cost: cost, ops: map[string]int{}} }

func (c *s3Calls) add(ctx context.Context, op string) {
	fanout.Spend(ctx, c.cost)
	c.mu.Lock()
	c.ops["s3:"+op]++
	c.mu.Unlock()
}

// snapshot returns the counts so far.
func (c *s3Calls) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.ops)
}

// store wraps the deployer bucket's client (region.Options.Store).
func (c *s3Calls) store(next deployer.Store) deployer.Store {
	return &countingStore{next: next, calls: c}
}

// assets wraps the asset buckets' client (region.Options.Assets).
func (c *s3Calls) assets(next cloud.AssetStore) cloud.AssetStore {
	return &countingAssets{next: next, calls: c}
}

// countingStore counts the calls of a deployer.Store.
type countingStore struct {
	next  deployer.Store
	calls *s3Calls
}

var (
	_ deployer.Store   = (*countingStore)(nil)
	_ cloud.AssetStore = (*countingAssets)(nil)
)

func (s *countingStore) PutObject(ctx context.Context, in *s3.PutObjectInput, optFns ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	s.calls.add(ctx, "PutObject")
	return s.next.PutObject(ctx, in, optFns...)
}

func (s *countingStore) GetObject(ctx context.Context, in *s3.GetObjectInput, optFns ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	s.calls.add(ctx, "GetObject")
	return s.next.GetObject(ctx, in, optFns...)
}

func (s *countingStore) HeadObject(ctx context.Context, in *s3.HeadObjectInput, optFns ...func(*s3.Options)) (*s3.HeadObjectOutput, error) {
	s.calls.add(ctx, "HeadObject")
	return s.next.HeadObject(ctx, in, optFns...)
}

func (s *countingStore) DeleteObject(ctx context.Context, in *s3.DeleteObjectInput, optFns ...func(*s3.Options)) (*s3.DeleteObjectOutput, error) {
	s.calls.add(ctx, "DeleteObject")
	return s.next.DeleteObject(ctx, in, optFns...)
}

func (s *countingStore) ListObjectsV2(ctx context.Context, in *s3.ListObjectsV2Input, optFns ...func(*s3.Options)) (*s3.ListObjectsV2Output, error) {
	s.calls.add(ctx, "ListObjectsV2")
	return s.next.ListObjectsV2(ctx, in, optFns...)
}

// countingAssets counts the calls of a cloud.AssetStore.
type countingAssets struct {
	next  cloud.AssetStore
	calls *s3Calls
}

func (s *countingAssets) HeadObject(ctx context.Context, in *s3.HeadObjectInput, optFns ...func(*s3.Options)) (*s3.HeadObjectOutput, error) {
	s.calls.add(ctx, "HeadObject")
	return s.next.HeadObject(ctx, in, optFns...)
}

func (s *countingAssets) PutObject(ctx context.Context, in *s3.PutObjectInput, optFns ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	s.calls.add(ctx, "PutObject")
	return s.next.PutObject(ctx, in, optFns...)
}

func (s *countingAssets) GetObject(ctx context.Context, in *s3.GetObjectInput, optFns ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	s.calls.add(ctx, "GetObject")
	return s.next.GetObject(ctx, in, optFns...)
}

func (s *countingAssets) ListObjectsV2(ctx context.Context, in *s3.ListObjectsV2Input, optFns ...func(*s3.Options)) (*s3.ListObjectsV2Output, error) {
	s.calls.add(ctx, "ListObjectsV2")
	return s.next.ListObjectsV2(ctx, in, optFns...)
}

func (s *countingAssets) DeleteObject(ctx context.Context, in *s3.DeleteObjectInput, optFns ...func(*s3.Options)) (*s3.DeleteObjectOutput, error) {
	s.calls.add(ctx, "DeleteObject")
	return s.next.DeleteObject(ctx, in, optFns...)
}

// serviceNames are the short names of the simulated AWS's services (SDK
// service ids, sim.Call.Service) in operation keys:
// "autoscaling:DescribeAutoScalingGroups".
var serviceNames = map[string]string{
	"Auto Scaling":              "autoscaling",
	"EC2":                       "ec2",
	"Elastic Load Balancing":    "elb",
	"Elastic Load Balancing v2": "elbv2",
	"IAM":                       "iam",
	"SNS":                       "sns",
	"CloudWatch":                "cloudwatch",
	"STS":                       "sts",
}

// opKey is the key of an operation of a service in the by-operation
// counts: the service's short name, a colon and the operation.
func opKey(service, op string) string {
	short, ok := serviceNames[service]
	if !ok {
		short = strings.ToLower(strings.ReplaceAll(service, " ", "-"))
	}
	return short + ":" + op
}

// diff returns after - before, leaving out zeros.
func diff(before, after map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range after {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// total sums the counts.
func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// addTo adds m's counts to into.
func addTo(into, m map[string]int) {
	for k, v := range m {
		into[k] += v
	}
}
