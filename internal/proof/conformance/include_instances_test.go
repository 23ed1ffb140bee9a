package conformance

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/cloud"
)

// TestIncludeInstancesAgainstMoto: DescribeAutoScalingGroups with
// IncludeInstances false ("Specifies whether to include information
// about Amazon EC2 instances in the response. When set to true
// (default), the response includes instance details",
// DescribeAutoScalingGroups, Auto Scaling API Reference) leaves a group's
// instances out. The simulation does; moto 5.2.1 ignores the parameter
// (its describe_auto_scaling_groups reads no IncludeInstances) and
// answers every instance. ferry's listings without instances
// (fleet.List, fleet.DescribeSummaries) summarize each group without
// them either way, so on moto they cost the bytes AWS would spare, and
// nothing else differs.
func TestIncludeInstancesAgainstMoto(t *testing.T) {
	ctx := context.Background()
	simAS, simInput := simGroups(t)
	instances := func(api cloud.AutoScaling, include bool) int {
		out, err := api.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{
			AutoScalingGroupNames: []string{"with-instances"}, IncludeInstances: aws.Bool(include)})
		require.NoError(t, err)
		require.Len(t, out.AutoScalingGroups, 1)
		return len(out.AutoScalingGroups[0].Instances)
	}
	create := func(api cloud.AutoScaling, in *autoscaling.CreateAutoScalingGroupInput) {
		in.MinSize, in.DesiredCapacity = aws.Int32(1), aws.Int32(1)
		_, err := api.CreateAutoScalingGroup(ctx, in)
		require.NoError(t, err)
	}
	create(simAS, simInput("with-instances"))
	assert.Equal(t, 1, instances(simAS, true), "the simulation: the group's instance")
	assert.Zero(t, instances(simAS, false), "the simulation: none with IncludeInstances false, as AWS documents")

	m := motoOrSkip(ctx, t)
	motoAS, motoInput := motoGroups(ctx, t, m)
	create(motoAS, motoInput("with-instances"))
	assert.Equal(t, 1, instances(motoAS, true), "moto: the group's instance")
	assert.Equal(t, 1, instances(motoAS, false), "moto 5.2.1 ignores IncludeInstances; if it honours it now, assert zero here and drop the note in doc.go")
}

// motoOrSkip starts moto_server for the test, closed when it ends, and
// skips the test, saying why, on a machine without it (ErrNoMoto).
func motoOrSkip(ctx context.Context, t *testing.T) *Moto {
	t.Helper()
	m, err := StartMoto(ctx)
	if errors.Is(err, ErrNoMoto) {
		t.Skipf("no moto: %v", err)
	}
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	return m
}
