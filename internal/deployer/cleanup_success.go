package deployer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/events"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/fanout"
	"github.com/ferryhq/ferry/internal/fleet"
	"github.com/ferryhq/ferry/internal/health"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/ledger"
	"github.com/ferryhq/ferry/internal/tuning"
)

// cleanUpSuccess is the CleanUpSuccess task: the swap. Its steps:
//
//  1. Done already? When this execution's outcome records Success (an
//     earlier attempt got that far; its response may have been lost), it
//     only finishes (clears the halt marker and releases the lock if this
//     release still holds it) and touches nothing in AWS.
//  2. Past the point of no return? It reads its deleting record
//     (ledger.GetDeleting) before anything that can fail for good. Without
//     one it gates the swap (gate): the lock must be held by this release
//     and every service must still be stable by CheckHealthy's rule, its
//     new group's terminations counted exactly from its scaling
//     activities (activitiesExact: read when never read, on a change a
//     check would see, or when one is in progress or began since their
//     last read; when those no check read are many, every group's are
//     read first, in an invocation of their own, the gate then reading
//     them only on a change: gateReads), and no alarm the release names may
//     be in ALARM, no service's error rate above its max_error_rate
//     (checkGates); no new group may be out of a load balancer its
//     release names (checkOutOf), and no load balancer or target group the
//     release names may be left without a healthy instance, as it sees
//     them (checkDark); then it lists the previous groups, in the
//     release's environment and in every other its config has deployed
//     to (gateElsewhere: a move's old one), and records exactly them,
//     each of the release's environment with how it served (load
//     balancers, target groups, capacity: the bake's standby record's,
//     else what AWS shows) (ledger.CreateDeleting): the point of no return. A failure
//     of the gate is a failed release (a *failure.HaltError or
//     *failure.DeployError, so CleanUpFailure follows and the previous
//     release keeps serving), or retryable; a gate AWS throttled runs
//     again after a wait (throttledStep).
//  3. Retire (retire), a step per invocation, only while the lock is this
//     release's: the current record names the new release; while a
//     previous group is not scaled in yet, the new groups are judged again
//     (recheck: below target, the previous groups go back as the record
//     says they served and it ends FailureDirty); then the next step of
//     retiring exactly the groups the record names, each environment's
//     with its own clients (fleet.Retirer: out of their load balancers,
//     drained, scaled to zero so their termination hooks run); while one
//     is under way it reports Done false at $.retire, and the state
//     machine waits and runs it again: longer while deploys to its
//     account and region are on their way to healthy, and beside the
//     retirements they go on to (beside: the retirement gives way to
//     them, its checks unchanged, each step making its share of Auto
//     Scaling calls, retireCalls, and the next going on where it
//     stopped).
//     Once every group is empty it deletes them with their alarms and
//     launch templates (a group still
//     standing tuning.RetireTimeout after the point of no return is never
//     deleted: FailureDirty names what stands and why), and leaves the
//     release's environment alone in the config's targets record
//     (pruneTargets); settles each new group (scaled back from ferry's
//     launch count to its desired capacity, the scaling processes Deploy
//     suspended resumed: until then the spread's extra capacity serves and
//     no rebalancing churns the new fleet while the old one drains),
//     tuning.SettleCallsPerStep Auto Scaling calls a step at most,
//     tuning.SettleLastCalls the last, the next steps after the
//     account's bucket refilled (settleRest,
//     Retire.Settling: a release leaves most of the bucket);
//     collects the project-config's published assets no recent release
//     names, best effort (collectPublished); records the outcome, clears
//     the halt marker and releases the lock, last, and reports Done.
//
// Once the record exists it ends only in Success or FailureDirty: every
// failure is a *failure.CleanUpError naming what is left (recorded in a
// FailureDirty outcome; the lock is kept), or a *failure.RetryableError
// while retries remain. It never fails into CleanUpFailure, which would
// delete the only groups left serving. A record that cannot be read
// fails closed the same way: it may be past its point of no return.
func (d *Deployer) cleanUpSuccess(ctx context.Context, req execution.Request) (any, error) {
	st, err := d.verify(ctx, req)
	if err != nil {
		return nil, err
	}
	done, err := d.succeeded(ctx, st, req)
	if err != nil {
		return nil, err
	}
	if done {
		d.log.Info("release already succeeded", "release_id", st.ReleaseID)
		if err := d.finish(ctx, st); err != nil {
			return nil, d.pastNoReturn(ctx, st, req, &retireProgress{current: true, retired: true, settled: true}, err)
		}
		d.announceOutcome(ctx, nil, st, req, ledger.Outcome{End: execution.EndSuccess})
		d.retired(ctx, st)
		st.Retire = &execution.Retire{Done: true}
		return st, nil
	}
	calls, later := d.awaitTurn(ctx, st)
	if later != nil {
		st.Retire = later
		return st, nil
	}
	if st.Retire != nil && st.Retire.Settling {
		settling, err := d.settleStep(ctx, st, req, calls)
		if err != nil {
			return nil, err
		}
		st.Retire = keepThrottled(st, settling)
		return st, nil
	}
	plan, found, err := d.ledger.GetDeleting(ctx, st.ProjectName, st.ConfigName, st.ReleaseID)
	if err != nil {
		return nil, d.pastNoReturn(ctx, st, req, nil, err)
	}
	var listed *listing
	if !found {
		var next *execution.Retire
		if plan, listed, next, err = d.gateStep(ctx, st, req); err != nil {
			return nil, err
		}
		if next != nil {
			st.Retire = next
			return st, nil
		}
	}
	retire, err := d.retire(ctx, st, req, plan, listed, calls)
	if err != nil {
		return nil, err
	}
	st.Retire = keepThrottled(st, retire)
	return st, nil
}

// retired sets st.Retired, for an execution that already succeeded, from
// its deleting record: the groups the swap retired. It only informs the
// client, so a record that cannot be read leaves it empty, with a warning.
func (d *Deployer) retired(ctx context.Context, st *execution.State) {
	plan, found, err := d.ledger.GetDeleting(ctx, st.ProjectName, st.ConfigName, st.ReleaseID)
	if err != nil {
		d.log.Warn("cannot read which groups were retired", "release_id", st.ReleaseID, "error", err.Error())
	}
	if found {
		st.Retired = plan.AllGroups()
	}
}

// succeeded reports whether this execution's outcome already records
// Success. An outcome that cannot be read for a transient reason is
// retryable; for another reason it is taken as "not known to be done":
// the steps that follow fail closed.
func (d *Deployer) succeeded(ctx context.Context, st *execution.State, req execution.Request) (bool, error) {
	o, found, err := d.ledger.GetOutcome(ctx, st.ProjectName, st.ConfigName, st.ReleaseID)
	switch {
	case err != nil && failure.IsRetryable(err):
		return false, exhausted(req, err)
	case err != nil:
		d.log.Warn("cannot read the outcome", "release_id", st.ReleaseID, "error", err.Error())
		return false, nil
	}
	return found && o.End == execution.EndSuccess && o.Execution == req.Execution.ID, nil
}

// listing is what the gate saw of the project-config's groups, for the
// retirement's first step, which follows at once in its invocation:
// every group without its instances (heads: fleet.Heads), and the new
// release's groups with them (whole).
type listing struct {
	heads, whole map[string]asgtypes.AutoScalingGroup
}

// gate decides, before the point of no return, whether the swap may go
// ahead, and records what it retires. See cleanUpSuccess. It lists the
// project-config's groups once without their instances (fleet.Heads:
// the previous ones it records), describes the new ones with theirs (it
// judges them), and returns both for the retirement's first step. At 50
// services of 100 instances, the previous groups' instances are half of
// what a listing with them decodes, which at a 512 MB Lambda's share of
// a CPU is most of the invocation's time.
func (d *Deployer) gate(ctx context.Context, st *execution.State, req execution.Request) (ledger.Intent, *listing, error) {
	fail := func(err error) (ledger.Intent, *listing, error) {
		return ledger.Intent{}, nil, beforeNoReturn(req, opGate, err)
	}
	r, c, err := d.loadAndConnect(ctx, st, false)
	if err != nil {
		return fail(err)
	}
	if err := d.holdsLock(ctx, st); err != nil {
		return fail(err)
	}
	now := d.now()
	heads, err := fleet.Heads(ctx, c.AutoScaling, ownerOf(st))
	if err != nil {
		return fail(err)
	}
	whole, err := fleet.Describe(ctx, c.AutoScaling, groupNames(st))
	if err != nil {
		return fail(err)
	}
	reads := activitiesExact
	if st.Retire != nil && st.Retire.ActivitiesRead && req.Execution.RetryCount == 0 {
		reads = activitiesOnChange // read moments before (gateReads)
	}
	j, err := d.healthReport(ctx, c, st, r, now, reads, balancersAll, whole)
	if err != nil {
		return fail(err)
	}
	if err := judgeSwap(ctx, c, r, req, j, now); err != nil {
		return ledger.Intent{}, nil, err
	}
	summaries := fleet.Summaries(heads)
	previous, elsewhere, err := d.previousEverywhere(ctx, c, st, summaries)
	if err != nil {
		return fail(err)
	}
	attached, err := d.servedBefore(ctx, c, st, previous, summaries)
	if err != nil {
		return fail(err)
	}
	plan, wrote, err := d.ledger.CreateDeleting(ctx, st.ProjectName, st.ConfigName, ledger.Intent{
		ReleaseID: st.ReleaseID, Execution: req.Execution.ID, Since: now, Groups: previous, Attached: attached, Elsewhere: elsewhere,
	})
	if err != nil {
		return fail(err)
	}
	if wrote {
		d.log.Info("retiring the previous groups", "release_id", st.ReleaseID, "groups", plan.Groups)
	}
	return plan, &listing{heads: fleet.ByName(heads), whole: whole}, nil
}

// gateStep is the swap before its point of no return: the scaling
// activities no check read, in an invocation of their own when they are
// many (gateReads), else the gate. next is what the step reports while the gate is still to
// come (at once after those reads, or after a throttled step's wait); nil
// once the gate passed, with its plan and listing.
func (d *Deployer) gateStep(ctx context.Context, st *execution.State, req execution.Request) (plan ledger.Intent, listed *listing, next *execution.Retire, err error) {
	read, err := d.gateReads(ctx, st, req)
	if err == nil && read {
		return ledger.Intent{}, nil, keepThrottled(st, &execution.Retire{ActivitiesRead: true}), nil // the gate at once
	}
	if err == nil {
		plan, listed, err = d.gate(ctx, st, req)
	}
	if w, ok := d.throttledStep(st, req, err); ok {
		return ledger.Intent{}, nil, w, nil // the gate again after the wait
	}
	return plan, listed, nil, err
}

// gateReads reads, before the gate, the new groups' scaling activities
// when those no check read (Health's ActivitiesAt nil) take more than
// tuning.GateReadsInline pages (two a group of 100 instances): those
// pages then take an invocation of their own, the gate following at once
// in the next with its own calls (the listing, every load balancer the
// release names). It reads them, and asks of every other group whether
// an activity began since its last read (fleet.ActivitySince, one
// record), reading it again if so: the gate right after it then reads
// nothing more but where its check sees a change (Retire.ActivitiesRead;
// a gate the state machine retried, or one after a throttled step's
// wait, asks again), as if it had read them itself. It records what they say in st.Health as
// a check would: the terminations (a new one restarts the service's
// stability window), a failed launch that will fail again (a
// *failure.DeployError); more terminations than a service's max_terms
// fail here already (a *failure.HaltError). It reports whether it read.
// A failure is the gate's (beforeNoReturn); throttling is the caller's.
func (d *Deployer) gateReads(ctx context.Context, st *execution.State, req execution.Request) (bool, error) {
	if pages := unreadPages(st); pages <= tuning.GateReadsInline {
		return false, nil
	}
	r, c, err := d.loadAndConnect(ctx, st, false)
	if err != nil {
		return false, beforeNoReturn(req, opGate, err)
	}
	for _, svc := range st.Services {
		prev, ok := st.Health.Services[svc]
		if !ok {
			continue
		}
		name := naming.GroupName(st.ProjectName, st.ConfigName, svc, st.ReleaseID)
		read, err := readSince(ctx, c.AutoScaling, name, prev.ActivitiesAt)
		if err != nil {
			return false, beforeNoReturn(req, opGate, err)
		}
		if read == nil {
			continue // nothing began since its last read
		}
		cur, err := counted(name, prev, prev, *read)
		if err != nil {
			return false, err
		}
		st.Health.Services[svc] = health.Track(prev, cur, d.now()) // once read: see healthReport
	}
	return true, checkTerminations(r, st.Health.Services)
}

// unreadPages is how many pages reading the scaling activities no check
// read takes, of st's new groups: one per fleet.ActivitiesPerCall
// instances of a group's launch count (each was an activity), and one
// more.
func unreadPages(st *execution.State) int {
	if st.Health == nil {
		return 0
	}
	pages := 0
	for _, svc := range st.Services {
		if s, ok := st.Health.Services[svc]; ok && s.ActivitiesAt == nil {
			pages += s.Launch/fleet.ActivitiesPerCall + 1
		}
	}
	return pages
}

// judgeSwap is the gate's judgement of the new groups (j, at now): a
// failed release when one had a termination its release does not allow,
// is out of a load balancer its release names, is no longer stable, an
// alarm the release names is in ALARM or an error rate above its bound,
// or a load balancer or target group it names has no healthy instance.
func judgeSwap(ctx context.Context, c *cloud.Clients, r *release.Release, req execution.Request, j judgement, now time.Time) error {
	report := j.report
	if err := checkTerminations(r, report); err != nil {
		return err
	}
	if err := checkOutOf(r, j); err != nil {
		return err
	}
	if err := checkGates(ctx, c, r, now); err != nil {
		return beforeNoReturn(req, opGate, err)
	}
	if bad := health.Unstable(report, now); len(bad) > 0 {
		for _, svc := range bad {
			if report[svc].Missing && !lastAttempt(req) {
				return &failure.RetryableError{Op: "re-check " + svc, Err: errors.New("its new group is not visible (eventual consistency)")}
			}
		}
		return &failure.HaltError{Reason: "no longer stable before retiring the previous groups: " + joinNames(bad)}
	}
	return checkDark(j)
}

// previousNames are the names of what the swap retires: every group of the
// project-config another release made that is not being deleted already,
// and every launch template of another release (one whose group is gone
// is an orphan to remove too).
func (d *Deployer) previousNames(ctx context.Context, c *cloud.Clients, st *execution.State) ([]string, error) {
	groups, err := fleet.List(ctx, c.AutoScaling, ownerOf(st))
	if err != nil {
		return nil, err
	}
	return d.previousOf(ctx, c, st, groups)
}

// previousOf is previousNames of groups, the project-config's as a
// listing showed them.
func (d *Deployer) previousOf(ctx context.Context, c *cloud.Clients, st *execution.State, groups []fleet.Summary) ([]string, error) {
	templates, err := fleet.Templates(ctx, c.EC2, ownerOf(st))
	if err != nil {
		return nil, err
	}
	return fleet.Others(st.ReleaseID, groups, templates), nil
}

// servedBefore is how each previous group of names AWS shows served
// before the swap, for the deleting record: its load balancers, target
// groups and capacity as the bake's standby record has them (Bake
// detached it), else as AWS shows them now; and the processes to resume
// when it is put back: those the bake suspended, and those of
// fleet.RetireProcesses it has not suspended (the retirement suspends
// them). It reads no group's instances (fleet.Summary); the groups
// known (a listing moments before) are not described again
// (fleet.DescribeSummaries).
func (d *Deployer) servedBefore(ctx context.Context, c *cloud.Clients, st *execution.State, names []string, known []fleet.Summary) ([]ledger.StandbyGroup, error) {
	sb, _, err := d.ledger.GetStandby(ctx, st.ProjectName, st.ConfigName, st.ReleaseID)
	if err != nil {
		return nil, err
	}
	groups, err := fleet.DescribeSummaries(ctx, c.AutoScaling, names, known)
	if err != nil {
		return nil, err
	}
	var out []ledger.StandbyGroup
	for _, name := range slices.Sorted(maps.Keys(groups)) {
		g := groups[name]
		if g.Deleting() {
			continue
		}
		sg := servingOf(g, nil)
		if i := slices.IndexFunc(sb.Groups, func(s ledger.StandbyGroup) bool { return s.Name == name }); i >= 0 {
			sg = sb.Groups[i]
		}
		for _, p := range g.Unsuspended(fleet.RetireProcesses) {
			if !slices.Contains(sg.Suspended, p) {
				sg.Suspended = append(sg.Suspended, p)
			}
		}
		out = append(out, sg)
	}
	return out, nil
}

// recheck judges the new groups again, as CheckHealthy does (each
// service's healthy instances against its target), on every step of the
// swap while a previous group of the plan, in the release's environment
// or another (a move's old one: notScaledIn), has not been scaled in yet
// (its desired capacity above zero: its instances are not terminating,
// it can serve again). When a service is below its target it puts every
// such group back, in its environment, as the deleting record says it
// served (fleet.Retirer.Restore:
// its load balancers and target groups, its capacity, its processes) and
// fails with a *failure.CleanUpError: FailureDirty, not a rollback, for
// the new groups, below target, still serve beside the previous ones and
// are left for a person to judge; the lock is kept. A previous group is
// never scaled in while a new one is below its target. A new group AWS
// does not show is retryable until the last attempt.
//
// It judges the groups of the release's environment as the step's
// describes showed them (view: stepSeen), and does not judge the new
// groups again when the gate judged them stable in this invocation,
// moments before (judged: a stricter judgement than this one).
func (d *Deployer) recheck(ctx context.Context, c *cloud.Clients, st *execution.State, req execution.Request, r *release.Release, plan ledger.Intent, retirer *fleet.Retirer, view swapView, judged bool) error {
	live, err := d.notScaledIn(ctx, c, st, req, plan, retirer, view.previous)
	if err != nil || len(live) == 0 || judged {
		return err
	}
	below, err := d.belowTarget(ctx, c, st, req, r, view.seen)
	if err != nil || len(below) == 0 {
		return err
	}
	left := []string{"the new release's groups, below their target (" + strings.Join(below, "; ") + ")"}
	for _, l := range live {
		if err := l.retirer.Restore(ctx, l.group, restoreAs(l.served)); err != nil {
			return err
		}
		left = append(left, "previous group "+l.served.Name+l.where+": attached again to its load balancers and target groups, serving beside the new release's groups")
	}
	d.log.Warn("the new groups fell below their target while the previous ones drained: put the previous groups back", "release_id", st.ReleaseID, "below", below)
	return &failure.CleanUpError{Leftovers: left,
		Err: errors.New("re-check while retiring the previous groups: the new groups fell below their target; the previous groups serve again beside them")}
}

// belowTarget names each service of r whose new group has fewer healthy
// instances than its target, as CheckHealthy judges them (or is gone),
// the groups as seen shows them. A group AWS does not show is retryable
// until the last attempt.
func (d *Deployer) belowTarget(ctx context.Context, c *cloud.Clients, st *execution.State, req execution.Request, r *release.Release, seen map[string]asgtypes.AutoScalingGroup) ([]string, error) {
	j, err := d.healthReport(ctx, c, st, r, d.now(), activitiesOnChange, balancersAll, seen)
	if err != nil {
		return nil, err
	}
	var below []string
	for _, svc := range r.ServiceNames() {
		if out := j.outOf[svc]; len(out) > 0 {
			below = append(below, fmt.Sprintf("service %s: out of %s", svc, joinRefs(out)))
			continue
		}
		switch s := j.report[svc]; {
		case s.Missing && !lastAttempt(req):
			return nil, &failure.RetryableError{Op: "re-check " + svc, Err: errors.New("its new group is not visible (eventual consistency)")}
		case s.Missing || s.Healthy < s.Target:
			below = append(below, fmt.Sprintf("service %s: %d of its %d healthy %s", svc, s.Healthy, s.Target, unitsOf(r.Services[svc])))
		}
	}
	return below, nil
}

// opGate names the swap's gate in its errors.
const opGate = "re-check before retiring the previous groups"

// beforeNoReturn is how op (the bake, or the gate) fails: a failed
// release. A transient failure is retried while retries remain, then
// fails the release like any other; a failure that names no state
// machine error is a *failure.DeployError.
func beforeNoReturn(req execution.Request, op string, err error) error {
	if failure.IsRetryable(err) {
		if !lastAttempt(req) {
			return err
		}
		return &failure.DeployError{Op: op, Err: fmt.Errorf("still failing after %d retries: %w", tuning.TaskRetryMaxAttempts, err)}
	}
	if name := failure.NameOf(err); name == failure.NameHalt || name == failure.NameDeploy {
		return err
	}
	return &failure.DeployError{Op: op, Err: err}
}

// retire does the swap past its point of no return, a step at a time
// (see cleanUpSuccess): every failure goes through pastNoReturn. listed
// is the gate's listing when the gate ran in this invocation (nil
// otherwise): its judgement of the new groups stands for the step's
// re-check, and its descriptions for the step's. turn is the most Auto
// Scaling calls the step's turn allows (0: no bound; awaitTurn), those of
// the gate before it in the invocation counted in.
func (d *Deployer) retire(ctx context.Context, st *execution.State, req execution.Request, plan ledger.Intent, listed *listing, turn int) (*execution.Retire, error) {
	p := &retireProgress{plan: plan}
	fail := d.failedStep(ctx, st, req, p)
	r, c, err := d.loadAndConnect(ctx, st, false)
	if err != nil {
		return fail(err)
	}
	p.clients = c
	if err := d.holdsLock(ctx, st); err != nil {
		return fail(err)
	}
	if err := d.recordCurrent(ctx, st, req, r, plan.Since); err != nil {
		return fail(err)
	}
	p.current = true
	log := d.log.With("release_id", st.ReleaseID, "task", execution.TaskCleanUpSuccess)
	b := d.besideOf(ctx, st, len(plan.AllGroups()), d.now().Sub(plan.Since))
	// What the step spends of Auto Scaling's bucket before its retirer:
	// its two describes of the groups (swapView), or, when the gate ran
	// in it instead, the gate's listing and describe and a read of each
	// new group's activities.
	spent := 2
	if listed != nil {
		spent = 2 + len(st.Services)
	}
	retirer := &fleet.Retirer{API: c.AutoScaling, Owner: ownerOf(st), Owns: notRelease(st.ReleaseID), LastAttempt: lastAttempt(req), Calls: within(b.calls(), turn, spent), Log: log}
	resumeRetirer(retirer, st)
	view, err := d.stepSeen(ctx, c, st, req, r, plan, retirer, listed)
	if err != nil {
		return fail(err)
	}
	seen := view.seen
	ret, err := d.stepEverywhere(ctx, st, req, plan, retirer, view.previous, log)
	if w, ok := d.throttledPart(st, req, ret, err, d.now().Sub(plan.Since)); ok {
		return w, nil
	}
	if err != nil {
		return fail(err)
	}
	if !ret.Ready {
		elapsed := d.now().Sub(plan.Since)
		w, err := notReady(ret, elapsed, d.yielding(st, b, b.wait(req, elapsed, retireWait(elapsed, req))))
		if err != nil {
			return fail(err)
		}
		w.Underway = b.crowd
		return w, nil
	}
	remover := &fleet.Remover{Clients: c, Owner: ownerOf(st), Owns: notRelease(st.ReleaseID), Described: seen, Log: log}
	removal, err := d.removeEverywhere(ctx, st, plan, remover, log)
	if err != nil {
		return fail(err)
	}
	p.retired = true
	d.pruneTargets(ctx, st, r)
	st.Retired = plan.AllGroups()
	d.announce(ctx, c, st, events.Event{Kind: events.Swapped, Body: events.SwappedDetail{
		Head: d.head(st, req, events.Swapped), Retired: strs(st.Retired)}})
	d.log.Info("previous groups removed", "release_id", st.ReleaseID, "removed_groups", removal.Removed)
	// A delete a group removed is spent too, and the settle's describe
	// of the new groups when the step saw the previous ones whole.
	spent += len(removal.Removed)
	if !retirer.Headless {
		spent++
	}
	settling, err := d.settleRest(ctx, c, st, req, r, p, seen, spent, turn)
	if err != nil {
		return fail(err)
	}
	return settling, nil
}

// failedStep is what a step of the retirement past its point of no
// return makes of its error: a step AWS throttled is taken again after a
// wait (throttledStep), once the previous groups are gone (p.retired)
// still settling, at a deploy's pace: what is left (settle, record,
// unlock) is a few calls the release's success waits on. Any other
// failure is the retirement's (pastNoReturn).
func (d *Deployer) failedStep(ctx context.Context, st *execution.State, req execution.Request, p *retireProgress) func(error) (*execution.Retire, error) {
	return func(err error) (*execution.Retire, error) {
		if w, ok := d.throttledStep(st, req, err); ok {
			if p.retired {
				w.Settling, w.WaitSeconds = true, throttledWait(req, w.Throttled)
			}
			return w, nil
		}
		return nil, d.pastNoReturn(ctx, st, req, p, err)
	}
}

// settleStep is a step of the swap once the previous groups are gone
// (Retire.Settling): only while the lock is this release's, it settles
// the next of the new groups and, once every one is, ends the release
// (settleRest). Its failures are those of the retirement past its point
// of no return, the previous groups gone (pastNoReturn); a step AWS
// throttled is taken again after a deploy's wait, still settling. turn
// is the most Auto Scaling calls the step's turn allows (0: no bound).
func (d *Deployer) settleStep(ctx context.Context, st *execution.State, req execution.Request, turn int) (*execution.Retire, error) {
	p := &retireProgress{current: true, retired: true}
	fail := d.failedStep(ctx, st, req, p)
	r, c, err := d.loadAndConnect(ctx, st, false)
	if err != nil {
		return fail(err)
	}
	p.clients = c
	if err := d.holdsLock(ctx, st); err != nil {
		return fail(err)
	}
	settling, err := d.settleRest(ctx, c, st, req, r, p, nil, 1, turn) // its describe of the new groups
	if err != nil {
		return fail(err)
	}
	return settling, nil
}

// settleRest settles the new groups (settle) within a step's share of
// Auto Scaling's one bucket: tuning.SettleCallsPerStep, or the step's
// turn's calls when fewer (turn, 0: no bound), less what the step spent
// on its other work (spent), and tuning.SettleLastCalls in all when it
// settles the last of them. While some are left, it reports
// a step Settling, the next after the bucket refilled what this one
// spent (settleWait); once every one is settled, it ends the release:
// the published assets collected, Success recorded, the lock released,
// Release Succeeded announced. A release so never ends with the bucket
// drained by its own last calls.
func (d *Deployer) settleRest(ctx context.Context, c *cloud.Clients, st *execution.State, req execution.Request, r *release.Release, p *retireProgress, seen map[string]asgtypes.AutoScalingGroup, spent, turn int) (*execution.Retire, error) {
	budget := tuning.SettleCallsPerStep
	if turn > 0 {
		budget = min(budget, turn)
	}
	made, left, err := d.settle(ctx, c, st, req, seen, budget-spent, tuning.SettleLastCalls-spent)
	if err != nil {
		return nil, err
	}
	if left {
		wait := d.settleWait(ctx, st, spent+made)
		d.log.Info("settling the new groups: the rest after the wait", "release_id", st.ReleaseID, "calls", made, "wait_seconds", wait)
		return &execution.Retire{Settling: true, WaitSeconds: wait}, nil
	}
	p.settled = true
	d.collectPublished(ctx, c, st)
	if err := d.recordSuccess(ctx, st, req, r); err != nil {
		return nil, err
	}
	if err := d.finish(ctx, st); err != nil {
		return nil, err
	}
	d.announceOutcome(ctx, c, st, req, ledger.Outcome{End: execution.EndSuccess})
	d.log.Info("release succeeded", "release_id", st.ReleaseID, "retired", st.Retired)
	return &execution.Retire{Done: true}, nil
}

// settleWait is the wait in seconds after a step that spent calls of
// Auto Scaling's one bucket settling: the time the bucket takes to
// refill them (limits.AutoScalingRefill a second; its whole burst at
// most), tuning.SettleStepWait at least; beside k deploys on their way
// to a healthy fleet (underway), k+1 times as long (theirs is the rest
// of the refill), tuning.RetireYieldMax at most.
func (d *Deployer) settleWait(ctx context.Context, st *execution.State, spent int) int {
	spent = min(max(spent, 1), limits.AutoScalingBurst)
	k := d.underway(ctx, st)
	wait := (spent*(k+1) + limits.AutoScalingRefill - 1) / limits.AutoScalingRefill
	return min(max(wait, int(tuning.SettleStepWait/time.Second)), int(tuning.RetireYieldMax/time.Second))
}

// throttledStep is how a step of a retirement that AWS throttled (err,
// every failure of which is throttling: cloud.Throttled) ends while
// fewer than limits.MaxThrottledSteps were: the step is taken again
// after the wait (tuning.ThrottledRetireSteps; every step is idempotent),
// still reporting the groups the previous step saw. Throttling is AWS
// asking the account's callers to slow down; failing for it would leave
// the release dirty, and its lock kept, for no fault of its own.
// Otherwise ok is false and err is the task's to classify.
func (d *Deployer) throttledStep(st *execution.State, req execution.Request, err error) (*execution.Retire, bool) {
	w := &execution.Retire{}
	if st.Retire != nil {
		w.Groups, w.Throttled, w.Underway = st.Retire.Groups, st.Retire.Throttled, st.Retire.Underway
	}
	if !cloud.Throttled(err) || w.Throttled >= limits.MaxThrottledSteps {
		return nil, false
	}
	w.Throttled++
	w.WaitSeconds = throttledRetireWait(req, w.Throttled)
	d.log.Warn("a step was throttled: taking it again after the wait", "release_id", st.ReleaseID, "wait_seconds", w.WaitSeconds, "throttled", w.Throttled, "error", err.Error())
	return w, true
}

// throttledPart is how a retirement step that AWS throttled part-way
// (ret.Stopped, err a throttling error) ends: as a throttled step
// (throttledStep), reporting what the step did (ret) and where the next
// one starts. A step that got some groups through (ret.Stepped) made
// progress: until tuning.RetireTimeout after the retirement began
// (elapsed), it does not count against limits.MaxThrottledSteps, so a
// retirement of more groups than a step's calls get through still ends.
// ok is false for any other step.
func (d *Deployer) throttledPart(st *execution.State, req execution.Request, ret fleet.Retirement, err error, elapsed time.Duration) (*execution.Retire, bool) {
	if err == nil || ret.Stopped == "" {
		return nil, false
	}
	w, ok := d.throttledStep(st, req, err)
	if ok {
		w.Groups, w.From = ret.State(), ret.Stopped
		if ret.Stepped > 0 && elapsed < tuning.RetireTimeout {
			w.Throttled--
		}
	}
	return w, ok
}

// swapView is how a step of the swap sees its groups (stepSeen).
type swapView struct {
	// previous are the previous groups the deleting record names in the
	// release's environment, described without their instances while one
	// of them may still serve (mayServe; the Retirer then steps them
	// Headless), else with them.
	previous map[string]asgtypes.AutoScalingGroup
	// seen are the groups described with their instances, the only ones
	// a judgement, a removal or a settle may read: the new groups while a
	// previous one may serve (the re-check judges them), else the
	// previous ones (and the new ones when the gate described them in
	// this invocation).
	seen map[string]asgtypes.AutoScalingGroup
}

// stepSeen is how a step of the swap sees its groups (swapView), none
// described again that the gate's listing (listed) showed moments before
// in this invocation, then re-checked (recheck, the gate's judgement
// standing for its own when the gate ran). It sets retirer Headless when
// it steps previous groups described without their instances.
//
// A step describes the previous groups without their instances first,
// unless the last step saw every one of them out of its load balancers.
// While one may serve, it describes the new ones with theirs, which the
// re-check judges; once none does, the previous ones with theirs, which
// the retirer needs to see emptied, and the new ones not at all: no step
// decodes both fleets' instances (at 50 services of 100 instances,
// 10,500 of them, which decoding made most of a step's time at a 512 MB
// Lambda's share of a CPU), at the cost of a describe more a step while
// the previous groups drain.
func (d *Deployer) stepSeen(ctx context.Context, c *cloud.Clients, st *execution.State, req execution.Request, r *release.Release, plan ledger.Intent, retirer *fleet.Retirer, listed *listing) (swapView, error) {
	known := listing{}
	if listed != nil {
		known = *listed
	}
	var view swapView
	var err error
	if !detached(plan.Groups, retirer.Detached) {
		view.previous, err = fleet.DescribeHeads(ctx, c.AutoScaling, plan.Groups, known.heads)
		if err != nil {
			return swapView{}, err
		}
		retirer.Headless = mayServe(plan.Groups, view.previous)
	}
	if retirer.Headless {
		view.seen, err = fleet.DescribeKnown(ctx, c.AutoScaling, groupNames(st), known.whole)
	} else {
		view.previous, err = fleet.Describe(ctx, c.AutoScaling, plan.Groups)
		view.seen = maps.Clone(view.previous)
		maps.Copy(view.seen, known.whole) // the gate's, moments before
	}
	if err != nil {
		return swapView{}, err
	}
	return view, d.recheck(ctx, c, st, req, r, plan, retirer, view, listed != nil)
}

// detached says whether a previous step saw every one of names out of
// its load balancers (fleet.DetachedIn: scaling in, or empty).
func detached(names []string, seen map[string]bool) bool {
	return !slices.ContainsFunc(names, func(name string) bool { return !seen[name] })
}

// mayServe says whether one of names, as groups shows them, may still
// serve (notScaled).
func mayServe(names []string, groups map[string]asgtypes.AutoScalingGroup) bool {
	return slices.ContainsFunc(names, func(name string) bool {
		g, ok := groups[name]
		return ok && notScaled(g)
	})
}

// notScaled says whether g may still serve: not being deleted, its
// desired capacity above zero (not scaled in).
func notScaled(g asgtypes.AutoScalingGroup) bool {
	return !fleet.Deleting(g) && aws.ToInt32(g.DesiredCapacity) > 0
}

// resumeRetirer sets retirer to go on from the State's last report of
// the retirement: the groups it saw detached, the group a throttled step
// stopped at.
func resumeRetirer(retirer *fleet.Retirer, st *execution.State) {
	if st.Retire != nil {
		retirer.Detached, retirer.Draining, retirer.From = fleet.DetachedIn(st.Retire.Groups), fleet.DrainingIn(st.Retire.Groups), st.Retire.From
		retirer.Reported = st.Retire.Groups
	}
}

// keepThrottled carries the count of throttled steps from the previous
// report into next, unless next counts more (nil: nothing to carry
// into).
func keepThrottled(st *execution.State, next *execution.Retire) *execution.Retire {
	if next != nil && st.Retire != nil {
		next.Throttled = max(next.Throttled, st.Retire.Throttled)
	}
	return next
}

// notRelease says whether tags are those of another release than id's:
// what the swap may retire.
func notRelease(id string) func(tags map[string]string) bool {
	return func(tags map[string]string) bool { return tags[naming.TagReleaseID] != id }
}

// recordCurrent writes the current record: the new release serves, from
// the swap on (at, the point of no return). A destroy removes the record
// instead: nothing will serve. Idempotent.
func (d *Deployer) recordCurrent(ctx context.Context, st *execution.State, req execution.Request, r *release.Release, at time.Time) error {
	if r.Destroy {
		return d.ledger.ClearCurrent(ctx, st.ProjectName, st.ConfigName)
	}
	sums := map[string]string{}
	for _, svc := range st.Services {
		data, err := userData(r, st.Target, svc)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		sums[svc] = hex.EncodeToString(sum[:])
	}
	by, id, name := d.author(ctx, st, r.CreatedBy)
	return d.ledger.PutCurrent(ctx, st.ProjectName, st.ConfigName, ledger.Current{
		ReleaseID: st.ReleaseID, Execution: req.Execution.ID, ReleaseSHA256: st.ReleaseSHA256,
		CreatedBy: by, CreatedByID: id, CreatedByName: name, DeployedAt: at, UserDataSHA256: sums, Services: st.Services,
		DeployerVersion: d.cfg.Version, ReleaseVersion: r.Version, Description: r.Description,
		AccountID: st.Target.AccountID, Region: st.Target.Region, Qualifier: st.Target.Qualifier, Groups: currentGroups(st),
	})
}

// recordSuccess writes the Success outcome, once the previous groups are
// gone and before the lock is released: a failure releasing it overwrites
// the outcome with FailureDirty. Release Succeeded is put only once the
// lock is released (announceOutcome after finish): never before a
// Release Failed.
func (d *Deployer) recordSuccess(ctx context.Context, st *execution.State, req execution.Request, r *release.Release) error {
	by, id, name := d.author(ctx, st, r.CreatedBy)
	return d.recordOutcome(ctx, st, ledger.Outcome{
		ReleaseID: st.ReleaseID, Execution: req.Execution.ID, End: execution.EndSuccess,
		StartedAt: req.Execution.StartTime, EndedAt: d.now(), CreatedBy: by, CreatedByID: id, CreatedByName: name,
	})
}

// settle readies each new group for life after the swap (fleet.Settle:
// scaled from ferry's launch count down to the service's desired
// capacity, the scaling processes Deploy suspended resumed), the groups
// in the services' order until the next would take it over budget Auto
// Scaling calls (fleet.SettleCalls: none for a group settled already),
// or over last when it would settle them all (the last group is then
// left for a step of its own), side by side (tuning.MakeParallel at a
// time): made is how many calls it made, left whether a group is left
// unsettled for the next step. A
// refusal is a *failure.CleanUpError naming the group and what it kept;
// a group AWS does not show (not in a describe, or "not found" from a
// call) is retryable until the last attempt: AWS is eventually
// consistent. The groups seen (the step's describe, moments before) are
// not described again.
func (d *Deployer) settle(ctx context.Context, c *cloud.Clients, st *execution.State, req execution.Request, seen map[string]asgtypes.AutoScalingGroup, budget, last int) (made int, left bool, err error) {
	names := groupNames(st)
	groups, err := fleet.DescribeKnown(ctx, c.AutoScaling, names, seen)
	if err != nil {
		return 0, false, err
	}
	type settling struct {
		group           asgtypes.AutoScalingGroup
		desired, launch int
	}
	var now []settling
	for i, svc := range st.Services {
		g, ok := groups[names[i]]
		if !ok {
			return 0, false, &failure.RetryableError{Op: "settle " + names[i], Err: errors.New("the new group is not visible (eventual consistency)")}
		}
		var s execution.ServiceHealth
		if st.Health != nil {
			s = st.Health.Services[svc]
		}
		n := fleet.SettleCalls(g, s.Desired, s.Launch)
		if left = left || made+n > budget; left || n == 0 {
			continue
		}
		now, made = append(now, settling{g, s.Desired, s.Launch}), made+n
	}
	if k := len(now) - 1; !left && made > last && k >= 0 {
		left, made, now = true, made-fleet.SettleCalls(now[k].group, now[k].desired, now[k].launch), now[:k]
	}
	rel := d.fleetRelease(c, st, req)
	err = fanout.Each(ctx, tuning.MakeParallel, len(now), func(ctx context.Context, i int) error {
		return rel.Settle(ctx, now[i].group, now[i].desired, now[i].launch)
	})
	return made, left, err
}

// retireProgress is how far retire got, to name what a failure leaves.
type retireProgress struct {
	plan    ledger.Intent
	clients *cloud.Clients
	current bool // the current record names the new release
	retired bool // the previous groups are gone
	settled bool // the new groups are settled
}

// pastNoReturn is how CleanUpSuccess fails past its point of no return
// (or when it cannot tell whether it is): retryable while retries remain
// and the failure is transient; else a *failure.CleanUpError naming what
// is left, recorded in a FailureDirty outcome (p nil: it does not know
// how far it got, and names what of the previous release AWS shows).
func (d *Deployer) pastNoReturn(ctx context.Context, st *execution.State, req execution.Request, p *retireProgress, err error) error {
	ce, retry := asCleanUp(req, err)
	if retry != nil {
		return retry
	}
	left := slices.Clone(ce.Leftovers)
	lock := "the lock " + naming.LockKey(st.ProjectName, st.ConfigName) + " (kept)"
	if p == nil {
		// How far it got is unknown: what stands of the previous release
		// is what AWS shows now, or, when AWS cannot tell, what Deploy
		// saw.
		p = &retireProgress{plan: ledger.Intent{Groups: st.Previous}}
		if c, err := d.connect(ctx, st, false); err == nil {
			p.clients = c
			if names, err := d.previousNames(ctx, c, st); err == nil {
				p.plan.Groups = names
			}
		}
		p.plan.Elsewhere = d.mayBeElsewhere(ctx, st)
	}
	switch {
	case !p.retired:
		names, known := d.standing(ctx, p)
		for _, name := range names {
			if slices.Contains(left, "auto scaling group "+name) {
				continue // the removal named it already
			}
			if known {
				left = append(left, "previous group and launch template "+name+" (not deleted)")
			} else {
				left = append(left, "previous group and launch template "+name+" (may remain)")
			}
		}
		left = append(left, leftElsewhere(p.plan, left)...)
	}
	if !p.current {
		left = append(left, "the current record of "+st.ProjectName+"/"+st.ConfigName+" (still names the previous release)")
	}
	if !p.settled {
		left = append(left, "the new groups not settled (at ferry's launch count, "+strings.Join(fleet.DeployProcesses, " and ")+" suspended)")
	}
	ce = &failure.CleanUpError{Leftovers: append(left, lock), Err: ce.Err}
	d.recordDirty(ctx, st, req, ce)
	return ce
}

// standing names the groups of the plan that still stand: those AWS shows
// (not being deleted), known true; or, when it cannot tell, every one of
// them, known false.
func (d *Deployer) standing(ctx context.Context, p *retireProgress) (names []string, known bool) {
	if p.clients != nil {
		if groups, err := fleet.Describe(ctx, p.clients.AutoScaling, p.plan.Groups); err == nil {
			for _, name := range p.plan.Groups {
				if g, ok := groups[name]; ok && !fleet.Deleting(g) {
					names = append(names, name)
				}
			}
			return names, true
		}
	}
	return p.plan.Groups, false
}

// currentGroups are what the current record names of each service: its
// group, image and desired capacity.
func currentGroups(st *execution.State) []ledger.CurrentGroup {
	out := make([]ledger.CurrentGroup, 0, len(st.Services))
	for _, svc := range st.Services {
		g := ledger.CurrentGroup{Service: svc, Group: naming.GroupName(st.ProjectName, st.ConfigName, svc, st.ReleaseID), ImageID: st.Images[svc]}
		if st.Health != nil {
			g.Desired, g.ReadySeconds = st.Health.Services[svc].Desired, st.Health.Services[svc].ReadySeconds
		}
		out = append(out, g)
	}
	return out
}
