package sim_test

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/local/sim"
)

// TestObserveSeesEveryChange: an observer sees each mutating call with the
// world just before and just after it (a ForceDelete: its instances
// healthy in the load balancers before, the group deleting and the ELB
// empty after), no read-only call, and each event of the world's own (Call
// nil: a target group's draining ending).
func TestObserveSeesEveryChange(t *testing.T) {
	f := newFixture(t)
	var changes []sim.Change
	f.world.Observe(func(c sim.Change) { changes = append(changes, c) })
	f.group(t, "g", amiOK, 2)
	f.clk.Advance(5 * time.Minute)
	f.describe(t, "g")
	var calls []string
	for _, c := range changes {
		calls = append(calls, c.Call.Op)
	}
	assert.Equal(t, []string{"CreateLaunchTemplate", "CreateAutoScalingGroup"}, calls, "no Describe*")

	changes = nil
	_, err := f.c.AutoScaling.DetachLoadBalancerTargetGroups(f.ctx, &autoscaling.DetachLoadBalancerTargetGroupsInput{AutoScalingGroupName: aws.String("g"), TargetGroupARNs: []string{f.tgARN(t)}})
	require.NoError(t, err)
	f.clk.Advance(time.Minute)
	f.describe(t, "g")
	require.Len(t, changes, 3, "the detach, then each target's draining ending")
	assert.Nil(t, changes[1].Call)
	assert.Nil(t, changes[2].Call)
	assert.Equal(t, start.Add(5*time.Minute+30*time.Second), changes[2].At, "at its own instant, not the clock's")

	changes = nil
	_, err = f.c.AutoScaling.DeleteAutoScalingGroup(f.ctx, &autoscaling.DeleteAutoScalingGroupInput{AutoScalingGroupName: aws.String("g"), ForceDelete: aws.Bool(true)})
	require.NoError(t, err)
	require.Len(t, changes, 1)
	c := changes[0]
	require.NotNil(t, c.Call)
	assert.Equal(t, "DeleteAutoScalingGroup", c.Call.Op)
	elb := func(in sim.Instant) sim.BalancerState {
		for _, b := range in.Balancers {
			if b.Name == elbName {
				return b
			}
		}
		return sim.BalancerState{}
	}
	assert.Equal(t, 2, elb(c.Before).Healthy())
	assert.Equal(t, []string{"g"}, elb(c.Before).Attached)
	assert.Equal(t, 0, elb(c.After).Healthy())
	assert.Empty(t, elb(c.After).Attached, "a deleting group serves no one")
	require.Len(t, c.After.Groups, 1)
	assert.True(t, c.After.Groups[0].Deleting)
}
