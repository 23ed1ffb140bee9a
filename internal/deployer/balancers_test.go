package deployer

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/balancers"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
)

// webELB and webTG are the classic load balancer and target group of the
// harness's web service.
const (
	webELB = "coinbase-deploy-test-web-elb"
	webTG  = "coinbase-deploy-test-web-tg"
)

// detachFromOutside takes the group name out of the web service's classic
// load balancer (and, with tg, out of its target group too), as an
// operator or another tool would, not ferry.
func (h *harness) detachFromOutside(name string, tg bool) {
	h.t.Helper()
	c := h.world.Clients(account, region).AutoScaling.(*sim.AutoScaling)
	_, err := c.DetachLoadBalancers(h.t.Context(), &autoscaling.DetachLoadBalancersInput{AutoScalingGroupName: aws.String(name), LoadBalancerNames: []string{webELB}})
	require.NoError(h.t, err)
	if !tg {
		return
	}
	out, err := c.DescribeAutoScalingGroups(h.t.Context(), &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{name}})
	require.NoError(h.t, err)
	require.Len(h.t, out.AutoScalingGroups, 1)
	_, err = c.DetachLoadBalancerTargetGroups(h.t.Context(), &autoscaling.DetachLoadBalancerTargetGroupsInput{
		AutoScalingGroupName: aws.String(name), TargetGroupARNs: out.AutoScalingGroups[0].TargetGroupARNs,
	})
	require.NoError(h.t, err)
}

// inService counts the instances the classic load balancer (or target
// group, by name) lb reports in service (healthy), by the group each
// belongs to.
func (h *harness) inService(lb string) map[string]int {
	h.t.Helper()
	a := h.account()
	group := map[string]string{}
	for _, g := range a.Groups {
		for _, i := range g.Instances {
			group[i.ID] = g.Name
		}
	}
	out := map[string]int{}
	for _, rs := range append(a.LoadBalancers, a.TargetGroups...) {
		if rs.Name != lb {
			continue
		}
		for id, state := range rs.Instances {
			if state == "InService" || state == "healthy" {
				out[group[id]]++
			}
		}
	}
	return out
}

// TestDetachedDuringCheckHealthyIsAttachedAgain: a new group taken out of
// the classic load balancer the release names while CheckHealthy judges it
// is not healthy without it: Deploy attached it, so CheckHealthy attaches
// it again and judges it on the load balancer's own view from then on.
// The swap retires the previous group only once the new one serves there:
// the load balancer is never left without an instance, nothing is cut.
func TestDetachedDuringCheckHealthyIsAttachedAgain(t *testing.T) {
	h := newHarness(t)
	r1, r2 := h.baseRelease(), h.baseRelease()
	h.start(r1).succeed()
	h.clk.Advance(time.Hour)
	r2.CreatedAt = h.clk.Now().Add(-time.Minute)
	x := h.start(r2)
	require.NoError(t, x.steps(upToDeploy...))
	require.NoError(t, x.step(execution.TaskCheckHealthy))
	next := naming.GroupName(project, config, "web", r2.ReleaseID)
	h.detachFromOutside(next, false)

	_, err := x.untilHealthy(200)
	require.NoError(t, err)
	assert.Contains(t, h.groups()[next].LoadBalancers, webELB, "attached again")
	assert.Equal(t, 3, h.inService(webELB)[next], "it serves there, at its launch count")
	require.NoError(t, x.stepRetrying(execution.TaskBake))
	require.NoError(t, x.stepRetrying(execution.TaskCleanUpSuccess))
	served := h.inService(webELB)
	assert.Equal(t, []string{next}, slices.Collect(maps.Keys(served)), "the load balancer the release names still serves, from the new group")
	assert.GreaterOrEqual(t, served[next], 2)
	assert.Zero(t, h.world.CutConnections(), "never dark")
}

// TestDetachedDuringBakeRollsBack: a new group taken out of its load
// balancers from outside during the bake is not healthy: the bake halts
// and the release rolls back, the previous group serving again.
func TestDetachedDuringBakeRollsBack(t *testing.T) {
	h := newHarness(t)
	prev, next, x := h.atBake(600)
	require.NoError(t, x.once(execution.TaskBake))
	h.clk.Advance(time.Minute)
	newGroup, old := naming.GroupName(project, config, "web", next), naming.GroupName(project, config, "web", prev)
	h.detachFromOutside(newGroup, true)
	h.clk.Advance(time.Duration(x.state.Bake.WaitSeconds) * time.Second)

	err := x.step(execution.TaskBake)
	var halted *failure.HaltError
	require.ErrorAs(t, err, &halted)
	assert.Contains(t, halted.Reason, "service web: its new group is not registered with classic load balancer "+webELB)
	require.NoError(t, x.fail(err))
	assert.Equal(t, []string{old}, x.state.RolledBack)
	assert.Equal(t, map[string]int{old: 2}, h.inService(webELB), "the previous group serves again")
}

// TestGateRefusesALoadBalancerLeftDark: a new group taken out of the
// target group or the classic load balancer the release names after
// CheckHealthy judged it stable: the swap's gate, reading their own view
// (DescribeTargetHealth, DescribeInstanceHealth), refuses to retire the
// previous group, which would leave them with no instance of the
// release; the release fails before its point of no return and the
// previous group serves on. A classic load balancer with connection
// draining still reports a deregistering instance InService ("InService:
// Instance deregistration currently in progress", Configure connection
// draining, Classic Load Balancers User Guide): it is not in service.
func TestGateRefusesALoadBalancerLeftDark(t *testing.T) {
	tests := []struct {
		name, from, want string
		drain            int
	}{
		{name: "target group", from: webTG, want: "target group " + webTG, drain: 30},
		{name: "classic load balancer draining", from: webELB, want: "classic load balancer " + webELB, drain: 300},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, func(w *sim.WorldSpec) { w.Accounts[0].Regions[0].ELBs[0].ConnectionDrainingSeconds = tt.drain })
			r1, r2 := h.baseRelease(), h.baseRelease()
			x := h.atSwap(r1, r2)
			next, old := naming.GroupName(project, config, "web", r2.ReleaseID), naming.GroupName(project, config, "web", r1.ReleaseID)
			c := h.world.Clients(account, region).AutoScaling.(*sim.AutoScaling)
			out, err := c.DescribeAutoScalingGroups(t.Context(), &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{next}})
			require.NoError(t, err)
			if tt.from == webTG {
				_, err = c.DetachLoadBalancerTargetGroups(t.Context(), &autoscaling.DetachLoadBalancerTargetGroupsInput{
					AutoScalingGroupName: aws.String(next), TargetGroupARNs: out.AutoScalingGroups[0].TargetGroupARNs,
				})
			} else {
				_, err = c.DetachLoadBalancers(t.Context(), &autoscaling.DetachLoadBalancersInput{AutoScalingGroupName: aws.String(next), LoadBalancerNames: []string{webELB}})
			}
			require.NoError(t, err)

			err = x.step(execution.TaskCleanUpSuccess)
			var halted *failure.HaltError
			require.ErrorAs(t, err, &halted)
			assert.Contains(t, halted.Reason, "service web: its new group is not registered with "+tt.want)
			require.NoError(t, x.fail(err))
			assert.Equal(t, 2, h.inService(tt.from)[old], "the previous group serves on")
			assert.Zero(t, h.world.CutConnections())
		})
	}
}

// TestServedJudgedByTheLoadBalancers: what the load balancers a release
// names say of the new groups' instances in service, as the gate and
// the bake read it: a load balancer is left dark when none of them is
// healthy there while another instance is; a new group is out of one
// when an instance of it in service is absent (draining, for a target
// group).
func TestServedJudgedByTheLoadBalancers(t *testing.T) {
	tg := balancerRef{name: "tg", arn: "arn:tg"}
	named := namedSet{"web": {elbs: []string{"elb"}, tgs: []balancerRef{tg}}}
	g := asgtypes.AutoScalingGroup{AutoScalingGroupName: aws.String("new"), Instances: []asgtypes.Instance{
		{InstanceId: aws.String("i-new1"), LifecycleState: asgtypes.LifecycleStateInService},
		{InstanceId: aws.String("i-new2"), LifecycleState: asgtypes.LifecycleStatePending},
	}}
	groups := map[string]asgtypes.AutoScalingGroup{"new": g}
	tests := []struct {
		name       string
		elb, tg    map[string]string
		dark       []string
		unregister []balancerRef
	}{
		{name: "both serve from the new group", elb: map[string]string{"i-new1": "InService", "i-old": "InService"}, tg: map[string]string{"i-new1": "healthy"}},
		{name: "new group registered, not healthy yet, the old serves",
			elb:  map[string]string{"i-new1": "OutOfService", "i-old": "InService"},
			tg:   map[string]string{"i-new1": "initial", "i-old": "healthy"},
			dark: []string{"classic load balancer elb (service web)", "target group tg (service web)"}},
		{name: "taken out of both", elb: map[string]string{"i-old": "InService"}, tg: map[string]string{"i-new1": "draining", "i-old": "healthy"},
			dark: []string{"classic load balancer elb (service web)", "target group tg (service web)"}, unregister: []balancerRef{{name: "elb"}, tg}},
		{name: "nothing serves there at all: nothing to leave dark", elb: map[string]string{"i-new1": "OutOfService"}, tg: map[string]string{}, unregister: []balancerRef{tg}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			views := balancers.Views{ELB: map[string]map[string]string{"elb": tt.elb}, TargetGroups: map[string]map[string]string{"arn:tg": tt.tg}}
			assert.Equal(t, tt.dark, named.dark(groups, views))
			assert.Equal(t, tt.unregister, named["web"].unregistered(g, views))
			err := checkDark(judgement{dark: named.dark(groups, views)})
			if tt.dark == nil {
				assert.NoError(t, err)
			} else {
				var halted *failure.HaltError
				require.ErrorAs(t, err, &halted)
			}
		})
	}
}

// TestDroppedLoadBalancerRefused: a release that no longer names a
// load balancer its service's serving group is attached to (v1 elbs
// [elb], v2 none) is refused at ValidateResources, and its plan lists
// the refusal: the service, the load balancer and the field that makes
// it explicit. Nothing is created.
func TestDroppedLoadBalancerRefused(t *testing.T) {
	h := newHarness(t)
	r1 := h.baseRelease()
	h.start(r1).succeed()
	h.clk.Advance(time.Hour)
	r2 := h.baseRelease()
	r2.Services["web"].ELBs = nil
	want := "services.web.elbs: the deploy would take service web out of classic load balancer " + webELB +
		", which its serving group is attached to and the release no longer names; name it under services.web.detach.elbs to take the service out of it, or keep it in elbs"

	p, err := h.planOf(r2)
	require.NoError(t, err)
	assert.False(t, p.Proceed)
	assert.Equal(t, []string{want}, p.Refusals)
	assert.Empty(t, p.Detach)

	x := h.start(r2)
	err = x.steps(upToDeploy...)
	var bad *failure.BadReleaseError
	require.ErrorAs(t, err, &bad)
	assert.Equal(t, []string{want}, bad.Problems)
	assert.NotContains(t, h.groups(), naming.GroupName(project, config, "web", r2.ReleaseID), "nothing created")
}

// TestDroppedLoadBalancerExplicit: named under the service's detach, the
// drop is planned as its own line and deployed: the new group serves in
// the target group the release keeps, and the previous group, retired,
// drains from the classic load balancer, which is left with no instance
// on purpose: withdrawn, no connection cut.
func TestDroppedLoadBalancerExplicit(t *testing.T) {
	h := newHarness(t)
	r1 := h.baseRelease()
	h.start(r1).succeed()
	h.clk.Advance(time.Hour)
	r2 := h.baseRelease()
	r2.Services["web"].ELBs = nil
	r2.Services["web"].Detach = &release.Detach{ELBs: []string{webELB}}

	p, err := h.planOf(r2)
	require.NoError(t, err)
	assert.True(t, p.Proceed, p.Refusals)
	assert.Equal(t, []string{"web leaves classic load balancer " + webELB}, p.Detach)

	h.start(r2).succeed()
	next := naming.GroupName(project, config, "web", r2.ReleaseID)
	assert.Empty(t, h.inService(webELB), "no instance left in the load balancer the release left")
	assert.Positive(t, h.inService(webTG)[next], "the target group it keeps serves from the new group")
	for _, lb := range h.account().LoadBalancers {
		if lb.Name == webELB {
			assert.Empty(t, lb.Instances, "drained")
		}
	}
	assert.Zero(t, h.world.CutConnections(), "drained out on purpose: nothing cut")
}

// TestDroppedOneOfTwoLoadBalancers: v1 elbs [a, b], v2 elbs [a] is
// refused, naming b; with b under detach it deploys: a serves from the
// new group, never dark, and b is drained of the previous group and
// left dark on purpose.
func TestDroppedOneOfTwoLoadBalancers(t *testing.T) {
	const second = "coinbase-deploy-test-web-elb2"
	h := newHarness(t, func(w *sim.WorldSpec) {
		rs := &w.Accounts[0].Regions[0]
		rs.ELBs = append(rs.ELBs, sim.ELBSpec{Name: second, Tags: maps.Clone(rs.ELBs[0].Tags), ConnectionDrainingSeconds: 30})
	})
	r1 := h.baseRelease()
	r1.Services["web"].ELBs = []string{webELB, second}
	h.start(r1).succeed()
	require.Positive(t, h.inService(second)[naming.GroupName(project, config, "web", r1.ReleaseID)])
	h.clk.Advance(time.Hour)

	r2 := h.baseRelease()
	x := h.start(r2)
	err := x.steps(upToDeploy...)
	var bad *failure.BadReleaseError
	require.ErrorAs(t, err, &bad)
	assert.Equal(t, []string{"services.web.elbs: the deploy would take service web out of classic load balancer " + second +
		", which its serving group is attached to and the release no longer names; name it under services.web.detach.elbs to take the service out of it, or keep it in elbs"}, bad.Problems)
	require.NoError(t, x.fail(err))

	r3 := h.baseRelease()
	r3.Services["web"].Detach = &release.Detach{ELBs: []string{second}}
	h.start(r3).succeed()
	next := naming.GroupName(project, config, "web", r3.ReleaseID)
	assert.Equal(t, []string{next}, slices.Collect(maps.Keys(h.inService(webELB))), "a serves from the new group")
	for _, lb := range h.account().LoadBalancers {
		switch lb.Name {
		case webELB:
			assert.Zero(t, lb.CutConnections, "a never dark")
		case second:
			assert.Empty(t, lb.Instances, "b drained")
			assert.Zero(t, lb.CutConnections, "b withdrawn on purpose, drained: nothing cut")
		}
	}
}
