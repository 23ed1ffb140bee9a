package sim_test

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/local/sim"
)

// The launching lifecycle hook, from AWS's documentation:
//   - "The lifecycle hook puts the instance into a wait state
//     (Pending:Wait) ... The instance remains in a wait state until you
//     either complete the lifecycle action, or the timeout period ends ...
//     then the Auto Scaling group continues the launch process
//     (Pending:Proceed). If you need more time, you can restart the
//     timeout period by recording a heartbeat." and "before the instance
//     reaches the InService state, if the Auto Scaling group is associated
//     with an Elastic Load Balancing load balancer, the instance is
//     registered with the load balancer" (How lifecycle hooks work in
//     Amazon EC2 Auto Scaling groups, Auto Scaling User Guide,
//     https://docs.aws.amazon.com/autoscaling/ec2/userguide/lifecycle-hooks-overview.html).
//   - DefaultResult: "The action the Auto Scaling group takes when the
//     lifecycle hook timeout elapses ... The default value is ABANDON";
//     GlobalTimeout: "The maximum is 172800 seconds (48 hours) or 100
//     times HeartbeatTimeout, whichever is smaller" (PutLifecycleHook and
//     LifecycleHook, Auto Scaling API Reference).
//   - CompleteLifecycleAction "Completes the lifecycle action for the
//     specified token or instance with the specified result";
//     RecordLifecycleActionHeartbeat "extends the timeout by the length of
//     time defined using the PutLifecycleHook API call" (Auto Scaling API
//     Reference).

// launchHookGroup creates group g of two instances from amiOK with user
// data, attached to the ELB and target group, with one launching hook.
func launchHookGroup(t *testing.T, f *fixture, userData string, heartbeat int32, result string) {
	t.Helper()
	f.template(t, "lt-g", amiOK, userData)
	in := f.groupInput(t, "g", 2)
	h := astypes.LifecycleHookSpecification{
		LifecycleHookName: aws.String("warm"), LifecycleTransition: aws.String("autoscaling:EC2_INSTANCE_LAUNCHING"), HeartbeatTimeout: aws.Int32(heartbeat),
	}
	if result != "" {
		h.DefaultResult = aws.String(result)
	}
	in.LifecycleHookSpecificationList = []astypes.LifecycleHookSpecification{h}
	_, err := f.c.AutoScaling.CreateAutoScalingGroup(f.ctx, in)
	require.NoError(t, err)
}

// registered counts the instances the group's ELB and target group
// list.
func registered(t *testing.T, f *fixture) (elb, tg int) {
	t.Helper()
	lb, err := f.c.ELB.DescribeInstanceHealth(f.ctx, &elasticloadbalancing.DescribeInstanceHealthInput{LoadBalancerName: aws.String(elbName)})
	require.NoError(t, err)
	th, err := f.c.ELBv2.DescribeTargetHealth(f.ctx, &elbv2.DescribeTargetHealthInput{TargetGroupArn: aws.String(f.tgARN(t))})
	require.NoError(t, err)
	return len(lb.InstanceStates), len(th.TargetHealthDescriptions)
}

func ids(g *astypes.AutoScalingGroup) []string {
	var out []string
	for _, i := range g.Instances {
		out = append(out, aws.ToString(i.InstanceId))
	}
	return out
}

// TestLaunchHookCompletedByBoot: instances whose boot completes their
// launching action (a user data script calling complete-lifecycle-action)
// wait in Pending:Wait, unregistered, until their boot is over, then go
// InService, registered, and pass their health checks.
func TestLaunchHookCompletedByBoot(t *testing.T) {
	f := newFixture(t)
	launchHookGroup(t, f, sim.LaunchHookMarker+" complete", 3600, "CONTINUE")
	assert.Equal(t, map[string]int{"Pending:Wait": 2}, lifecycles(f.describe(t, "g")))
	f.clk.Advance(59 * time.Second) // boot_seconds is at least 60
	assert.Equal(t, map[string]int{"Pending:Wait": 2}, lifecycles(f.describe(t, "g")))
	elb, tg := registered(t, f)
	assert.Zero(t, elb+tg, "not registered while waiting")
	f.clk.Advance(62 * time.Second) // ... and at most 120
	assert.Equal(t, map[string]int{"InService": 2}, lifecycles(f.describe(t, "g")))
	assert.Equal(t, 2, count(f.activities(t, "g"), "Launching a new EC2 instance: i-", astypes.ScalingActivityStatusCodeSuccessful))
	elb, tg = registered(t, f)
	assert.Equal(t, [2]int{2, 2}, [2]int{elb, tg}, "registered once in service")
	f.clk.Advance(41 * time.Second)
	th, err := f.c.ELBv2.DescribeTargetHealth(f.ctx, &elbv2.DescribeTargetHealthInput{TargetGroupArn: aws.String(f.tgARN(t))})
	require.NoError(t, err)
	for _, d := range th.TargetHealthDescriptions {
		assert.Equal(t, "healthy", string(d.TargetHealth.State))
	}
}

// TestLaunchHookTimeout: nobody completes the action; at the heartbeat
// timeout the hook's DefaultResult applies: CONTINUE puts the instances in
// service, ABANDON (also the default when the hook names none) terminates
// them and the group launches replacements, which wait in turn.
func TestLaunchHookTimeout(t *testing.T) {
	for _, tc := range []struct {
		result    string
		inService bool
	}{
		{"CONTINUE", true},
		{"ABANDON", false},
		{"", false},
	} {
		t.Run(tc.result, func(t *testing.T) {
			f := newFixture(t)
			launchHookGroup(t, f, "", 300, tc.result)
			first := ids(f.describe(t, "g"))
			f.clk.Advance(299 * time.Second)
			assert.Equal(t, map[string]int{"Pending:Wait": 2}, lifecycles(f.describe(t, "g")), "booted, still waiting")
			assert.Equal(t, 2, count(f.activities(t, "g"), "Launching a new EC2 instance: i-", astypes.ScalingActivityStatusCodeInProgress))
			f.clk.Advance(time.Second)
			g := f.describe(t, "g")
			if tc.inService {
				assert.Equal(t, map[string]int{"InService": 2}, lifecycles(g))
				assert.Equal(t, first, ids(g))
				return
			}
			assert.Equal(t, map[string]int{"Terminating": 2, "Pending:Wait": 2}, lifecycles(g), "abandoned and replaced")
			elb, tg := registered(t, f)
			assert.Zero(t, elb+tg, "an abandoned instance was never registered")
			f.clk.Advance(41 * time.Second)
			g = f.describe(t, "g")
			assert.Equal(t, map[string]int{"Pending:Wait": 2}, lifecycles(g))
			assert.NotContains(t, ids(g), first[0])
		})
	}
}

// TestLaunchHookCompleteAndHeartbeat: CompleteLifecycleAction by instance
// id or token, CONTINUE (Pending:Proceed while the instance still boots)
// or ABANDON; a result other than those, a hook not pending or an
// instance not waiting is a ValidationError. A heartbeat restarts the
// timeout, never past the global timeout of 100 heartbeats, when the
// DefaultResult (ABANDON) applies.
func TestLaunchHookCompleteAndHeartbeat(t *testing.T) {
	f := newFixture(t)
	launchHookGroup(t, f, "", 30, "ABANDON")
	as := f.c.AutoScaling.(*sim.AutoScaling)
	complete := func(id, token, hook, result string) error {
		in := &autoscaling.CompleteLifecycleActionInput{AutoScalingGroupName: aws.String("g"), LifecycleHookName: aws.String(hook), LifecycleActionResult: aws.String(result)}
		if id != "" {
			in.InstanceId = aws.String(id)
		}
		if token != "" {
			in.LifecycleActionToken = aws.String(token)
		}
		_, err := as.CompleteLifecycleAction(f.ctx, in)
		return err
	}
	heartbeat := func(id string) error {
		_, err := as.RecordLifecycleActionHeartbeat(f.ctx, &autoscaling.RecordLifecycleActionHeartbeatInput{
			AutoScalingGroupName: aws.String("g"), LifecycleHookName: aws.String("warm"), InstanceId: aws.String(id)})
		return err
	}
	first := ids(f.describe(t, "g"))
	assertCode(t, complete(first[0], "", "warm", "MAYBE"), cloud.CodeValidation)
	assertCode(t, complete(first[0], "", "other", "CONTINUE"), cloud.CodeValidation)
	require.NoError(t, complete(first[0], "", "warm", "CONTINUE"))
	assertCode(t, complete(first[0], "", "warm", "CONTINUE"), cloud.CodeValidation)
	assert.Equal(t, map[string]int{"Pending:Proceed": 1, "Pending:Wait": 1}, lifecycles(f.describe(t, "g")), "the first still boots")

	token, ok := f.world.LaunchActionToken(deployer, region, first[1], "warm")
	require.True(t, ok)
	for range 5 { // 5 heartbeats of 30 s keep it waiting 150 s
		f.clk.Advance(29 * time.Second)
		require.NoError(t, heartbeat(first[1]))
	}
	assert.Equal(t, map[string]int{"InService": 1, "Pending:Wait": 1}, lifecycles(f.describe(t, "g")))
	require.NoError(t, complete("", token, "warm", "ABANDON"))
	assertCode(t, heartbeat(first[1]), cloud.CodeValidation)
	g := f.describe(t, "g")
	assert.Equal(t, map[string]int{"InService": 1, "Terminating": 1, "Pending:Wait": 1}, lifecycles(g), "abandoned, replaced")

	// The replacement: heartbeats every 29 s never keep it past 100 x 30 s.
	fresh := ids(g)[2]
	launched := f.clk.Now()
	for f.clk.Now().Sub(launched) < 3000*time.Second-29*time.Second {
		f.clk.Advance(29 * time.Second)
		require.NoError(t, heartbeat(fresh))
	}
	f.clk.Advance(launched.Add(3000 * time.Second).Sub(f.clk.Now()))
	assert.Equal(t, map[string]int{"InService": 1, "Terminating": 1, "Pending:Wait": 1}, lifecycles(f.describe(t, "g")),
		"the global timeout ended its wait: ABANDON, replaced")
}

// TestTerminationHookHeartbeat: a heartbeat restarts an instance's
// Terminating:Wait timeout ("If you need more time, you can restart the
// timeout period by recording a heartbeat", How lifecycle hooks work),
// never past the global timeout of 100 heartbeats from the start of the
// wait; an instance not waiting is refused.
func TestTerminationHookHeartbeat(t *testing.T) {
	f := newFixture(t)
	f.template(t, "lt-g", amiOK, "")
	in := f.groupInput(t, "g", 1)
	in.LoadBalancerNames, in.TargetGroupARNs = nil, nil
	in.LifecycleHookSpecificationList = []astypes.LifecycleHookSpecification{{
		LifecycleHookName: aws.String("drain"), LifecycleTransition: aws.String("autoscaling:EC2_INSTANCE_TERMINATING"), HeartbeatTimeout: aws.Int32(30),
	}}
	_, err := f.c.AutoScaling.CreateAutoScalingGroup(f.ctx, in)
	require.NoError(t, err)
	f.clk.Advance(5 * time.Minute)
	id := aws.ToString(f.describe(t, "g").Instances[0].InstanceId)
	heartbeat := func() error {
		_, err := f.c.AutoScaling.(*sim.AutoScaling).RecordLifecycleActionHeartbeat(f.ctx, &autoscaling.RecordLifecycleActionHeartbeatInput{
			AutoScalingGroupName: aws.String("g"), LifecycleHookName: aws.String("drain"), InstanceId: aws.String(id)})
		return err
	}
	assertCode(t, heartbeat(), cloud.CodeValidation)

	_, err = f.c.AutoScaling.UpdateAutoScalingGroup(f.ctx, &autoscaling.UpdateAutoScalingGroupInput{AutoScalingGroupName: aws.String("g"), MinSize: aws.Int32(0), DesiredCapacity: aws.Int32(0)})
	require.NoError(t, err)
	waited := time.Duration(0)
	for waited < 3000*time.Second-29*time.Second {
		f.clk.Advance(29 * time.Second)
		waited += 29 * time.Second
		require.NoError(t, heartbeat())
		require.Equal(t, map[string]int{"Terminating:Wait": 1}, lifecycles(f.describe(t, "g")), "kept waiting at %s", waited)
	}
	f.clk.Advance(3000*time.Second - waited)
	assert.Equal(t, map[string]int{"Terminating:Proceed": 1}, lifecycles(f.describe(t, "g")), "the global timeout ends the wait")
	assertCode(t, heartbeat(), cloud.CodeValidation)
	f.clk.Advance(41 * time.Second)
	assert.Empty(t, f.describe(t, "g").Instances)
}

// TestLaunchHookRebalanceStep: an AZ rebalance step launches first and
// terminates an instance of the crowded zone once the new one is in
// service ("Rebalancing activities", Auto Scaling User Guide); with a
// launching hook completed at boot, that is when the boot completes it,
// not the latest the hook could hold it (its global timeout).
func TestLaunchHookRebalanceStep(t *testing.T) {
	f := newFixture(t)
	require.NoError(t, f.world.Faults().ImpairZone(deployer, region, "us-east-1b", start.Add(3*time.Minute)))
	f.template(t, "lt-grp", amiOK, sim.LaunchHookMarker+" complete")
	in := f.groupInput(t, "grp", 2)
	in.LifecycleHookSpecificationList = []astypes.LifecycleHookSpecification{{
		LifecycleHookName: aws.String("warm"), LifecycleTransition: aws.String("autoscaling:EC2_INSTANCE_LAUNCHING"), HeartbeatTimeout: aws.Int32(3600),
	}}
	_, err := f.c.AutoScaling.CreateAutoScalingGroup(f.ctx, in)
	require.NoError(t, err)
	f.clk.Advance(150 * time.Second)
	require.Equal(t, map[string]int{"us-east-1a": 2}, zones(f.describe(t, "grp")))
	f.clk.Advance(15 * time.Minute)
	assert.Equal(t, map[string]int{"us-east-1a": 1, "us-east-1b": 1}, zones(f.describe(t, "grp")), "balanced within minutes, not hours")
}
