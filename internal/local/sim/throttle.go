package sim

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ferryhq/ferry/internal/fanout"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/tuning"
)

// Rate is a token bucket: Burst tokens at most, refilled at PerSecond.
// Every call takes a token; a call that finds none is throttled.
type Rate struct {
	Burst     float64
	PerSecond float64
	// Source says where the figures come from: AWS's documentation, or a
	// named assumption where AWS publishes none.
	Source string
}

// The rates a world that throttles (WorldSpec.Throttle) enforces, per
// account and region: one model, from AWS's documentation where AWS
// publishes the figures, each Rate saying where its figures come from.
// STS, IAM and SNS are not throttled: AWS publishes no figures for their
// buckets (IAM and STS throttle "with a token bucket algorithm ... the
// number of tokens that a bucket holds and the refill rate depends on the
// API", AWS Security Blog, "How to monitor and query IAM resources at
// scale – Part 2", without the numbers), and a figure made up would be a
// model of nothing. ferry's credentials are cached per release; IAM's
// GetInstanceProfile is read once per distinct profile a round of
// ValidateResources or Deploy. EventBridge's PutEvents has the account's
// quota.
var (
	// ELBDescribe is each Elastic Load Balancing API version's bucket for
	// its non-mutating (Describe*) actions, shared by them all.
	ELBDescribe = Rate{Burst: 40, PerSecond: 10, Source: ELBThrottlingDoc + ": non-mutating (Describe*) actions share 40 tokens refilled at 10 a second, per API version"}
	// ELBMutate is an assumption: the page documents a bucket per
	// mutating action without giving its figures.
	ELBMutate = Rate{Burst: 20, PerSecond: 5, Source: "assumed: " + ELBThrottlingDoc + " gives each mutating action its own bucket, without figures"}
	// EC2Describe is each EC2 non-mutating action's own bucket;
	// EC2DescribeUnfiltered the smaller one of the actions AWS lists as
	// unfiltered and unpaginated (taken whether or not the call filters:
	// the stricter reading); EC2Mutate each mutating action's.
	EC2Describe           = Rate{Burst: 100, PerSecond: 20, Source: EC2ThrottlingDoc + ": non-mutating actions, 100 tokens refilled at 20 a second, per action"}
	EC2DescribeUnfiltered = Rate{Burst: 50, PerSecond: 10, Source: EC2ThrottlingDoc + ": unfiltered and unpaginated non-mutating actions, 50 tokens refilled at 10 a second"}
	EC2Mutate             = Rate{Burst: 50, PerSecond: 5, Source: EC2ThrottlingDoc + ": mutating actions, 50 tokens refilled at 5 a second, per action"}
	// EC2Uncategorized are the actions ferry calls that the page lists
	// with their own bucket.
	EC2Uncategorized = map[string]Rate{
		"CreateTags":                  {Burst: 100, PerSecond: 10, Source: EC2ThrottlingDoc + ": uncategorized, CreateTags 100/10"},
		"DeleteTags":                  {Burst: 100, PerSecond: 10, Source: EC2ThrottlingDoc + ": uncategorized, DeleteTags 100/10"},
		"CreateLaunchTemplateVersion": {Burst: 100, PerSecond: 5, Source: EC2ThrottlingDoc + ": uncategorized, CreateLaunchTemplateVersion 100/5"},
		"ModifyLaunchTemplate":        {Burst: 100, PerSecond: 5, Source: EC2ThrottlingDoc + ": uncategorized, ModifyLaunchTemplate 100/5"},
		"RunInstances":                {Burst: 5, PerSecond: 2, Source: EC2ThrottlingDoc + ": uncategorized, RunInstances 5/2"},
		"TerminateInstances":          {Burst: 100, PerSecond: 5, Source: EC2ThrottlingDoc + ": uncategorized, TerminateInstances 100/5"},
	}
	// AutoScalingShared is the one bucket every Auto Scaling action of an
	// account and region shares, Describe calls included (Amazon EC2 Auto
	// Scaling API Reference, Welcome, API request rate: "throttles API
	// requests based on a shared API bucket"). AWS publishes no figures
	// for it: Elastic Load Balancing's documented Describe bucket is
	// assumed.
	AutoScalingShared = Rate{Burst: limits.AutoScalingBurst, PerSecond: limits.AutoScalingRefill, Source: AutoScalingThrottlingDoc + ": one shared bucket (figures not published: ELB's Describe bucket, 40 refilled at 10 a second, assumed)"}
	// CloudWatch's documented quotas, transactions per second per
	// action (a second's worth of burst).
	CloudWatchRates = map[string]Rate{
		"DescribeAlarms": {Burst: 9, PerSecond: 9, Source: CloudWatchQuotasDoc + ": DescribeAlarms 9 TPS"},
		"GetMetricData":  {Burst: 50, PerSecond: 50, Source: CloudWatchQuotasDoc + ": GetMetricData 50 TPS"},
		"PutMetricAlarm": {Burst: 3, PerSecond: 3, Source: CloudWatchQuotasDoc + ": PutMetricAlarm 3 TPS"},
		"DeleteAlarms":   {Burst: 3, PerSecond: 3, Source: CloudWatchQuotasDoc + ": DeleteAlarms 3 TPS"},
	}
)

// EventBridgePutEvents is the account's PutEvents quota, the figure of
// us-east-1 (AWS lists lower ones for smaller regions; the simulation
// takes one for every region).
var EventBridgePutEvents = Rate{Burst: 10000, PerSecond: 10000, Source: EventBridgeQuotasDoc + ": PutEvents throttle limit, us-east-1 10,000 transactions per second (taken for every region)"}

// The pages the rates come from.
const (
	EC2ThrottlingDoc         = "https://docs.aws.amazon.com/ec2/latest/devguide/ec2-api-throttling.html"
	ELBThrottlingDoc         = "https://docs.aws.amazon.com/elasticloadbalancing/latest/userguide/elb-api-throttling.html"
	AutoScalingThrottlingDoc = "https://docs.aws.amazon.com/autoscaling/ec2/APIReference/Welcome.html"
	CloudWatchQuotasDoc      = "https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/cloudwatch_limits.html"
	EventBridgeQuotasDoc     = "https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-quota.html"
)

// ThrottleModel names the model: bench.json reports it.
const ThrottleModel = "aws-documented"

// ec2Unfiltered are the actions the EC2 page lists as unfiltered and
// unpaginated non-mutating.
var ec2Unfiltered = map[string]bool{
	"DescribeInstances": true, "DescribeInstanceStatus": true, "DescribeNetworkInterfaces": true,
	"DescribeSecurityGroups": true, "DescribeSnapshots": true, "DescribeSpotInstanceRequests": true, "DescribeVolumes": true,
}

// rateOf is the bucket a call of service's op takes its token from (its
// key, the same for the actions that share a bucket), and false for a
// call the world does not throttle.
func rateOf(service, op string) (string, Rate, bool) {
	describe := strings.HasPrefix(op, "Describe") || strings.HasPrefix(op, "Get") || strings.HasPrefix(op, "List") || strings.HasPrefix(op, "Search")
	switch service {
	case serviceELB, serviceELBv2:
		if describe {
			return service + " Describe*", ELBDescribe, true
		}
		return service + " " + op, ELBMutate, true
	case serviceEC2:
		return service + " " + op, ec2Rate(op, describe), true
	case serviceAutoScaling:
		return service, AutoScalingShared, true
	case serviceCloudWatch:
		r, ok := CloudWatchRates[op]
		return service + " " + op, r, ok
	case serviceEventBridge:
		return service + " " + op, EventBridgePutEvents, op == "PutEvents"
	}
	return "", Rate{}, false
}

// ec2Rate is the bucket of EC2's op.
func ec2Rate(op string, describe bool) Rate {
	if r, ok := EC2Uncategorized[op]; ok {
		return r
	}
	switch {
	case ec2Unfiltered[op]:
		return EC2DescribeUnfiltered
	case describe:
		return EC2Describe
	}
	return EC2Mutate
}

// BucketOf is the key of the bucket a call of service's op takes its
// token from ("" when the world does not throttle it): the same for the
// calls that share a bucket.
func BucketOf(service, op string) string {
	key, _, _ := rateOf(service, op)
	return key
}

// bucket is one token bucket's recent history: its level at base and
// the moments of the tokens taken since, in order, with the level left
// after the last of them. Calls reach the simulation out of their
// moments' order (a retry after its backoff is taken before a call side
// by side with the throttled one), so a token taken at t must leave every
// later take its token: AWS's bucket refills at its rate as time passes
// (EC2ThrottlingDoc, "How throttling is applied": "the bucket
// automatically refills at a set rate"), and a refill that has not
// happened by t is not there at t.
type bucket struct {
	base   time.Time
	tokens float64 // at base
	taken  []time.Time
	last   float64 // after taken's last
}

// bucketMemory is how far back of its latest take a bucket remembers
// the takes; a call older than that is taken at the bucket's base.
const bucketMemory = time.Minute

// take takes a token at t when the bucket holds one at t and every take
// after t still finds its own; it reports false otherwise.
func (b *bucket) take(r Rate, t time.Time) bool {
	if b.base.IsZero() {
		b.base, b.tokens, b.last = t, r.Burst, r.Burst
	}
	if t.Before(b.base) {
		t = b.base
	}
	n := len(b.taken)
	if n == 0 || !t.Before(b.taken[n-1]) {
		from, level := b.base, b.tokens
		if n > 0 {
			from, level = b.taken[n-1], b.last
		}
		level = refill(r, level, t.Sub(from))
		if level < 1 {
			return false
		}
		b.taken, b.last = append(b.taken, t), level-1
		b.forget(r)
		return true
	}
	i, _ := slices.BinarySearchFunc(b.taken, t, func(a, t time.Time) int { return a.Compare(t) })
	for i < n && b.taken[i].Equal(t) {
		i++
	}
	taken := slices.Insert(slices.Clone(b.taken), i, t)
	last, ok := b.replay(r, taken)
	if !ok {
		return false
	}
	b.taken, b.last = taken, last
	return true
}

// replay is the level after taken's last take from the bucket's base,
// and false when one of them finds the bucket empty.
func (b *bucket) replay(r Rate, taken []time.Time) (float64, bool) {
	from, level := b.base, b.tokens
	for _, at := range taken {
		level = refill(r, level, at.Sub(from))
		if level < 1 {
			return 0, false
		}
		from, level = at, level-1
	}
	return level, true
}

// forget folds the takes older than bucketMemory before the latest into
// the bucket's base.
func (b *bucket) forget(r Rate) {
	cut := b.taken[len(b.taken)-1].Add(-bucketMemory)
	k := 0
	for k < len(b.taken) && b.taken[k].Before(cut) {
		b.tokens = refill(r, b.tokens, b.taken[k].Sub(b.base)) - 1
		b.base = b.taken[k]
		k++
	}
	b.taken = b.taken[k:]
}

// refill is a bucket's level d after it held level.
func refill(r Rate, level float64, d time.Duration) float64 {
	return min(r.Burst, level+d.Seconds()*r.PerSecond)
}

// throttleCode is the error code a service answers a throttled call
// with: EC2's RequestLimitExceeded, the Query APIs' Throttling.
func throttleCode(service string) string {
	switch service {
	case serviceEC2:
		return "RequestLimitExceeded"
	case serviceEventBridge:
		return "ThrottlingException"
	}
	return "Throttling"
}

// Throttles are a throttling world's counts, by "service:op".
type Throttles struct {
	// Retried are the attempts throttled and retried by the caller's SDK
	// (its standard retryer, tuning.AWSMaxAttempts attempts).
	Retried map[string]int
	// Failed are the calls throttled at every attempt: the caller got
	// the throttling error.
	Failed map[string]int
	// Backoff is the time the retries waited before their attempts, in
	// all.
	Backoff time.Duration
}

// throttle takes a token for the call c at its moment on ctx's Timeline
// (fanout.Offset), retrying as the SDK's standard retryer does (up to
// tuning.AWSMaxAttempts attempts, each after an exponential backoff with
// full jitter: up to 2^attempt seconds, drawn from the call's place in
// the log) with its backoff spent on the Timeline. It returns the
// moment the attempt that got through reached AWS (c.At when the world
// does not throttle the call), or the throttling error when every
// attempt was throttled. The caller holds w.mu.
func (w *World) throttle(ctx context.Context, c Call) (time.Time, error) {
	key, r, ok := rateOf(c.Service, c.Op)
	if !w.throttling || !ok {
		return c.At, nil
	}
	b := w.buckets[c.Account+"/"+c.Region+"/"+key]
	if b == nil {
		b = &bucket{}
		w.buckets[c.Account+"/"+c.Region+"/"+key] = b
	}
	at := c.At
	op := c.Service + ":" + c.Op
	for attempt := 1; ; attempt++ {
		w.attempts[BucketSecond{Account: c.Account, Region: c.Region, Bucket: key, Second: at.Unix()}]++
		if b.take(r, at) {
			return at, nil
		}
		if attempt == tuning.AWSMaxAttempts {
			w.throttles.Failed[op]++
			return time.Time{}, apiErr(throttleCode(c.Service), "Rate exceeded")
		}
		w.throttles.Retried[op]++
		u := float64(seed(c.Account+op, strings.Repeat("x", attempt)+c.At.String())%1e6) / 1e6
		backoff := time.Duration(u * float64(time.Duration(1<<attempt)*time.Second))
		fanout.Spend(ctx, backoff)
		w.throttles.Backoff += backoff
		at = at.Add(backoff)
	}
}

// BucketSecond is one request bucket (BucketOf) of one account and
// region in one second (Unix time).
type BucketSecond struct {
	Account, Region, Bucket string
	Second                  int64
}

// Attempts returns how many attempts each bucket of a world that
// throttles took in each second, as AWS counts them: every call's
// first attempt and every retry the caller's SDK made of a throttled
// one, at its moment (after its backoff), throttled or not.
func (w *World) Attempts() map[BucketSecond]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.attempts)
}

// Throttles returns the throttled calls so far.
func (w *World) Throttles() Throttles {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := Throttles{Retried: map[string]int{}, Failed: map[string]int{}, Backoff: w.throttles.Backoff}
	for k, v := range w.throttles.Retried {
		out.Retried[k] = v
	}
	for k, v := range w.throttles.Failed {
		out.Failed[k] = v
	}
	return out
}
