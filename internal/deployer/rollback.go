package deployer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"

	"github.com/ferryhq/ferry/internal/balancers"
	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/fleet"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/ledger"
	"github.com/ferryhq/ferry/internal/tuning"
)

// rollBack is CleanUpFailure's first step: nothing of the release
// leaves its load balancers while the previous release serves below its
// healthy target in them. After a bake (a standby record exists,
// ledger.GetStandby) the previous groups standing by go back into the
// load balancers and target groups the record names for each, those it
// was attached to and those its release names (the world may have
// detached it from one before the bake; a record without the latter has
// them read again, previousNamed), with their recorded capacity set
// back (someone, or a scheduled action, may have scaled them in while
// they stood by) and the processes Bake suspended resumed
// (fleet.Retirer.Restore), and the release's own groups leave only once
// every previous group has as many instances passing every one of its
// load balancers' health checks as it stood by with; once they do, it
// records so (RestoredAt) and returns the groups that serve again.
// Before a bake, the previous groups never left: the release's groups
// leave only once each previous group is at its healthy target in the
// load balancers they share (keepServing). Until then it reports where
// each stands (waiting, not nil). Without a previous release, or once
// restored, it does nothing more. Idempotent, and only while the release
// holds the lock.
//
// It fails with a *failure.CleanUpError, never leaving nothing to serve,
// when a previous group is gone, or is not healthy within
// tuning.RollbackTimeout of the rollback's start: the release's own
// groups are then left serving beside whatever stands.
func (d *Deployer) rollBack(ctx context.Context, st *execution.State, req execution.Request, intent *ledger.Intent) (restored []string, waiting *execution.Retire, err error) {
	sb, found, err := d.ledger.GetStandby(ctx, st.ProjectName, st.ConfigName, st.ReleaseID)
	switch {
	case err != nil:
		return nil, nil, err
	case !found:
		waiting, err := d.keepServing(ctx, st, req, intent)
		return nil, waiting, err
	case sb.RestoredAt != nil:
		return standbyNames(sb), nil, nil
	}
	if err := d.holdsLock(ctx, st); err != nil {
		return nil, nil, err
	}
	c, err := d.connect(ctx, st, false)
	if err != nil {
		return nil, nil, err
	}
	if err := d.fillNamed(ctx, c, st, sb.Groups); err != nil {
		return nil, nil, err
	}
	now := d.now()
	if sb.RollbackSince == nil {
		sb.RollbackSince = &now
		if err := d.ledger.PutStandby(ctx, st.ProjectName, st.ConfigName, sb); err != nil {
			return nil, nil, err
		}
		d.log.Info("rolling back: the previous groups serve again", "release_id", st.ReleaseID, "groups", standbyNames(sb))
	}
	groups, err := fleet.Describe(ctx, c.AutoScaling, standbyNames(sb))
	if err != nil {
		return nil, nil, err
	}
	var rs []restoration
	for _, sg := range sb.Groups {
		rs = append(rs, restoration{name: sg.Name, serving: restoreAs(sg), want: sg.Desired})
	}
	if waiting, err := d.awaitRestored(ctx, c, st, req, rs, groups, *sb.RollbackSince); err != nil || waiting != nil {
		return nil, waiting, err
	}
	sb.RestoredAt = &now
	if err := d.ledger.PutStandby(ctx, st.ProjectName, st.ConfigName, sb); err != nil {
		return nil, nil, err
	}
	d.log.Info("rolled back: the previous groups serve again", "release_id", st.ReleaseID, "groups", standbyNames(sb))
	return standbyNames(sb), nil, nil
}

// A restoration is one previous group a rollback waits for: how it is to
// serve (its load balancers and target groups, the capacity and
// processes to restore) and how many of its InService instances must
// pass every one of those load balancers' health checks.
type restoration struct {
	name    string
	serving fleet.Serving
	want    int
}

// keepServing is rollBack before a bake (no standby record): the
// release's groups may leave only once every previous group (the current
// record's, in the release's target) serving in a load balancer or
// target group the release names has, in each of those its own release
// names, at least its service's healthy target of instances passing the
// health checks (capacity.Compute from the desired capacity it was
// deployed with, never above its desired capacity now), as the load
// balancers themselves see it. A previous group out of one of them is
// attached back first (fleet.Retirer.Restore); its capacity and
// processes are left as they are. The wait is bounded by
// tuning.RollbackTimeout from its start, recorded first in the deploying
// record (intent.RollbackSince). Once the retirement of the release's
// groups began (intent.RetiringSince), or with no previous release, it
// does nothing.
func (d *Deployer) keepServing(ctx context.Context, st *execution.State, req execution.Request, intent *ledger.Intent) (*execution.Retire, error) {
	if intent.RetiringSince != nil {
		return nil, nil
	}
	cur, found, err := d.ledger.GetCurrent(ctx, st.ProjectName, st.ConfigName)
	if err != nil || !found || cur.ReleaseID == st.ReleaseID {
		return nil, err
	}
	r, err := d.loadRelease(ctx, st)
	if err != nil {
		return nil, err
	}
	if d.currentTarget(cur, nil) != st.Target {
		return nil, nil
	}
	if err := d.holdsLock(ctx, st); err != nil {
		return nil, err
	}
	c, err := d.connect(ctx, st, false)
	if err != nil {
		return nil, err
	}
	rs, groups, err := d.previousServing(ctx, c, st, r, cur)
	if err != nil || len(rs) == 0 {
		return nil, err
	}
	if intent.RollbackSince == nil {
		now := d.now()
		intent.RollbackSince = &now
		if err := d.putIntent(ctx, st, req, intent); err != nil {
			return nil, err
		}
	}
	return d.awaitRestored(ctx, c, st, req, rs, groups, *intent.RollbackSince)
}

// previousServing are the restorations keepServing waits for: each group
// of cur serving in a load balancer or target group r names, with those
// of them its own release names (previousNamed), and the groups as AWS
// shows them. When the previous release cannot be trusted any more, a
// group's attachments stand for what it names and its deployed capacity
// for its healthy target.
func (d *Deployer) previousServing(ctx context.Context, c *cloud.Clients, st *execution.State, r *release.Release, cur ledger.Current) ([]restoration, map[string]asgtypes.AutoScalingGroup, error) {
	ours, err := namedBalancers(ctx, c, r)
	if err != nil {
		return nil, nil, err
	}
	shared := map[string]bool{}
	for _, sb := range ours {
		for _, lb := range sb.elbs {
			shared[lb] = true
		}
		for _, tg := range sb.tgs {
			shared[tg.arn] = true
		}
	}
	named, prev, _, err := d.previousNamed(ctx, c, st)
	if err != nil {
		return nil, nil, err
	}
	if prev != nil {
		prev.ApplyDefaults()
	}
	names := make([]string, len(cur.Groups))
	for i, cg := range cur.Groups {
		names[i] = cg.Group
	}
	groups, err := fleet.Describe(ctx, c.AutoScaling, names)
	if err != nil {
		return nil, nil, err
	}
	var rs []restoration
	for _, cg := range cur.Groups {
		r, err := restorationOf(cg, groups[cg.Group], prev, named)
		if err != nil {
			return nil, nil, err
		}
		r.serving.LoadBalancers = slices.DeleteFunc(r.serving.LoadBalancers, func(lb string) bool { return !shared[lb] })
		r.serving.TargetGroups = slices.DeleteFunc(r.serving.TargetGroups, func(tg string) bool { return !shared[tg] })
		if len(r.serving.LoadBalancers)+len(r.serving.TargetGroups) > 0 {
			rs = append(rs, r)
		}
	}
	return rs, groups, nil
}

// restorationOf is how the previous group cg (g as AWS shows it) is to
// serve: in the load balancers and target groups its release prev names
// for its service (named, by group), at least its service's healthy
// target from the capacity it was deployed with; without prev, in those
// it is attached to, at that capacity. Never more instances than g's
// desired capacity now.
func restorationOf(cg ledger.CurrentGroup, g asgtypes.AutoScalingGroup, prev *release.Release, named map[string]ledger.Balancers) (restoration, error) {
	r := restoration{name: cg.Group, want: cg.Desired,
		serving: fleet.Serving{LoadBalancers: slices.Clone(g.LoadBalancerNames), TargetGroups: slices.Clone(g.TargetGroupARNs)}}
	if prev != nil && prev.Services[cg.Service] != nil {
		n := named[cg.Group]
		r.serving = fleet.Serving{LoadBalancers: slices.Clone(n.LoadBalancers), TargetGroups: slices.Clone(n.TargetGroups)}
		plan, err := planOf(prev, cg.Service, &cg.Desired)
		if err != nil {
			return restoration{}, err
		}
		r.want = plan.Healthy
	}
	if g.DesiredCapacity != nil {
		r.want = min(r.want, int(*g.DesiredCapacity))
	}
	return r, nil
}

// awaitRestored puts each group of rs back (restore) and returns where
// the rollback waits: nil once each is healthy; else the groups not
// healthy yet, to check again after tuning.RollbackCheckInterval, until
// tuning.RollbackTimeout has passed since the rollback began (since),
// when it fails (notRestored).
func (d *Deployer) awaitRestored(ctx context.Context, c *cloud.Clients, st *execution.State, req execution.Request, rs []restoration, groups map[string]asgtypes.AutoScalingGroup, since time.Time) (*execution.Retire, error) {
	restoring, err := d.restore(ctx, c, st, req, rs, groups)
	switch {
	case err != nil:
		return nil, err
	case len(restoring) == 0:
		return nil, nil
	case d.now().Sub(since) > tuning.RollbackTimeout:
		return nil, notRestored(restoring, d.now().Sub(since))
	}
	return &execution.Retire{WaitSeconds: int(tuning.RollbackCheckInterval / time.Second), Restoring: restoring}, nil
}

// restore puts each group of rs back (fleet.Retirer.Restore; groups are
// as AWS shows them) and returns those not healthy yet in every load
// balancer and target group it is to serve in: fewer of their InService
// instances pass every one's health checks than they want.
func (d *Deployer) restore(ctx context.Context, c *cloud.Clients, st *execution.State, req execution.Request, rs []restoration, groups map[string]asgtypes.AutoScalingGroup) ([]execution.RestoringGroup, error) {
	retirer := &fleet.Retirer{API: c.AutoScaling, Owner: ownerOf(st), Owns: notRelease(st.ReleaseID), LastAttempt: lastAttempt(req),
		Log: d.log.With("release_id", st.ReleaseID, "task", execution.TaskCleanUpFailure)}
	var elbs, tgs []string
	for _, r := range rs {
		g, ok := groups[r.name]
		if !ok || fleet.Deleting(g) {
			if !ok && !lastAttempt(req) {
				return nil, &failure.RetryableError{Op: "roll back to " + r.name, Err: errors.New("the group is not visible (eventual consistency)")}
			}
			return nil, &failure.CleanUpError{
				Leftovers: []string{"previous group " + r.name + ": gone, nothing to roll back to (the release's groups are left serving)"},
				Err:       fmt.Errorf("roll back to %s: the group is gone", r.name),
			}
		}
		if err := retirer.Restore(ctx, g, r.serving); err != nil {
			return nil, err
		}
		elbs, tgs = append(elbs, r.serving.LoadBalancers...), append(tgs, r.serving.TargetGroups...)
	}
	views, err := balancers.Read(ctx, c.ELB, c.ELBv2, elbs, tgs)
	if err != nil {
		return nil, err
	}
	var restoring []execution.RestoringGroup
	for _, r := range rs {
		if n := servingIn(groups[r.name], r.serving, views); n < r.want {
			restoring = append(restoring, execution.RestoringGroup{Name: r.name, Healthy: n, Want: r.want})
		}
	}
	return restoring, nil
}

// servingIn counts g's InService instances that pass the health checks of
// every load balancer and target group s names.
func servingIn(g asgtypes.AutoScalingGroup, s fleet.Serving, views balancers.Views) int {
	n := 0
	for _, inst := range g.Instances {
		id := aws.ToString(inst.InstanceId)
		if inst.LifecycleState != asgtypes.LifecycleStateInService {
			continue
		}
		serving := true
		for _, lb := range s.LoadBalancers {
			serving = serving && views.ELB[lb][id] == "InService"
		}
		for _, tg := range s.TargetGroups {
			serving = serving && views.TargetGroups[tg][id] == "healthy"
		}
		if serving {
			n++
		}
	}
	return n
}

// notRestored is the failure of a rollback whose previous groups did not
// pass their health checks in time: the release's groups stay, serving
// (leftServing names them).
func notRestored(restoring []execution.RestoringGroup, after time.Duration) error {
	var left []string
	for _, r := range restoring {
		left = append(left, fmt.Sprintf("previous group %s, back in its load balancers with %d of %d instances healthy", r.Name, r.Healthy, r.Want))
	}
	return &failure.CleanUpError{Leftovers: left,
		Err: fmt.Errorf("roll back: the previous groups are not healthy in their load balancers %s after they were put back", after.Round(time.Second))}
}

// fillNamed sets, in memory, the Named of the groups of a standby record
// written without them (ledger.StandbyGroup) from previousNamed: a group
// the previous release does not name gets none. When that release cannot
// be read, the groups keep what they have (their attachments).
func (d *Deployer) fillNamed(ctx context.Context, c *cloud.Clients, st *execution.State, groups []ledger.StandbyGroup) error {
	if !slices.ContainsFunc(groups, func(sg ledger.StandbyGroup) bool { return sg.Named == nil }) {
		return nil
	}
	named, _, found, err := d.previousNamed(ctx, c, st)
	if err != nil || !found {
		return err
	}
	for i := range groups {
		if groups[i].Named == nil {
			n := named[groups[i].Name]
			groups[i].Named = &n
		}
	}
	return nil
}

// previousNamed are, by group name, the classic load balancers and target
// groups (ARNs) the previous release (the one the current record names,
// read through ledger.VerifiedRelease) names for the service of each of
// its groups, and that release (as decoded, no defaults applied). found
// is false when there is no current record, it names
// st's own release, or its release cannot be trusted any more or names a
// target group that no longer exists (logged): nothing to add then.
func (d *Deployer) previousNamed(ctx context.Context, c *cloud.Clients, st *execution.State) (named map[string]ledger.Balancers, prev *release.Release, found bool, err error) {
	cur, found, err := d.ledger.GetCurrent(ctx, st.ProjectName, st.ConfigName)
	if err != nil || !found || cur.ReleaseID == st.ReleaseID {
		return nil, nil, false, err
	}
	r, _, err := d.ledger.VerifiedRelease(ctx, st.ProjectName, st.ConfigName, cur.ReleaseID)
	var set namedSet
	if err == nil {
		set, err = namedBalancers(ctx, c, r)
	}
	var bad *failure.BadReleaseError
	var gone *failure.DeployError
	if errors.As(err, &bad) || errors.As(err, &gone) {
		d.log.Warn("the previous release's load balancers could not be read: the previous groups go back where they were attached", "release_id", st.ReleaseID, "previous_release_id", cur.ReleaseID, "error", err)
		return nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, false, err
	}
	named = map[string]ledger.Balancers{}
	for _, g := range cur.Groups {
		if sb, ok := set[g.Service]; ok {
			b := ledger.Balancers{LoadBalancers: sb.elbs}
			for _, tg := range sb.tgs {
				b.TargetGroups = append(b.TargetGroups, tg.arn)
			}
			named[g.Group] = b
		}
	}
	return named, r, true, nil
}
