package deployer

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/fleet"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
)

// mixedBoundCase is one mixed instances policy at or past one of AWS's
// bounds, and whether AWS refuses it.
type mixedBoundCase struct {
	name string
	// edit changes testdata/spot-fleet-release.json's policy (three
	// weighted types, a quarter On-Demand above a base of one).
	edit    func(m *release.MixedInstances)
	refused bool
}

// mixedBoundCases are the bounds of a mixed instances policy, each at
// its limit and one past it, as the Auto Scaling API Reference gives
// them (https://docs.aws.amazon.com/autoscaling/ec2/APIReference/):
// API_LaunchTemplateOverrides.html (40 instance types, 4 sets of
// instance requirements, WeightedCapacity 1 to 999 on every type or
// none), API_InstancesDistribution.html (OnDemandPercentageAboveBaseCapacity
// 0 to 100, SpotInstancePools 1 to 20 and only with lowest-price, the
// prioritized strategies not with instance requirements),
// API_InstanceRequirements.html, API_VCpuCountRequest.html and
// API_MemoryMiBRequest.html (minimums of 0, at most 400 allowed or
// excluded types of AWS's pattern and not both, price protection from 0);
// every number an Integer (32 bits).
func mixedBoundCases() []mixedBoundCase {
	types := func(n int) func(m *release.MixedInstances) {
		return func(m *release.MixedInstances) {
			m.Overrides = nil
			for i := range n {
				family := []string{"m5", "c5", "r5", "m6i", "c6i", "r6i", "m5a", "c5a"}[i%8]
				size := []string{"large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge"}[i/8]
				m.Overrides = append(m.Overrides, release.Override{InstanceType: family + "." + size})
			}
		}
	}
	weight := func(w int) func(m *release.MixedInstances) {
		return func(m *release.MixedInstances) { m.Overrides[1].Weight = w }
	}
	return append([]mixedBoundCase{
		{name: "the release as it is"},
		{name: "40 types", edit: types(40)},
		{name: "41 types", edit: types(41), refused: true},
		{name: "weight 999", edit: weight(999)},
		{name: "weight 1000", edit: weight(1000), refused: true},
		{name: "weight 0, beside weights", edit: weight(0), refused: true},
		{name: "base 0", edit: func(m *release.MixedInstances) { m.OnDemandBaseCapacity = 0 }},
		{name: "base -1", edit: func(m *release.MixedInstances) { m.OnDemandBaseCapacity = -1 }, refused: true},
		{name: "base 2147483647", edit: func(m *release.MixedInstances) { m.OnDemandBaseCapacity = math.MaxInt32 }},
		{name: "base 2147483648", edit: func(m *release.MixedInstances) { m.OnDemandBaseCapacity = math.MaxInt32 + 1 }, refused: true},
		{name: "percentage 0", edit: func(m *release.MixedInstances) { m.OnDemandPercentageAboveBase = ptrTo(0) }},
		{name: "percentage -1", edit: func(m *release.MixedInstances) { m.OnDemandPercentageAboveBase = ptrTo(-1) }, refused: true},
		{name: "percentage 100", edit: func(m *release.MixedInstances) {
			m.OnDemandPercentageAboveBase, m.CapacityRebalance = ptrTo(100), false
		}},
		{name: "percentage 101", edit: func(m *release.MixedInstances) {
			m.OnDemandPercentageAboveBase, m.CapacityRebalance = ptrTo(101), false
		}, refused: true},
		{name: "1 pool", edit: func(m *release.MixedInstances) {
			m.SpotAllocationStrategy, m.SpotInstancePools = release.SpotLowestPrice, 1
		}},
		{name: "20 pools", edit: func(m *release.MixedInstances) {
			m.SpotAllocationStrategy, m.SpotInstancePools = release.SpotLowestPrice, 20
		}},
		{name: "21 pools", edit: func(m *release.MixedInstances) {
			m.SpotAllocationStrategy, m.SpotInstancePools = release.SpotLowestPrice, 21
		}, refused: true},
		{name: "pools without lowest-price", edit: func(m *release.MixedInstances) { m.SpotInstancePools = 3 }, refused: true},
		{name: "an unknown Spot strategy", edit: func(m *release.MixedInstances) { m.SpotAllocationStrategy = "cheapest" }, refused: true},
		{name: "types and requirements", edit: func(m *release.MixedInstances) {
			m.Overrides = append(m.Overrides, release.Override{Requirements: requirements(nil)})
			for i := range m.Overrides {
				m.Overrides[i].Weight = 0
			}
		}, refused: true},
	}, requirementBoundCases()...)
}

// requirements are 2 to 8 vCPUs and 4096 MiB or more (several x86_64
// types of the simulation's catalogue), edited by edit.
func requirements(edit func(q *release.InstanceRequirements)) *release.InstanceRequirements {
	q := &release.InstanceRequirements{VCPU: &release.IntRange{Min: 2, Max: ptrTo(8)}, MemoryMiB: &release.IntRange{Min: 4096}}
	if edit != nil {
		edit(q)
	}
	return q
}

// requirementBoundCases are the bounds of instance requirements.
func requirementBoundCases() []mixedBoundCase {
	// sets replaces the overrides with n sets of requirements, On-Demand
	// lowest-price (the release read has prioritized, the default with
	// instance types).
	sets := func(n int, edit func(q *release.InstanceRequirements)) func(m *release.MixedInstances) {
		return func(m *release.MixedInstances) {
			m.Overrides, m.OnDemandAllocationStrategy = nil, release.OnDemandLowestPrice
			for range n {
				m.Overrides = append(m.Overrides, release.Override{Requirements: requirements(edit)})
			}
		}
	}
	req := func(edit func(q *release.InstanceRequirements)) func(m *release.MixedInstances) { return sets(1, edit) }
	// filters are n type filters, the last m5.* (so that an allowed list
	// matches the catalogue's m5.large).
	filters := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("x%d.*", i)
		}
		out[n-1] = "m5.*"
		return out
	}
	return []mixedBoundCase{
		{name: "4 requirement sets", edit: sets(4, nil)},
		{name: "5 requirement sets", edit: sets(5, nil), refused: true},
		{name: "prioritized On-Demand with requirements", edit: func(m *release.MixedInstances) {
			sets(1, nil)(m)
			m.OnDemandAllocationStrategy = release.OnDemandPrioritized
		}, refused: true},
		{name: "vcpu from 0", edit: req(func(q *release.InstanceRequirements) { q.VCPU.Min = 0 })},
		{name: "vcpu from -1", edit: req(func(q *release.InstanceRequirements) { q.VCPU.Min = -1 }), refused: true},
		{name: "memory from -1", edit: req(func(q *release.InstanceRequirements) { q.MemoryMiB.Min = -1 }), refused: true},
		{name: "vcpu missing", edit: req(func(q *release.InstanceRequirements) { q.VCPU = nil }), refused: true},
		{name: "memory missing", edit: req(func(q *release.InstanceRequirements) { q.MemoryMiB = nil }), refused: true},
		{name: "vcpu max equal to min", edit: req(func(q *release.InstanceRequirements) { q.VCPU.Max = ptrTo(2) })},
		{name: "vcpu max below min", edit: req(func(q *release.InstanceRequirements) { q.VCPU.Max = ptrTo(1) }), refused: true},
		{name: "memory max below min", edit: req(func(q *release.InstanceRequirements) { q.MemoryMiB.Max = ptrTo(4095) }), refused: true},
		{name: "vcpu max 2147483647", edit: req(func(q *release.InstanceRequirements) { q.VCPU.Max = ptrTo(math.MaxInt32) })},
		{name: "vcpu max 2147483648", edit: req(func(q *release.InstanceRequirements) { q.VCPU.Max = ptrTo(math.MaxInt32 + 1) }), refused: true},
		{name: "400 allowed types", edit: req(func(q *release.InstanceRequirements) { q.AllowedInstanceTypes = filters(400) })},
		{name: "401 allowed types", edit: req(func(q *release.InstanceRequirements) { q.AllowedInstanceTypes = filters(401) }), refused: true},
		{name: "400 excluded types", edit: req(func(q *release.InstanceRequirements) { q.ExcludedInstanceTypes = filters(400) })},
		{name: "401 excluded types", edit: req(func(q *release.InstanceRequirements) { q.ExcludedInstanceTypes = filters(401) }), refused: true},
		{name: "allowed and excluded types", edit: req(func(q *release.InstanceRequirements) {
			q.AllowedInstanceTypes, q.ExcludedInstanceTypes = []string{"m5.*"}, []string{"t3.*"}
		}), refused: true},
		{name: "the documented filters, capitals, 30 characters", edit: req(func(q *release.InstanceRequirements) {
			q.ExcludedInstanceTypes = []string{"m5.8xlarge", "c5*.*", "m5a.*", "r*", "*3*", "M5.Large", "-.*", strings.Repeat("x", 30)}
		})},
		{name: "a filter of 31 characters", edit: req(func(q *release.InstanceRequirements) { q.ExcludedInstanceTypes = []string{strings.Repeat("x", 31)} }), refused: true},
		{name: "an empty filter", edit: req(func(q *release.InstanceRequirements) { q.ExcludedInstanceTypes = []string{""} }), refused: true},
		{name: "a filter with a space", edit: req(func(q *release.InstanceRequirements) { q.ExcludedInstanceTypes = []string{"m5 *"} }), refused: true},
		{name: "price protection 0", edit: req(func(q *release.InstanceRequirements) {
			q.SpotMaxPricePercentageOverLowestPrice, q.OnDemandMaxPricePercentageOverLowestPrice = ptrTo(0), ptrTo(0)
		})},
		{name: "price protection 999999, none", edit: req(func(q *release.InstanceRequirements) {
			q.SpotMaxPricePercentageOverLowestPrice, q.OnDemandMaxPricePercentageOverLowestPrice = ptrTo(999999), ptrTo(999999)
		})},
		{name: "Spot price protection -1", edit: req(func(q *release.InstanceRequirements) { q.SpotMaxPricePercentageOverLowestPrice = ptrTo(-1) }), refused: true},
		{name: "On-Demand price protection -1", edit: req(func(q *release.InstanceRequirements) { q.OnDemandMaxPricePercentageOverLowestPrice = ptrTo(-1) }), refused: true},
		{name: "On-Demand price protection 2147483648", edit: req(func(q *release.InstanceRequirements) {
			q.OnDemandMaxPricePercentageOverLowestPrice = ptrTo(math.MaxInt32 + 1)
		}), refused: true},
	}
}

func ptrTo(n int) *int { return &n }

// TestMixedBoundsAgree: one table of mixed instances policies at AWS's
// bounds (mixedBoundCases) drives both release validation and the group
// the deployer makes of the release (mixedOf, fleet's CreateGroup) on the
// simulated Auto Scaling, which refuses what the API Reference says AWS
// refuses. Validation and CreateAutoScalingGroup must each accept the
// value AWS accepts and refuse the one it refuses: a value passing one
// and failing the other is a bug in one of them (validation letting
// through a release AWS refuses mid-deploy, or refusing one AWS takes;
// the deployer sending another value than the release's).
func TestMixedBoundsAgree(t *testing.T) {
	base, err := release.ReadFile(filepath.Join("..", "..", "testdata", "spot-fleet-release.json"))
	require.NoError(t, err)
	world, err := sim.New(clock.NewVirtual(epoch), worldSpec(t))
	require.NoError(t, err)
	owner := fleet.Owner{Project: base.ProjectName, Config: base.ConfigName}
	for i, tc := range mixedBoundCases() {
		t.Run(tc.name, func(t *testing.T) {
			r := base.Clone()
			if tc.edit != nil {
				tc.edit(r.Services["web"].MixedInstances)
			}
			verr := r.Validate(false)
			assert.Equal(t, tc.refused, verr != nil, "validation: %v", verr)

			id := fmt.Sprintf("agree%d", i)
			name := naming.GroupName(r.ProjectName, r.ConfigName, "web", id)
			tags := map[string]string{naming.TagProjectName: owner.Project, naming.TagConfigName: owner.Config,
				naming.TagDeployWith: naming.DeployWithValue, naming.TagReleaseID: id}
			rel := &fleet.Release{Clients: world.Clients(account, region), Owner: owner, ID: id, SHA256: "sha-" + id}
			require.NoError(t, rel.CreateTemplate(t.Context(), fleet.Template{Name: name, ImageID: "ami-0000000000000ab01",
				InstanceType: "m5.large", UserData: []byte("#!/bin/sh\n"), Tags: tags}))
			cerr := rel.CreateGroup(t.Context(), fleet.Group{Name: name, MinSize: 1, MaxSize: 12, Desired: 2,
				Subnets: []string{"subnet-00000000000000a01"}, HealthCheckGracePeriod: time.Minute, Tags: tags,
				Mixed: mixedOf(r.Services["web"])})
			assert.Equal(t, tc.refused, cerr != nil, "CreateAutoScalingGroup: %v", cerr)
		})
	}
}
