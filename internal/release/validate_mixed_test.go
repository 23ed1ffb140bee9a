package release

import (
	"fmt"
	"math"
	"strings"
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
	runRuleCases(t, []ruleCase{
		{name: "weighted spot types", mutate: func(r *Release) { spotTypes(r, []string{"m5.large", "m5.xlarge"}, 1, 2) }},
		{name: "by attributes", mutate: func(r *Release) { byAttributes(r, 2) }},
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
		{name: "weight with requirements", mutate: func(r *Release) { byAttributes(r, 1).Overrides[0].Weight = 2 },
			want: []string{mi + ".overrides[0].weight: must be absent with instance_requirements: the group's capacity is then counted in instances"}},
		{name: "duplicate type", mutate: func(r *Release) { spotTypes(r, []string{"m5.large", "m5.large"}) },
			want: []string{mi + `.overrides[1].instance_type: duplicate "m5.large"`}},
		{name: "bad type", mutate: func(r *Release) { spotTypes(r, []string{"m5.large", "M5 Large"}) },
			want: []string{mi + ".overrides[1].instance_type: must be an EC2 instance type like t3.micro"}},
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
		{name: "spot with one type", mutate: func(r *Release) { spotTypes(r, []string{"m5.large"}) },
			want: []string{mi + ".overrides: a group with Spot capacity (on_demand_percentage_above_base below 100) needs at least 2 instance types: every Spot strategy spreads across pools, and one type leaves nothing to fall back to when its pools are interrupted"}},
		{name: "spot with no overrides: the one problem is the missing overrides", mutate: func(r *Release) { spotTypes(r, nil) },
			want: []string{mi + ".overrides: required: at least one instance type or one set of instance_requirements"}},
		{name: "spot with two types", mutate: func(r *Release) { spotTypes(r, []string{"m5.large", "c5.large"}) }},
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
		{name: "requirements: allowed only", mutate: func(r *Release) {
			byAttributes(r, 1).Overrides[0].Requirements.AllowedInstanceTypes = []string{"m5.*", "c5*.*"}
		}},
		{name: "requirements: excluded only", mutate: func(r *Release) {
			byAttributes(r, 1).Overrides[0].Requirements.ExcludedInstanceTypes = []string{"t2.*"}
		}},
		{name: "requirements: bad filter, negative price protection", mutate: func(r *Release) {
			q := byAttributes(r, 1).Overrides[0].Requirements
			q.ExcludedInstanceTypes, q.SpotMaxPricePercentageOverLowestPrice = []string{"M5 *"}, ptr(-1)
		}, want: []string{
			mi + `.overrides[0].instance_requirements.excluded_instance_types[0]: "M5 *" has ' ', which is not a letter, digit, '.', '-' or '*' (a filter is an instance type, family or size with * wildcards: m5.8xlarge, c5*.*, r*, *3*)`,
			mi + ".overrides[0].instance_requirements.spot_max_price_percentage_over_lowest_price: must not be negative, not -1",
		}},
	})
}

// TestMixedInstancesBounds checks each bound of a mixed instances policy
// at its limit, the last value CreateAutoScalingGroup accepts, and one
// past it, the first it refuses, as the Auto Scaling API Reference gives
// them (the page named above each pair; the ranges "Valid Range" and
// "Array Members" are the service model's). Each case that is refused
// has exactly one problem, naming the field and the limit.
func TestMixedInstancesBounds(t *testing.T) {
	const (
		mi = "services.web.mixed_instances"
		q0 = mi + ".overrides[0].instance_requirements"
	)
	// types are n distinct instance types; filters n type filters.
	types := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = []string{"m5", "c5", "r5", "m6i", "c6i", "r6i", "m7g", "c7g"}[i%8] + "." + []string{"large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge"}[i/8]
		}
		return out
	}
	filters := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("x%d.*", i)
		}
		return out
	}
	// spot is service web with Spot over two types; onDemand the same
	// without capacity rebalance, for a percentage with no Spot; req edits
	// its one set of instance requirements.
	spot := func(r *Release) *MixedInstances { return spotTypes(r, []string{"m5.large", "c5.large"}) }
	onDemand := func(r *Release) *MixedInstances {
		m := spot(r)
		m.CapacityRebalance = false
		return m
	}
	req := func(edit func(q *InstanceRequirements)) func(r *Release) {
		return func(r *Release) { edit(byAttributes(r, 1).Overrides[0].Requirements) }
	}
	runRuleCases(t, []ruleCase{
		// LaunchTemplateOverrides.InstanceType: "You can specify up to 40
		// instance types per Auto Scaling group."
		{name: "40 types", mutate: func(r *Release) { spotTypes(r, types(40)) }},
		{name: "41 types", mutate: func(r *Release) { spotTypes(r, types(41)) },
			want: []string{mi + ".overrides: at most 40 instance types, not 41"}},
		// LaunchTemplateOverrides.InstanceRequirements: "You can specify up
		// to four separate sets of instance requirements per Auto Scaling
		// group."
		{name: "4 requirement sets", mutate: func(r *Release) { byAttributes(r, 4) }},
		{name: "5 requirement sets", mutate: func(r *Release) { byAttributes(r, 5) },
			want: []string{mi + ".overrides: at most 4 sets of instance_requirements, not 5"}},
		// LaunchTemplateOverrides.WeightedCapacity: "Value must be in the
		// range of 1-999."
		{name: "weights 1 and 999", mutate: func(r *Release) { spotTypes(r, []string{"m5.large", "m5.xlarge"}, 1, 999) }},
		{name: "weight 1000", mutate: func(r *Release) { spotTypes(r, []string{"m5.large", "m5.xlarge"}, 1, 1000) },
			want: []string{mi + ".overrides[1].weight: must be between 1 and 999 capacity units, not 1000"}},
		{name: "weight -1", mutate: func(r *Release) { spotTypes(r, []string{"m5.large", "m5.xlarge"}, 1, -1) },
			want: []string{mi + ".overrides[1].weight: must be between 1 and 999 capacity units, not -1"}},
		// InstancesDistribution.OnDemandBaseCapacity: a capacity, default 0.
		{name: "base 0", mutate: func(r *Release) { spot(r).OnDemandBaseCapacity = 0 }},
		{name: "base -1", mutate: func(r *Release) { spot(r).OnDemandBaseCapacity = -1 },
			want: []string{mi + ".on_demand_base_capacity: must not be negative, not -1"}},
		// InstancesDistribution.OnDemandPercentageAboveBaseCapacity: a
		// percentage, 100 "only On-Demand Instances".
		{name: "percentage 0, all Spot", mutate: func(r *Release) { spot(r).OnDemandPercentageAboveBase = ptr(0) }},
		{name: "percentage -1", mutate: func(r *Release) { spot(r).OnDemandPercentageAboveBase = ptr(-1) },
			want: []string{mi + ".on_demand_percentage_above_base: must be between 0 and 100, not -1"}},
		{name: "percentage 100, no Spot", mutate: func(r *Release) { onDemand(r).OnDemandPercentageAboveBase = ptr(100) }},
		{name: "percentage 101", mutate: func(r *Release) { onDemand(r).OnDemandPercentageAboveBase = ptr(101) },
			want: []string{mi + ".on_demand_percentage_above_base: must be between 0 and 100, not 101"}},
		// InstancesDistribution.SpotInstancePools: "Value must be in the
		// range of 1-20."
		{name: "1 pool", mutate: func(r *Release) {
			m := spot(r)
			m.SpotAllocationStrategy, m.SpotInstancePools = SpotLowestPrice, 1
		}},
		{name: "-1 pools", mutate: func(r *Release) {
			m := spot(r)
			m.SpotAllocationStrategy, m.SpotInstancePools = SpotLowestPrice, -1
		}, want: []string{mi + ".spot_instance_pools: must be between 1 and 20, not -1"}},
		{name: "20 pools", mutate: func(r *Release) {
			m := spot(r)
			m.SpotAllocationStrategy, m.SpotInstancePools = SpotLowestPrice, 20
		}},
		{name: "21 pools", mutate: func(r *Release) {
			m := spot(r)
			m.SpotAllocationStrategy, m.SpotInstancePools = SpotLowestPrice, 21
		}, want: []string{mi + ".spot_instance_pools: must be between 1 and 20, not 21"}},
		// VCpuCountRequest and MemoryMiBRequest, Min and Max: "Valid Range:
		// Minimum value of 0." (0 is no minimum); a max below its min
		// matches no instance type.
		{name: "vcpu and memory from 0", mutate: req(func(q *InstanceRequirements) {
			q.VCPU, q.MemoryMiB = &IntRange{Min: 0}, &IntRange{Min: 0, Max: ptr(0)}
		})},
		{name: "vcpu min -1", mutate: req(func(q *InstanceRequirements) { q.VCPU = &IntRange{Min: -1} }),
			want: []string{q0 + ".vcpu.min: must not be negative (0 is no minimum), not -1"}},
		{name: "memory min -1", mutate: req(func(q *InstanceRequirements) { q.MemoryMiB = &IntRange{Min: -1} }),
			want: []string{q0 + ".memory_mib.min: must not be negative (0 is no minimum), not -1"}},
		{name: "vcpu max equal to min", mutate: req(func(q *InstanceRequirements) { q.VCPU = &IntRange{Min: 2, Max: ptr(2)} })},
		{name: "vcpu max one below min", mutate: req(func(q *InstanceRequirements) { q.VCPU = &IntRange{Min: 2, Max: ptr(1)} }),
			want: []string{q0 + ".vcpu.max: must be at least min (2), not 1"}},
		{name: "memory max one below min", mutate: req(func(q *InstanceRequirements) { q.MemoryMiB = &IntRange{Min: 8192, Max: ptr(8191)} }),
			want: []string{q0 + ".memory_mib.max: must be at least min (8192), not 8191"}},
		// InstanceRequirements.AllowedInstanceTypes and
		// ExcludedInstanceTypes: "Array Members: Maximum number of 400
		// items."
		{name: "400 allowed types", mutate: req(func(q *InstanceRequirements) { q.AllowedInstanceTypes = filters(400) })},
		{name: "401 allowed types", mutate: req(func(q *InstanceRequirements) { q.AllowedInstanceTypes = filters(401) }),
			want: []string{q0 + ".allowed_instance_types: at most 400 instance types, not 401"}},
		{name: "400 excluded types", mutate: req(func(q *InstanceRequirements) { q.ExcludedInstanceTypes = filters(400) })},
		{name: "401 excluded types", mutate: req(func(q *InstanceRequirements) { q.ExcludedInstanceTypes = filters(401) }),
			want: []string{q0 + ".excluded_instance_types: at most 400 instance types, not 401"}},
		// AllowedInstanceTypes and ExcludedInstanceTypes members: "Length
		// Constraints: Minimum length of 1. Maximum length of 30. Pattern:
		// [a-zA-Z0-9\.\*\-]+", the examples "m5.8xlarge, c5*.*, m5a.*, r*,
		// *3*".
		{name: "the documented filters, capitals, 30 characters", mutate: req(func(q *InstanceRequirements) {
			q.ExcludedInstanceTypes = []string{"m5.8xlarge", "c5*.*", "m5a.*", "r*", "*3*", "M5.Large", "-.*", strings.Repeat("x", 30)}
		})},
		{name: "a filter of 31 characters", mutate: req(func(q *InstanceRequirements) { q.AllowedInstanceTypes = []string{"m5.*", strings.Repeat("x", 31)} }),
			want: []string{q0 + `.allowed_instance_types[1]: "` + strings.Repeat("x", 31) + `" is 31 characters long, more than 30 (a filter is an instance type, family or size with * wildcards: m5.8xlarge, c5*.*, r*, *3*)`}},
		{name: "an empty filter", mutate: req(func(q *InstanceRequirements) { q.ExcludedInstanceTypes = []string{""} }),
			want: []string{q0 + `.excluded_instance_types[0]: "" must not be empty (a filter is an instance type, family or size with * wildcards: m5.8xlarge, c5*.*, r*, *3*)`}},
		{name: "an underscore", mutate: req(func(q *InstanceRequirements) { q.ExcludedInstanceTypes = []string{"m5_large"} }),
			want: []string{q0 + `.excluded_instance_types[0]: "m5_large" has '_', which is not a letter, digit, '.', '-' or '*' (a filter is an instance type, family or size with * wildcards: m5.8xlarge, c5*.*, r*, *3*)`}},
		// Every bound is an Integer: a value past 2147483647 is not one AWS
		// can take (the request would carry another number).
		{name: "integers at 2147483647", mutate: func(r *Release) {
			m := byAttributes(r, 1)
			m.OnDemandBaseCapacity = math.MaxInt32
			q := m.Overrides[0].Requirements
			q.VCPU, q.MemoryMiB = &IntRange{Min: 2, Max: ptr(math.MaxInt32)}, &IntRange{Min: math.MaxInt32}
			q.SpotMaxPricePercentageOverLowestPrice, q.OnDemandMaxPricePercentageOverLowestPrice = ptr(math.MaxInt32), ptr(math.MaxInt32)
		}},
		{name: "integers at 2147483648", mutate: func(r *Release) {
			m := byAttributes(r, 1)
			m.OnDemandBaseCapacity = math.MaxInt32 + 1
			q := m.Overrides[0].Requirements
			q.VCPU, q.MemoryMiB = &IntRange{Min: 2, Max: ptr(math.MaxInt32 + 1)}, &IntRange{Min: math.MaxInt32 + 1}
			q.SpotMaxPricePercentageOverLowestPrice, q.OnDemandMaxPricePercentageOverLowestPrice = ptr(math.MaxInt32+1), ptr(math.MaxInt32+1)
		}, want: []string{
			mi + ".on_demand_base_capacity: must be at most 2147483647, not 2147483648",
			q0 + ".memory_mib.min: must be at most 2147483647, not 2147483648",
			q0 + ".on_demand_max_price_percentage_over_lowest_price: must be at most 2147483647, not 2147483648",
			q0 + ".spot_max_price_percentage_over_lowest_price: must be at most 2147483647, not 2147483648",
			q0 + ".vcpu.max: must be at most 2147483647, not 2147483648",
		}},
		// InstanceRequirements.SpotMaxPricePercentageOverLowestPrice and
		// OnDemandMaxPricePercentageOverLowestPrice: "Valid Range: Minimum
		// value of 0."
		{name: "price protection 0", mutate: req(func(q *InstanceRequirements) {
			q.SpotMaxPricePercentageOverLowestPrice, q.OnDemandMaxPricePercentageOverLowestPrice = ptr(0), ptr(0)
		})},
		{name: "spot price protection -1", mutate: req(func(q *InstanceRequirements) { q.SpotMaxPricePercentageOverLowestPrice = ptr(-1) }),
			want: []string{q0 + ".spot_max_price_percentage_over_lowest_price: must not be negative, not -1"}},
		{name: "on-demand price protection -1", mutate: req(func(q *InstanceRequirements) { q.OnDemandMaxPricePercentageOverLowestPrice = ptr(-1) }),
			want: []string{q0 + ".on_demand_max_price_percentage_over_lowest_price: must not be negative, not -1"}},
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
