package sim_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/cloud"
)

// mixedInput is groupInput with a mixed instances policy over types
// (weights in the same order, none for an unweighted policy): base
// On-Demand units, then percent On-Demand above it.
func (f *fixture) mixedInput(t testing.TB, name string, desired int32, base, percent int32, strategy string, rebalance bool, types []string, weights ...string) *autoscaling.CreateAutoScalingGroupInput {
	in := f.groupInput(t, name, desired)
	var overrides []astypes.LaunchTemplateOverrides
	for i, it := range types {
		o := astypes.LaunchTemplateOverrides{InstanceType: aws.String(it)}
		if i < len(weights) {
			o.WeightedCapacity = aws.String(weights[i])
		}
		overrides = append(overrides, o)
	}
	in.MixedInstancesPolicy = &astypes.MixedInstancesPolicy{
		LaunchTemplate: &astypes.LaunchTemplate{LaunchTemplateSpecification: in.LaunchTemplate, Overrides: overrides},
		InstancesDistribution: &astypes.InstancesDistribution{
			OnDemandBaseCapacity: aws.Int32(base), OnDemandPercentageAboveBaseCapacity: aws.Int32(percent),
			SpotAllocationStrategy: aws.String(strategy),
		},
	}
	in.LaunchTemplate, in.CapacityRebalance = nil, aws.Bool(rebalance)
	return in
}

// capacityOf sums the WeightedCapacity of g's instances not terminating.
func capacityOf(t testing.TB, g *astypes.AutoScalingGroup) int {
	n := 0
	for _, i := range g.Instances {
		if i.LifecycleState == astypes.LifecycleStateTerminating || i.LifecycleState == astypes.LifecycleStateTerminatingWait {
			continue
		}
		w := 1
		if i.WeightedCapacity != nil {
			_, err := fmtSscan(*i.WeightedCapacity, &w)
			require.NoError(t, err)
		}
		n += w
	}
	return n
}

// TestMixedInstancesLaunch checks a mixed group launches as the Auto
// Scaling User Guide's "Configure an Auto Scaling group to use instance
// weights" and the API Reference's InstancesDistribution say: desired
// capacity in units, met even past it; the base On-Demand first, then the
// percentage above it; Spot spread over the pools; the policy, the
// capacity rebalance and each instance's WeightedCapacity shown by
// DescribeAutoScalingGroups.
func TestMixedInstancesLaunch(t *testing.T) {
	f := newFixture(t)
	f.template(t, "lt-mix", amiOK, "")
	in := f.mixedInput(t, "mix", 10, 2, 50, "price-capacity-optimized", true, []string{"m5.large", "m5.xlarge", "c5.xlarge"}, "1", "2", "2")
	in.MaxSize = aws.Int32(20)
	_, err := f.c.AutoScaling.CreateAutoScalingGroup(f.ctx, in)
	require.NoError(t, err)
	g := f.describe(t, "mix")
	require.NotNil(t, g.MixedInstancesPolicy)
	assert.Nil(t, g.LaunchTemplate, "a mixed group shows its template in its policy")
	assert.True(t, aws.ToBool(g.CapacityRebalance))
	units := capacityOf(t, g)
	assert.GreaterOrEqual(t, units, 10)
	assert.Less(t, units, 10+2, "met, past it by less than the largest weight")

	spot := map[string]bool{}
	for _, id := range f.world.SpotInstances(deployer, region, "mix") {
		spot[id] = true
	}
	odUnits, spotTypes := 0, map[string]int{}
	for _, i := range g.Instances {
		w := 1
		_, _ = fmtSscan(aws.ToString(i.WeightedCapacity), &w)
		if spot[aws.ToString(i.InstanceId)] {
			spotTypes[aws.ToString(i.InstanceType)]++
			continue
		}
		odUnits += w
		assert.Equal(t, "m5.large", aws.ToString(i.InstanceType), "On-Demand is prioritized: the first override")
	}
	// 2 base + 50% of the 8 above = 6 On-Demand units; the rest Spot.
	assert.Equal(t, 6, odUnits)
	assert.GreaterOrEqual(t, len(spotTypes), 2, "Spot spreads over pools: %v", spotTypes)
}

// TestMixedInstancesRefused checks what CreateAutoScalingGroup refuses of
// a mixed instances policy (API Reference: LaunchTemplateOverrides,
// InstancesDistribution).
func TestMixedInstancesRefused(t *testing.T) {
	for name, mutate := range map[string]func(in *autoscaling.CreateAutoScalingGroupInput){
		"weight 1000": func(in *autoscaling.CreateAutoScalingGroupInput) {
			in.MixedInstancesPolicy.LaunchTemplate.Overrides[1].WeightedCapacity = aws.String("1000")
		},
		"some weights": func(in *autoscaling.CreateAutoScalingGroupInput) {
			in.MixedInstancesPolicy.LaunchTemplate.Overrides[1].WeightedCapacity = nil
		},
		"percent 101": func(in *autoscaling.CreateAutoScalingGroupInput) {
			in.MixedInstancesPolicy.InstancesDistribution.OnDemandPercentageAboveBaseCapacity = aws.Int32(101)
		},
		"pools without lowest-price": func(in *autoscaling.CreateAutoScalingGroupInput) {
			in.MixedInstancesPolicy.InstancesDistribution.SpotInstancePools = aws.Int32(3)
		},
		"type and requirements": func(in *autoscaling.CreateAutoScalingGroupInput) {
			in.MixedInstancesPolicy.LaunchTemplate.Overrides[0].InstanceRequirements = &astypes.InstanceRequirements{
				VCpuCount: &astypes.VCpuCountRequest{Min: aws.Int32(2)}, MemoryMiB: &astypes.MemoryMiBRequest{Min: aws.Int32(0)}}
		},
		"both template and policy": func(in *autoscaling.CreateAutoScalingGroupInput) {
			in.LaunchTemplate = in.MixedInstancesPolicy.LaunchTemplate.LaunchTemplateSpecification
		},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			f.template(t, "lt-mix", amiOK, "")
			in := f.mixedInput(t, "mix", 2, 0, 0, "price-capacity-optimized", false, []string{"m5.large", "c5.large"}, "1", "1")
			mutate(in)
			_, err := f.c.AutoScaling.CreateAutoScalingGroup(f.ctx, in)
			assertCode(t, err, cloud.CodeValidation)
			assert.Nil(t, f.describe(t, "mix"), "nothing made")
		})
	}
}

// TestMixedInstanceRequirements checks attribute-based selection launches
// only types that meet the requirements and the image's architecture
// (API Reference, InstanceRequirements).
func TestMixedInstanceRequirements(t *testing.T) {
	f := newFixture(t)
	f.template(t, "lt-mix", amiOK, "")
	in := f.mixedInput(t, "mix", 6, 0, 0, "price-capacity-optimized", false, nil)
	in.MixedInstancesPolicy.LaunchTemplate.Overrides = []astypes.LaunchTemplateOverrides{{InstanceRequirements: &astypes.InstanceRequirements{
		VCpuCount: &astypes.VCpuCountRequest{Min: aws.Int32(2), Max: aws.Int32(2)}, MemoryMiB: &astypes.MemoryMiBRequest{Min: aws.Int32(8192), Max: aws.Int32(8192)},
		CpuManufacturers:    []astypes.CpuManufacturer{"intel", "amazon-web-services"},
		InstanceGenerations: []astypes.InstanceGeneration{"current"},
	}}}
	in.MaxSize = aws.Int32(10)
	_, err := f.c.AutoScaling.CreateAutoScalingGroup(f.ctx, in)
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, i := range f.describe(t, "mix").Instances {
		seen[aws.ToString(i.InstanceType)] = true
	}
	assert.Equal(t, map[string]bool{"m5.large": true, "m6i.large": true}, seen, "2 vCPUs, 8 GiB, Intel, current generation (m4.large is previous); m7g.large is arm64, the image x86_64")
}

// TestSpotInterruption checks a Spot interruption as the EC2 User Guide
// describes it ("Spot Instance interruption notices": a two-minute
// warning, then EC2 terminates the instance): without Capacity
// Rebalancing the group replaces the instance only once it is
// terminated; with it ("Capacity Rebalancing", Auto Scaling User Guide)
// the group launches a replacement at the signal and terminates the
// instance once the replacement is in service.
func TestSpotInterruption(t *testing.T) {
	for _, rebalance := range []bool{false, true} {
		t.Run(map[bool]string{false: "without capacity rebalance", true: "with capacity rebalance"}[rebalance], func(t *testing.T) {
			f := newFixture(t)
			f.template(t, "lt-mix", amiOK, "")
			_, err := f.c.AutoScaling.CreateAutoScalingGroup(f.ctx, f.mixedInput(t, "mix", 2, 0, 0, "capacity-optimized", rebalance, []string{"m5.large", "c5.large"}))
			require.NoError(t, err)
			f.clk.Advance(5 * time.Minute)
			require.Equal(t, map[string]int{"InService": 2}, lifecycles(f.describe(t, "mix")))
			ids, err := f.world.InterruptSpot(deployer, region, "mix", 1, 0)
			require.NoError(t, err)
			require.Len(t, ids, 1)
			g := f.describe(t, "mix")
			if !rebalance {
				assert.Equal(t, map[string]int{"InService": 2}, lifecycles(g), "nothing happens before the interruption")
				f.clk.Advance(2*time.Minute + time.Second)
				g = f.describe(t, "mix")
				assert.Equal(t, 1, lifecycles(g)["InService"], "terminated at the interruption, 2 minutes after the notice")
				assert.Equal(t, 1, lifecycles(g)["Pending"], "then replaced")
				return
			}
			assert.Equal(t, map[string]int{"InService": 2, "Pending": 1}, lifecycles(g), "a replacement launched first")
			f.clk.Advance(90 * time.Second)
			g = f.describe(t, "mix")
			assert.Equal(t, 2, lifecycles(g)["InService"], "the replacement in service: %v", lifecycles(g))
			for _, i := range g.Instances {
				if aws.ToString(i.InstanceId) == ids[0] {
					assert.Contains(t, []astypes.LifecycleState{astypes.LifecycleStateTerminating, astypes.LifecycleStateTerminatingWait, astypes.LifecycleStateTerminatingProceed}, i.LifecycleState, "then the interrupted one terminated")
				}
			}
			var cause string
			for _, a := range f.activities(t, "mix") {
				if aws.ToString(a.Description) == "Terminating EC2 instance: "+ids[0] {
					cause = aws.ToString(a.Cause)
				}
			}
			assert.Contains(t, cause, "in response to an EC2 instance rebalance recommendation")
			assert.NotContains(t, f.world.SpotInstances(deployer, region, "mix"), ids[0])
		})
	}
}

func fmtSscan(s string, n *int) (int, error) { return fmt.Sscan(s, n) }

// TestMixedPolicyDescribedWithDefaults: DescribeAutoScalingGroups shows a
// mixed instances policy's InstancesDistribution with AWS's defaults for
// what the policy left out ("this structure uses default values for
// unspecified parameters, except for SpotMaxPrice", InstancesDistribution,
// Auto Scaling API Reference: OnDemandBaseCapacity 0,
// OnDemandPercentageAboveBaseCapacity 100, SpotAllocationStrategy
// lowest-price with SpotInstancePools 2, OnDemandAllocationStrategy
// prioritized, or lowest-price for a policy of InstanceRequirements).
// UpdateAutoScalingGroup changes the overrides, the distribution fields it
// sets and CapacityRebalance, keeping the rest (UpdateAutoScalingGroup,
// Auto Scaling API Reference).
func TestMixedPolicyDescribedWithDefaults(t *testing.T) {
	f := newFixture(t)
	f.template(t, "lt-mix", amiOK, "")
	in := f.mixedInput(t, "mix", 2, 0, 0, "", false, []string{"m5.large", "c5.large"})
	in.MixedInstancesPolicy.InstancesDistribution = nil
	_, err := f.c.AutoScaling.CreateAutoScalingGroup(f.ctx, in)
	require.NoError(t, err)
	want := &astypes.InstancesDistribution{
		OnDemandBaseCapacity: aws.Int32(0), OnDemandPercentageAboveBaseCapacity: aws.Int32(100),
		SpotAllocationStrategy: aws.String("lowest-price"), SpotInstancePools: aws.Int32(2), OnDemandAllocationStrategy: aws.String("prioritized"),
	}
	assert.Equal(t, want, f.describe(t, "mix").MixedInstancesPolicy.InstancesDistribution)

	req := f.mixedInput(t, "req", 2, 0, 0, "", false, nil)
	req.MixedInstancesPolicy.InstancesDistribution = nil
	req.MixedInstancesPolicy.LaunchTemplate.LaunchTemplateSpecification = in.MixedInstancesPolicy.LaunchTemplate.LaunchTemplateSpecification
	req.MixedInstancesPolicy.LaunchTemplate.Overrides = []astypes.LaunchTemplateOverrides{{InstanceRequirements: &astypes.InstanceRequirements{
		VCpuCount: &astypes.VCpuCountRequest{Min: aws.Int32(2), Max: aws.Int32(4)}, MemoryMiB: &astypes.MemoryMiBRequest{Min: aws.Int32(4096)},
	}}}
	_, err = f.c.AutoScaling.CreateAutoScalingGroup(f.ctx, req)
	require.NoError(t, err)
	assert.Equal(t, "lowest-price", aws.ToString(f.describe(t, "req").MixedInstancesPolicy.InstancesDistribution.OnDemandAllocationStrategy))

	_, err = f.c.AutoScaling.UpdateAutoScalingGroup(f.ctx, &autoscaling.UpdateAutoScalingGroupInput{AutoScalingGroupName: aws.String("mix"), CapacityRebalance: aws.Bool(true),
		MixedInstancesPolicy: &astypes.MixedInstancesPolicy{
			LaunchTemplate:        &astypes.LaunchTemplate{Overrides: []astypes.LaunchTemplateOverrides{{InstanceType: aws.String("m5.xlarge")}}},
			InstancesDistribution: &astypes.InstancesDistribution{OnDemandPercentageAboveBaseCapacity: aws.Int32(25), SpotAllocationStrategy: aws.String("capacity-optimized")},
		}})
	require.NoError(t, err)
	g := f.describe(t, "mix")
	assert.True(t, aws.ToBool(g.CapacityRebalance))
	assert.Equal(t, []astypes.LaunchTemplateOverrides{{InstanceType: aws.String("m5.xlarge")}}, g.MixedInstancesPolicy.LaunchTemplate.Overrides)
	assert.Equal(t, &astypes.InstancesDistribution{
		OnDemandBaseCapacity: aws.Int32(0), OnDemandPercentageAboveBaseCapacity: aws.Int32(25),
		SpotAllocationStrategy: aws.String("capacity-optimized"), OnDemandAllocationStrategy: aws.String("prioritized"),
	}, g.MixedInstancesPolicy.InstancesDistribution, "the pools of lowest-price went with it; the rest kept")
	assert.NotNil(t, g.MixedInstancesPolicy.LaunchTemplate.LaunchTemplateSpecification, "the launch template kept")

	_, err = f.c.AutoScaling.UpdateAutoScalingGroup(f.ctx, &autoscaling.UpdateAutoScalingGroupInput{AutoScalingGroupName: aws.String("mix"),
		MixedInstancesPolicy: &astypes.MixedInstancesPolicy{InstancesDistribution: &astypes.InstancesDistribution{OnDemandPercentageAboveBaseCapacity: aws.Int32(101)}}})
	assertCode(t, err, cloud.CodeValidation)
}
