package deployer

import (
	"context"
	"errors"
	"fmt"
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
// into the load balancers and target groups the record names, with their
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

// restore puts each group of sb back (fleet.Retirer.Restore) and returns
// those not healthy yet in every load balancer and target group sb names
// for it: fewer of their InService instances pass every one's health
// checks than they stood by with.
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
		if err := retirer.Restore(ctx, g, restoreAs(sg)); err != nil {
			return nil, err
		}
		elbs, tgs = append(elbs, sg.LoadBalancers...), append(tgs, sg.TargetGroups...)
	}
	views, err := balancers.Read(ctx, c.ELB, c.ELBv2, elbs, tgs)
	if err != nil {
		return nil, err
	}
	var restoring []execution.RestoringGroup
	for _, sg := range sb.Groups {
		if n := servingIn(groups[sg.Name], sg, views); n < sg.Desired {
			restoring = append(restoring, execution.RestoringGroup{Name: sg.Name, Healthy: n, Want: sg.Desired})
		}
	}
	return restoring, nil
}

// servingIn counts g's InService instances that pass the health checks of
// every load balancer and target group sg names.
func servingIn(g asgtypes.AutoScalingGroup, sg ledger.StandbyGroup, views balancers.Views) int {
	n := 0
	for _, inst := range g.Instances {
		id := aws.ToString(inst.InstanceId)
		if inst.LifecycleState != asgtypes.LifecycleStateInService {
			continue
		}
		serving := true
		for _, lb := range sg.LoadBalancers {
			serving = serving && views.ELB[lb][id] == "InService"
		}
		for _, tg := range sg.TargetGroups {
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
