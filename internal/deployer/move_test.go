package deployer

import (
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/target"
)

// west is the environment a config moves to in these tests: the
// deployer's account in another region, a copy of its own.
const west = "us-west-2"

// withWest adds west to the world: the deployer's account's region
// copied, bootstrapped the same way.
func withWest(t testing.TB) func(*sim.WorldSpec) {
	return func(s *sim.WorldSpec) { require.NoError(t, s.CopyRegion(account, region, west)) }
}

// groupsIn are the live groups (not being deleted) of account a, region
// rg, by name.
func (h *harness) groupsIn(a, rg string) []string {
	var out []string
	for _, s := range h.world.Snapshot().Accounts {
		if s.Account != a || s.Region != rg {
			continue
		}
		for _, g := range s.Groups {
			if g.Status == "" {
				out = append(out, g.Name)
			}
		}
	}
	slices.Sort(out)
	return out
}

// cutsIn is how many cuts the load balancers and target groups of
// account a, region rg counted (sim.RegistrationSnapshot), and how many of
// them were going dark (or a gap in service), not connections dropped.
func (h *harness) cutsIn(a, rg string) (cuts, dark int) {
	for _, s := range h.world.Snapshot().Accounts {
		if s.Account == a && s.Region == rg {
			for _, r := range append(s.LoadBalancers, s.TargetGroups...) {
				cuts, dark = cuts+r.CutConnections, dark+r.WentDark
			}
		}
	}
	return cuts, dark
}

// movedRelease is the harness's release in west, moving from move (nil:
// not asked for).
func (h *harness) movedRelease(move *target.Target) *release.Release {
	r := h.baseRelease()
	r.Region, r.MoveFrom = west, move
	return r
}

var east = target.Target{AccountID: account, Region: region}

// TestMoveIsRefusedUnlessAskedFor: a config deployed in us-east-1 whose
// next release targets us-west-2 is refused at Validate, by a message
// that names both environments and the move_from that asks for the move,
// and so is a move_from that names another environment than the one
// deployed; plan refuses it the same way. Nothing is made in us-west-2.
func TestMoveIsRefusedUnlessAskedFor(t *testing.T) {
	h := newHarness(t, withWest(t))
	r1 := h.baseRelease()
	h.start(r1).succeed()
	h.clk.Advance(time.Hour)

	wrong := target.Target{AccountID: "222222222222", Region: region}
	for _, tc := range []struct {
		name string
		move *target.Target
		want string
	}{
		{"not asked for", nil, "move_from: coinbase/deploy-test development is deployed to account 111111111111 region us-east-1, this release to account 111111111111 region us-west-2: " +
			`to move it there and retire the fleet left behind, set "move_from": {"account_id":"111111111111","region":"us-east-1"} (ferry rollback --move-from 111111111111/us-east-1)`},
		{"from elsewhere", &wrong, "move_from: names account 222222222222 region us-east-1, but coinbase/deploy-test development is deployed to account 111111111111 region us-east-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.movedRelease(tc.move)
			p, err := h.planOf(r)
			require.NoError(t, err)
			assert.False(t, p.Proceed)
			require.NotEmpty(t, p.Refusals)
			assert.Contains(t, p.Refusals[0], tc.want)

			err = h.start(r).step(execution.TaskValidate)
			var bad *failure.BadReleaseError
			require.ErrorAs(t, err, &bad)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	assert.Empty(t, h.groupsIn(account, west), "nothing is made in us-west-2")
	_, found, err := h.ledger.GetTargets(t.Context(), project, config)
	require.NoError(t, err)
	require.True(t, found, "the first deploy recorded its environment")
}

// TestMoveRetiresTheOldFleet: a move asked for deploys to us-west-2 and
// its swap retires the us-east-1 group gracefully (out of its load
// balancers, drained, scaled to zero, deleted empty: no connection cut;
// the us-east-1 load balancers are withdrawn on purpose, as a destroy
// leaves them, while us-west-2's never go dark), within the same
// CleanUpSuccess; the plan lists the us-east-1 group
// under retire, the deleting record names it with its environment, the
// current record names us-west-2, the targets record us-west-2 alone,
// and a drift query finds nothing. Deployed again with the same
// move_from (the file run again), it is an ordinary deploy.
func TestMoveRetiresTheOldFleet(t *testing.T) {
	h := newHarness(t, withWest(t))
	r1 := h.baseRelease()
	h.start(r1).succeed()
	old := naming.GroupName(project, config, "web", r1.ReleaseID)
	h.clk.Advance(time.Hour)

	move := east
	r2 := h.movedRelease(&move)
	p, err := h.planOf(r2)
	require.NoError(t, err)
	assert.True(t, p.Proceed, "refusals: %v", p.Refusals)
	assert.Contains(t, p.Retire, old)
	assert.Equal(t, []execution.TargetGroups{{Target: east, Groups: []string{old}}}, p.Elsewhere)

	h.world.ResetCalls()
	x := h.start(r2)
	x.succeed()
	assert.Equal(t, []string{naming.GroupName(project, config, "web", r2.ReleaseID)}, h.groupsIn(account, west))
	assert.Empty(t, h.groupsIn(account, region), "the us-east-1 fleet is retired")
	assert.Equal(t, []string{old}, x.state.Retired)
	cuts, _ := h.cutsIn(account, west)
	assert.Zero(t, cuts, "the new region's load balancers never dark")
	cuts, _ = h.cutsIn(account, region)
	assert.Zero(t, cuts, "the old region's withdrawn, drained, on purpose, as a destroy leaves them: nothing cut")
	var ops []string
	for _, c := range h.world.CallLog() {
		if c.Region == region && slices.Contains([]string{"DetachLoadBalancers", "DetachLoadBalancerTargetGroups", "UpdateAutoScalingGroup", "DeleteAutoScalingGroup"}, c.Op) {
			if len(ops) == 0 || ops[len(ops)-1] != c.Op {
				ops = append(ops, c.Op)
			}
		}
	}
	assert.Equal(t, []string{"DetachLoadBalancers", "DetachLoadBalancerTargetGroups", "UpdateAutoScalingGroup", "DeleteAutoScalingGroup"}, ops,
		"in us-east-1: detached, scaled to zero, deleted once empty")

	del, found, err := h.ledger.GetDeleting(t.Context(), project, config, r2.ReleaseID)
	require.NoError(t, err)
	require.True(t, found)
	assert.Empty(t, del.Groups, "nothing to retire in us-west-2")
	require.Len(t, del.Elsewhere, 1)
	assert.Equal(t, east, del.Elsewhere[0].Target)
	assert.Contains(t, del.Elsewhere[0].Groups, old)
	cur, _, err := h.ledger.GetCurrent(t.Context(), project, config)
	require.NoError(t, err)
	assert.Equal(t, west, cur.Region)
	targets, _, err := h.ledger.GetTargets(t.Context(), project, config)
	require.NoError(t, err)
	assert.Equal(t, []target.Target{{AccountID: account, Region: west}}, targets.Targets)
	assert.Empty(t, h.driftNow().Drifts)

	h.clk.Advance(time.Hour)
	r3 := h.movedRelease(&move)
	h.start(r3).succeed()
	assert.Equal(t, []string{naming.GroupName(project, config, "web", r3.ReleaseID)}, h.groupsIn(account, west))
}

// TestMoveToOtherLoadBalancers: a move to an environment whose classic
// load balancer has another name needs no detach for the old one: the
// old environment's load balancers are left with its fleet, which the
// move retires; the new group serves from the new load balancer.
func TestMoveToOtherLoadBalancers(t *testing.T) {
	const westELB = "cdt-web-elb-west"
	h := newHarness(t, withWest(t), func(s *sim.WorldSpec) {
		for i := range s.Accounts[0].Regions {
			if r := &s.Accounts[0].Regions[i]; r.Name == west {
				r.ELBs[0].Name = westELB
			}
		}
	})
	r1 := h.baseRelease()
	h.start(r1).succeed()
	h.clk.Advance(time.Hour)

	move := east
	r2 := h.movedRelease(&move)
	r2.Services["web"].ELBs = []string{westELB}
	p, err := h.planOf(r2)
	require.NoError(t, err)
	assert.True(t, p.Proceed, "refusals: %v", p.Refusals)
	assert.Empty(t, p.Detach)
	h.start(r2).succeed()
	assert.Empty(t, h.groupsIn(account, region))
	assert.Equal(t, []string{naming.GroupName(project, config, "web", r2.ReleaseID)}, h.groupsIn(account, west))
	assert.Zero(t, h.world.CutConnections(), "no connection cut")
}

// TestMoveLeavingOutAServiceNamesItUnderRemove: a move whose release
// leaves out a service serving in the old environment would retire it
// there: plan and ValidateResources refuse it as any removal, unless the
// release names it under remove.
func TestMoveLeavingOutAServiceNamesItUnderRemove(t *testing.T) {
	h := newHarness(t, withWest(t))
	r1 := h.baseRelease()
	r1.Services["worker"] = &release.Service{InstanceType: "t3.small", SecurityGroups: []string{"ec2::coinbase/deploy-test::development-worker"}}
	h.start(r1).succeed()
	h.clk.Advance(time.Hour)

	move := east
	r2 := h.movedRelease(&move)
	p, err := h.planOf(r2)
	require.NoError(t, err)
	assert.Empty(t, p.Remove, "a refused deploy removes nothing: its refusal names worker")
	require.Len(t, p.Refusals, 1)
	assert.Contains(t, p.Refusals[0], "remove: the deploy would delete the serving groups of worker")
	x := h.start(r2)
	err = x.steps(execution.TaskValidate, execution.TaskLock, execution.TaskValidateResources)
	var bad *failure.BadReleaseError
	require.ErrorAs(t, err, &bad)
	assert.Contains(t, err.Error(), "worker")
	require.NoError(t, x.fail(err))

	h.clk.Advance(time.Hour)
	r3 := h.movedRelease(&move)
	r3.Remove = []string{"worker"}
	p, err = h.planOf(r3)
	require.NoError(t, err)
	assert.True(t, p.Proceed, "refusals: %v", p.Refusals)
	h.start(r3).succeed()
	assert.Empty(t, h.groupsIn(account, region))
}

// TestMoveCrashedBeforeTheSwapIsNotForgotten: a move that made its group
// in us-west-2 and stopped before its swap (its clean-up never ran) left
// groups in both environments: a drift query reports the us-west-2
// group, a plan lists it, and a destroy retires both.
func TestMoveCrashedBeforeTheSwapIsNotForgotten(t *testing.T) {
	h := newHarness(t, withWest(t))
	r1 := h.baseRelease()
	h.start(r1).succeed()
	h.clk.Advance(time.Hour)

	move := east
	r2 := h.movedRelease(&move)
	x := h.start(r2)
	require.NoError(t, x.steps(upToDeploy...))
	stray := naming.GroupName(project, config, "web", r2.ReleaseID)
	require.Equal(t, []string{stray}, h.groupsIn(account, west))
	require.NoError(t, h.locks.Release(t.Context(), project, config, r2.ReleaseID), "the execution is gone; an operator unlocks")

	h.clk.Advance(time.Hour)
	drift := h.driftNow()
	require.Len(t, drift.Drifts, 1)
	assert.Equal(t, execution.DriftExtraGroup, drift.Drifts[0].Kind)
	assert.Equal(t, stray, drift.Drifts[0].Group)
	assert.Equal(t, &target.Target{AccountID: account, Region: west}, drift.Drifts[0].Target)

	require.NotEmpty(t, h.groupsIn(account, region), "the us-east-1 fleet still serves")
	d := h.destroyRelease()
	p, err := h.planOf(d)
	require.NoError(t, err)
	assert.Contains(t, p.Retire, stray)
	h.start(d).succeed()
	h.clk.Advance(10 * time.Minute)
	assert.Empty(t, h.groupsIn(account, region))
	assert.Empty(t, h.groupsIn(account, west))
	assert.Zero(t, h.world.CutConnections(), "no connection cut, no load balancer dark while claimed")
	targets, _, err := h.ledger.GetTargets(t.Context(), project, config)
	require.NoError(t, err)
	assert.Empty(t, targets.Targets, "nothing is left anywhere")
}

// TestMoveDirtyNamesTheOldRegion: a move whose swap cannot delete the
// us-east-1 group (AccessDenied, DeleteAutoScalingGroup, Amazon EC2 Auto
// Scaling API Reference: Common Errors) ends FailureDirty with an outcome
// naming what is left there, with its region, and keeps the lock; the
// targets record still names us-east-1, so a later destroy finds it.
func TestMoveDirtyNamesTheOldRegion(t *testing.T) {
	h := newHarness(t, withWest(t))
	r1 := h.baseRelease()
	h.start(r1).succeed()
	old := naming.GroupName(project, config, "web", r1.ReleaseID)
	h.clk.Advance(time.Hour)

	move := east
	r2 := h.movedRelease(&move)
	x := h.start(r2)
	for _, task := range upToDeploy {
		require.NoError(t, x.stepRetrying(task), task)
	}
	_, err := x.untilHealthy(200)
	require.NoError(t, err)
	_, err = h.world.Faults().Add(sim.Rule{Op: "DeleteAutoScalingGroup", Err: sim.AccessDenied()})
	require.NoError(t, err)
	err = x.stepRetrying(execution.TaskCleanUpSuccess)
	var ce *failure.CleanUpError
	require.ErrorAs(t, err, &ce)
	o, found, err := h.ledger.GetOutcome(t.Context(), project, config, r2.ReleaseID)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, execution.EndFailureDirty, o.End)
	assert.Contains(t, o.Leftovers, "auto scaling group "+old+" in account 111111111111 region us-east-1")
	targets, _, err := h.ledger.GetTargets(t.Context(), project, config)
	require.NoError(t, err)
	assert.Contains(t, targets.Targets, east, "us-east-1 is not forgotten")

	h.world.Faults().Clear()
	require.NoError(t, h.locks.Release(t.Context(), project, config, r2.ReleaseID), "an operator unlocks")
	h.clk.Advance(time.Hour)
	h.start(h.destroyRelease()).succeed()
	assert.Empty(t, h.groupsIn(account, region))
	assert.Empty(t, h.groupsIn(account, west))
}

// TestMoveRecheckedPutsTheOldRegionBack: a move's new group in us-west-2
// passes the swap's gate and then falls below its healthy target while
// the us-east-1 group is only detached and draining: the next step puts
// the us-east-1 group back in exactly the load balancers and target
// groups the deleting record names for it, never scales it in, and ends
// FailureDirty naming it with its region.
func TestMoveRecheckedPutsTheOldRegionBack(t *testing.T) {
	h := newHarness(t, withWest(t))
	r1 := h.baseRelease()
	h.start(r1).succeed()
	old := naming.GroupName(project, config, "web", r1.ReleaseID)
	h.clk.Advance(time.Hour)
	before := h.groups()[old]

	move := east
	r2 := h.movedRelease(&move)
	x := h.start(r2)
	for _, task := range upToDeploy {
		require.NoError(t, x.stepRetrying(task), task)
	}
	_, err := x.untilHealthy(200)
	require.NoError(t, err)
	require.NoError(t, x.once(execution.TaskCleanUpSuccess))
	require.False(t, x.state.Retire.Done)
	attached, _ := serving(h.groups()[old])
	require.False(t, attached, "the us-east-1 group left its load balancers")
	plan, _, err := h.ledger.GetDeleting(t.Context(), project, config, r2.ReleaseID)
	require.NoError(t, err)
	require.Len(t, plan.Elsewhere, 1)
	require.Len(t, plan.Elsewhere[0].Attached, 1, "the deleting record keeps how the us-east-1 group served")
	assert.Equal(t, before.LoadBalancers, plan.Elsewhere[0].Attached[0].LoadBalancers)

	h.clk.Advance(20 * time.Second)
	s := x.state.Health.Services["web"]
	api := h.world.Clients(account, west).AutoScaling.(*sim.AutoScaling)
	var westGroup sim.GroupSnapshot
	for _, a := range h.world.Snapshot().Accounts {
		if a.Account == account && a.Region == west {
			westGroup = a.Groups[0]
		}
	}
	for _, i := range westGroup.Instances[:s.Healthy-s.Target+1] {
		_, err := api.TerminateInstanceInAutoScalingGroup(t.Context(), &autoscaling.TerminateInstanceInAutoScalingGroupInput{
			InstanceId: aws.String(i.ID), ShouldDecrementDesiredCapacity: aws.Bool(false),
		})
		require.NoError(t, err)
	}
	err = x.step(execution.TaskCleanUpSuccess)
	var ce *failure.CleanUpError
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, ce.Leftovers, "previous group "+old+" in account 111111111111 region us-east-1: attached again to its load balancers and target groups, serving beside the new release's groups")
	g := h.groups()[old]
	assert.Equal(t, before.LoadBalancers, g.LoadBalancers, "back in its classic load balancers")
	assert.Equal(t, before.TargetGroups, g.TargetGroups, "and its target groups")
	assert.Equal(t, before.Desired, g.Desired, "never scaled in")
	o, _, err := h.ledger.GetOutcome(t.Context(), project, config, r2.ReleaseID)
	require.NoError(t, err)
	assert.Equal(t, execution.EndFailureDirty, o.End)
	h.clk.Advance(time.Minute)
	cuts, _ := h.cutsIn(account, west)
	assert.Zero(t, cuts, "us-west-2 never dark")
	cuts, dark := h.cutsIn(account, region)
	assert.Equal(t, 2, cuts, "us-east-1's load balancer and target group: the gap between the withdrawal and the return")
	assert.Equal(t, cuts, dark, "no connection dropped")
}

// TestMoveStartsAtTheServingCapacity: a config whose web group serves
// with 4 instances (scaled out since its deploy, within max_size) moves
// to us-west-2: the new group starts at 4, as a deploy in place would
// from its previous group, not at min_size 2, so the swap does not halve
// what serves; plan says the same.
func TestMoveStartsAtTheServingCapacity(t *testing.T) {
	h := newHarness(t, withWest(t))
	r1 := h.baseRelease()
	h.start(r1).succeed()
	old := naming.GroupName(project, config, "web", r1.ReleaseID)
	_, err := h.world.Clients(account, region).AutoScaling.UpdateAutoScalingGroup(t.Context(), &autoscaling.UpdateAutoScalingGroupInput{
		AutoScalingGroupName: aws.String(old), DesiredCapacity: aws.Int32(4)})
	require.NoError(t, err)
	h.clk.Advance(time.Hour)

	move := east
	r2 := h.movedRelease(&move)
	p, err := h.planOf(r2)
	require.NoError(t, err)
	require.Len(t, p.Groups, 1)
	assert.Equal(t, 4, p.Groups[0].Desired, "plan says what the deploy does")
	x := h.start(r2)
	require.NoError(t, x.steps(upToDeploy...))
	assert.Equal(t, 4, x.state.Health.Services["web"].Desired, "the desired capacity is the old fleet's")
	x.succeed()
	web := naming.GroupName(project, config, "web", r2.ReleaseID)
	for _, s := range h.world.Snapshot().Accounts {
		if s.Account == account && s.Region == west {
			for _, g := range s.Groups {
				if g.Name == web {
					assert.EqualValues(t, 4, g.Desired, "the new group serves with the old fleet's capacity")
				}
			}
		}
	}
}
