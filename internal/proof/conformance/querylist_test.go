package conformance

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbv2types "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/cloud/querylist"
)

// TestQueryListAgainstMoto holds package querylist, which decodes the
// long lists of three answers itself, to the SDK's decoder on answers it
// did not write: moto's, from its own templates. A group's instances and
// tags (DescribeAutoScalingGroups), its scaling activities
// (DescribeScalingActivities) and a target group's targets
// (DescribeTargetHealth) must be decoded by the fast path (Decoded), not
// handed to the SDK whole, and to exactly what the SDK alone decodes.
func TestQueryListAgainstMoto(t *testing.T) {
	ctx := context.Background()
	m, err := StartMoto(ctx)
	if errors.Is(err, ErrNoMoto) {
		t.Skipf("no moto: %v", err)
	}
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	cfg := motoConfig(m.URL, "")
	plainAS, fastAS := autoscaling.NewFromConfig(cfg), autoscaling.NewFromConfig(cfg, querylist.AutoScaling)
	_, input := motoGroups(ctx, t, m)
	in := input("querylist")
	in.MinSize, in.MaxSize, in.DesiredCapacity = aws.Int32(3), aws.Int32(3), aws.Int32(3)
	in.Tags = []astypes.Tag{
		{Key: aws.String("ferry:project"), Value: aws.String("web"), PropagateAtLaunch: aws.Bool(true)},
		{Key: aws.String("note"), Value: aws.String(`a & b < c > "d" 'e'`), PropagateAtLaunch: aws.Bool(false)},
	}
	_, err = fastAS.CreateAutoScalingGroup(ctx, in)
	require.NoError(t, err)

	describe := &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{"querylist"}}
	plainGroups, err := plainAS.DescribeAutoScalingGroups(ctx, describe)
	require.NoError(t, err)
	fastGroups, err := fastAS.DescribeAutoScalingGroups(ctx, describe)
	require.NoError(t, err)
	assert.True(t, querylist.Decoded(fastGroups.ResultMetadata), "moto's DescribeAutoScalingGroups answer was left to the SDK")
	require.Equal(t, plainGroups.AutoScalingGroups, fastGroups.AutoScalingGroups)
	require.Len(t, fastGroups.AutoScalingGroups, 1)
	g := fastGroups.AutoScalingGroups[0]
	require.Len(t, g.Instances, 3)
	require.Len(t, g.Tags, 2)

	activities := &autoscaling.DescribeScalingActivitiesInput{AutoScalingGroupName: aws.String("querylist")}
	plainActs, err := plainAS.DescribeScalingActivities(ctx, activities)
	require.NoError(t, err)
	fastActs, err := fastAS.DescribeScalingActivities(ctx, activities)
	require.NoError(t, err)
	assert.True(t, querylist.Decoded(fastActs.ResultMetadata), "moto's DescribeScalingActivities answer was left to the SDK")
	require.Equal(t, plainActs.Activities, fastActs.Activities)

	vpcs, err := ec2.NewFromConfig(cfg).DescribeVpcs(ctx, &ec2.DescribeVpcsInput{})
	require.NoError(t, err)
	require.NotEmpty(t, vpcs.Vpcs)
	plainLB, fastLB := elbv2.NewFromConfig(cfg), elbv2.NewFromConfig(cfg, querylist.ELBv2)
	tg, err := fastLB.CreateTargetGroup(ctx, &elbv2.CreateTargetGroupInput{Name: aws.String("querylist"), Protocol: elbv2types.ProtocolEnumHttp,
		Port: aws.Int32(80), VpcId: vpcs.Vpcs[0].VpcId, TargetType: elbv2types.TargetTypeEnumInstance})
	require.NoError(t, err)
	arn := tg.TargetGroups[0].TargetGroupArn
	var targets []elbv2types.TargetDescription
	for _, i := range g.Instances {
		targets = append(targets, elbv2types.TargetDescription{Id: i.InstanceId, Port: aws.Int32(8080)})
	}
	_, err = fastLB.RegisterTargets(ctx, &elbv2.RegisterTargetsInput{TargetGroupArn: arn, Targets: targets})
	require.NoError(t, err)
	health := &elbv2.DescribeTargetHealthInput{TargetGroupArn: arn}
	plainHealth, err := plainLB.DescribeTargetHealth(ctx, health)
	require.NoError(t, err)
	fastHealth, err := fastLB.DescribeTargetHealth(ctx, health)
	require.NoError(t, err)
	assert.True(t, querylist.Decoded(fastHealth.ResultMetadata), "moto's DescribeTargetHealth answer was left to the SDK")
	require.Equal(t, plainHealth.TargetHealthDescriptions, fastHealth.TargetHealthDescriptions)
	require.Len(t, fastHealth.TargetHealthDescriptions, 3)
}
