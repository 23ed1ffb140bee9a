package sim

import (
	"context"
	"strings"
	"time"

	"github.com/ferryhq/ferry/internal/fanout"
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
// account and region.
var (
	// ELBDescribe is each Elastic Load Balancing API version's bucket for
	// its non-mutating (Describe*) actions, shared by them all.
	ELBDescribe = Rate{Burst: 40, PerSecond: 10, Source: "Request throttling for the Elastic Load Balancing API: 40 tokens, refilled at 10 a second, per API version"}
	// ELBMutate is an assumption: AWS documents a bucket per mutating
	// action without giving its figures here.
	ELBMutate = Rate{Burst: 20, PerSecond: 5, Source: "assumed: AWS publishes a bucket per mutating action"}
	// EC2Describe is each EC2 non-mutating action's own bucket.
	EC2Describe = Rate{Burst: 100, PerSecond: 20, Source: "Request throttling for the Amazon EC2 API: 100 tokens, refilled at 20 a second, per non-mutating action"}
	// EC2Mutate is an assumption for each EC2 mutating action.
	EC2Mutate = Rate{Burst: 50, PerSecond: 5, Source: "assumed: conservative beside the documented non-mutating rate"}
	// AutoScalingDescribe and AutoScalingMutate are assumptions: the
	// Auto Scaling API Reference gives no figures, so each action gets
	// ELB's documented non-mutating bucket, and mutating actions a
	// smaller one.
	AutoScalingDescribe = Rate{Burst: 40, PerSecond: 10, Source: "assumed: Elastic Load Balancing's documented non-mutating bucket, per action"}
	AutoScalingMutate   = Rate{Burst: 20, PerSecond: 5, Source: "assumed: per mutating action"}
	// CloudWatch's documented quotas, transactions per second per
	// action (a second's worth of burst).
	CloudWatchRates = map[string]Rate{
		"DescribeAlarms": {Burst: 9, PerSecond: 9, Source: "CloudWatch service quotas: DescribeAlarms 9 TPS"},
		"GetMetricData":  {Burst: 50, PerSecond: 50, Source: "CloudWatch service quotas: GetMetricData 50 TPS"},
		"PutMetricAlarm": {Burst: 3, PerSecond: 3, Source: "CloudWatch service quotas: PutMetricAlarm 3 TPS"},
		"DeleteAlarms":   {Burst: 3, PerSecond: 3, Source: "CloudWatch service quotas: DeleteAlarms 3 TPS"},
	}
)

// rateOf is the bucket a call of service's op takes its token from (its
// key, the same for the actions that share a bucket), and false for a
// call the world does not throttle (IAM, SNS, STS: ferry calls them a
// few times a deploy).
func rateOf(service, op string) (string, Rate, bool) {
	describe := strings.HasPrefix(op, "Describe") || strings.HasPrefix(op, "Get") || strings.HasPrefix(op, "List")
	switch service {
	case serviceELB, serviceELBv2:
		if describe {
			return service + " Describe*", ELBDescribe, true
		}
		return service + " " + op, ELBMutate, true
	case serviceEC2:
		if describe {
			return service + " " + op, EC2Describe, true
		}
		return service + " " + op, EC2Mutate, true
	case serviceAutoScaling:
		if describe {
			return service + " " + op, AutoScalingDescribe, true
		}
		return service + " " + op, AutoScalingMutate, true
	case serviceCloudWatch:
		r, ok := CloudWatchRates[op]
		return service + " " + op, r, ok
	}
	return "", Rate{}, false
}

// bucket is one token bucket at a moment.
type bucket struct {
	tokens float64
	at     time.Time
}

// take takes a token at t, refilling first; it reports false when there
// is none.
func (b *bucket) take(r Rate, t time.Time) bool {
	if b.at.IsZero() {
		b.tokens, b.at = r.Burst, t
	}
	if t.After(b.at) {
		b.tokens = min(r.Burst, b.tokens+t.Sub(b.at).Seconds()*r.PerSecond)
		b.at = t
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// throttleCode is the error code a service answers a throttled call
// with: EC2's RequestLimitExceeded, the Query APIs' Throttling.
func throttleCode(service string) string {
	if service == serviceEC2 {
		return "RequestLimitExceeded"
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
}

// throttle takes a token for the call c at its moment on ctx's Timeline
// (fanout.Offset), retrying as the SDK's standard retryer does (up to
// tuning.AWSMaxAttempts attempts, each after an exponential backoff with
// full jitter: up to 2^attempt seconds, drawn from the call's place in
// the log) with its backoff spent on the Timeline. It returns the
// throttling error when every attempt was throttled. The caller holds
// w.mu.
func (w *World) throttle(ctx context.Context, c Call) error {
	key, r, ok := rateOf(c.Service, c.Op)
	if !w.throttling || !ok {
		return nil
	}
	b := w.buckets[c.Account+"/"+c.Region+"/"+key]
	if b == nil {
		b = &bucket{}
		w.buckets[c.Account+"/"+c.Region+"/"+key] = b
	}
	at := c.At
	op := c.Service + ":" + c.Op
	for attempt := 1; ; attempt++ {
		if b.take(r, at) {
			return nil
		}
		if attempt == tuning.AWSMaxAttempts {
			w.throttles.Failed[op]++
			return apiErr(throttleCode(c.Service), "Rate exceeded")
		}
		w.throttles.Retried[op]++
		u := float64(seed(c.Account+op, strings.Repeat("x", attempt)+c.At.String())%1e6) / 1e6
		backoff := time.Duration(u * float64(time.Duration(1<<attempt)*time.Second))
		fanout.Spend(ctx, backoff)
		at = at.Add(backoff)
	}
}

// Throttles returns the throttled calls so far.
func (w *World) Throttles() Throttles {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := Throttles{Retried: map[string]int{}, Failed: map[string]int{}}
	for k, v := range w.throttles.Retried {
		out.Retried[k] = v
	}
	for k, v := range w.throttles.Failed {
		out.Failed[k] = v
	}
	return out
}
