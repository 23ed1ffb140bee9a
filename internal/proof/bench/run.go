package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime/metrics"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/ferryhq/ferry/client/submit"
	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/fanout"
	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/local/region"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/tuning"
)

// Start is the simulated time every run starts at.
var Start = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

// Options are a run's: the modelled cost of a call and the world's seed.
type Options struct {
	// CallCost is the time one AWS or S3 call takes (default
	// DefaultCallCost): a task's invocation passes its calls' time in
	// virtual time before it returns, calls made side by side counted
	// once (package fanout), or, for a Sequential model, every call.
	CallCost time.Duration
	// Seed varies the instances' boot and health times (sim.WorldSpec's
	// Seed; 0 is a seed like any other).
	Seed uint64
	// Remote, when set, starts what runs the measured release's tasks
	// apart from the region (a handler process: ServeHandler), once the
	// previous release has succeeded: Run then serves the region and its
	// simulated AWS on a loopback listener of its own and gives Remote
	// its URL. Its error ends the run. The previous release's tasks run
	// in-process.
	Remote func(endpoint string) (Handler, error)
}

// DefaultCallCost is a call's modelled time: the order of an AWS API
// call's latency from a Lambda function in the same region.
const DefaultCallCost = 30 * time.Millisecond

func (o Options) withDefaults() Options {
	if o.CallCost <= 0 {
		o.CallCost = DefaultCallCost
	}
	return o
}

// Model is a deployer timing: the waits the same state machine and
// handlers run with.
type Model struct {
	Name string
	// Sequential makes every call of a task take its time one after the
	// other, as the reference design made them (ferry's health checks ask
	// their load balancers side by side).
	Sequential bool
	// FirstWait is the wait after Deploy before the first health check
	// and Interval the wait between two (zero: the deployer's own pacing,
	// package pacing). A run sets them in the wait_seconds of Deploy's and
	// CheckHealthy's results, which the state machine's WaitForHealthy
	// reads.
	FirstWait, Interval time.Duration
}

var (
	// Ferry is ferry's own timing: the deployer's pacing.
	Ferry = Model{Name: "ferry"}
	// Reference models the design's reference deployer: a fixed 30 s wait
	// after Deploy, then a health check every 15 s.
	Reference = Model{Name: "reference", FirstWait: 30 * time.Second, Interval: 15 * time.Second, Sequential: true}
)

// Measurement is what one model's measured release cost in one cell.
type Measurement struct {
	Cell  Cell
	Model string

	// AWSCalls and S3Calls are the calls the handlers made; ByOp both,
	// keyed "service:Operation" (autoscaling, ec2, elb, elbv2, iam, sns,
	// cloudwatch, sts, s3).
	AWSCalls, S3Calls int
	ByOp              map[string]int
	// CheckCalls are the calls of each CheckHealthy invocation, in order,
	// but for those it makes once a deploy (checkReads); CheckByOp sums them by
	// operation; FullCheckByOp is the costliest check (the first of them)
	// by operation.
	CheckCalls    []int
	CheckByOp     map[string]int
	FullCheckByOp map[string]int

	// Transitions are the states entered (StateEntered events);
	// HistoryEvents every event of the execution's history.
	Transitions   int
	HistoryEvents int
	// Invocations are the Lambda invocations (tasks run).
	Invocations int
	// HandlerTime is the handlers' total real run time, HandlerTimeByTask
	// per task, HandlerMax the longest invocation (of HandlerMaxTask),
	// HandlerMaxCPU the CPU time of the process that ran it during it. A
	// task run by a remote Handler counts its real time but for what it
	// waited for the region's answers (Invocation.Waited: AWS's side),
	// HandlerMaxWaited for the longest, and never less than its CPU time
	// at the Lambda's share (ownTime).
	HandlerTime       time.Duration
	HandlerTimeByTask map[string]time.Duration
	HandlerMax        time.Duration
	HandlerMaxTask    string
	HandlerMaxCPU     time.Duration
	HandlerMaxWaited  time.Duration
	// HandlerLambdaMax is the longest invocation's time on the
	// deployer's Lambda (of HandlerLambdaMaxTask): the process's CPU time
	// during it, scaled to the Lambda's CPU share (OnLambda). It counts
	// the in-process simulated AWS and S3 answering the handler, and
	// every thread's time, so it is an upper bound; only a run alone (a
	// cell's first seed) measures it without others' work.
	HandlerLambdaMax     time.Duration
	HandlerLambdaMaxTask string
	// HandlerPeakHeap bounds the heap one invocation needs above the
	// process's resting heap: the most bytes allocated during one
	// invocation (runtime/metrics /gc/heap/allocs:bytes before and after;
	// the collector may free some of it during the call, never more is
	// live). It counts what the in-process simulated AWS and S3 server
	// allocate to answer the handler too, so it is an upper bound.
	HandlerPeakHeap     uint64
	HandlerPeakHeapTask string

	// MaxPayload is the largest payload passed between states: state
	// inputs and outputs and Lambda requests and results, but for the
	// execution's input on its way to Validate (the release itself,
	// ExecutionInput bytes, through the entry Choice; Validate replaces it
	// by the State).
	MaxPayload     int
	MaxPayloadAt   string
	ExecutionInput int

	// LastHealthy is when the last instance the release needed became
	// healthy, CleanUpSuccess when CleanUpSuccess was entered, both after
	// the execution's start; AddedLatency = CleanUpSuccess - LastHealthy -
	// StableWindow: what the deployer adds beyond the stability window the
	// release asks for (every service must hold its target that long
	// before the previous release is retired, a cost the release chooses).
	// Duration is the execution's, start to end (simulated).
	LastHealthy    time.Duration
	CleanUpSuccess time.Duration
	AddedLatency   time.Duration
	Duration       time.Duration
	// Floor is the deploy's physical floor: the longest time, over the
	// services, an instance the release needed took from its launch to
	// healthy (boot and one passing load balancer health check: its
	// service's target-th quickest), plus the stability window. No
	// deployer could enter CleanUpSuccess sooner after the execution's
	// start; CleanUpSuccess - Floor is all a deploy adds, the time before
	// its instances launch included.
	Floor time.Duration
	// FirstLaunch and LastLaunch are when the first and the last
	// instance the release needed launched, after the execution's start
	// (sim.World.InstanceTimes: when the Auto Scaling call that launched
	// them got through, a throttled attempt's backoff after the first):
	// time before them is the deploy's, over its Floor.
	FirstLaunch, LastLaunch time.Duration
	// Deployed is when Deploy ended and Checks when each CheckHealthy
	// started, after the execution's start (the model's waits between
	// them).
	Deployed time.Duration
	Checks   []time.Duration
	// Steps are the states the measured execution entered, in order, each
	// with when it was entered after the execution's start: where its
	// time went.
	Steps []Step

	// LambdaBilled is the invocations' billed time: each one's modelled
	// call time and its handler's real run time, rounded up to the
	// millisecond.
	LambdaBilled time.Duration

	// ThrottledRetried are the attempts the simulated AWS throttled and
	// the SDK's retryer retried, ThrottledFailed the calls throttled at
	// every attempt (the handler got the throttling error), both by
	// "service:op", during the measured release.
	ThrottledRetried, ThrottledFailed map[string]int

	// Wall is the real time the run took (both releases).
	Wall time.Duration
}

// Step is a state entered at a moment after the execution's start.
type Step struct {
	State string
	At    time.Duration
}

// APICalls is every call the handlers made, AWS and S3.
func (m *Measurement) APICalls() int { return m.AWSCalls + m.S3Calls }

// CallsPerCheck is the mean number of calls of one health check.
func (m *Measurement) CallsPerCheck() float64 {
	if len(m.CheckCalls) == 0 {
		return 0
	}
	return float64(sum(m.CheckCalls)) / float64(len(m.CheckCalls))
}

// CallsPerCheckMax is the most calls one health check made.
func (m *Measurement) CallsPerCheckMax() int {
	if len(m.CheckCalls) == 0 {
		return 0
	}
	return slices.Max(m.CheckCalls)
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// Run deploys two releases of cell c with model m's timing on a fresh
// local region on virtual time (the previous release, then the measured
// one) and measures the second. Either release not succeeding is an error
// naming the states it went through.
func Run(ctx context.Context, c Cell, m Model, opts Options) (*Measurement, error) {
	if c.Services < 1 || c.Instances < 1 {
		return nil, fmt.Errorf("bench: cell %s: services and instances must be at least 1", c)
	}
	opts = opts.withDefaults()
	began := time.Now()
	rec := &recorder{model: m, cost: opts.CallCost, s3: newS3Calls(opts.CallCost)}
	clk := clock.NewVirtual(Start)
	world := World(c)
	world.Seed = opts.Seed
	r, err := region.New(ctx, region.Options{
		World:     world,
		Clock:     clk,
		Observer:  rec.observe,
		Intercept: rec.intercept,
		Store:     rec.s3.store,
		Assets:    rec.s3.assets,
	})
	if err != nil {
		return nil, fmt.Errorf("bench: %s: %w", c, err)
	}
	defer r.Close()
	rec.region, rec.world = r, r.World()
	r.World().OnCall(func(ctx context.Context, _ sim.Call) { fanout.Spend(ctx, opts.CallCost) })

	sub, err := newSubmitter(r)
	if err != nil {
		return nil, fmt.Errorf("bench: %s: %w", c, err)
	}
	defer sub.close()
	if _, err := sub.deploy(ctx, c, 0); err != nil {
		return nil, fmt.Errorf("bench: %s %s: the previous release: %w", c, m.Name, err)
	}
	if opts.Remote != nil {
		endpoint, stop, err := serveRegion(r)
		if err != nil {
			return nil, fmt.Errorf("bench: %s %s: %w", c, m.Name, err)
		}
		defer stop()
		if rec.remote, err = opts.Remote(endpoint); err != nil {
			return nil, fmt.Errorf("bench: %s %s: %w", c, m.Name, err)
		}
	}
	r.World().ResetCalls()
	before := r.World().Throttles()
	rec.begin(c)
	if d, err := sub.deploy(ctx, c, 1); err != nil && !(c.fails() && d.Status == asl.StatusFailed) {
		return nil, fmt.Errorf("bench: %s %s: the measured release: %w", c, m.Name, err)
	}
	out, err := rec.finish()
	if err != nil {
		return nil, fmt.Errorf("bench: %s %s: %w", c, m.Name, err)
	}
	after := r.World().Throttles()
	out.ThrottledRetried, out.ThrottledFailed = diff(before.Retried, after.Retried), diff(before.Failed, after.Failed)
	out.Wall = time.Since(began)
	return out, nil
}

// submitter submits a cell's releases to the region as ferry deploy does
// (package submit): from release files written next to the asset's file,
// each prepared with its identity proof, uploaded with the asset, and
// started under its execution name.
type submitter struct {
	r   *region.Region
	dir string
	d   submit.Deployer
}

// newSubmitter writes AssetContent to a new directory; close removes it.
func newSubmitter(r *region.Region) (*submitter, error) {
	dir, err := os.MkdirTemp("", "ferry-bench-")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, AssetFile), AssetContent, 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	d := submit.Deployer{Bucket: r.Bucket(), StateMachineARN: r.StateMachineARN(), S3: r.S3(), SFN: r.SFN()}
	return &submitter{r: r, dir: dir, d: d}, nil
}

func (s *submitter) close() { _ = os.RemoveAll(s.dir) }

// deploy submits the k-th release of the cell at the region's now and
// waits for it to succeed.
func (s *submitter) deploy(ctx context.Context, c Cell, k int) (asl.Description, error) {
	arn, err := s.start(ctx, c, k)
	if err != nil {
		return asl.Description{}, err
	}
	return s.wait(ctx, arn)
}

// start submits the k-th release of the cell at the region's now and
// returns its execution's ARN.
func (s *submitter) start(ctx context.Context, c Cell, k int) (string, error) {
	raw, err := ReleaseFile(c, k+1)
	if err != nil {
		return "", err
	}
	file := filepath.Join(s.dir, fmt.Sprintf("release-%d-%d.json", c.Project, k))
	if err := os.WriteFile(file, raw, 0o600); err != nil {
		return "", err
	}
	rel, err := release.ReadFile(file)
	if err != nil {
		return "", err
	}
	now := s.r.Clock().Now()
	p, err := submit.Prepare(ctx, s.r.Signer(), rel, file, now, "bench", ReleaseID(now, k))
	if err != nil {
		return "", err
	}
	if err := s.d.Upload(ctx, p); err != nil {
		return "", err
	}
	return s.d.Start(ctx, p)
}

// wait waits for the execution arn to end and says how, an error when it
// did not succeed.
func (s *submitter) wait(ctx context.Context, arn string) (asl.Description, error) {
	d, err := s.r.Wait(ctx, arn)
	if err != nil {
		return asl.Description{}, err
	}
	if d.Status != asl.StatusSucceeded {
		return d, fmt.Errorf("execution %s ended %s (%s: %s)", d.Name, d.Status, d.Error, failure.Message(d.Cause))
	}
	return d, nil
}

// recorder measures the executions of one region: the region's Intercept
// and Observer. Between begin and finish it records; before, it only
// applies the model.
type recorder struct {
	model  Model
	cost   time.Duration
	region *region.Region
	s3     *s3Calls
	world  *sim.World
	// remote, when set, runs the tasks instead of the region's deployer.
	remote Handler

	mu    sync.Mutex
	on    bool
	m     *Measurement
	state string // the state the execution is in
	// release says the payload is still the release itself (the
	// execution's input, through the entry Choice into Validate), until
	// Validate replaces it by the State.
	release bool
	started time.Time
	cleanup time.Time
	needed  needed
	err     error
}

// begin starts measuring.
func (rec *recorder) begin(c Cell) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.on = true
	rec.state, rec.release = "", false
	rec.started, rec.cleanup, rec.needed, rec.err = time.Time{}, time.Time{}, needed{}, nil
	rec.m = &Measurement{
		Cell: c, Model: rec.model.Name,
		ByOp: map[string]int{}, CheckByOp: map[string]int{}, HandlerTimeByTask: map[string]time.Duration{},
	}
}

// finish stops measuring and returns the measurement.
func (rec *recorder) finish() (*Measurement, error) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.on = false
	if rec.err != nil {
		return nil, rec.err
	}
	m := rec.m
	if m.Cell.fails() {
		return m, nil
	}
	if rec.cleanup.IsZero() {
		return nil, errors.New("the measured release never entered " + execution.TaskCleanUpSuccess)
	}
	m.CleanUpSuccess = rec.cleanup.Sub(rec.started)
	m.LastHealthy = rec.needed.healthy.Sub(rec.started)
	m.Floor = rec.needed.floor + StableWindow
	m.AddedLatency = rec.cleanup.Sub(rec.needed.healthy) - StableWindow
	m.FirstLaunch, m.LastLaunch = rec.needed.firstLaunch.Sub(rec.started), rec.needed.lastLaunch.Sub(rec.started)
	return m, nil
}

func (rec *recorder) recording() bool {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.on
}

// intercept runs one task (in-process, or by the remote Handler): its
// calls timed (the model's cost of them passes in virtual time before
// the task returns), and, while recording, its real run time,
// allocations and calls counted; then the model's waits set.
func (rec *recorder) intercept(ctx context.Context, req execution.Request, next region.Invoke) (json.RawMessage, error) {
	awsBefore := rec.world.TotalCalls()
	backoffBefore := rec.world.Throttles().Backoff
	var inv Invocation
	if rec.remote != nil {
		var err error
		if inv, err = rec.remote.Invoke(ctx, req, rec.region.Clock().Now()); err != nil {
			return nil, err
		}
	} else {
		inv = runTask(ctx, rec.s3, func(ctx context.Context) (json.RawMessage, error) { return next(ctx, req) })
	}
	log := rec.world.CallLog()
	ops := map[string]int{}
	for _, c := range log[min(awsBefore, len(log)):] {
		ops[opKey(c.Service, c.Op)]++
	}
	aws := total(ops)
	addTo(ops, inv.S3)
	spent := inv.Spent
	if rec.model.Sequential {
		// One call after the other, each retry's backoff waited too.
		spent = time.Duration(total(ops))*rec.cost + rec.world.Throttles().Backoff - backoffBefore
	}
	if perr := rec.region.Pass(ctx, spent); perr != nil {
		return nil, perr
	}
	if rec.recording() {
		rec.count(req.Task, ops, aws, total(inv.S3), inv, billed(spent+inv.Took))
	}
	return rec.pace(req, inv.Output, inv.Err)
}

// count adds one invocation of task to the measurement.
func (rec *recorder) count(task string, ops map[string]int, aws, s3 int, inv Invocation, bill time.Duration) {
	took, cpu, alloc := inv.ownTime(), inv.CPU, inv.Alloc
	rec.mu.Lock()
	defer rec.mu.Unlock()
	m := rec.m
	m.Invocations++
	m.LambdaBilled += bill
	m.AWSCalls += aws
	m.S3Calls += s3
	addTo(m.ByOp, ops)
	if task == execution.TaskCheckHealthy {
		reads := checkReads(ops)
		if n := total(reads); len(m.CheckCalls) == 0 || n > slices.Max(m.CheckCalls) {
			m.FullCheckByOp = reads
		}
		m.CheckCalls = append(m.CheckCalls, total(reads))
		addTo(m.CheckByOp, reads)
	}
	m.HandlerTime += took
	m.HandlerTimeByTask[task] += took
	if took > m.HandlerMax {
		m.HandlerMax, m.HandlerMaxTask, m.HandlerMaxCPU, m.HandlerMaxWaited = took, task, cpu, inv.Waited
	}
	if l := OnLambda(cpu); l > m.HandlerLambdaMax {
		m.HandlerLambdaMax, m.HandlerLambdaMaxTask = l, task
	}
	if alloc > m.HandlerPeakHeap {
		m.HandlerPeakHeap, m.HandlerPeakHeapTask = alloc, task
	}
}

// onceADeploy are the calls the health check that finds a release
// healthy makes once a deploy, whatever its size: the announcement of its
// Release Healthy event, and the clearing of its start marker (it is on
// its way no longer; lock.Starts.Arrive). They count in the deploy's
// calls and not in a check's.
var onceADeploy = []string{"eventbridge:PutEvents", "s3:DeleteObject"}

// checkReads are a health check's calls by operation, ops, without those
// it makes once a deploy (onceADeploy).
func checkReads(ops map[string]int) map[string]int {
	out := maps.Clone(ops)
	for _, op := range onceADeploy {
		delete(out, op)
	}
	return out
}

// pace sets the wait_seconds of a Deploy result to the model's FirstWait
// and of a CheckHealthy or CleanUpSuccess result to its Interval, when it
// has them: the reference model polls at its interval in every loop.
func (rec *recorder) pace(req execution.Request, out json.RawMessage, err error) (json.RawMessage, error) {
	if err != nil {
		return out, err
	}
	switch {
	case req.Task == execution.TaskDeploy && rec.model.FirstWait > 0:
		var st execution.State
		if err := json.Unmarshal(out, &st); err != nil {
			return nil, fmt.Errorf("bench: Deploy's result is not a State: %w", err)
		}
		if st.Health == nil {
			return out, nil
		}
		st.Health.WaitSeconds = int(rec.model.FirstWait / time.Second)
		return json.Marshal(&st)
	case req.Task == execution.TaskCheckHealthy && rec.model.Interval > 0:
		var h execution.Health
		if err := json.Unmarshal(out, &h); err != nil {
			return nil, fmt.Errorf("bench: CheckHealthy's result is not a Health: %w", err)
		}
		h.WaitSeconds = int(rec.model.Interval / time.Second)
		return json.Marshal(&h)
	case req.Task == execution.TaskCleanUpSuccess && rec.model.Interval > 0:
		var st execution.State
		if err := json.Unmarshal(out, &st); err != nil {
			return nil, fmt.Errorf("bench: CleanUpSuccess's result is not a State: %w", err)
		}
		if st.Retire == nil || st.Retire.Done {
			return out, nil
		}
		st.Retire.WaitSeconds = int(rec.model.Interval / time.Second)
		return json.Marshal(&st)
	}
	return out, nil
}

// observe counts transitions and payloads, and at CleanUpSuccess works out
// when the last needed instance became healthy.
func (rec *recorder) observe(_ string, ev asl.Event) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if !rec.on {
		return
	}
	m := rec.m
	m.HistoryEvents++
	payload := func(n int, at string) {
		if n > m.MaxPayload {
			m.MaxPayload, m.MaxPayloadAt = n, at
		}
	}
	switch {
	case ev.ExecutionStarted != nil:
		rec.started, rec.release = ev.Timestamp, true
		m.ExecutionInput = len(ev.ExecutionStarted.Input)
	case ev.StateEntered != nil:
		m.Transitions++
		name := ev.StateEntered.Name
		rec.state = name
		m.Steps = append(m.Steps, Step{State: name, At: ev.Timestamp.Sub(rec.started)})
		if !rec.release {
			payload(len(ev.StateEntered.Input), name+" input")
		}
		if name == execution.TaskCheckHealthy {
			m.Checks = append(m.Checks, ev.Timestamp.Sub(rec.started))
		}
		if name == execution.TaskCleanUpSuccess && rec.cleanup.IsZero() {
			rec.cleanup = ev.Timestamp
			rec.needed, rec.err = lastNeededHealthy(rec.world, ev.StateEntered.Input, ev.Timestamp)
		}
	case ev.StateExited != nil:
		if ev.StateExited.Name == execution.TaskValidate {
			rec.release = false // its output is the State
		}
		if ev.StateExited.Name == execution.TaskDeploy {
			m.Deployed = ev.Timestamp.Sub(rec.started)
		}
		if !rec.release {
			payload(len(ev.StateExited.Output), ev.StateExited.Name+" output")
		}
	case ev.LambdaFunctionScheduled != nil:
		if !rec.release {
			payload(len(ev.LambdaFunctionScheduled.Input), rec.state+" Lambda request")
		}
	case ev.LambdaFunctionSucceeded != nil:
		payload(len(ev.LambdaFunctionSucceeded.Output), rec.state+" Lambda result")
	case ev.ExecutionSucceeded != nil, ev.ExecutionFailed != nil, ev.ExecutionAborted != nil, ev.ExecutionTimedOut != nil:
		m.Duration = ev.Timestamp.Sub(rec.started)
	}
}

// needed is what the instances a release needed (per service, its
// target's number of first healthy ones) tell of a deploy.
type needed struct {
	// healthy is when the last of them became healthy.
	healthy time.Time
	// floor is the longest, over the services, of the target-th quickest
	// launch-to-healthy time.
	floor time.Duration
	// firstLaunch and lastLaunch are when the first and the last of them
	// launched.
	firstLaunch, lastLaunch time.Time
}

// lastNeededHealthy works out needed from the simulation's instance
// times: per service, the moment its target-th instance (the health
// report's target) was both InService and passing its target group's
// health check; the latest over the services. input is CleanUpSuccess's
// input (the State with the last health report); now is when
// CleanUpSuccess was entered.
func lastNeededHealthy(w *sim.World, input string, now time.Time) (needed, error) {
	var st execution.State
	if err := json.Unmarshal([]byte(input), &st); err != nil {
		return needed{}, fmt.Errorf("CleanUpSuccess's input is not a State: %w", err)
	}
	if st.Health == nil || len(st.Health.Services) == 0 {
		return needed{}, errors.New("CleanUpSuccess's input has no health report")
	}
	var n needed
	for svc, sh := range st.Health.Services {
		if sh.Target <= 0 {
			continue
		}
		group := naming.GroupName(st.ProjectName, st.ConfigName, svc, st.ReleaseID)
		times, found := w.InstanceTimes(st.Target.AccountID, st.Target.Region, group)
		if !found {
			return needed{}, fmt.Errorf("service %s: no group %s", svc, group)
		}
		h := healthyTimes(times, now)
		if len(h.at) < sh.Target {
			return needed{}, fmt.Errorf("service %s: %d instances ever healthy, target %d", svc, len(h.at), sh.Target)
		}
		last := h.at[sh.Target-1]
		if last.After(now) {
			return needed{}, fmt.Errorf("service %s: judged healthy at %v, before its %d-th instance was (%v)", svc, now, sh.Target, last)
		}
		if last.After(n.healthy) {
			n.healthy = last
		}
		n.floor = max(n.floor, h.took[sh.Target-1])
		for _, l := range h.launched[:sh.Target] {
			if n.firstLaunch.IsZero() || l.Before(n.firstLaunch) {
				n.firstLaunch = l
			}
			if l.After(n.lastLaunch) {
				n.lastLaunch = l
			}
		}
	}
	if n.healthy.IsZero() {
		return needed{}, errors.New("no service needed a healthy instance")
	}
	return n, nil
}

// healthy is what healthyTimes finds of a group's instances.
type healthy struct {
	// at are, sorted, the moments they were both InService and healthy,
	// launched their launches in the same order; took, sorted on its
	// own, the times each took from its launch to that moment.
	at       []time.Time
	launched []time.Time
	took     []time.Duration
}

// healthyTimes is what the instances of times alive at now, once
// healthy, took.
func healthyTimes(times []sim.InstanceTimes, now time.Time) healthy {
	var ok []sim.InstanceTimes
	for _, it := range times {
		if it.HealthyAt.IsZero() || (!it.Terminating.IsZero() && !it.Terminating.After(now)) {
			continue
		}
		if it.InService.After(it.HealthyAt) {
			it.HealthyAt = it.InService
		}
		ok = append(ok, it)
	}
	slices.SortStableFunc(ok, func(a, b sim.InstanceTimes) int { return a.HealthyAt.Compare(b.HealthyAt) })
	var h healthy
	for _, it := range ok {
		h.at = append(h.at, it.HealthyAt)
		h.launched = append(h.launched, it.Launched)
		h.took = append(h.took, it.HealthyAt.Sub(it.Launched))
	}
	slices.Sort(h.took)
	return h
}

// LambdaCPUShare is the share of a vCPU the deployer's Lambda runs on:
// Lambda allocates CPU in proportion to memory, one vCPU at 1,769 MB
// (Lambda Developer Guide, "Configure Lambda function memory"), so
// tuning.DeployerLambdaMemoryMB of 512 runs on about 0.29 vCPU.
const LambdaCPUShare = float64(tuning.DeployerLambdaMemoryMB) / 1769

// OnLambda is how long cpu of CPU time takes at LambdaCPUShare.
func OnLambda(cpu time.Duration) time.Duration {
	return time.Duration(float64(cpu) / LambdaCPUShare)
}

// ownTime is the invocation's time of its own: its real time but for
// what it waited for the region's answers. A task run alone in a handler
// process takes no less than its CPU time at the Lambda's share: work it
// did while a call was out still took the share's time, which the real
// time less the waits would not count (a Lambda's duration is at least
// its CPU time over its share, however its calls overlap).
func (inv Invocation) ownTime() time.Duration {
	own := inv.Took - inv.Waited
	if inv.Alone {
		own = max(own, OnLambda(inv.CPU))
	}
	return own
}

// processCPU is the process's CPU time so far, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// heapAllocs is the process's cumulative heap allocation in bytes.
func heapAllocs() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
