package reliability

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ferryhq/ferry/internal/asl"
	"github.com/ferryhq/ferry/internal/capacity"
	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/deployer"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/halt"
	"github.com/ferryhq/ferry/internal/ledger"
	"github.com/ferryhq/ferry/internal/lock"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/region"
	"github.com/ferryhq/ferry/internal/sim"
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
	// Fault is injected (the zero Fault: none).
	Fault Fault
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
	Fault Fault
	// End is Success, FailureClean or FailureDirty; empty when the
	// execution ended elsewhere (Status says how).
	End    string
	Status asl.Status
	// Error and Cause are the failed execution's.
	Error, Cause string
	// ReleaseID is the new release's id.
	ReleaseID   string
	Calls       []Call
	Invocations []Invocation
	Visits      []Visit
	// Fired says whether the fault was injected, FiredIn in which task.
	Fired   bool
	FiredIn string
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
	Violations []string
}

// settle is how long virtual time runs on after the execution ends, so
// deleted groups are gone and instances settled before the final checks.
const settle = 15 * time.Minute

// cleanupTasks are the tasks whose failure may end in FailureDirty.
var cleanupTasks = []string{execution.TaskCleanUpSuccess, execution.TaskCleanUpFailure, execution.TaskReleaseLock}

// run is the state of one run shared by the region's hooks.
type run struct {
	sc    *Scenario
	opts  RunOptions
	rec   *recorder
	reg   *region.Region
	locks *lock.Locks
	next  *prepared
	// plans are the next release's healthy targets per service.
	plans map[string]capacity.Plan

	mu          sync.Mutex
	invocations []Invocation
	visits      []Visit
	lockTaken   bool
	violations  []string
	ruleID      int
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
// invariant is a violation in the Result.
func (sc *Scenario) Run(ctx context.Context, opts RunOptions) (*Result, error) {
	if opts.Wall == 0 {
		opts.Wall = 2 * time.Minute
	}
	if opts.Next == "" {
		opts.Next = sc.Next
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Wall)
	defer cancel()
	clk := clock.NewVirtual(sc.Start)
	r := &run{sc: sc, opts: opts, rec: &recorder{fault: opts.Fault}}
	reg, err := region.New(ctx, region.Options{
		World:               sc.World,
		Clock:               clk,
		HealthCheckInterval: sc.Interval,
		Store:               func(s deployer.Store) deployer.Store { return &faultStore{next: s, rec: r.rec} },
		Intercept:           r.intercept,
		Observer:            r.observe,
	})
	if err != nil {
		return nil, err
	}
	defer reg.Close()
	r.reg, r.rec.world = reg, reg.World()
	r.locks = lock.New(reg.S3(), reg.Bucket(), clk)

	if err := seedOutsiders(ctx, reg.World()); err != nil {
		return nil, err
	}
	prev, err := prepare(sc.Previous, clk.Now(), sc.By, "a00001")
	if err != nil {
		return nil, fmt.Errorf("reliability: previous release: %w", err)
	}
	arn, err := prev.start(ctx, reg)
	if err != nil {
		return nil, fmt.Errorf("reliability: previous release: %w", err)
	}
	d, err := reg.Wait(ctx, arn)
	if err != nil {
		return nil, fmt.Errorf("reliability: previous release: %w", err)
	}
	if d.Status != asl.StatusSucceeded {
		return nil, fmt.Errorf("reliability: the previous release did not deploy: %s %s: %s", d.Status, d.Error, d.Cause)
	}

	if opts.BeforeStart != nil {
		if err := opts.BeforeStart(reg, clk); err != nil {
			return nil, err
		}
	}
	next, err := prepare(opts.Next, clk.Now().Add(opts.CreatedAtSkew), sc.By, "b00002")
	if err != nil {
		return nil, fmt.Errorf("reliability: next release: %w", err)
	}
	r.next = next
	res := &Result{Fault: opts.Fault, ReleaseID: next.rel.ReleaseID, Before: reg.World().Snapshot()}
	if r.plans, err = plans(next, res.Before); err != nil {
		return nil, err
	}

	if res.ObjectsBefore, err = objects(ctx, reg, naming.Prefix(next.rel.ProjectName, next.rel.ConfigName)); err != nil {
		return nil, err
	}
	// Arm: from here on the calls are the next release's.
	reg.World().ResetCalls()
	if rule := opts.Fault.rule; rule != nil {
		rl := *rule
		rl.Err = awsError(opts.Fault.Kind)
		if r.ruleID, err = reg.World().Faults().Add(rl); err != nil {
			return nil, err
		}
	}
	r.rec.mu.Lock()
	r.rec.armed = true
	r.rec.mu.Unlock()

	res.StartedAt = clk.Now()
	arn, err = next.start(ctx, reg)
	if err != nil {
		return nil, fmt.Errorf("reliability: next release: %w", err)
	}
	d, err = reg.Wait(ctx, arn)
	if err != nil {
		return nil, fmt.Errorf("reliability: next release (fault %s): %w", opts.Fault, err)
	}
	r.rec.mu.Lock()
	r.rec.armed = false
	r.rec.mu.Unlock()
	res.EndedAt = d.StopDate
	res.Status, res.Error, res.Cause = d.Status, d.Error, d.Cause

	r.collect(res)
	clk.Advance(settle)
	res.After = reg.World().Snapshot()
	if err := r.readState(ctx, res); err != nil {
		return nil, err
	}
	r.checkEnd(res)
	r.mu.Lock()
	res.Violations = append(res.Violations, r.violations...)
	r.mu.Unlock()
	return res, nil
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

// observe follows the next release's execution: the states it enters.
func (r *run) observe(arn string, ev asl.Event) {
	if r.next == nil || !strings.HasSuffix(arn, ":"+r.next.rel.ReleaseID) || ev.StateEntered == nil {
		return
	}
	r.mu.Lock()
	r.visits = append(r.visits, Visit{State: ev.StateEntered.Name, At: r.reg.Clock().Now()})
	r.mu.Unlock()
	if r.opts.OnState != nil {
		r.opts.OnState(r.reg, ev.StateEntered.Name)
	}
}

// intercept runs every task invocation: it records the next release's
// invocations, checks the invariants around each, invokes twice when asked
// and kills the invocation the fault names.
func (r *run) intercept(ctx context.Context, req execution.Request, next region.Invoke) (json.RawMessage, error) {
	if r.next == nil || req.Execution.Name != r.next.rel.ReleaseID {
		return next(ctx, req)
	}
	world := r.reg.World()
	r.rec.mu.Lock()
	armed := r.rec.armed
	r.rec.current++
	n := r.rec.current
	inv := Invocation{Task: req.Task, At: r.reg.Clock().Now(), awsFrom: world.TotalCalls(), s3From: len(r.rec.s3)}
	r.rec.mu.Unlock()
	if !armed {
		return next(ctx, req)
	}
	r.checkLock(ctx, req.Task)
	appliedBefore := 0
	if r.ruleID != 0 {
		appliedBefore = world.Faults().Applied(r.ruleID)
	}
	before := world.Snapshot()

	out, err := next(ctx, req)
	if r.opts.Twice {
		out, err = next(ctx, req)
	}
	if r.opts.Fault.Kind == LambdaDied && r.opts.Fault.invocation == n {
		r.rec.mu.Lock()
		r.rec.fired, r.rec.firedIn = true, n
		r.rec.mu.Unlock()
		out, err = nil, &lambdaDied{task: req.Task}
	}

	after := world.Snapshot()
	r.checkTask(req.Task, before, after)
	if r.ruleID != 0 && world.Faults().Applied(r.ruleID) > appliedBefore {
		r.rec.mu.Lock()
		if !r.rec.fired {
			r.rec.fired, r.rec.firedIn = true, n
		}
		r.rec.mu.Unlock()
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
	return out, err
}

// errorName is the state machine's name of a task error.
func errorName(err error) string {
	var named interface{ ErrorName() string }
	if errors.As(err, &named) {
		return named.ErrorName()
	}
	return asl.ErrorLambdaUnknown
}

// checkLock checks, before a task of the next release, that no other
// release holds the lock and, once Lock succeeded, that the release holds
// it before the first invocation of every later task (a retry of a
// clean-up may find the lock released by its earlier attempt).
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
	case found && h.ReleaseID != r.next.rel.ReleaseID:
		r.violate("before %s: release %s holds the lock while %s runs", task, h.ReleaseID, r.next.rel.ReleaseID)
	case taken && !found && !retry:
		r.violate("before %s: the lock was taken by Lock and is no longer held", task)
	}
}

// resource is a group, launch template or alarm of a snapshot, for diffs.
type resource struct {
	kind, key string
	tags      map[string]string
	body      string
}

func resources(s sim.Snapshot) map[string]resource {
	out := map[string]resource{}
	add := func(kind, acct, name string, tags map[string]string, v any) {
		b, _ := json.Marshal(v)
		key := kind + " " + acct + " " + name
		out[key] = resource{kind: kind, key: key, tags: tags, body: string(b)}
	}
	for _, a := range s.Accounts {
		acct := a.Account + "/" + a.Region
		for _, g := range a.Groups {
			add("group", acct, g.Name, g.Tags, g)
		}
		for _, lt := range a.LaunchTemplates {
			add("launch-template", acct, lt.Name, lt.Tags, lt)
		}
		for _, al := range a.Alarms {
			add("alarm", acct, al.Name, al.Tags, al)
		}
	}
	return out
}

// ours says whether tags are those of a resource ferry made for the
// project-config.
func (r *run) ours(tags map[string]string) bool {
	return tags[naming.TagDeployWith] == "ferry" && tags[naming.TagProjectName] == r.next.rel.ProjectName &&
		tags[naming.TagConfigName] == r.next.rel.ConfigName
}

// checkTask checks what one task changed: only resources of the
// project-config, and the previous groups deleted only while the new ones
// are healthy.
func (r *run) checkTask(task string, before, after sim.Snapshot) {
	b, a := resources(before), resources(after)
	keys := map[string]bool{}
	for k := range b {
		keys[k] = true
	}
	for k := range a {
		keys[k] = true
	}
	for k := range keys {
		rb, inB := b[k]
		ra, inA := a[k]
		if inB && inA && rb.body == ra.body {
			continue
		}
		res := ra
		if !inA {
			res = rb
		}
		if !r.ours(res.tags) {
			r.violate("%s touched %s, which is not tagged DeployWith=ferry of %s %s", task, k, r.next.rel.ProjectName, r.next.rel.ConfigName)
		}
	}
	// Previous groups deleted by this task.
	for _, g := range groupsOf(before, r.next.rel.ProjectName, r.next.rel.ConfigName) {
		if g.Status != "" || g.Tags[naming.TagReleaseID] == r.next.rel.ReleaseID {
			continue
		}
		still := false
		for _, h := range groupsOf(after, r.next.rel.ProjectName, r.next.rel.ConfigName) {
			if h.Name == g.Name && h.Status == "" {
				still = true
			}
		}
		if still {
			continue
		}
		for svc, p := range r.plans {
			ng, ok := findGroup(before, naming.GroupName(r.next.rel.ProjectName, r.next.rel.ConfigName, svc, r.next.rel.ReleaseID))
			switch {
			case !ok || ng.Status != "":
				r.violate("%s deleted the previous group %s while the new group of %s did not exist", task, g.Name, svc)
			case healthyCount(ng) < p.Healthy:
				r.violate("%s deleted the previous group %s while the new group of %s had %d healthy instances of %d needed", task, g.Name, svc, healthyCount(ng), p.Healthy)
			}
		}
	}
}

// groupsOf returns the ferry groups of a project-config in a snapshot.
func groupsOf(s sim.Snapshot, project, config string) []sim.GroupSnapshot {
	var out []sim.GroupSnapshot
	for _, a := range s.Accounts {
		for _, g := range a.Groups {
			if g.Tags[naming.TagDeployWith] == "ferry" && g.Tags[naming.TagProjectName] == project && g.Tags[naming.TagConfigName] == config {
				out = append(out, g)
			}
		}
	}
	return out
}

func findGroup(s sim.Snapshot, name string) (sim.GroupSnapshot, bool) {
	for _, a := range s.Accounts {
		for _, g := range a.Groups {
			if g.Name == name {
				return g, true
			}
		}
	}
	return sim.GroupSnapshot{}, false
}

// healthyCount counts a group's instances that are InService and healthy
// in every load balancer and target group of the group.
func healthyCount(g sim.GroupSnapshot) int {
	n := 0
	for _, in := range g.Instances {
		if in.Lifecycle != "InService" || in.Health != "Healthy" || len(in.LB) < len(g.LoadBalancers)+len(g.TargetGroups) {
			continue
		}
		ok := true
		for _, h := range in.LB {
			if h != "InService" && h != "healthy" {
				ok = false
			}
		}
		if ok {
			n++
		}
	}
	return n
}

// collect fills the calls, invocations and visits of the run into res.
func (r *run) collect(res *Result) {
	aws := r.reg.World().CallLog()
	r.rec.mu.Lock()
	s3s := slices.Clone(r.rec.s3)
	res.Fired = r.rec.fired
	firedIn := r.rec.firedIn
	r.rec.mu.Unlock()
	r.mu.Lock()
	invs := slices.Clone(r.invocations)
	res.Visits = slices.Clone(r.visits)
	r.mu.Unlock()
	sort.SliceStable(invs, func(i, j int) bool { return invs[i].awsFrom+invs[i].s3From < invs[j].awsFrom+invs[j].s3From })
	if firedIn > 0 && firedIn <= len(invs) {
		res.FiredIn = invs[firedIn-1].Task
	}

	owner := func(aws bool, idx int) (string, int) {
		for i, inv := range invs {
			if aws && idx >= inv.awsFrom && idx < inv.awsTo || !aws && idx >= inv.s3From && idx < inv.s3To {
				return inv.Task, i + 1
			}
		}
		return "", 0
	}
	firsts := make([]int, len(invs))
	ends := make([]int, len(invs))
	for i := range firsts {
		firsts[i] = -1
	}
	emit := func(c Call) {
		if c.Invocation > 0 {
			i := c.Invocation - 1
			if firsts[i] < 0 {
				firsts[i] = len(res.Calls)
			}
			ends[i] = len(res.Calls) + 1
		}
		res.Calls = append(res.Calls, c)
	}
	j := 0
	for i, c := range aws {
		for j < len(s3s) && s3s[j].awsBefore <= i {
			task, n := owner(false, j)
			emit(Call{S3: true, Service: "S3", Op: s3s[j].op, Key: s3s[j].key, Task: task, Invocation: n})
			j++
		}
		task, n := owner(true, i)
		emit(Call{Service: c.Service, Op: c.Op, Account: c.Account, Task: task, Invocation: n})
	}
	for ; j < len(s3s); j++ {
		task, n := owner(false, j)
		emit(Call{S3: true, Service: "S3", Op: s3s[j].op, Key: s3s[j].key, Task: task, Invocation: n})
	}
	for i := range invs {
		invs[i].First, invs[i].End = firsts[i], ends[i]
		if firsts[i] < 0 {
			invs[i].First, invs[i].End = 0, 0
		}
	}
	res.Invocations = invs
	if res.Status == asl.StatusSucceeded {
		res.End = execution.EndSuccess
	} else if len(res.Visits) > 0 {
		if last := res.Visits[len(res.Visits)-1].State; last == execution.EndFailureClean || last == execution.EndFailureDirty {
			res.End = last
		}
	}
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
	res.Objects, err = objects(ctx, r.reg, naming.Prefix(p, c))
	return err
}

// objects lists the deployer bucket's objects under prefix, with bodies.
func objects(ctx context.Context, reg *region.Region, prefix string) (map[string]string, error) {
	out := map[string]string{}
	var token *string
	for {
		page, err := reg.S3().ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(reg.Bucket()), Prefix: aws.String(prefix), ContinuationToken: token})
		if err != nil {
			return nil, fmt.Errorf("reliability: listing %s: %w", prefix, err)
		}
		for _, o := range page.Contents {
			obj, err := reg.S3().GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(reg.Bucket()), Key: o.Key})
			if err != nil {
				return nil, fmt.Errorf("reliability: reading %s: %w", aws.ToString(o.Key), err)
			}
			var b strings.Builder
			_, err = copyBody(&b, obj)
			if err != nil {
				return nil, err
			}
			out[aws.ToString(o.Key)] = b.String()
		}
		if !aws.ToBool(page.IsTruncated) {
			return out, nil
		}
		token = page.NextContinuationToken
	}
}

// releaseResources lists what is left in snap of the release id: groups
// (not being deleted), launch templates and alarms, by name.
func releaseResources(s sim.Snapshot, project, config, releaseID string, services []string) []string {
	var out []string
	prefixes := make([]string, 0, len(services))
	for _, svc := range services {
		prefixes = append(prefixes, naming.GroupName(project, config, svc, releaseID))
	}
	mine := func(name string, tags map[string]string) bool {
		if tags[naming.TagReleaseID] == releaseID {
			return true
		}
		for _, p := range prefixes {
			if strings.HasPrefix(name, p) {
				return true
			}
		}
		return false
	}
	for _, a := range s.Accounts {
		for _, g := range a.Groups {
			if mine(g.Name, g.Tags) {
				out = append(out, "group "+g.Name)
			}
		}
		for _, lt := range a.LaunchTemplates {
			if mine(lt.Name, lt.Tags) {
				out = append(out, "launch template "+lt.Name)
			}
		}
		for _, al := range a.Alarms {
			if mine(al.Name, al.Tags) {
				out = append(out, "alarm "+al.Name)
			}
		}
	}
	return out
}

// checkEnd checks the end state and what it promises.
func (r *run) checkEnd(res *Result) {
	rel := r.next.rel
	p, c, id := rel.ProjectName, rel.ConfigName, rel.ReleaseID
	services := make([]string, 0, len(rel.Services))
	for s := range rel.Services {
		services = append(services, s)
	}
	sort.Strings(services)
	left := releaseResources(res.After, p, c, id, services)
	fault := ""
	if res.Fault.Kind != "" {
		if !res.Fired {
			r.violate("the fault was never injected: the run did not follow the clean run's calls")
		}
		fault = " (fault in " + res.FiredIn + ")"
	}
	switch res.End {
	case execution.EndSuccess:
		for _, svc := range services {
			g, ok := findGroup(res.After, naming.GroupName(p, c, svc, id))
			if !ok || g.Status != "" || healthyCount(g) < r.plans[svc].Healthy {
				r.violate("Success, but the new group of %s is not serving", svc)
			}
		}
		for _, g := range groupsOf(res.After, p, c) {
			if g.Tags[naming.TagReleaseID] != id {
				r.violate("Success, but the previous group %s is still there", g.Name)
			}
		}
		if res.LockHolder != "" {
			r.violate("Success, but release %s still holds the lock", res.LockHolder)
		}
	case execution.EndFailureClean:
		if len(left) > 0 {
			r.violate("FailureClean%s, but the release left %s", fault, strings.Join(left, ", "))
		}
		if res.LockHolder != "" {
			r.violate("FailureClean%s, but release %s still holds the lock", fault, res.LockHolder)
		}
		r.checkPreviousServes(res, "FailureClean"+fault)
		if res.Outcome != nil && res.Outcome.End != res.End {
			r.violate("FailureClean%s, but the outcome says %s", fault, res.Outcome.End)
		}
	case execution.EndFailureDirty:
		if !slices.Contains(cleanupTasks, res.FiredIn) {
			r.violate("FailureDirty, but the fault hit %q, not a clean-up (error %s: %s)", res.FiredIn, res.Error, res.Cause)
		}
		if res.LockHolder != id {
			r.violate("FailureDirty%s, but the lock is not kept (holder %q)", fault, res.LockHolder)
		}
		// What a clean end would not have: the release's resources when
		// it failed (CleanUpFailure ran), else the previous release's
		// groups and launch templates still there.
		if !visited(res, execution.TaskCleanUpFailure) {
			left = previousResources(res.Before, res.After, p, c, id)
		}
		var named []string
		switch {
		case res.Outcome != nil:
			named = res.Outcome.Leftovers
			if res.Outcome.End != res.End {
				r.violate("FailureDirty%s, but the outcome says %s", fault, res.Outcome.End)
			}
		case res.Fault.Call.S3 && res.Fault.Call.Op == "PutObject" && res.Fault.Call.Key == naming.OutcomeKey(p, c, id) && res.Fault.Kind != LambdaDied:
			// The fault hit the outcome's own write.
		default:
			r.violate("FailureDirty%s without an outcome", fault)
		}
		for _, l := range left {
			name := l[strings.LastIndex(l, " ")+1:]
			if res.Outcome != nil && !slices.ContainsFunc(named, func(s string) bool { return strings.Contains(s, name) }) {
				r.violate("FailureDirty%s: %s is left but not named in the outcome's leftovers %q", fault, l, named)
			}
		}
	default:
		r.violate("the execution ended %s without an end state (last state %s): %s %s", res.Status, lastVisit(res), res.Error, res.Cause)
	}
}

// visited says whether the execution entered state.
func visited(res *Result, state string) bool {
	return slices.ContainsFunc(res.Visits, func(v Visit) bool { return v.State == state })
}

// previousResources lists the ferry groups and launch templates of the
// project-config in after that are not the release's and that before had.
func previousResources(before, after sim.Snapshot, project, config, releaseID string) []string {
	had := map[string]bool{}
	for _, a := range before.Accounts {
		for _, g := range a.Groups {
			had["group "+g.Name] = true
		}
		for _, lt := range a.LaunchTemplates {
			had["launch template "+lt.Name] = true
		}
	}
	var out []string
	for _, a := range after.Accounts {
		for _, g := range a.Groups {
			if g.Tags[naming.TagDeployWith] == "ferry" && g.Tags[naming.TagProjectName] == project && g.Tags[naming.TagConfigName] == config &&
				g.Tags[naming.TagReleaseID] != releaseID && had["group "+g.Name] {
				out = append(out, "group "+g.Name)
			}
		}
		for _, lt := range a.LaunchTemplates {
			t := lt.Tags
			if t[naming.TagDeployWith] == "ferry" && t[naming.TagProjectName] == project && t[naming.TagConfigName] == config &&
				t[naming.TagReleaseID] != releaseID && had["launch template "+lt.Name] {
				out = append(out, "launch template "+lt.Name)
			}
		}
	}
	return out
}

func lastVisit(res *Result) string {
	if len(res.Visits) == 0 {
		return "none"
	}
	return res.Visits[len(res.Visits)-1].State
}

// checkPreviousServes checks that every group the previous release had is
// live with all its instances healthy.
func (r *run) checkPreviousServes(res *Result, end string) {
	rel := r.next.rel
	for _, g := range groupsOf(res.Before, rel.ProjectName, rel.ConfigName) {
		if g.Status != "" {
			continue
		}
		now, ok := findGroup(res.After, g.Name)
		switch {
		case !ok || now.Status != "":
			r.violate("%s, but the previous group %s is gone", end, g.Name)
		case healthyCount(now) < int(now.Desired):
			r.violate("%s, but the previous group %s serves with %d healthy instances of %d", end, g.Name, healthyCount(now), now.Desired)
		}
	}
}
