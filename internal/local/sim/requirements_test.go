package sim_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/cloud"
)

// requirementsInput is mixedInput for group name with sets of instance requirements, each
// 2 to 8 vCPUs and 4096 MiB or more (the sim's catalogue has several such
// x86_64 types) edited by edit.
func (f *fixture) requirementsInput(t testing.TB, name string, sets int, edit func(q []*astypes.InstanceRequirements)) *autoscaling.CreateAutoScalingGroupInput {
	in := f.mixedInput(t, name, 2, 0, 0, "price-capacity-optimized", false, nil)
	var qs []*astypes.InstanceRequirements
	for range sets {
		q := &astypes.InstanceRequirements{
			VCpuCount: &astypes.VCpuCountRequest{Min: aws.Int32(2), Max: aws.Int32(8)}, MemoryMiB: &astypes.MemoryMiBRequest{Min: aws.Int32(4096)},
		}
		qs = append(qs, q)
		in.MixedInstancesPolicy.LaunchTemplate.Overrides = append(in.MixedInstancesPolicy.LaunchTemplate.Overrides, astypes.LaunchTemplateOverrides{InstanceRequirements: q})
	}
	if edit != nil {
		edit(qs)
	}
	return in
}

// filtersOf are n instance type filters, the last m5.* (so the
// catalogue's m5.large matches an allowed list), the others x0.* ... .
func filtersOf(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("x%d.*", i)
	}
	out[n-1] = "m5.*"
	return out
}

// TestInstanceRequirementsBounds checks each bound of InstanceRequirements
// at its limit (accepted) and one past it (refused with AWS's
// ValidationError), by CreateAutoScalingGroup and by
// UpdateAutoScalingGroup, as the Auto Scaling API Reference gives them:
// https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_InstanceRequirements.html
// (AllowedInstanceTypes, ExcludedInstanceTypes: "Array Members: Maximum
// number of 400 items. Length Constraints: Minimum length of 1. Maximum
// length of 30. Pattern: [a-zA-Z0-9\.\*\-]+", "If you specify
// AllowedInstanceTypes, you can't specify ExcludedInstanceTypes"; the three
// price protection members "Valid Range: Minimum value of 0", "Only one of
// SpotMaxPricePercentageOverLowestPrice or
// MaxSpotPriceAsPercentageOfOptimalOnDemandPrice can be specified"),
// API_VCpuCountRequest.html and API_MemoryMiBRequest.html (Min required,
// Min and Max "Valid Range: Minimum value of 0"), and
// API_LaunchTemplateOverrides.html ("up to four separate sets of instance
// requirements per Auto Scaling group"). A model constraint's message is
// AWS's shape for it ("1 validation error detected: Value ... at ...
// failed to satisfy constraint: ..."); a Max below its Min has no
// documented wording.
func TestInstanceRequirementsBounds(t *testing.T) {
	const q1 = "mixedInstancesPolicy.launchTemplate.overrides.1.member.instanceRequirements"
	one := func(edit func(q *astypes.InstanceRequirements)) func(qs []*astypes.InstanceRequirements) {
		return func(qs []*astypes.InstanceRequirements) { edit(qs[0]) }
	}
	for _, tc := range []struct {
		name string
		sets int
		edit func(qs []*astypes.InstanceRequirements)
		// want is the refusal's message, "" for none.
		want string
	}{
		{name: "4 sets", sets: 4},
		{name: "5 sets", sets: 5, want: "You can specify up to 4 sets of InstanceRequirements, not 5."},
		{name: "vcpu min 0", sets: 1, edit: one(func(q *astypes.InstanceRequirements) { q.VCpuCount.Min = aws.Int32(0) })},
		{name: "vcpu min -1", sets: 1, edit: one(func(q *astypes.InstanceRequirements) { q.VCpuCount.Min = aws.Int32(-1) }),
			want: "1 validation error detected: Value '-1' at '" + q1 + ".vCpuCount.min' failed to satisfy constraint: Member must have value greater than or equal to 0"},
		{name: "vcpu min missing", sets: 1, edit: one(func(q *astypes.InstanceRequirements) { q.VCpuCount.Min = nil }),
			want: "1 validation error detected: Value null at '" + q1 + ".vCpuCount.min' failed to satisfy constraint: Member must not be null"},
		{name: "memory missing", sets: 1, edit: one(func(q *astypes.InstanceRequirements) { q.MemoryMiB = nil }),
			want: "1 validation error detected: Value null at '" + q1 + ".memoryMiB' failed to satisfy constraint: Member must not be null"},
		{name: "memory min -1 and max -1", sets: 1, edit: one(func(q *astypes.InstanceRequirements) {
			q.MemoryMiB = &astypes.MemoryMiBRequest{Min: aws.Int32(-1), Max: aws.Int32(-1)}
		}), want: "2 validation errors detected: Value '-1' at '" + q1 + ".memoryMiB.min' failed to satisfy constraint: Member must have value greater than or equal to 0; " +
			"Value '-1' at '" + q1 + ".memoryMiB.max' failed to satisfy constraint: Member must have value greater than or equal to 0"},
		{name: "vcpu max equal to min", sets: 1, edit: one(func(q *astypes.InstanceRequirements) { q.VCpuCount.Max = aws.Int32(2) })},
		{name: "vcpu max one below min", sets: 1, edit: one(func(q *astypes.InstanceRequirements) { q.VCpuCount.Max = aws.Int32(1) }),
			want: "VCpuCount Max (1) must be greater than or equal to Min (2)."},
		{name: "memory max one below min", sets: 1, edit: one(func(q *astypes.InstanceRequirements) { q.MemoryMiB.Max = aws.Int32(4095) }),
			want: "MemoryMiB Max (4095) must be greater than or equal to Min (4096)."},
		{name: "400 allowed", sets: 1, edit: one(func(q *astypes.InstanceRequirements) { q.AllowedInstanceTypes = filtersOf(400) })},
		{name: "401 allowed", sets: 1, edit: one(func(q *astypes.InstanceRequirements) { q.AllowedInstanceTypes = filtersOf(401) }),
			want: "1 validation error detected: Value '[" + strings.Join(filtersOf(401), ", ") + "]' at '" + q1 + ".allowedInstanceTypes' failed to satisfy constraint: Member must have length less than or equal to 400"},
		{name: "400 excluded", sets: 1, edit: one(func(q *astypes.InstanceRequirements) { q.ExcludedInstanceTypes = filtersOf(400) })},
		{name: "401 excluded", sets: 1, edit: one(func(q *astypes.InstanceRequirements) { q.ExcludedInstanceTypes = filtersOf(401) }),
			want: "1 validation error detected: Value '[" + strings.Join(filtersOf(401), ", ") + "]' at '" + q1 + ".excludedInstanceTypes' failed to satisfy constraint: Member must have length less than or equal to 400"},
		{name: "allowed and excluded", sets: 1, edit: one(func(q *astypes.InstanceRequirements) {
			q.AllowedInstanceTypes, q.ExcludedInstanceTypes = []string{"m5.*"}, []string{"t3.*"}
		}), want: "You can specify either AllowedInstanceTypes or ExcludedInstanceTypes, but not both."},
		{name: "the documented filters, capitals, 30 characters", sets: 1, edit: one(func(q *astypes.InstanceRequirements) {
			q.ExcludedInstanceTypes = []string{"m5.8xlarge", "c5*.*", "m5a.*", "r*", "*3*", "M5.Large", "-.*", strings.Repeat("x", 30)}
		})},
		{name: "a filter of 31 characters, one empty, one with a space", sets: 1, edit: one(func(q *astypes.InstanceRequirements) {
			q.ExcludedInstanceTypes = []string{strings.Repeat("x", 31), "", "m5 *"}
		}), want: "1 validation error detected: Value '[" + strings.Repeat("x", 31) + ", , m5 *]' at '" + q1 + ".excludedInstanceTypes' failed to satisfy constraint: Member must satisfy constraint: " +
			`[Member must have length less than or equal to 30, Member must have length greater than or equal to 1, Member must satisfy regular expression pattern: [a-zA-Z0-9\.\*\-]+]`},
		{name: "an underscore", sets: 1, edit: one(func(q *astypes.InstanceRequirements) { q.AllowedInstanceTypes = []string{"m5_large"} }),
			want: "1 validation error detected: Value '[m5_large]' at '" + q1 + ".allowedInstanceTypes' failed to satisfy constraint: Member must satisfy constraint: " +
				`[Member must satisfy regular expression pattern: [a-zA-Z0-9\.\*\-]+]`},
		{name: "price protection 0", sets: 1, edit: one(func(q *astypes.InstanceRequirements) {
			q.SpotMaxPricePercentageOverLowestPrice, q.OnDemandMaxPricePercentageOverLowestPrice = aws.Int32(0), aws.Int32(0)
		})},
		{name: "price protection 999999, none", sets: 1, edit: one(func(q *astypes.InstanceRequirements) {
			q.MaxSpotPriceAsPercentageOfOptimalOnDemandPrice, q.OnDemandMaxPricePercentageOverLowestPrice = aws.Int32(999999), aws.Int32(999999)
		})},
		{name: "price protection -1, in the second set", sets: 2, edit: func(qs []*astypes.InstanceRequirements) {
			qs[1].SpotMaxPricePercentageOverLowestPrice = aws.Int32(-1)
			qs[1].OnDemandMaxPricePercentageOverLowestPrice = aws.Int32(-1)
			qs[1].MaxSpotPriceAsPercentageOfOptimalOnDemandPrice = aws.Int32(-1)
		}, want: "3 validation errors detected: " +
			"Value '-1' at 'mixedInstancesPolicy.launchTemplate.overrides.2.member.instanceRequirements.spotMaxPricePercentageOverLowestPrice' failed to satisfy constraint: Member must have value greater than or equal to 0; " +
			"Value '-1' at 'mixedInstancesPolicy.launchTemplate.overrides.2.member.instanceRequirements.onDemandMaxPricePercentageOverLowestPrice' failed to satisfy constraint: Member must have value greater than or equal to 0; " +
			"Value '-1' at 'mixedInstancesPolicy.launchTemplate.overrides.2.member.instanceRequirements.maxSpotPriceAsPercentageOfOptimalOnDemandPrice' failed to satisfy constraint: Member must have value greater than or equal to 0"},
		{name: "both spot price protections", sets: 1, edit: one(func(q *astypes.InstanceRequirements) {
			q.SpotMaxPricePercentageOverLowestPrice, q.MaxSpotPriceAsPercentageOfOptimalOnDemandPrice = aws.Int32(100), aws.Int32(50)
		}), want: "Only one of SpotMaxPricePercentageOverLowestPrice or MaxSpotPriceAsPercentageOfOptimalOnDemandPrice can be specified."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.template(t, "lt-mix", amiOK, "")
			f.template(t, "lt-upd", amiOK, "")
			_, err := f.c.AutoScaling.CreateAutoScalingGroup(f.ctx, f.requirementsInput(t, "mix", tc.sets, tc.edit))
			requireRefusal(t, err, tc.want)
			if tc.want != "" {
				assert.Nil(t, f.describe(t, "mix"), "nothing made")
			}

			// The same policy given to a group made with a valid one.
			_, err = f.c.AutoScaling.CreateAutoScalingGroup(f.ctx, f.requirementsInput(t, "upd", 1, nil))
			require.NoError(t, err)
			before := f.describe(t, "upd").MixedInstancesPolicy.LaunchTemplate.Overrides
			_, err = f.c.AutoScaling.UpdateAutoScalingGroup(f.ctx, &autoscaling.UpdateAutoScalingGroupInput{AutoScalingGroupName: aws.String("upd"),
				MixedInstancesPolicy: &astypes.MixedInstancesPolicy{LaunchTemplate: &astypes.LaunchTemplate{
					Overrides: f.requirementsInput(t, "upd", tc.sets, tc.edit).MixedInstancesPolicy.LaunchTemplate.Overrides}}})
			requireRefusal(t, err, tc.want)
			if tc.want != "" {
				assert.Equal(t, before, f.describe(t, "upd").MixedInstancesPolicy.LaunchTemplate.Overrides, "the group's policy kept")
			}
		})
	}
}

// requireRefusal: err is nil when want is "", else AWS's ValidationError
// with message want.
func requireRefusal(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		require.NoError(t, err)
		return
	}
	assertCode(t, err, cloud.CodeValidation)
	var apiErr smithy.APIError
	require.True(t, errors.As(err, &apiErr), "%v", err)
	assert.Equal(t, want, apiErr.ErrorMessage())
}
