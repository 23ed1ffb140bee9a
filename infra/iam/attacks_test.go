package iam

import (
	"strings"

	"github.com/ferryhq/ferry/internal/naming"
)

// attack is one thing an attacker tries, named after what it tries; every
// one must be denied. The security help page (client/help/security.md)
// lists every name.
type attack struct {
	name string
	c    func(p *policies) evalCase
}

// Resources of the attacks: another project's group, launch template and
// alarm; the session's own; resources that are not opted in.
var (
	own          = map[string]string{naming.TagProjectName: project, naming.TagConfigName: "development"}
	otherProject = "other/project"
	foreignTags  = map[string]string{naming.TagProjectName: otherProject, naming.TagConfigName: "development", naming.TagDeployWith: "ferry"}
	ownTags      = map[string]string{naming.TagProjectName: project, naming.TagConfigName: "development", naming.TagDeployWith: "ferry"}
)

func groupARN(account, name string) string {
	return "arn:aws:autoscaling:" + awsRegion + ":" + account + ":autoScalingGroup:0f0f0f0f-0000-4000-8000-000000000001:autoScalingGroupName/" + name
}

func ec2ARN(kind, id string) string {
	return "arn:aws:ec2:" + awsRegion + ":" + targetAccount + ":" + kind + "/" + id
}

// with returns the context of resource tags and request tags.
func with(resourceTags, requestTags map[string]string, service string, extra map[string]any) map[string]any {
	ctx := map[string]any{}
	for k, v := range resourceTags {
		ctx["aws:ResourceTag/"+k] = v
		if service != "" {
			ctx[service+":ResourceTag/"+k] = v
		}
	}
	var keys []string
	for k, v := range requestTags {
		ctx["aws:RequestTag/"+k] = v
		keys = append(keys, k)
	}
	if len(keys) > 0 {
		ctx["aws:TagKeys"] = keys
	}
	for k, v := range extra {
		ctx[k] = v
	}
	return ctx
}

func plus(m map[string]string, k, v string) map[string]string {
	out := map[string]string{}
	for a, b := range m {
		out[a] = b
	}
	if v == "" {
		delete(out, k)
	} else {
		out[k] = v
	}
	return out
}

func attacks() []attack {
	deployRole := func(account string) string {
		return naming.RoleARN(account, naming.DeployRoleName(account, awsRegion, ""))
	}
	publishRole := naming.RoleARN(targetAccount, naming.PublishRoleName(targetAccount, awsRegion, ""))
	sessionTags := map[string]string{naming.TagProjectName: project, naming.TagConfigName: "development"}
	assume := func(tags map[string]string) map[string]any { return with(nil, tags, "", nil) }
	// deploy is a deploy role session of the target account for
	// coinbase/deploy-test/development.
	deploy := session(deployRole(targetAccount), naming.RoleSessionName(project, "development", "r1"), own, "deploy-"+targetAccount)
	publish := session(publishRole, naming.RoleSessionName(project, "development", "r1"), own, "publish-"+targetAccount)
	developer := session("arn:aws:iam::"+deployerAccount+":role/developer", "mallory", nil, "admin")
	operator := session(operatorARN, "bob", nil, "admin")
	targetAdmin := session("arn:aws:iam::"+targetAccount+":role/ops", "eve", nil, "admin")
	foreign := session(naming.RoleARN(foreignAccount, naming.DeployerRoleName(awsRegion)), naming.DeployerFunctionName, nil, "admin")
	foreign.org = "o-somebodyelse1"
	outsider := lambda
	outsider.org = "o-somebodyelse1"
	ownGroup := groupARN(targetAccount, naming.GroupName(project, "development", "web", "r1"))
	foreignGroup := groupARN(targetAccount, naming.GroupName(otherProject, "development", "web", "r1"))
	foreignLT := ec2ARN("launch-template", "lt-0000000000000f00f")
	ownLT := ec2ARN("launch-template", "lt-00000000000000001")
	alarm := func(group string) string {
		return "arn:aws:cloudwatch:" + awsRegion + ":" + targetAccount + ":alarm:" + naming.AlarmName(group, "cpu_scale_up")
	}
	fromLT := map[string]any{"ec2:LaunchTemplate": ownLT}
	assetObject := func(key string) string {
		return "arn:aws:s3:::" + naming.AssetBucketName(targetAccount, awsRegion, "") + "/" + key
	}
	asset := assetObject(naming.TargetAssetKey(project, "development", strings.Repeat("a", 64)))
	otherAsset := assetObject(naming.TargetAssetKey(otherProject, "development", strings.Repeat("a", 64)))
	otherConfigAsset := assetObject(naming.TargetAssetKey(project, "production", strings.Repeat("a", 64)))
	legacyAsset := assetObject("assets/" + strings.Repeat("a", 64))
	once := map[string]any{"s3:if-none-match": "*"}
	a := func(name string, f func(p *policies) evalCase) attack { return attack{name: name, c: f} }
	state := func(p *policies, key string) string { return "arn:aws:s3:::" + p.bucket + "/" + key }
	const cfg = "development"

	schedule := session(scheduleARN, "schedule", nil, "reconcile-schedule")
	machine := session(smRoleARN, "execution", nil, "statemachine")
	ci := session("arn:aws:iam::"+deployerAccount+":role/ci", "build-42", nil, "page-ci")
	managers := session("arn:aws:iam::"+deployerAccount+":role/release-managers", "carol", nil, "page-release-managers")
	otherMachine := "arn:aws:states:" + awsRegion + ":" + deployerAccount + ":stateMachine:payroll"
	replicator := session("arn:aws:iam::"+deployerAccount+":role/replication", "s3-replication", nil, "admin")
	tg := func(account string) string {
		return "arn:aws:elasticloadbalancing:" + awsRegion + ":" + account + ":targetgroup/web/0123456789abcdef"
	}
	// service is an AWS service assuming a role of the deployer for a
	// resource of sourceAccount (sourceARN: aws:SourceArn).
	service := func(name, role, sourceAccount, sourceARN string) evalCase {
		return evalCase{Kind: "", Principal: name, Action: "sts:AssumeRole", Resource: naming.RoleARN(deployerAccount, role),
			ResourceAccount: deployerAccount, ResourcePolicy: "trust-" + role, SCP: false,
			Context: map[string]any{"aws:SourceAccount": sourceAccount, "aws:SourceArn": sourceARN}}
	}
	foreignMachine := "arn:aws:states:" + awsRegion + ":" + foreignAccount + ":stateMachine:" + naming.StateMachineName
	return []attack{
		// The state machine's role runs nested executions of itself only.
		a("the state machine's role starts another state machine", func(*policies) evalCase {
			return machine.request("", "", "states:StartExecution", otherMachine, "", nil)
		}),
		a("the state machine's role stops another state machine's execution", func(*policies) evalCase {
			return machine.request("", "", "states:StopExecution", strings.Replace(otherMachine, ":stateMachine:", ":execution:", 1)+":run", "", nil)
		}),
		a("the state machine's role changes another EventBridge rule", func(*policies) evalCase {
			return machine.request("", "", "events:PutTargets", "arn:aws:events:"+awsRegion+":"+deployerAccount+":rule/payroll-nightly", "", nil)
		}),
		a("the state machine's role writes a promotion record", func(p *policies) evalCase {
			return machine.request("", "", "s3:PutObject", state(p, naming.PromotionRecordKey(project, cfg, "p1")), "deployer-bucket", nil)
		}),
		// The pipeline page's example policies: CI cannot decide production's
		// gates, nor approve it.
		a("CI approves production (the pipeline page's example policies)", func(p *policies) evalCase {
			return ci.request("", "", "s3:PutObject", state(p, naming.ApprovalKey(project, "production", "p1")), "deployer-bucket", nil)
		}),
		a("CI registers a pipeline in production (the pipeline page's example policies)", func(p *policies) evalCase {
			return ci.request("", "", "s3:PutObject", state(p, naming.PipelineKey(project, "production-use1")), "deployer-bucket", nil)
		}),
		a("a release manager approves staging (the pipeline page's example policies)", func(p *policies) evalCase {
			return managers.request("", "", "s3:PutObject", state(p, naming.ApprovalKey(project, "staging", "p1")), "deployer-bucket", nil)
		}),
		// A promotion's record is the deployer's: a client forging one
		// could make Validate accept a promoted release.
		a("a developer forges a promotion's record", func(p *policies) evalCase {
			return developer.request("", "", "s3:PutObject", state(p, naming.PromotionRecordKey(project, cfg, "p1")), "deployer-bucket", nil)
		}),
		// A verified approval is the deployer's: the gate counts it without
		// its identity proof, so whoever may write approvals must not write
		// one.
		a("a developer forges a verified approval of production", func(p *policies) evalCase {
			return developer.request("", "", "s3:PutObject", state(p, naming.VerifiedApprovalKey(project, cfg, "p1", "production", "ab")), "deployer-bucket", nil)
		}),
		a("a release manager forges a verified approval of production (the pipeline page's example policies)", func(p *policies) evalCase {
			return managers.request("", "", "s3:PutObject", state(p, naming.VerifiedApprovalKey(project, "development", "p1", "production", "ab")), "deployer-bucket", nil)
		}),
		// The reconcile schedule's role starts executions, and nothing else.
		a("the reconcile schedule's role invokes the deployer function", func(p *policies) evalCase {
			return schedule.request("", "", "lambda:InvokeFunction", p.lambdaARN, "lambda-invoke", nil)
		}),
		a("the reconcile schedule's role writes the lock", func(p *policies) evalCase {
			return schedule.request("", "", "s3:PutObject", state(p, naming.LockKey(project, cfg)), "deployer-bucket", nil)
		}),
		// Trust.
		a("another account's principal assumes the deploy role", func(*policies) evalCase {
			return foreign.request("", "", "sts:AssumeRole", deployRole(targetAccount), "trust-"+targetAccount, assume(sessionTags))
		}),
		a("another account's principal assumes the publish role", func(*policies) evalCase {
			return foreign.request("", "", "sts:AssumeRole", publishRole, "trust-"+targetAccount, assume(sessionTags))
		}),
		a("a role of the deployer account that is not the Lambda assumes the deploy role", func(*policies) evalCase {
			return developer.request("", "", "sts:AssumeRole", deployRole(targetAccount), "trust-"+targetAccount, assume(sessionTags))
		}),
		a("a user of the deployer account assumes the deploy role", func(*policies) evalCase {
			u := principal{arn: "arn:aws:iam::" + deployerAccount + ":user/mallory", roleARN: "arn:aws:iam::" + deployerAccount + ":user/mallory",
				account: deployerAccount, org: orgID, identity: []string{"admin"}}
			return u.request("", "", "sts:AssumeRole", deployRole(targetAccount), "trust-"+targetAccount, assume(sessionTags))
		}),
		a("a role with a path named like the deployer's assumes the deploy role", func(*policies) evalCase {
			r := session("arn:aws:iam::"+deployerAccount+":role/"+naming.DeployerRoleName("x")+"/"+naming.DeployerRoleName(awsRegion), "s", nil, "admin")
			return r.request("", "", "sts:AssumeRole", deployRole(targetAccount), "trust-"+targetAccount, assume(sessionTags))
		}),
		a("the deployer assumes the deploy role without session tags", func(*policies) evalCase {
			return lambda.request("", "", "sts:AssumeRole", deployRole(targetAccount), "trust-"+targetAccount, nil)
		}),
		a("the deployer assumes the deploy role without a ConfigName session tag", func(*policies) evalCase {
			return lambda.request("", "", "sts:AssumeRole", deployRole(targetAccount), "trust-"+targetAccount, assume(plus(sessionTags, naming.TagConfigName, "")))
		}),
		a("the deployer assumes the deploy role with an extra session tag", func(*policies) evalCase {
			return lambda.request("", "", "sts:TagSession", deployRole(targetAccount), "trust-"+targetAccount, assume(plus(sessionTags, "Admin", "true")))
		}),
		a("the deployer assumes the deploy role with a project that is not org/name", func(*policies) evalCase {
			return lambda.request("", "", "sts:AssumeRole", deployRole(targetAccount), "trust-"+targetAccount, assume(plus(sessionTags, naming.TagProjectName, "*")))
		}),
		a("the deployer assumes the deploy role for a project the environment does not accept", func(*policies) evalCase {
			return lambda.request("", "", "sts:AssumeRole", deployRole(targetAccount), "trust-payments-"+targetAccount, assume(sessionTags))
		}),
		a("the deployer assumes the publish role for a project the environment does not accept", func(*policies) evalCase {
			return lambda.request("", "", "sts:TagSession", publishRole, "trust-payments-"+targetAccount, assume(sessionTags))
		}),
		a("the deployer sets a source identity that names no account", func(*policies) evalCase {
			return lambda.request("", "", "sts:SetSourceIdentity", deployRole(targetAccount), "trust-"+targetAccount,
				with(nil, sessionTags, "", map[string]any{"sts:SourceIdentity": "admin"}))
		}),
		a("a role of the deployer account that is not the Lambda sets a source identity on the deploy role", func(*policies) evalCase {
			return developer.request("", "", "sts:SetSourceIdentity", deployRole(targetAccount), "trust-"+targetAccount,
				with(nil, sessionTags, "", map[string]any{"sts:SourceIdentity": "mallory@" + deployerAccount}))
		}),
		a("a principal outside the organization assumes the deploy role", func(*policies) evalCase {
			return outsider.request("", "", "sts:AssumeRole", deployRole(targetAccount), "trust-org-"+targetAccount, assume(sessionTags))
		}),
		a("the deployer assumes ferry-deploy in a foreign account", func(*policies) evalCase {
			return lambda.request("", "", "sts:AssumeRole", deployRole(foreignAccount), "trusts-deployer-account", assume(sessionTags))
		}),
		a("the deployer assumes another role of a target account", func(*policies) evalCase {
			return lambda.request("", "", "sts:AssumeRole", "arn:aws:iam::"+targetAccount+":role/Admin", "trusts-deployer-account", assume(sessionTags))
		}),

		// The deploy role: groups.
		a("the deploy role re-tags another project's group with its own project", func(*policies) evalCase {
			return deploy.request("", "", "autoscaling:CreateOrUpdateTags", foreignGroup, "", with(foreignTags, map[string]string{naming.TagProjectName: project}, "autoscaling", nil))
		}),
		a("the deploy role tags a foreign group DeployWith=ferry", func(*policies) evalCase {
			return deploy.request("", "", "autoscaling:CreateOrUpdateTags", groupARN(targetAccount, "someone-elses-asg"), "", with(nil, map[string]string{naming.TagDeployWith: "ferry"}, "autoscaling", nil))
		}),
		a("the deploy role changes the ReleaseID tag of its own group", func(*policies) evalCase {
			return deploy.request("", "", "autoscaling:CreateOrUpdateTags", ownGroup, "", with(ownTags, map[string]string{naming.TagReleaseID: "r0"}, "autoscaling", nil))
		}),
		a("the deploy role removes the ProjectName tag of its own group", func(*policies) evalCase {
			return deploy.request("", "", "autoscaling:DeleteTags", ownGroup, "", with(ownTags, map[string]string{naming.TagProjectName: project}, "autoscaling", nil))
		}),
		a("the deploy role deletes another project's group", func(*policies) evalCase {
			return deploy.request("", "", "autoscaling:DeleteAutoScalingGroup", foreignGroup, "", with(foreignTags, nil, "autoscaling", nil))
		}),
		a("the deploy role deletes a group of its project not tagged DeployWith=ferry", func(*policies) evalCase {
			return deploy.request("", "", "autoscaling:DeleteAutoScalingGroup", ownGroup, "", with(plus(ownTags, naming.TagDeployWith, ""), nil, "autoscaling", nil))
		}),
		a("the deploy role resizes another project's group", func(*policies) evalCase {
			return deploy.request("", "", "autoscaling:UpdateAutoScalingGroup", foreignGroup, "", with(foreignTags, nil, "autoscaling", nil))
		}),
		a("the deploy role sets the desired capacity of another project's group", func(*policies) evalCase {
			return deploy.request("", "", "autoscaling:SetDesiredCapacity", foreignGroup, "", with(foreignTags, nil, "autoscaling", nil))
		}),
		a("the deploy role puts a scaling policy on another project's group", func(*policies) evalCase {
			return deploy.request("", "", "autoscaling:PutScalingPolicy", foreignGroup, "", with(foreignTags, nil, "autoscaling", nil))
		}),
		a("the deploy role suspends another project's processes", func(*policies) evalCase {
			return deploy.request("", "", "autoscaling:SuspendProcesses", foreignGroup, "", with(foreignTags, nil, "autoscaling", nil))
		}),
		a("the deploy role terminates an instance of a group", func(*policies) evalCase {
			return deploy.request("", "", "autoscaling:TerminateInstanceInAutoScalingGroup", ownGroup, "", with(ownTags, nil, "autoscaling", nil))
		}),
		a("the deploy role creates a group tagged as another project", func(*policies) evalCase {
			return deploy.request("", "", "autoscaling:CreateAutoScalingGroup", ownGroup, "", with(nil, foreignTags, "", map[string]any{"autoscaling:LaunchTemplateVersionSpecified": "true"}))
		}),
		a("the deploy role creates a group named under another project", func(*policies) evalCase {
			return deploy.request("", "", "autoscaling:CreateAutoScalingGroup", foreignGroup, "", with(nil, ownTags, "", map[string]any{"autoscaling:LaunchTemplateVersionSpecified": "true"}))
		}),
		a("the deploy role creates a group from $Latest", func(*policies) evalCase {
			return deploy.request("", "", "autoscaling:CreateAutoScalingGroup", ownGroup, "", with(nil, ownTags, "", map[string]any{"autoscaling:LaunchTemplateVersionSpecified": "false"}))
		}),

		// The deploy role: roles.
		a("the deploy role passes a role at the root path", func(*policies) evalCase {
			return deploy.request("", "", "iam:PassRole", "arn:aws:iam::"+targetAccount+":role/asg_lifecycle_hooks", "", map[string]any{"iam:PassedToService": "autoscaling.amazonaws.com"})
		}),
		a("the deploy role passes another project's role", func(*policies) evalCase {
			return deploy.request("", "", "iam:PassRole", "arn:aws:iam::"+targetAccount+":role"+naming.InstanceProfilePath(otherProject, cfg, "web")+"web", "", map[string]any{"iam:PassedToService": "ec2.amazonaws.com"})
		}),
		a("the deploy role passes another config's role of its project", func(*policies) evalCase {
			return deploy.request("", "", "iam:PassRole", "arn:aws:iam::"+targetAccount+":role"+naming.InstanceProfilePath(project, "production", "web")+"web", "", map[string]any{"iam:PassedToService": "ec2.amazonaws.com"})
		}),
		a("the deploy role passes its own role to Lambda", func(*policies) evalCase {
			return deploy.request("", "", "iam:PassRole", "arn:aws:iam::"+targetAccount+":role"+naming.InstanceProfilePath(project, cfg, "web")+"web", "", map[string]any{"iam:PassedToService": "lambda.amazonaws.com"})
		}),

		// The deploy role: alarms.
		a("the deploy role puts an alarm of another project", func(*policies) evalCase {
			return deploy.request("", "", "cloudwatch:PutMetricAlarm", alarm(naming.GroupName(otherProject, cfg, "web", "r1")), "", with(nil, ownTags, "", nil))
		}),
		a("the deploy role points its alarm at another project's scaling policy", func(*policies) evalCase {
			return deploy.request("", "", "cloudwatch:PutMetricAlarm", alarm(naming.GroupName(project, cfg, "web", "r1")), "", with(nil, ownTags, "", map[string]any{
				"cloudwatch:AlarmActions": []string{"arn:aws:autoscaling:" + awsRegion + ":" + targetAccount + ":scalingPolicy:x:autoScalingGroupName/" + naming.GroupName(otherProject, cfg, "web", "r1") + ":policyName/cpu_scale_up"}}))
		}),
		a("the deploy role deletes another project's alarm", func(*policies) evalCase {
			return deploy.request("", "", "cloudwatch:DeleteAlarms", alarm(naming.GroupName(otherProject, cfg, "web", "r1")), "", nil)
		}),

		// The deploy role: deploy events.
		a("the deploy role puts an event on another bus", func(*policies) evalCase {
			return deploy.request("", "", "events:PutEvents", "arn:aws:events:"+awsRegion+":"+targetAccount+":event-bus/payments", "", map[string]any{"events:source": []string{"ferry"}})
		}),
		a("the deploy role puts an event on another account's default bus", func(*policies) evalCase {
			return deploy.request("", "", "events:PutEvents", "arn:aws:events:"+awsRegion+":999999999999:event-bus/default", "", map[string]any{"events:source": []string{"ferry"}})
		}),
		a("the deploy role puts an event with another source", func(*policies) evalCase {
			return deploy.request("", "", "events:PutEvents", "arn:aws:events:"+awsRegion+":"+targetAccount+":event-bus/default", "", map[string]any{"events:source": []string{"aws.codedeploy"}})
		}),
		a("the deploy role puts ferry's event and another source's in one request", func(*policies) evalCase {
			return deploy.request("", "", "events:PutEvents", "arn:aws:events:"+awsRegion+":"+targetAccount+":event-bus/default", "", map[string]any{"events:source": []string{"ferry", "aws.codedeploy"}})
		}),
		a("the deploy role puts an event with no source", func(*policies) evalCase {
			return deploy.request("", "", "events:PutEvents", "arn:aws:events:"+awsRegion+":"+targetAccount+":event-bus/default", "", nil)
		}),

		// The deploy role: launch templates and launches.
		a("the deploy role reads user data with DescribeInstanceAttribute", func(*policies) evalCase {
			return deploy.request("", "", "ec2:DescribeInstanceAttribute", ec2ARN("instance", "i-0000000000000f00f"), "", nil)
		}),
		a("the deploy role reads user data with DescribeLaunchTemplateVersions", func(*policies) evalCase {
			return deploy.request("", "", "ec2:DescribeLaunchTemplateVersions", "*", "", nil)
		}),
		a("the deploy role creates a launch template version", func(*policies) evalCase {
			return deploy.request("", "", "ec2:CreateLaunchTemplateVersion", ownLT, "", with(ownTags, nil, "ec2", nil))
		}),
		a("the deploy role changes a launch template's default version", func(*policies) evalCase {
			return deploy.request("", "", "ec2:ModifyLaunchTemplate", ownLT, "", with(ownTags, nil, "ec2", nil))
		}),
		a("the deploy role creates a launch template tagged as another project", func(*policies) evalCase {
			return deploy.request("", "", "ec2:CreateLaunchTemplate", ownLT, "", with(nil, foreignTags, "", nil))
		}),
		a("the deploy role deletes another project's launch template", func(*policies) evalCase {
			return deploy.request("", "", "ec2:DeleteLaunchTemplate", foreignLT, "", with(foreignTags, nil, "ec2", nil))
		}),
		a("the deploy role tags an existing launch template", func(*policies) evalCase {
			return deploy.request("", "", "ec2:CreateTags", foreignLT, "", with(foreignTags, ownTags, "ec2", nil))
		}),
		a("the deploy role tags a new launch template as another project", func(*policies) evalCase {
			return deploy.request("", "", "ec2:CreateTags", ownLT, "", with(nil, foreignTags, "ec2", map[string]any{"ec2:CreateAction": "CreateLaunchTemplate"}))
		}),
		a("the deploy role launches from an untagged image", func(*policies) evalCase {
			return deploy.request("", "", "ec2:RunInstances", "arn:aws:ec2:"+awsRegion+"::image/ami-0000000000000ab04", "", with(map[string]string{"Name": "ubuntu-untagged"}, nil, "ec2", fromLT))
		}),
		a("the deploy role launches into an untagged subnet", func(*policies) evalCase {
			return deploy.request("", "", "ec2:RunInstances", ec2ARN("subnet", "subnet-00000000000000c01"), "", with(map[string]string{"Name": "untagged"}, nil, "ec2", fromLT))
		}),
		a("the deploy role launches with another project's security group", func(*policies) evalCase {
			return deploy.request("", "", "ec2:RunInstances", ec2ARN("security-group", "sg-000000000000d0002"), "", with(foreignTags, nil, "ec2", fromLT))
		}),
		a("the deploy role launches from another project's launch template", func(*policies) evalCase {
			return deploy.request("", "", "ec2:RunInstances", foreignLT, "", with(foreignTags, nil, "ec2", map[string]any{"ec2:LaunchTemplate": foreignLT}))
		}),
		a("the deploy role launches an instance without a launch template", func(*policies) evalCase {
			return deploy.request("", "", "ec2:RunInstances", ec2ARN("instance", "pending"), "", nil)
		}),
		a("the deploy role terminates an instance", func(*policies) evalCase {
			return deploy.request("", "", "ec2:TerminateInstances", ec2ARN("instance", "i-0000000000000f00f"), "", with(foreignTags, nil, "ec2", nil))
		}),
		a("the deploy role describes volumes", func(*policies) evalCase {
			return deploy.request("", "", "ec2:DescribeVolumes", "*", "", nil)
		}),
		a("the deploy role deletes an IAM role", func(*policies) evalCase {
			return deploy.request("", "", "iam:DeleteRole", "arn:aws:iam::"+targetAccount+":role"+naming.InstanceProfilePath(project, cfg, "web")+"web", "", nil)
		}),
		a("the deploy role writes the asset bucket", func(*policies) evalCase {
			return deploy.request("", "", "s3:PutObject", asset, "assets-"+targetAccount, once)
		}),

		// Published assets.
		a("the publish role overwrites an asset (PutObject without If-None-Match)", func(*policies) evalCase {
			return publish.request("", "", "s3:PutObject", asset, "assets-"+targetAccount, nil)
		}),
		a("the publish role writes outside assets/", func(*policies) evalCase {
			return publish.request("", "", "s3:PutObject", assetObject("index.html"), "assets-"+targetAccount, once)
		}),
		a("the publish role deletes another project's asset", func(*policies) evalCase {
			return publish.request("", "", "s3:DeleteObject", otherAsset, "assets-"+targetAccount, nil)
		}),
		a("the publish role deletes another config's asset of its project", func(*policies) evalCase {
			return publish.request("", "", "s3:DeleteObject", otherConfigAsset, "assets-"+targetAccount, nil)
		}),
		a("the publish role deletes an asset of the layout before project-config prefixes", func(*policies) evalCase {
			return publish.request("", "", "s3:DeleteObject", legacyAsset, "assets-"+targetAccount, nil)
		}),
		a("the publish role writes another project's asset", func(*policies) evalCase {
			return publish.request("", "", "s3:PutObject", otherAsset, "assets-"+targetAccount, once)
		}),
		a("another role of the target account writes the asset bucket", func(*policies) evalCase {
			return targetAdmin.request("", "", "s3:PutObject", asset, "assets-"+targetAccount, once)
		}),
		a("another role of the target account deletes an asset", func(*policies) evalCase {
			return targetAdmin.request("", "", "s3:DeleteObject", asset, "assets-"+targetAccount, nil)
		}),
		a("another role of the target account deletes an asset's old version", func(*policies) evalCase {
			return targetAdmin.request("", "", "s3:DeleteObjectVersion", asset, "assets-"+targetAccount, nil)
		}),

		// The deployer's Lambda.
		a("the Lambda deletes an object version", func(p *policies) evalCase {
			return lambda.request("", "", "s3:DeleteObjectVersion", state(p, naming.LockKey(project, cfg)), "deployer-bucket", nil)
		}),
		a("the Lambda puts an object ACL", func(p *policies) evalCase {
			return lambda.request("", "", "s3:PutObjectAcl", state(p, naming.CurrentKey(project, cfg)), "deployer-bucket", nil)
		}),
		a("the Lambda writes another bucket", func(*policies) evalCase {
			return lambda.request("", "", "s3:PutObject", "arn:aws:s3:::somebody-elses-bucket/x", "", once)
		}),
		a("the Lambda changes its bucket's policy", func(p *policies) evalCase {
			return lambda.request("", "", "s3:PutBucketPolicy", "arn:aws:s3:::"+p.bucket, "deployer-bucket", nil)
		}),
		a("the Lambda describes an execution of another state machine", func(*policies) evalCase {
			return lambda.request("", "", "states:DescribeExecution", "arn:aws:states:"+awsRegion+":"+deployerAccount+":execution:other-machine:x", "", nil)
		}),
		a("the Lambda redrives an execution", func(p *policies) evalCase {
			return lambda.request("", "", "states:RedriveExecution", strings.Replace(p.smARN, ":stateMachine:", ":execution:", 1)+":x", "", nil)
		}),

		// Clients of the deployer bucket.
		a("a client writes _state/…/current", func(p *policies) evalCase {
			return developer.request("", "", "s3:PutObject", state(p, naming.CurrentKey(project, cfg)), "deployer-bucket", nil)
		}),
		a("a client deletes _state/…/started to replay a release", func(p *policies) evalCase {
			return developer.request("", "", "s3:DeleteObject", state(p, naming.StartedKey(project, cfg, "r1")), "deployer-bucket", nil)
		}),
		a("a client writes the lock", func(p *policies) evalCase {
			return developer.request("", "", "s3:PutObject", state(p, naming.LockKey(project, cfg)), "deployer-bucket", once)
		}),
		a("a client deletes the lock", func(p *policies) evalCase {
			return developer.request("", "", "s3:DeleteObject", state(p, naming.LockKey(project, cfg)), "deployer-bucket", nil)
		}),
		a("a client forges _state/…/deleting to skip the health gate", func(p *policies) evalCase {
			return developer.request("", "", "s3:PutObject", state(p, naming.DeletingKey(project, cfg, "r1")), "deployer-bucket", nil)
		}),
		a("a client overwrites rendered user data", func(p *policies) evalCase {
			return developer.request("", "", "s3:PutObject", state(p, naming.UserDataKey(project, cfg, "r1", "web")), "deployer-bucket", nil)
		}),
		a("a client forges an outcome", func(p *policies) evalCase {
			return developer.request("", "", "s3:PutObject", state(p, naming.OutcomeKey(project, cfg, "r1")), "deployer-bucket", nil)
		}),
		a("a client re-tags a state record to expire it", func(p *policies) evalCase {
			return developer.request("", "", "s3:PutObjectTagging", state(p, naming.CurrentKey(project, cfg)), "deployer-bucket", nil)
		}),
		a("a client deletes an old version of a state record", func(p *policies) evalCase {
			return developer.request("", "", "s3:DeleteObjectVersion", state(p, naming.DeletingKey(project, cfg, "r1")), "deployer-bucket", nil)
		}),
		a("an unlock operator deletes _state/…/current", func(p *policies) evalCase {
			return operator.request("", "", "s3:DeleteObject", state(p, naming.CurrentKey(project, cfg)), "deployer-bucket", nil)
		}),
		a("an unlock operator deletes _state/…/targets", func(p *policies) evalCase {
			return operator.request("", "", "s3:DeleteObject", state(p, naming.TargetsKey(project, cfg)), "deployer-bucket", nil)
		}),
		a("an unlock operator deletes user data of a service named lock", func(p *policies) evalCase {
			return operator.request("", "", "s3:DeleteObject", state(p, naming.UserDataKey(project, cfg, "r1", "lock")), "deployer-bucket", nil)
		}),
		a("an unlock operator writes the lock", func(p *policies) evalCase {
			return operator.request("", "", "s3:PutObject", state(p, naming.LockKey(project, cfg)), "deployer-bucket", once)
		}),

		// Writes under _state/ by other doors than PutObject and DeleteObject.
		a("replication writes a forged promotion record into _state/", func(p *policies) evalCase {
			return replicator.request("", "", "s3:ReplicateObject", state(p, naming.PromotionRecordKey(project, cfg, "p1")), "deployer-bucket", nil)
		}),
		a("replication hides _state/…/current behind a delete marker", func(p *policies) evalCase {
			return replicator.request("", "", "s3:ReplicateDelete", state(p, naming.CurrentKey(project, cfg)), "deployer-bucket", nil)
		}),
		a("a client tags a version of the lock to expire it", func(p *policies) evalCase {
			return developer.request("", "", "s3:PutObjectVersionTagging", state(p, naming.LockKey(project, cfg)), "deployer-bucket", nil)
		}),
		a("a client deletes the lock where no unlock operator is configured", func(p *policies) evalCase {
			return developer.request("", "", "s3:DeleteObject", state(p, naming.LockKey(project, cfg)), "deployer-bucket-default", nil)
		}),
		a("a client overwrites a release (PutObject without If-None-Match)", func(p *policies) evalCase {
			return developer.request("", "", "s3:PutObject", state(p, naming.ReleaseKey(project, cfg, "r1")), "deployer-bucket", nil)
		}),

		// The deploy role: what its groups launch and serve.
		a("the deploy role updates its group to $Latest", func(*policies) evalCase {
			return deploy.request("", "", "autoscaling:UpdateAutoScalingGroup", ownGroup, "", with(ownTags, nil, "autoscaling",
				map[string]any{"autoscaling:LaunchTemplateVersionSpecified": "false"}))
		}),
		a("the deploy role updates its group to a launch configuration", func(*policies) evalCase {
			return deploy.request("", "", "autoscaling:UpdateAutoScalingGroup", ownGroup, "", with(ownTags, nil, "autoscaling",
				map[string]any{"autoscaling:LaunchConfigurationName": "someone-elses-lc"}))
		}),
		a("the deploy role attaches its group to another account's target group", func(*policies) evalCase {
			return deploy.request("", "", "autoscaling:AttachLoadBalancerTargetGroups", ownGroup, "", with(ownTags, nil, "autoscaling",
				map[string]any{"autoscaling:TargetGroupARNs": []string{tg(foreignAccount)}}))
		}),
		a("the deploy role creates a group in another account's target group", func(*policies) evalCase {
			return deploy.request("", "", "autoscaling:CreateAutoScalingGroup", ownGroup, "", with(nil, ownTags, "", map[string]any{
				"autoscaling:LaunchTemplateVersionSpecified": "true", "autoscaling:TargetGroupARNs": []string{tg(targetAccount), tg(foreignAccount)}}))
		}),

		// The deployer's administrator path (with the SCP).
		a("an administrator changes the deployer's code (with the SCP)", func(p *policies) evalCase {
			return developer.request("", "", "lambda:UpdateFunctionCode", p.lambdaARN, "", nil)
		}),
		a("an administrator changes the deployer's configuration (with the SCP)", func(p *policies) evalCase {
			return developer.request("", "", "lambda:UpdateFunctionConfiguration", p.lambdaARN, "", nil)
		}),
		a("an administrator invokes the deployer asynchronously (with the SCP)", func(p *policies) evalCase {
			return developer.request("", "", "lambda:InvokeAsync", p.lambdaARN, "lambda-invoke", nil)
		}),
		a("an administrator passes the deployer's role to a function of their own (with the SCP)", func(*policies) evalCase {
			return developer.request("", "", "iam:PassRole", lambdaRoleARN, "", map[string]any{"iam:PassedToService": "lambda.amazonaws.com"})
		}),
		a("an administrator creates a role named like the deployer's (with the SCP)", func(*policies) evalCase {
			return developer.request("", "", "iam:CreateRole", naming.RoleARN(deployerAccount, naming.DeployerRoleName("eu-west-1")), "", nil)
		}),
		a("an administrator creates a role named like the state machine's (with the SCP)", func(*policies) evalCase {
			return developer.request("", "", "iam:CreateRole", naming.RoleARN(deployerAccount, naming.StateMachineRoleName("eu-west-1")), "", nil)
		}),
		a("an administrator expires _state/ with a lifecycle rule on the deployer bucket (with the SCP)", func(p *policies) evalCase {
			return developer.request("", "", "s3:PutLifecycleConfiguration", "arn:aws:s3:::"+p.bucket, "deployer-bucket", nil)
		}),
		a("an administrator replaces the deployer bucket's policy (with the SCP)", func(p *policies) evalCase {
			return developer.request("", "", "s3:PutBucketPolicy", "arn:aws:s3:::"+p.bucket, "deployer-bucket", nil)
		}),
		a("an administrator makes the deployer's role trust them (with the SCP)", func(*policies) evalCase {
			return developer.request("", "", "iam:UpdateAssumeRolePolicy", lambdaRoleARN, "", nil)
		}),

		// Service trusts: the confused deputy.
		a("Step Functions assumes the state machine's role for another account's state machine", func(*policies) evalCase {
			return service("states.amazonaws.com", naming.StateMachineRoleName(awsRegion), foreignAccount, foreignMachine)
		}),
		a("Step Functions assumes the state machine's role for another state machine of the account", func(*policies) evalCase {
			return service("states.amazonaws.com", naming.StateMachineRoleName(awsRegion), deployerAccount, otherMachine)
		}),
		a("Lambda assumes the deployer's role for another account's function", func(*policies) evalCase {
			return service("lambda.amazonaws.com", naming.DeployerRoleName(awsRegion), foreignAccount,
				"arn:aws:lambda:"+awsRegion+":"+foreignAccount+":function:"+naming.DeployerFunctionName)
		}),
		a("EventBridge Scheduler assumes the reconcile schedule's role for another schedule group", func(*policies) evalCase {
			return service("scheduler.amazonaws.com", naming.ReconcileScheduleRoleName(awsRegion), deployerAccount,
				"arn:aws:scheduler:"+awsRegion+":"+deployerAccount+":schedule-group/payroll")
		}),

		// Invoking the deployer and redriving its executions.
		a("another account invokes the deployer Lambda", func(p *policies) evalCase {
			return foreign.request("", "", "lambda:InvokeFunction", p.lambdaARN, "lambda-invoke", nil)
		}),
		a("an administrator invokes the deployer Lambda directly (with the security page's SCP)", func(p *policies) evalCase {
			return developer.request("", "", "lambda:InvokeFunction", p.lambdaARN, "lambda-invoke", nil)
		}),
		a("the deployer's own role invokes the deployer Lambda (with the security page's SCP)", func(p *policies) evalCase {
			l := lambda
			l.identity = []string{"admin"}
			return l.request("", "", "lambda:InvokeFunction", p.lambdaARN, "lambda-invoke", nil)
		}),
		a("an administrator redrives an execution (with the security page's SCP)", func(p *policies) evalCase {
			return developer.request("", "", "states:RedriveExecution", strings.Replace(p.smARN, ":stateMachine:", ":execution:", 1)+":r1", "", nil)
		}),
	}
}
