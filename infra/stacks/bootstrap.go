package stacks

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/naming"
)

// Parameters and condition of the BootstrapStack.
const (
	// ParamTrustedAccounts lists the deployer accounts the roles trust.
	ParamTrustedAccounts = "TrustedAccounts"
	// ParamQualifier is the optional qualifier of the physical names.
	ParamQualifier = "Qualifier"
	// ConditionHasQualifier is true when Qualifier is not empty.
	ConditionHasQualifier = "HasQualifier"
	// QualifierPattern is the Qualifier's AllowedPattern (bucket names
	// allow lowercase letters and digits).
	QualifierPattern = "^[a-z0-9]*$"
)

// Outputs of the BootstrapStack.
const (
	OutputDeployRoleArn   = "DeployRoleArn"
	OutputPublishRoleArn  = "PublishRoleArn"
	OutputAssetBucketName = "AssetBucketName"
)

// Bootstrap is the BootstrapStack and its resources.
type Bootstrap struct {
	Stack       awscdk.Stack
	DeployRole  awsiam.CfnRole
	PublishRole awsiam.CfnRole
	AssetBucket awss3.Bucket
}

// NewBootstrapStack defines the bootstrap of one target environment. It uses
// the bootstrapless synthesizer: the template has no asset or bootstrap
// version parameters and needs no CDK bootstrap to deploy.
func NewBootstrapStack(scope constructs.Construct, id string) *Bootstrap {
	str := jsii.String
	stack := awscdk.NewStack(scope, str(id), &awscdk.StackProps{
		Description:        str("ferry bootstrap: the deploy role, publish role and asset bucket of one target environment"),
		Synthesizer:        awscdk.NewBootstraplessSynthesizer(&awscdk.BootstraplessSynthesizerProps{}),
		AnalyticsReporting: jsii.Bool(false),
	})

	trusted := awscdk.NewCfnParameter(stack, str(ParamTrustedAccounts), &awscdk.CfnParameterProps{
		Type:        str("CommaDelimitedList"),
		Description: str("The deployer account(s) whose deployer may assume the deploy and publish roles"),
	})
	qualifier := awscdk.NewCfnParameter(stack, str(ParamQualifier), &awscdk.CfnParameterProps{
		Type:           str("String"),
		Default:        str(""),
		MaxLength:      jsii.Number(limits.MaxQualifierLen),
		AllowedPattern: str(QualifierPattern),
		Description:    str("Optional qualifier of the physical names (lowercase letters and digits), for several bootstraps of one environment"),
	})
	hasQualifier := awscdk.NewCfnCondition(stack, str(ConditionHasQualifier), &awscdk.CfnConditionProps{
		Expression: awscdk.Fn_ConditionNot(awscdk.Fn_ConditionEquals(qualifier.ValueAsString(), str(""))),
	})
	account, region, partition := *awscdk.Aws_ACCOUNT_ID(), *awscdk.Aws_REGION(), *awscdk.Aws_PARTITION()
	name := func(f func(account, region, qualifier string) string) *string {
		return awscdk.Token_AsString(awscdk.Fn_ConditionIf(hasQualifier.LogicalId(),
			f(account, region, *qualifier.ValueAsString()), f(account, region, "")), nil)
	}
	arn := func(service, resource string) *string {
		return str("arn:" + partition + ":" + service + ":" + region + ":" + account + ":" + resource)
	}
	iamARN := func(resource string) *string { return str("arn:" + partition + ":iam::" + account + ":" + resource) }
	trust := map[string]interface{}{
		"Version": "2012-10-17",
		"Statement": []interface{}{map[string]interface{}{
			"Effect":    "Allow",
			"Action":    "sts:AssumeRole",
			"Principal": map[string]interface{}{"AWS": trusted.ValueAsList()},
		}},
	}

	bucket := awss3.NewBucket(stack, str("AssetBucket"), &awss3.BucketProps{
		BucketName:        name(naming.AssetBucketName),
		Encryption:        awss3.BucketEncryption_S3_MANAGED,
		EnforceSSL:        jsii.Bool(true),
		BlockPublicAccess: awss3.BlockPublicAccess_BLOCK_ALL(),
		ObjectOwnership:   awss3.ObjectOwnership_BUCKET_OWNER_ENFORCED,
		RemovalPolicy:     awscdk.RemovalPolicy_RETAIN,
		LifecycleRules: &[]*awss3.LifecycleRule{{
			Id:                                  str("abort-incomplete-uploads"),
			AbortIncompleteMultipartUploadAfter: awscdk.Duration_Days(jsii.Number(1)),
		}},
	})

	statement := func(p awsiam.PolicyStatementProps) awsiam.PolicyStatement {
		if p.Effect == "" {
			p.Effect = awsiam.Effect_ALLOW
		}
		return awsiam.NewPolicyStatement(&p)
	}
	deployWith := map[string]interface{}{"StringEquals": map[string]interface{}{
		"aws:RequestTag/" + naming.TagDeployWith: naming.DeployWithValue}}
	taggedFerry := map[string]interface{}{"StringEquals": map[string]interface{}{
		"aws:ResourceTag/" + naming.TagDeployWith: naming.DeployWithValue}}
	launchTemplates := arn("ec2", "launch-template/*")

	deployPolicy := awsiam.NewPolicyDocument(&awsiam.PolicyDocumentProps{Statements: &[]awsiam.PolicyStatement{
		statement(awsiam.PolicyStatementProps{
			Sid: str("Describe"),
			Actions: jsii.Strings("ec2:Describe*", "autoscaling:Describe*", "elasticloadbalancing:Describe*",
				"cloudwatch:DescribeAlarms"),
			Resources: jsii.Strings("*"),
		}),
		statement(awsiam.PolicyStatementProps{
			Sid:        str("CreateFerryLaunchTemplates"),
			Actions:    jsii.Strings("ec2:CreateLaunchTemplate"),
			Resources:  &[]*string{launchTemplates},
			Conditions: &deployWith,
		}),
		statement(awsiam.PolicyStatementProps{
			Sid:       str("TagOnCreate"),
			Actions:   jsii.Strings("ec2:CreateTags"),
			Resources: &[]*string{launchTemplates, arn("ec2", "instance/*"), arn("ec2", "volume/*"), arn("ec2", "network-interface/*")},
			Conditions: &map[string]interface{}{"StringEquals": map[string]interface{}{
				"ec2:CreateAction": []string{"CreateLaunchTemplate", "RunInstances"}}},
		}),
		statement(awsiam.PolicyStatementProps{
			Sid:        str("UseFerryLaunchTemplates"),
			Actions:    jsii.Strings("ec2:DeleteLaunchTemplate", "ec2:RunInstances"),
			Resources:  &[]*string{launchTemplates},
			Conditions: &taggedFerry,
		}),
		statement(awsiam.PolicyStatementProps{
			Sid:     str("RunInstancesFromLaunchTemplates"),
			Actions: jsii.Strings("ec2:RunInstances"),
			Resources: &[]*string{arn("ec2", "instance/*"), arn("ec2", "volume/*"), arn("ec2", "network-interface/*"),
				arn("ec2", "subnet/*"), arn("ec2", "security-group/*"), str("arn:" + partition + ":ec2:" + region + "::image/*")},
			Conditions: &map[string]interface{}{"ArnLike": map[string]interface{}{"ec2:LaunchTemplate": launchTemplates}},
		}),
		statement(awsiam.PolicyStatementProps{
			Sid:        str("CreateFerryGroups"),
			Actions:    jsii.Strings("autoscaling:CreateAutoScalingGroup", "autoscaling:CreateOrUpdateTags"),
			Resources:  jsii.Strings("*"),
			Conditions: &deployWith,
		}),
		statement(awsiam.PolicyStatementProps{
			Sid: str("ManageFerryGroups"),
			Actions: jsii.Strings("autoscaling:DeleteAutoScalingGroup", "autoscaling:UpdateAutoScalingGroup",
				"autoscaling:PutScalingPolicy", "autoscaling:DeletePolicy", "autoscaling:PutLifecycleHook",
				"autoscaling:DeleteLifecycleHook", "autoscaling:SuspendProcesses", "autoscaling:ResumeProcesses"),
			Resources:  jsii.Strings("*"),
			Conditions: &taggedFerry,
		}),
		statement(awsiam.PolicyStatementProps{
			Sid:       str("AutoScalingServiceLinkedRole"),
			Actions:   jsii.Strings("iam:CreateServiceLinkedRole"),
			Resources: &[]*string{iamARN("role/aws-service-role/autoscaling.amazonaws.com/AWSServiceRoleForAutoScaling*")},
			Conditions: &map[string]interface{}{"StringEquals": map[string]interface{}{
				"iam:AWSServiceName": "autoscaling.amazonaws.com"}},
		}),
		statement(awsiam.PolicyStatementProps{
			Sid:       str("ReadProfilesAndRoles"),
			Actions:   jsii.Strings("iam:GetInstanceProfile", "iam:GetRole"),
			Resources: &[]*string{iamARN("instance-profile/*"), iamARN("role/*")},
		}),
		statement(awsiam.PolicyStatementProps{
			// Instance and lifecycle hook roles under a path only
			// (/<project>/<config>/<service>/): never a role at the root path.
			Sid:       str("PassPathScopedRoles"),
			Actions:   jsii.Strings("iam:PassRole"),
			Resources: &[]*string{iamARN(naming.PassRoleResource)},
			Conditions: &map[string]interface{}{"StringEquals": map[string]interface{}{
				"iam:PassedToService": []string{"ec2.amazonaws.com", "autoscaling.amazonaws.com"}}},
		}),
		statement(awsiam.PolicyStatementProps{
			Sid:       str("ScalingAlarms"),
			Actions:   jsii.Strings("cloudwatch:PutMetricAlarm", "cloudwatch:DeleteAlarms"),
			Resources: &[]*string{arn("cloudwatch", "alarm:*")},
		}),
		statement(awsiam.PolicyStatementProps{
			// PutMetricAlarm with Tags needs TagResource too; only the
			// DeployWith=ferry tags ferry sets on create.
			Sid:        str("TagFerryAlarms"),
			Actions:    jsii.Strings("cloudwatch:TagResource"),
			Resources:  &[]*string{arn("cloudwatch", "alarm:*")},
			Conditions: &deployWith,
		}),
		statement(awsiam.PolicyStatementProps{
			Sid:       str("LifecycleTopics"),
			Actions:   jsii.Strings("sns:GetTopicAttributes", "sns:ListTagsForResource"),
			Resources: &[]*string{arn("sns", "*")},
		}),
	}})
	deployRole := awsiam.NewCfnRole(stack, str("DeployRole"), &awsiam.CfnRoleProps{
		RoleName:                 name(naming.DeployRoleName),
		Description:              str("ferry: the deployer assumes this role to deploy Auto Scaling groups tagged DeployWith=ferry"),
		AssumeRolePolicyDocument: trust,
		MaxSessionDuration:       jsii.Number(3600),
		Policies: &[]interface{}{&awsiam.CfnRole_PolicyProperty{
			PolicyName:     str("deploy"),
			PolicyDocument: deployPolicy,
		}},
	})

	publishPolicy := awsiam.NewPolicyDocument(&awsiam.PolicyDocumentProps{Statements: &[]awsiam.PolicyStatement{
		statement(awsiam.PolicyStatementProps{
			// GetObject also authorizes HeadObject.
			Sid:       str("AssetObjects"),
			Actions:   jsii.Strings("s3:GetObject", "s3:PutObject"),
			Resources: &[]*string{bucket.ArnForObjects(str("*"))},
		}),
		statement(awsiam.PolicyStatementProps{
			// So that HeadObject of a missing asset is a 404, not a 403.
			Sid:       str("AssetBucketList"),
			Actions:   jsii.Strings("s3:ListBucket"),
			Resources: &[]*string{bucket.BucketArn()},
		}),
	}})
	publishRole := awsiam.NewCfnRole(stack, str("PublishRole"), &awsiam.CfnRoleProps{
		RoleName:                 name(naming.PublishRoleName),
		Description:              str("ferry: the deployer assumes this role to publish assets into the asset bucket"),
		AssumeRolePolicyDocument: trust,
		MaxSessionDuration:       jsii.Number(3600),
		Policies: &[]interface{}{&awsiam.CfnRole_PolicyProperty{
			PolicyName:     str("publish"),
			PolicyDocument: publishPolicy,
		}},
	})

	awscdk.NewCfnOutput(stack, str(OutputDeployRoleArn), &awscdk.CfnOutputProps{Value: deployRole.AttrArn()})
	awscdk.NewCfnOutput(stack, str(OutputPublishRoleArn), &awscdk.CfnOutputProps{Value: publishRole.AttrArn()})
	awscdk.NewCfnOutput(stack, str(OutputAssetBucketName), &awscdk.CfnOutputProps{Value: bucket.BucketName()})
	return &Bootstrap{Stack: stack, DeployRole: deployRole, PublishRole: publishRole, AssetBucket: bucket}
}
