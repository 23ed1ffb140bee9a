package release

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// MixedInstances is a service's mixed instances policy (Auto Scaling's
// MixedInstancesPolicy): the instance types its group may launch, or the
// attributes they must have, and how its capacity is split between
// On-Demand and Spot. A service with it names no instance_type.
//
// Capacity is counted in units: with weights, min_size, max_size, a
// rollout's counts and every healthy target are capacity units (each
// instance counts its override's weight, as Auto Scaling counts a
// weighted group's desired capacity); without weights a unit is an
// instance.
type MixedInstances struct {
	// Overrides are the instance types (each with an optional weight), or
	// the sets of instance requirements, the group launches from; first is
	// the highest priority for a prioritized strategy.
	Overrides []Override `json:"overrides"`
	// OnDemandBaseCapacity is the capacity filled by On-Demand instances
	// first (default 0).
	OnDemandBaseCapacity int `json:"on_demand_base_capacity,omitempty"`
	// OnDemandPercentageAboveBase is the share (0 to 100) of the capacity
	// above the base filled by On-Demand instances, the rest by Spot
	// (default 100: no Spot).
	OnDemandPercentageAboveBase *int `json:"on_demand_percentage_above_base,omitempty"`
	// SpotAllocationStrategy is how Spot instances are spread across
	// pools (default price-capacity-optimized).
	SpotAllocationStrategy string `json:"spot_allocation_strategy,omitempty"`
	// SpotInstancePools is how many of the cheapest pools lowest-price
	// spreads Spot instances across (1 to 20, default 2; only with
	// lowest-price).
	SpotInstancePools int `json:"spot_instance_pools,omitempty"`
	// OnDemandAllocationStrategy is prioritized (the overrides' order, the
	// default with instance types) or lowest-price (the default, and the
	// only one, with instance requirements).
	OnDemandAllocationStrategy string `json:"on_demand_allocation_strategy,omitempty"`
	// CapacityRebalance makes the group replace a Spot instance at
	// elevated risk of interruption (an EC2 rebalance recommendation)
	// before it is interrupted: launch first, then terminate.
	CapacityRebalance bool `json:"capacity_rebalance,omitempty"`
}

// Override is one instance type with its weight, or one set of instance
// requirements (Auto Scaling's LaunchTemplateOverrides).
type Override struct {
	InstanceType string `json:"instance_type,omitempty"`
	// Weight is the capacity units the type counts for (1 to 999); 0 is
	// unweighted. Every instance type has one, or none.
	Weight       int                   `json:"weight,omitempty"`
	Requirements *InstanceRequirements `json:"instance_requirements,omitempty"`
}

// InstanceRequirements are the attributes an instance type must have
// (attribute-based instance type selection).
type InstanceRequirements struct {
	VCPU      *IntRange `json:"vcpu"`
	MemoryMiB *IntRange `json:"memory_mib"`
	// CPUManufacturers: intel, amd, amazon-web-services, apple.
	CPUManufacturers []string `json:"cpu_manufacturers,omitempty"`
	// InstanceGenerations: current, previous.
	InstanceGenerations []string `json:"instance_generations,omitempty"`
	// BurstablePerformance: included, excluded (the default), required.
	BurstablePerformance string `json:"burstable_performance,omitempty"`
	// AllowedInstanceTypes or ExcludedInstanceTypes (not both) narrow the
	// types; each may use * as a wildcard (m5.*, *.metal).
	AllowedInstanceTypes  []string `json:"allowed_instance_types,omitempty"`
	ExcludedInstanceTypes []string `json:"excluded_instance_types,omitempty"`
	// Price protection: the highest price, as a percentage over the
	// cheapest matching type's, of a type launched.
	SpotMaxPricePercentageOverLowestPrice     *int `json:"spot_max_price_percentage_over_lowest_price,omitempty"`
	OnDemandMaxPricePercentageOverLowestPrice *int `json:"on_demand_max_price_percentage_over_lowest_price,omitempty"`
}

// IntRange is a minimum and an optional maximum.
type IntRange struct {
	Min int  `json:"min"`
	Max *int `json:"max,omitempty"`
}

// Spot allocation strategies (InstancesDistribution.SpotAllocationStrategy).
const (
	SpotPriceCapacityOptimized       = "price-capacity-optimized"
	SpotCapacityOptimized            = "capacity-optimized"
	SpotCapacityOptimizedPrioritized = "capacity-optimized-prioritized"
	SpotLowestPrice                  = "lowest-price"
)

// On-Demand allocation strategies.
const (
	OnDemandPrioritized = "prioritized"
	OnDemandLowestPrice = "lowest-price"
)

// SpotAllocationStrategies are the Spot allocation strategies.
var SpotAllocationStrategies = []string{SpotPriceCapacityOptimized, SpotCapacityOptimized, SpotCapacityOptimizedPrioritized, SpotLowestPrice}

// OnDemandAllocationStrategies are the On-Demand allocation strategies.
var OnDemandAllocationStrategies = []string{OnDemandPrioritized, OnDemandLowestPrice}

// Defaults of a mixed instances policy.
const (
	DefaultOnDemandPercentageAboveBase = 100
	DefaultSpotInstancePools           = 2
)

// ByRequirements reports whether the policy selects types by attributes.
func (m *MixedInstances) ByRequirements() bool {
	return m != nil && slices.ContainsFunc(m.Overrides, func(o Override) bool { return o.Requirements != nil })
}

// Weighted reports whether the policy's instance types carry weights:
// the group's capacity is then in units.
func (m *MixedInstances) Weighted() bool {
	return m != nil && slices.ContainsFunc(m.Overrides, func(o Override) bool { return o.Weight > 0 })
}

// UsesSpot reports whether any of the group's capacity may be Spot.
func (m *MixedInstances) UsesSpot() bool {
	return m != nil && m.OnDemandPercentageAboveBase != nil && *m.OnDemandPercentageAboveBase < 100
}

// InstanceTypes are the override's instance types, in order.
func (m *MixedInstances) InstanceTypes() []string {
	if m == nil {
		return nil
	}
	var out []string
	for _, o := range m.Overrides {
		if o.InstanceType != "" {
			out = append(out, o.InstanceType)
		}
	}
	return out
}

// applyDefaults fills the policy's unset fields with AWS's defaults, the
// On-Demand strategy as the overrides' kind needs it.
func (m *MixedInstances) applyDefaults() {
	if m == nil {
		return
	}
	if m.OnDemandPercentageAboveBase == nil {
		v := DefaultOnDemandPercentageAboveBase
		m.OnDemandPercentageAboveBase = &v
	}
	if m.SpotAllocationStrategy == "" {
		m.SpotAllocationStrategy = SpotPriceCapacityOptimized
	}
	if m.SpotInstancePools == 0 && m.SpotAllocationStrategy == SpotLowestPrice {
		m.SpotInstancePools = DefaultSpotInstancePools
	}
	if m.OnDemandAllocationStrategy == "" {
		m.OnDemandAllocationStrategy = OnDemandPrioritized
		if m.ByRequirements() {
			m.OnDemandAllocationStrategy = OnDemandLowestPrice
		}
	}
}

// WithDefaults is a copy of m with AWS's defaults filled in (see
// ApplyDefaults); nil for nil.
func (m *MixedInstances) WithDefaults() *MixedInstances {
	c := m.clone()
	c.applyDefaults()
	return c
}

func (m *MixedInstances) clone() *MixedInstances {
	if m == nil {
		return nil
	}
	c := *m
	c.OnDemandPercentageAboveBase = clonePtr(m.OnDemandPercentageAboveBase)
	c.Overrides = slices.Clone(m.Overrides)
	for i, o := range c.Overrides {
		if o.Requirements != nil {
			c.Overrides[i].Requirements = o.Requirements.clone()
		}
	}
	return &c
}

func (q *InstanceRequirements) clone() *InstanceRequirements {
	c := *q
	c.VCPU, c.MemoryMiB = q.VCPU.clone(), q.MemoryMiB.clone()
	c.CPUManufacturers = slices.Clone(q.CPUManufacturers)
	c.InstanceGenerations = slices.Clone(q.InstanceGenerations)
	c.AllowedInstanceTypes = slices.Clone(q.AllowedInstanceTypes)
	c.ExcludedInstanceTypes = slices.Clone(q.ExcludedInstanceTypes)
	c.SpotMaxPricePercentageOverLowestPrice = clonePtr(q.SpotMaxPricePercentageOverLowestPrice)
	c.OnDemandMaxPricePercentageOverLowestPrice = clonePtr(q.OnDemandMaxPricePercentageOverLowestPrice)
	return &c
}

func (r *IntRange) clone() *IntRange {
	if r == nil {
		return nil
	}
	return &IntRange{Min: r.Min, Max: clonePtr(r.Max)}
}

// Runs says in one line what the service's instances run, for plan, show
// and status: its instance_type, or its mixed instances policy (defaults
// applied): the types with their weights, or the requirements, then the
// On-Demand base and percentage, the Spot strategy and capacity
// rebalance.
func (s *Service) Runs() string {
	if s == nil || s.MixedInstances == nil {
		if s == nil {
			return ""
		}
		return s.InstanceType
	}
	m := s.MixedInstances.WithDefaults()
	var parts []string
	for _, o := range m.Overrides {
		switch {
		case o.Requirements != nil:
			parts = append(parts, o.Requirements.String())
		case o.Weight > 0:
			parts = append(parts, fmt.Sprintf("%s=%d", o.InstanceType, o.Weight))
		default:
			parts = append(parts, o.InstanceType)
		}
	}
	out := strings.Join(parts, ",") + fmt.Sprintf(" on-demand %d+%d%%", m.OnDemandBaseCapacity, *m.OnDemandPercentageAboveBase)
	if m.UsesSpot() {
		out += " spot " + m.SpotAllocationStrategy
		if m.SpotInstancePools > 0 {
			out += fmt.Sprintf("(%d pools)", m.SpotInstancePools)
		}
		if m.CapacityRebalance {
			out += " rebalance"
		}
	}
	return out
}

// String is the requirements in short: "vcpu 2-8 mem 4096+ MiB".
func (q *InstanceRequirements) String() string {
	rng := func(r *IntRange) string {
		if r == nil {
			return "?"
		}
		if r.Max == nil {
			return fmt.Sprintf("%d+", r.Min)
		}
		if *r.Max == r.Min {
			return strconv.Itoa(r.Min)
		}
		return fmt.Sprintf("%d-%d", r.Min, *r.Max)
	}
	return fmt.Sprintf("vcpu %s mem %s MiB", rng(q.VCPU), rng(q.MemoryMiB))
}
