package fleet

import (
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
)

// Mixed is a group's mixed instances policy: the instance types (with
// their weights) or the instance requirements it launches from its
// launch template, its On-Demand and Spot split, and Capacity
// Rebalancing.
type Mixed struct {
	Overrides                   []asgtypes.LaunchTemplateOverrides
	OnDemandBaseCapacity        int
	OnDemandPercentageAboveBase int
	SpotAllocationStrategy      string
	SpotInstancePools           int
	OnDemandAllocationStrategy  string
	CapacityRebalance           bool
}

// policy is m as CreateAutoScalingGroup takes it, launching from the
// launch template spec.
func (m *Mixed) policy(spec *asgtypes.LaunchTemplateSpecification) *asgtypes.MixedInstancesPolicy {
	d := &asgtypes.InstancesDistribution{
		OnDemandBaseCapacity:                aws.Int32(int32(m.OnDemandBaseCapacity)),
		OnDemandPercentageAboveBaseCapacity: aws.Int32(int32(m.OnDemandPercentageAboveBase)),
		SpotAllocationStrategy:              aws.String(m.SpotAllocationStrategy),
		OnDemandAllocationStrategy:          aws.String(m.OnDemandAllocationStrategy),
	}
	if m.SpotInstancePools > 0 {
		d.SpotInstancePools = aws.Int32(int32(m.SpotInstancePools))
	}
	return &asgtypes.MixedInstancesPolicy{
		LaunchTemplate:        &asgtypes.LaunchTemplate{LaunchTemplateSpecification: spec, Overrides: m.Overrides},
		InstancesDistribution: d,
	}
}

// Weight is the capacity units an instance of a group counts for: its
// WeightedCapacity (a weighted mixed instances policy), else 1.
func Weight(inst asgtypes.Instance) int {
	if n, err := strconv.Atoi(aws.ToString(inst.WeightedCapacity)); err == nil && n > 0 {
		return n
	}
	return 1
}
