package sim_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbv2types "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/balancers"
	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	environment "github.com/ferryhq/ferry/internal/target"
)

// activities returns a group's scaling activities, every page.
func (f *fixture) activities(t testing.TB, name string) []astypes.Activity {
	t.Helper()
	in := &autoscaling.DescribeScalingActivitiesInput{AutoScalingGroupName: aws.String(name), MaxRecords: aws.Int32(2)}
	var out []astypes.Activity
	for {
		page, err := f.c.AutoScaling.DescribeScalingActivities(f.ctx, in)
		require.NoError(t, err)
		out = append(out, page.Activities...)
		if page.NextToken == nil {
			return out
		}
		in.NextToken = page.NextToken
	}
}

// count counts activities whose description begins with prefix and whose
// status is code ("" for any).
func count(as []astypes.Activity, prefix string, code astypes.ScalingActivityStatusCode) int {
	n := 0
	for _, a := range as {
		if strings.HasPrefix(aws.ToString(a.Description), prefix) && (code == "" || a.StatusCode == code) {
			n++
		}
	}
	return n
}

// https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_DescribeScalingActivities.html
// Every launch and termination is an activity: in progress until the
// instance is in service (or gone), then Successful; "Activities still in
// progress are described first", then by start time, newest first;
// MaxRecords and NextToken page through them. A crash is a termination
// whose cause names the status check, followed by a replacement launch.
func TestScalingActivities(t *testing.T) {
	f := newFixture(t)
	f.group(t, "grp", amiCrash, 2)

	as := f.activities(t, "grp")
	require.Len(t, as, 2)
	assert.Equal(t, 2, count(as, "Launching a new EC2 instance: i-", astypes.ScalingActivityStatusCodeInProgress))
	assert.Contains(t, aws.ToString(as[0].Cause), "a user request created an AutoScalingGroup changing the desired capacity from 0 to 2")
	assert.Contains(t, aws.ToString(as[0].Details), "Availability Zone")

	f.clk.Advance(130 * time.Second) // booted (60-120 s), not yet crashed (30-90 s after boot)
	as = f.activities(t, "grp")
	assert.Equal(t, 2, count(as, "Launching a new EC2 instance: i-", astypes.ScalingActivityStatusCodeSuccessful))

	f.clk.Advance(5 * time.Minute)
	as = f.activities(t, "grp")
	terms := count(as, "Terminating EC2 instance: i-", "")
	require.GreaterOrEqual(t, terms, 2, "every crash-loop instance died")
	assert.Equal(t, terms+2, count(as, "Launching a new EC2 instance: i-", ""), "each death was replaced")
	for _, a := range as {
		if strings.HasPrefix(aws.ToString(a.Description), "Terminating") {
			assert.Contains(t, aws.ToString(a.Cause), "in response to an EC2 instance status checks failure")
		}
	}
	inProgress := true
	for i, a := range as {
		running := a.StatusCode == astypes.ScalingActivityStatusCodeInProgress
		require.False(t, running && !inProgress, "activity %d in progress after a finished one", i)
		inProgress = running
		if i > 0 && !running && as[i-1].StatusCode != astypes.ScalingActivityStatusCodeInProgress {
			assert.False(t, a.StartTime.After(*as[i-1].StartTime), "finished activities newest first")
		}
	}

	none, err := f.c.AutoScaling.DescribeScalingActivities(f.ctx, &autoscaling.DescribeScalingActivitiesInput{AutoScalingGroupName: aws.String("nope")})
	require.NoError(t, err)
	assert.Empty(t, none.Activities)
	_, err = f.c.AutoScaling.DescribeScalingActivities(f.ctx, &autoscaling.DescribeScalingActivitiesInput{MaxRecords: aws.Int32(101)})
	assertCode(t, err, cloud.CodeValidation)
}

// https://docs.aws.amazon.com/autoscaling/ec2/userguide/CHAP_Troubleshooting.html
// (Troubleshoot EC2 instance launch failures): a launch EC2 refuses is a
// Failed activity whose StatusMessage says why, and the group tries again
// later: an image whose architecture the instance type cannot run, a
// security group of another VPC, an instance profile that does not exist,
// or (Faults.FailLaunches) anything else.
func TestFailedLaunches(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(d *ec2types.RequestLaunchTemplateData)
		fault string
		want  string
	}{
		{"architecture", func(d *ec2types.RequestLaunchTemplateData) { d.InstanceType = "t4g.small" },
			"", "The architecture 'arm64' of the specified instance type does not match the architecture 'x86_64' of the specified AMI"},
		{"security group of another VPC", func(d *ec2types.RequestLaunchTemplateData) {
			d.SecurityGroupIds = []string{"sg-000000000000d0003"}
		}, "", "belong to different networks"},
		{"unknown instance profile", func(d *ec2types.RequestLaunchTemplateData) {
			d.IamInstanceProfile = &ec2types.LaunchTemplateIamInstanceProfileSpecificationRequest{Name: aws.String("gone")}
		}, "", "Invalid IAM Instance Profile name"},
		{"fault", func(*ec2types.RequestLaunchTemplateData) {}, "The image id '[ami-0000000000000ab01]' does not exist", "does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			data := &ec2types.RequestLaunchTemplateData{ImageId: aws.String(amiOK), InstanceType: ec2types.InstanceTypeT2Nano}
			tt.edit(data)
			_, err := f.c.EC2.CreateLaunchTemplate(f.ctx, &ec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String("lt-grp"), LaunchTemplateData: data})
			require.NoError(t, err)
			if tt.fault != "" {
				require.NoError(t, f.world.Faults().FailLaunches(deployer, region, 1, tt.fault+". Launching EC2 instance failed."))
			}
			_, err = f.c.AutoScaling.CreateAutoScalingGroup(f.ctx, f.groupInput(t, "grp", 1))
			require.NoError(t, err, "the group is created; its launches fail")
			as := f.activities(t, "grp")
			require.Len(t, as, 1)
			assert.Equal(t, astypes.ScalingActivityStatusCodeFailed, as[0].StatusCode)
			assert.Contains(t, aws.ToString(as[0].StatusMessage), tt.want)
			assert.Contains(t, aws.ToString(as[0].StatusMessage), "Launching EC2 instance failed.")
			assert.Empty(t, f.describe(t, "grp").Instances)

			f.clk.Advance(61 * time.Second)
			as = f.activities(t, "grp")
			if tt.fault != "" {
				assert.Equal(t, 1, count(as, "Launching a new EC2 instance: i-", ""), "the fault failed one launch; the retry launched")
			} else {
				assert.Equal(t, 2, count(as, "Launching a new EC2 instance.", astypes.ScalingActivityStatusCodeFailed), "the group tried again and failed again")
			}
		})
	}
}

// https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_SuspendProcesses.html
// Suspended processes are listed by DescribeAutoScalingGroups; an empty
// list suspends (or resumes) every process; an unknown process or group is
// a ValidationError. With ReplaceUnhealthy suspended a dead instance is
// not replaced; resuming it fills the group again.
func TestSuspendResumeProcesses(t *testing.T) {
	f := newFixture(t)
	f.group(t, "grp", amiCrash, 1)
	_, err := f.c.AutoScaling.SuspendProcesses(f.ctx, &autoscaling.SuspendProcessesInput{
		AutoScalingGroupName: aws.String("grp"), ScalingProcesses: []string{sim.ProcessReplaceUnhealthy, sim.ProcessAZRebalance},
	})
	require.NoError(t, err)
	g := f.describe(t, "grp")
	var names []string
	for _, p := range g.SuspendedProcesses {
		names = append(names, aws.ToString(p.ProcessName))
		assert.Contains(t, aws.ToString(p.SuspensionReason), "User suspended at")
	}
	assert.Equal(t, []string{sim.ProcessAZRebalance, sim.ProcessReplaceUnhealthy}, names)

	f.clk.Advance(10 * time.Minute) // it crashed: not replaced
	assert.Empty(t, f.describe(t, "grp").Instances)
	_, err = f.c.AutoScaling.ResumeProcesses(f.ctx, &autoscaling.ResumeProcessesInput{AutoScalingGroupName: aws.String("grp")})
	require.NoError(t, err)
	g = f.describe(t, "grp")
	assert.Empty(t, g.SuspendedProcesses)
	assert.Len(t, g.Instances, 1, "resumed: the group launches to its desired capacity")

	_, err = f.c.AutoScaling.SuspendProcesses(f.ctx, &autoscaling.SuspendProcessesInput{AutoScalingGroupName: aws.String("grp"), ScalingProcesses: []string{"Nap"}})
	assertCode(t, err, cloud.CodeValidation)
	_, err = f.c.AutoScaling.SuspendProcesses(f.ctx, &autoscaling.SuspendProcessesInput{AutoScalingGroupName: aws.String("nope")})
	assertCode(t, err, cloud.CodeValidation)
	_, err = f.c.AutoScaling.SuspendProcesses(f.ctx, &autoscaling.SuspendProcessesInput{AutoScalingGroupName: aws.String("grp")})
	require.NoError(t, err)
	assert.Len(t, f.describe(t, "grp").SuspendedProcesses, len(sim.Processes()))
}

// cpuAlarm puts a scale-in policy on grp and a CPU alarm (below threshold
// for one period of 60 s) invoking it.
func (f *fixture) cpuAlarm(t testing.TB, grp string, threshold float64) {
	t.Helper()
	p, err := f.c.AutoScaling.PutScalingPolicy(f.ctx, &autoscaling.PutScalingPolicyInput{
		AutoScalingGroupName: aws.String(grp), PolicyName: aws.String("cpu_scale_down"), PolicyType: aws.String("SimpleScaling"),
		AdjustmentType: aws.String("ChangeInCapacity"), ScalingAdjustment: aws.Int32(-1), Cooldown: aws.Int32(60),
	})
	require.NoError(t, err)
	_, err = f.c.CloudWatch.PutMetricAlarm(f.ctx, &cloudwatch.PutMetricAlarmInput{
		AlarmName: aws.String(grp + "/cpu_scale_down"), Namespace: aws.String("AWS/EC2"), MetricName: aws.String("CPUUtilization"),
		Statistic: cwtypes.StatisticAverage, Period: aws.Int32(60), EvaluationPeriods: aws.Int32(1), Threshold: aws.Float64(threshold),
		ComparisonOperator: cwtypes.ComparisonOperatorLessThanThreshold, AlarmActions: []string{aws.ToString(p.PolicyARN)},
		Dimensions: []cwtypes.Dimension{{Name: aws.String("AutoScalingGroupName"), Value: aws.String(grp)}},
	})
	require.NoError(t, err)
}

func (f *fixture) alarmState(t testing.TB, name string) cwtypes.StateValue {
	t.Helper()
	out, err := f.c.CloudWatch.DescribeAlarms(f.ctx, &cloudwatch.DescribeAlarmsInput{AlarmNames: []string{name}})
	require.NoError(t, err)
	require.Len(t, out.MetricAlarms, 1)
	return out.MetricAlarms[0].StateValue
}

// https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/AlarmThatSendsEmail.html
// (alarm actions: "For Auto Scaling actions, the alarm continues to invoke
// the action once per minute that the alarm remains in the new state") and
// https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-scaling-simple-step.html
// (simple scaling waits for the cooldown): a CPU alarm goes to ALARM once
// the condition held for its evaluation periods and scales the group in,
// one instance per invocation outside the cooldown, never below the
// minimum; with AlarmNotification suspended it goes to ALARM and scales
// nothing (https://docs.aws.amazon.com/autoscaling/ec2/userguide/suspend-resume-considerations.html).
func TestCPUAlarmScalesIn(t *testing.T) {
	for _, suspended := range []bool{false, true} {
		t.Run(map[bool]string{false: "policies act", true: "AlarmNotification suspended"}[suspended], func(t *testing.T) {
			f := newFixture(t)
			f.template(t, "lt-grp", amiOK, "")
			in := f.groupInput(t, "grp", 3)
			in.MinSize = aws.Int32(1)
			_, err := f.c.AutoScaling.CreateAutoScalingGroup(f.ctx, in)
			require.NoError(t, err)
			if suspended {
				_, err := f.c.AutoScaling.SuspendProcesses(f.ctx, &autoscaling.SuspendProcessesInput{
					AutoScalingGroupName: aws.String("grp"), ScalingProcesses: []string{sim.ProcessAlarmNotification}})
				require.NoError(t, err)
			}
			f.cpuAlarm(t, "grp", 50) // the image reports the default 40%
			assert.Equal(t, cwtypes.StateValueInsufficientData, f.alarmState(t, "grp/cpu_scale_down"))
			f.clk.Advance(30 * time.Second) // nothing in service yet: no data
			assert.Equal(t, cwtypes.StateValueInsufficientData, f.alarmState(t, "grp/cpu_scale_down"))
			desired := func() int32 { return aws.ToInt32(f.describe(t, "grp").DesiredCapacity) }
			for desired() == 3 && f.alarmState(t, "grp/cpu_scale_down") != cwtypes.StateValueAlarm {
				f.clk.Advance(time.Second)
			}
			require.Equal(t, cwtypes.StateValueAlarm, f.alarmState(t, "grp/cpu_scale_down"), "below threshold for one period once in service")
			if suspended {
				f.clk.Advance(10 * time.Minute)
				assert.Equal(t, int32(3), desired())
				assert.Zero(t, count(f.activities(t, "grp"), "Terminating EC2 instance", ""))
				return
			}
			assert.Equal(t, int32(2), desired(), "the first invocation")
			f.clk.Advance(59 * time.Second)
			assert.Equal(t, int32(2), desired(), "within the cooldown")
			f.clk.Advance(2 * time.Second)
			assert.Equal(t, int32(1), desired(), "a minute later, still in ALARM: invoked again")
			f.clk.Advance(10 * time.Minute)
			assert.Equal(t, int32(1), desired(), "never below the minimum")
			assert.Equal(t, 2, count(f.activities(t, "grp"), "Terminating EC2 instance", ""))
			for _, a := range f.activities(t, "grp") {
				if strings.HasPrefix(aws.ToString(a.Description), "Terminating") {
					assert.Contains(t, aws.ToString(a.Cause), "a monitor alarm grp/cpu_scale_down in state ALARM triggered policy cpu_scale_down")
				}
			}
		})
	}
}

// https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-capacity-rebalancing.html
// and the user guide's "Rebalancing activities": a launch in a zone short
// of capacity fails (InsufficientInstanceCapacity) and the group launches
// in its other zones; when the zone recovers, an unbalanced group launches
// in it before it terminates an instance of the zone with the most, unless
// AZRebalance is suspended.
func TestZoneRebalance(t *testing.T) {
	for _, suspended := range []bool{false, true} {
		t.Run(map[bool]string{false: "rebalances", true: "AZRebalance suspended"}[suspended], func(t *testing.T) {
			f := newFixture(t)
			require.NoError(t, f.world.Faults().ImpairZone(deployer, region, "us-east-1b", start.Add(3*time.Minute)))
			f.group(t, "grp", amiOK, 4)
			if suspended {
				_, err := f.c.AutoScaling.SuspendProcesses(f.ctx, &autoscaling.SuspendProcessesInput{
					AutoScalingGroupName: aws.String("grp"), ScalingProcesses: []string{sim.ProcessAZRebalance}})
				require.NoError(t, err)
			}
			as := f.activities(t, "grp")
			assert.Equal(t, 4, count(as, "Launching a new EC2 instance: i-", ""))
			assert.Positive(t, count(as, "Launching a new EC2 instance.", astypes.ScalingActivityStatusCodeFailed))
			for _, a := range as {
				if a.StatusCode == astypes.ScalingActivityStatusCodeFailed {
					assert.Contains(t, aws.ToString(a.StatusMessage), "We currently do not have sufficient t2.nano capacity in the Availability Zone you requested (us-east-1b)")
				}
			}
			assert.Equal(t, map[string]int{"us-east-1a": 4}, zones(f.describe(t, "grp")))

			f.clk.Advance(15 * time.Minute)
			g := f.describe(t, "grp")
			terms := count(f.activities(t, "grp"), "Terminating EC2 instance", "")
			if suspended {
				assert.Equal(t, map[string]int{"us-east-1a": 4}, zones(g))
				assert.Zero(t, terms)
				return
			}
			assert.Equal(t, map[string]int{"us-east-1a": 2, "us-east-1b": 2}, zones(g))
			assert.Equal(t, 2, terms, "two rebalance steps, each a launch then a termination")
			assert.Equal(t, int32(4), aws.ToInt32(g.DesiredCapacity))
		})
	}
}

// The user guide's "Rebalancing activities"
// (https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-availability-zone-balanced.html):
// "When rebalancing, Amazon EC2 Auto Scaling launches new instances before
// terminating the old ones, so that rebalancing does not compromise the
// performance or availability of your application." A rebalance step whose
// new instance was scaled in before it came into service terminates no old
// one: the group keeps its desired capacity.
func TestZoneRebalanceScaledInMidStep(t *testing.T) {
	f := newFixture(t)
	require.NoError(t, f.world.Faults().ImpairZone(deployer, region, "us-east-1b", start.Add(3*time.Minute)))
	f.group(t, "grp", amiOK, 2)
	require.Equal(t, map[string]int{"us-east-1a": 2}, zones(f.describe(t, "grp")))
	for len(f.describe(t, "grp").Instances) < 3 {
		f.clk.Advance(time.Second) // the zone recovers: a rebalance step launches in us-east-1b
	}
	require.Equal(t, map[string]int{"us-east-1a": 2, "us-east-1b": 1}, zones(f.describe(t, "grp")))
	_, err := f.c.AutoScaling.UpdateAutoScalingGroup(f.ctx, &autoscaling.UpdateAutoScalingGroupInput{AutoScalingGroupName: aws.String("grp"), DesiredCapacity: aws.Int32(1)})
	require.NoError(t, err)
	f.clk.Advance(15 * time.Minute)
	g := f.describe(t, "grp")
	assert.Equal(t, int32(1), aws.ToInt32(g.DesiredCapacity))
	assert.Len(t, g.Instances, 1, "the step's new instance was scaled in: the step terminates no old one")
}

func zones(g *astypes.AutoScalingGroup) map[string]int {
	out := map[string]int{}
	for _, i := range g.Instances {
		if i.LifecycleState == astypes.LifecycleStateInService || i.LifecycleState == astypes.LifecycleStatePending {
			out[aws.ToString(i.AvailabilityZone)]++
		}
	}
	return out
}

// https://docs.aws.amazon.com/ec2/latest/devguide/eventual-consistency.html:
// "if you run a command to modify or describe the resource that you just
// created, its ID might not have propagated throughout the system, and you
// will get an error responding that the resource does not exist"; Auto
// Scaling shows the same right after CreateAutoScalingGroup (the
// terraform AWS provider retries for it: hashicorp/terraform-provider-aws
// #40088). A hidden group is missing from every kind of describe and "not
// found" to the calls that act on it, for exactly its hidden lookups;
// creates stay authoritative; its instances run all along.
func TestHiddenGroups(t *testing.T) {
	f := newFixture(t)
	require.NoError(t, f.world.Faults().Hide(sim.Hiding{Kind: sim.HideGroups, From: 2, Calls: 3}))
	f.group(t, "grp", amiOK, 1)
	lookups := []struct {
		name    string
		call    func() error
		visible func() bool
	}{
		{"describe by name", nil, func() bool { return f.describe(t, "grp") != nil }},
		{"describe by tag", nil, func() bool {
			out, err := f.c.AutoScaling.DescribeAutoScalingGroups(f.ctx, &autoscaling.DescribeAutoScalingGroupsInput{
				Filters: []astypes.Filter{{Name: aws.String("tag:ReleaseID"), Values: []string{"grp"}}}})
			require.NoError(t, err)
			return len(out.AutoScalingGroups) == 1
		}},
		{"put scaling policy", nil, func() bool {
			_, err := f.c.AutoScaling.PutScalingPolicy(f.ctx, &autoscaling.PutScalingPolicyInput{AutoScalingGroupName: aws.String("grp"),
				PolicyName: aws.String("p"), AdjustmentType: aws.String("ChangeInCapacity"), ScalingAdjustment: aws.Int32(1)})
			if err != nil {
				assertCode(t, err, cloud.CodeValidation)
			}
			return err == nil
		}},
		{"suspend processes", nil, func() bool {
			_, err := f.c.AutoScaling.SuspendProcesses(f.ctx, &autoscaling.SuspendProcessesInput{AutoScalingGroupName: aws.String("grp"),
				ScalingProcesses: []string{sim.ProcessAZRebalance}})
			return err == nil
		}},
		{"describe by name again", nil, func() bool { return f.describe(t, "grp") != nil }},
	}
	var seen []bool
	for _, l := range lookups {
		seen = append(seen, l.visible())
	}
	assert.Equal(t, []bool{true, false, false, false, true}, seen, "hidden for lookups 2, 3 and 4")
	_, err := f.c.AutoScaling.CreateAutoScalingGroup(f.ctx, f.groupInput(t, "grp", 1))
	assertCode(t, err, cloud.CodeAlreadyExists)
	assert.Equal(t, 5, f.world.Lookups(sim.HideGroups)["grp"], "five lookups; the create is none")
	assert.Len(t, f.world.Snapshot().Accounts[0].Groups[0].Instances, 1, "its instance ran all along")
}

// Eventual consistency of launch templates: a hidden template is "not
// found" to DescribeLaunchTemplates by name, left out of filtered
// listings, "does not exist" to a CreateAutoScalingGroup naming it, and
// not found to DeleteLaunchTemplate, which then deletes nothing; a
// CreateLaunchTemplate repeated with its ClientToken returns it
// (https://docs.aws.amazon.com/ec2/latest/devguide/ec2-api-idempotency.html).
func TestHiddenLaunchTemplates(t *testing.T) {
	f := newFixture(t)
	require.NoError(t, f.world.Faults().Hide(sim.Hiding{Kind: sim.HideLaunchTemplates, Calls: 3, Prefix: "lt-"}))
	in := &ec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String("lt-grp"), ClientToken: aws.String("tok-1"),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String(amiOK), InstanceType: ec2types.InstanceTypeT2Nano}}
	first, err := f.c.EC2.CreateLaunchTemplate(f.ctx, in)
	require.NoError(t, err)
	again, err := f.c.EC2.CreateLaunchTemplate(f.ctx, in)
	require.NoError(t, err, "same client token: the same template")
	assert.Equal(t, aws.ToString(first.LaunchTemplate.LaunchTemplateId), aws.ToString(again.LaunchTemplate.LaunchTemplateId))
	in.ClientToken = aws.String("tok-2")
	_, err = f.c.EC2.CreateLaunchTemplate(f.ctx, in)
	assertCode(t, err, cloud.CodeLaunchTemplateNameAlreadyExists)

	_, err = f.c.EC2.DescribeLaunchTemplates(f.ctx, &ec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{"lt-grp"}})
	assertCode(t, err, cloud.CodeLaunchTemplateNameNotFound)
	_, err = f.c.AutoScaling.CreateAutoScalingGroup(f.ctx, f.groupInput(t, "grp", 1))
	assertCode(t, err, cloud.CodeValidation)
	_, err = f.c.EC2.DeleteLaunchTemplate(f.ctx, &ec2.DeleteLaunchTemplateInput{LaunchTemplateName: aws.String("lt-grp")})
	assertCode(t, err, cloud.CodeLaunchTemplateNameNotFound)
	out, err := f.c.EC2.DescribeLaunchTemplates(f.ctx, &ec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{"lt-grp"}})
	require.NoError(t, err, "the fourth lookup sees it: it was never deleted")
	assert.Len(t, out.LaunchTemplates, 1)
	assert.Equal(t, 4, f.world.Lookups(sim.HideLaunchTemplates)["lt-grp"])
}

// https://docs.aws.amazon.com/elasticloadbalancing/latest/APIReference/API_TargetHealth.html:
// unused with Target.NotInUse means "The target group is not used by any
// load balancer or the target is in an Availability Zone that is not
// enabled for its load balancer". A classic load balancer reports an
// instance in a zone it does not route to OutOfService with the
// description AWS gives. DescribeTargetGroups names the load balancers
// routing to a target group; DescribeLoadBalancers their zones.
func TestLoadBalancerZones(t *testing.T) {
	spec := loadWorld(t, "deploy-test.json")
	r := &spec.Accounts[0].Regions[0]
	r.ELBs[0].AvailabilityZones = []string{"us-east-1a"}
	r.LoadBalancers[0].AvailabilityZones = []string{"us-east-1a"}
	r.TargetGroups = append(r.TargetGroups, sim.TargetGroupSpec{Name: "orphan-tg", Port: 80})
	clk := clock.NewVirtual(start)
	w, err := sim.New(clk, spec)
	require.NoError(t, err)
	f := &fixture{clk: clk, world: w, c: w.Clients(deployer, region), ctx: context.Background()}

	tgs, err := f.c.ELBv2.DescribeTargetGroups(f.ctx, &elbv2.DescribeTargetGroupsInput{Names: []string{tgName, "orphan-tg"}})
	require.NoError(t, err)
	require.Len(t, tgs.TargetGroups[0].LoadBalancerArns, 1)
	assert.Empty(t, tgs.TargetGroups[1].LoadBalancerArns)
	lbs, err := f.c.ELBv2.DescribeLoadBalancers(f.ctx, &elbv2.DescribeLoadBalancersInput{LoadBalancerArns: tgs.TargetGroups[0].LoadBalancerArns})
	require.NoError(t, err)
	require.Len(t, lbs.LoadBalancers, 1)
	assert.Equal(t, "us-east-1a", aws.ToString(lbs.LoadBalancers[0].AvailabilityZones[0].ZoneName))
	classic, err := f.c.ELB.DescribeLoadBalancers(f.ctx, &elb.DescribeLoadBalancersInput{LoadBalancerNames: []string{elbName}})
	require.NoError(t, err)
	assert.Equal(t, []string{"us-east-1a"}, classic.LoadBalancerDescriptions[0].AvailabilityZones)
	_, err = f.c.ELBv2.DescribeLoadBalancers(f.ctx, &elbv2.DescribeLoadBalancersInput{Names: []string{"nope"}})
	assertCode(t, err, cloud.CodeLoadBalancerNotFound)

	in := f.groupInput(t, "grp", 2) // one instance in us-east-1a, one in us-east-1b
	in.TargetGroupARNs = append(in.TargetGroupARNs, aws.ToString(tgs.TargetGroups[1].TargetGroupArn))
	f.template(t, "lt-grp", amiOK, "")
	_, err = f.c.AutoScaling.CreateAutoScalingGroup(f.ctx, in)
	require.NoError(t, err)
	f.clk.Advance(5 * time.Minute)
	zoneOf := map[string]string{}
	for _, i := range f.describe(t, "grp").Instances {
		zoneOf[aws.ToString(i.InstanceId)] = aws.ToString(i.AvailabilityZone)
	}
	th, err := f.c.ELBv2.DescribeTargetHealth(f.ctx, &elbv2.DescribeTargetHealthInput{TargetGroupArn: tgs.TargetGroups[0].TargetGroupArn})
	require.NoError(t, err)
	for _, d := range th.TargetHealthDescriptions {
		if zoneOf[aws.ToString(d.Target.Id)] == "us-east-1a" {
			assert.Equal(t, elbv2types.TargetHealthStateEnumHealthy, d.TargetHealth.State)
		} else {
			assert.Equal(t, elbv2types.TargetHealthStateEnumUnused, d.TargetHealth.State)
			assert.Equal(t, elbv2types.TargetHealthReasonEnumNotInUse, d.TargetHealth.Reason)
		}
	}
	orphan, err := f.c.ELBv2.DescribeTargetHealth(f.ctx, &elbv2.DescribeTargetHealthInput{TargetGroupArn: tgs.TargetGroups[1].TargetGroupArn})
	require.NoError(t, err)
	require.Len(t, orphan.TargetHealthDescriptions, 2)
	for _, d := range orphan.TargetHealthDescriptions {
		assert.Equal(t, elbv2types.TargetHealthReasonEnumNotInUse, d.TargetHealth.Reason)
		assert.Contains(t, aws.ToString(d.TargetHealth.Description), "not configured to receive traffic")
	}
	ih, err := f.c.ELB.DescribeInstanceHealth(f.ctx, &elb.DescribeInstanceHealthInput{LoadBalancerName: aws.String(elbName)})
	require.NoError(t, err)
	for _, s := range ih.InstanceStates {
		if zoneOf[aws.ToString(s.InstanceId)] == "us-east-1b" {
			assert.Equal(t, "OutOfService", aws.ToString(s.State))
			assert.Equal(t, balancers.ZoneNotRouted, aws.ToString(s.Description))
		} else {
			assert.Equal(t, "InService", aws.ToString(s.State))
		}
	}
}

// https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DescribeInstanceTypes.html:
// an instance type's supported architectures; a name that is not an
// instance type fails the call (InvalidInstanceType).
func TestDescribeInstanceTypes(t *testing.T) {
	f := newFixture(t)
	out, err := f.c.EC2.DescribeInstanceTypes(f.ctx, &ec2.DescribeInstanceTypesInput{
		InstanceTypes: []ec2types.InstanceType{"t3.small", "t4g.small", "m7gd.large", "c7gn.xlarge", "a1.medium", "t2.nano", "m5.large"}})
	require.NoError(t, err)
	got := map[string][]string{}
	for _, it := range out.InstanceTypes {
		for _, a := range it.ProcessorInfo.SupportedArchitectures {
			got[string(it.InstanceType)] = append(got[string(it.InstanceType)], string(a))
		}
	}
	assert.Equal(t, map[string][]string{
		"t3.small": {"x86_64"}, "t4g.small": {"arm64"}, "m7gd.large": {"arm64"}, "c7gn.xlarge": {"arm64"},
		"a1.medium": {"arm64"}, "t2.nano": {"i386", "x86_64"}, "m5.large": {"x86_64"},
	}, got)
	for _, bad := range []ec2types.InstanceType{"huge", "t9.large", "t3.enormous"} {
		_, err = f.c.EC2.DescribeInstanceTypes(f.ctx, &ec2.DescribeInstanceTypesInput{InstanceTypes: []ec2types.InstanceType{"t3.small", bad}})
		assertCode(t, err, "InvalidInstanceType")
	}
}

// https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-api-permissions.html:
// creating a group needs iam:PassRole for a lifecycle hook's role and for
// the role of the launch template's instance profile. A deploy role
// session may pass only roles under its own project-config's path
// (naming.Passable, its policy's resource), so a root-path hook role is
// refused (AccessDenied naming iam:PassRole); a hook role Auto Scaling
// cannot assume fails the hook's test notification
// (https://docs.aws.amazon.com/autoscaling/ec2/userguide/prepare-for-lifecycle-notifications.html).
func TestPassRoleAndHookTrust(t *testing.T) {
	spec := loadWorld(t, "deploy-test.json")
	acct := &spec.Accounts[0]
	acct.Roles = append(acct.Roles,
		sim.RoleSpec{Name: "root-hooks", Path: "/", TrustServices: []string{naming.HookRoleTrust}},
		sim.RoleSpec{Name: "other-hooks", Path: "/other/project/development/", TrustServices: []string{naming.HookRoleTrust}},
		sim.RoleSpec{Name: "untrusting-hooks", Path: "/coinbase/deploy-test/development/"})
	clk := clock.NewVirtual(start)
	w, err := sim.New(clk, spec)
	require.NoError(t, err)
	conn := w.Connector(deployer, nil, cloud.ConnectorOptions{})
	c, err := conn.Connect(context.Background(), environment.Target{AccountID: deployer, Region: region},
		cloud.Session{Project: "coinbase/deploy-test", Config: "development", ReleaseID: "r1"})
	require.NoError(t, err)
	f := &fixture{clk: clk, world: w, c: c, ctx: context.Background()}
	topic := "arn:aws:sns:us-east-1:111111111111:asg_lifecycle_hooks"
	hook := func(role string) []astypes.LifecycleHookSpecification {
		return []astypes.LifecycleHookSpecification{{LifecycleHookName: aws.String("termhook"),
			LifecycleTransition: aws.String("autoscaling:EC2_INSTANCE_TERMINATING"), NotificationTargetARN: aws.String(topic),
			RoleARN: aws.String(role), HeartbeatTimeout: aws.Int32(300)}}
	}
	own := map[string]string{"ProjectName": "coinbase/deploy-test", "ConfigName": "development", "DeployWith": "ferry"}
	tests := []struct {
		name, role, code string
	}{
		{"path-scoped role that trusts Auto Scaling", "arn:aws:iam::111111111111:role/coinbase/deploy-test/development/asg_lifecycle_hooks", ""},
		{"root-path role", "arn:aws:iam::111111111111:role/root-hooks", cloud.CodeAccessDenied},
		{"another project's role", "arn:aws:iam::111111111111:role/other/project/development/other-hooks", cloud.CodeAccessDenied},
		{"role that does not trust Auto Scaling", "arn:aws:iam::111111111111:role/coinbase/deploy-test/development/untrusting-hooks", cloud.CodeValidation},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := "coinbase/deploy-test/development/g" + string(rune('0'+i))
			_, err := f.c.EC2.CreateLaunchTemplate(f.ctx, templateInput(name, amiOK, nil, own))
			require.NoError(t, err)
			in := groupOf(name, subnetA, own)
			in.LifecycleHookSpecificationList = hook(tt.role)
			_, err = f.c.AutoScaling.CreateAutoScalingGroup(f.ctx, in)
			if tt.code == "" {
				require.NoError(t, err)
				return
			}
			assertCode(t, err, tt.code)
			if tt.code == cloud.CodeAccessDenied {
				assert.Contains(t, err.Error(), "is not authorized to perform: iam:PassRole on resource: "+tt.role)
				assert.Contains(t, err.Error(), "assumed-role/"+naming.DeployRoleName(deployer, region, ""))
			}
		})
	}
	tags, err := f.c.SNS.ListTagsForResource(f.ctx, &sns.ListTagsForResourceInput{ResourceArn: aws.String(topic)})
	require.NoError(t, err)
	require.Len(t, tags.Tags, 2)
	assert.Equal(t, "ConfigName", aws.ToString(tags.Tags[0].Key))
	_, err = f.c.SNS.ListTagsForResource(f.ctx, &sns.ListTagsForResourceInput{ResourceArn: aws.String(topic + "-nope")})
	assertCode(t, err, cloud.CodeResourceNotFound)
}

// crash-after-healthy instances pass their health checks, serve for
// healthy_for_seconds and die; Fleet records when each served.
func TestCrashAfterHealthy(t *testing.T) {
	f := newFixture(t)
	f.template(t, "lt-grp", amiOK, "#!/bin/sh\n"+sim.UserDataMarker+" "+string(sim.CrashAfterHealthy)+"\n")
	_, err := f.c.AutoScaling.CreateAutoScalingGroup(f.ctx, f.groupInput(t, "grp", 1))
	require.NoError(t, err)
	f.clk.Advance(10 * time.Minute)
	var rec sim.GroupRecord
	for _, g := range f.world.Fleet() {
		if g.Name == "grp" {
			rec = g
		}
	}
	require.GreaterOrEqual(t, len(rec.Instances), 2, "died and was replaced")
	first := rec.Instances[0]
	require.False(t, first.Serving.IsZero(), "it served")
	served := first.Until.Sub(first.Serving)
	assert.True(t, served >= 10*time.Second && served <= 50*time.Second, "served %s, within healthy_for_seconds", served)
	assert.True(t, first.ServesAt(first.Serving))
	assert.False(t, first.ServesAt(first.Until))
	assert.False(t, first.Gone.IsZero())
}

func loadWorld(t testing.TB, name string) sim.WorldSpec {
	t.Helper()
	spec, err := sim.Load("../../../testdata/worlds/" + name)
	require.NoError(t, err)
	return spec
}

// SetHook sees every call once recorded, and fails those it returns an
// error for, with no effect; nil removes it.
func TestFaultHook(t *testing.T) {
	f := newFixture(t)
	var seen []string
	f.world.Faults().SetHook(func(c sim.Call) error {
		seen = append(seen, c.Op)
		if c.Op == "CreateLaunchTemplate" {
			return sim.Timeout()
		}
		return nil
	})
	_, err := f.c.EC2.CreateLaunchTemplate(f.ctx, &ec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String("lt-x"),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String(amiOK), InstanceType: "t2.nano"}})
	require.Error(t, err)
	assert.True(t, cloud.IsTransient(err))
	f.world.Faults().SetHook(nil)
	out, err := f.c.EC2.DescribeLaunchTemplates(f.ctx, &ec2.DescribeLaunchTemplatesInput{})
	require.NoError(t, err)
	assert.Empty(t, out.LaunchTemplates, "the failed call had no effect")
	assert.Equal(t, []string{"CreateLaunchTemplate"}, seen)
	assert.Equal(t, 2, f.world.TotalCalls(), "failed calls are counted too")
}

// https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_TerminateInstanceInAutoScalingGroup.html:
// "Terminates the specified instance and optionally adjusts the desired
// group size"; without the decrement the group launches a replacement.
// Decrementing below the minimum size is a ValidationError ("Currently,
// desiredSize equals minSize (N). Terminating instance without replacement
// will violate group's min size constraint", as AWS answers), and so is an
// instance no group manages.
func TestTerminateInstanceInAutoScalingGroup(t *testing.T) {
	f := newFixture(t)
	f.group(t, "grp", amiOK, 2)
	f.clk.Advance(3 * time.Minute)
	g := f.describe(t, "grp")
	require.Len(t, g.Instances, 2)
	victim := aws.ToString(g.Instances[0].InstanceId)

	out, err := f.c.AutoScaling.(*sim.AutoScaling).TerminateInstanceInAutoScalingGroup(f.ctx, &autoscaling.TerminateInstanceInAutoScalingGroupInput{
		InstanceId: aws.String(victim), ShouldDecrementDesiredCapacity: aws.Bool(false),
	})
	require.NoError(t, err)
	assert.Equal(t, "Terminating EC2 instance: "+victim, aws.ToString(out.Activity.Description))
	assert.Contains(t, aws.ToString(out.Activity.Cause), "was taken out of service in response to a user request")
	g = f.describe(t, "grp")
	assert.Equal(t, int32(2), aws.ToInt32(g.DesiredCapacity))
	assert.Equal(t, map[string]int{"Terminating": 1, "Pending": 1, "InService": 1}, lifecycles(g), "replaced at once")
	assert.Equal(t, 1, count(f.activities(t, "grp"), "Terminating EC2 instance: "+victim, ""))

	_, err = f.c.AutoScaling.(*sim.AutoScaling).TerminateInstanceInAutoScalingGroup(f.ctx, &autoscaling.TerminateInstanceInAutoScalingGroupInput{
		InstanceId: aws.String(victim), ShouldDecrementDesiredCapacity: aws.Bool(false),
	})
	assertCode(t, err, cloud.CodeValidation)

	for _, i := range g.Instances {
		if id := aws.ToString(i.InstanceId); id != victim && i.LifecycleState == astypes.LifecycleStateInService {
			out, err = f.c.AutoScaling.(*sim.AutoScaling).TerminateInstanceInAutoScalingGroup(f.ctx, &autoscaling.TerminateInstanceInAutoScalingGroupInput{
				InstanceId: aws.String(id), ShouldDecrementDesiredCapacity: aws.Bool(true),
			})
			require.NoError(t, err)
			assert.Contains(t, aws.ToString(out.Activity.Cause), "shrinking the capacity from 2 to 1")
		}
	}
	assert.Equal(t, int32(1), aws.ToInt32(f.describe(t, "grp").DesiredCapacity))
	_, err = f.c.AutoScaling.UpdateAutoScalingGroup(f.ctx, &autoscaling.UpdateAutoScalingGroupInput{AutoScalingGroupName: aws.String("grp"), MinSize: aws.Int32(1)})
	require.NoError(t, err)
	for _, i := range f.describe(t, "grp").Instances {
		if i.LifecycleState != astypes.LifecycleStateTerminating {
			_, err = f.c.AutoScaling.(*sim.AutoScaling).TerminateInstanceInAutoScalingGroup(f.ctx, &autoscaling.TerminateInstanceInAutoScalingGroupInput{
				InstanceId: i.InstanceId, ShouldDecrementDesiredCapacity: aws.Bool(true),
			})
			assertCode(t, err, cloud.CodeValidation)
			assert.Contains(t, err.Error(), "Currently, desiredSize equals minSize (1)")
		}
	}
}
