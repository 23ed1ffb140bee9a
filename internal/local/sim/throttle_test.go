package sim_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/fanout"
	"github.com/ferryhq/ferry/internal/local/sim"
)

// TestThrottling: a world that throttles enforces AWS's token buckets per
// account and region (https://docs.aws.amazon.com/elasticloadbalancing/latest/userguide/elb-api-throttling.html:
// Describe* share 40 tokens refilled at 10 a second; https://docs.aws.amazon.com/ec2/latest/devguide/ec2-api-throttling.html:
// 100 tokens refilled at 20 a second per non-mutating action,
// RequestLimitExceeded). A call finding the bucket empty is retried as the
// SDK's standard retryer does, after a backoff spent on the caller's
// Timeline, and answered with the throttling error after the last
// attempt; a second later the bucket has refilled.
func TestThrottling(t *testing.T) {
	spec, err := sim.Load(filepath.Join("..", "..", "..", "testdata", "worlds", "deploy-test.json"))
	require.NoError(t, err)
	spec.Throttle = true
	clk := clock.NewVirtual(start)
	w, err := sim.New(clk, spec)
	require.NoError(t, err)
	c := w.Clients(deployer, region)

	// A burst of 100 at one instant, from callers without a Timeline.
	ok, throttled := 0, 0
	for range 100 {
		_, err := c.ELBv2.DescribeTargetGroups(context.Background(), &elbv2.DescribeTargetGroupsInput{})
		if err != nil {
			assert.Equal(t, "Throttling", cloud.ErrorCode(err))
			throttled++
			continue
		}
		ok++
	}
	assert.Equal(t, 100, ok+throttled)
	th := w.Throttles()
	assert.Positive(t, th.Retried["Elastic Load Balancing v2:DescribeTargetGroups"], "retried before failing")
	assert.Positive(t, th.Backoff, "the retries' backoffs, in all")
	assert.Equal(t, throttled, th.Failed["Elastic Load Balancing v2:DescribeTargetGroups"])
	assert.GreaterOrEqual(t, ok, 40, "the bucket's 40 tokens, and what it refilled during the backoffs")
	assert.Less(t, ok, 100, "a burst of 100 is throttled")

	// One task's calls one after the other: each retry's backoff is
	// spent on its Timeline, the bucket refills meanwhile, every call
	// gets through.
	clk.Advance(time.Minute)
	ctx, tl := fanout.WithTimeline(context.Background())
	for range 100 {
		_, err := c.ELBv2.DescribeTargetGroups(ctx, &elbv2.DescribeTargetGroupsInput{})
		require.NoError(t, err)
	}
	assert.Greater(t, tl.Elapsed(), 5*time.Second, "60 calls past the burst wait for 6 s of refill at least")

	// EC2 answers RequestLimitExceeded, once its action's 100 tokens
	// are gone.
	errs := 0
	for range 300 {
		if _, err := c.EC2.DescribeSubnets(context.Background(), &ec2.DescribeSubnetsInput{}); err != nil {
			assert.Equal(t, "RequestLimitExceeded", cloud.ErrorCode(err))
			errs++
		}
	}
	assert.Positive(t, errs)

	// A minute later the buckets are full again.
	clk.Advance(time.Minute)
	for range 40 {
		_, err := c.ELBv2.DescribeTargetGroups(context.Background(), &elbv2.DescribeTargetGroupsInput{})
		require.NoError(t, err)
	}
}

// TestThrottlingSharedAutoScalingBucket: every Auto Scaling action of an
// account and region draws on one bucket, Describe calls included (Amazon
// EC2 Auto Scaling API Reference, Welcome, API request rate: "throttles
// API requests based on a shared API bucket. For example, calls to the
// DescribeAutoScalingGroups and DescribeScheduledActions API operations
// use tokens from the same bucket"); AWS publishes no figures, so
// AutoScalingShared assumes ELB's 40 refilled at 10 a second. 30 calls of
// each of two actions at one instant overflow it; each action's own
// bucket of 40 would not. EC2's buckets are per action, by category
// (https://docs.aws.amazon.com/ec2/latest/devguide/ec2-api-throttling.html).
func TestThrottlingSharedAutoScalingBucket(t *testing.T) {
	spec, err := sim.Load(filepath.Join("..", "..", "..", "testdata", "worlds", "deploy-test.json"))
	require.NoError(t, err)
	spec.Throttle = true
	w, err := sim.New(clock.NewVirtual(start), spec)
	require.NoError(t, err)
	c := w.Clients(deployer, region)
	for range 30 {
		_, _ = c.AutoScaling.DescribeAutoScalingGroups(context.Background(), &autoscaling.DescribeAutoScalingGroupsInput{})
		_, _ = c.AutoScaling.DescribeScalingActivities(context.Background(), &autoscaling.DescribeScalingActivitiesInput{})
	}
	th := w.Throttles()
	assert.Positive(t, th.Retried["Auto Scaling:DescribeScalingActivities"]+th.Retried["Auto Scaling:DescribeAutoScalingGroups"], "60 calls on one bucket of 40")
	assert.Equal(t, sim.BucketOf("Auto Scaling", "CreateAutoScalingGroup"), sim.BucketOf("Auto Scaling", "DescribeAutoScalingGroups"))

	for _, op := range []string{"DescribeSubnets", "DescribeSecurityGroups", "CreateLaunchTemplate", "CreateTags"} {
		assert.Equal(t, "EC2 "+op, sim.BucketOf("EC2", op), "each EC2 action its own bucket")
	}
	assert.Equal(t, 50.0, sim.EC2Mutate.Burst)
	assert.Equal(t, 5.0, sim.EC2Mutate.PerSecond)
}

// TestThrottledGroupLaunchesWhenAccepted: a throttled request has no
// effect (Amazon EC2 Auto Scaling API Reference, Welcome, "API request
// rate": one shared bucket, a request past it gets Throttling; the EC2
// API's "Request throttling",
// https://docs.aws.amazon.com/ec2/latest/devguide/ec2-api-throttling.html:
// the requests past the bucket fail). So the instances of a
// CreateAutoScalingGroup, or of the UpdateAutoScalingGroup that raises
// its capacity, throttled and retried by the SDK, begin launching when the
// retry got through: the caller's moment on its Timeline after the
// backoff, not when the first attempt was sent.
func TestThrottledGroupLaunchesWhenAccepted(t *testing.T) {
	f := newFixture(t, func(s *sim.WorldSpec) { s.Throttle = true })
	f.template(t, "lt-g", amiOK, "")
	in := f.groupInput(t, "g", 2)
	drain := func() {
		for range int(sim.AutoScalingShared.Burst) {
			_, _ = f.c.AutoScaling.DescribeAutoScalingGroups(f.ctx, &autoscaling.DescribeAutoScalingGroupsInput{})
		}
	}
	launched := func(want time.Time, n int) {
		t.Helper()
		times, found := f.world.InstanceTimes(deployer, region, "g")
		require.True(t, found)
		require.Len(t, times, n)
		for _, it := range times {
			if it.Launched.Before(start.Add(time.Minute)) {
				assert.Equal(t, want, it.Launched, it.ID)
			}
		}
	}

	// The account's bucket emptied at this instant: the create is
	// throttled, and retried after its backoff.
	drain()
	ctx, tl := fanout.WithTimeline(f.ctx)
	_, err := f.c.AutoScaling.CreateAutoScalingGroup(ctx, in)
	require.NoError(t, err)
	require.Positive(t, f.world.Throttles().Retried["Auto Scaling:CreateAutoScalingGroup"], "throttled, then retried")
	accepted := start.Add(tl.Elapsed())
	require.True(t, accepted.After(start), "the backoff is on the caller's Timeline")
	launched(accepted, 2)
	g := f.describe(t, "g")
	require.NotNil(t, g)
	assert.Equal(t, accepted, *g.CreatedTime)

	// A minute later, raising its capacity likewise.
	f.clk.Set(start.Add(time.Minute))
	drain()
	ctx, tl = fanout.WithTimeline(f.ctx)
	_, err = f.c.AutoScaling.UpdateAutoScalingGroup(ctx, &autoscaling.UpdateAutoScalingGroupInput{
		AutoScalingGroupName: aws.String("g"), DesiredCapacity: aws.Int32(3)})
	require.NoError(t, err)
	require.Positive(t, f.world.Throttles().Retried["Auto Scaling:UpdateAutoScalingGroup"])
	times, _ := f.world.InstanceTimes(deployer, region, "g")
	require.Len(t, times, 3)
	raised := start.Add(time.Minute + tl.Elapsed())
	require.True(t, raised.After(start.Add(time.Minute)))
	for _, it := range times {
		assert.Contains(t, []time.Time{accepted, raised}, it.Launched, it.ID)
	}
}

// TestThrottlingCountsEveryAttempt: AWS counts every request against its
// bucket, a retry of a throttled one too (ELB API throttling,
// https://docs.aws.amazon.com/elasticloadbalancing/latest/userguide/elb-api-throttling.html:
// "each API request ... removes one token"; the SDK's standard retryer
// sends a throttled request again). Attempts counts each at the second
// it is sent, after its backoff: a burst of 100 takes 100 attempts in
// its second, and the retries besides.
func TestThrottlingCountsEveryAttempt(t *testing.T) {
	spec, err := sim.Load(filepath.Join("..", "..", "..", "testdata", "worlds", "deploy-test.json"))
	require.NoError(t, err)
	spec.Throttle = true
	w, err := sim.New(clock.NewVirtual(start), spec)
	require.NoError(t, err)
	c := w.Clients(deployer, region)
	for range 100 {
		ctx, _ := fanout.WithTimeline(context.Background())
		_, _ = c.ELBv2.DescribeTargetGroups(ctx, &elbv2.DescribeTargetGroupsInput{})
	}
	retried := w.Throttles().Retried["Elastic Load Balancing v2:DescribeTargetGroups"]
	require.Positive(t, retried)
	bucket := sim.BucketOf("Elastic Load Balancing v2", "DescribeTargetGroups")
	total, later := 0, 0
	for k, n := range w.Attempts() {
		assert.Equal(t, bucket, k.Bucket)
		total += n
		if k.Second > start.Unix() {
			later += n
		}
	}
	assert.Equal(t, 100+retried, total, "every attempt, the retries too")
	assert.GreaterOrEqual(t, w.Attempts()[sim.BucketSecond{Account: deployer, Region: region, Bucket: bucket, Second: start.Unix()}], 100,
		"the burst's first attempts in its second")
	assert.Positive(t, later, "retries after their backoff, in later seconds")
}

// TestThrottlingRefillNotAhead: a bucket holds at a moment only what has
// refilled by then (https://docs.aws.amazon.com/ec2/latest/devguide/ec2-api-throttling.html,
// "How throttling is applied": the bucket "automatically refills at a set
// rate"; ELB's Describe bucket, 40 refilled at 10 a second,
// https://docs.aws.amazon.com/elasticloadbalancing/latest/userguide/elb-api-throttling.html).
// A call throttled after the bucket's 40 is retried after its backoff and
// takes a token refilled by then; a call at the burst's own instant,
// simulated after that retry, finds the bucket empty at its instant: the
// retry's refill is not yet there for it.
func TestThrottlingRefillNotAhead(t *testing.T) {
	spec, err := sim.Load(filepath.Join("..", "..", "..", "testdata", "worlds", "deploy-test.json"))
	require.NoError(t, err)
	spec.Throttle = true
	w, err := sim.New(clock.NewVirtual(start), spec)
	require.NoError(t, err)
	c := w.Clients(deployer, region)
	const op = "Elastic Load Balancing v2:DescribeTargetGroups"
	for range 40 {
		_, err := c.ELBv2.DescribeTargetGroups(context.Background(), &elbv2.DescribeTargetGroupsInput{})
		require.NoError(t, err)
	}
	require.Zero(t, w.Throttles().Retried[op], "the burst's 40 tokens")

	ctx, tl := fanout.WithTimeline(context.Background())
	_, err = c.ELBv2.DescribeTargetGroups(ctx, &elbv2.DescribeTargetGroupsInput{})
	require.NoError(t, err)
	require.Equal(t, 1, w.Throttles().Retried[op], "the 41st is throttled once, then gets a refilled token")
	require.Greater(t, tl.Elapsed(), 200*time.Millisecond, "its backoff outlasts two tokens' refill")

	_, _ = c.ELBv2.DescribeTargetGroups(context.Background(), &elbv2.DescribeTargetGroupsInput{})
	assert.Greater(t, w.Throttles().Retried[op], 1, "a call at the burst's instant finds no token there")
}
