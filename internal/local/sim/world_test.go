package sim_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/local/sim"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestParseWorldErrors(t *testing.T) {
	tests := []struct {
		name string
		json string
		want string
	}{
		{"unknown field", `{"accounts":[],"colour":1}`, `unknown field "colour"`},
		{"trailing data", `{"accounts":[]} {}`, "trailing data"},
		{"bad account id", `{"accounts":[{"id":"12","regions":[]}]}`, `accounts[0].id: "12" is not a 12-digit account id`},
		{"duplicate account", `{"accounts":[{"id":"111111111111","regions":[]},{"id":"111111111111","regions":[]}]}`, "appears twice"},
		{"profile with unknown role", `{"accounts":[{"id":"111111111111","instance_profiles":[{"name":"p","roles":["r"]}],"regions":[]}]}`, `accounts[0].instance_profiles[0].roles[0]: role "r" is not defined`},
		{"bad behavior", `{"accounts":[{"id":"111111111111","regions":[{"name":"us-east-1","amis":[{"id":"ami-1","name":"x","behavior":"flaky"}]}]}]}`, `amis[0].behavior: "flaky" is not one of`},
		{"bad range", `{"defaults":{"boot_seconds":[9,3]},"accounts":[]}`, "defaults.boot_seconds: range [9, 3]"},
		{"range of three", `{"defaults":{"boot_seconds":[1,2,3]},"accounts":[]}`, "a duration range is a number of seconds or [min, max]"},
		{"duplicate subnet", `{"accounts":[{"id":"111111111111","regions":[{"name":"us-east-1","subnets":[{"id":"subnet-1","availability_zone":"us-east-1a"},{"id":"subnet-1","availability_zone":"us-east-1b"}]}]}]}`, `subnet id "subnet-1" already defined at accounts[0].regions[0].subnets[0].id`},
		{"zone of another region", `{"accounts":[{"id":"111111111111","regions":[{"name":"us-east-1","subnets":[{"id":"subnet-1","availability_zone":"eu-west-1a"}]}]}]}`, "is not a zone of us-east-1"},
		{"long target group name", `{"accounts":[{"id":"111111111111","regions":[{"name":"us-east-1","target_groups":[{"name":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}]}]}]}`, "longer than 32"},
		{"alarm on an image the region lacks", `{"accounts":[{"id":"111111111111","regions":[{"name":"us-east-1","alarms":[{"name":"a","image":"ubuntu"}]}]}]}`, `regions[0].alarms[0].image: "ubuntu" is not an AMI of the region`},
		{"alarm too slow", `{"accounts":[{"id":"111111111111","regions":[{"name":"us-east-1","amis":[{"id":"ami-1","name":"x"}],"alarms":[{"name":"a","image":"x","minutes":61}]}]}]}`, `alarms[0].minutes: 61 must be between 0 and 60`},
		{"alarm twice", `{"accounts":[{"id":"111111111111","regions":[{"name":"us-east-1","amis":[{"id":"ami-1","name":"x"}],"alarms":[{"name":"a","image":"x"},{"name":"a","image":"ami-1"}]}]}]}`, `alarm "a" already defined`},
		{"bad trust", `{"accounts":[{"id":"111111111111","bootstrap":[{"region":"us-east-1","trust":["me"]}],"regions":[]}]}`, `trust[0]: "me" is not a 12-digit account id`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := sim.ParseWorld([]byte(tt.json))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	for _, name := range []string{"deploy-test.json", "multi-service.json"} {
		_, err := sim.Load(filepath.Join("..", "..", "..", "testdata", "worlds", name))
		assert.NoError(t, err, name)
	}
	_, err := sim.Load("no-such-world.json")
	assert.ErrorContains(t, err, "no-such-world.json")
}

// TestWorldErrorsSayWhere: a world file that does not decode is one error
// at its place, FILE:LINE:COLUMN as compilers write it (an editor jumps
// there); one that decodes but is wrong lists every problem on a line of
// its own.
func TestWorldErrorsSayWhere(t *testing.T) {
	for _, tc := range []struct {
		name, json, want string
	}{
		{"unknown field", "{\n  \"accounts\": [],\n  \"colour\": 1\n}", `world:3:3: unknown field "colour"`},
		{"syntax", "{\n  \"accounts\": [,]\n}", "world:2:17: invalid character ',' looking for beginning of value"},
		{"type", "{\n  \"accounts\": 5\n}", "world:2:16: accounts: want an array, not a number"},
		{"nested type", "{\"accounts\": [{\n\"id\": 111111111111}]}", "world:2:19: accounts.id: want a string, not a number"},
		{"cut short", "{\n  \"accounts\": [", "world:2:16: unexpected EOF"},
		{"trailing", "{\"accounts\":[]}\n  {}", "world:2:3: trailing data after the world object"},
		{"problems", `{"accounts":[{"id":"12","regions":[]},{"id":"13","regions":[]}]}`,
			"world: 2 problems:\n  accounts[0].id: \"12\" is not a 12-digit account id\n  accounts[1].id: \"13\" is not a 12-digit account id"},
		{"error share", `{"accounts":[{"id":"111111111111","regions":[{"name":"us-east-1","amis":[{"id":"ami-1","name":"a","error_percent":101}]}]}]}`,
			"world: 1 problem:\n  accounts[0].regions[0].amis[0].error_percent: 101 must be between 0 and 100"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sim.ParseWorld([]byte(tc.json))
			assert.EqualError(t, err, tc.want)
		})
	}
	path := filepath.Join(t.TempDir(), "w.json")
	require.NoError(t, os.WriteFile(path, []byte("{\n\n    \"acounts\": []}"), 0o600))
	_, err := sim.Load(path)
	assert.EqualError(t, err, path+`:3:5: unknown field "acounts"`, "Load names the file")
}

func FuzzParseWorld(f *testing.F) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "worlds", "deploy-test.json"))
	require.NoError(f, err)
	f.Add(b)
	f.Add([]byte(`{"defaults":{"boot_seconds":5},"accounts":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, err := sim.ParseWorld(data)
		if err != nil {
			return
		}
		_, err = sim.New(clock.NewVirtual(start), spec)
		assert.NoError(t, err, "a world ParseWorld accepts builds")
	})
}

// https://docs.aws.amazon.com/IAM/latest/APIReference/API_GetInstanceProfile.html
// https://docs.aws.amazon.com/IAM/latest/APIReference/API_GetRole.html
// https://docs.aws.amazon.com/sns/latest/api/API_GetTopicAttributes.html
// https://docs.aws.amazon.com/elasticloadbalancing/2012-06-01/APIReference/API_DescribeTags.html
// https://docs.aws.amazon.com/elasticloadbalancing/latest/APIReference/API_DescribeTags.html
// https://docs.aws.amazon.com/elasticloadbalancing/latest/APIReference/API_DescribeTargetGroups.html
// Lookups ferry validates resources with, and their not-found codes.
func TestLookups(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name    string
		call    func() (string, error)
		want    string
		errCode string
	}{
		{"instance profile path", func() (string, error) {
			out, err := f.c.IAM.GetInstanceProfile(f.ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String("coinbase-deploy-test")})
			if err != nil {
				return "", err
			}
			return *out.InstanceProfile.Path + " " + *out.InstanceProfile.Roles[0].RoleName, nil
		}, "/coinbase/deploy-test/development/web/ coinbase-deploy-test", ""},
		{"unknown instance profile", func() (string, error) {
			_, err := f.c.IAM.GetInstanceProfile(f.ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String("nope")})
			return "", err
		}, "", cloud.CodeNoSuchEntity},
		{"role arn", func() (string, error) {
			out, err := f.c.IAM.GetRole(f.ctx, &iam.GetRoleInput{RoleName: aws.String("asg_lifecycle_hooks")})
			if err != nil {
				return "", err
			}
			return *out.Role.Arn, nil
		}, "arn:aws:iam::111111111111:role/coinbase/deploy-test/development/asg_lifecycle_hooks", ""},
		{"unknown role", func() (string, error) {
			_, err := f.c.IAM.GetRole(f.ctx, &iam.GetRoleInput{RoleName: aws.String("nope")})
			return "", err
		}, "", cloud.CodeNoSuchEntity},
		{"topic", func() (string, error) {
			out, err := f.c.SNS.GetTopicAttributes(f.ctx, &sns.GetTopicAttributesInput{TopicArn: aws.String("arn:aws:sns:us-east-1:111111111111:asg_lifecycle_hooks")})
			if err != nil {
				return "", err
			}
			return out.Attributes["TopicArn"], nil
		}, "arn:aws:sns:us-east-1:111111111111:asg_lifecycle_hooks", ""},
		{"unknown topic", func() (string, error) {
			_, err := f.c.SNS.GetTopicAttributes(f.ctx, &sns.GetTopicAttributesInput{TopicArn: aws.String("arn:aws:sns:us-east-1:111111111111:nope")})
			return "", err
		}, "", cloud.CodeNotFound},
		{"elb tags", func() (string, error) {
			out, err := f.c.ELB.DescribeTags(f.ctx, &elb.DescribeTagsInput{LoadBalancerNames: []string{elbName}})
			if err != nil {
				return "", err
			}
			return fmt.Sprint(len(out.TagDescriptions[0].Tags), " ", *out.TagDescriptions[0].Tags[1].Key, "=", *out.TagDescriptions[0].Tags[1].Value), nil
		}, "3 ProjectName=coinbase/deploy-test", ""},
		{"unknown elb", func() (string, error) {
			_, err := f.c.ELB.DescribeLoadBalancers(f.ctx, &elb.DescribeLoadBalancersInput{LoadBalancerNames: []string{"nope"}})
			return "", err
		}, "", cloud.CodeLoadBalancerNotFound},
		{"target group tags by arn", func() (string, error) {
			out, err := f.c.ELBv2.DescribeTags(f.ctx, &elbv2.DescribeTagsInput{ResourceArns: []string{f.tgARN(t)}})
			if err != nil {
				return "", err
			}
			return *out.TagDescriptions[0].Tags[2].Key + "=" + *out.TagDescriptions[0].Tags[2].Value, nil
		}, "ServiceName=web", ""},
		{"unknown target group", func() (string, error) {
			_, err := f.c.ELBv2.DescribeTargetGroups(f.ctx, &elbv2.DescribeTargetGroupsInput{Names: []string{"nope"}})
			return "", err
		}, "", cloud.CodeTargetGroupNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.call()
			if tt.errCode != "" {
				require.Error(t, err)
				assert.Equal(t, tt.errCode, cloud.ErrorCode(err))
				assert.True(t, cloud.IsNotFoundCode(err))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html
// https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_DescribeAlarms.html
// https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_DeleteAlarms.html
// PutMetricAlarm creates or updates (tags only on create); DescribeAlarms
// by names or prefix; DeleteAlarms deletes the existing names and reports
// a missing one as ResourceNotFound.
func TestAlarms(t *testing.T) {
	f := newFixture(t)
	put := func(name string, threshold float64, tags ...cwtypes.Tag) error {
		_, err := f.c.CloudWatch.PutMetricAlarm(f.ctx, &cloudwatch.PutMetricAlarmInput{AlarmName: aws.String(name),
			MetricName: aws.String("CPUUtilization"), Namespace: aws.String("AWS/EC2"), Statistic: cwtypes.StatisticAverage,
			Period: aws.Int32(300), EvaluationPeriods: aws.Int32(2), Threshold: aws.Float64(threshold),
			ComparisonOperator: cwtypes.ComparisonOperatorGreaterThanThreshold, Tags: tags})
		return err
	}
	names := func(in *cloudwatch.DescribeAlarmsInput) []string {
		out, err := f.c.CloudWatch.DescribeAlarms(f.ctx, in)
		require.NoError(t, err)
		var n []string
		for _, a := range out.MetricAlarms {
			n = append(n, fmt.Sprintf("%s:%v", *a.AlarmName, *a.Threshold))
		}
		return n
	}
	require.NoError(t, put("p/c/web/r1/cpu_scale_up", 25, cwtypes.Tag{Key: aws.String("ReleaseID"), Value: aws.String("r1")}))
	require.NoError(t, put("p/c/web/r1/cpu_scale_down", 15))
	require.NoError(t, put("p/c/web/r1/cpu_scale_up", 30))
	require.NoError(t, put("other", 1))
	_, err := f.c.CloudWatch.PutMetricAlarm(f.ctx, &cloudwatch.PutMetricAlarmInput{AlarmName: aws.String("x")})
	assert.Equal(t, "MissingParameter", cloud.ErrorCode(err))

	assert.Equal(t, []string{"p/c/web/r1/cpu_scale_down:15", "p/c/web/r1/cpu_scale_up:30"}, names(&cloudwatch.DescribeAlarmsInput{AlarmNamePrefix: aws.String("p/c/web/r1/")}))
	assert.Equal(t, []string{"other:1"}, names(&cloudwatch.DescribeAlarmsInput{AlarmNames: []string{"other", "missing"}}))
	_, err = f.c.CloudWatch.DescribeAlarms(f.ctx, &cloudwatch.DescribeAlarmsInput{AlarmNames: []string{"a"}, AlarmNamePrefix: aws.String("a")})
	assert.Equal(t, "InvalidParameterCombination", cloud.ErrorCode(err))

	_, err = f.c.CloudWatch.DeleteAlarms(f.ctx, &cloudwatch.DeleteAlarmsInput{AlarmNames: []string{"other", "missing"}})
	assert.Equal(t, cloud.CodeResourceNotFound, cloud.ErrorCode(err))
	assert.Empty(t, names(&cloudwatch.DescribeAlarmsInput{AlarmNames: []string{"other"}}), "the existing name was deleted")
	snap := f.world.Snapshot()
	assert.Equal(t, map[string]string{"ReleaseID": "r1"}, snap.Accounts[0].Alarms[1].Tags, "tags set on create survive an update")
}

// Fault injection: the Nth call, every call up to Times, one account; the
// errors are what Classify treats as transient or not.
func TestFaults(t *testing.T) {
	tests := []struct {
		name      string
		rule      sim.Rule
		calls     int
		wantFail  []int // 1-based call numbers that fail
		retryable bool
		code      string
	}{
		{"second call throttled", sim.Rule{Op: "DescribeAutoScalingGroups", Nth: 2, Err: sim.Throttling()}, 4, []int{2}, true, "Throttling"},
		{"every call 500, twice", sim.Rule{Op: "DescribeAutoScalingGroups", Times: 2, Err: sim.InternalError()}, 4, []int{1, 2}, true, "InternalError"},
		{"every call denied", sim.Rule{Op: "DescribeAutoScalingGroups", Err: sim.AccessDenied()}, 3, []int{1, 2, 3}, false, "AccessDenied"},
		{"timeout", sim.Rule{Op: "DescribeAutoScalingGroups", Nth: 1, Err: sim.Timeout()}, 2, []int{1}, true, ""},
		{"other account only", sim.Rule{Op: "DescribeAutoScalingGroups", Account: "222222222222", Err: sim.AccessDenied()}, 2, nil, false, ""},
		{"other operation", sim.Rule{Op: "CreateAutoScalingGroup", Err: sim.AccessDenied()}, 2, nil, false, ""},
		{"other service", sim.Rule{Op: "DescribeAutoScalingGroups", Service: "EC2", Err: sim.AccessDenied()}, 2, nil, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			id, err := f.world.Faults().Add(tt.rule)
			require.NoError(t, err)
			var failed []int
			for n := 1; n <= tt.calls; n++ {
				_, err := f.c.AutoScaling.DescribeAutoScalingGroups(f.ctx, &autoscaling.DescribeAutoScalingGroupsInput{})
				if err == nil {
					continue
				}
				failed = append(failed, n)
				var opErr *smithy.OperationError
				require.True(t, errors.As(err, &opErr), "errors are wrapped like the SDK's")
				assert.Equal(t, "DescribeAutoScalingGroups", opErr.OperationName)
				assert.Equal(t, tt.code, cloud.ErrorCode(err))
				assert.Equal(t, tt.retryable, failure.NameOf(cloud.Classify("op", err)) == failure.NameRetryable)
				if tt.code == "" {
					assert.ErrorIs(t, err, context.DeadlineExceeded)
				}
			}
			assert.Equal(t, tt.wantFail, failed)
			assert.Equal(t, len(tt.wantFail), f.world.Faults().Applied(id))
			assert.Equal(t, tt.calls, f.world.Calls()["DescribeAutoScalingGroups"], "faulted calls are counted")
		})
	}
	f := newFixture(t)
	_, err := f.world.Faults().Add(sim.Rule{Op: "X"})
	assert.Error(t, err, "a rule needs an error")
}

// https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-eventual-consistency.html
// (eventual consistency of the Auto Scaling API): a new group may be
// invisible to the next describes; creating it again is AlreadyExists.
func TestHideNewGroups(t *testing.T) {
	f := newFixture(t)
	f.world.Faults().HideNewGroups(2)
	f.group(t, "grp", amiOK, 1)
	assert.Nil(t, f.describe(t, "grp"))
	assert.Nil(t, f.describe(t, "grp"))
	_, err := f.c.AutoScaling.CreateAutoScalingGroup(f.ctx, f.groupInput(t, "grp", 1))
	assert.Equal(t, cloud.CodeAlreadyExists, cloud.ErrorCode(err))
	assert.NotNil(t, f.describe(t, "grp"))
}

func TestCallsAndLog(t *testing.T) {
	f := newFixture(t)
	f.group(t, "grp", amiOK, 1)
	f.describe(t, "grp")
	f.describe(t, "grp")
	assert.Equal(t, map[string]int{"CreateLaunchTemplate": 1, "DescribeTargetGroups": 1, "CreateAutoScalingGroup": 1, "DescribeAutoScalingGroups": 2}, f.world.Calls())
	var ops []string
	for _, c := range f.world.CallLog() {
		ops = append(ops, c.Op)
		assert.Equal(t, deployer, c.Account)
	}
	assert.Equal(t, []string{"CreateLaunchTemplate", "DescribeTargetGroups", "CreateAutoScalingGroup", "DescribeAutoScalingGroups", "DescribeAutoScalingGroups"}, ops)
	f.world.ResetCalls()
	assert.Empty(t, f.world.Calls())
	assert.Zero(t, f.world.TotalCalls())
}

// The snapshot of a deploy in progress, against a golden file (refresh
// with go test ./internal/local/sim -run TestSnapshotGolden -update).
func TestSnapshotGolden(t *testing.T) {
	f := newFixture(t)
	f.group(t, "coinbase/deploy-test/development/web/r1", amiOK, 2)
	f.group(t, "coinbase/deploy-test/development/web/r2", amiBad, 1)
	f.clk.Advance(100 * time.Second)
	_, err := f.c.AutoScaling.DeleteAutoScalingGroup(f.ctx, &autoscaling.DeleteAutoScalingGroupInput{AutoScalingGroupName: aws.String("coinbase/deploy-test/development/web/r1"), ForceDelete: aws.Bool(true)})
	require.NoError(t, err)
	got, err := json.MarshalIndent(f.world.Snapshot(), "", "  ")
	require.NoError(t, err)
	golden := filepath.Join("testdata", "snapshot.golden.json")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(golden, append(got, '\n'), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(got))
}

// The world is safe for concurrent use (run with -race).
func TestConcurrentUse(t *testing.T) {
	f := newFixture(t)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("grp%d", i)
			f.template(t, "lt-"+name, amiOK, "")
			_, err := f.c.AutoScaling.CreateAutoScalingGroup(f.ctx, f.groupInput(t, name, 3))
			assert.NoError(t, err)
			for range 10 {
				f.clk.Advance(10 * time.Second)
				_ = f.describe(t, name)
				_, err := f.c.ELB.DescribeInstanceHealth(f.ctx, &elb.DescribeInstanceHealthInput{LoadBalancerName: aws.String(elbName)})
				assert.NoError(t, err)
			}
		}()
	}
	wg.Wait()
	assert.Len(t, f.world.Snapshot().Accounts[0].Groups, 8)
}
