package conformance

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbv2types "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	"github.com/aws/smithy-go/middleware"
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
	m := motoOrSkip(ctx, t)
	cfg := motoConfig(m.URL, "")
	plainAS, fastAS := autoscaling.NewFromConfig(cfg), autoscaling.NewFromConfig(cfg, querylist.AutoScaling)
	_, input := motoGroups(ctx, t, m)
	in := input("querylist")
	in.MinSize, in.MaxSize, in.DesiredCapacity = aws.Int32(3), aws.Int32(3), aws.Int32(3)
	in.Tags = []astypes.Tag{
		{Key: aws.String("ferry:project"), Value: aws.String("web"), PropagateAtLaunch: aws.Bool(true)},
		{Key: aws.String("note"), Value: aws.String(`a & b < c > "d" 'e'`), PropagateAtLaunch: aws.Bool(false)},
	}
	_, err := fastAS.CreateAutoScalingGroup(ctx, in)
	require.NoError(t, err)

	describe := &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{"querylist"}}
	groups := decodedAlike(t, "DescribeAutoScalingGroups", func(fast bool) (*autoscaling.DescribeAutoScalingGroupsOutput, error) {
		return pick(fast, plainAS, fastAS).DescribeAutoScalingGroups(ctx, describe)
	}, func(o *autoscaling.DescribeAutoScalingGroupsOutput) (any, middleware.Metadata) {
		return o.AutoScalingGroups, o.ResultMetadata
	})
	require.Len(t, groups.AutoScalingGroups, 1)
	g := groups.AutoScalingGroups[0]
	require.Len(t, g.Instances, 3)
	require.Len(t, g.Tags, 2)

	activities := &autoscaling.DescribeScalingActivitiesInput{AutoScalingGroupName: aws.String("querylist")}
	decodedAlike(t, "DescribeScalingActivities", func(fast bool) (*autoscaling.DescribeScalingActivitiesOutput, error) {
		return pick(fast, plainAS, fastAS).DescribeScalingActivities(ctx, activities)
	}, func(o *autoscaling.DescribeScalingActivitiesOutput) (any, middleware.Metadata) {
		return o.Activities, o.ResultMetadata
	})

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
	targetHealth := decodedAlike(t, "DescribeTargetHealth", func(fast bool) (*elbv2.DescribeTargetHealthOutput, error) {
		return pick(fast, plainLB, fastLB).DescribeTargetHealth(ctx, health)
	}, func(o *elbv2.DescribeTargetHealthOutput) (any, middleware.Metadata) {
		return o.TargetHealthDescriptions, o.ResultMetadata
	})
	require.Len(t, targetHealth.TargetHealthDescriptions, 3)
}

// decodedAlike calls op with the SDK's decoder alone and with
// querylist's, and fails unless the latter decoded the answer's lists
// itself (querylist.Decoded) to what the SDK alone decoded (lists). It
// returns querylist's decoding.
func decodedAlike[O any](t *testing.T, op string, call func(fast bool) (*O, error), lists func(*O) (any, middleware.Metadata)) *O {
	t.Helper()
	plain, err := call(false)
	require.NoError(t, err)
	fast, err := call(true)
	require.NoError(t, err)
	want, _ := lists(plain)
	got, md := lists(fast)
	assert.True(t, querylist.Decoded(md), "moto's %s answer was left to the SDK", op)
	require.Equal(t, want, got, op)
	return fast
}

// pick is fast when fast, else plain.
func pick[C any](fast bool, plain, quick C) C {
	if fast {
		return quick
	}
	return plain
}
