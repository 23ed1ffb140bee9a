package fleet_test

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/fleet"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
)

// serving makes, for release id, a group of two instances in the
// deploy-test ELB and target group, as ferry would, changed by mutate,
// and lets them serve.
func (e *env) serving(t *testing.T, release string, mutate func(*autoscaling.CreateAutoScalingGroupInput)) string {
	t.Helper()
	name := naming.GroupName(project, config, "web", release)
	tags := map[string]string{naming.TagProjectName: project, naming.TagConfigName: config, naming.TagDeployWith: naming.DeployWithValue, naming.TagReleaseID: release}
	var ltTags []ec2types.Tag
	var asgTags []astypes.Tag
	for k, v := range tags {
		ltTags = append(ltTags, ec2types.Tag{Key: aws.String(k), Value: aws.String(v)})
		asgTags = append(asgTags, astypes.Tag{Key: aws.String(k), Value: aws.String(v)})
	}
	_, err := e.c.EC2.CreateLaunchTemplate(e.ctx, &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String(name),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String("ami-0000000000000ab01"), InstanceType: "t2.nano"},
		TagSpecifications:  []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeLaunchTemplate, Tags: ltTags}},
	})
	require.NoError(t, err)
	tgs, err := e.c.ELBv2.DescribeTargetGroups(e.ctx, &elbv2.DescribeTargetGroupsInput{Names: []string{"coinbase-deploy-test-web-tg"}})
	require.NoError(t, err)
	in := &autoscaling.CreateAutoScalingGroupInput{
		AutoScalingGroupName: aws.String(name),
		LaunchTemplate:       &astypes.LaunchTemplateSpecification{LaunchTemplateName: aws.String(name), Version: aws.String("1")},
		MinSize:              aws.Int32(2), MaxSize: aws.Int32(4), DesiredCapacity: aws.Int32(2),
		VPCZoneIdentifier: aws.String("subnet-00000000000000a01,subnet-00000000000000b01"),
		LoadBalancerNames: []string{"coinbase-deploy-test-web-elb"}, TargetGroupARNs: []string{aws.ToString(tgs.TargetGroups[0].TargetGroupArn)},
		Tags: asgTags,
	}
	if mutate != nil {
		mutate(in)
	}
	_, err = e.c.AutoScaling.CreateAutoScalingGroup(e.ctx, in)
	require.NoError(t, err)
	e.clk.Advance(5 * time.Minute)
	return name
}

// TestRetirer: a Retirer takes a serving group out gracefully, a step per
// call: detached from its load balancers, it reports draining while they
// drain it (connection draining, deregistration delay); then it scales the
// group to zero, its launches suspended, removing its instances' scale-in
// protection first (a scale-in never terminates a protected instance:
// SetInstanceProtection, Auto Scaling API Reference; "Use instance
// scale-in protection", Auto Scaling User Guide), and waits while
// termination hooks hold them (Terminating:Wait, "How lifecycle hooks
// work", Auto Scaling User Guide); it reports the group ready only once it
// is empty. A group left with only Standby instances, which no scale-in
// terminates ("Temporarily remove instances from your Auto Scaling
// group", Auto Scaling User Guide), is stuck, and Standing names them.
// Nothing is cut: the next release's group serves from the same load
// balancer and target group throughout.
func TestRetirer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*autoscaling.CreateAutoScalingGroupInput)
		before func(t *testing.T, e *env, name string)
		phases []string
		hooks  bool
		stuck  string
	}{
		{name: "attached", phases: []string{execution.PhaseDraining, execution.PhaseScalingIn}},
		{
			name: "termination hook",
			mutate: func(in *autoscaling.CreateAutoScalingGroupInput) {
				in.LifecycleHookSpecificationList = []astypes.LifecycleHookSpecification{{
					LifecycleHookName: aws.String("drain"), LifecycleTransition: aws.String("autoscaling:EC2_INSTANCE_TERMINATING"), HeartbeatTimeout: aws.Int32(120),
				}}
			},
			phases: []string{execution.PhaseDraining, execution.PhaseScalingIn},
			hooks:  true,
		},
		{
			name: "protected from scale-in",
			mutate: func(in *autoscaling.CreateAutoScalingGroupInput) {
				in.NewInstancesProtectedFromScaleIn = aws.Bool(true)
			},
			phases: []string{execution.PhaseDraining, execution.PhaseScalingIn},
		},
		{
			name: "an instance in Standby",
			before: func(t *testing.T, e *env, name string) {
				g, err := fleet.Describe(e.ctx, e.c.AutoScaling, []string{name})
				require.NoError(t, err)
				_, err = e.c.AutoScaling.(*sim.AutoScaling).EnterStandby(e.ctx, &autoscaling.EnterStandbyInput{
					AutoScalingGroupName: aws.String(name), InstanceIds: []string{aws.ToString(g[name].Instances[0].InstanceId)}, ShouldDecrementDesiredCapacity: aws.Bool(false),
				})
				require.NoError(t, err)
				e.clk.Advance(5 * time.Minute) // its replacement serves
			},
			phases: []string{execution.PhaseDraining, execution.PhaseScalingIn},
			stuck:  "1 in Standby",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			name := e.serving(t, "r1", tc.mutate)
			e.serving(t, "r2", nil)
			if tc.before != nil {
				tc.before(t, e, name)
			}
			r := &fleet.Retirer{API: e.c.AutoScaling, Owner: owner, Owns: ofRelease("r1")}
			var phases []string
			var hooks bool
			var ret fleet.Retirement
			for steps := 0; ; steps++ {
				var err error
				ret, err = r.Step(e.ctx, []string{name})
				require.NoError(t, err)
				if ret.Ready || len(ret.Stuck()) > 0 {
					break
				}
				require.Len(t, ret.Groups, 1)
				g := ret.Groups[0]
				if len(phases) == 0 || phases[len(phases)-1] != g.Phase {
					phases = append(phases, g.Phase)
				}
				hooks = hooks || g.HooksPending > 0
				require.Less(t, steps, 40)
				e.clk.Advance(15 * time.Second)
			}
			assert.Equal(t, tc.phases, phases)
			assert.Equal(t, tc.hooks, hooks, "termination hooks seen pending")
			if tc.stuck != "" {
				require.Len(t, ret.Stuck(), 1)
				assert.Contains(t, fleet.Standing(ret.Stuck()[0]), tc.stuck)
				assert.False(t, ret.Ready)
			} else {
				assert.True(t, ret.Ready)
				g, err := fleet.Describe(e.ctx, e.c.AutoScaling, []string{name})
				require.NoError(t, err)
				assert.Empty(t, g[name].Instances, "empty before deletion")
			}
			assert.Zero(t, e.world.CutConnections(), "nothing cut")
		})
	}
}

// TestRemoveRefusesAGroupInUse: the Remover deletes with ForceDelete, so
// it never deletes a group still in a load balancer or with instances in
// service, whatever its caller says: that is a CleanUpError naming why,
// and nothing of the name is removed.
func TestRemoveRefusesAGroupInUse(t *testing.T) {
	e := newEnv(t)
	name := e.serving(t, "r1", nil)
	_, err := (&fleet.Remover{Clients: e.c, Owner: owner}).Remove(e.ctx, []string{name})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "attached to 2 load balancers and target groups, 2 instances in service")
	assert.Equal(t, []string{"group", "template"}, e.left(name))
	assert.Zero(t, e.world.CutConnections())
}

// TestRetirerDetached: a group a previous step saw out of every load
// balancer (DetachedIn: scaling in) is not asked for its attachments
// again, those describes drawing on the account's one Auto Scaling
// request bucket (Amazon EC2 Auto Scaling API Reference, Welcome, API
// request rate: "throttles API requests based on a shared API bucket");
// one attached again since (its description names the target group) is,
// and is detached again.
func TestRetirerDetached(t *testing.T) {
	e := newEnv(t)
	name := e.serving(t, "r1", nil)
	e.serving(t, "r2", nil)
	r := &fleet.Retirer{API: e.c.AutoScaling, Owner: owner, Owns: ofRelease("r1")}
	var ret fleet.Retirement
	for steps := 0; ; steps++ {
		var err error
		r.Detached = fleet.DetachedIn(ret.State())
		ret, err = r.Step(e.ctx, []string{name})
		require.NoError(t, err)
		if ret.Groups[0].Phase == execution.PhaseScalingIn {
			break
		}
		require.Less(t, steps, 40)
		e.clk.Advance(15 * time.Second)
	}
	describes := func() int {
		n := 0
		for _, c := range e.world.CallLog() {
			if c.Op == "DescribeLoadBalancerTargetGroups" || (c.Op == "DescribeLoadBalancers" && c.Service == "Auto Scaling") {
				n++
			}
		}
		return n
	}
	r.Detached = fleet.DetachedIn(ret.State())
	assert.True(t, r.Detached[name])
	before := describes()
	require.Positive(t, before)
	ret, err := r.Step(e.ctx, []string{name})
	require.NoError(t, err)
	assert.Equal(t, before, describes(), "no attachment read for a group seen detached")
	require.Len(t, ret.Groups, 1)

	tgs, err := e.c.ELBv2.DescribeTargetGroups(e.ctx, &elbv2.DescribeTargetGroupsInput{Names: []string{"coinbase-deploy-test-web-tg"}})
	require.NoError(t, err)
	_, err = e.c.AutoScaling.(*sim.AutoScaling).AttachLoadBalancerTargetGroups(e.ctx, &autoscaling.AttachLoadBalancerTargetGroupsInput{
		AutoScalingGroupName: aws.String(name), TargetGroupARNs: []string{aws.ToString(tgs.TargetGroups[0].TargetGroupArn)}})
	require.NoError(t, err)
	detaches := e.world.Calls()["DetachLoadBalancerTargetGroups"]
	ret, err = r.Step(e.ctx, []string{name})
	require.NoError(t, err)
	assert.Equal(t, detaches+1, e.world.Calls()["DetachLoadBalancerTargetGroups"], "a group attached since is detached again, from what its description names")
	assert.Equal(t, before, describes(), "without a read of its attachments")
	require.Len(t, ret.Groups, 1)
	assert.Equal(t, execution.PhaseDraining, ret.Groups[0].Phase)
	assert.Equal(t, execution.AttachmentTargetGroups, ret.Groups[0].Draining, "the next step reads its target groups only")
}

// TestRetirerThrottledPartWay: a step AWS throttles part-way (an
// account's Auto Scaling requests share one bucket: Amazon EC2 Auto
// Scaling API Reference, API request rate) keeps what it did: it returns
// the throttling error with the groups before it stepped, Stopped naming
// the group it stopped at, the rest reported as the previous step left
// them; it makes no call after the throttled one; the next step, From
// there, takes that group first, so every group is reached however few
// calls a step gets through.
func TestRetirerThrottledPartWay(t *testing.T) {
	e := newEnv(t)
	a, b := e.serving(t, "r0", nil), e.serving(t, "r1", nil)
	r := &fleet.Retirer{API: e.c.AutoScaling, Owner: owner}
	_, err := e.world.Faults().Add(sim.Rule{Op: "DetachLoadBalancers", Nth: 2, Err: sim.Throttling()})
	require.NoError(t, err)
	before := e.world.Calls()

	ret, err := r.Step(e.ctx, []string{b, a})
	require.Error(t, err)
	require.True(t, cloud.Throttled(err), "%v", err)
	assert.Equal(t, b, ret.Stopped, "the second group's first detach was throttled")
	assert.Equal(t, 1, ret.Stepped)
	assert.False(t, ret.Ready)
	require.Len(t, ret.Groups, 2, "every group is reported, in name order")
	assert.Equal(t, []string{a, b}, []string{ret.Groups[0].Name, ret.Groups[1].Name})
	assert.Equal(t, execution.PhaseDraining, ret.Groups[0].Phase, "the first was detached")
	assert.Equal(t, execution.PhaseDraining, ret.Groups[1].Phase, "the second is as the previous step left it")
	after := e.world.Calls()
	assert.Equal(t, 1, after["DetachLoadBalancerTargetGroups"]-before["DetachLoadBalancerTargetGroups"], "no call after the throttled one")
	assert.Equal(t, 0, after["DescribeLoadBalancerTargetGroups"]-before["DescribeLoadBalancerTargetGroups"], "no attachment read: each group's description names them")

	r.From = ret.Stopped
	ret, err = r.Step(e.ctx, []string{a, b})
	require.NoError(t, err)
	assert.Empty(t, ret.Stopped)
	assert.Equal(t, 2, ret.Stepped)
	assert.Equal(t, 2, e.world.Calls()["DetachLoadBalancerTargetGroups"]-before["DetachLoadBalancerTargetGroups"], "the second group is detached now")
}

// TestRetirerCarriesWhereAGroupStood: a step throttled at its first call
// reports each group it did not reach as the previous step left it: one
// not yet detached is draining, one detached that still has instances is
// scaling in (not ready for deletion: its instances still run).
func TestRetirerCarriesWhereAGroupStood(t *testing.T) {
	e := newEnv(t)
	a, b := e.serving(t, "r0", nil), e.serving(t, "r1", nil)
	r := &fleet.Retirer{API: e.c.AutoScaling, Owner: owner, Detached: map[string]bool{b: true}}
	_, err := e.world.Faults().Add(sim.Rule{Op: "DetachLoadBalancers", Nth: 1, Err: sim.Throttling()})
	require.NoError(t, err)
	ret, err := r.Step(e.ctx, []string{a, b})
	require.True(t, cloud.Throttled(err), "%v", err)
	assert.Equal(t, a, ret.Stopped)
	assert.Zero(t, ret.Stepped)
	require.Len(t, ret.Groups, 2)
	assert.Equal(t, execution.PhaseDraining, ret.Groups[0].Phase, "never detached")
	assert.Equal(t, execution.PhaseScalingIn, ret.Groups[1].Phase, "detached, its instances still running")
	assert.Positive(t, ret.Groups[1].Instances)
	assert.False(t, ret.Ready)
}

// TestRetirerStepWithinItsCalls: a step bound to a number of Auto
// Scaling calls (Retirer.Calls: its share of the account's one bucket,
// Amazon EC2 Auto Scaling API Reference, API request rate) takes no
// group's step that could take it over (fleet.StepCalls each), always
// the first's; the groups it does not reach are reported as the previous
// step left them, and the next step, From its Next, takes them first.
// Unbound, one step takes every group's.
func TestRetirerStepWithinItsCalls(t *testing.T) {
	scaleIns := func(e *env) int { return e.world.Calls()["UpdateAutoScalingGroup"] }
	setUp := func(t *testing.T) (*env, []string, *fleet.Retirer) {
		e := newEnv(t)
		var names []string
		detached := map[string]bool{}
		for _, rel := range []string{"r0", "r1", "r2", "r3"} {
			name := e.serving(t, rel, unattached)
			names, detached[name] = append(names, name), true
		}
		return e, names, &fleet.Retirer{API: e.c.AutoScaling, Owner: owner, Detached: detached}
	}

	e, names, r := setUp(t)
	r.Calls = 6
	before, calls := scaleIns(e), len(e.world.CallLog())
	ret, err := r.Step(e.ctx, names)
	require.NoError(t, err)
	assert.Equal(t, 2, ret.Stepped, "two scale-ins fit six calls, a third might not")
	assert.Equal(t, names[2], ret.Next, "the next step starts at the first not reached")
	assert.LessOrEqual(t, len(e.world.CallLog())-calls-1, r.Calls, "within its calls, its describe aside")
	assert.Equal(t, 2, scaleIns(e)-before)
	assert.False(t, ret.Ready)
	for i, g := range ret.Groups {
		assert.Equal(t, execution.PhaseScalingIn, g.Phase, "group %d", i)
	}
	assert.Equal(t, int32(2), aws.ToInt32(describe(t, e, names[2]).DesiredCapacity), "not reached: as it was")

	r.From = ret.Next
	ret, err = r.Step(e.ctx, names)
	require.NoError(t, err)
	assert.Equal(t, 4, scaleIns(e)-before, "the rest taken first by the next step")
	assert.Zero(t, aws.ToInt32(describe(t, e, names[3]).DesiredCapacity))

	e, names, r = setUp(t)
	r.Calls = 1 // fewer than one group's step takes
	before = scaleIns(e)
	ret, err = r.Step(e.ctx, names)
	require.NoError(t, err)
	assert.Equal(t, 1, ret.Stepped, "a step takes one group however few its calls: a retirement always moves on")
	assert.Equal(t, names[1], ret.Next)
	assert.Equal(t, 1, scaleIns(e)-before)

	e, names, r = setUp(t)
	before = scaleIns(e)
	ret, err = r.Step(e.ctx, names)
	require.NoError(t, err)
	assert.Equal(t, 4, ret.Stepped, "unbound: every group's step")
	assert.Empty(t, ret.Next)
	assert.Equal(t, 4, scaleIns(e)-before)
}
