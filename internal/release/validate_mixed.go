package release

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// Bounds of a mixed instances policy, as the Auto Scaling API Reference
// gives them (LaunchTemplateOverrides, InstancesDistribution,
// InstanceRequirements).
const (
	// maxOverrideTypes is the most instance types a group's overrides may
	// name ("The maximum number of instance types that can be associated
	// with an Auto Scaling group is 40", LaunchTemplateOverrides).
	maxOverrideTypes = 40
	// maxRequirementSets is the most sets of instance requirements ("up
	// to four separate sets of instance requirements per Auto Scaling
	// group", LaunchTemplateOverrides.InstanceRequirements).
	maxRequirementSets = 4
	// minWeight and maxWeight bound WeightedCapacity ("Value must be in
	// the range of 1-999").
	minWeight, maxWeight = 1, 999
	// maxSpotPools bounds SpotInstancePools ("Value must be in the range
	// of 1-20").
	maxSpotPools = 20
	// maxTypeFilters bounds AllowedInstanceTypes and ExcludedInstanceTypes
	// ("You can specify up to 400 instance types").
	maxTypeFilters = 400
	// maxTypeFilterLen bounds each of them ("Maximum length of 30").
	maxTypeFilterLen = 30
	// minSpotTypes is the fewest instance types ferry accepts for a group
	// with Spot capacity: ferry's rule, not AWS's refusal. Every Spot
	// strategy chooses among pools (a type in a zone); with one type an
	// interruption of its pools leaves the group nothing to fall back to,
	// and AWS's Spot best practices ask for flexibility across types.
	minSpotTypes = 2
)

// Enumerations of instance requirements.
var (
	CPUManufacturers      = []string{"intel", "amd", "amazon-web-services", "apple"}
	InstanceGenerations   = []string{"current", "previous"}
	BurstablePerformances = []string{"included", "excluded", "required"}
)

// instanceTypeFilterRe is a member of AllowedInstanceTypes or
// ExcludedInstanceTypes as the API Reference gives it ("Length
// Constraints: Minimum length of 1. Maximum length of 30. Pattern:
// [a-zA-Z0-9\.\*\-]+"): an instance type, family, size or generation
// with * wildcards ("m5.8xlarge, c5*.*, m5a.*, r*, *3*").
var instanceTypeFilterRe = regexp.MustCompile(`^[a-zA-Z0-9.*-]{1,30}$`)

// maxInteger is the largest value of an Auto Scaling Integer (a signed
// 32-bit number): the bounds of instance requirements and the On-Demand
// base capacity, beyond which the request AWS gets would not be the
// release's.
const maxInteger = math.MaxInt32

// instanceTypes checks what a service's instances run: instance_type,
// or mixed_instances instead of it.
func (v *validator) instanceTypes(spath string, s *Service) {
	if s.MixedInstances == nil {
		v.ref(field(spath, "instance_type"), s.InstanceType, CheckInstanceType)
		return
	}
	if s.InstanceType != "" {
		v.p.add(field(spath, "instance_type"), "must be absent with mixed_instances, whose overrides name the instance types")
	}
	v.mixed(field(spath, "mixed_instances"), s.MixedInstances)
}

// mixed checks a mixed instances policy (defaults applied) against what
// CreateAutoScalingGroup refuses, and ferry's own Spot rule.
func (v *validator) mixed(mpath string, m *MixedInstances) {
	opath := field(mpath, "overrides")
	byReq := m.ByRequirements()
	types := m.InstanceTypes()
	switch {
	case len(m.Overrides) == 0:
		v.p.add(opath, "required: at least one instance type or one set of instance_requirements")
	case byReq && len(types) > 0:
		v.p.add(opath, "either instance types or instance_requirements, not both: Auto Scaling refuses a mix")
	case byReq && len(m.Overrides) > maxRequirementSets:
		v.p.add(opath, "at most %d sets of instance_requirements, not %d", maxRequirementSets, len(m.Overrides))
	case !byReq && len(m.Overrides) > maxOverrideTypes:
		v.p.add(opath, "at most %d instance types, not %d", maxOverrideTypes, len(m.Overrides))
	}
	weighted := m.Weighted()
	var before []string
	for i, o := range m.Overrides {
		v.override(index(opath, i), o, before, weighted)
		before = append(before, o.InstanceType)
	}
	v.distribution(mpath, m, byReq, len(types))
}

// override checks one override at ipath: an instance type (not one of
// before) with a weight when the policy is weighted, or a set of
// instance requirements without one.
func (v *validator) override(ipath string, o Override, before []string, weighted bool) {
	switch {
	case o.Requirements != nil && o.InstanceType != "":
		v.p.add(ipath, "instance_type and instance_requirements are exclusive in one override")
	case o.Requirements != nil:
		v.requirements(field(ipath, "instance_requirements"), o.Requirements)
		if o.Weight != 0 {
			v.p.add(field(ipath, "weight"), "must be absent with instance_requirements: the group's capacity is then counted in instances")
		}
		return
	default:
		v.ref(field(ipath, "instance_type"), o.InstanceType, CheckInstanceType)
		if slices.Contains(before, o.InstanceType) {
			v.p.add(field(ipath, "instance_type"), "duplicate %q", o.InstanceType)
		}
	}
	switch {
	case o.Weight == 0 && weighted:
		v.p.add(field(ipath, "weight"), "required: when one instance type has a weight, every one must (WeightedCapacity)")
	case o.Weight != 0 && (o.Weight < minWeight || o.Weight > maxWeight):
		v.p.add(field(ipath, "weight"), "must be between %d and %d capacity units, not %d", minWeight, maxWeight, o.Weight)
	}
}

// distribution checks how the policy splits its capacity between
// On-Demand and Spot, and its strategies against its overrides.
func (v *validator) distribution(mpath string, m *MixedInstances, byReq bool, types int) {
	p := v.p
	v.integer(field(mpath, "on_demand_base_capacity"), m.OnDemandBaseCapacity)
	if pct := *m.OnDemandPercentageAboveBase; pct < 0 || pct > 100 {
		p.add(field(mpath, "on_demand_percentage_above_base"), "must be between 0 and 100, not %d", pct)
	}
	v.strategies(mpath, m, byReq)
	if m.UsesSpot() && !byReq && types > 0 && types < minSpotTypes {
		p.add(field(mpath, "overrides"), "a group with Spot capacity (on_demand_percentage_above_base below 100) needs at least %d instance types: every Spot strategy spreads across pools, and one type leaves nothing to fall back to when its pools are interrupted", minSpotTypes)
	}
	if m.CapacityRebalance && !m.UsesSpot() {
		p.add(field(mpath, "capacity_rebalance"), "replaces Spot instances: it needs on_demand_percentage_above_base below 100")
	}
}

// strategies checks the policy's allocation strategies and pools
// against its overrides' kind.
func (v *validator) strategies(mpath string, m *MixedInstances, byReq bool) {
	p := v.p
	spath := field(mpath, "spot_allocation_strategy")
	switch s := m.SpotAllocationStrategy; {
	case !slices.Contains(SpotAllocationStrategies, s):
		p.add(spath, "must be one of %s, not %q", strings.Join(SpotAllocationStrategies, ", "), s)
	case s == SpotCapacityOptimizedPrioritized && byReq:
		p.add(spath, "%s orders the overrides' instance types: it cannot be used with instance_requirements", s)
	}
	switch n := m.SpotInstancePools; {
	case n != 0 && m.SpotAllocationStrategy != SpotLowestPrice:
		p.add(field(mpath, "spot_instance_pools"), "only with spot_allocation_strategy %s", SpotLowestPrice)
	case n < 0 || n > maxSpotPools:
		p.add(field(mpath, "spot_instance_pools"), "must be between 1 and %d, not %d", maxSpotPools, n)
	}
	dpath := field(mpath, "on_demand_allocation_strategy")
	switch s := m.OnDemandAllocationStrategy; {
	case !slices.Contains(OnDemandAllocationStrategies, s):
		p.add(dpath, "must be one of %s, not %q", strings.Join(OnDemandAllocationStrategies, ", "), s)
	case s == OnDemandPrioritized && byReq:
		p.add(dpath, "%s orders the overrides' instance types: it cannot be used with instance_requirements", s)
	}
}

// requirements checks one set of instance requirements.
func (v *validator) requirements(qpath string, q *InstanceRequirements) {
	v.intRange(field(qpath, "vcpu"), q.VCPU)
	v.intRange(field(qpath, "memory_mib"), q.MemoryMiB)
	for _, e := range []struct {
		key     string
		values  []string
		allowed []string
	}{
		{"cpu_manufacturers", q.CPUManufacturers, CPUManufacturers},
		{"instance_generations", q.InstanceGenerations, InstanceGenerations},
	} {
		for i, val := range e.values {
			if !slices.Contains(e.allowed, val) {
				v.p.add(index(field(qpath, e.key), i), "must be one of %s, not %q", strings.Join(e.allowed, ", "), val)
			}
		}
	}
	if b := q.BurstablePerformance; b != "" && !slices.Contains(BurstablePerformances, b) {
		v.p.add(field(qpath, "burstable_performance"), "must be one of %s, not %q", strings.Join(BurstablePerformances, ", "), b)
	}
	v.typeFilters(qpath, q)
	v.priceProtection(qpath, q)
}

// typeFilters checks a set of requirements' allowed or excluded instance
// types.
func (v *validator) typeFilters(qpath string, q *InstanceRequirements) {
	if len(q.AllowedInstanceTypes) > 0 && len(q.ExcludedInstanceTypes) > 0 {
		v.p.add(qpath, "allowed_instance_types and excluded_instance_types are exclusive")
	}
	for key, list := range map[string][]string{"allowed_instance_types": q.AllowedInstanceTypes, "excluded_instance_types": q.ExcludedInstanceTypes} {
		if len(list) > maxTypeFilters {
			v.p.add(field(qpath, key), "at most %d instance types, not %d", maxTypeFilters, len(list))
		}
		for i, t := range list {
			if what := typeFilterProblem(t); what != "" {
				v.p.add(index(field(qpath, key), i), "%q %s (a filter is an instance type, family or size with * wildcards: m5.8xlarge, c5*.*, r*, *3*)", t, what)
			}
		}
	}
}

// priceProtection checks a set of requirements' price protection
// percentages: Integers from 0.
func (v *validator) priceProtection(qpath string, q *InstanceRequirements) {
	for key, pct := range map[string]*int{
		"spot_max_price_percentage_over_lowest_price":      q.SpotMaxPricePercentageOverLowestPrice,
		"on_demand_max_price_percentage_over_lowest_price": q.OnDemandMaxPricePercentageOverLowestPrice,
	} {
		if pct != nil {
			v.integer(field(qpath, key), *pct)
		}
	}
}

// integer checks n at path is what an Auto Scaling Integer from 0 holds.
func (v *validator) integer(path string, n int) {
	switch {
	case n < 0:
		v.p.add(path, "must not be negative, not %d", n)
	case n > maxInteger:
		v.p.add(path, "must be at most %d, not %d", maxInteger, n)
	}
}

// typeFilterProblem says what is wrong with an instance type filter, ""
// when nothing is (when instanceTypeFilterRe matches it).
func typeFilterProblem(t string) string {
	if t == "" {
		return "must not be empty"
	}
	if n := utf8.RuneCountInString(t); n > maxTypeFilterLen {
		return fmt.Sprintf("is %d characters long, more than %d", n, maxTypeFilterLen)
	}
	for _, r := range t {
		if !instanceTypeFilterRe.MatchString(string(r)) {
			return fmt.Sprintf("has %q, which is not a letter, digit, '.', '-' or '*'", r)
		}
	}
	return ""
}

// intRange checks a required range, VCpuCount's or MemoryMiB's: min not
// negative, 0 being no minimum ("Valid Range: Minimum value of 0",
// VCpuCountRequest and MemoryMiBRequest), and max (when set) at least
// min; both Integers (at most maxInteger).
func (v *validator) intRange(rpath string, r *IntRange) {
	switch {
	case r == nil:
		v.p.add(rpath, "required: {\"min\": N} and an optional \"max\"")
	case r.Min < 0:
		v.p.add(field(rpath, "min"), "must not be negative (0 is no minimum), not %d", r.Min)
	case r.Min > maxInteger:
		v.p.add(field(rpath, "min"), "must be at most %d, not %d", maxInteger, r.Min)
	case r.Max != nil && *r.Max < r.Min:
		v.p.add(field(rpath, "max"), "must be at least min (%d), not %d", r.Min, *r.Max)
	case r.Max != nil && *r.Max > maxInteger:
		v.p.add(field(rpath, "max"), "must be at most %d, not %d", maxInteger, *r.Max)
	}
}
