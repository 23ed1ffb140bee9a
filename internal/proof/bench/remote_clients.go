package bench

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/ferryhq/ferry/internal/cloud"
)

// The clients of the simulated AWS of another process (remote): each
// operation of package cloud's interfaces, one call over HTTP.
type (
	remoteEC2         struct{ remote }
	remoteAutoScaling struct{ remote }
	remoteELB         struct{ remote }
	remoteELBv2       struct{ remote }
	remoteIAM         struct{ remote }
	remoteSNS         struct{ remote }
	remoteCloudWatch  struct{ remote }
	remoteEventBridge struct{ remote }
	remoteSTS         struct{ remote }
)

var (
	_ cloud.EC2         = remoteEC2{}
	_ cloud.AutoScaling = remoteAutoScaling{}
	_ cloud.ELB         = remoteELB{}
	_ cloud.ELBv2       = remoteELBv2{}
	_ cloud.IAM         = remoteIAM{}
	_ cloud.SNS         = remoteSNS{}
	_ cloud.CloudWatch  = remoteCloudWatch{}
	_ cloud.EventBridge = remoteEventBridge{}
	_ cloud.STS         = remoteSTS{}
)

func (p remoteEC2) DescribeImages(ctx context.Context, in *ec2.DescribeImagesInput, _ ...func(*ec2.Options)) (*ec2.DescribeImagesOutput, error) {
	return call[ec2.DescribeImagesOutput](ctx, p.remote, "DescribeImages", in)
}

func (p remoteEC2) DescribeSubnets(ctx context.Context, in *ec2.DescribeSubnetsInput, _ ...func(*ec2.Options)) (*ec2.DescribeSubnetsOutput, error) {
	return call[ec2.DescribeSubnetsOutput](ctx, p.remote, "DescribeSubnets", in)
}

func (p remoteEC2) DescribeSecurityGroups(ctx context.Context, in *ec2.DescribeSecurityGroupsInput, _ ...func(*ec2.Options)) (*ec2.DescribeSecurityGroupsOutput, error) {
	return call[ec2.DescribeSecurityGroupsOutput](ctx, p.remote, "DescribeSecurityGroups", in)
}

func (p remoteEC2) CreateLaunchTemplate(ctx context.Context, in *ec2.CreateLaunchTemplateInput, _ ...func(*ec2.Options)) (*ec2.CreateLaunchTemplateOutput, error) {
	return call[ec2.CreateLaunchTemplateOutput](ctx, p.remote, "CreateLaunchTemplate", in)
}

func (p remoteEC2) DescribeLaunchTemplates(ctx context.Context, in *ec2.DescribeLaunchTemplatesInput, _ ...func(*ec2.Options)) (*ec2.DescribeLaunchTemplatesOutput, error) {
	return call[ec2.DescribeLaunchTemplatesOutput](ctx, p.remote, "DescribeLaunchTemplates", in)
}

func (p remoteEC2) DeleteLaunchTemplate(ctx context.Context, in *ec2.DeleteLaunchTemplateInput, _ ...func(*ec2.Options)) (*ec2.DeleteLaunchTemplateOutput, error) {
	return call[ec2.DeleteLaunchTemplateOutput](ctx, p.remote, "DeleteLaunchTemplate", in)
}

func (p remoteEC2) DescribeInstanceTypes(ctx context.Context, in *ec2.DescribeInstanceTypesInput, _ ...func(*ec2.Options)) (*ec2.DescribeInstanceTypesOutput, error) {
	return call[ec2.DescribeInstanceTypesOutput](ctx, p.remote, "DescribeInstanceTypes", in)
}

func (p remoteAutoScaling) CreateAutoScalingGroup(ctx context.Context, in *autoscaling.CreateAutoScalingGroupInput, _ ...func(*autoscaling.Options)) (*autoscaling.CreateAutoScalingGroupOutput, error) {
	return call[autoscaling.CreateAutoScalingGroupOutput](ctx, p.remote, "CreateAutoScalingGroup", in)
}

func (p remoteAutoScaling) DescribeAutoScalingGroups(ctx context.Context, in *autoscaling.DescribeAutoScalingGroupsInput, _ ...func(*autoscaling.Options)) (*autoscaling.DescribeAutoScalingGroupsOutput, error) {
	return call[autoscaling.DescribeAutoScalingGroupsOutput](ctx, p.remote, "DescribeAutoScalingGroups", in)
}

func (p remoteAutoScaling) DeleteAutoScalingGroup(ctx context.Context, in *autoscaling.DeleteAutoScalingGroupInput, _ ...func(*autoscaling.Options)) (*autoscaling.DeleteAutoScalingGroupOutput, error) {
	return call[autoscaling.DeleteAutoScalingGroupOutput](ctx, p.remote, "DeleteAutoScalingGroup", in)
}

func (p remoteAutoScaling) UpdateAutoScalingGroup(ctx context.Context, in *autoscaling.UpdateAutoScalingGroupInput, _ ...func(*autoscaling.Options)) (*autoscaling.UpdateAutoScalingGroupOutput, error) {
	return call[autoscaling.UpdateAutoScalingGroupOutput](ctx, p.remote, "UpdateAutoScalingGroup", in)
}

func (p remoteAutoScaling) PutScalingPolicy(ctx context.Context, in *autoscaling.PutScalingPolicyInput, _ ...func(*autoscaling.Options)) (*autoscaling.PutScalingPolicyOutput, error) {
	return call[autoscaling.PutScalingPolicyOutput](ctx, p.remote, "PutScalingPolicy", in)
}

func (p remoteAutoScaling) DescribeScalingActivities(ctx context.Context, in *autoscaling.DescribeScalingActivitiesInput, _ ...func(*autoscaling.Options)) (*autoscaling.DescribeScalingActivitiesOutput, error) {
	return call[autoscaling.DescribeScalingActivitiesOutput](ctx, p.remote, "DescribeScalingActivities", in)
}

func (p remoteAutoScaling) DescribeAccountLimits(ctx context.Context, in *autoscaling.DescribeAccountLimitsInput, _ ...func(*autoscaling.Options)) (*autoscaling.DescribeAccountLimitsOutput, error) {
	return call[autoscaling.DescribeAccountLimitsOutput](ctx, p.remote, "DescribeAccountLimits", in)
}

func (p remoteAutoScaling) SuspendProcesses(ctx context.Context, in *autoscaling.SuspendProcessesInput, _ ...func(*autoscaling.Options)) (*autoscaling.SuspendProcessesOutput, error) {
	return call[autoscaling.SuspendProcessesOutput](ctx, p.remote, "SuspendProcesses", in)
}

func (p remoteAutoScaling) ResumeProcesses(ctx context.Context, in *autoscaling.ResumeProcessesInput, _ ...func(*autoscaling.Options)) (*autoscaling.ResumeProcessesOutput, error) {
	return call[autoscaling.ResumeProcessesOutput](ctx, p.remote, "ResumeProcesses", in)
}

func (p remoteAutoScaling) DescribeLoadBalancers(ctx context.Context, in *autoscaling.DescribeLoadBalancersInput, _ ...func(*autoscaling.Options)) (*autoscaling.DescribeLoadBalancersOutput, error) {
	return call[autoscaling.DescribeLoadBalancersOutput](ctx, p.remote, "DescribeLoadBalancers", in)
}

func (p remoteAutoScaling) DescribeLoadBalancerTargetGroups(ctx context.Context, in *autoscaling.DescribeLoadBalancerTargetGroupsInput, _ ...func(*autoscaling.Options)) (*autoscaling.DescribeLoadBalancerTargetGroupsOutput, error) {
	return call[autoscaling.DescribeLoadBalancerTargetGroupsOutput](ctx, p.remote, "DescribeLoadBalancerTargetGroups", in)
}

func (p remoteAutoScaling) DetachLoadBalancers(ctx context.Context, in *autoscaling.DetachLoadBalancersInput, _ ...func(*autoscaling.Options)) (*autoscaling.DetachLoadBalancersOutput, error) {
	return call[autoscaling.DetachLoadBalancersOutput](ctx, p.remote, "DetachLoadBalancers", in)
}

func (p remoteAutoScaling) DetachLoadBalancerTargetGroups(ctx context.Context, in *autoscaling.DetachLoadBalancerTargetGroupsInput, _ ...func(*autoscaling.Options)) (*autoscaling.DetachLoadBalancerTargetGroupsOutput, error) {
	return call[autoscaling.DetachLoadBalancerTargetGroupsOutput](ctx, p.remote, "DetachLoadBalancerTargetGroups", in)
}

func (p remoteAutoScaling) AttachLoadBalancers(ctx context.Context, in *autoscaling.AttachLoadBalancersInput, _ ...func(*autoscaling.Options)) (*autoscaling.AttachLoadBalancersOutput, error) {
	return call[autoscaling.AttachLoadBalancersOutput](ctx, p.remote, "AttachLoadBalancers", in)
}

func (p remoteAutoScaling) AttachLoadBalancerTargetGroups(ctx context.Context, in *autoscaling.AttachLoadBalancerTargetGroupsInput, _ ...func(*autoscaling.Options)) (*autoscaling.AttachLoadBalancerTargetGroupsOutput, error) {
	return call[autoscaling.AttachLoadBalancerTargetGroupsOutput](ctx, p.remote, "AttachLoadBalancerTargetGroups", in)
}

func (p remoteAutoScaling) SetInstanceProtection(ctx context.Context, in *autoscaling.SetInstanceProtectionInput, _ ...func(*autoscaling.Options)) (*autoscaling.SetInstanceProtectionOutput, error) {
	return call[autoscaling.SetInstanceProtectionOutput](ctx, p.remote, "SetInstanceProtection", in)
}

func (p remoteELB) DescribeLoadBalancers(ctx context.Context, in *elb.DescribeLoadBalancersInput, _ ...func(*elb.Options)) (*elb.DescribeLoadBalancersOutput, error) {
	return call[elb.DescribeLoadBalancersOutput](ctx, p.remote, "DescribeLoadBalancers", in)
}

func (p remoteELB) DescribeTags(ctx context.Context, in *elb.DescribeTagsInput, _ ...func(*elb.Options)) (*elb.DescribeTagsOutput, error) {
	return call[elb.DescribeTagsOutput](ctx, p.remote, "DescribeTags", in)
}

func (p remoteELB) DescribeInstanceHealth(ctx context.Context, in *elb.DescribeInstanceHealthInput, _ ...func(*elb.Options)) (*elb.DescribeInstanceHealthOutput, error) {
	return call[elb.DescribeInstanceHealthOutput](ctx, p.remote, "DescribeInstanceHealth", in)
}

func (p remoteELB) DescribeLoadBalancerAttributes(ctx context.Context, in *elb.DescribeLoadBalancerAttributesInput, _ ...func(*elb.Options)) (*elb.DescribeLoadBalancerAttributesOutput, error) {
	return call[elb.DescribeLoadBalancerAttributesOutput](ctx, p.remote, "DescribeLoadBalancerAttributes", in)
}

func (p remoteELBv2) DescribeTargetGroups(ctx context.Context, in *elbv2.DescribeTargetGroupsInput, _ ...func(*elbv2.Options)) (*elbv2.DescribeTargetGroupsOutput, error) {
	return call[elbv2.DescribeTargetGroupsOutput](ctx, p.remote, "DescribeTargetGroups", in)
}

func (p remoteELBv2) DescribeTags(ctx context.Context, in *elbv2.DescribeTagsInput, _ ...func(*elbv2.Options)) (*elbv2.DescribeTagsOutput, error) {
	return call[elbv2.DescribeTagsOutput](ctx, p.remote, "DescribeTags", in)
}

func (p remoteELBv2) DescribeTargetHealth(ctx context.Context, in *elbv2.DescribeTargetHealthInput, _ ...func(*elbv2.Options)) (*elbv2.DescribeTargetHealthOutput, error) {
	return call[elbv2.DescribeTargetHealthOutput](ctx, p.remote, "DescribeTargetHealth", in)
}

func (p remoteELBv2) DescribeLoadBalancers(ctx context.Context, in *elbv2.DescribeLoadBalancersInput, _ ...func(*elbv2.Options)) (*elbv2.DescribeLoadBalancersOutput, error) {
	return call[elbv2.DescribeLoadBalancersOutput](ctx, p.remote, "DescribeLoadBalancers", in)
}

func (p remoteIAM) GetInstanceProfile(ctx context.Context, in *iam.GetInstanceProfileInput, _ ...func(*iam.Options)) (*iam.GetInstanceProfileOutput, error) {
	return call[iam.GetInstanceProfileOutput](ctx, p.remote, "GetInstanceProfile", in)
}

func (p remoteIAM) GetRole(ctx context.Context, in *iam.GetRoleInput, _ ...func(*iam.Options)) (*iam.GetRoleOutput, error) {
	return call[iam.GetRoleOutput](ctx, p.remote, "GetRole", in)
}

func (p remoteSNS) GetTopicAttributes(ctx context.Context, in *sns.GetTopicAttributesInput, _ ...func(*sns.Options)) (*sns.GetTopicAttributesOutput, error) {
	return call[sns.GetTopicAttributesOutput](ctx, p.remote, "GetTopicAttributes", in)
}

func (p remoteSNS) ListTagsForResource(ctx context.Context, in *sns.ListTagsForResourceInput, _ ...func(*sns.Options)) (*sns.ListTagsForResourceOutput, error) {
	return call[sns.ListTagsForResourceOutput](ctx, p.remote, "ListTagsForResource", in)
}

func (p remoteCloudWatch) PutMetricAlarm(ctx context.Context, in *cloudwatch.PutMetricAlarmInput, _ ...func(*cloudwatch.Options)) (*cloudwatch.PutMetricAlarmOutput, error) {
	return call[cloudwatch.PutMetricAlarmOutput](ctx, p.remote, "PutMetricAlarm", in)
}

func (p remoteCloudWatch) DescribeAlarms(ctx context.Context, in *cloudwatch.DescribeAlarmsInput, _ ...func(*cloudwatch.Options)) (*cloudwatch.DescribeAlarmsOutput, error) {
	return call[cloudwatch.DescribeAlarmsOutput](ctx, p.remote, "DescribeAlarms", in)
}

func (p remoteCloudWatch) DeleteAlarms(ctx context.Context, in *cloudwatch.DeleteAlarmsInput, _ ...func(*cloudwatch.Options)) (*cloudwatch.DeleteAlarmsOutput, error) {
	return call[cloudwatch.DeleteAlarmsOutput](ctx, p.remote, "DeleteAlarms", in)
}

func (p remoteCloudWatch) ListTagsForResource(ctx context.Context, in *cloudwatch.ListTagsForResourceInput, _ ...func(*cloudwatch.Options)) (*cloudwatch.ListTagsForResourceOutput, error) {
	return call[cloudwatch.ListTagsForResourceOutput](ctx, p.remote, "ListTagsForResource", in)
}

func (p remoteCloudWatch) GetMetricData(ctx context.Context, in *cloudwatch.GetMetricDataInput, _ ...func(*cloudwatch.Options)) (*cloudwatch.GetMetricDataOutput, error) {
	return call[cloudwatch.GetMetricDataOutput](ctx, p.remote, "GetMetricData", in)
}

func (p remoteEventBridge) PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, _ ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	return call[eventbridge.PutEventsOutput](ctx, p.remote, "PutEvents", in)
}

func (p remoteSTS) AssumeRole(ctx context.Context, in *sts.AssumeRoleInput, _ ...func(*sts.Options)) (*sts.AssumeRoleOutput, error) {
	return call[sts.AssumeRoleOutput](ctx, p.remote, "AssumeRole", in)
}
