package sim_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/balancers"
	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/local/sim"
)

// attachments are the states Auto Scaling reports of a group's classic
// load balancers and target groups, by name or ARN.
func (f *fixture) attachments(t *testing.T, name string) map[string]string {
	t.Helper()
	out := map[string]string{}
	lbs, err := f.c.AutoScaling.DescribeLoadBalancers(f.ctx, &autoscaling.DescribeLoadBalancersInput{AutoScalingGroupName: aws.String(name)})
	require.NoError(t, err)
	for _, lb := range lbs.LoadBalancers {
		out[aws.ToString(lb.LoadBalancerName)] = aws.ToString(lb.State)
	}
	tgs, err := f.c.AutoScaling.DescribeLoadBalancerTargetGroups(f.ctx, &autoscaling.DescribeLoadBalancerTargetGroupsInput{AutoScalingGroupName: aws.String(name)})
	require.NoError(t, err)
	for _, tg := range tgs.LoadBalancerTargetGroups {
		out["tg"] = aws.ToString(tg.State)
	}
	return out
}

// wentDark is how many times each load balancer and target group (as
// "tg") went dark, by name, for those that did.
func (f *fixture) wentDark(t *testing.T) map[string]int {
	t.Helper()
	out := map[string]int{}
	a := f.world.Snapshot().Accounts[0]
	for _, lb := range a.LoadBalancers {
		if lb.WentDark > 0 {
			out[lb.Name] = lb.WentDark
		}
	}
	for _, tg := range a.TargetGroups {
		if tg.WentDark > 0 {
			out["tg"] += tg.WentDark
		}
	}
	return out
}

// targetStates counts the states of tg's targets.
func (f *fixture) targetStates(t *testing.T, tg string) map[string]int {
	t.Helper()
	out, err := f.c.ELBv2.DescribeTargetHealth(f.ctx, &elbv2.DescribeTargetHealthInput{TargetGroupArn: aws.String(tg)})
	require.NoError(t, err)
	n := map[string]int{}
	for _, d := range out.TargetHealthDescriptions {
		n[string(d.TargetHealth.State)]++
	}
	return n
}

// TestDetachDrains: a detached load balancer or target group is Removing
// while it deregisters the group's instances, then no longer described;
// the instances keep running (DetachLoadBalancerTargetGroups and
// DetachLoadBalancers, Auto Scaling API Reference: "When you detach a
// target group, it enters the Removing state while deregistering the
// instances in the group. When all instances are deregistered, then you
// can no longer describe the target group ... The instances remain
// running."). The target group drains for its deregistration delay
// (deregistration_seconds, 30 s in this world; AWS's default is 300 s,
// Deregistration delay, ALB User Guide). The reference says nothing of
// DescribeAutoScalingGroups' LoadBalancerNames and TargetGroupARNs while
// Removing: the simulation lists neither from the detach on (ferry does
// not read attachments there). Left with no instance, every one drained
// and nothing attached, the load balancer and the target group were
// withdrawn: no connection was cut.
func TestDetachDrains(t *testing.T) {
	f := newFixture(t)
	f.group(t, "g", amiOK, 2)
	assert.Equal(t, map[string]string{elbName: "Added", "tg": "Added"}, f.attachments(t, "g"), "no instance has passed its health check")
	f.clk.Advance(5 * time.Minute)
	assert.Equal(t, map[string]string{elbName: "InService", "tg": "InService"}, f.attachments(t, "g"))

	_, err := f.c.AutoScaling.DetachLoadBalancers(f.ctx, &autoscaling.DetachLoadBalancersInput{AutoScalingGroupName: aws.String("g"), LoadBalancerNames: []string{elbName}})
	require.NoError(t, err)
	_, err = f.c.AutoScaling.DetachLoadBalancerTargetGroups(f.ctx, &autoscaling.DetachLoadBalancerTargetGroupsInput{AutoScalingGroupName: aws.String("g"), TargetGroupARNs: []string{f.tgARN(t)}})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{elbName: "Removing", "tg": "Removing"}, f.attachments(t, "g"), "the ELB's connection draining and the target group's deregistration delay: 30 s each")
	removing := f.describe(t, "g")
	assert.Empty(t, removing.LoadBalancerNames, "not listed while Removing")
	assert.Empty(t, removing.TargetGroupARNs, "not listed while Removing")
	f.clk.Advance(29 * time.Second)
	assert.Equal(t, map[string]string{elbName: "Removing", "tg": "Removing"}, f.attachments(t, "g"), "draining for the whole timeout and deregistration delay")
	f.clk.Advance(time.Second)
	assert.Empty(t, f.attachments(t, "g"), "drained: no longer described")
	g := f.describe(t, "g")
	assert.Equal(t, map[string]int{"InService": 2}, lifecycles(g), "the instances keep running")
	assert.Empty(t, g.LoadBalancerNames)
	assert.Empty(t, g.TargetGroupARNs)
	assert.Zero(t, f.world.CutConnections(), "drained, nothing else attached: withdrawn, not cut")

	_, err = f.c.AutoScaling.DetachLoadBalancers(f.ctx, &autoscaling.DetachLoadBalancersInput{AutoScalingGroupName: aws.String("g")})
	assertCode(t, err, cloud.CodeValidation)
}

// TestClassicDrainingSendsNoNewRequest: a classic load balancer with
// connection draining keeps a detached group's instances registered for
// its timeout, reported "InService: Instance deregistration currently in
// progress", but sends them no new request ("To ensure that a Classic Load
// Balancer stops sending requests to instances that are de-registering
// ... use connection draining", Configure connection draining, Classic
// Load Balancers User Guide): with nothing else registered, it went dark
// at the detach, not at the timeout's end. Withdrawn so, it cut nothing;
// attached again while its instances run, it counts the gap as one cut.
func TestClassicDrainingSendsNoNewRequest(t *testing.T) {
	spec, err := sim.Load(filepath.Join("..", "..", "..", "testdata", "worlds", "deploy-test.json"))
	require.NoError(t, err)
	spec.Accounts[0].Regions[0].ELBs[0].ConnectionDrainingSeconds = 60
	require.Equal(t, elbName, spec.Accounts[0].Regions[0].ELBs[0].Name)
	clk := clock.NewVirtual(start)
	w, err := sim.New(clk, spec)
	require.NoError(t, err)
	f := &fixture{clk: clk, world: w, c: w.Clients(deployer, region), ctx: context.Background()}
	f.group(t, "g", amiOK, 2)
	f.clk.Advance(5 * time.Minute)

	_, err = f.c.AutoScaling.DetachLoadBalancers(f.ctx, &autoscaling.DetachLoadBalancersInput{AutoScalingGroupName: aws.String("g"), LoadBalancerNames: []string{elbName}})
	require.NoError(t, err)
	out, err := f.c.ELB.DescribeInstanceHealth(f.ctx, &elb.DescribeInstanceHealthInput{LoadBalancerName: aws.String(elbName)})
	require.NoError(t, err)
	require.Len(t, out.InstanceStates, 2, "still registered while draining")
	for _, is := range out.InstanceStates {
		assert.Equal(t, "InService", aws.ToString(is.State))
		assert.Equal(t, balancers.DeregistrationInProgress, aws.ToString(is.Description))
	}
	assert.Equal(t, "Removing", f.attachments(t, "g")[elbName])
	assert.Zero(t, f.world.CutConnections(), "withdrawn, drained: nothing cut")

	f.clk.Advance(30 * time.Second)
	_, err = f.c.AutoScaling.AttachLoadBalancers(f.ctx, &autoscaling.AttachLoadBalancersInput{AutoScalingGroupName: aws.String("g"), LoadBalancerNames: []string{elbName}})
	require.NoError(t, err)
	assert.Equal(t, map[string]int{elbName: 1}, f.wentDark(t), "no new request went to a deregistering instance: dark from the detach to the attach")
	_, err = f.c.AutoScaling.DetachLoadBalancers(f.ctx, &autoscaling.DetachLoadBalancersInput{AutoScalingGroupName: aws.String("g"), LoadBalancerNames: []string{elbName}})
	require.NoError(t, err)

	f.clk.Advance(time.Minute)
	out, err = f.c.ELB.DescribeInstanceHealth(f.ctx, &elb.DescribeInstanceHealthInput{LoadBalancerName: aws.String(elbName)})
	require.NoError(t, err)
	assert.Empty(t, out.InstanceStates, "deregistered at the timeout")
	assert.NotContains(t, f.attachments(t, "g"), elbName)
	assert.Equal(t, 1, f.world.CutConnections(), "the gap; the second withdrawal cut nothing")
}

// TestTargetGroupDeregistrationDelay: a target group's
// deregistration_delay.timeout_seconds is "the amount of time ... for
// Elastic Load Balancing to wait before changing the state of a
// deregistering target from draining to unused ... The default value is
// 300 seconds" (TargetGroupAttribute, Elastic Load Balancing API
// Reference): a detached group's targets drain that long, whatever their
// image's timing, and the attachment is Removing until then
// (DetachLoadBalancerTargetGroups, Auto Scaling API Reference).
func TestTargetGroupDeregistrationDelay(t *testing.T) {
	spec, err := sim.Load(filepath.Join("..", "..", "..", "testdata", "worlds", "deploy-test.json"))
	require.NoError(t, err)
	rs := &spec.Accounts[0].Regions[0]
	require.Equal(t, tgName, rs.TargetGroups[0].Name)
	rs.TargetGroups[0].DeregistrationDelaySeconds = aws.Int(300)
	clk := clock.NewVirtual(start)
	w, err := sim.New(clk, spec)
	require.NoError(t, err)
	f := &fixture{clk: clk, world: w, c: w.Clients(deployer, region), ctx: context.Background()}
	f.group(t, "g", amiOK, 2)
	f.clk.Advance(5 * time.Minute)

	_, err = f.c.AutoScaling.DetachLoadBalancerTargetGroups(f.ctx, &autoscaling.DetachLoadBalancerTargetGroupsInput{AutoScalingGroupName: aws.String("g"), TargetGroupARNs: []string{f.tgARN(t)}})
	require.NoError(t, err)
	f.clk.Advance(299 * time.Second)
	assert.Equal(t, map[string]int{"draining": 2}, f.targetStates(t, f.tgARN(t)))
	assert.Equal(t, "Removing", f.attachments(t, "g")["tg"])
	f.clk.Advance(time.Second)
	assert.Empty(t, f.targetStates(t, f.tgARN(t)), "deregistered after the delay")
	assert.NotContains(t, f.attachments(t, "g"), "tg")

	spec.Accounts[0].Regions[0].TargetGroups[0].DeregistrationDelaySeconds = aws.Int(3601)
	_, err = sim.New(clk, spec)
	assert.ErrorContains(t, err, "deregistration_delay_seconds: 3601 is not 0 to 3600")
}

// TestForceDeleteCutsConnections: ForceDelete of a group that serves
// through its load balancers terminates its instances "without waiting"
// and deletes "any outstanding lifecycle actions" (DeleteAutoScalingGroup,
// Auto Scaling API Reference): each load balancer and target group still
// routing to a serving instance counts a cut; going dark then, its group
// deleting and its instances gone, counts no more.
func TestForceDeleteCutsConnections(t *testing.T) {
	f := newFixture(t)
	f.group(t, "g", amiOK, 2)
	f.clk.Advance(5 * time.Minute)
	_, err := f.c.AutoScaling.DeleteAutoScalingGroup(f.ctx, &autoscaling.DeleteAutoScalingGroupInput{AutoScalingGroupName: aws.String("g"), ForceDelete: aws.Bool(true)})
	require.NoError(t, err)
	assert.Equal(t, 4, f.world.CutConnections(), "2 instances, each cut off from the ELB and the target group")
	assert.Empty(t, f.wentDark(t), "dark after, with its group deleting: the cuts were the connections dropped")
	cut := map[string]int{}
	for _, lb := range f.world.Snapshot().Accounts[0].LoadBalancers {
		cut[lb.Name] = lb.CutConnections
	}
	assert.Equal(t, 2, cut[elbName])
}

// TestRetireGracefully: detached, drained, scaled to zero, a group with a
// termination lifecycle hook holds each instance in Terminating:Wait
// until its heartbeat timeout ("By default, the instance remains in a
// wait state for one hour", How lifecycle hooks work, Auto Scaling User
// Guide), or until the action is completed (CompleteLifecycleAction), then
// terminates; a worker completes its own action once its job is done.
// Deleted empty, no connection is cut: the load balancer and the target
// group, drained with nothing else attached, were withdrawn.
func TestRetireGracefully(t *testing.T) {
	f := newFixture(t)
	f.template(t, "lt-g", amiOK, "#ferry-sim: worker")
	in := f.groupInput(t, "g", 2)
	in.LifecycleHookSpecificationList = []astypes.LifecycleHookSpecification{{
		LifecycleHookName: aws.String("drain"), LifecycleTransition: aws.String("autoscaling:EC2_INSTANCE_TERMINATING"), HeartbeatTimeout: aws.Int32(300),
	}}
	_, err := f.c.AutoScaling.CreateAutoScalingGroup(f.ctx, in)
	require.NoError(t, err)
	f.clk.Advance(5 * time.Minute)

	_, err = f.c.AutoScaling.DetachLoadBalancerTargetGroups(f.ctx, &autoscaling.DetachLoadBalancerTargetGroupsInput{AutoScalingGroupName: aws.String("g"), TargetGroupARNs: []string{f.tgARN(t)}})
	require.NoError(t, err)
	_, err = f.c.AutoScaling.DetachLoadBalancers(f.ctx, &autoscaling.DetachLoadBalancersInput{AutoScalingGroupName: aws.String("g"), LoadBalancerNames: []string{elbName}})
	require.NoError(t, err)
	f.clk.Advance(30 * time.Second)
	_, err = f.c.AutoScaling.UpdateAutoScalingGroup(f.ctx, &autoscaling.UpdateAutoScalingGroupInput{AutoScalingGroupName: aws.String("g"), MinSize: aws.Int32(0), DesiredCapacity: aws.Int32(0)})
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"Terminating:Wait": 2}, lifecycles(f.describe(t, "g")), "the workers finish their job")
	f.clk.Advance(41 * time.Second) // finish_seconds is at most 40
	assert.NotContains(t, lifecycles(f.describe(t, "g")), "Terminating:Wait", "every worker completed its action")
	f.clk.Advance(41 * time.Second) // terminate_seconds is at most 40
	assert.Empty(t, f.describe(t, "g").Instances)
	_, err = f.c.AutoScaling.DeleteAutoScalingGroup(f.ctx, &autoscaling.DeleteAutoScalingGroupInput{AutoScalingGroupName: aws.String("g")})
	require.NoError(t, err, "empty: no ForceDelete needed")
	assert.Zero(t, f.world.CutConnections(), "drained out and retired: nothing cut")
}

// TestHookHeartbeatAndComplete: an instance that does not complete its
// termination hook waits out the heartbeat timeout; CompleteLifecycleAction
// ends the wait at once, and is refused for an instance not waiting.
func TestHookHeartbeatAndComplete(t *testing.T) {
	f := newFixture(t)
	f.template(t, "lt-g", amiOK, "")
	in := f.groupInput(t, "g", 2)
	in.LoadBalancerNames, in.TargetGroupARNs = nil, nil
	in.LifecycleHookSpecificationList = []astypes.LifecycleHookSpecification{{
		LifecycleHookName: aws.String("drain"), LifecycleTransition: aws.String("autoscaling:EC2_INSTANCE_TERMINATING"), HeartbeatTimeout: aws.Int32(300),
	}}
	_, err := f.c.AutoScaling.CreateAutoScalingGroup(f.ctx, in)
	require.NoError(t, err)
	f.clk.Advance(5 * time.Minute)
	ids := []string{aws.ToString(f.describe(t, "g").Instances[0].InstanceId), aws.ToString(f.describe(t, "g").Instances[1].InstanceId)}
	_, err = f.c.AutoScaling.(*sim.AutoScaling).CompleteLifecycleAction(f.ctx, &autoscaling.CompleteLifecycleActionInput{AutoScalingGroupName: aws.String("g"),
		LifecycleHookName: aws.String("drain"), InstanceId: aws.String(ids[0]), LifecycleActionResult: aws.String("CONTINUE")})
	assertCode(t, err, cloud.CodeValidation)

	_, err = f.c.AutoScaling.UpdateAutoScalingGroup(f.ctx, &autoscaling.UpdateAutoScalingGroupInput{AutoScalingGroupName: aws.String("g"), MinSize: aws.Int32(0), DesiredCapacity: aws.Int32(0)})
	require.NoError(t, err)
	f.clk.Advance(4 * time.Minute)
	assert.Equal(t, map[string]int{"Terminating:Wait": 2}, lifecycles(f.describe(t, "g")), "still within the heartbeat timeout")
	_, err = f.c.AutoScaling.(*sim.AutoScaling).CompleteLifecycleAction(f.ctx, &autoscaling.CompleteLifecycleActionInput{AutoScalingGroupName: aws.String("g"),
		LifecycleHookName: aws.String("drain"), InstanceId: aws.String(ids[0]), LifecycleActionResult: aws.String("CONTINUE")})
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"Terminating:Wait": 1, "Terminating:Proceed": 1}, lifecycles(f.describe(t, "g")))
	f.clk.Advance(61 * time.Second)
	assert.Equal(t, map[string]int{"Terminating:Proceed": 1}, lifecycles(f.describe(t, "g")), "the other's heartbeat timed out; the first is gone")
	f.clk.Advance(41 * time.Second)
	assert.Empty(t, f.describe(t, "g").Instances)
}

// TestAttachAgainRegistersAnew: a group attached again to the load
// balancers it was detached from, while its target group still drains it
// (a bake's rollback), has its instances registered anew: Added and
// initial ("Initial health checks in progress") until they pass the load
// balancer's health checks after the registration (AttachLoadBalancer-
// TargetGroups, Auto Scaling API Reference: "the instances ... are
// registered with the target group"; Target health status, ALB User
// Guide: a registered target is initial until it passes its checks). The
// deregistration that was under way does not remove them when its delay
// ends.
func TestAttachAgainRegistersAnew(t *testing.T) {
	f := newFixture(t)
	f.group(t, "g", amiOK, 2)
	f.clk.Advance(5 * time.Minute)
	tg := f.tgARN(t)
	_, err := f.c.AutoScaling.DetachLoadBalancerTargetGroups(f.ctx, &autoscaling.DetachLoadBalancerTargetGroupsInput{AutoScalingGroupName: aws.String("g"), TargetGroupARNs: []string{tg}})
	require.NoError(t, err)
	_, err = f.c.AutoScaling.DetachLoadBalancers(f.ctx, &autoscaling.DetachLoadBalancersInput{AutoScalingGroupName: aws.String("g"), LoadBalancerNames: []string{elbName}})
	require.NoError(t, err)
	f.clk.Advance(10 * time.Second)
	assert.Equal(t, map[string]string{elbName: "Removing", "tg": "Removing"}, f.attachments(t, "g"))

	_, err = f.c.AutoScaling.AttachLoadBalancerTargetGroups(f.ctx, &autoscaling.AttachLoadBalancerTargetGroupsInput{AutoScalingGroupName: aws.String("g"), TargetGroupARNs: []string{tg}})
	require.NoError(t, err)
	_, err = f.c.AutoScaling.AttachLoadBalancers(f.ctx, &autoscaling.AttachLoadBalancersInput{AutoScalingGroupName: aws.String("g"), LoadBalancerNames: []string{elbName}})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{elbName: "InService", "tg": "Added"}, f.attachments(t, "g"),
		"the ELB still had them, draining: they serve on; the target group registers them anew")
	assert.Equal(t, map[string]int{"initial": 2}, f.targetStates(t, tg))
	g := f.describe(t, "g")
	assert.Equal(t, []string{elbName}, g.LoadBalancerNames)
	assert.Equal(t, []string{tg}, g.TargetGroupARNs)

	f.clk.Advance(41 * time.Second) // health_seconds is at most 40; the old deregistration would have ended
	assert.Equal(t, map[string]string{elbName: "InService", "tg": "InService"}, f.attachments(t, "g"))
	assert.Equal(t, map[string]int{"healthy": 2}, f.targetStates(t, tg), "still registered after the old delay")
	assert.Equal(t, map[string]int{elbName: 1, "tg": 1}, f.wentDark(t), "dark between the detach and the attach")
	assert.Equal(t, 2, f.world.CutConnections())
}

// TestWorldAlarmFiresOnceItsImageServes: a world file's alarm watches the
// instances of its image: OK while none is in service, ALARM once one has
// been for its minutes (the demo world's deploy-test-5xx: 5), as
// CloudWatch evaluates a metric alarm over EvaluationPeriods whole
// periods.
func TestWorldAlarmFiresOnceItsImageServes(t *testing.T) {
	clk := clock.NewVirtual(start)
	w, err := sim.New(clk, loadWorld(t, "demo.json"))
	require.NoError(t, err)
	f := &fixture{clk: clk, world: w, c: w.Clients(deployer, region), ctx: t.Context()}
	f.clk.Advance(2 * time.Minute)
	assert.Equal(t, cwtypes.StateValueOk, f.alarmState(t, "deploy-test-5xx"), "no instance of ubuntu-5xx")
	f.group(t, "g", "ami-0000000000000ab05", 2)
	f.clk.Advance(3 * time.Minute) // in service after at most 120 s
	assert.Equal(t, cwtypes.StateValueOk, f.alarmState(t, "deploy-test-5xx"), "in service for less than 5 minutes")
	f.clk.Advance(6 * time.Minute)
	assert.Equal(t, cwtypes.StateValueAlarm, f.alarmState(t, "deploy-test-5xx"))
}

// TestWorldAlarmAtATime: a world file's alarm with at_minutes goes to
// ALARM that many minutes after the world started, within 20 seconds,
// and stays there.
func TestWorldAlarmAtATime(t *testing.T) {
	spec := loadWorld(t, "deploy-test.json")
	spec.Accounts[0].Regions[0].Alarms = []sim.AlarmSpec{{Name: "incident", AtMinutes: 10, Tags: map[string]string{"ProjectName": "coinbase/deploy-test"}}}
	require.Empty(t, spec.Validate())
	clk := clock.NewVirtual(start)
	w, err := sim.New(clk, spec)
	require.NoError(t, err)
	f := &fixture{clk: clk, world: w, c: w.Clients(deployer, region), ctx: t.Context()}
	clk.Advance(9*time.Minute + 50*time.Second)
	assert.Equal(t, cwtypes.StateValueOk, f.alarmState(t, "incident"))
	clk.Advance(30 * time.Second)
	assert.Equal(t, cwtypes.StateValueAlarm, f.alarmState(t, "incident"))
	clk.Advance(time.Hour)
	assert.Equal(t, cwtypes.StateValueAlarm, f.alarmState(t, "incident"))

	spec.Accounts[0].Regions[0].Alarms = []sim.AlarmSpec{{Name: "both", AtMinutes: 10, Image: "ubuntu"}, {Name: "never", AtMinutes: -1}}
	assert.Equal(t, []string{
		"accounts[0].regions[0].alarms[0]: image and at_minutes are two kinds of alarm: set one",
		"accounts[0].regions[0].alarms[1].at_minutes: -1 must be between 1 and 10080 (a week)",
	}, spec.Validate())
}

// TestDemoWorldIsDeployTestsAndMore: the demo's world is the deploy-test
// world with a build that errors once it serves (the AMI ubuntu-5xx), the
// team's alarm on it, the promotion chapter's two alarms, a worker, and
// the canary analysis chapter's latency (ubuntu's 100, ubuntu-slower's
// 130), and nothing else: the two cannot drift apart.
func TestDemoWorldIsDeployTestsAndMore(t *testing.T) {
	demo, base := loadWorld(t, "demo.json"), loadWorld(t, "deploy-test.json")
	r := &demo.Accounts[0].Regions[0]
	require.Len(t, r.Alarms, 3)
	assert.Equal(t, "ubuntu-5xx", r.Alarms[0].Image)
	// The promotion chapter's alarms: development's canary alarm, which
	// staging lacks, and production's gate alarm in staging; neither
	// fires within the demo (a week in).
	for _, a := range r.Alarms[1:] {
		assert.Equal(t, 7*24*60, a.AtMinutes, a.Name)
	}
	n := len(r.AMIs)
	require.Equal(t, []string{"ubuntu-5xx", "ubuntu-worker", "ubuntu-slower"}, []string{r.AMIs[n-3].Name, r.AMIs[n-2].Name, r.AMIs[n-1].Name})
	assert.Equal(t, sim.Worker, r.AMIs[n-2].Behavior, "the demo's worker finishes its job in its termination hook")
	latency := func(v float64) []sim.MetricSpec {
		return []sim.MetricSpec{{Namespace: "DeployTest", Name: "Latency", Value: v}}
	}
	require.Equal(t, "ubuntu", r.AMIs[0].Name)
	assert.Equal(t, latency(100), r.AMIs[0].Metrics)
	assert.Equal(t, latency(130), r.AMIs[n-1].Metrics, "30% slower than ubuntu")
	r.Alarms, r.AMIs, r.AMIs[0].Metrics = nil, r.AMIs[:n-3], nil
	assert.Equal(t, base, demo)
	assert.Empty(t, demo.Validate())
}

// TestCutsAreWhatClientsSee: a cut is what a client of the load balancer
// would call one. A group scaled to zero while still attached drains its
// instances (a scale-in deregisters and drains each instance first,
// "Amazon EC2 Auto Scaling lifecycle hooks" and "Set the deregistration
// delay", Auto Scaling User Guide) yet leaves the load balancer dark
// while the group still claims it: a cut on each. A group detached
// (DetachLoadBalancers, DetachLoadBalancerTargetGroups, Auto Scaling API
// Reference: it drains its instances, which keep running) then scaled to
// zero and deleted, as a destroy does, withdraws them: nothing cut, and a
// group made later serves anew. Detached and attached again while its
// instances run, the dark stretch between was a gap: a cut on each.
func TestCutsAreWhatClientsSee(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, f *fixture)
		cuts int
	}{
		{"scaled to zero while attached", func(t *testing.T, f *fixture) {
			f.scale(t, "g", 0)
		}, 2},
		{"detached, retired, another group made", func(t *testing.T, f *fixture) {
			f.detach(t, "g")
			f.clk.Advance(30 * time.Second)
			f.scale(t, "g", 0)
			f.clk.Advance(2 * time.Minute)
			_, err := f.c.AutoScaling.DeleteAutoScalingGroup(f.ctx, &autoscaling.DeleteAutoScalingGroupInput{AutoScalingGroupName: aws.String("g")})
			require.NoError(t, err)
			f.group(t, "h", amiOK, 1)
		}, 0},
		{"detached and attached again", func(t *testing.T, f *fixture) {
			f.detach(t, "g")
			f.clk.Advance(time.Minute)
			_, err := f.c.AutoScaling.AttachLoadBalancers(f.ctx, &autoscaling.AttachLoadBalancersInput{AutoScalingGroupName: aws.String("g"), LoadBalancerNames: []string{elbName}})
			require.NoError(t, err)
			_, err = f.c.AutoScaling.AttachLoadBalancerTargetGroups(f.ctx, &autoscaling.AttachLoadBalancerTargetGroupsInput{AutoScalingGroupName: aws.String("g"), TargetGroupARNs: []string{f.tgARN(t)}})
			require.NoError(t, err)
		}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, func(w *sim.WorldSpec) { w.Accounts[0].Regions[0].ELBs[0].ConnectionDrainingSeconds = 30 })
			f.group(t, "g", amiOK, 2)
			f.clk.Advance(5 * time.Minute)
			require.Zero(t, f.world.CutConnections())
			tt.run(t, f)
			f.clk.Advance(5 * time.Minute)
			assert.Equal(t, tt.cuts, f.world.CutConnections())
		})
	}
}

// detach takes group name out of the fixture's load balancer and target
// group.
func (f *fixture) detach(t *testing.T, name string) {
	t.Helper()
	_, err := f.c.AutoScaling.DetachLoadBalancers(f.ctx, &autoscaling.DetachLoadBalancersInput{AutoScalingGroupName: aws.String(name), LoadBalancerNames: []string{elbName}})
	require.NoError(t, err)
	_, err = f.c.AutoScaling.DetachLoadBalancerTargetGroups(f.ctx, &autoscaling.DetachLoadBalancerTargetGroupsInput{AutoScalingGroupName: aws.String(name), TargetGroupARNs: []string{f.tgARN(t)}})
	require.NoError(t, err)
}

// scale sets group name's minimum and desired capacity to n.
func (f *fixture) scale(t *testing.T, name string, n int32) {
	t.Helper()
	_, err := f.c.AutoScaling.UpdateAutoScalingGroup(f.ctx, &autoscaling.UpdateAutoScalingGroupInput{AutoScalingGroupName: aws.String(name), MinSize: aws.Int32(n), DesiredCapacity: aws.Int32(n)})
	require.NoError(t, err)
}
