package sim_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	ststypes "github.com/aws/aws-sdk-go-v2/service/sts/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	environment "github.com/ferryhq/ferry/internal/target"
)

const (
	ownProject   = "coinbase/deploy-test"
	ownConfig    = "development"
	otherProject = "other/project"
	sgOwn        = "sg-000000000000d0001"
	sgOther      = "sg-000000000000d0002"
	amiUntagged  = "ami-0000000000000ab04"
	subnetBare   = "subnet-00000000000000c01"
)

// abac is a world with a deploy role session of ownProject/ownConfig
// (session) and the world's unauthenticated clients (admin), which make
// what another project or a person made.
type abac struct {
	*fixture
	session *cloud.Clients
}

func newABAC(t *testing.T) *abac {
	t.Helper()
	f := newFixture(t)
	conn := f.world.Connector(deployer, nil, cloud.ConnectorOptions{})
	c, err := conn.Connect(f.ctx, environment.Target{AccountID: deployer, Region: region},
		cloud.Session{Project: ownProject, Config: ownConfig, ReleaseID: "r1"})
	require.NoError(t, err)
	return &abac{fixture: f, session: c}
}

// tags are the reserved tags ferry gives what it makes for a release.
func tags(project, config, release string) map[string]string {
	return map[string]string{
		naming.TagProjectName: project, naming.TagConfigName: config, naming.TagServiceName: "web",
		naming.TagReleaseID: release, naming.TagDeployWith: naming.DeployWithValue,
	}
}

func ec2TagList(m map[string]string) []ec2types.Tag {
	var out []ec2types.Tag
	for k, v := range m {
		out = append(out, ec2types.Tag{Key: aws.String(k), Value: aws.String(v)})
	}
	return out
}

func asgTagList(m map[string]string) []astypes.Tag {
	var out []astypes.Tag
	for k, v := range m {
		out = append(out, astypes.Tag{Key: aws.String(k), Value: aws.String(v), PropagateAtLaunch: aws.Bool(true)})
	}
	return out
}

// templateInput is a launch template as ferry makes it, tagged with tags.
func templateInput(name, image string, sgs []string, tags map[string]string) *ec2.CreateLaunchTemplateInput {
	return &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String(name),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{
			ImageId: aws.String(image), InstanceType: ec2types.InstanceTypeT2Nano, SecurityGroupIds: sgs,
			TagSpecifications: []ec2types.LaunchTemplateTagSpecificationRequest{{ResourceType: ec2types.ResourceTypeVolume, Tags: ec2TagList(tags)}},
		},
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeLaunchTemplate, Tags: ec2TagList(tags)}},
	}
}

// groupOf is a group as ferry makes it, from template name at version 1.
func groupOf(name, subnets string, tags map[string]string) *autoscaling.CreateAutoScalingGroupInput {
	return &autoscaling.CreateAutoScalingGroupInput{
		AutoScalingGroupName: aws.String(name),
		LaunchTemplate:       &astypes.LaunchTemplateSpecification{LaunchTemplateName: aws.String(name), Version: aws.String("1")},
		MinSize:              aws.Int32(0), MaxSize: aws.Int32(2), DesiredCapacity: aws.Int32(1),
		VPCZoneIdentifier: aws.String(subnets),
		Tags:              asgTagList(tags),
	}
}

// made creates a template and group with c (the session or admin).
func (a *abac) made(t *testing.T, c *cloud.Clients, name string, tags map[string]string) {
	t.Helper()
	_, err := c.EC2.CreateLaunchTemplate(a.ctx, templateInput(name, amiOK, []string{sgOwn}, tags))
	require.NoError(t, err)
	_, err = c.AutoScaling.CreateAutoScalingGroup(a.ctx, groupOf(name, subnetA, tags))
	require.NoError(t, err)
}

// assertDenied: the call was refused as IAM refuses it, naming the deploy
// role session, the action and the resource.
func assertDenied(t *testing.T, err error, action, resource string) {
	t.Helper()
	assertCode(t, err, cloud.CodeAccessDenied)
	if err != nil {
		assert.Contains(t, err.Error(), "assumed-role/"+naming.DeployRoleName(deployer, region, "")+"/"+naming.RoleSessionName(ownProject, ownConfig, "r1"))
		assert.Contains(t, err.Error(), "is not authorized to perform: "+action+" on resource: ")
		assert.Contains(t, err.Error(), resource)
	}
}

// TestDeployRoleABAC: a deploy role session acts only on its own
// project-config's resources, as the bootstrap template's deploy policy
// says (attribute-based access control with the session's tags:
// https://docs.aws.amazon.com/IAM/latest/UserGuide/introduction_attribute-based-access-control.html;
// tag conditions on Auto Scaling groups:
// https://docs.aws.amazon.com/autoscaling/ec2/userguide/tag-security.html;
// tags on EC2 resources only as they are created:
// https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/supported-iam-actions-tagging.html;
// what CreateAutoScalingGroup also authorizes:
// https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-api-permissions.html).
// Every refusal is AccessDenied naming the session, the action and the
// resource, and changes nothing.
func TestDeployRoleABAC(t *testing.T) {
	a := newABAC(t)
	own := naming.GroupName(ownProject, ownConfig, "web", "r1")
	foreign := naming.GroupName(otherProject, ownConfig, "web", "r1")
	a.made(t, a.session, own, tags(ownProject, ownConfig, "r1"))
	a.made(t, a.c, foreign, tags(otherProject, ownConfig, "r1"))
	var foreignLT string
	out, err := a.c.EC2.DescribeLaunchTemplates(a.ctx, &ec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{foreign}})
	require.NoError(t, err)
	foreignLT = *out.LaunchTemplates[0].LaunchTemplateId

	other := tags(otherProject, ownConfig, "r2")
	untagged := tags(ownProject, ownConfig, "r2")
	delete(untagged, naming.TagDeployWith)
	next := func(n string) string { return naming.GroupName(ownProject, ownConfig, n, "r2") }
	api := a.session
	tests := []struct {
		name, action, resource string
		call                   func() error
	}{
		{"create a group tagged as another project", "autoscaling:CreateAutoScalingGroup", "autoScalingGroupName/" + next("a"), func() error {
			_, err := api.AutoScaling.CreateAutoScalingGroup(a.ctx, groupOf(next("a"), subnetA, other))
			return err
		}},
		{"create a group without DeployWith", "autoscaling:CreateAutoScalingGroup", next("b"), func() error {
			_, err := api.AutoScaling.CreateAutoScalingGroup(a.ctx, groupOf(next("b"), subnetA, untagged))
			return err
		}},
		{"create a group named under another project", "autoscaling:CreateAutoScalingGroup", "autoScalingGroupName/other/project/", func() error {
			_, err := api.AutoScaling.CreateAutoScalingGroup(a.ctx, groupOf(naming.GroupName(otherProject, ownConfig, "web", "r3"), subnetA, tags(ownProject, ownConfig, "r3")))
			return err
		}},
		{"create a group from $Latest", "autoscaling:CreateAutoScalingGroup", own, func() error {
			in := groupOf(own+"-latest", subnetA, tags(ownProject, ownConfig, "r1"))
			in.LaunchTemplate.LaunchTemplateName, in.LaunchTemplate.Version = aws.String(own), aws.String("$Latest")
			_, err := api.AutoScaling.CreateAutoScalingGroup(a.ctx, in)
			return err
		}},
		{"create a group in another account's target group", "autoscaling:CreateAutoScalingGroup", next("g"), func() error {
			in := groupOf(next("g"), subnetA, tags(ownProject, ownConfig, "r2"))
			in.TargetGroupARNs = []string{"arn:aws:elasticloadbalancing:" + region + ":999999999999:targetgroup/web/0123456789abcdef"}
			_, err := api.AutoScaling.CreateAutoScalingGroup(a.ctx, in)
			return err
		}},
		{"resize another project's group", "autoscaling:UpdateAutoScalingGroup", foreign, func() error {
			_, err := api.AutoScaling.UpdateAutoScalingGroup(a.ctx, &autoscaling.UpdateAutoScalingGroupInput{AutoScalingGroupName: aws.String(foreign), DesiredCapacity: aws.Int32(0)})
			return err
		}},
		{"delete another project's group", "autoscaling:DeleteAutoScalingGroup", foreign, func() error {
			_, err := api.AutoScaling.DeleteAutoScalingGroup(a.ctx, &autoscaling.DeleteAutoScalingGroupInput{AutoScalingGroupName: aws.String(foreign), ForceDelete: aws.Bool(true)})
			return err
		}},
		{"put a scaling policy on another project's group", "autoscaling:PutScalingPolicy", foreign, func() error {
			_, err := api.AutoScaling.PutScalingPolicy(a.ctx, &autoscaling.PutScalingPolicyInput{AutoScalingGroupName: aws.String(foreign),
				PolicyName: aws.String("p"), AdjustmentType: aws.String("ChangeInCapacity"), ScalingAdjustment: aws.Int32(5)})
			return err
		}},
		{"suspend another project's processes", "autoscaling:SuspendProcesses", foreign, func() error {
			_, err := api.AutoScaling.SuspendProcesses(a.ctx, &autoscaling.SuspendProcessesInput{AutoScalingGroupName: aws.String(foreign)})
			return err
		}},
		{"re-tag another project's group with its own project", "autoscaling:CreateOrUpdateTags", foreign, func() error {
			_, err := api.AutoScaling.(*sim.AutoScaling).CreateOrUpdateTags(a.ctx, &autoscaling.CreateOrUpdateTagsInput{Tags: []astypes.Tag{{
				ResourceId: aws.String(foreign), ResourceType: aws.String("auto-scaling-group"), Key: aws.String(naming.TagProjectName), Value: aws.String(ownProject)}}})
			return err
		}},
		{"change its own group's reserved tags", "autoscaling:CreateOrUpdateTags", own, func() error {
			_, err := api.AutoScaling.(*sim.AutoScaling).CreateOrUpdateTags(a.ctx, &autoscaling.CreateOrUpdateTagsInput{Tags: []astypes.Tag{{
				ResourceId: aws.String(own), ResourceType: aws.String("auto-scaling-group"), Key: aws.String(naming.TagReleaseID), Value: aws.String("r0")}}})
			return err
		}},
		{"create a launch template version", "ec2:CreateLaunchTemplateVersion", "launch-template/", func() error {
			_, err := api.EC2.(*sim.EC2).CreateLaunchTemplateVersion(a.ctx, &ec2.CreateLaunchTemplateVersionInput{LaunchTemplateName: aws.String(own),
				LaunchTemplateData: &ec2types.RequestLaunchTemplateData{UserData: aws.String("IyEvYmluL3NoCg==")}})
			return err
		}},
		{"change a launch template's default version", "ec2:ModifyLaunchTemplate", "launch-template/", func() error {
			_, err := api.EC2.(*sim.EC2).ModifyLaunchTemplate(a.ctx, &ec2.ModifyLaunchTemplateInput{LaunchTemplateName: aws.String(own), DefaultVersion: aws.String("1")})
			return err
		}},
		{"delete another project's launch template", "ec2:DeleteLaunchTemplate", foreignLT, func() error {
			_, err := api.EC2.DeleteLaunchTemplate(a.ctx, &ec2.DeleteLaunchTemplateInput{LaunchTemplateName: aws.String(foreign)})
			return err
		}},
		{"create a launch template tagged as another project", "ec2:CreateLaunchTemplate", "launch-template/", func() error {
			_, err := api.EC2.CreateLaunchTemplate(a.ctx, templateInput(next("c"), amiOK, []string{sgOwn}, other))
			return err
		}},
		{"launch from an untagged image", "ec2:RunInstances", "image/" + amiUntagged, func() error {
			_, err := api.EC2.CreateLaunchTemplate(a.ctx, templateInput(next("d"), amiUntagged, []string{sgOwn}, untaggedOK()))
			require.NoError(t, err)
			_, err = api.AutoScaling.CreateAutoScalingGroup(a.ctx, groupOf(next("d"), subnetA, untaggedOK()))
			return err
		}},
		{"launch into an untagged subnet", "ec2:RunInstances", "subnet/" + subnetBare, func() error {
			_, err := api.EC2.CreateLaunchTemplate(a.ctx, templateInput(next("e"), amiOK, []string{sgOwn}, untaggedOK()))
			require.NoError(t, err)
			_, err = api.AutoScaling.CreateAutoScalingGroup(a.ctx, groupOf(next("e"), subnetBare, untaggedOK()))
			return err
		}},
		{"launch with another project's security group", "ec2:RunInstances", "security-group/" + sgOther, func() error {
			_, err := api.EC2.CreateLaunchTemplate(a.ctx, templateInput(next("f"), amiOK, []string{sgOther}, untaggedOK()))
			require.NoError(t, err)
			_, err = api.AutoScaling.CreateAutoScalingGroup(a.ctx, groupOf(next("f"), subnetA, untaggedOK()))
			return err
		}},
		{"put an alarm of another project", "cloudwatch:PutMetricAlarm", "alarm:other/project/", func() error {
			_, err := api.CloudWatch.PutMetricAlarm(a.ctx, alarmInput(naming.AlarmName(foreign, "cpu_scale_up"), other, nil))
			return err
		}},
		{"point an alarm at another project's scaling policy", "cloudwatch:PutMetricAlarm", "alarm:" + own, func() error {
			_, err := api.CloudWatch.PutMetricAlarm(a.ctx, alarmInput(naming.AlarmName(own, "cpu_scale_up"), tags(ownProject, ownConfig, "r1"),
				[]string{"arn:aws:autoscaling:us-east-1:111111111111:scalingPolicy:x:autoScalingGroupName/" + foreign + ":policyName/p"}))
			return err
		}},
		{"delete another project's alarm", "cloudwatch:DeleteAlarms", "alarm:other/project/", func() error {
			_, err := api.CloudWatch.DeleteAlarms(a.ctx, &cloudwatch.DeleteAlarmsInput{AlarmNames: []string{naming.AlarmName(foreign, "cpu_scale_up")}})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := a.world.Snapshot()
			assertDenied(t, tt.call(), tt.action, tt.resource)
			after := a.world.Snapshot()
			assert.Equal(t, len(before.Accounts[0].Groups), len(after.Accounts[0].Groups), "nothing was created or deleted")
		})
	}
	// Its own project-config's resources are its to manage.
	_, err = api.AutoScaling.UpdateAutoScalingGroup(a.ctx, &autoscaling.UpdateAutoScalingGroupInput{AutoScalingGroupName: aws.String(own), DesiredCapacity: aws.Int32(2)})
	require.NoError(t, err)
	_, err = api.CloudWatch.PutMetricAlarm(a.ctx, alarmInput(naming.AlarmName(own, "cpu_scale_up"), tags(ownProject, ownConfig, "r1"), nil))
	require.NoError(t, err)
	_, err = api.AutoScaling.DeleteAutoScalingGroup(a.ctx, &autoscaling.DeleteAutoScalingGroupInput{AutoScalingGroupName: aws.String(own), ForceDelete: aws.Bool(true)})
	require.NoError(t, err)
	// An administrator (the unauthenticated clients) is not the deploy
	// role: the world checks only deploy role sessions.
	_, err = a.c.AutoScaling.DeleteAutoScalingGroup(a.ctx, &autoscaling.DeleteAutoScalingGroupInput{AutoScalingGroupName: aws.String(foreign), ForceDelete: aws.Bool(true)})
	require.NoError(t, err)
}

// untaggedOK are the tags of a release r2 of the session's project-config.
func untaggedOK() map[string]string { return tags(ownProject, ownConfig, "r2") }

func alarmInput(name string, tags map[string]string, actions []string) *cloudwatch.PutMetricAlarmInput {
	var cw []cwtypes.Tag
	for k, v := range tags {
		cw = append(cw, cwtypes.Tag{Key: aws.String(k), Value: aws.String(v)})
	}
	return &cloudwatch.PutMetricAlarmInput{
		AlarmName: aws.String(name), Namespace: aws.String("AWS/EC2"), MetricName: aws.String("CPUUtilization"),
		Statistic: cwtypes.StatisticAverage, Period: aws.Int32(60), EvaluationPeriods: aws.Int32(1), Threshold: aws.Float64(50),
		ComparisonOperator: cwtypes.ComparisonOperatorGreaterThanThreshold, AlarmActions: actions, Tags: cw,
	}
}

// TestCallsRecordTheirAuthorizations: the call log says who called, with
// which session tags, and every authorization AWS makes for the call with
// the resources' ARNs and tags, so an IAM engine can evaluate the real
// policies against it.
func TestCallsRecordTheirAuthorizations(t *testing.T) {
	a := newABAC(t)
	a.world.ResetCalls()
	own := naming.GroupName(ownProject, ownConfig, "web", "r1")
	a.made(t, a.session, own, tags(ownProject, ownConfig, "r1"))
	log := a.world.CallLog()
	require.Len(t, log, 2)
	session := "arn:aws:sts::111111111111:assumed-role/" + naming.DeployRoleName(deployer, region, "") + "/" + naming.RoleSessionName(ownProject, ownConfig, "r1")
	for _, c := range log {
		assert.Equal(t, session, c.Principal)
		assert.Equal(t, map[string]string{naming.TagProjectName: ownProject, naming.TagConfigName: ownConfig}, c.SessionTags)
	}
	var actions []string
	for _, x := range log[1].Auth {
		actions = append(actions, x.Action+" "+x.Resource[len("arn:aws:"):])
	}
	assert.Equal(t, []string{
		"autoscaling:CreateAutoScalingGroup autoscaling:us-east-1:111111111111:autoScalingGroup:" + log[1].Auth[0].Resource[len("arn:aws:autoscaling:us-east-1:111111111111:autoScalingGroup:"):],
		"ec2:RunInstances ec2:us-east-1:111111111111:launch-template/lt-00000000000000001",
		"ec2:RunInstances ec2:us-east-1::image/" + amiOK,
		"ec2:RunInstances ec2:us-east-1:111111111111:subnet/" + subnetA,
		"ec2:RunInstances ec2:us-east-1:111111111111:security-group/" + sgOwn,
		"ec2:RunInstances ec2:us-east-1:111111111111:instance/*",
		"ec2:RunInstances ec2:us-east-1:111111111111:network-interface/*",
		"ec2:RunInstances ec2:us-east-1:111111111111:volume/*",
		"ec2:CreateTags ec2:us-east-1:111111111111:volume/*",
	}, actions)
	assert.Equal(t, tags(ownProject, ownConfig, "r1"), log[1].Auth[0].RequestTags)
	assert.Equal(t, []string{"true"}, log[1].Auth[0].Context["autoscaling:LaunchTemplateVersionSpecified"])
	assert.Equal(t, "ferry", log[1].Auth[2].ResourceTags[naming.TagDeployWith])
	assert.Equal(t, []string{"RunInstances"}, log[1].Auth[8].Context["ec2:CreateAction"])
	assert.Equal(t, "ec2:CreateLaunchTemplate", log[0].Auth[0].Action)
	assert.Equal(t, "ec2:CreateTags", log[0].Auth[1].Action)
	assert.Equal(t, []string{"CreateLaunchTemplate"}, log[0].Auth[1].Context["ec2:CreateAction"])
}

// TestBootstrapRoleTrust: ferry's bootstrap roles trust only the
// deployer's Lambda role (naming.DeployerRoleNamePattern) of a trusted
// account, and only with the session tags ProjectName and ConfigName
// (https://docs.aws.amazon.com/IAM/latest/UserGuide/id_session-tags.html:
// the trust policy must allow sts:TagSession, and may require tags);
// anything else is AccessDenied, as AWS answers.
func TestBootstrapRoleTrust(t *testing.T) {
	w, err := sim.New(clock.NewVirtual(start), loadWorld(t, "deploy-test.json"))
	require.NoError(t, err)
	role := naming.RoleARN(deployer, naming.DeployRoleName(deployer, region, ""))
	sessionTags := []ststypes.Tag{{Key: aws.String("ProjectName"), Value: aws.String(ownProject)}, {Key: aws.String("ConfigName"), Value: aws.String(ownConfig)}}
	tests := []struct {
		name, caller string
		tags         []ststypes.Tag
		ok           bool
	}{
		{"the deployer's Lambda role, tagged", naming.RoleARN(deployer, naming.DeployerRoleName("eu-west-1")), sessionTags, true},
		{"the deployer's Lambda role without session tags", naming.RoleARN(deployer, naming.DeployerRoleName("eu-west-1")), nil, false},
		{"the deployer's Lambda role without ConfigName", naming.RoleARN(deployer, naming.DeployerRoleName("eu-west-1")), sessionTags[:1], false},
		{"another role of the deployer account", naming.RoleARN(deployer, "PowerUser"), sessionTags, false},
		{"a user of the deployer account", "arn:aws:iam::111111111111:user/alice", sessionTags, false},
		{"the deployer role of an untrusted account", naming.RoleARN("999999999999", naming.DeployerRoleName("us-east-1")), sessionTags, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := w.STSAs(tt.caller).AssumeRole(context.Background(), &sts.AssumeRoleInput{
				RoleArn: aws.String(role), RoleSessionName: aws.String("s1"), Tags: tt.tags})
			if tt.ok {
				require.NoError(t, err)
				return
			}
			assertCode(t, err, cloud.CodeAccessDenied)
			assert.Contains(t, fmt.Sprint(err), "is not authorized to perform: sts:AssumeRole on resource: "+role)
		})
	}
	log := w.CallLog()
	require.NotEmpty(t, log)
	assert.Equal(t, naming.RoleARN(deployer, naming.DeployerRoleName("eu-west-1")), log[0].Principal)
	require.Len(t, log[0].Auth, 2)
	assert.Equal(t, "sts:TagSession", log[0].Auth[1].Action)
	assert.Equal(t, map[string]string{"ProjectName": ownProject, "ConfigName": ownConfig}, log[0].Auth[1].RequestTags)
}
