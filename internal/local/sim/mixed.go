package sim

import (
	"cmp"
	"fmt"
	"math"
	"path"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/ferryhq/ferry/internal/cloud"
)

// A group with a mixed instances policy (CreateAutoScalingGroup's
// MixedInstancesPolicy, Auto Scaling API Reference) launches across its
// overrides' instance types, On-Demand and Spot, as the Auto Scaling User
// Guide describes it:
//
//   - Capacity is in units: an instance counts its override's
//     WeightedCapacity (1 without weights), and the group launches until
//     its desired capacity is met, even past it ("Configure an Auto
//     Scaling group to use instance weights").
//   - OnDemandBaseCapacity units are On-Demand, then
//     OnDemandPercentageAboveBaseCapacity percent of the rest; the rest is
//     Spot (InstancesDistribution).
//   - On-Demand: prioritized launches the first override that can
//     launch, lowest-price the cheapest. Spot: lowest-price spreads over
//     the SpotInstancePools cheapest pools; capacity-optimized and
//     price-capacity-optimized launch in the pool with the most capacity
//     left (the sim: the pool the group has the fewest Spot instances in,
//     none that EC2 reclaimed lately), price-capacity-optimized breaking
//     ties by price, capacity-optimized-prioritized by the overrides'
//     order ("Allocation strategies").
//   - Instance requirements select the types of the sim's catalogue
//     (mixedCatalogue) that match them and the image's architecture.
//
// EC2 interrupts Spot instances (InterruptSpot): it sends a rebalance
// recommendation (when it can, before the notice), then the two-minute
// interruption notice, then terminates the instance ("Spot Instance
// interruption notices", "EC2 instance rebalance recommendations", EC2
// User Guide). A group with CapacityRebalance launches a replacement when
// one of its Spot instances gets either signal and terminates the
// instance once the replacement is in service ("Capacity Rebalancing to
// handle Amazon EC2 Spot Interruptions", Auto Scaling User Guide); a group
// without it replaces the instance only after EC2 terminated it, as it
// does any instance that fails its health check.

// mixedPolicy is a group's mixed instances policy as the sim runs it.
type mixedPolicy struct {
	in    astypes.MixedInstancesPolicy
	pools []pool
	// weighted says the overrides carry weights.
	weighted                   bool
	base, percent, spotPools   int
	spotStrategy, odStrategy   string
	byRequirements, rebalances bool
}

// pool is an instance type the group may launch, with its weight and
// On-Demand price (dollars an hour).
type pool struct {
	instanceType string
	weight       int
	price        float64
}

// catalogueType is an instance type the sim's attribute-based selection
// knows: its vCPUs, memory, manufacturer and price.
type catalogueType struct {
	name         string
	vcpu, memMiB int
	manufacturer string
	burstable    bool
	price        float64
	previousGen  bool
}

// mixedCatalogue is the sim's stand-in for EC2's catalogue of instance
// types (On-Demand prices of us-east-1, Linux).
var mixedCatalogue = []catalogueType{
	{name: "t3.medium", vcpu: 2, memMiB: 4096, manufacturer: "intel", burstable: true, price: 0.0416},
	{name: "c5.large", vcpu: 2, memMiB: 4096, manufacturer: "intel", price: 0.085},
	{name: "c6i.large", vcpu: 2, memMiB: 4096, manufacturer: "intel", price: 0.085},
	{name: "c6a.large", vcpu: 2, memMiB: 4096, manufacturer: "amd", price: 0.0765},
	{name: "m5.large", vcpu: 2, memMiB: 8192, manufacturer: "intel", price: 0.096},
	{name: "m6i.large", vcpu: 2, memMiB: 8192, manufacturer: "intel", price: 0.096},
	{name: "m5a.large", vcpu: 2, memMiB: 8192, manufacturer: "amd", price: 0.086},
	{name: "m7g.large", vcpu: 2, memMiB: 8192, manufacturer: "amazon-web-services", price: 0.0816},
	{name: "r5.large", vcpu: 2, memMiB: 16384, manufacturer: "intel", price: 0.126},
	{name: "m4.large", vcpu: 2, memMiB: 8192, manufacturer: "intel", price: 0.10, previousGen: true},
	{name: "c5.xlarge", vcpu: 4, memMiB: 8192, manufacturer: "intel", price: 0.17},
	{name: "m5.xlarge", vcpu: 4, memMiB: 16384, manufacturer: "intel", price: 0.192},
	{name: "m6i.xlarge", vcpu: 4, memMiB: 16384, manufacturer: "intel", price: 0.192},
	{name: "m5.2xlarge", vcpu: 8, memMiB: 32768, manufacturer: "intel", price: 0.384},
}

// priceOf is the On-Demand price of an instance type: the catalogue's, or
// one that doubles with each size for a type it does not list.
func priceOf(instanceType string) float64 {
	for _, c := range mixedCatalogue {
		if c.name == instanceType {
			return c.price
		}
	}
	m := instanceTypeRE.FindStringSubmatch(instanceType)
	if m == nil {
		return 1
	}
	sizes := map[string]float64{"nano": 0.125, "micro": 0.25, "small": 0.5, "medium": 1, "large": 2, "xlarge": 4}
	if v, ok := sizes[m[4]]; ok {
		return 0.05 * v
	}
	if n, err := strconv.Atoi(m[4][:len(m[4])-len("xlarge")]); err == nil {
		return 0.05 * 4 * float64(n)
	}
	return 1
}

// newMixedPolicy checks a MixedInstancesPolicy as CreateAutoScalingGroup
// does (the bounds of LaunchTemplateOverrides, InstancesDistribution and
// InstanceRequirements, the last in requirements.go) and returns it as the
// sim runs it, its pools the overrides' types or the catalogue's types
// that match the requirements on arch (the image's architecture).
func newMixedPolicy(in *astypes.MixedInstancesPolicy, rebalance bool, arch string) (*mixedPolicy, error) {
	if in.LaunchTemplate == nil || in.LaunchTemplate.LaunchTemplateSpecification == nil {
		return nil, apiErr(cloud.CodeValidation, "MixedInstancesPolicy.LaunchTemplate.LaunchTemplateSpecification is required")
	}
	if err := checkOverrideModels(in.LaunchTemplate.Overrides); err != nil {
		return nil, err
	}
	m := &mixedPolicy{in: *in, percent: 100, spotStrategy: "lowest-price", odStrategy: "prioritized", rebalances: rebalance}
	if err := m.readOverrides(in.LaunchTemplate.Overrides, arch); err != nil {
		return nil, err
	}
	if err := m.readDistribution(in.InstancesDistribution); err != nil {
		return nil, err
	}
	return m, nil
}

// readOverrides reads the overrides: at most 40 instance types or 4 sets
// of requirements, not both; weights 1 to 999 on every type or none.
func (m *mixedPolicy) readOverrides(overrides []astypes.LaunchTemplateOverrides, arch string) error {
	var types, reqs int
	for _, o := range overrides {
		if o.InstanceRequirements != nil {
			reqs++
		} else if o.InstanceType != nil {
			types++
		}
		if err := m.readOverride(o, arch); err != nil {
			return err
		}
	}
	switch {
	case types > 0 && reqs > 0:
		return apiErr(cloud.CodeValidation, "You cannot specify both InstanceType and InstanceRequirements overrides in a mixed instances policy.")
	case types > 40:
		return apiErrf(cloud.CodeValidation, "The maximum number of instance types that can be associated with an Auto Scaling group is 40, not %d.", types)
	case reqs > 4:
		return apiErrf(cloud.CodeValidation, "You can specify up to 4 sets of InstanceRequirements, not %d.", reqs)
	case types == 0 && reqs == 0:
		return apiErr(cloud.CodeValidation, "A mixed instances policy requires launch template overrides.")
	case m.weighted && slices.ContainsFunc(overrides, func(o astypes.LaunchTemplateOverrides) bool { return o.WeightedCapacity == nil }):
		return apiErr(cloud.CodeValidation, "If you specify a value for WeightedCapacity for one instance type, you must specify a value for WeightedCapacity for all of them.")
	case len(m.pools) == 0:
		return apiErr(cloud.CodeValidation, "No instance type matches the InstanceRequirements.")
	}
	return nil
}

// readOverride adds the pools of one override: its instance type with
// its weight, or the catalogue's types that meet its requirements.
func (m *mixedPolicy) readOverride(o astypes.LaunchTemplateOverrides, arch string) error {
	switch {
	case o.InstanceType != nil && o.InstanceRequirements != nil:
		return apiErr(cloud.CodeValidation, "You must specify either InstanceType or InstanceRequirements in an override, not both.")
	case o.InstanceRequirements != nil && o.WeightedCapacity != nil:
		return apiErr(cloud.CodeValidation, "WeightedCapacity cannot be specified with InstanceRequirements.")
	case o.InstanceRequirements != nil:
		if err := checkRequirements(o.InstanceRequirements); err != nil {
			return err
		}
		m.byRequirements = true
		for _, c := range matching(o.InstanceRequirements, arch) {
			if !slices.ContainsFunc(m.pools, func(p pool) bool { return p.instanceType == c.name }) {
				m.pools = append(m.pools, pool{instanceType: c.name, weight: 1, price: c.price})
			}
		}
	case o.InstanceType != nil:
		w := 1
		if o.WeightedCapacity != nil {
			n, err := strconv.Atoi(*o.WeightedCapacity)
			if err != nil || n < 1 || n > 999 {
				return apiErrf(cloud.CodeValidation, "WeightedCapacity %q must be a whole number from 1 to 999", *o.WeightedCapacity)
			}
			w, m.weighted = n, true
		}
		m.pools = append(m.pools, pool{instanceType: *o.InstanceType, weight: w, price: priceOf(*o.InstanceType)})
	}
	return nil
}

// readDistribution reads the InstancesDistribution with AWS's defaults
// and bounds.
func (m *mixedPolicy) readDistribution(d *astypes.InstancesDistribution) error {
	if m.byRequirements {
		m.odStrategy = "lowest-price"
	}
	if d == nil {
		d = &astypes.InstancesDistribution{}
	}
	m.base = int(deref(d.OnDemandBaseCapacity))
	if d.OnDemandPercentageAboveBaseCapacity != nil {
		m.percent = int(*d.OnDemandPercentageAboveBaseCapacity)
	}
	m.spotStrategy = cmp.Or(deref(d.SpotAllocationStrategy), m.spotStrategy)
	m.odStrategy = cmp.Or(deref(d.OnDemandAllocationStrategy), m.odStrategy)
	switch {
	case m.base < 0 || m.percent < 0 || m.percent > 100:
		return apiErr(cloud.CodeValidation, "OnDemandBaseCapacity must not be negative and OnDemandPercentageAboveBaseCapacity must be from 0 to 100.")
	case !slices.Contains([]string{"lowest-price", "capacity-optimized", "capacity-optimized-prioritized", "price-capacity-optimized"}, m.spotStrategy):
		return apiErrf(cloud.CodeValidation, "Invalid SpotAllocationStrategy %q", m.spotStrategy)
	case !slices.Contains([]string{"prioritized", "lowest-price"}, m.odStrategy):
		return apiErrf(cloud.CodeValidation, "Invalid OnDemandAllocationStrategy %q", m.odStrategy)
	case m.byRequirements && (m.odStrategy == "prioritized" || m.spotStrategy == "capacity-optimized-prioritized"):
		return apiErr(cloud.CodeValidation, "The prioritized allocation strategies cannot be used with InstanceRequirements.")
	}
	return m.readPools(d.SpotInstancePools)
}

// readPools reads SpotInstancePools: 1 to 20, only with lowest-price
// (default 2).
func (m *mixedPolicy) readPools(n *int32) error {
	switch {
	case n == nil && m.spotStrategy == "lowest-price":
		m.spotPools = 2
	case n == nil:
	case m.spotStrategy != "lowest-price":
		return apiErr(cloud.CodeValidation, "SpotInstancePools is valid only when SpotAllocationStrategy is lowest-price.")
	case *n < 1 || *n > 20:
		return apiErr(cloud.CodeValidation, "SpotInstancePools must be from 1 to 20.")
	default:
		m.spotPools = int(*n)
	}
	return nil
}

// matching are the catalogue's types that meet q and run arch.
func matching(q *astypes.InstanceRequirements, arch string) []catalogueType {
	var out []catalogueType
	for _, c := range mixedCatalogue {
		if archs := instanceTypeArch(c.name); arch != "" && !slices.Contains(archs, arch) {
			continue
		}
		if meets(q, c) {
			out = append(out, c)
		}
	}
	return out
}

// meets reports whether c meets q.
func meets(q *astypes.InstanceRequirements, c catalogueType) bool {
	within := func(n int, lo, hi *int32) bool {
		return (lo == nil || n >= int(*lo)) && (hi == nil || n <= int(*hi))
	}
	if q.VCpuCount == nil || !within(c.vcpu, q.VCpuCount.Min, q.VCpuCount.Max) ||
		q.MemoryMiB == nil || !within(c.memMiB, q.MemoryMiB.Min, q.MemoryMiB.Max) {
		return false
	}
	if len(q.CpuManufacturers) > 0 && !slices.ContainsFunc(q.CpuManufacturers, func(m astypes.CpuManufacturer) bool { return string(m) == c.manufacturer }) {
		return false
	}
	return meetsKind(q, c)
}

// meetsKind reports whether c is of the kind q asks: burstable or not,
// its generation, its name among those allowed and not excluded.
func meetsKind(q *astypes.InstanceRequirements, c catalogueType) bool {
	switch q.BurstablePerformance {
	case astypes.BurstablePerformanceRequired:
		if !c.burstable {
			return false
		}
	case astypes.BurstablePerformanceIncluded:
	default:
		if c.burstable {
			return false
		}
	}
	gen := "current"
	if c.previousGen {
		gen = "previous"
	}
	if len(q.InstanceGenerations) > 0 && !slices.ContainsFunc(q.InstanceGenerations, func(g astypes.InstanceGeneration) bool { return string(g) == gen }) {
		return false
	}
	glob := func(patterns []string) bool {
		return slices.ContainsFunc(patterns, func(p string) bool { ok, _ := path.Match(p, c.name); return ok })
	}
	return (len(q.AllowedInstanceTypes) == 0 || glob(q.AllowedInstanceTypes)) && !glob(q.ExcludedInstanceTypes)
}

// weightOf is what an instance counts toward its group's capacity.
func (i *instance) weightOf() int { return max(i.weight, 1) }

// onDemandTarget is how many units of desired capacity are On-Demand:
// the base, then the percentage of the rest, rounded up.
func (m *mixedPolicy) onDemandTarget(desired int) int {
	base := min(desired, m.base)
	return base + int(math.Ceil(float64(desired-base)*float64(m.percent)/100-1e-9))
}

// choice is what one launch of a group starts: an instance type, its
// weight, and whether it is Spot.
type choice struct {
	instanceType string
	weight       int
	spot         bool
}

// choose is what g's next launch at t starts: On-Demand until its
// On-Demand units reach their target, then Spot, each by its strategy
// among the pools that can take it (a Spot pool EC2 reclaimed lately
// has none). ok is false when no Spot pool has capacity.
func (r *region) choose(g *group, t time.Time) (c choice, ok bool) {
	m := g.mixed
	var od int
	spotIn := map[string]int{}
	for _, i := range g.instances {
		if !i.counts() {
			continue
		}
		if i.spot {
			spotIn[i.instanceType]++
		} else {
			od += i.weightOf()
		}
	}
	if od < m.onDemandTarget(int(g.desired)) {
		p := m.pools[0]
		if m.odStrategy == "lowest-price" {
			p = slices.MinFunc(m.pools, func(a, b pool) int { return cmpFloat(a.price, b.price) })
		}
		return choice{instanceType: p.instanceType, weight: p.weight}, true
	}
	pools := slices.DeleteFunc(slices.Clone(m.pools), func(p pool) bool { return t.Before(r.reclaimed[p.instanceType]) })
	if len(pools) == 0 {
		return choice{}, false
	}
	if m.spotStrategy == "lowest-price" {
		slices.SortStableFunc(pools, func(a, b pool) int { return cmpFloat(a.price, b.price) })
		pools = pools[:min(len(pools), m.spotPools)]
	}
	best := pools[0]
	for _, p := range pools[1:] {
		d := spotIn[p.instanceType] - spotIn[best.instanceType]
		if d < 0 || d == 0 && m.spotStrategy != "capacity-optimized-prioritized" && m.spotStrategy != "capacity-optimized" && p.price < best.price {
			best = p
		}
	}
	return choice{instanceType: best.instanceType, weight: best.weight, spot: true}, true
}

// pick is what g's next launch at t starts: its launch template's type
// On-Demand, or its mixed instances policy's choice (ok false when no
// Spot pool has capacity).
func (r *region) pick(g *group, data *ec2types.RequestLaunchTemplateData, t time.Time) (choice, bool) {
	if g.mixed == nil {
		return choice{instanceType: string(data.InstanceType), weight: 1}, true
	}
	return r.choose(g, t)
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// NoSpotCapacityMessage is the StatusMessage of a Spot launch that found
// no pool with capacity.
const NoSpotCapacityMessage = "There is no Spot capacity available that matches your request. Launching EC2 instance failed."

// spotReclaim is how long EC2 keeps a pool it interrupted an instance in
// without Spot capacity, in the sim: a capacity-optimized strategy then
// launches elsewhere.
const spotReclaim = 10 * time.Minute

// spotNotice is the Spot interruption notice's warning: "two minutes
// before Amazon EC2 stops or terminates your Spot Instance" (EC2 User
// Guide, Spot Instance interruption notices).
const spotNotice = 2 * time.Minute

// InterruptSpot interrupts n Spot instances of group name in an
// account-region at now, oldest first, as EC2 does when it needs the
// capacity back: each gets a rebalance recommendation and, lead later,
// its two-minute interruption notice, then is terminated. Its pool has no
// Spot capacity for a while. With CapacityRebalance the group launches a
// replacement at the first signal and terminates the instance once the
// replacement is in service (or at the interruption, whichever comes
// first); without it, the group replaces it after EC2 terminated it. It
// returns the ids interrupted (fewer than n when the group has fewer Spot
// instances). It is not an API call.
func (w *World) InterruptSpot(account, regionName, name string, n int, lead time.Duration) ([]string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.advance(w.clk.Now())
	r := w.region(account, regionName)
	if r == nil {
		return nil, fmt.Errorf("sim: no account %s", account)
	}
	g := r.groups[name]
	if g == nil {
		return nil, fmt.Errorf("sim: no group %s", name)
	}
	var out []string
	for _, i := range g.instances {
		if len(out) == n {
			break
		}
		if i.spot && i.counts() && i.interruptAt.IsZero() {
			out = append(out, i.id)
			r.interrupt(i, w.now, max(lead, 0))
		}
	}
	return out, nil
}

// interrupt schedules EC2's interruption of Spot instance inst: the
// rebalance recommendation at t, the notice lead later, the termination
// spotNotice after the notice.
func (r *region) interrupt(inst *instance, t time.Time, lead time.Duration) {
	inst.interruptAt = t.Add(lead + spotNotice)
	r.reclaimed[inst.instanceType] = later(r.reclaimed[inst.instanceType], t.Add(spotReclaim))
	if inst.g.mixed != nil && inst.g.mixed.rebalances {
		r.rebalanceSpot(inst, t)
	}
	r.w.at(inst.interruptAt, func(at time.Time) {
		if !inst.terminating.IsZero() {
			return
		}
		r.terminate(inst, at, true, fmt.Sprintf("At %s an instance was taken out of service in response to an EC2 health check indicating it has been terminated or stopped.", stamp(at)))
	})
}

// rebalanceSpot is Capacity Rebalancing for inst at t: the group launches
// a replacement now (inst no longer counts toward its capacity) and
// terminates inst once the replacement is in service and passes the
// group's health check (its load balancers', with the ELB type).
func (r *region) rebalanceSpot(inst *instance, t time.Time) {
	g := inst.g
	inst.atRisk = true
	before := len(g.instances)
	r.fill(g, t, fmt.Sprintf("At %s an instance was launched in response to an EC2 instance rebalance recommendation.  ", stamp(t)))
	if len(g.instances) == before {
		return
	}
	fresh := g.instances[len(g.instances)-1]
	r.atReady(fresh, g.healthCheck == "ELB", func(at time.Time) {
		if inst.terminating.IsZero() && !g.deleting && !g.suspended[ProcessTerminate] {
			r.retire(inst, at, fmt.Sprintf("At %s an instance was taken out of service in response to an EC2 instance rebalance recommendation.", stamp(at)))
		}
	})
}

// counts reports whether the instance counts toward its group's
// capacity: not terminating, not in Standby, not a Spot instance Capacity
// Rebalancing is replacing.
func (i *instance) counts() bool { return i.terminating.IsZero() && !i.standby && !i.atRisk }

// describeMixed is how DescribeAutoScalingGroups shows g's policy: the
// group's launch template is then the policy's, not its own, and its
// InstancesDistribution has AWS's defaults for what the policy left out
// ("this structure uses default values for unspecified parameters,
// except for SpotMaxPrice", InstancesDistribution, Auto Scaling API
// Reference): On-Demand base 0 and 100% above it, Spot lowest-price
// across 2 pools, On-Demand prioritized (lowest-price with instance
// requirements).
func (g *group) describeMixed(out *astypes.AutoScalingGroup) {
	if g.mixed == nil {
		return
	}
	m := g.mixed
	p := m.in
	d := astypes.InstancesDistribution{
		OnDemandBaseCapacity: aws.Int32(int32(m.base)), OnDemandPercentageAboveBaseCapacity: aws.Int32(int32(m.percent)),
		SpotAllocationStrategy: aws.String(m.spotStrategy), OnDemandAllocationStrategy: aws.String(m.odStrategy),
	}
	if m.spotPools > 0 {
		d.SpotInstancePools = aws.Int32(int32(m.spotPools))
	}
	if m.in.InstancesDistribution != nil {
		d.SpotMaxPrice = m.in.InstancesDistribution.SpotMaxPrice
	}
	p.InstancesDistribution = &d
	out.MixedInstancesPolicy, out.LaunchTemplate = &p, nil
	out.CapacityRebalance = aws.Bool(m.rebalances)
}

// updateMixed applies UpdateAutoScalingGroup's MixedInstancesPolicy and
// CapacityRebalance to g: the overrides it names replace the group's, the
// InstancesDistribution fields it sets replace those, the others are kept
// (UpdateAutoScalingGroup, Auto Scaling API Reference), checked as
// CreateAutoScalingGroup checks a policy. Instances running keep running;
// the next launch follows the new policy. A policy for a group without
// one, or naming another launch template, is refused: the simulation does
// not convert a group.
func (r *region) updateMixed(g *group, in *autoscaling.UpdateAutoScalingGroupInput) error {
	if in.MixedInstancesPolicy == nil && in.CapacityRebalance == nil {
		return nil
	}
	if g.mixed == nil {
		if in.MixedInstancesPolicy != nil {
			return apiErr(cloud.CodeValidation, "the simulation does not give a group a mixed instances policy after it was made")
		}
		return nil // accepted, does nothing: the sim's launch template groups run On-Demand
	}
	var probe astypes.AutoScalingGroup
	g.describeMixed(&probe)
	p := probe.MixedInstancesPolicy
	if u := in.MixedInstancesPolicy; u != nil {
		if u.LaunchTemplate != nil && u.LaunchTemplate.LaunchTemplateSpecification != nil {
			return apiErr(cloud.CodeValidation, "the simulation does not change a group's launch template through its mixed instances policy")
		}
		if u.LaunchTemplate != nil && u.LaunchTemplate.Overrides != nil {
			lt := *p.LaunchTemplate
			lt.Overrides = u.LaunchTemplate.Overrides
			p.LaunchTemplate = &lt
		}
		mergeDistribution(p.InstancesDistribution, u.InstancesDistribution)
	}
	m, err := newMixedPolicy(p, deref(cmp.Or(in.CapacityRebalance, probe.CapacityRebalance)), r.archOf(g))
	if err != nil {
		return err
	}
	g.mixed = m
	return nil
}

// mergeDistribution sets in d the fields u sets.
func mergeDistribution(d, u *astypes.InstancesDistribution) {
	if u == nil {
		return
	}
	d.OnDemandBaseCapacity = cmp.Or(u.OnDemandBaseCapacity, d.OnDemandBaseCapacity)
	d.OnDemandPercentageAboveBaseCapacity = cmp.Or(u.OnDemandPercentageAboveBaseCapacity, d.OnDemandPercentageAboveBaseCapacity)
	d.OnDemandAllocationStrategy = cmp.Or(u.OnDemandAllocationStrategy, d.OnDemandAllocationStrategy)
	d.SpotMaxPrice = cmp.Or(u.SpotMaxPrice, d.SpotMaxPrice)
	if u.SpotAllocationStrategy != nil && aws.ToString(u.SpotAllocationStrategy) != aws.ToString(d.SpotAllocationStrategy) {
		d.SpotInstancePools = nil // the pools of lowest-price go with it
	}
	d.SpotAllocationStrategy = cmp.Or(u.SpotAllocationStrategy, d.SpotAllocationStrategy)
	d.SpotInstancePools = cmp.Or(u.SpotInstancePools, d.SpotInstancePools)
}

// weightedCapacity is the WeightedCapacity DescribeAutoScalingGroups
// shows for i: its weight in a mixed group.
func (i *instance) weightedCapacity() *string {
	if i.g.mixed == nil {
		return nil
	}
	s := strconv.Itoa(i.weightOf())
	return &s
}

// SpotInstances are the ids of group name's Spot instances that have not
// begun terminating, in launch order (what EC2's DescribeInstances shows
// with InstanceLifecycle "spot"). It is not an API call.
func (w *World) SpotInstances(account, regionName, name string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.advance(w.clk.Now())
	r := w.region(account, regionName)
	if r == nil || r.groups[name] == nil {
		return nil
	}
	var out []string
	for _, i := range r.groups[name].instances {
		if i.spot && i.terminating.IsZero() {
			out = append(out, i.id)
		}
	}
	return out
}
