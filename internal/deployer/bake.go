package deployer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/events"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/fleet"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/ledger"
)

// opBake names the bake in its errors.
const opBake = "bake"

// bake is the Bake task: once the release is healthy, its new groups
// serve alone for the release's bake_seconds while the previous groups
// stand by, at their capacity and out of their load balancers, ready to
// serve again at once. Whether there is a bake is the verified release's
// to say (loadRelease), never the State's. Without one it reports Done
// and touches nothing in the target. Each invocation, in order:
//
//  1. fails with a *failure.HaltError when a halt marker was written
//     after the execution started; then, only while this release holds
//     the lock, when a service's new group is out of a load balancer its
//     release names (checkOutOf), below its healthy target (judged on the
//     load balancers the release names) or lost more instances than its
//     max_terms tolerates, or an alarm
//     the release names is in ALARM (checkAlarms), or the canary
//     analysis scores below its marginal_score. Each of these rolls
//     back: CleanUpFailure puts the previous groups back and waits until
//     they are healthy before the new ones leave.
//  2. On its first invocation it records the previous groups, each with
//     the load balancers and target groups it is attached to, those its
//     release names, and the processes it will suspend
//     (ledger.CreateStandby, written once, before anything is
//     detached), then takes each out of its load
//     balancers (fleet.Retirer.StandBy: they drain it as a retirement
//     does) and suspends its scaling alarms and scheduled actions, so it
//     stays at its capacity.
//  3. Reports Done once the bake has run its time from the record, else
//     how long to wait before the next check.
//
// Every failure but a halt is a failed release before the point of no
// return (beforeNoReturn): nothing is deleted, and CleanUpFailure rolls
// back.
func (d *Deployer) bake(ctx context.Context, req execution.Request) (any, error) {
	st, err := d.verify(ctx, req)
	if err != nil {
		return nil, err
	}
	r, err := d.loadRelease(ctx, st)
	if err != nil {
		return nil, beforeNoReturn(req, opBake, err)
	}
	if st.BakeSeconds <= 0 {
		st.Bake = &execution.Bake{Done: true}
		return st, nil // nothing baked: no event
	}
	if err := d.checkHalt(ctx, st, req); err != nil {
		return nil, beforeNoReturn(req, opBake, err)
	}
	c, err := d.connect(ctx, st, false)
	if err != nil {
		return nil, beforeNoReturn(req, opBake, err)
	}
	if err := d.holdsLock(ctx, st); err != nil {
		return nil, beforeNoReturn(req, opBake, err)
	}
	now := d.now()
	if err := d.judgeBake(ctx, c, st, req, r, now); err != nil {
		return nil, beforeNoReturn(req, opBake, err)
	}
	standby, err := d.standBy(ctx, c, st, req, now)
	if err != nil {
		return nil, beforeNoReturn(req, opBake, err)
	}
	left := standby.Since.Add(time.Duration(st.BakeSeconds) * time.Second).Sub(now)
	names := standbyNames(standby)
	if left <= 0 {
		d.log.Info("baked", "release_id", st.ReleaseID, "standby", names)
		st.Bake = &execution.Bake{Done: true, Standby: names, Detached: true}
		d.announce(ctx, c, st, events.Event{Kind: events.Baked, Body: events.BakedDetail{
			Head: d.head(st, req, events.Baked), BakeSeconds: st.BakeSeconds}})
		return st, nil
	}
	st.Bake = &execution.Bake{
		WaitSeconds: bakeWait(d.cfg.HealthCheckInterval, st.BakeSeconds, left),
		LeftSeconds: int(math.Ceil(left.Seconds())), Standby: names, Detached: true,
	}
	return st, nil
}

// judgeBake is the bake's health check (see bake): a *failure.HaltError
// when a service is below its healthy target, lost more instances than
// its max_terms tolerates, or an alarm the release names is in ALARM, or
// a service's error rate is above its max_error_rate (checkGates), or
// the canary analysis fails (bakeAnalysis). A
// new group AWS does not show is retryable until the last attempt (AWS
// is eventually consistent). It carries the report on in st.Health.
func (d *Deployer) judgeBake(ctx context.Context, c *cloud.Clients, st *execution.State, req execution.Request, r *release.Release, now time.Time) error {
	j, err := d.healthReport(ctx, c, st, r, now, activitiesOnChange, balancersAll, nil)
	if err != nil {
		return err
	}
	report := j.report
	if err := checkTerminations(r, report); err != nil {
		return err
	}
	if err := checkOutOf(r, j); err != nil {
		return err
	}
	if err := checkGates(ctx, c, r, now); err != nil {
		return err
	}
	a, err := d.bakeAnalysis(ctx, c, st, r, now)
	if err != nil {
		return err
	}
	for _, svc := range r.ServiceNames() {
		s := report[svc]
		switch {
		case s.Missing && !lastAttempt(req):
			return &failure.RetryableError{Op: "check " + svc, Err: errors.New("its new group is not visible (eventual consistency)")}
		case s.Missing || s.Healthy < s.Target:
			return &failure.HaltError{Reason: fmt.Sprintf("service %s: %d of its %d healthy %s during the bake", svc, s.Healthy, s.Target, unitsOf(r.Services[svc]))}
		}
	}
	if st.Health == nil {
		st.Health = &execution.Health{Healthy: true}
	}
	st.Health.Services = report
	if a != nil {
		st.Health.Analysis = a
	}
	return nil
}

// bakeAnalysis is the canary analysis of a bake check (analyze): the new
// groups' last window against the previous groups' last window before
// they stood by (the standby record's Since; now before it is written,
// while they still serve). A failing score rolls back; a marginal one,
// or no data, goes on: the release passed its analysis to be healthy.
func (d *Deployer) bakeAnalysis(ctx context.Context, c *cloud.Clients, st *execution.State, r *release.Release, now time.Time) (*execution.Analysis, error) {
	if r.Analysis == nil {
		return nil, nil
	}
	baseline := now
	sb, found, err := d.ledger.GetStandby(ctx, st.ProjectName, st.ConfigName, st.ReleaseID)
	if err != nil {
		return nil, err
	}
	if found {
		baseline = sb.Since
	}
	return d.analyze(ctx, c.CloudWatch, st, r, now, baseline, true)
}

// standBy returns the bake's standby record, writing it first when there
// is none (the previous groups as AWS shows them, each with its load
// balancers, target groups, desired capacity and the processes to
// suspend, and those its release names: previousNamed), and, until the
// State says they are detached, takes each group it names out of its
// load balancers (fleet.Retirer.StandBy).
func (d *Deployer) standBy(ctx context.Context, c *cloud.Clients, st *execution.State, req execution.Request, now time.Time) (ledger.Standby, error) {
	sb, found, err := d.ledger.GetStandby(ctx, st.ProjectName, st.ConfigName, st.ReleaseID)
	if err != nil {
		return ledger.Standby{}, err
	}
	if !found {
		if sb, err = d.createStandby(ctx, c, st, req, now); err != nil {
			return ledger.Standby{}, err
		}
	}
	if st.Bake != nil && st.Bake.Detached {
		return sb, nil
	}
	names := standbyNames(sb)
	groups, err := fleet.Describe(ctx, c.AutoScaling, names)
	if err != nil {
		return ledger.Standby{}, err
	}
	retirer := &fleet.Retirer{API: c.AutoScaling, Owner: ownerOf(st), Owns: notRelease(st.ReleaseID), LastAttempt: lastAttempt(req),
		Log: d.log.With("release_id", st.ReleaseID, "task", execution.TaskBake)}
	for _, name := range names {
		if g, ok := groups[name]; ok && !fleet.Deleting(g) {
			if err := retirer.StandBy(ctx, g); err != nil {
				return ledger.Standby{}, err
			}
		}
	}
	d.log.Info("baking: the previous groups stand by", "release_id", st.ReleaseID, "standby", names, "bake_seconds", st.BakeSeconds)
	return sb, nil
}

// createStandby writes the bake's standby record once (see standBy) and
// returns it, or the one an earlier attempt wrote.
func (d *Deployer) createStandby(ctx context.Context, c *cloud.Clients, st *execution.State, req execution.Request, now time.Time) (ledger.Standby, error) {
	groups, err := fleet.List(ctx, c.AutoScaling, ownerOf(st))
	if err != nil {
		return ledger.Standby{}, err
	}
	sb := ledger.Standby{ReleaseID: st.ReleaseID, Execution: req.Execution.ID, Since: now}
	for _, g := range groups {
		if g.Release() == st.ReleaseID || g.Deleting() {
			continue
		}
		sb.Groups = append(sb.Groups, servingOf(g, g.Unsuspended(fleet.StandbyProcesses)))
	}
	slices.SortFunc(sb.Groups, func(a, b ledger.StandbyGroup) int { return cmp.Compare(a.Name, b.Name) })
	if err := d.fillNamed(ctx, c, st, sb.Groups); err != nil {
		return ledger.Standby{}, err
	}
	sb, _, err = d.ledger.CreateStandby(ctx, st.ProjectName, st.ConfigName, sb)
	return sb, err
}

// servingOf is how g serves now, as a standby or deleting record keeps
// it: its load balancers, target groups, desired capacity and minimum
// size, with the processes to resume when it is put back.
func servingOf(g fleet.Summary, resume []string) ledger.StandbyGroup {
	return ledger.StandbyGroup{
		Name: g.Name, LoadBalancers: g.LoadBalancers, TargetGroups: g.TargetGroups,
		Desired: g.Desired, Min: g.Min, Suspended: resume,
	}
}

// restoreAs is how sg is to serve again, for fleet.Retirer.Restore: in
// the load balancers and target groups it was attached to and those its
// release names (sg.Named), at its capacity.
func restoreAs(sg ledger.StandbyGroup) fleet.Serving {
	s := fleet.Serving{LoadBalancers: slices.Clone(sg.LoadBalancers), TargetGroups: slices.Clone(sg.TargetGroups), Desired: sg.Desired, Min: sg.Min, Resume: sg.Suspended}
	if sg.Named != nil {
		s.LoadBalancers = union(s.LoadBalancers, sg.Named.LoadBalancers)
		s.TargetGroups = union(s.TargetGroups, sg.Named.TargetGroups)
	}
	return s
}

// union is a with those of b it lacks appended, in order.
func union(a, b []string) []string {
	for _, x := range b {
		if !slices.Contains(a, x) {
			a = append(a, x)
		}
	}
	return a
}

// bakeWait is how long the state machine waits before the next bake
// check: interval, stretched so a bake of bakeSeconds takes at most
// limits.MaxBakeChecks, never past the bake's end (left), at least a
// second.
func bakeWait(interval time.Duration, bakeSeconds int, left time.Duration) int {
	bake := time.Duration(bakeSeconds) * time.Second
	wait := min(max(interval, (bake+limits.MaxBakeChecks-1)/limits.MaxBakeChecks), left)
	return max(1, int(math.Ceil(wait.Seconds())))
}

// standbyNames are the names of the groups a standby record names.
func standbyNames(sb ledger.Standby) []string {
	names := make([]string, len(sb.Groups))
	for i, g := range sb.Groups {
		names[i] = g.Name
	}
	return names
}
