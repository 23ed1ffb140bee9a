package sim_test

import (
	"fmt"
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
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
)

// https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_CreateAutoScalingGroup.html
// Names are unique (AlreadyExists); the launch template, subnets, load
// balancers and target groups must exist; min <= desired <= max; hooks
// need an existing topic and role; tags are set on create.
func TestCreateAutoScalingGroupValidation(t *testing.T) {
	f := newFixture(t)
	f.template(t, "lt-grp", amiOK, "")
	f.template(t, "lt-missing-ami", "ami-00000000000000404", "")
	_, err := f.c.AutoScaling.CreateAutoScalingGroup(f.ctx, f.groupInput(t, "grp", 1))
	require.NoError(t, err)
	topic := "arn:aws:sns:us-east-1:111111111111:asg_lifecycle_hooks"
	hookRole := naming.RoleARN(deployer, "asg_lifecycle_hooks")
	tests := []struct {
		name    string
		edit    func(in *autoscaling.CreateAutoScalingGroupInput)
		errCode string
	}{
		{"duplicate name", func(in *autoscaling.CreateAutoScalingGroupInput) {}, cloud.CodeAlreadyExists},
		{"missing launch template", func(in *autoscaling.CreateAutoScalingGroupInput) {
			in.AutoScalingGroupName = aws.String("g1")
			in.LaunchTemplate.LaunchTemplateName = aws.String("nope")
		}, cloud.CodeValidation},
		{"launch template image missing", func(in *autoscaling.CreateAutoScalingGroupInput) {
			in.AutoScalingGroupName = aws.String("g1")
			in.LaunchTemplate.LaunchTemplateName = aws.String("lt-missing-ami")
		}, cloud.CodeValidation},
		{"no launch template", func(in *autoscaling.CreateAutoScalingGroupInput) {
			in.AutoScalingGroupName, in.LaunchTemplate = aws.String("g1"), nil
		}, cloud.CodeValidation},
		{"launch configuration", func(in *autoscaling.CreateAutoScalingGroupInput) {
			in.AutoScalingGroupName, in.LaunchConfigurationName = aws.String("g1"), aws.String("lc")
		}, cloud.CodeValidation},
		{"desired above max", func(in *autoscaling.CreateAutoScalingGroupInput) {
			in.AutoScalingGroupName, in.DesiredCapacity = aws.String("g1"), aws.Int32(10)
		}, cloud.CodeValidation},
		{"max below min", func(in *autoscaling.CreateAutoScalingGroupInput) {
			in.AutoScalingGroupName, in.MinSize, in.MaxSize = aws.String("g1"), aws.Int32(3), aws.Int32(2)
		}, cloud.CodeValidation},
		{"unknown subnet", func(in *autoscaling.CreateAutoScalingGroupInput) {
			in.AutoScalingGroupName, in.VPCZoneIdentifier = aws.String("g1"), aws.String("subnet-0000000000000dead")
		}, cloud.CodeValidation},
		{"unknown load balancer", func(in *autoscaling.CreateAutoScalingGroupInput) {
			in.AutoScalingGroupName, in.LoadBalancerNames = aws.String("g1"), []string{"nope"}
		}, cloud.CodeValidation},
		{"unknown target group", func(in *autoscaling.CreateAutoScalingGroupInput) {
			in.AutoScalingGroupName = aws.String("g1")
			in.TargetGroupARNs = []string{"arn:aws:elasticloadbalancing:us-east-1:111111111111:targetgroup/nope/0000000000000000"}
		}, cloud.CodeValidation},
		{"bad health check type", func(in *autoscaling.CreateAutoScalingGroupInput) {
			in.AutoScalingGroupName, in.HealthCheckType = aws.String("g1"), aws.String("HTTP")
		}, cloud.CodeValidation},
		{"duplicate tag key", func(in *autoscaling.CreateAutoScalingGroupInput) {
			in.AutoScalingGroupName = aws.String("g1")
			in.Tags = append(in.Tags, in.Tags[0])
		}, cloud.CodeValidation},
		{"hook with unknown topic", func(in *autoscaling.CreateAutoScalingGroupInput) {
			in.AutoScalingGroupName = aws.String("g1")
			in.LifecycleHookSpecificationList = []astypes.LifecycleHookSpecification{{LifecycleHookName: aws.String("h"),
				LifecycleTransition: aws.String("autoscaling:EC2_INSTANCE_TERMINATING"), NotificationTargetARN: aws.String(topic + "-nope"), RoleARN: aws.String(hookRole)}}
		}, cloud.CodeValidation},
		{"hook with unknown role", func(in *autoscaling.CreateAutoScalingGroupInput) {
			in.AutoScalingGroupName = aws.String("g1")
			in.LifecycleHookSpecificationList = []astypes.LifecycleHookSpecification{{LifecycleHookName: aws.String("h"),
				LifecycleTransition: aws.String("autoscaling:EC2_INSTANCE_TERMINATING"), NotificationTargetARN: aws.String(topic), RoleARN: aws.String(hookRole + "-nope")}}
		}, cloud.CodeValidation},
		{"valid hook", func(in *autoscaling.CreateAutoScalingGroupInput) {
			in.AutoScalingGroupName = aws.String("g2")
			in.LifecycleHookSpecificationList = []astypes.LifecycleHookSpecification{{LifecycleHookName: aws.String("h"), HeartbeatTimeout: aws.Int32(300),
				LifecycleTransition: aws.String("autoscaling:EC2_INSTANCE_TERMINATING"), NotificationTargetARN: aws.String(topic), RoleARN: aws.String(hookRole)}}
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := f.groupInput(t, "grp", 1)
			tt.edit(in)
			_, err := f.c.AutoScaling.CreateAutoScalingGroup(f.ctx, in)
			if tt.errCode == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, tt.errCode, cloud.ErrorCode(err), err.Error())
			if name := aws.ToString(in.AutoScalingGroupName); name != "grp" {
				assert.Nil(t, f.describe(t, name), "a refused create makes nothing: no group, no instance")
			}
		})
	}
	g := f.describe(t, "grp")
	require.NotNil(t, g)
	require.Len(t, g.Tags, 2)
	assert.Equal(t, "ProjectName", *g.Tags[0].Key)
	assert.True(t, *g.Tags[0].PropagateAtLaunch)
	assert.Equal(t, "grp", *g.Tags[0].ResourceId)
}

// https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-lifecycle.html
// https://docs.aws.amazon.com/elasticloadbalancing/2012-06-01/APIReference/API_DescribeInstanceHealth.html
// https://docs.aws.amazon.com/elasticloadbalancing/latest/APIReference/API_DescribeTargetHealth.html
// Instances go Pending -> InService, then pass the load balancer health
// check; each behavior shows as AWS would show it.
func TestInstanceBehaviors(t *testing.T) {
	type view struct {
		lifecycle map[string]int
		elb       map[string]int // InstanceState.State
		tg        map[string]int // TargetHealth.State
	}
	tests := []struct {
		name     string
		image    string
		userData string
		at       []time.Duration
		want     []view
	}{
		{"healthy", amiOK, "", []time.Duration{0, 3 * time.Minute}, []view{
			{map[string]int{"Pending": 2}, map[string]int{"OutOfService": 2}, map[string]int{"initial": 2}},
			{map[string]int{"InService": 2}, map[string]int{"InService": 2}, map[string]int{"healthy": 2}},
		}},
		{"never healthy", amiBad, "", []time.Duration{0, 10 * time.Minute}, []view{
			{map[string]int{"Pending": 2}, map[string]int{"OutOfService": 2}, map[string]int{"initial": 2}},
			{map[string]int{"InService": 2}, map[string]int{"OutOfService": 2}, map[string]int{"unhealthy": 2}},
		}},
		{"user data marker overrides the AMI", amiOK, "#cloud-config\n#ferry-sim: never-healthy\n", []time.Duration{10 * time.Minute}, []view{
			{map[string]int{"InService": 2}, map[string]int{"OutOfService": 2}, map[string]int{"unhealthy": 2}},
		}},
		{"slow boot", amiOK, "#ferry-sim: slow-boot", []time.Duration{3 * time.Minute, 15 * time.Minute}, []view{
			{map[string]int{"Pending": 2}, map[string]int{"OutOfService": 2}, map[string]int{"initial": 2}},
			{map[string]int{"InService": 2}, map[string]int{"InService": 2}, map[string]int{"healthy": 2}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.template(t, "lt-g", tt.image, tt.userData)
			_, err := f.c.AutoScaling.CreateAutoScalingGroup(f.ctx, f.groupInput(t, "g", 2))
			require.NoError(t, err)
			tg := f.tgARN(t)
			for k, at := range tt.at {
				f.clk.Set(start.Add(at))
				g := f.describe(t, "g")
				eh, err := f.c.ELB.DescribeInstanceHealth(f.ctx, &elb.DescribeInstanceHealthInput{LoadBalancerName: aws.String(elbName)})
				require.NoError(t, err)
				th, err := f.c.ELBv2.DescribeTargetHealth(f.ctx, &elbv2.DescribeTargetHealthInput{TargetGroupArn: aws.String(tg)})
				require.NoError(t, err)
				got := view{lifecycles(g), map[string]int{}, map[string]int{}}
				for _, s := range eh.InstanceStates {
					got.elb[*s.State]++
				}
				for _, d := range th.TargetHealthDescriptions {
					got.tg[string(d.TargetHealth.State)]++
				}
				assert.Equal(t, tt.want[k], got, "at %s", at)
			}
		})
	}
}

// https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-health-checks.html
// https://docs.aws.amazon.com/autoscaling/ec2/userguide/replace-unhealthy-instance.html
// A crash-looping instance dies; the group shows it Terminating, launches
// a replacement at once (so it stays at desired capacity), and the dead
// instance drains from its target group.
func TestCrashLoopReplacesInstances(t *testing.T) {
	f := newFixture(t)
	f.group(t, "grp", amiCrash, 2)
	seen := map[string]bool{}
	terminating, draining := 0, 0
	for at := time.Duration(0); at <= 6*time.Minute; at += 10 * time.Second {
		f.clk.Set(start.Add(at))
		g := f.describe(t, "grp")
		live := 0
		for _, i := range g.Instances {
			seen[*i.InstanceId] = true
			if i.LifecycleState == astypes.LifecycleStateTerminating {
				terminating++
				assert.Equal(t, "Unhealthy", *i.HealthStatus)
			} else {
				live++
			}
		}
		require.Equal(t, 2, live, "at %s the group is at desired capacity", at)
		th, err := f.c.ELBv2.DescribeTargetHealth(f.ctx, &elbv2.DescribeTargetHealthInput{TargetGroupArn: aws.String(f.tgARN(t))})
		require.NoError(t, err)
		for _, d := range th.TargetHealthDescriptions {
			if d.TargetHealth.State == "draining" {
				draining++
			}
		}
	}
	assert.Greater(t, len(seen), 4, "instances were replaced more than once each")
	assert.Positive(t, terminating)
	assert.Positive(t, draining)
}

// https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_DescribeAutoScalingGroups.html
// Filters by tag (tag:Key, tag-key, tag-value; values OR, filters AND),
// unknown names left out, pagination by MaxRecords and NextToken.
func TestDescribeAutoScalingGroups(t *testing.T) {
	f := newFixture(t)
	for i := range 5 {
		f.group(t, fmt.Sprintf("g%d", i), amiOK, 1)
	}
	names := func(in *autoscaling.DescribeAutoScalingGroupsInput) []string {
		var out []string
		p := autoscaling.NewDescribeAutoScalingGroupsPaginator(f.c.AutoScaling, in)
		for p.HasMorePages() {
			page, err := p.NextPage(f.ctx)
			require.NoError(t, err)
			for _, g := range page.AutoScalingGroups {
				out = append(out, *g.AutoScalingGroupName)
			}
		}
		return out
	}
	filter := func(name string, values ...string) astypes.Filter {
		return astypes.Filter{Name: aws.String(name), Values: values}
	}
	tests := []struct {
		name string
		in   *autoscaling.DescribeAutoScalingGroupsInput
		want []string
	}{
		{"all, two per page", &autoscaling.DescribeAutoScalingGroupsInput{MaxRecords: aws.Int32(2)}, []string{"g0", "g1", "g2", "g3", "g4"}},
		{"by names, unknown left out", &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{"g3", "nope", "g1"}}, []string{"g1", "g3"}},
		{"by tag", &autoscaling.DescribeAutoScalingGroupsInput{Filters: []astypes.Filter{filter("tag:ReleaseID", "g2", "g4")}}, []string{"g2", "g4"}},
		{"by two tags", &autoscaling.DescribeAutoScalingGroupsInput{Filters: []astypes.Filter{filter("tag:ReleaseID", "g2", "g4"), filter("tag:ProjectName", "other")}}, nil},
		{"by tag-key", &autoscaling.DescribeAutoScalingGroupsInput{Filters: []astypes.Filter{filter("tag-key", "ReleaseID")}, MaxRecords: aws.Int32(3)}, []string{"g0", "g1", "g2", "g3", "g4"}},
		{"by tag-value", &autoscaling.DescribeAutoScalingGroupsInput{Filters: []astypes.Filter{filter("tag-value", "g0")}}, []string{"g0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, names(tt.in))
		})
	}
	_, err := f.c.AutoScaling.DescribeAutoScalingGroups(f.ctx, &autoscaling.DescribeAutoScalingGroupsInput{NextToken: aws.String("garbage")})
	assert.Equal(t, "InvalidNextToken", cloud.ErrorCode(err))
}

// https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_DescribeAutoScalingGroups.html
// IncludeInstances: "Specifies whether to include information about Amazon
// EC2 instances in the response. When set to true (default), the response
// includes instance details": false leaves the instances out, and nothing
// else of the group.
func TestDescribeAutoScalingGroupsIncludeInstances(t *testing.T) {
	f := newFixture(t)
	f.group(t, "g0", amiOK, 2)
	f.clk.Advance(time.Minute)
	describe := func(include *bool) astypes.AutoScalingGroup {
		out, err := f.c.AutoScaling.DescribeAutoScalingGroups(f.ctx, &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{"g0"}, IncludeInstances: include})
		require.NoError(t, err)
		require.Len(t, out.AutoScalingGroups, 1)
		return out.AutoScalingGroups[0]
	}
	full := describe(nil)
	require.Len(t, full.Instances, 2, "by default the instances are included")
	assert.Equal(t, full, describe(aws.Bool(true)))
	without := describe(aws.Bool(false))
	assert.Nil(t, without.Instances, "no instances with IncludeInstances false")
	full.Instances = nil
	assert.Equal(t, full, without, "everything else as with them")
}

// https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_DescribeAutoScalingGroups.html
// AutoScalingGroupNames: "By default, you can only specify up to 50
// names. You can optionally increase this limit using the MaxRecords
// property" (at most 100): 51 names are refused without MaxRecords, 100
// are described in one call with MaxRecords 100, 101 never.
func TestDescribeAutoScalingGroupsNameLimit(t *testing.T) {
	f := newFixture(t)
	f.group(t, "g0", amiOK, 1)
	names := func(n int) []string {
		out := []string{"g0"}
		for i := 1; i < n; i++ {
			out = append(out, fmt.Sprintf("absent%03d", i))
		}
		return out
	}
	tests := []struct {
		name  string
		names int
		max   *int32
		ok    bool
	}{
		{"50 by default", 50, nil, true},
		{"51 by default", 51, nil, false},
		{"100 with MaxRecords 100", 100, aws.Int32(100), true},
		{"60 with MaxRecords 50", 60, aws.Int32(50), false},
		{"101 with MaxRecords 100", 101, aws.Int32(100), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := f.c.AutoScaling.DescribeAutoScalingGroups(f.ctx, &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: names(tt.names), MaxRecords: tt.max})
			if !tt.ok {
				assert.Equal(t, cloud.CodeValidation, cloud.ErrorCode(err))
				return
			}
			require.NoError(t, err)
			require.Len(t, out.AutoScalingGroups, 1)
			assert.Equal(t, "g0", *out.AutoScalingGroups[0].AutoScalingGroupName)
		})
	}
}

// https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_DeleteAutoScalingGroup.html
// Without ForceDelete a group with instances is refused; with it the
// instances terminate and leave their load balancers, the group shows
// "Delete in progress", then vanishes; its policies go, and the alarms
// whose only actions were those policies.
func TestDeleteAutoScalingGroup(t *testing.T) {
	f := newFixture(t)
	f.group(t, "g", amiOK, 2)
	f.clk.Advance(5 * time.Minute)
	pol, err := f.c.AutoScaling.PutScalingPolicy(f.ctx, &autoscaling.PutScalingPolicyInput{AutoScalingGroupName: aws.String("g"),
		PolicyName: aws.String("cpu_scale_up"), AdjustmentType: aws.String("ChangeInCapacity"), ScalingAdjustment: aws.Int32(2)})
	require.NoError(t, err)
	alarm := func(name string, actions ...string) {
		_, err := f.c.CloudWatch.PutMetricAlarm(f.ctx, &cloudwatch.PutMetricAlarmInput{AlarmName: aws.String(name), AlarmActions: actions,
			MetricName: aws.String("CPUUtilization"), Namespace: aws.String("AWS/EC2"), Statistic: cwtypes.StatisticAverage,
			Period: aws.Int32(300), EvaluationPeriods: aws.Int32(2), Threshold: aws.Float64(25), ComparisonOperator: cwtypes.ComparisonOperatorGreaterThanThreshold})
		require.NoError(t, err)
	}
	alarm("g/cpu_scale_up", *pol.PolicyARN)
	alarm("shared", *pol.PolicyARN, "arn:aws:sns:us-east-1:111111111111:asg_lifecycle_hooks")

	steps := []struct {
		name     string
		do       func() error
		advance  time.Duration
		errCode  string
		status   string // "" and gone=false: present without status
		gone     bool
		elb, tgs map[string]int
	}{
		{name: "without force", do: func() error {
			_, err := f.c.AutoScaling.DeleteAutoScalingGroup(f.ctx, &autoscaling.DeleteAutoScalingGroupInput{AutoScalingGroupName: aws.String("g")})
			return err
		}, errCode: cloud.CodeResourceInUse, elb: map[string]int{"InService": 2}, tgs: map[string]int{"healthy": 2}},
		{name: "with force", do: func() error {
			_, err := f.c.AutoScaling.DeleteAutoScalingGroup(f.ctx, &autoscaling.DeleteAutoScalingGroupInput{AutoScalingGroupName: aws.String("g"), ForceDelete: aws.Bool(true)})
			return err
		}, status: "Delete in progress", elb: map[string]int{}, tgs: map[string]int{"draining": 2}},
		{name: "again while deleting", do: func() error {
			_, err := f.c.AutoScaling.DeleteAutoScalingGroup(f.ctx, &autoscaling.DeleteAutoScalingGroupInput{AutoScalingGroupName: aws.String("g"), ForceDelete: aws.Bool(true)})
			return err
		}, status: "Delete in progress", elb: map[string]int{}, tgs: map[string]int{"draining": 2}},
		{name: "after the instances are gone", advance: 2 * time.Minute, gone: true, elb: map[string]int{}, tgs: map[string]int{}},
		{name: "delete a gone group", do: func() error {
			_, err := f.c.AutoScaling.DeleteAutoScalingGroup(f.ctx, &autoscaling.DeleteAutoScalingGroupInput{AutoScalingGroupName: aws.String("g"), ForceDelete: aws.Bool(true)})
			return err
		}, errCode: cloud.CodeValidation, gone: true, elb: map[string]int{}, tgs: map[string]int{}},
	}
	tg := f.tgARN(t)
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			f.clk.Advance(s.advance)
			if s.do != nil {
				err := s.do()
				if s.errCode != "" {
					assert.Equal(t, s.errCode, cloud.ErrorCode(err))
				} else {
					require.NoError(t, err)
				}
			}
			g := f.describe(t, "g")
			if s.gone {
				assert.Nil(t, g)
			} else {
				require.NotNil(t, g)
				assert.Equal(t, s.status, aws.ToString(g.Status))
			}
			eh, err := f.c.ELB.DescribeInstanceHealth(f.ctx, &elb.DescribeInstanceHealthInput{LoadBalancerName: aws.String(elbName)})
			require.NoError(t, err)
			th, err := f.c.ELBv2.DescribeTargetHealth(f.ctx, &elbv2.DescribeTargetHealthInput{TargetGroupArn: aws.String(tg)})
			require.NoError(t, err)
			gotELB, gotTG := map[string]int{}, map[string]int{}
			for _, st := range eh.InstanceStates {
				gotELB[*st.State]++
			}
			for _, d := range th.TargetHealthDescriptions {
				gotTG[string(d.TargetHealth.State)]++
			}
			assert.Equal(t, s.elb, gotELB)
			assert.Equal(t, s.tgs, gotTG)
		})
	}
	alarms, err := f.c.CloudWatch.DescribeAlarms(f.ctx, &cloudwatch.DescribeAlarmsInput{})
	require.NoError(t, err)
	require.Len(t, alarms.MetricAlarms, 1)
	assert.Equal(t, "shared", *alarms.MetricAlarms[0].AlarmName)
}

// https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_PutScalingPolicy.html
// PutScalingPolicy creates or updates: the same name keeps its ARN.
func TestPutScalingPolicy(t *testing.T) {
	f := newFixture(t)
	f.group(t, "g", amiOK, 1)
	tests := []struct {
		name, group, policy, adjustment string
		errCode                         string
	}{
		{"create", "g", "cpu_scale_up", "ChangeInCapacity", ""},
		{"update", "g", "cpu_scale_up", "ChangeInCapacity", ""},
		{"unknown group", "nope", "cpu_scale_up", "ChangeInCapacity", cloud.CodeValidation},
		{"bad adjustment type", "g", "x", "Lots", cloud.CodeValidation},
	}
	var arns []string
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := f.c.AutoScaling.PutScalingPolicy(f.ctx, &autoscaling.PutScalingPolicyInput{AutoScalingGroupName: aws.String(tt.group),
				PolicyName: aws.String(tt.policy), AdjustmentType: aws.String(tt.adjustment), ScalingAdjustment: aws.Int32(1)})
			if tt.errCode != "" {
				assert.Equal(t, tt.errCode, cloud.ErrorCode(err))
				return
			}
			require.NoError(t, err)
			assert.Contains(t, *out.PolicyARN, ":scalingPolicy:")
			assert.Contains(t, *out.PolicyARN, "policyName/cpu_scale_up")
			arns = append(arns, *out.PolicyARN)
		})
	}
	require.Len(t, arns, 2)
	assert.Equal(t, arns[0], arns[1])
}

// https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_UpdateAutoScalingGroup.html
// A lower desired capacity terminates the surplus, a higher one launches
// more; sizes that break min <= desired <= max are a ValidationError and
// change nothing.
func TestUpdateAutoScalingGroup(t *testing.T) {
	tests := []struct {
		name      string
		in        autoscaling.UpdateAutoScalingGroupInput
		errCode   string
		desired   int32
		lifecycle map[string]int
	}{
		{name: "scale in", in: autoscaling.UpdateAutoScalingGroupInput{DesiredCapacity: aws.Int32(2)},
			desired: 2, lifecycle: map[string]int{"InService": 2, "Terminating": 2}},
		{name: "scale out", in: autoscaling.UpdateAutoScalingGroupInput{MaxSize: aws.Int32(6), DesiredCapacity: aws.Int32(6)},
			desired: 6, lifecycle: map[string]int{"InService": 4, "Pending": 2}},
		{name: "unchanged", in: autoscaling.UpdateAutoScalingGroupInput{},
			desired: 4, lifecycle: map[string]int{"InService": 4}},
		{name: "desired above max", in: autoscaling.UpdateAutoScalingGroupInput{DesiredCapacity: aws.Int32(50)},
			errCode: cloud.CodeValidation, desired: 4, lifecycle: map[string]int{"InService": 4}},
		{name: "missing group", in: autoscaling.UpdateAutoScalingGroupInput{AutoScalingGroupName: aws.String("nope"), DesiredCapacity: aws.Int32(1)},
			errCode: cloud.CodeValidation, desired: 4, lifecycle: map[string]int{"InService": 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.group(t, "g", amiOK, 4)
			f.clk.Advance(5 * time.Minute)
			in := tt.in
			if in.AutoScalingGroupName == nil {
				in.AutoScalingGroupName = aws.String("g")
			}
			_, err := f.c.AutoScaling.UpdateAutoScalingGroup(f.ctx, &in)
			if tt.errCode != "" {
				assert.Equal(t, tt.errCode, cloud.ErrorCode(err))
			} else {
				require.NoError(t, err)
			}
			g := f.describe(t, "g")
			require.NotNil(t, g)
			assert.Equal(t, tt.desired, aws.ToInt32(g.DesiredCapacity))
			assert.Equal(t, tt.lifecycle, lifecycles(g))
		})
	}
}

// https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_LaunchTemplateSpecification.html
// "$Latest" and "$Default" are resolved when Auto Scaling launches, not
// when the group is made: a version added later (CreateLaunchTemplateVersion)
// or a new default (ModifyLaunchTemplate) changes what the next launch
// runs, while a group pinned to a version number keeps launching it.
// https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_CreateLaunchTemplateVersion.html
// A new version with SourceVersion inherits what it does not set.
func TestLaunchTemplateVersionResolvedAtLaunch(t *testing.T) {
	f := newFixture(t)
	ec2c := f.c.EC2.(*sim.EC2) // ferry never changes a template: only the simulation has these
	versions := map[string]string{"latest": "$Latest", "default": "$Default", "pinned": "1"}
	for name, v := range versions {
		f.template(t, "lt-"+name, amiOK, "")
		in := f.groupInput(t, name, 1)
		in.LaunchTemplate.Version = aws.String(v)
		_, err := f.c.AutoScaling.CreateAutoScalingGroup(f.ctx, in)
		require.NoError(t, err)
	}
	for name := range versions {
		out, err := ec2c.CreateLaunchTemplateVersion(f.ctx, &ec2.CreateLaunchTemplateVersionInput{
			LaunchTemplateName: aws.String("lt-" + name), SourceVersion: aws.String("1"),
			LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String(amiBad)},
		})
		require.NoError(t, err)
		assert.Equal(t, int64(2), *out.LaunchTemplateVersion.VersionNumber)
	}
	_, err := ec2c.ModifyLaunchTemplate(f.ctx, &ec2.ModifyLaunchTemplateInput{LaunchTemplateName: aws.String("lt-default"), DefaultVersion: aws.String("2")})
	require.NoError(t, err)
	_, err = ec2c.ModifyLaunchTemplate(f.ctx, &ec2.ModifyLaunchTemplateInput{LaunchTemplateName: aws.String("lt-pinned"), DefaultVersion: aws.String("9")})
	assertCode(t, err, "InvalidLaunchTemplateId.VersionNotFound")
	_, err = ec2c.CreateLaunchTemplateVersion(f.ctx, &ec2.CreateLaunchTemplateVersionInput{
		LaunchTemplateName: aws.String("lt-nope"), LaunchTemplateData: &ec2types.RequestLaunchTemplateData{}})
	assertCode(t, err, "InvalidLaunchTemplateName.NotFoundException")

	for name := range versions {
		_, err := f.c.AutoScaling.UpdateAutoScalingGroup(f.ctx, &autoscaling.UpdateAutoScalingGroupInput{AutoScalingGroupName: aws.String(name), DesiredCapacity: aws.Int32(2)})
		require.NoError(t, err)
	}
	f.clk.Set(start.Add(time.Minute))
	want := map[string]map[string]string{
		"latest":  {"1": amiOK, "2": amiBad},
		"default": {"1": amiOK, "2": amiBad},
		"pinned":  {"1": amiOK},
	}
	for name, v := range versions {
		g := f.describe(t, name)
		assert.Equal(t, v, *g.LaunchTemplate.Version, "%s: the group shows the version as given", name)
		got := map[string]string{}
		for _, i := range g.Instances {
			got[*i.LaunchTemplate.Version] = *i.ImageId
		}
		assert.Equal(t, want[name], got, "%s: each instance shows the version it was launched from", name)
	}
}

// TestHooksBeforeFirstLaunch: lifecycle hooks given to
// CreateAutoScalingGroup are added "to the Auto Scaling group before
// instances are launched" (CreateAutoScalingGroup,
// LifecycleHookSpecificationList, Amazon EC2 Auto Scaling API
// Reference): the very instances the create launches are held by its
// termination hook when scaled in, with no PutLifecycleHook call.
func TestHooksBeforeFirstLaunch(t *testing.T) {
	f := newFixture(t)
	f.template(t, "lt-g", amiOK, "")
	in := f.groupInput(t, "g", 2)
	in.LoadBalancerNames, in.TargetGroupARNs = nil, nil
	in.LifecycleHookSpecificationList = []astypes.LifecycleHookSpecification{{
		LifecycleHookName: aws.String("drain"), LifecycleTransition: aws.String("autoscaling:EC2_INSTANCE_TERMINATING"), HeartbeatTimeout: aws.Int32(300),
	}}
	_, err := f.c.AutoScaling.CreateAutoScalingGroup(f.ctx, in)
	require.NoError(t, err)
	first := f.describe(t, "g").Instances
	require.Len(t, first, 2, "launched by the create")
	f.clk.Advance(5 * time.Minute)
	_, err = f.c.AutoScaling.UpdateAutoScalingGroup(f.ctx, &autoscaling.UpdateAutoScalingGroupInput{AutoScalingGroupName: aws.String("g"), MinSize: aws.Int32(0), DesiredCapacity: aws.Int32(0)})
	require.NoError(t, err)
	g := f.describe(t, "g")
	assert.Equal(t, map[string]int{"Terminating:Wait": 2}, lifecycles(g), "the create's own instances wait on its hook")
	for i, inst := range g.Instances {
		assert.Equal(t, aws.ToString(first[i].InstanceId), aws.ToString(inst.InstanceId))
	}
	for _, c := range f.world.CallLog() {
		assert.NotEqual(t, "PutLifecycleHook", c.Op)
	}
}
