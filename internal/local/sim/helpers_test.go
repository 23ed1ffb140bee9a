package sim_test

import (
	"context"
	"encoding/base64"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/local/sim"
)

const (
	deployer = "111111111111"
	region   = "us-east-1"
	amiOK    = "ami-0000000000000ab01"
	amiBad   = "ami-0000000000000ab02"
	amiCrash = "ami-0000000000000ab03"
	subnetA  = "subnet-00000000000000a01"
	subnetB  = "subnet-00000000000000b01"
	elbName  = "coinbase-deploy-test-web-elb"
	tgName   = "coinbase-deploy-test-web-tg"
)

var start = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// fixture is a world loaded from deploy-test.json with a virtual clock and
// the unauthenticated clients of the deployer's account.
type fixture struct {
	clk   *clock.Virtual
	world *sim.World
	c     *cloud.Clients
	ctx   context.Context
}

func newFixture(t testing.TB, mutate ...func(*sim.WorldSpec)) *fixture {
	t.Helper()
	spec, err := sim.Load(filepath.Join("..", "..", "..", "testdata", "worlds", "deploy-test.json"))
	require.NoError(t, err)
	for _, m := range mutate {
		m(&spec)
	}
	clk := clock.NewVirtual(start)
	w, err := sim.New(clk, spec)
	require.NoError(t, err)
	return &fixture{clk: clk, world: w, c: w.Clients(deployer, region), ctx: context.Background()}
}

// template creates a launch template for image with optional user data.
func (f *fixture) template(t testing.TB, name, image, userData string) {
	t.Helper()
	data := &ec2types.RequestLaunchTemplateData{ImageId: aws.String(image), InstanceType: ec2types.InstanceTypeT2Nano}
	if userData != "" {
		data.UserData = aws.String(base64.StdEncoding.EncodeToString([]byte(userData)))
	}
	_, err := f.c.EC2.CreateLaunchTemplate(f.ctx, &ec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String(name), LaunchTemplateData: data})
	require.NoError(t, err)
}

func (f *fixture) tgARN(t testing.TB) string {
	t.Helper()
	out, err := f.c.ELBv2.DescribeTargetGroups(f.ctx, &elbv2.DescribeTargetGroupsInput{Names: []string{tgName}})
	require.NoError(t, err)
	return *out.TargetGroups[0].TargetGroupArn
}

// groupInput is a valid CreateAutoScalingGroup input for a group using
// template "lt-<name>", attached to the ELB and target group.
func (f *fixture) groupInput(t testing.TB, name string, desired int32) *autoscaling.CreateAutoScalingGroupInput {
	return &autoscaling.CreateAutoScalingGroupInput{
		AutoScalingGroupName: aws.String(name),
		LaunchTemplate:       &astypes.LaunchTemplateSpecification{LaunchTemplateName: aws.String("lt-" + name), Version: aws.String("$Latest")},
		MinSize:              aws.Int32(0), MaxSize: aws.Int32(desired + 2), DesiredCapacity: aws.Int32(desired),
		VPCZoneIdentifier: aws.String(subnetA + "," + subnetB),
		LoadBalancerNames: []string{elbName}, TargetGroupARNs: []string{f.tgARN(t)},
		HealthCheckType: aws.String("ELB"),
		Tags: []astypes.Tag{
			{Key: aws.String("ProjectName"), Value: aws.String("coinbase/deploy-test"), PropagateAtLaunch: aws.Bool(true)},
			{Key: aws.String("ReleaseID"), Value: aws.String(name), PropagateAtLaunch: aws.Bool(true)},
		},
	}
}

// group creates a template and a group of desired instances from image.
func (f *fixture) group(t testing.TB, name, image string, desired int32) {
	t.Helper()
	f.template(t, "lt-"+name, image, "")
	_, err := f.c.AutoScaling.CreateAutoScalingGroup(f.ctx, f.groupInput(t, name, desired))
	require.NoError(t, err)
}

func (f *fixture) describe(t testing.TB, name string) *astypes.AutoScalingGroup {
	t.Helper()
	out, err := f.c.AutoScaling.DescribeAutoScalingGroups(f.ctx, &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{name}})
	require.NoError(t, err)
	if len(out.AutoScalingGroups) == 0 {
		return nil
	}
	return &out.AutoScalingGroups[0]
}

// lifecycles counts a group's instances per lifecycle state.
func lifecycles(g *astypes.AutoScalingGroup) map[string]int {
	m := map[string]int{}
	for _, i := range g.Instances {
		m[string(i.LifecycleState)]++
	}
	return m
}

// assertCode asserts that err carries the AWS error code.
func assertCode(t testing.TB, err error, code string) {
	t.Helper()
	if assert.Error(t, err, "want %s", code) {
		assert.Equal(t, code, cloud.ErrorCode(err), err.Error())
	}
}
