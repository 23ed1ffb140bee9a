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
	"github.com/ferryhq/ferry/internal/ledger"
	"github.com/ferryhq/ferry/internal/tuning"
)

// rollBack is CleanUpFailure's first step after a bake (a standby record
// exists, ledger.GetStandby): the previous groups standing by go back
// into the load balancers and target groups the record names for each,
// those it was attached to and those its release names (the world may
// have detached it from one before the bake; a record without the
// latter has them read again, previousNamed), with their
// recorded capacity set back (someone, or a scheduled action, may have
// scaled them in while they stood by) and the processes Bake suspended
// resumed (fleet.Retirer.Restore), and the
// release's own groups leave only once every previous group has as many
// instances passing every one of its load balancers' health checks as it
// stood by with. Until then it reports where each stands (waiting, not
// nil); once they are, it records so (RestoredAt) and returns the
// groups that serve again. Without a record, or once restored, it does
// nothing more. Idempotent, and only while the release holds the lock.
//
// It fails with a *failure.CleanUpError, never leaving nothing to serve,
// when a previous group is gone, or is not healthy within
// tuning.RollbackTimeout of the rollback's start: the release's own
// groups are then left serving beside whatever stands.
func (d *Deployer) rollBack(ctx context.Context, st *execution.State, req execution.Request) (restored []string, waiting *execution.Retire, err error) {
	sb, found, err := d.ledger.GetStandby(ctx, st.ProjectName, st.ConfigName, st.ReleaseID)
	switch {
	case err != nil:
		return nil, nil, err
	case !found:
		return nil, nil, nil
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
	restoring, err := d.restore(ctx, c, st, req, sb)
	if err != nil {
		return nil, nil, err
	}
	if len(restoring) > 0 {
		if now.Sub(*sb.RollbackSince) > tuning.RollbackTimeout {
			return nil, nil, notRestored(restoring, now.Sub(*sb.RollbackSince))
		}
		return nil, &execution.Retire{WaitSeconds: int(tuning.RollbackCheckInterval / time.Second), Restoring: restoring}, nil
	}
	sb.RestoredAt = &now
	if err := d.ledger.PutStandby(ctx, st.ProjectName, st.ConfigName, sb); err != nil {
		return nil, nil, err
	}
	d.log.Info("rolled back: the previous groups serve again", "release_id", st.ReleaseID, "groups", standbyNames(sb))
	return standbyNames(sb), nil, nil
}

// restore puts each group of sb back (fleet.Retirer.Restore, restoreAs)
// and returns those not healthy yet in every load balancer and target
// group sb names for it (attached or named): fewer of their InService
// instances pass every one's health checks than they stood by with.
func (d *Deployer) restore(ctx context.Context, c *cloud.Clients, st *execution.State, req execution.Request, sb ledger.Standby) ([]execution.RestoringGroup, error) {
	groups, err := fleet.Describe(ctx, c.AutoScaling, standbyNames(sb))
	if err != nil {
		return nil, err
	}
	retirer := &fleet.Retirer{API: c.AutoScaling, Owner: ownerOf(st), Owns: notRelease(st.ReleaseID), LastAttempt: lastAttempt(req),
		Log: d.log.With("release_id", st.ReleaseID, "task", execution.TaskCleanUpFailure)}
	var elbs, tgs []string
	for _, sg := range sb.Groups {
		g, ok := groups[sg.Name]
		if !ok || fleet.Deleting(g) {
			if !ok && !lastAttempt(req) {
				return nil, &failure.RetryableError{Op: "roll back to " + sg.Name, Err: errors.New("the group is not visible (eventual consistency)")}
			}
			return nil, &failure.CleanUpError{
				Leftovers: []string{"previous group " + sg.Name + ": gone, nothing to roll back to (the release's groups are left serving)"},
				Err:       fmt.Errorf("roll back to %s: the group is gone", sg.Name),
			}
		}
		as := restoreAs(sg)
		if err := retirer.Restore(ctx, g, as); err != nil {
			return nil, err
		}
		elbs, tgs = append(elbs, as.LoadBalancers...), append(tgs, as.TargetGroups...)
	}
	views, err := balancers.Read(ctx, c.ELB, c.ELBv2, elbs, tgs)
	if err != nil {
		return nil, err
	}
	var restoring []execution.RestoringGroup
	for _, sg := range sb.Groups {
		if n := servingIn(groups[sg.Name], restoreAs(sg), views); n < sg.Desired {
			restoring = append(restoring, execution.RestoringGroup{Name: sg.Name, Healthy: n, Want: sg.Desired})
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
	named, found, err := d.previousNamed(ctx, c, st)
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
// its groups. found is false when there is no current record, it names
// st's own release, or its release cannot be trusted any more or names a
// target group that no longer exists (logged): nothing to add then.
func (d *Deployer) previousNamed(ctx context.Context, c *cloud.Clients, st *execution.State) (named map[string]ledger.Balancers, found bool, err error) {
	cur, found, err := d.ledger.GetCurrent(ctx, st.ProjectName, st.ConfigName)
	if err != nil || !found || cur.ReleaseID == st.ReleaseID {
		return nil, false, err
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
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
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
	return named, true, nil
}
