package sim_test

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/local/sim"
)

// ids are the instance ids of a group.
func (f *fixture) ids(t *testing.T, name string) []string {
	t.Helper()
	var out []string
	for _, i := range f.describe(t, name).Instances {
		out = append(out, aws.ToString(i.InstanceId))
	}
	return out
}

// TestConnectionDrainingAttribute: a classic load balancer's
// ConnectionDraining attribute, "disabled by default" when it is made
// with the API or CLI, 300 s when made in the console ("Configure
// connection draining for your Classic Load Balancer",
// https://docs.aws.amazon.com/elasticloadbalancing/latest/classic/config-conn-drain.html;
// DescribeLoadBalancerAttributes, Elastic Load Balancing API Reference):
// the world spec sets it. Without draining, detaching a serving group
// deregisters its instances at once and their in-flight requests are cut;
// with it, they drain and nothing is cut.
func TestConnectionDrainingAttribute(t *testing.T) {
	for _, tc := range []struct {
		name    string
		seconds int
		enabled bool
		cuts    int
		states  map[string]string
	}{
		{"disabled", 0, false, 2, map[string]string{"tg": "Removing"}},
		{"enabled", 30, true, 0, map[string]string{elbName: "Removing", "tg": "Removing"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, func(w *sim.WorldSpec) {
				w.Accounts[0].Regions[0].ELBs[0].ConnectionDrainingSeconds = tc.seconds
			})
			out, err := f.c.ELB.DescribeLoadBalancerAttributes(f.ctx, &elb.DescribeLoadBalancerAttributesInput{LoadBalancerName: aws.String(elbName)})
			require.NoError(t, err)
			assert.Equal(t, tc.enabled, out.LoadBalancerAttributes.ConnectionDraining.Enabled)
			if tc.enabled {
				assert.Equal(t, int32(tc.seconds), aws.ToInt32(out.LoadBalancerAttributes.ConnectionDraining.Timeout))
			}
			_, err = f.c.ELB.DescribeLoadBalancerAttributes(f.ctx, &elb.DescribeLoadBalancerAttributesInput{LoadBalancerName: aws.String("nope")})
			assertCode(t, err, cloud.CodeLoadBalancerNotFound)

			f.group(t, "g", amiOK, 2)
			f.clk.Advance(5 * time.Minute)
			_, err = f.c.AutoScaling.DetachLoadBalancers(f.ctx, &autoscaling.DetachLoadBalancersInput{AutoScalingGroupName: aws.String("g"), LoadBalancerNames: []string{elbName}})
			require.NoError(t, err)
			_, err = f.c.AutoScaling.DetachLoadBalancerTargetGroups(f.ctx, &autoscaling.DetachLoadBalancerTargetGroupsInput{AutoScalingGroupName: aws.String("g"), TargetGroupARNs: []string{f.tgARN(t)}})
			require.NoError(t, err)
			assert.Equal(t, tc.states, f.attachments(t, "g"))
			assert.Empty(t, f.wentDark(t), "the group was their only one: both withdrawn, not cut")
			assert.Equal(t, tc.cuts, f.world.CutConnections(), "each serving instance deregistered without draining is cut")
		})
	}
}

// TestScaleInProtection: an instance protected from scale-in is never
// terminated when its group's desired capacity drops, though the desired
// capacity does ("Use instance scale-in protection", Auto Scaling User
// Guide: "If all instances in an Auto Scaling group are protected from
// scale in, and a scale-in event occurs, its desired capacity is
// decremented. However, the Auto Scaling group can't terminate the
// required number of instances until their instance scale-in protection
// settings are disabled"); removing the protection
// (SetInstanceProtection, Auto Scaling API Reference) lets the surplus
// terminate. NewInstancesProtectedFromScaleIn protects every instance the
// group launches. More than 50 instances, or one not in the group, is
// refused.
func TestScaleInProtection(t *testing.T) {
	f := newFixture(t)
	f.template(t, "lt-g", amiOK, "")
	in := f.groupInput(t, "g", 2)
	in.NewInstancesProtectedFromScaleIn = aws.Bool(true)
	_, err := f.c.AutoScaling.CreateAutoScalingGroup(f.ctx, in)
	require.NoError(t, err)
	f.clk.Advance(5 * time.Minute)
	g := f.describe(t, "g")
	assert.True(t, aws.ToBool(g.NewInstancesProtectedFromScaleIn))
	for _, i := range g.Instances {
		assert.True(t, aws.ToBool(i.ProtectedFromScaleIn))
	}

	_, err = f.c.AutoScaling.UpdateAutoScalingGroup(f.ctx, &autoscaling.UpdateAutoScalingGroupInput{AutoScalingGroupName: aws.String("g"), DesiredCapacity: aws.Int32(0)})
	require.NoError(t, err)
	f.clk.Advance(5 * time.Minute)
	g = f.describe(t, "g")
	assert.Zero(t, aws.ToInt32(g.DesiredCapacity), "the desired capacity drops")
	assert.Equal(t, map[string]int{"InService": 2}, lifecycles(g), "no protected instance is terminated")

	ids := f.ids(t, "g")
	_, err = f.c.AutoScaling.SetInstanceProtection(f.ctx, &autoscaling.SetInstanceProtectionInput{AutoScalingGroupName: aws.String("g"), InstanceIds: []string{"i-00000000000000999"}, ProtectedFromScaleIn: aws.Bool(false)})
	assertCode(t, err, cloud.CodeValidation)
	_, err = f.c.AutoScaling.SetInstanceProtection(f.ctx, &autoscaling.SetInstanceProtectionInput{AutoScalingGroupName: aws.String("g"), InstanceIds: make([]string, 51), ProtectedFromScaleIn: aws.Bool(false)})
	assertCode(t, err, cloud.CodeLimitExceeded)
	_, err = f.c.AutoScaling.SetInstanceProtection(f.ctx, &autoscaling.SetInstanceProtectionInput{AutoScalingGroupName: aws.String("g"), InstanceIds: ids[:1], ProtectedFromScaleIn: aws.Bool(false)})
	require.NoError(t, err)
	f.clk.Advance(5 * time.Minute)
	assert.Equal(t, ids[1:], f.ids(t, "g"), "the unprotected instance terminated, the protected one stays")
	assert.Zero(t, f.world.CutConnections(), "a scale-in drains")
}

// TestStandby: EnterStandby takes InService instances out of their load
// balancers (draining) and out of the group's capacity: a scale-in never
// terminates them, and without ShouldDecrementDesiredCapacity the group
// launches replacements; with it, the desired capacity drops, refused
// below the minimum size ("Temporarily remove instances from your Auto
// Scaling group", Auto Scaling User Guide; EnterStandby, ExitStandby, Auto
// Scaling API Reference). ExitStandby puts them back: the desired
// capacity rises and they register with the load balancers again.
func TestStandby(t *testing.T) {
	f := newFixture(t)
	f.group(t, "g", amiOK, 2)
	f.clk.Advance(5 * time.Minute)
	ids := f.ids(t, "g")
	_, err := f.c.AutoScaling.(*sim.AutoScaling).EnterStandby(f.ctx, &autoscaling.EnterStandbyInput{AutoScalingGroupName: aws.String("g"), InstanceIds: ids[:1], ShouldDecrementDesiredCapacity: aws.Bool(true)})
	require.NoError(t, err)
	g := f.describe(t, "g")
	assert.Equal(t, map[string]int{"InService": 1, "Standby": 1}, lifecycles(g))
	assert.Equal(t, int32(1), aws.ToInt32(g.DesiredCapacity))
	f.clk.Advance(time.Minute)
	assert.Equal(t, map[string]int{"healthy": 1}, f.targetStates(t, f.tgARN(t)), "out of its target group, drained")

	_, err = f.c.AutoScaling.(*sim.AutoScaling).EnterStandby(f.ctx, &autoscaling.EnterStandbyInput{AutoScalingGroupName: aws.String("g"), InstanceIds: ids[:1], ShouldDecrementDesiredCapacity: aws.Bool(true)})
	assertCode(t, err, cloud.CodeValidation) // not InService

	_, err = f.c.AutoScaling.UpdateAutoScalingGroup(f.ctx, &autoscaling.UpdateAutoScalingGroupInput{AutoScalingGroupName: aws.String("g"), DesiredCapacity: aws.Int32(0)})
	require.NoError(t, err)
	f.clk.Advance(5 * time.Minute)
	assert.Equal(t, map[string]int{"Standby": 1}, lifecycles(f.describe(t, "g")), "a scale-in never terminates a Standby instance")

	_, err = f.c.AutoScaling.(*sim.AutoScaling).ExitStandby(f.ctx, &autoscaling.ExitStandbyInput{AutoScalingGroupName: aws.String("g"), InstanceIds: ids[:1]})
	require.NoError(t, err)
	g = f.describe(t, "g")
	assert.Equal(t, map[string]int{"InService": 1}, lifecycles(g))
	assert.Equal(t, int32(1), aws.ToInt32(g.DesiredCapacity))
	f.clk.Advance(time.Minute)
	assert.Equal(t, map[string]int{"healthy": 1}, f.targetStates(t, f.tgARN(t)), "registered again")
}
