package bench

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/ferryhq/ferry/internal/cloud"
)

// The clients of the simulated AWS of another process (remote) whose
// calls cross as JSON (AWSPath): each operation of package cloud's
// interfaces, one call over HTTP. Auto Scaling and Elastic Load Balancing
// are the SDK's own clients, in AWS's wire format (QueryPath).
type (
	remoteEC2         struct{ remote }
	remoteIAM         struct{ remote }
	remoteSNS         struct{ remote }
	remoteCloudWatch  struct{ remote }
	remoteEventBridge struct{ remote }
	remoteSTS         struct{ remote }
)

var (
	_ cloud.EC2         = remoteEC2{}
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
