package conformance

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/proof/reliability"
)

// mixedRefusal is a mixed instances policy AWS refuses, as the Auto
// Scaling API Reference says (the page named by each).
type mixedRefusal struct {
	name string
	// overrides are the policy's LaunchTemplateOverrides.
	overrides []astypes.LaunchTemplateOverrides
	// percent is its OnDemandPercentageAboveBaseCapacity.
	percent int32
	// sdkRefuses says the SDK refuses it before sending (a required
	// member missing: smithy.InvalidParamsError), so no server sees it.
	sdkRefuses bool
}

// mixedRefusals: one policy past each bound ferry's release validation
// checks, from https://docs.aws.amazon.com/autoscaling/ec2/APIReference/.
func mixedRefusals() []mixedRefusal {
	req := func(edit func(q *astypes.InstanceRequirements)) []astypes.LaunchTemplateOverrides {
		q := &astypes.InstanceRequirements{VCpuCount: &astypes.VCpuCountRequest{Min: aws.Int32(2), Max: aws.Int32(8)}, MemoryMiB: &astypes.MemoryMiBRequest{Min: aws.Int32(4096)}}
		edit(q)
		return []astypes.LaunchTemplateOverrides{{InstanceRequirements: q}}
	}
	var types41, filters401 []string
	for i := range 401 {
		filters401 = append(filters401, fmt.Sprintf("x%d.*", i))
	}
	var overrides41 []astypes.LaunchTemplateOverrides
	for i := range 41 {
		types41 = append(types41, fmt.Sprintf("m5.%dxlarge", i+1))
		overrides41 = append(overrides41, astypes.LaunchTemplateOverrides{InstanceType: aws.String(types41[i])})
	}
	five := req(func(*astypes.InstanceRequirements) {})
	for range 4 {
		five = append(five, five[0])
	}
	return []mixedRefusal{
		// API_LaunchTemplateOverrides.html: "up to 40 instance types",
		// "up to four separate sets of instance requirements",
		// WeightedCapacity "Value must be in the range of 1-999".
		{name: "41 instance types", overrides: overrides41},
		{name: "5 sets of requirements", overrides: five},
		{name: "weight 1000", overrides: []astypes.LaunchTemplateOverrides{
			{InstanceType: aws.String("m5.large"), WeightedCapacity: aws.String("1000")}, {InstanceType: aws.String("c5.large"), WeightedCapacity: aws.String("1")}}},
		// API_InstancesDistribution.html: OnDemandPercentageAboveBaseCapacity
		// is a percentage ("Valid Range: Minimum value of 0. Maximum value
		// of 100").
		{name: "On-Demand percentage 101", percent: 101, overrides: []astypes.LaunchTemplateOverrides{
			{InstanceType: aws.String("m5.large")}, {InstanceType: aws.String("c5.large")}}},
		// API_VCpuCountRequest.html: Min required, "Valid Range: Minimum
		// value of 0".
		{name: "vcpu min -1", overrides: req(func(q *astypes.InstanceRequirements) { q.VCpuCount.Min = aws.Int32(-1) })},
		{name: "vcpu max below min", overrides: req(func(q *astypes.InstanceRequirements) { q.VCpuCount.Max = aws.Int32(1) })},
		// API_InstanceRequirements.html: VCpuCount and MemoryMiB required;
		// AllowedInstanceTypes "Maximum number of 400 items", each
		// "Pattern: [a-zA-Z0-9\.\*\-]+", not with ExcludedInstanceTypes;
		// price protection "Minimum value of 0", only one of the two Spot
		// thresholds.
		{name: "memory missing", overrides: req(func(q *astypes.InstanceRequirements) { q.MemoryMiB = nil }), sdkRefuses: true},
		{name: "401 allowed types", overrides: req(func(q *astypes.InstanceRequirements) { q.AllowedInstanceTypes = filters401 })},
		{name: "a filter with a space", overrides: req(func(q *astypes.InstanceRequirements) { q.ExcludedInstanceTypes = []string{"m5 *"} })},
		{name: "allowed and excluded types", overrides: req(func(q *astypes.InstanceRequirements) {
			q.AllowedInstanceTypes, q.ExcludedInstanceTypes = []string{"m5.*"}, []string{"t3.*"}
		})},
		{name: "Spot price protection -1", overrides: req(func(q *astypes.InstanceRequirements) { q.SpotMaxPricePercentageOverLowestPrice = aws.Int32(-1) })},
		{name: "both Spot price protections", overrides: req(func(q *astypes.InstanceRequirements) {
			q.SpotMaxPricePercentageOverLowestPrice, q.MaxSpotPriceAsPercentageOfOptimalOnDemandPrice = aws.Int32(10), aws.Int32(10)
		})},
	}
}

// TestMixedRefusalsAgainstMoto sends each mixedRefusal, as ferry's SDK
// client serializes it, to CreateAutoScalingGroup of the simulation and
// of moto_server. The simulation refuses each with AWS's ValidationError.
// moto 5.2.1 validates none of them (its CreateAutoScalingGroup stores
// the MixedInstancesPolicy as given: moto autoscaling/models.py checks
// only the launch template it names), so it cannot confirm the
// simulation here: these refusals rest on the API Reference alone, and
// the test records that moto accepts each, so a moto that starts refusing
// one shows up here as a conformance case to assert. A missing required
// member (MemoryMiB) never reaches a server: ferry's SDK client refuses it
// (InvalidParamsError) where the simulation, called in-process, answers
// AWS's ValidationError. Without moto_server on PATH it checks the
// simulation alone.
func TestMixedRefusalsAgainstMoto(t *testing.T) {
	ctx := context.Background()
	simAS, simInput := simGroups(t)
	var motoAS *autoscaling.Client // nil without moto
	var motoInput func(name string) *autoscaling.CreateAutoScalingGroupInput
	m, err := StartMoto(ctx)
	switch {
	case errors.Is(err, ErrNoMoto):
		t.Logf("checking the simulation alone: %v", err)
	case err != nil:
		require.NoError(t, err)
	default:
		t.Cleanup(func() { _ = m.Close() })
		motoAS, motoInput = motoGroups(ctx, t, m)
	}
	for i, tc := range mixedRefusals() {
		t.Run(tc.name, func(t *testing.T) {
			name := fmt.Sprintf("mixed-%d", i)
			in := withPolicy(simInput(name), tc)
			_, err := simAS.CreateAutoScalingGroup(ctx, in)
			require.Error(t, err, "the simulation refuses it, as AWS documents")
			assert.Equal(t, cloud.CodeValidation, cloud.ErrorCode(err), err.Error())
			if motoAS == nil {
				return
			}
			_, err = motoAS.CreateAutoScalingGroup(ctx, withPolicy(motoInput(name), tc))
			if tc.sdkRefuses {
				var invalid smithy.InvalidParamsError
				assert.ErrorAs(t, err, &invalid, "the SDK refuses it before sending")
				return
			}
			assert.NoError(t, err, "moto 5.2.1 accepts what AWS refuses; if it refuses it now, assert its answer here")
		})
	}
}

// withPolicy is in with tc's mixed instances policy over its launch
// template.
func withPolicy(in *autoscaling.CreateAutoScalingGroupInput, tc mixedRefusal) *autoscaling.CreateAutoScalingGroupInput {
	in.MixedInstancesPolicy = &astypes.MixedInstancesPolicy{
		LaunchTemplate:        &astypes.LaunchTemplate{LaunchTemplateSpecification: in.LaunchTemplate, Overrides: tc.overrides},
		InstancesDistribution: &astypes.InstancesDistribution{OnDemandPercentageAboveBaseCapacity: aws.Int32(tc.percent), OnDemandAllocationStrategy: aws.String("lowest-price")},
	}
	in.LaunchTemplate = nil
	return in
}

// simGroups are the simulation's Auto Scaling (testdata/worlds/
// deploy-test.json) and a group input over a launch template made there.
func simGroups(t *testing.T) (cloud.AutoScaling, func(name string) *autoscaling.CreateAutoScalingGroupInput) {
	root, err := reliability.FindRoot(".")
	require.NoError(t, err)
	spec, err := sim.Load(filepath.Join(root, "testdata", "worlds", "deploy-test.json"))
	require.NoError(t, err)
	w, err := sim.New(clock.NewVirtual(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)), spec)
	require.NoError(t, err)
	c := w.Clients("111111111111", Region)
	_, err = c.EC2.CreateLaunchTemplate(t.Context(), &ec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String("lt-mixed"),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String("ami-0000000000000ab01"), InstanceType: "m5.large"}})
	require.NoError(t, err)
	return c.AutoScaling, groupInput("lt-mixed", "subnet-00000000000000a01")
}

// motoGroups are moto's Auto Scaling and a group input over a launch
// template made there, in the default VPC's first subnet.
func motoGroups(ctx context.Context, t *testing.T, m *Moto) (*autoscaling.Client, func(name string) *autoscaling.CreateAutoScalingGroupInput) {
	cfg := motoConfig(m.URL, "")
	ec2c := ec2.NewFromConfig(cfg)
	subnets, err := ec2c.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{})
	require.NoError(t, err)
	require.NotEmpty(t, subnets.Subnets, "moto's default VPC has subnets")
	images, err := ec2c.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{"amazon"}})
	require.NoError(t, err)
	require.NotEmpty(t, images.Images, "moto has Amazon's images")
	_, err = ec2c.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String("lt-mixed"),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: images.Images[0].ImageId, InstanceType: "m5.large"}})
	require.NoError(t, err)
	return autoscaling.NewFromConfig(cfg), groupInput("lt-mixed", aws.ToString(subnets.Subnets[0].SubnetId))
}

// groupInput makes a CreateAutoScalingGroup input of no instances over
// the launch template in the subnet.
func groupInput(template, subnet string) func(name string) *autoscaling.CreateAutoScalingGroupInput {
	return func(name string) *autoscaling.CreateAutoScalingGroupInput {
		return &autoscaling.CreateAutoScalingGroupInput{AutoScalingGroupName: aws.String(name),
			LaunchTemplate: &astypes.LaunchTemplateSpecification{LaunchTemplateName: aws.String(template), Version: aws.String("$Latest")},
			MinSize:        aws.Int32(0), MaxSize: aws.Int32(2), DesiredCapacity: aws.Int32(0), VPCZoneIdentifier: aws.String(subnet)}
	}
}
