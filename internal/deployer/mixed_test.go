package deployer

import (
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/release"
)

// TestMixedGroup: the group of testdata/spot-fleet-release.json's service
// is created with its mixed instances policy as CreateAutoScalingGroup
// takes it (Auto Scaling API Reference, MixedInstancesPolicy: the launch
// template's overrides with WeightedCapacity, the InstancesDistribution
// with AWS's defaults filled in) and CapacityRebalance; plan shows it.
func TestMixedGroup(t *testing.T) {
	r, err := release.ReadFile(filepath.Join("..", "..", "testdata", "spot-fleet-release.json"))
	require.NoError(t, err)
	r.ReleaseID = "r1"
	m := mixedOf(r.Services["web"])
	require.NotNil(t, m)
	require.Len(t, m.Overrides, 3)
	assert.Equal(t, "m5.xlarge", aws.ToString(m.Overrides[1].InstanceType))
	assert.Equal(t, "2", aws.ToString(m.Overrides[1].WeightedCapacity))
	assert.Equal(t, 1, m.OnDemandBaseCapacity)
	assert.Equal(t, 25, m.OnDemandPercentageAboveBase)
	assert.Equal(t, "price-capacity-optimized", m.SpotAllocationStrategy)
	assert.Equal(t, "prioritized", m.OnDemandAllocationStrategy, "AWS's default with instance types")
	assert.True(t, m.CapacityRebalance)
	assert.Nil(t, mixedOf(&release.Service{InstanceType: "t3.micro"}))

	pg, err := plannedGroup(r, &execution.State{}, "web", nil)
	require.NoError(t, err)
	assert.Equal(t, "m5.large=1,m5.xlarge=2,c5.xlarge=2 on-demand 1+25% spot price-capacity-optimized rebalance", pg.InstanceType)

	q := 4
	r.Services["web"].MixedInstances = &release.MixedInstances{Overrides: []release.Override{{Requirements: &release.InstanceRequirements{
		VCPU: &release.IntRange{Min: 2, Max: &q}, MemoryMiB: &release.IntRange{Min: 4096}, CPUManufacturers: []string{"amd"}}}}}
	m = mixedOf(r.Services["web"])
	req := m.Overrides[0].InstanceRequirements
	require.NotNil(t, req)
	assert.Equal(t, int32(2), aws.ToInt32(req.VCpuCount.Min))
	assert.Equal(t, int32(4), aws.ToInt32(req.VCpuCount.Max))
	assert.Nil(t, req.MemoryMiB.Max)
	assert.Equal(t, "lowest-price", m.OnDemandAllocationStrategy, "AWS's default, and only choice, with instance requirements")
}

// TestRebalancedTerminationsAreNoLoss: an instance Capacity Rebalancing
// terminates once its replacement is in service ("Capacity
// Rebalancing", Auto Scaling User Guide) takes no capacity away, so it
// does not count against max_terms; any other termination does, and
// either restarts the stability window (health.Track sees it
// terminating).
func TestRebalancedTerminationsAreNoLoss(t *testing.T) {
	r, err := release.ReadFile(filepath.Join("..", "..", "testdata", "spot-fleet-release.json"))
	require.NoError(t, err)
	for _, tc := range []struct {
		name                                 string
		terminating, rebalancing, terminated int
		halt                                 bool
	}{
		{"one rebalanced", 1, 1, 0, false},
		{"one rebalanced, one lost", 2, 1, 0, true},
		{"one lost before", 1, 1, 1, true},
		{"none", 0, 0, 0, false},
	} {
		err := checkTerminations(r, map[string]execution.ServiceHealth{"web": {Terminating: tc.terminating, Rebalancing: tc.rebalancing, Terminated: tc.terminated}})
		assert.Equal(t, tc.halt, err != nil, "%s: %v", tc.name, err)
	}
}

// TestMixedDriftReadsAWSDefaults: a group's policy is compared with the
// release's with AWS's defaults for what either leaves out
// (InstancesDistribution and InstanceRequirements, Auto Scaling API
// Reference: Spot lowest-price across 2 pools, burstable excluded, price
// protection 100% for Spot and 20% for On-Demand), and a group with no
// policy, or one where the release names an instance type, is drift.
func TestMixedDriftReadsAWSDefaults(t *testing.T) {
	four := 4
	svc := &release.Service{MixedInstances: &release.MixedInstances{Overrides: []release.Override{{Requirements: &release.InstanceRequirements{
		VCPU: &release.IntRange{Min: 2, Max: &four}, MemoryMiB: &release.IntRange{Min: 4096}}}}, SpotAllocationStrategy: release.SpotLowestPrice}}
	described := &asgtypes.MixedInstancesPolicy{
		LaunchTemplate: &asgtypes.LaunchTemplate{Overrides: []asgtypes.LaunchTemplateOverrides{{InstanceRequirements: &asgtypes.InstanceRequirements{
			VCpuCount: &asgtypes.VCpuCountRequest{Min: aws.Int32(2), Max: aws.Int32(4)}, MemoryMiB: &asgtypes.MemoryMiBRequest{Min: aws.Int32(4096)},
			BurstablePerformance: asgtypes.BurstablePerformanceExcluded, SpotMaxPricePercentageOverLowestPrice: aws.Int32(100), OnDemandMaxPricePercentageOverLowestPrice: aws.Int32(20),
		}}}},
		InstancesDistribution: &asgtypes.InstancesDistribution{SpotAllocationStrategy: aws.String("lowest-price"), SpotInstancePools: aws.Int32(2)},
	}
	assert.Empty(t, mixedDrift(asgtypes.AutoScalingGroup{MixedInstancesPolicy: described}, svc), "AWS's defaults are the release's")

	more := *described.LaunchTemplate.Overrides[0].InstanceRequirements
	more.MemoryMiB = &asgtypes.MemoryMiBRequest{Min: aws.Int32(8192)}
	changed := &asgtypes.MixedInstancesPolicy{LaunchTemplate: &asgtypes.LaunchTemplate{Overrides: []asgtypes.LaunchTemplateOverrides{{InstanceRequirements: &more}}},
		InstancesDistribution: described.InstancesDistribution}
	assert.Equal(t, []string{"overrides [{vcpu 2-4 memory_mib 8192- cpu [] generations [] burstable excluded allowed [] excluded [] spot_max_price +100% on_demand_max_price +20%}], " +
		"not the release's [{vcpu 2-4 memory_mib 4096- cpu [] generations [] burstable excluded allowed [] excluded [] spot_max_price +100% on_demand_max_price +20%}]"},
		mixedDrift(asgtypes.AutoScalingGroup{MixedInstancesPolicy: changed}, svc))

	assert.Equal(t, []string{"no mixed instances policy, not the release's ([{vcpu 2-4 memory_mib 4096- cpu [] generations [] burstable excluded allowed [] excluded [] spot_max_price +100% on_demand_max_price +20%}])"},
		mixedDrift(asgtypes.AutoScalingGroup{}, svc))
	assert.Equal(t, []string{"a mixed instances policy ([m5.large]), not the release's instance_type t3.micro"},
		mixedDrift(asgtypes.AutoScalingGroup{MixedInstancesPolicy: &asgtypes.MixedInstancesPolicy{LaunchTemplate: &asgtypes.LaunchTemplate{
			Overrides: []asgtypes.LaunchTemplateOverrides{{InstanceType: aws.String("m5.large")}}}}}, &release.Service{InstanceType: "t3.micro"}))
	assert.Empty(t, mixedDrift(asgtypes.AutoScalingGroup{}, &release.Service{InstanceType: "t3.micro"}))
}
