package reliability

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ferryhq/ferry/internal/capacity"
	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/deployer"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/local/region"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/store/halt"
	"github.com/ferryhq/ferry/internal/store/ledger"
	"github.com/ferryhq/ferry/internal/store/lock"
	"github.com/ferryhq/ferry/statemachine/shape"
)

// Call is one call the execution made: a simulated AWS call or an S3 call
// of the deployer on its bucket.
type Call struct {
	// S3 is true for an S3 call of the deployer's store.
	S3      bool   `json:"s3,omitempty"`
	Service string `json:"service"`
	Op      string `json:"op"`
	Account string `json:"account,omitempty"`
	// Key is the S3 key (or prefix of a list).
	Key string `json:"key,omitempty"`
	// Task is the task whose invocation made the call, Invocation that
	// invocation's number in the execution (1-based).
	Task       string `json:"task"`
	Invocation int    `json:"invocation"`
}

// String is "Service Op" (and the key of an S3 call).
func (c Call) String() string {
	if c.S3 {
		return "S3 " + c.Op + " " + c.Key
	}
	return c.Service + " " + c.Op
}

// Invocation is one task invocation of the execution.
type Invocation struct {
	Task string    `json:"task"`
	At   time.Time `json:"at"`
	// First and End delimit its calls in Result.Calls: [First, End).
	First, End int
	// Err is the error name the state machine saw ("" for a result).
	Err string `json:"error,omitempty"`

	awsFrom, awsTo, s3From, s3To int
}

// Visit is a state the execution entered, and when.
type Visit struct {
	State string
	At    time.Time
}

// RunOptions change one run.
type RunOptions struct {
	// Schedule is injected (the zero Schedule: nothing).
	Schedule Schedule
	// Twice invokes every task of the new release twice (a retry after
	// success) and gives the state machine the second result.
	Twice bool
	// OnState, when set, is called when the new release's execution
	// enters a state, while virtual time stands still (to write a halt
	// marker "during" a state).
	OnState func(reg *region.Region, state string)
	// Next replaces the scenario's next release file.
	Next string
	// CreatedAtSkew moves the next release's created_at away from the
	// region's now (a replayed or forged release).
	CreatedAtSkew time.Duration
	// BeforeStart, when set, runs once the previous release is deployed,
	// before the next one is prepared (to leave a stale halt marker).
	BeforeStart func(reg *region.Region, clk *clock.Virtual) error
	// Wall bounds the run in wall time (default 2 minutes).
	Wall time.Duration
}

// Result is what one run did and every invariant it broke.
type Result struct {
	Schedule Schedule
	// End is Success, FailureClean or FailureDirty; empty when the
	// execution ended elsewhere (Status says how).
	End    string
	Status asl.Status
	// Error and Cause are the failed execution's.
	Error, Cause string
	// ReleaseID is the new release's id; NewGroups the names of its groups
	// (and launch templates).
	ReleaseID   string
	NewGroups   []string
	Calls       []Call
	Invocations []Invocation
	Visits      []Visit
	// Fired says whether every fault of the schedule was injected;
	// FiredIn is the task the first fault fired in, FiredTasks every
	// fault's ("" for one that did not fire).
	Fired      bool
	FiredIn    string
	FiredTasks []string
	// S3Hits are the S3 calls each fault failed ("PutObject <key>"; ""
	// for a fault of another kind or one that did not fire).
	S3Hits []string
	// Lookups are the lookups of each new group and launch template, by
	// kind and name (the consistency schedules' windows come from them).
	Lookups map[sim.HiddenKind]map[string]int
	// Outcome is the ledger's outcome of the new release (nil: none).
	Outcome   *ledger.Outcome
	StartedAt time.Time
	EndedAt   time.Time
	// Before is the world when the new release started, After a while
	// after it ended (deletions done).
	Before, After sim.Snapshot
	// Objects are the deployer bucket's objects under the project-config's
	// prefix after the run (key to bytes); ObjectsBefore when the new
	// release started.
	Objects, ObjectsBefore map[string]string
	// LockHolder is the release holding the lock after the run ("": free).
	LockHolder string
	// HaltMarker says whether a halt marker is left after the run.
	HaltMarker bool
	// Second is the race's second release (nil when none started).
	Second     *Second
	Violations []string
}

// Second is how the second release of a race ended.
type Second struct {
	ReleaseID    string
	End          string
	Error, Cause string
}

// settle is how long virtual time runs on after the execution ends, so
// deleted groups are gone and instances settled before the final checks.
const settle = 15 * time.Minute

// run is the state of one run shared by the region's hooks.
type run struct {
	sc    *Scenario
	opts  RunOptions
	rec   *recorder
	reg   *region.Region
	clk   *clock.Virtual
	locks *lock.Locks
	next  *prepared
	// arn is the next release's execution, once started.
	arn string
	// second is the race's second release; secondARN is set once it
	// started, secondErr when it could not start.
	second    *prepared
	secondARN string
	secondErr error
	// plans are the next release's healthy targets per service;
	// previousTargets the previous release's, by group name.
	plans           map[string]capacity.Plan
	previousTargets map[string]int

	// tasks is held through every task invocation (intercept).
	tasks sync.Mutex

	mu          sync.Mutex
	invocations []Invocation
	visits      []Visit
	lockTaken   bool
	raced       bool
	halted      bool // the failure base's halt marker is written
	violations  []string
}

func (r *run) violate(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	msg := fmt.Sprintf(format, args...)
	if !slices.Contains(r.violations, msg) {
		r.violations = append(r.violations, msg)
	}
}

// Run deploys the scenario's next release over its previous one on a fresh
// region, with opts, and checks the invariants. An error means the run
// could not be set up (the starting state was not reached); a broken
// invariant is a violation in the Result. It is a list of steps: set up
// the region, deploy the previous release, prepare the next, record the
// state before, run the next release, then check the state after.
func (sc *Scenario) Run(ctx context.Context, opts RunOptions) (*Result, error) {
	if opts.Wall == 0 {
		opts.Wall = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Wall)
	defer cancel()
	world, next := sc.files(opts)
	r, err := sc.newRun(ctx, opts, world)
	if err != nil {
		return nil, err
	}
	defer r.reg.Close()
	prev, err := r.deployPrevious(ctx)
	if err != nil {
		return nil, err
	}
	if err := r.prepareNext(ctx, prev, next); err != nil {
		return nil, err
	}
	res, err := r.before(ctx, prev)
	if err != nil {
		return nil, err
	}
	if err := r.execute(ctx, res); err != nil {
		return nil, err
	}
	if err := r.after(ctx, res); err != nil {
		return nil, err
	}
	return res, nil
}

// files returns the world and the next release a run of opts deploys: the
// scenario's, or the variants its schedule's behaviour asks for.
func (sc *Scenario) files(opts RunOptions) (world sim.WorldSpec, next string) {
	world, next = sc.World, opts.Next
	if opts.Schedule.Base == BaseAnalysis {
		next = filepath.Join(filepath.Dir(sc.Next), filepath.Base(AnalysedNext))
	}
	switch opts.Schedule.Behaviour {
	case CrashAfterHealthy:
		next = filepath.Join(filepath.Dir(sc.Next), "v2-crash-after-healthy.json")
	case IdleScaleIn:
		next = filepath.Join(filepath.Dir(sc.Next), "v2-idle.json")
		world = idleWorld(world)
	}
	if next == "" {
		next = sc.Next
	}
	return world, next
}

// newRun starts a region of world on a virtual clock, its store and calls
// passing through the run's faults, with the outsiders' resources seeded.
func (sc *Scenario) newRun(ctx context.Context, opts RunOptions, world sim.WorldSpec) (*run, error) {
	clk := clock.NewVirtual(sc.Start)
	r := &run{sc: sc, opts: opts, clk: clk, rec: &recorder{}}
	for _, f := range opts.Schedule.Faults {
		r.rec.faults = append(r.rec.faults, &armed{Fault: f})
	}
	reg, err := region.New(ctx, region.Options{
		World:               world,
		Clock:               clk,
		HealthCheckInterval: sc.Interval,
		Store:               func(s deployer.Store) deployer.Store { return &faultStore{next: s, rec: r.rec} },
		Intercept:           r.intercept,
		Observer:            r.observe,
	})
	if err != nil {
		return nil, err
	}
	r.reg, r.rec.world = reg, reg.World()
	r.locks = lock.New(reg.S3(), reg.Bucket(), clk)
	if err := seedOutsiders(ctx, reg.World()); err != nil {
		reg.Close()
		return nil, err
	}
	return r, nil
}

// deployPrevious deploys the scenario's previous release to Success, then
// runs the options' BeforeStart.
func (r *run) deployPrevious(ctx context.Context) (*prepared, error) {
	prev, err := prepare(ctx, r.reg, r.sc.Previous, r.clk.Now(), r.sc.By, "a00001")
	if err != nil {
		return nil, fmt.Errorf("reliability: previous release: %w", err)
	}
	if err := deployAndWait(ctx, r.reg, prev); err != nil {
		return nil, fmt.Errorf("reliability: previous release: %w", err)
	}
	if r.opts.BeforeStart != nil {
		if err := r.opts.BeforeStart(r.reg, r.clk); err != nil {
			return nil, err
		}
	}
	return prev, nil
}

// prepareNext prepares the next release (created at the options' skew):
// the file next, or a destroy of prev's project-config; and, when the
// schedule races it, the second release.
func (r *run) prepareNext(ctx context.Context, prev *prepared, next string) error {
	var err error
	if r.sc.Destroy {
		r.next, err = prepareDestroy(ctx, r.reg, prev, r.clk.Now().Add(r.opts.CreatedAtSkew), r.sc.By, "b00002")
	} else {
		r.next, err = prepare(ctx, r.reg, next, r.clk.Now().Add(r.opts.CreatedAtSkew), r.sc.By, "b00002")
	}
	if err != nil {
		return fmt.Errorf("reliability: next release: %w", err)
	}
	if sched := r.opts.Schedule; sched.RaceAt != "" || sched.RaceAfterLost {
		if r.second, err = prepare(ctx, r.reg, r.sc.Next, r.clk.Now(), r.sc.By, "c00003"); err != nil {
			return fmt.Errorf("reliability: second release: %w", err)
		}
	}
	return nil
}

// before records the state before the next release runs (the world, the
// objects, what each service's plan and previous targets are) and arms
// the faults.
func (r *run) before(ctx context.Context, prev *prepared) (*Result, error) {
	rel := r.next.rel
	res := &Result{Schedule: r.opts.Schedule, ReleaseID: rel.ReleaseID, Before: r.reg.World().Snapshot()}
	res.NewGroups = newGroups(rel.ProjectName, rel.ConfigName, rel.ReleaseID, rel.ServiceNames())
	var err error
	if r.plans, err = plans(r.next, res.Before); err != nil {
		return nil, err
	}
	if r.previousTargets, err = previousTargets(prev, res.Before); err != nil {
		return nil, err
	}
	if res.ObjectsBefore, err = objects(ctx, r.reg, rel.ProjectName, rel.ConfigName); err != nil {
		return nil, err
	}
	return res, r.arm()
}

// execute starts the next release, waits for its end and disarms the
// faults, then waits for the second release if there is one.
func (r *run) execute(ctx context.Context, res *Result) error {
	res.StartedAt = r.clk.Now()
	arn, err := r.next.start(ctx, r.reg)
	if err != nil {
		return fmt.Errorf("reliability: next release: %w", err)
	}
	r.arn = arn
	d, err := r.reg.Wait(ctx, arn)
	if err != nil {
		return fmt.Errorf("reliability: next release (%s): %w", r.opts.Schedule, err)
	}
	r.disarm()
	res.EndedAt = d.StopDate
	res.Status, res.Error, res.Cause = d.Status, d.Error, failure.Message(d.Cause)
	res.Second, err = r.waitSecond(ctx)
	return err
}

// after collects what the run saw, lets the world settle, reads the state
// after and checks the invariants, adding every violation to res.
func (r *run) after(ctx context.Context, res *Result) error {
	r.collect(res)
	res.Lookups = map[sim.HiddenKind]map[string]int{}
	for _, kind := range []sim.HiddenKind{sim.HideGroups, sim.HideLaunchTemplates} {
		res.Lookups[kind] = map[string]int{}
		all := r.reg.World().Lookups(kind)
		for _, name := range res.NewGroups {
			res.Lookups[kind][name] = all[name]
		}
	}
	r.clk.Advance(settle)
	res.After = r.reg.World().Snapshot()
	if err := r.readState(ctx, res); err != nil {
		return err
	}
	r.checkEnd(res)
	r.checkServing(res, r.reg.World().Fleet())
	r.checkCuts(res.After)
	r.checkEvents(res)
	r.mu.Lock()
	res.Violations = append(res.Violations, r.violations...)
	r.mu.Unlock()
	return nil
}

// deployAndWait starts a release and waits for its Success.
func deployAndWait(ctx context.Context, reg *region.Region, p *prepared) error {
	arn, err := p.start(ctx, reg)
	if err != nil {
		return err
	}
	d, err := reg.Wait(ctx, arn)
	if err != nil {
		return err
	}
	if d.Status != asl.StatusSucceeded {
		return fmt.Errorf("it did not deploy: %s %s: %s", d.Status, d.Error, d.Cause)
	}
	return nil
}

// arm injects the schedule's world-level faults and starts recording the
// next release's calls.
func (r *run) arm() error {
	w := r.reg.World()
	w.ResetCalls()
	sched := r.opts.Schedule
	for _, f := range r.rec.faults {
		if f.rule == nil {
			continue
		}
		rl := *f.rule
		rl.Err = awsError(f.Kind)
		id, err := w.Faults().Add(rl)
		if err != nil {
			return err
		}
		f.ruleID = id
	}
	if sched.Hide != nil {
		if err := w.Faults().Hide(*sched.Hide); err != nil {
			return err
		}
	}
	if sched.Behaviour == ZoneRecovers {
		info := r.reg.Info()
		if err := w.Faults().ImpairZone(info.Account, info.Region, zoneRecovering, r.clk.Now().Add(zoneRecoversAfter)); err != nil {
			return err
		}
	}
	w.Faults().SetHook(r.rec.awsCall)
	r.rec.mu.Lock()
	r.rec.on = true
	r.rec.mu.Unlock()
	return nil
}

// disarm stops recording.
func (r *run) disarm() {
	r.rec.mu.Lock()
	r.rec.on = false
	r.rec.mu.Unlock()
	r.reg.World().Faults().SetHook(nil)
}

// The zone of the ZoneRecovers behaviour, and how long after the release
// starts it has capacity again.
const (
	zoneRecovering    = "us-east-1b"
	zoneRecoversAfter = 150 * time.Second
)

// idleWorld is the world of the IdleScaleIn behaviour: its images report
// 5% CPU and pass their load balancers' health checks 150 s after they
// boot, so a one-minute cpu_scale_down alarm fires during the deploy.
func idleWorld(w sim.WorldSpec) sim.WorldSpec {
	var out sim.WorldSpec
	b, _ := json.Marshal(w) // a WorldSpec always encodes
	_ = json.Unmarshal(b, &out)
	idle := 5.0
	for i := range out.Accounts {
		for j := range out.Accounts[i].Regions {
			for k := range out.Accounts[i].Regions[j].AMIs {
				a := &out.Accounts[i].Regions[j].AMIs[k]
				a.CPUPercent = &idle
				if a.Timings == nil {
					a.Timings = &sim.Timings{}
				}
				a.Timings.Health = &sim.Range{Min: 150, Max: 150}
			}
		}
	}
	return out
}

// plans computes the healthy target of each service of the next release,
// from the previous groups' desired capacity in snap.
func plans(next *prepared, snap sim.Snapshot) (map[string]capacity.Plan, error) {
	out := map[string]capacity.Plan{}
	rel := next.rel.Clone()
	rel.ApplyDefaults()
	for name, svc := range rel.Services {
		var prev *int
		for _, g := range groupsOf(snap, rel.ProjectName, rel.ConfigName) {
			if g.Tags[naming.TagServiceName] == name && g.Status == "" {
				n := int(g.Desired)
				prev = &n
			}
		}
		as := svc.Autoscaling
		p, err := capacity.Compute(capacity.Bounds{MinSize: as.MinSize, MaxSize: as.MaxSize, Spread: as.Spread, MaxTerms: as.MaxTerms}, prev)
		if err != nil {
			return nil, fmt.Errorf("reliability: capacity of %s: %w", name, err)
		}
		out[name] = p
	}
	return out, nil
}

// previousTargets computes the healthy target of each group of the
// previous release in snap: what its release needs of it to serve.
func previousTargets(prev *prepared, snap sim.Snapshot) (map[string]int, error) {
	rel := prev.rel.Clone()
	rel.ApplyDefaults()
	out := map[string]int{}
	for _, g := range groupsOf(snap, rel.ProjectName, rel.ConfigName) {
		svc := rel.Services[g.Tags[naming.TagServiceName]]
		if svc == nil || g.Status != "" {
			continue
		}
		as := svc.Autoscaling
		desired := int(g.Desired)
		p, err := capacity.Compute(capacity.Bounds{MinSize: as.MinSize, MaxSize: as.MaxSize, Spread: as.Spread, MaxTerms: as.MaxTerms}, &desired)
		if err != nil {
			return nil, fmt.Errorf("reliability: capacity of %s: %w", g.Name, err)
		}
		out[g.Name] = p.Healthy
	}
	return out, nil
}

// observe follows the next release's execution: the states it enters. A
// race's second release starts when it enters the schedule's state.
func (r *run) observe(arn string, ev asl.Event) {
	if r.next == nil || !strings.HasSuffix(arn, ":"+r.next.ExecutionName()) || ev.StateEntered == nil {
		return
	}
	state := ev.StateEntered.Name
	r.mu.Lock()
	r.visits = append(r.visits, Visit{State: state, At: r.reg.Clock().Now()})
	r.mu.Unlock()
	if r.opts.Schedule.RaceAt == state {
		r.startSecond()
	}
	if r.opts.Schedule.Base == BaseFailure && state == execution.TaskCheckHealthy ||
		r.opts.Schedule.Base == BaseRollback && state == shape.StateWaitForBake {
		r.haltOnce()
	}
	if r.opts.OnState != nil {
		r.opts.OnState(r.reg, state)
	}
}

// haltOnce writes, the first time, the halt marker that makes the failure
// base fail (at the first health check, so it fails through
// CleanUpFailure) and the rollback base roll back (at the first wait in
// the bake).
func (r *run) haltOnce() {
	r.mu.Lock()
	done := r.halted
	r.halted = true
	r.mu.Unlock()
	if done {
		return
	}
	rel := r.next.rel
	err := halt.New(r.reg.S3(), r.reg.Bucket()).Put(context.Background(), rel.ProjectName, rel.ConfigName,
		halt.Marker{By: "reliability", Reason: "the failure base", At: r.reg.Clock().Now()})
	if err != nil {
		r.violate("the failure base's halt marker cannot be written: %v", err)
	}
}

// startSecond starts the race's second release, once, at this very
// instant: time stands still until it has started.
func (r *run) startSecond() {
	r.mu.Lock()
	if r.second == nil || r.raced {
		r.mu.Unlock()
		return
	}
	r.raced = true
	r.mu.Unlock()
	release := r.reg.Hold()
	started := make(chan struct{})
	go func() {
		defer release()
		arn, err := r.second.start(context.Background(), r.reg)
		r.mu.Lock()
		r.secondARN, r.secondErr = arn, err
		r.mu.Unlock()
		close(started)
	}()
	<-started
}

// waitSecond waits for the race's second release to end.
func (r *run) waitSecond(ctx context.Context) (*Second, error) {
	r.mu.Lock()
	arn, err := r.secondARN, r.secondErr
	r.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("reliability: second release: %w", err)
	}
	if arn == "" {
		return nil, nil
	}
	d, err := r.reg.Wait(ctx, arn)
	if err != nil {
		return nil, fmt.Errorf("reliability: second release: %w", err)
	}
	s := &Second{ReleaseID: r.second.rel.ReleaseID, End: endOf(r.reg, arn), Error: d.Error, Cause: failure.Message(d.Cause)}
	return s, nil
}

// endOf is the end state an execution reached: the last state it entered
// when that is Success, FailureClean or FailureDirty, else "".
func endOf(reg *region.Region, arn string) string {
	x, err := reg.Execution(arn)
	if err != nil {
		return ""
	}
	path := x.Path()
	if len(path) == 0 {
		return ""
	}
	switch end := path[len(path)-1]; end {
	case execution.EndSuccess, execution.EndFailureClean, execution.EndFailureDirty:
		return end
	}
	return ""
}

// intercept runs every task invocation: it records the next release's
// invocations, checks the invariants around each, invokes twice when asked
// and injects the schedule's invocation-level faults (a cold Lambda whose
// role assumption fails, an invocation that dies part way, a response
// lost), starting a race's second release when the schedule says so.
//
// It runs one invocation at a time, whichever execution's: each task is
// judged by how the world changed around it, and a race's second release
// must not change it meanwhile (its tasks up to Deploy take no virtual
// time, so they could run inside one of the next release's).
func (r *run) intercept(ctx context.Context, req execution.Request, next region.Invoke) (json.RawMessage, error) {
	r.tasks.Lock()
	defer r.tasks.Unlock()
	return r.invoke(ctx, req, next)
}

// invoke is intercept's work, one invocation at a time.
func (r *run) invoke(ctx context.Context, req execution.Request, next region.Invoke) (json.RawMessage, error) {
	if r.next == nil || req.Execution.Name != r.next.ExecutionName() {
		return next(ctx, req)
	}
	r.rec.mu.Lock()
	on := r.rec.on
	r.rec.mu.Unlock()
	if !on {
		return next(ctx, req)
	}
	world := r.reg.World()
	n, f := r.rec.startInvocation()
	r.rec.mu.Lock()
	inv := Invocation{Task: req.Task, At: r.reg.Clock().Now(), awsFrom: world.TotalCalls(), s3From: len(r.rec.s3)}
	r.rec.mu.Unlock()
	r.checkLock(ctx, req.Task)
	applied := map[int]int{}
	for _, a := range r.rec.faults {
		if a.ruleID != 0 {
			applied[a.ruleID] = world.Faults().Applied(a.ruleID)
		}
	}
	before := world.Snapshot()

	roleRule := 0
	if f != nil && (f.Kind == RoleDenied || f.Kind == RoleExpired) {
		if err := r.reg.ColdStart(); err != nil {
			r.violate("cannot cold-start the Lambda: %v", err)
		}
		var err error
		if roleRule, err = world.Faults().Add(sim.Rule{Op: "AssumeRole", Service: "STS", Nth: 1, Err: awsError(f.Kind)}); err != nil {
			r.violate("cannot refuse the role: %v", err)
		}
	}
	out, err := next(ctx, req)
	if r.opts.Twice {
		out, err = next(ctx, req)
	}
	if roleRule != 0 {
		if world.Faults().Applied(roleRule) > 0 {
			r.fire(f, n)
		}
		world.Faults().Remove(roleRule)
	}
	if f != nil && (f.Kind == LambdaDied || f.Kind == DiedMidway) {
		r.fire(f, n)
		out, err = nil, &lambdaDied{task: req.Task}
	}
	r.rec.endInvocation()

	after := world.Snapshot()
	r.checkTask(req.Task, before, after)
	for _, a := range r.rec.faults {
		if a.ruleID != 0 && world.Faults().Applied(a.ruleID) > applied[a.ruleID] {
			r.fire(a, n)
		}
	}
	if req.Task == execution.TaskLock && err == nil {
		r.mu.Lock()
		r.lockTaken = true
		r.mu.Unlock()
	}
	r.rec.mu.Lock()
	inv.awsTo, inv.s3To = world.TotalCalls(), len(r.rec.s3)
	r.rec.mu.Unlock()
	if err != nil {
		inv.Err = errorName(err)
	}
	r.mu.Lock()
	r.invocations = append(r.invocations, inv)
	r.mu.Unlock()
	if f != nil && f.Kind == LambdaDied && r.opts.Schedule.RaceAfterLost {
		r.startSecond()
	}
	return out, err
}

// fire marks a fault injected, in invocation n.
func (r *run) fire(f *armed, n int) {
	r.rec.mu.Lock()
	defer r.rec.mu.Unlock()
	if !f.fired {
		f.fired, f.firedIn = true, n
	}
}

// errorName is the state machine's name of a task error.
func errorName(err error) string {
	var named interface{ ErrorName() string }
	if errors.As(err, &named) {
		return named.ErrorName()
	}
	return asl.ErrorLambdaUnknown
}

// checkLock checks, before a task of the next release once Lock
// succeeded, that no other release holds the lock and that the release
// holds it before the first invocation of every later task (a retry of a
// clean-up may find the lock released by its earlier attempt, and, once
// the release succeeded, taken by the next release). Before Lock another
// release may hold it: Lock then fails, LockHeld.
func (r *run) checkLock(ctx context.Context, task string) {
	h, found, err := r.locks.Get(ctx, r.next.rel.ProjectName, r.next.rel.ConfigName)
	if err != nil {
		r.violate("before %s: the lock cannot be read: %v", task, err)
		return
	}
	r.mu.Lock()
	taken := r.lockTaken
	retry := len(r.invocations) > 0 && r.invocations[len(r.invocations)-1].Task == task
	r.mu.Unlock()
	switch {
	case found && h.ReleaseID != r.next.rel.ReleaseID && taken:
		if retry && r.succeeded(ctx) {
			return // it finished; its response was lost; the next release took the lock
		}
		r.violate("before %s: release %s holds the lock while %s runs", task, h.ReleaseID, r.next.rel.ReleaseID)
	case taken && !found && !retry:
		r.violate("before %s: the lock was taken by Lock and is no longer held", task)
	}
}

// succeeded says whether the next release's outcome records Success.
func (r *run) succeeded(ctx context.Context) bool {
	o, found, err := ledger.New(r.reg.S3(), r.reg.Bucket()).GetOutcome(ctx, r.next.rel.ProjectName, r.next.rel.ConfigName, r.next.rel.ReleaseID)
	return err == nil && found && o.End == execution.EndSuccess
}

// collect fills the calls, invocations, visits and fired faults of the
// run into res.
func (r *run) collect(res *Result) {
	r.rec.mu.Lock()
	s3s := slices.Clone(r.rec.s3)
	firedIn := r.rec.firedIn(res)
	r.rec.mu.Unlock()
	r.mu.Lock()
	invs := slices.Clone(r.invocations)
	res.Visits = slices.Clone(r.visits)
	r.mu.Unlock()
	sort.SliceStable(invs, func(i, j int) bool { return invs[i].awsFrom+invs[i].s3From < invs[j].awsFrom+invs[j].s3From })
	for _, n := range firedIn {
		task := ""
		if n > 0 && n <= len(invs) {
			task = invs[n-1].Task
		}
		res.FiredTasks = append(res.FiredTasks, task)
	}
	if len(res.FiredTasks) > 0 {
		res.FiredIn = res.FiredTasks[0]
	}
	res.Calls, res.Invocations = interleave(r.reg.World().CallLog(), s3s, invs)
	res.End = runEnd(res)
}

// firedIn sets res.Fired (every fault fired) and res.S3Hits, and returns
// the invocation (1-based, 0 when it did not fire) each fault fired in.
// The caller holds rec.mu.
func (rec *recorder) firedIn(res *Result) []int {
	res.Fired = true
	in := make([]int, len(rec.faults))
	for i, f := range rec.faults {
		res.Fired = res.Fired && f.fired
		if f.fired {
			in[i] = f.firedIn
		}
		res.S3Hits = append(res.S3Hits, f.hit)
	}
	return in
}

// interleave merges the AWS call log and the S3 records in the order they
// were made, naming each call's task and invocation, and returns the
// calls and invs with each invocation's span of calls (First, End) set.
func interleave(aws []sim.Call, s3s []s3Record, invs []Invocation) ([]Call, []Invocation) {
	owner := func(aws bool, idx int) (string, int) {
		for i, inv := range invs {
			if aws && idx >= inv.awsFrom && idx < inv.awsTo || !aws && idx >= inv.s3From && idx < inv.s3To {
				return inv.Task, i + 1
			}
		}
		return "", 0
	}
	var calls []Call
	firsts, ends := make([]int, len(invs)), make([]int, len(invs))
	for i := range firsts {
		firsts[i] = -1
	}
	emit := func(c Call) {
		if c.Invocation > 0 {
			i := c.Invocation - 1
			if firsts[i] < 0 {
				firsts[i] = len(calls)
			}
			ends[i] = len(calls) + 1
		}
		calls = append(calls, c)
	}
	s3Call := func(j int) Call {
		task, n := owner(false, j)
		return Call{S3: true, Service: "S3", Op: s3s[j].op, Key: s3s[j].key, Task: task, Invocation: n}
	}
	j := 0
	for i, c := range aws {
		for ; j < len(s3s) && s3s[j].awsBefore <= i; j++ {
			emit(s3Call(j))
		}
		task, n := owner(true, i)
		emit(Call{Service: c.Service, Op: c.Op, Account: c.Account, Task: task, Invocation: n})
	}
	for ; j < len(s3s); j++ {
		emit(s3Call(j))
	}
	for i := range invs {
		invs[i].First, invs[i].End = max(firsts[i], 0), ends[i]
		if firsts[i] < 0 {
			invs[i].End = 0
		}
	}
	return calls, invs
}

// runEnd is the end state the run reached: Success when the execution
// succeeded, else the failure end it last visited, or "" for none.
func runEnd(res *Result) string {
	if res.Status == asl.StatusSucceeded {
		return execution.EndSuccess
	}
	if len(res.Visits) > 0 {
		if last := res.Visits[len(res.Visits)-1].State; last == execution.EndFailureClean || last == execution.EndFailureDirty {
			return last
		}
	}
	return ""
}

// readState reads the lock, the halt marker, the outcome and the
// project-config's objects after the run.
func (r *run) readState(ctx context.Context, res *Result) error {
	p, c := r.next.rel.ProjectName, r.next.rel.ConfigName
	h, found, err := r.locks.Get(ctx, p, c)
	if err != nil {
		return fmt.Errorf("reliability: reading the lock: %w", err)
	}
	if found {
		res.LockHolder = h.ReleaseID
	}
	if _, _, found, err := halt.New(r.reg.S3(), r.reg.Bucket()).Get(ctx, p, c); err != nil {
		return fmt.Errorf("reliability: reading the halt marker: %w", err)
	} else {
		res.HaltMarker = found
	}
	o, found, err := ledger.New(r.reg.S3(), r.reg.Bucket()).GetOutcome(ctx, p, c, r.next.rel.ReleaseID)
	if err != nil {
		return fmt.Errorf("reliability: reading the outcome: %w", err)
	}
	if found {
		res.Outcome = &o
	}
	res.Objects, err = objects(ctx, r.reg, p, c)
	return err
}

// objects lists the deployer bucket's objects of project/config, the
// clients' and the deployer's, with bodies.
func objects(ctx context.Context, reg *region.Region, project, config string) (map[string]string, error) {
	out := map[string]string{}
	for _, prefix := range []string{naming.Prefix(project, config), naming.StateConfigPrefix(project, config)} {
		if err := listObjects(ctx, reg, prefix, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// listObjects adds the deployer bucket's objects under prefix, with
// bodies, to out.
func listObjects(ctx context.Context, reg *region.Region, prefix string, out map[string]string) error {
	var token *string
	for {
		page, err := reg.S3().ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(reg.Bucket()), Prefix: aws.String(prefix), ContinuationToken: token})
		if err != nil {
			return fmt.Errorf("reliability: listing %s: %w", prefix, err)
		}
		for _, o := range page.Contents {
			obj, err := reg.S3().GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(reg.Bucket()), Key: o.Key})
			if err != nil {
				return fmt.Errorf("reliability: reading %s: %w", aws.ToString(o.Key), err)
			}
			var b strings.Builder
			_, err = copyBody(&b, obj)
			if err != nil {
				return err
			}
			out[aws.ToString(o.Key)] = b.String()
		}
		if !aws.ToBool(page.IsTruncated) {
			return nil
		}
		token = page.NextContinuationToken
	}
}
