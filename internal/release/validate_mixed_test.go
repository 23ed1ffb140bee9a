package release

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// spotTypes makes service web a Spot fleet over the given instance types
// (weights in the same order; none for an unweighted fleet).
func spotTypes(r *Release, types []string, weights ...int) *MixedInstances {
	s := r.Services["web"]
	s.InstanceType = ""
	pct := 25
	m := &MixedInstances{OnDemandBaseCapacity: 1, OnDemandPercentageAboveBase: &pct, CapacityRebalance: true}
	for i, t := range types {
		o := Override{InstanceType: t}
		if i < len(weights) {
			o.Weight = weights[i]
		}
		m.Overrides = append(m.Overrides, o)
	}
	s.MixedInstances = m
	return m
}

// byAttributes makes service web select its types by attributes.
func byAttributes(r *Release, sets int) *MixedInstances {
	m := spotTypes(r, nil)
	for range sets {
		m.Overrides = append(m.Overrides, Override{Requirements: &InstanceRequirements{
			VCPU: &IntRange{Min: 2, Max: ptr(8)}, MemoryMiB: &IntRange{Min: 4096},
		}})
	}
	return m
}

// TestRuleMixedInstances checks a mixed instances policy against what
// CreateAutoScalingGroup refuses (Auto Scaling API Reference,
// MixedInstancesPolicy, LaunchTemplateOverrides, InstancesDistribution,
// InstanceRequirements) and ferry's one rule of its own (two types for
// Spot), each problem named by its path.
func TestRuleMixedInstances(t *testing.T) {
	const mi = "services.web.mixed_instances"
	many := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = []string{"m5", "c5", "r5", "m6i", "c6i", "r6i", "m7g", "c7g"}[i%8] + "." + []string{"large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge"}[i/8]
		}
		return out
	}
	runRuleCases(t, []ruleCase{
		{name: "weighted spot types", mutate: func(r *Release) { spotTypes(r, []string{"m5.large", "m5.xlarge"}, 1, 2) }},
		{name: "by attributes", mutate: func(r *Release) { byAttributes(r, 2) }},
		{name: "40 types", mutate: func(r *Release) { spotTypes(r, many(40)) }},
		{name: "41 types (LaunchTemplateOverrides: at most 40)", mutate: func(r *Release) { spotTypes(r, many(41)) },
			want: []string{mi + ".overrides: at most 40 instance types, not 41"}},
		{name: "5 requirement sets (at most 4)", mutate: func(r *Release) { byAttributes(r, 5) },
			want: []string{mi + ".overrides: at most 4 sets of instance_requirements, not 5"}},
		{name: "no overrides", mutate: func(r *Release) {
			spotTypes(r, nil).CapacityRebalance = false
			r.Services["web"].MixedInstances.OnDemandPercentageAboveBase = ptr(100)
		},
			want: []string{mi + ".overrides: required: at least one instance type or one set of instance_requirements"}},
		{name: "instance_type beside mixed_instances", mutate: func(r *Release) {
			spotTypes(r, []string{"m5.large", "c5.large"})
			r.Services["web"].InstanceType = "t3.micro"
		}, want: []string{"services.web.instance_type: must be absent with mixed_instances, whose overrides name the instance types"}},
		{name: "types and requirements across overrides", mutate: func(r *Release) {
			m := byAttributes(r, 1)
			m.Overrides = append(m.Overrides, Override{InstanceType: "m5.large"}, Override{InstanceType: "c5.large"})
		}, want: []string{mi + ".overrides: either instance types or instance_requirements, not both: Auto Scaling refuses a mix"}},
		{name: "type and requirements in one override", mutate: func(r *Release) {
			m := byAttributes(r, 1)
			m.Overrides[0].InstanceType = "m5.large"
		}, want: []string{
			mi + ".overrides: either instance types or instance_requirements, not both: Auto Scaling refuses a mix",
			mi + ".overrides[0]: instance_type and instance_requirements are exclusive in one override",
		}},
		{name: "weight 0 beside weights", mutate: func(r *Release) { spotTypes(r, []string{"m5.large", "m5.xlarge"}, 1) },
			want: []string{mi + ".overrides[1].weight: required: when one instance type has a weight, every one must (WeightedCapacity)"}},
		{name: "weight 1000", mutate: func(r *Release) { spotTypes(r, []string{"m5.large", "m5.xlarge"}, 1, 1000) },
			want: []string{mi + ".overrides[1].weight: must be between 1 and 999 capacity units, not 1000"}},
		{name: "weight 999", mutate: func(r *Release) { spotTypes(r, []string{"m5.large", "m5.xlarge"}, 1, 999) }},
		{name: "negative weight", mutate: func(r *Release) { spotTypes(r, []string{"m5.large", "m5.xlarge"}, 1, -1) },
			want: []string{mi + ".overrides[1].weight: must be between 1 and 999 capacity units, not -1"}},
		{name: "weight with requirements", mutate: func(r *Release) { byAttributes(r, 1).Overrides[0].Weight = 2 },
			want: []string{mi + ".overrides[0].weight: must be absent with instance_requirements: the group's capacity is then counted in instances"}},
		{name: "duplicate type", mutate: func(r *Release) { spotTypes(r, []string{"m5.large", "m5.large"}) },
			want: []string{mi + `.overrides[1].instance_type: duplicate "m5.large"`}},
		{name: "bad type", mutate: func(r *Release) { spotTypes(r, []string{"m5.large", "M5 Large"}) },
			want: []string{mi + ".overrides[1].instance_type: must be an EC2 instance type like t3.micro"}},
		{name: "percentage 101", mutate: func(r *Release) {
			spotTypes(r, []string{"m5.large", "c5.large"}).OnDemandPercentageAboveBase = ptr(101)
		},
			want: []string{
				mi + ".capacity_rebalance: replaces Spot instances: it needs on_demand_percentage_above_base below 100",
				mi + ".on_demand_percentage_above_base: must be between 0 and 100, not 101",
			}},
		{name: "percentage -1", mutate: func(r *Release) { spotTypes(r, []string{"m5.large", "c5.large"}).OnDemandPercentageAboveBase = ptr(-1) },
			want: []string{mi + ".on_demand_percentage_above_base: must be between 0 and 100, not -1"}},
		{name: "percentage 0, all Spot", mutate: func(r *Release) { spotTypes(r, []string{"m5.large", "c5.large"}).OnDemandPercentageAboveBase = ptr(0) }},
		{name: "negative base", mutate: func(r *Release) { spotTypes(r, []string{"m5.large", "c5.large"}).OnDemandBaseCapacity = -1 },
			want: []string{mi + ".on_demand_base_capacity: must not be negative, not -1"}},
		{name: "unknown spot strategy", mutate: func(r *Release) { spotTypes(r, []string{"m5.large", "c5.large"}).SpotAllocationStrategy = "cheapest" },
			want: []string{mi + `.spot_allocation_strategy: must be one of price-capacity-optimized, capacity-optimized, capacity-optimized-prioritized, lowest-price, not "cheapest"`}},
		{name: "prioritized spot with requirements", mutate: func(r *Release) {
			byAttributes(r, 1).SpotAllocationStrategy = SpotCapacityOptimizedPrioritized
		}, want: []string{mi + ".spot_allocation_strategy: capacity-optimized-prioritized orders the overrides' instance types: it cannot be used with instance_requirements"}},
		{name: "prioritized on-demand with requirements", mutate: func(r *Release) {
			byAttributes(r, 1).OnDemandAllocationStrategy = OnDemandPrioritized
		}, want: []string{mi + ".on_demand_allocation_strategy: prioritized orders the overrides' instance types: it cannot be used with instance_requirements"}},
		{name: "unknown on-demand strategy", mutate: func(r *Release) {
			spotTypes(r, []string{"m5.large", "c5.large"}).OnDemandAllocationStrategy = "cheapest"
		},
			want: []string{mi + `.on_demand_allocation_strategy: must be one of prioritized, lowest-price, not "cheapest"`}},
		{name: "pools with capacity-optimized", mutate: func(r *Release) {
			m := spotTypes(r, []string{"m5.large", "c5.large"})
			m.SpotAllocationStrategy, m.SpotInstancePools = SpotCapacityOptimized, 3
		}, want: []string{mi + ".spot_instance_pools: only with spot_allocation_strategy lowest-price"}},
		{name: "21 pools", mutate: func(r *Release) {
			m := spotTypes(r, []string{"m5.large", "c5.large"})
			m.SpotAllocationStrategy, m.SpotInstancePools = SpotLowestPrice, 21
		}, want: []string{mi + ".spot_instance_pools: must be between 1 and 20, not 21"}},
		{name: "lowest-price with 20 pools", mutate: func(r *Release) {
			m := spotTypes(r, []string{"m5.large", "c5.large"})
			m.SpotAllocationStrategy, m.SpotInstancePools = SpotLowestPrice, 20
		}},
		{name: "spot with one type", mutate: func(r *Release) { spotTypes(r, []string{"m5.large"}) },
			want: []string{mi + ".overrides: a group with Spot capacity (on_demand_percentage_above_base below 100) needs at least 2 instance types: every Spot strategy spreads across pools, and one type leaves nothing to fall back to when its pools are interrupted"}},
		{name: "on-demand with one type", mutate: func(r *Release) {
			m := spotTypes(r, []string{"m5.large"})
			m.OnDemandPercentageAboveBase, m.CapacityRebalance = nil, false
		}},
		{name: "capacity rebalance without spot", mutate: func(r *Release) { spotTypes(r, []string{"m5.large", "c5.large"}).OnDemandPercentageAboveBase = nil },
			want: []string{mi + ".capacity_rebalance: replaces Spot instances: it needs on_demand_percentage_above_base below 100"}},
		{name: "requirements: vcpu and memory required", mutate: func(r *Release) {
			q := byAttributes(r, 1).Overrides[0].Requirements
			q.VCPU, q.MemoryMiB = nil, nil
		}, want: []string{
			mi + `.overrides[0].instance_requirements.memory_mib: required: {"min": N} and an optional "max"`,
			mi + `.overrides[0].instance_requirements.vcpu: required: {"min": N} and an optional "max"`,
		}},
		{name: "requirements: ranges", mutate: func(r *Release) {
			q := byAttributes(r, 1).Overrides[0].Requirements
			q.VCPU, q.MemoryMiB = &IntRange{Min: -1}, &IntRange{Min: 8192, Max: ptr(4096)}
		}, want: []string{
			mi + ".overrides[0].instance_requirements.memory_mib.max: must be at least min (8192), not 4096",
			mi + ".overrides[0].instance_requirements.vcpu.min: must not be negative (0 is no minimum), not -1",
		}},
		// VCpuCountRequest.Min: "Valid Range: Minimum value of 0."
		{name: "requirements: vcpu from 0", mutate: func(r *Release) {
			byAttributes(r, 1).Overrides[0].Requirements.VCPU = &IntRange{Min: 0}
		}},
		{name: "requirements: enums", mutate: func(r *Release) {
			q := byAttributes(r, 1).Overrides[0].Requirements
			q.CPUManufacturers, q.InstanceGenerations, q.BurstablePerformance = []string{"amd", "ibm"}, []string{"next"}, "maybe"
		}, want: []string{
			mi + `.overrides[0].instance_requirements.burstable_performance: must be one of included, excluded, required, not "maybe"`,
			mi + `.overrides[0].instance_requirements.cpu_manufacturers[1]: must be one of intel, amd, amazon-web-services, apple, not "ibm"`,
			mi + `.overrides[0].instance_requirements.instance_generations[0]: must be one of current, previous, not "next"`,
		}},
		{name: "requirements: allowed and excluded", mutate: func(r *Release) {
			q := byAttributes(r, 1).Overrides[0].Requirements
			q.AllowedInstanceTypes, q.ExcludedInstanceTypes = []string{"m5.*", "c5*.*"}, []string{"t2.*"}
		}, want: []string{mi + ".overrides[0].instance_requirements: allowed_instance_types and excluded_instance_types are exclusive"}},
		{name: "requirements: bad filter, negative price protection", mutate: func(r *Release) {
			q := byAttributes(r, 1).Overrides[0].Requirements
			q.ExcludedInstanceTypes, q.SpotMaxPricePercentageOverLowestPrice = []string{"M5 *"}, ptr(-1)
		}, want: []string{
			mi + `.overrides[0].instance_requirements.excluded_instance_types[0]: must be an instance type, family or size, with * as a wildcard (m5.*, c5*.*), not "M5 *"`,
			mi + ".overrides[0].instance_requirements.spot_max_price_percentage_over_lowest_price: must not be negative, not -1",
		}},
	})
}

// TestMixedInstancesDefaults checks AWS's defaults are ferry's: 100%
// On-Demand, price-capacity-optimized, lowest-price's two pools, and
// On-Demand prioritized by the types' order, or lowest-price by
// attributes (InstancesDistribution).
func TestMixedInstancesDefaults(t *testing.T) {
	r := valid()
	m := spotTypes(r, []string{"m5.large", "c5.large"})
	m.OnDemandPercentageAboveBase, m.CapacityRebalance = nil, false
	r.ApplyDefaults()
	require.Equal(t, 100, *m.OnDemandPercentageAboveBase)
	require.Equal(t, SpotPriceCapacityOptimized, m.SpotAllocationStrategy)
	require.Equal(t, OnDemandPrioritized, m.OnDemandAllocationStrategy)
	require.Zero(t, m.SpotInstancePools)
	require.False(t, m.UsesSpot())

	r = valid()
	m = byAttributes(r, 1)
	m.SpotAllocationStrategy = SpotLowestPrice
	r.ApplyDefaults()
	require.Equal(t, OnDemandLowestPrice, m.OnDemandAllocationStrategy)
	require.Equal(t, 2, m.SpotInstancePools)
	require.True(t, m.UsesSpot())
	require.NoError(t, r.Validate(false))

	c := r.Clone()
	c.Services["web"].MixedInstances.Overrides[0].Requirements.VCPU.Min = 64
	require.Equal(t, 2, m.Overrides[0].Requirements.VCPU.Min, "Clone copies the requirements")
}

// TestRuns: plan, show and status say in one line what a service runs.
func TestRuns(t *testing.T) {
	r := valid()
	require.Equal(t, "t2.nano", r.Services["web"].Runs())
	m := spotTypes(r, []string{"m5.large", "m5.xlarge"}, 1, 2)
	require.Equal(t, "m5.large=1,m5.xlarge=2 on-demand 1+25% spot price-capacity-optimized rebalance", r.Services["web"].Runs())
	m.OnDemandPercentageAboveBase, m.CapacityRebalance = nil, false
	require.Equal(t, "m5.large=1,m5.xlarge=2 on-demand 1+100%", r.Services["web"].Runs())
	byAttributes(r, 1).SpotAllocationStrategy = SpotLowestPrice
	require.Equal(t, "vcpu 2-8 mem 4096+ MiB on-demand 1+25% spot lowest-price(2 pools) rebalance", r.Services["web"].Runs())
}
