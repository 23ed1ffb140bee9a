package conformance

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/cloud"
)

// launchHookCompleter is the Auto Scaling call that completes a lifecycle
// action (the simulation's and the SDK client's alike).
type launchHookCompleter interface {
	CompleteLifecycleAction(ctx context.Context, in *autoscaling.CompleteLifecycleActionInput, optFns ...func(*autoscaling.Options)) (*autoscaling.CompleteLifecycleActionOutput, error)
}

// TestLaunchHookAgainstMoto creates a group of one instance with an
// autoscaling:EC2_INSTANCE_LAUNCHING hook in the simulation and in
// moto_server, and completes its action. AWS holds the instance in
// Pending:Wait until then ("How lifecycle hooks work in Amazon EC2 Auto
// Scaling groups", Auto Scaling User Guide,
// https://docs.aws.amazon.com/autoscaling/ec2/userguide/lifecycle-hooks-overview.html)
// and CompleteLifecycleAction continues it (Auto Scaling API Reference);
// the simulation does so. moto 5.2.1 does not model it: its
// CreateAutoScalingGroup ignores LifecycleHookSpecificationList (no hook
// to describe), its instances are InService at once, and its
// CompleteLifecycleAction is not implemented. The test records moto's
// answers so a moto that starts modelling hooks shows up here; the
// simulation rests on AWS's documentation alone. Without moto_server on
// PATH it checks the simulation alone.
func TestLaunchHookAgainstMoto(t *testing.T) {
	ctx := context.Background()
	simAS, simInput := simGroups(t)
	in := withLaunchHook(simInput("hooked"))
	_, err := simAS.CreateAutoScalingGroup(ctx, in)
	require.NoError(t, err)
	assert.Equal(t, []string{"Pending:Wait"}, states(t, simAS, "hooked"))
	require.NoError(t, complete(ctx, simAS.(launchHookCompleter), simAS, "hooked"))
	assert.Equal(t, []string{"Pending:Proceed"}, states(t, simAS, "hooked"), "continued; InService once booted")

	m := motoOrSkip(ctx, t)
	motoAS, motoInput := motoGroups(ctx, t, m)
	_, err = motoAS.CreateAutoScalingGroup(ctx, withLaunchHook(motoInput("hooked")))
	require.NoError(t, err)
	assert.Equal(t, []string{"InService"}, states(t, motoAS, "hooked"), "moto 5.2.1 has no Pending:Wait")
	hooks, err := motoAS.DescribeLifecycleHooks(ctx, &autoscaling.DescribeLifecycleHooksInput{AutoScalingGroupName: aws.String("hooked")})
	require.NoError(t, err)
	assert.Empty(t, hooks.LifecycleHooks, "moto 5.2.1 ignores the create's hooks")
	err = complete(ctx, motoAS, motoAS, "hooked", func(o *autoscaling.Options) { o.RetryMaxAttempts = 1 })
	t.Logf("moto CompleteLifecycleAction: %v (code %q)", err, cloud.ErrorCode(err))
	assert.Error(t, err, "moto 5.2.1 does not implement CompleteLifecycleAction")
}

// withLaunchHook gives in a desired capacity of one and a launching hook
// that CONTINUEs after 300 s.
func withLaunchHook(in *autoscaling.CreateAutoScalingGroupInput) *autoscaling.CreateAutoScalingGroupInput {
	in.DesiredCapacity, in.MinSize = aws.Int32(1), aws.Int32(1)
	in.LifecycleHookSpecificationList = []astypes.LifecycleHookSpecification{{
		LifecycleHookName: aws.String("warmup"), LifecycleTransition: aws.String("autoscaling:EC2_INSTANCE_LAUNCHING"),
		HeartbeatTimeout: aws.Int32(300), DefaultResult: aws.String("CONTINUE"),
	}}
	return in
}

// describer is the Auto Scaling call that describes groups.
type describer interface {
	DescribeAutoScalingGroups(ctx context.Context, in *autoscaling.DescribeAutoScalingGroupsInput, optFns ...func(*autoscaling.Options)) (*autoscaling.DescribeAutoScalingGroupsOutput, error)
}

// states are the lifecycle states of group name's instances.
func states(t *testing.T, as describer, name string) []string {
	t.Helper()
	out, err := as.DescribeAutoScalingGroups(t.Context(), &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{name}})
	require.NoError(t, err)
	require.Len(t, out.AutoScalingGroups, 1)
	var s []string
	for _, i := range out.AutoScalingGroups[0].Instances {
		s = append(s, string(i.LifecycleState))
	}
	return s
}

// complete completes the launching action of group name's first instance
// with CONTINUE.
func complete(ctx context.Context, c launchHookCompleter, as describer, name string, opts ...func(*autoscaling.Options)) error {
	out, err := as.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{name}})
	if err != nil {
		return err
	}
	if len(out.AutoScalingGroups) == 0 || len(out.AutoScalingGroups[0].Instances) == 0 {
		return errors.New("no instance")
	}
	_, err = c.CompleteLifecycleAction(ctx, &autoscaling.CompleteLifecycleActionInput{AutoScalingGroupName: aws.String(name),
		LifecycleHookName: aws.String("warmup"), InstanceId: out.AutoScalingGroups[0].Instances[0].InstanceId, LifecycleActionResult: aws.String("CONTINUE")}, opts...)
	return err
}
