package deployer

import (
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"

	"github.com/ferryhq/ferry/internal/fleet"
	"github.com/ferryhq/ferry/internal/health"
	"github.com/ferryhq/ferry/internal/release"
)

// mixedOf is the mixed instances policy of service s's group (nil
// without one), AWS's defaults as the release's: instance types with
// their weights, or instance requirements; the On-Demand base and
// percentage; the allocation strategies; Capacity Rebalancing. A
// weighted policy makes the group's sizes capacity units, as ferry's
// (package capacity) are then.
func mixedOf(s *release.Service) *fleet.Mixed {
	if s.MixedInstances == nil {
		return nil
	}
	m := s.MixedInstances.WithDefaults()
	out := &fleet.Mixed{
		OnDemandBaseCapacity: m.OnDemandBaseCapacity, OnDemandPercentageAboveBase: *m.OnDemandPercentageAboveBase,
		SpotAllocationStrategy: m.SpotAllocationStrategy, SpotInstancePools: m.SpotInstancePools,
		OnDemandAllocationStrategy: m.OnDemandAllocationStrategy, CapacityRebalance: m.CapacityRebalance,
	}
	for _, o := range m.Overrides {
		if o.Requirements != nil {
			out.Overrides = append(out.Overrides, asgtypes.LaunchTemplateOverrides{InstanceRequirements: requirementsOf(o.Requirements)})
			continue
		}
		ov := asgtypes.LaunchTemplateOverrides{InstanceType: aws.String(o.InstanceType)}
		if o.Weight > 0 {
			ov.WeightedCapacity = aws.String(strconv.Itoa(o.Weight))
		}
		out.Overrides = append(out.Overrides, ov)
	}
	return out
}

// unitsOf names what service s's capacity counts: capacity units with a
// weighted mixed instances policy, else instances.
func unitsOf(s *release.Service) string {
	if s != nil && s.MixedInstances.Weighted() {
		return "capacity units"
	}
	return "instances"
}

// inServiceUnits is the capacity of g's instances in service, each
// counting its weight.
func inServiceUnits(g asgtypes.AutoScalingGroup) int {
	n := 0
	for _, inst := range g.Instances {
		if inst.LifecycleState == asgtypes.LifecycleStateInService {
			n += fleet.Weight(inst)
		}
	}
	return n
}

// rebalancing counts the instances of view terminating because Capacity
// Rebalancing replaced them first, as acts say.
func rebalancing(view health.View, acts fleet.Activities) int {
	n := 0
	for _, inst := range view.Instances {
		if inst.Terminating() && acts.Rebalanced[inst.ID] {
			n++
		}
	}
	return n
}

// requirementsOf is q as Auto Scaling takes it (InstanceRequirements).
func requirementsOf(q *release.InstanceRequirements) *asgtypes.InstanceRequirements {
	i32 := func(p *int) *int32 {
		if p == nil {
			return nil
		}
		return aws.Int32(int32(*p))
	}
	out := &asgtypes.InstanceRequirements{
		AllowedInstanceTypes:                      q.AllowedInstanceTypes,
		ExcludedInstanceTypes:                     q.ExcludedInstanceTypes,
		SpotMaxPricePercentageOverLowestPrice:     i32(q.SpotMaxPricePercentageOverLowestPrice),
		OnDemandMaxPricePercentageOverLowestPrice: i32(q.OnDemandMaxPricePercentageOverLowestPrice),
		BurstablePerformance:                      asgtypes.BurstablePerformance(q.BurstablePerformance),
	}
	// Validate requires both ranges; a missing one stays missing, which
	// AWS refuses (VCpuCount and MemoryMiB are required members), where an
	// empty range would be any number of vCPUs or MiB.
	if r := q.VCPU; r != nil {
		out.VCpuCount = &asgtypes.VCpuCountRequest{Min: aws.Int32(int32(r.Min)), Max: i32(r.Max)}
	}
	if r := q.MemoryMiB; r != nil {
		out.MemoryMiB = &asgtypes.MemoryMiBRequest{Min: aws.Int32(int32(r.Min)), Max: i32(r.Max)}
	}
	for _, m := range q.CPUManufacturers {
		out.CpuManufacturers = append(out.CpuManufacturers, asgtypes.CpuManufacturer(m))
	}
	for _, g := range q.InstanceGenerations {
		out.InstanceGenerations = append(out.InstanceGenerations, asgtypes.InstanceGeneration(g))
	}
	return out
}
