package deployer

import (
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
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
