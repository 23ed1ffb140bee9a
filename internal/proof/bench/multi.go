package bench

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/fanout"
	"github.com/ferryhq/ferry/internal/local/region"
	"github.com/ferryhq/ferry/internal/local/sim"
)

// Multi is what K deploys of S services each (one instance a service),
// started at the same moment in one account and region, cost the
// account's request rates, on a world that throttles as AWS does
// (sim.WorldSpec.Throttle: a token bucket per API, a throttled call
// retried as the SDK does).
type Multi struct {
	Deploys   int `json:"deploys"`
	Services  int `json:"services"`
	Succeeded int `json:"succeeded"`
	// PreviousSucceeded are the deploys of the first round (the releases
	// the measured ones replace; those that failed leave nothing to
	// replace) that succeeded.
	PreviousSucceeded int `json:"previous_succeeded"`
	// ThrottledToRetry are the task invocations that failed because AWS
	// throttled them (every failure throttling: cloud.Throttled): the
	// state machine's retry, or the deploy's failure, took over.
	ThrottledToRetry int `json:"throttled_to_retry"`
	// ThrottledToRetryByTask are ThrottledToRetry by task, with the first
	// such failure's message.
	ThrottledToRetryByTask map[string]int `json:"throttled_to_retry_by_task,omitempty"`
	FirstThrottledToRetry  string         `json:"first_throttled_to_retry,omitempty"`
	// ThrottledCalls are the calls throttled at every attempt of the
	// SDK's retryer, which a task's loop waited out (a health check, a
	// step of the retirement, a round of Deploy taken again after a wait)
	// or failed for (ThrottledToRetry); ThrottledRetried are the attempts
	// the SDK's retryer absorbed.
	ThrottledCalls   int `json:"throttled_calls"`
	ThrottledRetried int `json:"throttled_retried"`
	// ThrottledByOp are ThrottledCalls by "service:op".
	ThrottledByOp map[string]int `json:"throttled_by_op,omitempty"`
	// CallsByOp are the measured round's calls by "service:op", AWS's
	// request buckets' share of them by bucket (sim.BucketOf).
	CallsByOp     map[string]int `json:"calls_by_op,omitempty"`
	CallsByBucket map[string]int `json:"calls_by_bucket,omitempty"`
	// AutoScalingCallsByTask are the measured round's calls to Auto
	// Scaling's one shared bucket by the task that made them and the
	// operation, "Task op": the account's scarcest request rate.
	AutoScalingCallsByTask map[string]int `json:"auto_scaling_calls_by_task,omitempty"`
	// DescribeTargetHealthPerS and DescribeASGPerS are those calls' mean
	// rate over Seconds, from the deploys' start to the last one's end;
	// MaxCallsInASecond the most calls to any one request bucket
	// (sim.BucketOf: the calls that share one, as AWS documents them) in
	// any one second, of BusiestBucket, every attempt counted
	// (sim.World.Attempts: the SDK's retries of throttled calls too);
	// MaxCallsInASecondByBucket each bucket's.
	DescribeTargetHealthPerS  float64        `json:"describe_target_health_per_s"`
	DescribeASGPerS           float64        `json:"describe_asg_per_s"`
	MaxCallsInASecond         int            `json:"max_calls_in_a_second"`
	BusiestBucket             string         `json:"busiest_bucket,omitempty"`
	MaxCallsInASecondByBucket map[string]int `json:"max_calls_in_a_second_by_bucket,omitempty"`
	Seconds                   float64        `json:"seconds"`
	// BusySeconds are the seconds in which a request bucket took more
	// than its burst's worth of attempts (busyOver), busiest first (at
	// most busyShown of each bucket's), each with the first attempts of the calls
	// made in it by "Task op" (the rest of its attempts are the SDK's
	// retries of calls throttled before); SecondsOverByBucket how many
	// such seconds each bucket had.
	BusySeconds         []BusySecond   `json:"busy_seconds,omitempty"`
	SecondsOverByBucket map[string]int `json:"seconds_over_by_bucket,omitempty"`
	// Failure is the first deploy's failure, when one did not succeed.
	Failure string `json:"failure,omitempty"`
	// Runs are every run's figures when the Multi is the worst of several
	// (WorstMulti), this one's among them.
	Runs []MultiRun `json:"runs,omitempty"`
}

// MultiRun is one run of RunMulti in brief: what multi_project judges.
type MultiRun struct {
	Succeeded        int `json:"succeeded"`
	ThrottledToRetry int `json:"throttled_to_retry"`
	// DescribesPerS is the greater of DescribeTargetHealthPerS and
	// DescribeASGPerS.
	DescribesPerS     float64 `json:"describes_per_s"`
	MaxCallsInASecond int     `json:"max_calls_in_a_second"`
	BusiestBucket     string  `json:"busiest_bucket,omitempty"`
}

// run is m in brief.
func (m *Multi) run() MultiRun {
	return MultiRun{Succeeded: m.Succeeded, ThrottledToRetry: m.ThrottledToRetry, DescribesPerS: max(m.DescribeTargetHealthPerS, m.DescribeASGPerS),
		MaxCallsInASecond: m.MaxCallsInASecond, BusiestBucket: m.BusiestBucket}
}

// every is each run m is the worst of (Runs), or m itself when it is one
// run: the target holds only when it holds on every one.
func (m *Multi) every() []MultiRun {
	if len(m.Runs) == 0 {
		return []MultiRun{m.run()}
	}
	return m.Runs
}

// RunMultiTimes runs RunMulti n times and returns the worst run
// (WorstMulti). Its figures vary from run to run with the order in which
// the deploys' goroutines reach the region at one virtual moment, and a
// target holds on the worst run, never on a lucky one.
func RunMultiTimes(ctx context.Context, n, k, s int, opts GridOptions) (*Multi, error) {
	runs := make([]*Multi, 0, n)
	for range n {
		m, err := RunMulti(ctx, k, s, opts)
		if err != nil {
			return nil, err
		}
		runs = append(runs, m)
	}
	return WorstMulti(runs), nil
}

// WorstMulti is the worst of runs (at least one), with every run's
// figures in its Runs: the one with the fewest deploys succeeded, then
// the most tasks throttled to their retry, then the most describes a
// second, then the most calls to one bucket in a second.
func WorstMulti(runs []*Multi) *Multi {
	worst := slices.MaxFunc(runs, func(a, b *Multi) int {
		return cmp.Or(
			cmp.Compare(b.Succeeded, a.Succeeded),
			cmp.Compare(a.ThrottledToRetry, b.ThrottledToRetry),
			cmp.Compare(max(a.DescribeTargetHealthPerS, a.DescribeASGPerS), max(b.DescribeTargetHealthPerS, b.DescribeASGPerS)),
			cmp.Compare(a.MaxCallsInASecond, b.MaxCallsInASecond))
	})
	out := *worst
	out.Runs = nil
	for _, m := range runs {
		out.Runs = append(out.Runs, m.run())
	}
	return &out
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// RunMulti deploys a previous release of each of k projects of s
// services, all at once, then the measured releases of all k at once,
// and measures the second round. A deploy that fails is counted, not an
// error.
func RunMulti(ctx context.Context, k, s int, opts GridOptions) (*Multi, error) {
	r, err := multiRegion(ctx, k, s, opts)
	if err != nil {
		return nil, fmt.Errorf("bench: %d deploys: %w", k, err)
	}
	defer r.Close()
	sub, err := newSubmitter(r.Region)
	if err != nil {
		return nil, err
	}
	defer sub.close()
	previous, _ := deployAll(ctx, r.Region, sub, k, s, 0)
	before, tasksBefore := r.World().Throttles(), r.throttledTasks.Load()
	logged := len(r.World().CallLog())
	began := r.Clock().Now()
	r.mu.Lock()
	r.measure = true
	r.mu.Unlock()
	n, failed := deployAll(ctx, r.Region, sub, k, s, 1)
	ended := r.Clock().Now()
	after := r.World().Throttles()
	m := &Multi{Deploys: k, Services: s, Succeeded: n, PreviousSucceeded: previous, Failure: errString(failed), Seconds: round3(ended.Sub(began).Seconds()),
		ThrottledToRetry: int(r.throttledTasks.Load() - tasksBefore),
		ThrottledCalls:   total(after.Failed) - total(before.Failed), ThrottledRetried: total(after.Retried) - total(before.Retried),
		ThrottledByOp: diff(before.Failed, after.Failed), ThrottledToRetryByTask: r.byTask, FirstThrottledToRetry: r.first}
	r.mu.Lock()
	m.AutoScalingCallsByTask = r.asgBy
	r.mu.Unlock()
	m.rates(r.World().CallLog()[logged:], ended.Sub(began))
	m.busiest(r.World().Attempts(), began)
	r.mu.Lock()
	m.busySeconds(r.World().Attempts(), r.firsts, began)
	r.mu.Unlock()
	return m, nil
}

// BusySecond is one request bucket's attempts in one second.
type BusySecond struct {
	Bucket string `json:"bucket"`
	// At is the second's start, in seconds since the measured deploys
	// started.
	At       int64 `json:"at"`
	Attempts int   `json:"attempts"`
	// Retries are the attempts that were the SDK's retries (Attempts
	// less the calls first made in the second).
	Retries int `json:"retries"`
	// FirstByTask are the calls first made in the second, by "Task op".
	FirstByTask map[string]int `json:"first_by_task"`
}

// busyOver is the attempts in a second above which BusySeconds shows it:
// Auto Scaling's and Elastic Load Balancing's Describe burst (see
// package sim), the most multi_project allows.
const busyOver = MaxBucketCallsInOneSecond

// busyShown is how many of each bucket's busiest seconds BusySeconds
// shows.
const busyShown = 4

// busyRegion is a region whose account many deploys share, counting
// the task invocations that failed because AWS throttled them.
type busyRegion struct {
	*region.Region
	throttledTasks atomic.Int64

	mu     sync.Mutex
	byTask map[string]int
	asgBy  map[string]int
	// firsts are the measured round's calls by bucket and second (of
	// their first attempt) and "Task op".
	firsts  map[sim.BucketSecond]map[string]int
	first   string
	measure bool
}

// throttledTask counts a task AWS's throttling failed.
func (b *busyRegion) throttledTask(task string, err error) {
	b.throttledTasks.Add(1)
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.measure {
		return
	}
	b.byTask[task]++
	if b.first == "" {
		b.first = task + ": " + err.Error()
	}
}

// multiRegion is a region on the world of k projects of s services that
// throttles, each task's calls passing their modelled time.
func multiRegion(ctx context.Context, k, s int, opts GridOptions) (*busyRegion, error) {
	opts = opts.withDefaults()
	cost := Options{CallCost: opts.CallCost}.withDefaults().CallCost
	projects := make([]int, k)
	for i := range projects {
		projects[i] = i
	}
	world := Worlds(Cell{Services: s, Instances: 1}, projects...)
	world.Throttle = true
	world.Limits = sim.Quotas{AutoScalingGroups: 3*k*s + 10, LaunchTemplates: 3*k*s + 10, Alarms: 6*k*s + 10}
	b := &busyRegion{byTask: map[string]int{}, asgBy: map[string]int{}, firsts: map[sim.BucketSecond]map[string]int{}}
	r, err := region.New(ctx, region.Options{
		World: world,
		Clock: clock.NewVirtual(Start),
		Intercept: func(ctx context.Context, req execution.Request, next region.Invoke) (json.RawMessage, error) {
			ctx, tl := fanout.WithTimeline(ctx)
			ctx = context.WithValue(ctx, taskKey{}, req.Task)
			out, err := next(ctx, req)
			if cloud.Throttled(err) {
				b.throttledTask(req.Task, err)
			}
			if perr := b.Pass(ctx, tl.Elapsed()); perr != nil {
				return nil, perr
			}
			return out, err
		},
	})
	if err != nil {
		return nil, err
	}
	b.Region = r
	shared := sim.BucketOf(autoScaling, "DescribeAutoScalingGroups")
	r.World().OnCall(func(ctx context.Context, c sim.Call) {
		fanout.Spend(ctx, cost)
		task, _ := ctx.Value(taskKey{}).(string)
		bucket := sim.BucketOf(c.Service, c.Op)
		b.mu.Lock()
		defer b.mu.Unlock()
		if !b.measure || bucket == "" {
			return
		}
		if task != "" && bucket == shared {
			b.asgBy[task+" "+c.Op]++
		}
		k := sim.BucketSecond{Account: c.Account, Region: c.Region, Bucket: bucket, Second: c.At.Unix()}
		if b.firsts[k] == nil {
			b.firsts[k] = map[string]int{}
		}
		b.firsts[k][task+" "+c.Op]++
	})
	return b, nil
}

// taskKey is the context key of the task whose invocation makes a call.
type taskKey struct{}

// autoScaling is Auto Scaling's service id, as sim.Call names it.
const autoScaling = "Auto Scaling"

// deployAll starts the version-th release of each of k projects of s
// services at one moment, waits for every one, and returns how many
// succeeded and the first failure.
func deployAll(ctx context.Context, r *region.Region, sub *submitter, k, s, version int) (succeeded int, err error) {
	release := r.Hold()
	arns := make([]string, k)
	for i := range k {
		if arns[i], err = sub.start(ctx, Cell{Services: s, Instances: 1, Project: i}, version); err != nil {
			release()
			return 0, err
		}
	}
	release()
	for _, arn := range arns {
		if _, werr := sub.wait(ctx, arn); werr == nil {
			succeeded++
		} else if err == nil {
			err = werr
		}
	}
	return succeeded, err
}

// rates counts the DescribeTargetHealth and DescribeAutoScalingGroups of
// calls over span (their mean rate), and the calls by operation and by
// bucket.
func (m *Multi) rates(calls []sim.Call, span time.Duration) {
	counts := map[string]int{}
	m.CallsByOp, m.CallsByBucket = map[string]int{}, map[string]int{}
	for _, c := range calls {
		counts[c.Op]++
		m.CallsByOp[c.Service+":"+c.Op]++
		if bucket := sim.BucketOf(c.Service, c.Op); bucket != "" {
			m.CallsByBucket[bucket]++
		}
	}
	if secs := span.Seconds(); secs > 0 {
		m.DescribeTargetHealthPerS = round3(float64(counts["DescribeTargetHealth"]) / secs)
		m.DescribeASGPerS = round3(float64(counts["DescribeAutoScalingGroups"]) / secs)
	}
}

// busiest finds the most attempts one request bucket took in one second
// from since on, overall and by bucket.
func (m *Multi) busiest(attempts map[sim.BucketSecond]int, since time.Time) {
	m.MaxCallsInASecondByBucket = map[string]int{}
	for k, n := range attempts {
		if k.Second < since.Unix() {
			continue
		}
		m.MaxCallsInASecondByBucket[k.Bucket] = max(m.MaxCallsInASecondByBucket[k.Bucket], n)
		if n > m.MaxCallsInASecond || (n == m.MaxCallsInASecond && k.Bucket < m.BusiestBucket) {
			m.MaxCallsInASecond, m.BusiestBucket = n, k.Bucket
		}
	}
}

// busySeconds fills BusySeconds and SecondsOverByBucket from attempts
// and the calls first made in each second (firsts), from since on.
func (m *Multi) busySeconds(attempts map[sim.BucketSecond]int, firsts map[sim.BucketSecond]map[string]int, since time.Time) {
	m.SecondsOverByBucket = map[string]int{}
	var busy []sim.BucketSecond
	for k, n := range attempts {
		if k.Second >= since.Unix() && n > busyOver {
			m.SecondsOverByBucket[k.Bucket]++
			busy = append(busy, k)
		}
	}
	slices.SortFunc(busy, func(a, b sim.BucketSecond) int {
		return cmp.Or(cmp.Compare(attempts[b], attempts[a]), cmp.Compare(a.Second, b.Second), cmp.Compare(a.Bucket, b.Bucket))
	})
	shown := map[string]int{}
	for _, k := range busy {
		if shown[k.Bucket] == busyShown {
			continue
		}
		shown[k.Bucket]++
		first := 0
		for _, n := range firsts[k] {
			first += n
		}
		m.BusySeconds = append(m.BusySeconds, BusySecond{Bucket: k.Bucket, At: k.Second - since.Unix(), Attempts: attempts[k],
			Retries: attempts[k] - first, FirstByTask: maps.Clone(firsts[k])})
	}
}

func round3(x float64) float64 { return round(x, 3) }
