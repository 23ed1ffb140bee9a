package deployer

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"

	"github.com/ferryhq/ferry/internal/fleet"
	"github.com/ferryhq/ferry/internal/release"
)

// AWS's defaults of a mixed instances policy, as DescribeAutoScalingGroups
// shows a policy made without them (InstancesDistribution and
// InstanceRequirements, Auto Scaling API Reference: "this structure uses
// default values for unspecified parameters, except for SpotMaxPrice").
const (
	awsSpotDefault        = release.SpotLowestPrice
	awsSpotPoolsDefault   = 2
	awsPercentDefault     = 100
	awsBurstableDefault   = "excluded"
	awsSpotPriceDefault   = 100
	awsDemandPriceDefault = 20
)

// mixedDrift says how group g's mixed instances policy (its overrides:
// instance types with their weights, or instance requirements; its
// On-Demand base and percentage and allocation strategies; Capacity
// Rebalancing) differs from the one its service svc asks (mixedOf), each
// side read with AWS's defaults for what it leaves out.
func mixedDrift(g asgtypes.AutoScalingGroup, svc *release.Service) []string {
	want, got := mixedOf(svc), g.MixedInstancesPolicy
	switch {
	case want == nil && got == nil:
		return nil
	case want == nil:
		return []string{fmt.Sprintf("a mixed instances policy (%s), not the release's instance_type %s", describeOverrides(overridesOf(got)), svc.InstanceType)}
	case got == nil:
		return []string{fmt.Sprintf("no mixed instances policy, not the release's (%s)", describeOverrides(want.Overrides))}
	}
	var out []string
	if g, w := describeOverrides(overridesOf(got)), describeOverrides(want.Overrides); g != w {
		out = append(out, fmt.Sprintf("overrides %s, not the release's %s", g, w))
	}
	byRequirements := len(want.Overrides) > 0 && want.Overrides[0].InstanceRequirements != nil
	if g, w := distributionOf(got.InstancesDistribution, byRequirements), wantedDistribution(want); g != w {
		out = append(out, fmt.Sprintf("%s, not the release's %s", g, w))
	}
	if rebalance := aws.ToBool(g.CapacityRebalance); rebalance != want.CapacityRebalance {
		out = append(out, fmt.Sprintf("capacity rebalance %t, not the release's %t", rebalance, want.CapacityRebalance))
	}
	return out
}

// overridesOf are the launch template overrides of policy p.
func overridesOf(p *asgtypes.MixedInstancesPolicy) []asgtypes.LaunchTemplateOverrides {
	if p.LaunchTemplate == nil {
		return nil
	}
	return p.LaunchTemplate.Overrides
}

// distribution is how a mixed instances policy splits its capacity, as
// drift compares it: Spot pools count with lowest-price only.
type distribution struct {
	base, percent, pools int
	spot, onDemand       string
}

func (d distribution) String() string {
	s := fmt.Sprintf("On-Demand base %d and %d%% above it, Spot %s", d.base, d.percent, d.spot)
	if d.pools > 0 {
		s += fmt.Sprintf(" across %d pools", d.pools)
	}
	return s + ", On-Demand " + d.onDemand
}

// distributionOf is d as a group describes it, AWS's defaults for what it
// leaves out: the On-Demand strategy lowest-price with instance
// requirements, else prioritized.
func distributionOf(d *asgtypes.InstancesDistribution, byRequirements bool) distribution {
	if d == nil {
		d = &asgtypes.InstancesDistribution{}
	}
	onDemand := release.OnDemandPrioritized
	if byRequirements {
		onDemand = release.OnDemandLowestPrice
	}
	out := distribution{
		base: int(aws.ToInt32(d.OnDemandBaseCapacity)), percent: int(aws.ToInt32(cmp.Or(d.OnDemandPercentageAboveBaseCapacity, aws.Int32(awsPercentDefault)))),
		spot: cmp.Or(aws.ToString(d.SpotAllocationStrategy), awsSpotDefault), onDemand: cmp.Or(aws.ToString(d.OnDemandAllocationStrategy), onDemand),
	}
	if out.spot == release.SpotLowestPrice {
		out.pools = int(aws.ToInt32(cmp.Or(d.SpotInstancePools, aws.Int32(awsSpotPoolsDefault))))
	}
	return out
}

// wantedDistribution is the distribution of the policy m a release asks.
func wantedDistribution(m *fleet.Mixed) distribution {
	out := distribution{base: m.OnDemandBaseCapacity, percent: m.OnDemandPercentageAboveBase, spot: m.SpotAllocationStrategy, onDemand: m.OnDemandAllocationStrategy}
	if out.spot == release.SpotLowestPrice {
		out.pools = cmp.Or(m.SpotInstancePools, awsSpotPoolsDefault)
	}
	return out
}

// describeOverrides is overrides in order, each an instance type with its
// weight (m5.xlarge=2) or a set of instance requirements.
func describeOverrides(overrides []asgtypes.LaunchTemplateOverrides) string {
	parts := make([]string, 0, len(overrides))
	for _, o := range overrides {
		switch {
		case o.InstanceRequirements != nil:
			parts = append(parts, describeRequirements(o.InstanceRequirements))
		case o.WeightedCapacity != nil:
			parts = append(parts, aws.ToString(o.InstanceType)+"="+aws.ToString(o.WeightedCapacity))
		default:
			parts = append(parts, aws.ToString(o.InstanceType))
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// describeRequirements is q, AWS's defaults for what it leaves out.
func describeRequirements(q *asgtypes.InstanceRequirements) string {
	span := func(lo, hi *int32) string {
		s := strconv.Itoa(int(aws.ToInt32(lo))) + "-"
		if hi != nil {
			s += strconv.Itoa(int(*hi))
		}
		return s
	}
	var vcpu, mem string
	if q.VCpuCount != nil {
		vcpu = span(q.VCpuCount.Min, q.VCpuCount.Max)
	}
	if q.MemoryMiB != nil {
		mem = span(q.MemoryMiB.Min, q.MemoryMiB.Max)
	}
	s := fmt.Sprintf("{vcpu %s memory_mib %s cpu %v generations %v burstable %s allowed %v excluded %v spot_max_price +%d%% on_demand_max_price +%d%%}",
		vcpu, mem, q.CpuManufacturers, q.InstanceGenerations, cmp.Or(string(q.BurstablePerformance), awsBurstableDefault),
		q.AllowedInstanceTypes, q.ExcludedInstanceTypes,
		aws.ToInt32(cmp.Or(q.SpotMaxPricePercentageOverLowestPrice, aws.Int32(awsSpotPriceDefault))),
		aws.ToInt32(cmp.Or(q.OnDemandMaxPricePercentageOverLowestPrice, aws.Int32(awsDemandPriceDefault))))
	return s
}
