package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ferryhq/ferry/client/submit"
	"github.com/ferryhq/ferry/internal/capacity"
	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/local/region"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/proof/reliability"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/halt"
	"github.com/ferryhq/ferry/internal/store/ledger"
	"github.com/ferryhq/ferry/internal/store/lock"
	"github.com/ferryhq/ferry/internal/target"
)

// The account, region and project-config of the reference.
const (
	account   = "111111111111"
	awsRegion = "us-east-1"
	// westRegion is where a move takes the config (Variant.Move): a copy
	// of awsRegion in the same account.
	westRegion = "us-west-2"
	project    = "acme/shop"
	config     = "production"
	by         = "chaos"
)

// start is the virtual time every run starts at.
var start = time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC)

// settle is how long virtual time runs on after the last execution ends,
// before the end checks: deleted groups gone, instances settled.
const settle = 15 * time.Minute

// phase is how far into its second a step acts (plus a millisecond per
// step before it).
const phase = 250 * time.Millisecond

// wall bounds one run in wall time.
const wall = 2 * time.Minute

// Result is what one run of a scenario did and every predicate it broke.
type Result struct {
	Scenario Scenario
	// WorldEvents is how many of the scenario's world events the world
	// took (one naming no group, say, is skipped); Changes how many
	// changes of the world the checker judged.
	WorldEvents int
	Changes     int
	// EndChecks is how many operations' ends (c) and (d) were checked at,
	// besides the end of the run.
	EndChecks int
	// Ends are how the executions ended, by name: Success, FailureClean,
	// FailureDirty, the reconcile's status, or a refusal to start.
	Ends       map[string]string
	Violations []Violation
	// Start is the virtual time step At 0 is counted from.
	Start time.Time
	// Trace is, by execution name, each state it entered and when
	// ("15:04:05.000 State"), to read a replay by.
	Trace map[string][]string
	// Shrunk is the minimal scenario that still fails, run (set by
	// RunSeeds when asked to shrink).
	Shrunk *Result
	// Worse is how many releases started clearly worse than what served
	// under a canary analysis (PredAnalysis judged them); Events how many
	// deploy events PredEvents judged; Swaps how many swaps PredStable
	// judged.
	Worse, Events, Swaps int
}

// Minimal is the shrunk run when there is one, else r.
func (r *Result) Minimal() *Result {
	if r.Shrunk != nil {
		return r.Shrunk
	}
	return r
}

// Failed says whether a predicate broke.
func (r *Result) Failed() bool { return len(r.Violations) > 0 }

// player plays one scenario.
type player struct {
	root string
	sc   Scenario
	reg  *region.Region
	clk  *clock.Virtual
	chk  *Checker
	next *release.Release
	// t0 is when the steps' moments count from.
	t0 time.Time

	mu sync.Mutex
	// subs are the releases submitted (a promotion's stage deploys
	// among them), by execution name; succeeded the releases of the
	// scenario's config whose executions succeeded, in order (the
	// reference first: what rollback and heal act on); arns every
	// execution started; meddled the groups a world event changed;
	// events how many world events the world took.
	subs      map[string]*release.Release
	succeeded []*release.Release
	arns      []string
	meddled   map[string]bool
	events    int
	seq       int
	// ends is how each execution that ended did, by name (endOf);
	// endChecks how many ends checkEnd checked.
	ends      map[string]string
	endChecks int
	// faults are the armed call faults.
	faults []*armed
	// promos are the promotions started, in order; alarmOff when the
	// gate alarm a KindAlarm put in ALARM is due back to OK (zero: none).
	promos   []*promotion
	alarmOff time.Time
	// images are the world's, by id and name; worse why each release
	// started clearly worse than what served (clearlyWorse), by
	// execution name.
	images map[string]sim.AMISpec
	worse  map[string]string
}

// armed is a call fault: the n-th call of op by ferry's roles since it
// was armed fails with kind; seen counts them.
type armed struct {
	op, kind string
	n, seen  int
}

// Run plays sc on a fresh local region of the repository at root and
// judges it. An error means the run could not be set up or driven (the
// reference release did not deploy); a broken predicate is a Violation
// in the Result.
func Run(ctx context.Context, root string, sc Scenario) (*Result, error) {
	ctx, cancel := context.WithTimeout(ctx, wall)
	defer cancel()
	p := &player{root: root, sc: sc, subs: map[string]*release.Release{}, meddled: map[string]bool{}, ends: map[string]string{}, worse: map[string]string{}}
	if err := p.open(ctx); err != nil {
		return nil, err
	}
	defer p.reg.Close()
	if err := p.deployBase(ctx); err != nil {
		return nil, err
	}
	if err := p.play(ctx); err != nil {
		return nil, err
	}
	return p.judge(ctx)
}

// open starts the region on the scenario's world.
func (p *player) open(ctx context.Context) error {
	spec, err := sim.Load(filepath.Join(p.root, reliability.ReferenceWorld))
	if err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	applyWorld(&spec, p.sc.World)
	if p.sc.promotes() {
		addQA(&spec)
	}
	if p.sc.moves() {
		if err := spec.CopyRegion(account, awsRegion, westRegion); err != nil {
			return fmt.Errorf("chaos: %w", err)
		}
	}
	p.images = imagesOf(spec)
	if p.next, err = release.ReadFile(filepath.Join(p.root, reliability.ReferenceNext)); err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	p.clk = clock.NewVirtual(start)
	p.reg, err = region.New(ctx, region.Options{World: spec, Clock: p.clk, HealthCheckInterval: 15 * time.Second, Observer: p.observe})
	if err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	return nil
}

// applyWorld changes the reference world as w says.
func applyWorld(spec *sim.WorldSpec, w World) {
	for i := range spec.Accounts {
		for j := range spec.Accounts[i].Regions {
			r := &spec.Accounts[i].Regions[j]
			if w.CPU > 0 {
				cpu := float64(w.CPU)
				for k := range r.AMIs {
					r.AMIs[k].CPUPercent = &cpu
				}
			}
			for k := range r.ELBs {
				if w.Drain > 0 {
					r.ELBs[k].ConnectionDrainingSeconds = w.Drain
				}
			}
		}
	}
}

// deployBase deploys the reference's previous release to Success, then
// starts judging: the checker sees every change of the world from here.
func (p *player) deployBase(ctx context.Context) error {
	base, err := release.ReadFile(filepath.Join(p.root, reliability.ReferencePrevious))
	if err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	prep, err := p.prepare(ctx, base, filepath.Join(p.root, reliability.ReferencePrevious))
	if err != nil {
		return fmt.Errorf("chaos: the reference release: %w", err)
	}
	arn, err := p.submit(ctx, prep)
	if err != nil {
		return fmt.Errorf("chaos: the reference release: %w", err)
	}
	d, err := p.reg.Wait(ctx, arn)
	if err != nil || d.Status != asl.StatusSucceeded {
		return fmt.Errorf("chaos: the reference release did not deploy: %v %s %s", err, d.Error, d.Cause)
	}
	p.mu.Lock()
	p.arns = nil
	p.mu.Unlock()
	served, err := servedBy(prep.Release, p.reg.World().Snapshot(), "")
	if err != nil {
		return err
	}
	p.chk = NewChecker(prep.Release.ReleaseID, served)
	p.succeeded = []*release.Release{prep.Release}
	p.reg.World().Observe(p.chk.Observe)
	p.reg.World().Faults().SetHook(p.fault)
	return nil
}

// observe follows the executions: a release's end tells the checker
// which release serves, at the instant it ends.
func (p *player) observe(arn string, ev asl.Event) {
	if ev.ExecutionStarted != nil && p.chk != nil {
		p.stageStarted(arn[strings.LastIndex(arn, ":")+1:], arn, ev.Timestamp)
		return
	}
	if ev.ExecutionSucceeded == nil && ev.ExecutionFailed == nil && ev.ExecutionAborted == nil && ev.ExecutionTimedOut == nil {
		return
	}
	name := arn[strings.LastIndex(arn, ":")+1:]
	p.mu.Lock()
	rel := p.subs[name]
	if rel != nil && ev.ExecutionSucceeded != nil && rel.ConfigName == config {
		p.succeeded = append(p.succeeded, rel)
	}
	p.ends[name] = endOf(p.reg, arn)
	p.mu.Unlock()
	if p.chk != nil {
		p.chk.Ended(name, ev.ExecutionSucceeded != nil)
		p.judgeAnalysis(name, ev.ExecutionSucceeded != nil, ev.Timestamp)
		// The last execution running (this one's status is no longer
		// Running while its end's events are observed).
		if len(p.reg.Executions(asl.StatusRunning)) == 0 {
			p.checkEnd(context.Background(), ev.Timestamp)
		}
	}
}

// checkEnd checks (c), and (d) as far as the records go (the current
// record names a release that may serve, and its groups stand), at the
// end of an operation, at, when no other execution of the scenario runs:
// the records then name everything ferry made. Whether each group serves
// is judged at the end only, once the world has settled. It runs on the
// ending execution's goroutine, time standing still.
func (p *player) checkEnd(ctx context.Context, at time.Time) {
	p.mu.Lock()
	p.endChecks++
	p.mu.Unlock()
	snap := p.reg.World().Snapshot()
	for _, cfg := range p.configs() {
		p.mu.Lock()
		ids := releaseIDs(p.subs)
		serving := mayServe(p.chk.ServingIn(cfg), p.subsOf(cfg), p.ends)
		p.mu.Unlock()
		rec, err := ReadRecords(ctx, ledger.New(p.reg.S3(), p.reg.Bucket()), project, cfg, ids)
		if err != nil {
			p.chk.Add(Violation{Pred: PredClaims, At: at, What: "the records could not be read: " + err.Error()})
			return
		}
		p.chk.Add(CheckNamed(at, snap, rec)...)
		p.chk.Add(CheckClaims(at, snap, rec, serving, nil, nil)...)
	}
}

// configs are the project's configs the scenario deploys: its config,
// and qa when it promotes.
func (p *player) configs() []string {
	if p.sc.promotes() {
		return []string{config, qaConfig}
	}
	return []string{config}
}

// subsOf are the releases submitted to cfg (a promotion's stage deploys
// among them), by execution name. The caller holds p.mu.
func (p *player) subsOf(cfg string) map[string]*release.Release {
	out := map[string]*release.Release{}
	for name, r := range p.subs {
		if r.ConfigName == cfg {
			out[name] = r
		}
	}
	return out
}

// releaseIDs are the ids of subs' releases, sorted.
func releaseIDs(subs map[string]*release.Release) []string {
	var ids []string
	for _, r := range subs {
		ids = append(ids, r.ReleaseID)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// play runs the steps at their moments, holding virtual time between
// them, then waits for every execution to end.
func (p *player) play(ctx context.Context) error {
	t0 := p.clk.Now()
	p.t0 = t0
	release := p.reg.Hold()
	defer release()
	for i, s := range p.sc.Steps {
		// Each step acts at its own sub-second phase, so no execution's
		// wake-up (whole seconds after a step started it) shares its
		// instant: the order of what happens does not hang on scheduling.
		due := t0.Add(time.Duration(s.At)*time.Second + phase + time.Duration(i)*time.Millisecond)
		if err := p.passTo(ctx, due); err != nil {
			return fmt.Errorf("chaos: step %d: %w", i, err)
		}
		if err := p.do(ctx, s); err != nil {
			return fmt.Errorf("chaos: step %d %s: %w", i, s, err)
		}
	}
	if err := p.endPromotions(ctx); err != nil {
		return fmt.Errorf("chaos: ending the promotions: %w", err)
	}
	release()
	p.mu.Lock()
	arns := slices.Clone(p.arns)
	p.mu.Unlock()
	for _, arn := range arns {
		if _, err := p.reg.Wait(ctx, arn); err != nil && ctx.Err() == nil {
			return fmt.Errorf("chaos: waiting for %s: %w", arn, err)
		}
	}
	if ctx.Err() == nil {
		p.clk.Advance(settle)
	}
	return nil
}

// do makes one step.
func (p *player) do(ctx context.Context, s Step) error {
	switch s.Kind {
	case KindDeploy, KindRollback, KindHeal, KindDestroy:
		return p.release(ctx, s)
	case KindPromote:
		return p.promote(ctx, s)
	case KindApprove:
		return p.approve(ctx)
	case KindHaltPromote:
		return p.haltPromotion(ctx, p.runningPromotion())
	case KindAlarm:
		return p.flipAlarm(ctx, time.Duration(s.D)*time.Second)
	case KindHalt:
		return halt.New(p.reg.S3(), p.reg.Bucket()).Put(ctx, project, config, halt.Marker{By: by, Reason: "chaos", At: p.clk.Now()})
	case KindUnlock:
		return p.unlock(ctx)
	case KindReconcile:
		input, _ := json.Marshal(execution.ReconcileInput{})
		p.mu.Lock()
		p.seq++
		name := fmt.Sprintf("reconcile-chaos-%d", p.seq)
		p.mu.Unlock()
		x, _, err := p.reg.Start(name, input)
		if err != nil {
			return err
		}
		p.mu.Lock()
		p.arns = append(p.arns, x.ARN())
		p.mu.Unlock()
		return nil
	case KindFault:
		p.mu.Lock()
		p.faults = append(p.faults, &armed{op: s.P, kind: s.E, n: s.N})
		p.mu.Unlock()
		return nil
	case KindHide:
		p.reg.World().Faults().HideNewGroups(s.D)
		return nil
	case KindLaunchAction:
		p.launchAction(ctx, s)
		return nil
	}
	return p.worldEvent(ctx, s)
}

// fault fails the n-th call of an armed operation made by ferry's roles
// (the Faults hook: it runs with the world locked).
func (p *player) fault(c sim.Call) error {
	if c.Principal == "" {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, f := range p.faults {
		if f.op != c.Op || f.seen >= f.n {
			continue
		}
		if f.seen++; f.seen == f.n {
			if f.kind == FaultThrottle {
				return sim.Throttling()
			}
			return sim.InternalError()
		}
	}
	return nil
}

// unlock removes the lock as ferry unlock does: refused while the
// holder's execution runs.
func (p *player) unlock(ctx context.Context) error {
	locks := lock.New(p.reg.S3(), p.reg.Bucket(), p.clk)
	h, found, err := locks.Get(ctx, project, config)
	if err != nil || !found {
		return err
	}
	if x, err := p.reg.Execution(h.Execution); err == nil && x.Describe().Status == asl.StatusRunning {
		return nil
	}
	return locks.Release(ctx, project, config, h.ReleaseID)
}

// release submits a release as the client would: a deploy of a variant,
// a rollback to the release served before, the serving release again, or
// a destroy. A release the client would not make (nothing to roll back
// to) is skipped.
func (p *player) release(ctx context.Context, s Step) error {
	p.mu.Lock()
	cur := p.succeeded[len(p.succeeded)-1]
	var before *release.Release
	if len(p.succeeded) > 1 {
		before = p.succeeded[len(p.succeeded)-2]
	}
	p.mu.Unlock()
	var prep *submit.Prepared
	var err error
	id := p.releaseID()
	switch {
	case s.Kind == KindDeploy:
		prep, err = submit.Prepare(ctx, p.reg.Signer(), p.variant(s.R, cur), filepath.Join(p.root, reliability.ReferenceNext), p.clk.Now(), by, id)
	case s.Kind == KindDestroy && !cur.Destroy:
		prep, err = submit.PrepareDestroy(ctx, p.reg.Signer(), cur, p.clk.Now(), by, id)
	case s.Kind == KindHeal && !cur.Destroy:
		prep, err = submit.PrepareAgain(ctx, p.reg.Signer(), cur, nil, nil, p.clk.Now(), by, id)
	case s.Kind == KindRollback && before != nil && !before.Destroy && !cur.Destroy:
		prep, err = submit.PrepareAgain(ctx, p.reg.Signer(), movedFrom(before, cur), removed(before, cur), nil, p.clk.Now(), by, id)
	default:
		return nil
	}
	if err != nil {
		return err
	}
	_, err = p.submit(ctx, prep)
	return err
}

// movedFrom is rel, deployed again over cur (ferry rollback): with
// move_from naming cur's region when rel's is another (--move-from).
func movedFrom(rel, cur *release.Release) *release.Release {
	if regionOf(rel) == regionOf(cur) {
		return rel
	}
	moved := rel.Clone()
	moved.MoveFrom = &target.Target{AccountID: account, Region: regionOf(cur)}
	return moved
}

// releaseID is the next release's id: the clock's second and a counter.
func (p *player) releaseID() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seq++
	return p.clk.Now().UTC().Format("20060102T150405Z") + fmt.Sprintf("-%06x", p.seq)
}

// removed are the services of cur that rel does not have.
func removed(rel, cur *release.Release) []string {
	var out []string
	for _, name := range cur.ServiceNames() {
		if rel.Services[name] == nil {
			out = append(out, name)
		}
	}
	return out
}

// variant is the reference's next release changed as v says, removing
// what it drops of cur.
func (p *player) variant(v *Variant, cur *release.Release) *release.Release {
	r := p.next.Clone()
	if v == nil {
		v = &Variant{}
	}
	r.BakeSeconds = v.Bake
	r.AMI, r.Analysis = image(v.Build), analysed(v.Analysis)
	r.UserData += fmt.Sprintf("# version %d\n", v.Version)
	if v.Behavior != "" {
		r.UserData += sim.UserDataMarker + " " + v.Behavior + "\n"
	}
	withLaunchHook(r, v)
	if web := r.Services["web"]; web != nil {
		changeWeb(web, v)
	}
	if v.Without != "" && len(r.Services) > 1 {
		delete(r.Services, v.Without)
	}
	if !cur.Destroy {
		r.Remove = removed(r, cur)
	}
	r.Region = cur.Region
	if v.Move {
		to := westRegion
		if regionOf(cur) == westRegion {
			to = awsRegion
		}
		r.Region = to
		if to == awsRegion {
			r.Region = "" // the deployer's own, as the reference's releases say it
		}
		if !cur.Destroy {
			r.MoveFrom = &target.Target{AccountID: account, Region: regionOf(cur)}
		}
	}
	return r
}

// changeWeb changes the web service as v says: no canary, its classic
// load balancer dropped, a mixed Spot fleet, its autoscaling bounds.
func changeWeb(web *release.Service, v *Variant) {
	if !v.Canary {
		web.Rollout = nil
	}
	if v.Drop {
		web.Detach = &release.Detach{ELBs: web.ELBs}
		web.ELBs = nil
	}
	if v.Spot {
		web.InstanceType = ""
		web.MixedInstances = &release.MixedInstances{
			Overrides:                   []release.Override{{InstanceType: "m5.large"}, {InstanceType: "c5.large"}},
			OnDemandPercentageAboveBase: new(int), CapacityRebalance: !v.NoRebalance,
		}
	}
	if v.Min > 0 && web.Autoscaling != nil {
		web.Autoscaling.MinSize, web.Autoscaling.MaxSize = v.Min, max(v.Min, v.Max)
	}
}

// launchHook is the name of the launching hook a Variant.Hook adds.
const launchHook = "warmup"

// withLaunchHook gives r the launching hook v draws (none when v.Hook is
// ""), and user data whose boot completes or abandons its action as
// v.Hook says.
func withLaunchHook(r *release.Release, v *Variant) {
	if v.Hook == "" {
		return
	}
	if r.Lifecycle == nil {
		r.Lifecycle = map[string]*release.LifecycleHook{}
	}
	r.Lifecycle[launchHook] = &release.LifecycleHook{Transition: release.TransitionLaunching,
		Role: "asg_lifecycle_hooks", SNS: "asg_lifecycle_hooks", HeartbeatTimeout: v.Heartbeat}
	if v.Hook == HookComplete || v.Hook == HookAbandon {
		r.UserData += sim.LaunchHookMarker + " " + v.Hook + "\n"
	}
}

// prepare readies a release read from file as ferry deploy does.
func (p *player) prepare(ctx context.Context, r *release.Release, file string) (*submit.Prepared, error) {
	return submit.Prepare(ctx, p.reg.Signer(), r, file, p.clk.Now(), by, p.releaseID())
}

// submit uploads and starts a prepared release, telling the checker what
// it will need once it serves before its execution can make a call.
func (p *player) submit(ctx context.Context, prep *submit.Prepared) (string, error) {
	name := prep.ExecutionName()
	p.mu.Lock()
	p.subs[name] = prep.Release
	p.mu.Unlock()
	if p.chk != nil {
		snap := p.reg.World().Snapshot()
		served, err := servedBy(prep.Release, snap, p.chk.Serving())
		if err != nil {
			return "", err
		}
		p.chk.Started(name, prep.Release.ReleaseID, served)
		p.chk.Window(name, windowOf(prep.Release))
		why := clearlyWorse(prep.Release, snap, p.images)
		p.mu.Lock()
		p.worse[name] = why
		p.mu.Unlock()
	}
	d := submit.Deployer{Bucket: p.reg.Bucket(), StateMachineARN: p.reg.StateMachineARN(), S3: p.reg.S3(), SFN: p.reg.SFN()}
	if err := d.Upload(ctx, prep); err != nil {
		return "", err
	}
	arn, err := d.Start(ctx, prep)
	if err != nil {
		return "", err
	}
	p.mu.Lock()
	p.arns = append(p.arns, arn)
	p.mu.Unlock()
	return arn, nil
}

// servedBy is what rel needs of each load balancer and target group once
// it serves: per service, its healthy target (capacity.Compute from the
// desired capacity of the serving release's group of the service in
// snap), summed over the services naming each; Retired for one the
// serving release's groups are attached to that rel does not name (a
// removed service's, a dropped one). nil for a destroy.
func servedBy(rel *release.Release, snap sim.Snapshot, servingID string) (Served, error) {
	if rel.Destroy {
		return nil, nil
	}
	r := rel.Clone()
	r.ApplyDefaults()
	serving := groupsOf(snap, servingID)
	out := Served{}
	for _, name := range r.ServiceNames() {
		svc := r.Services[name]
		var prev *int
		for _, g := range serving {
			if g.Tags[naming.TagServiceName] == name {
				n := int(g.Desired)
				prev = &n
			}
		}
		as := svc.Autoscaling
		plan, err := capacity.Compute(capacity.Bounds{MinSize: as.MinSize, MaxSize: as.MaxSize, Spread: as.Spread, MaxTerms: as.MaxTerms}, prev)
		if err != nil {
			return nil, fmt.Errorf("chaos: capacity of %s: %w", name, err)
		}
		for _, lb := range append(slices.Clone(svc.ELBs), svc.TargetGroups...) {
			out[Where(regionOf(rel), lb)] += plan.Healthy
		}
	}
	for _, g := range serving {
		for _, lb := range append(slices.Clone(g.LoadBalancers), g.TargetGroups...) {
			if _, kept := out[Where(g.Region, lb)]; !kept {
				out[Where(g.Region, lb)] = Retired
			}
		}
	}
	return out, nil
}

// regionOf is the region rel deploys to (its region, else the deployer's).
func regionOf(rel *release.Release) string {
	if rel.Region != "" {
		return rel.Region
	}
	return awsRegion
}

// placed is a group and the region it is in.
type placed struct {
	Region string
	sim.GroupSnapshot
}

// groupsOf are the groups of release id of the project-config in snap,
// not being deleted.
func groupsOf(snap sim.Snapshot, id string) []placed {
	return slices.DeleteFunc(ferryGroups(snap), func(g placed) bool { return g.Tags[naming.TagReleaseID] != id })
}

// ferryGroups are snap's groups of the project's configs (the scenario's,
// and qa a promotion deploys) not being deleted, region by region, by
// name.
func ferryGroups(snap sim.Snapshot) []placed {
	var out []placed
	for _, a := range snap.Accounts {
		for _, g := range a.Groups {
			if (ours(g.Tags, project, config) || ours(g.Tags, project, qaConfig)) && g.Status == "" {
				out = append(out, placed{Region: a.Region, GroupSnapshot: g})
			}
		}
	}
	return out
}

// judge checks the end predicates: every execution ended (e), every
// ferry resource named (c), every record's claim true (d).
func (p *player) judge(ctx context.Context) (*Result, error) {
	res := &Result{Scenario: p.sc, Ends: map[string]string{}, Trace: map[string][]string{}, Violations: p.chk.Violations(), Changes: p.chk.Changes(), Swaps: p.chk.Swaps(), Start: p.t0}
	now := p.clk.Now()
	p.mu.Lock()
	arns, events := slices.Clone(p.arns), p.events
	res.EndChecks = p.endChecks
	ids := releaseIDs(p.subs)
	p.mu.Unlock()
	res.WorldEvents = events
	for _, arn := range arns {
		name := arn[strings.LastIndex(arn, ":")+1:]
		end := endOf(p.reg, arn)
		res.Ends[name] = end
		res.Trace[name] = trace(p.reg, arn)
		if end == "" {
			res.Violations = append(res.Violations, Violation{Pred: PredEnds, At: now, What: "execution " + name + " reached no end state"})
		}
	}
	snap := p.reg.World().Snapshot()
	for _, cfg := range p.configs() {
		rec, err := ReadRecords(ctx, ledger.New(p.reg.S3(), p.reg.Bucket()), project, cfg, ids)
		if err != nil {
			return nil, err
		}
		res.Violations = append(res.Violations, CheckNamed(now, snap, rec)...)
		p.mu.Lock()
		subs := p.subsOf(cfg)
		serving := mayServe(p.chk.ServingIn(cfg), subs, res.Ends)
		byID := map[string]*release.Release{}
		for _, r := range subs {
			byID[r.ReleaseID] = r
		}
		meddled := maps.Clone(p.meddled)
		p.mu.Unlock()
		var rel *release.Release
		if rec.Current != nil {
			rel = byID[rec.Current.ReleaseID]
		}
		res.Violations = append(res.Violations, CheckClaims(now, snap, rec, serving, rel, meddled)...)
	}
	res.Violations = append(res.Violations, p.judgeEvents(arns, res.Ends, now)...)
	res.Events = len(p.reg.World().BusEvents())
	p.mu.Lock()
	for _, why := range p.worse {
		if why != "" {
			res.Worse++
		}
	}
	p.mu.Unlock()
	return res, nil
}

// mayServe are the releases the current record may name at the end
// (CheckClaims' serving): first the one the model says serves (id; ""
// once a destroy succeeded), then each release whose execution ended
// FailureDirty (ends, by execution name; subs the releases submitted, by
// execution name), which may have passed its point of no return: a
// destroy's is none ("": it clears the current record at its swap).
func mayServe(id string, subs map[string]*release.Release, ends map[string]string) []string {
	out := []string{id}
	for _, name := range slices.Sorted(maps.Keys(subs)) {
		r := subs[name]
		switch {
		case r.ReleaseID == id && r.Destroy:
			out[0] = ""
		case ends[name] == execution.EndFailureDirty && r.Destroy:
			out = append(out, "")
		case ends[name] == execution.EndFailureDirty:
			out = append(out, r.ReleaseID)
		}
	}
	return out
}

// trace is each state the execution arn entered, and when.
func trace(reg *region.Region, arn string) []string {
	x, err := reg.Execution(arn)
	if err != nil {
		return nil
	}
	var out []string
	for _, ev := range x.History() {
		if ev.StateEntered != nil {
			out = append(out, ev.Timestamp.UTC().Format("15:04:05.000")+" "+ev.StateEntered.Name)
		}
	}
	return out
}

// endOf is how an execution ended: for a release, the end state it
// reached (Success, FailureClean, FailureDirty); for another (a reconcile
// pass), its status once it is not running; "" while it runs or when a
// release ended elsewhere.
func endOf(reg *region.Region, arn string) string {
	x, err := reg.Execution(arn)
	if err != nil || x.Describe().Status == asl.StatusRunning {
		return ""
	}
	if !strings.Contains(arn, ":reconcile-") {
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
	return string(x.Describe().Status)
}
