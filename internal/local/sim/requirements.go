package sim

import (
	"fmt"
	"regexp"
	"strings"

	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"

	"github.com/ferryhq/ferry/internal/cloud"
)

// A set of InstanceRequirements is refused in two stages, as AWS refuses
// any request. First the constraints of the service model (each member's
// "Required", "Valid Range", "Array Members", "Length Constraints" and
// "Pattern" on its API Reference page), every one a request breaks
// reported together in one ValidationError ("N validation errors
// detected: Value 'v' at 'member.path' failed to satisfy constraint:
// ..."):
//
//   - VCpuCount and MemoryMiB, each with its Min, are required
//     (InstanceRequirements, VCpuCountRequest, MemoryMiBRequest); Min and
//     Max have "Valid Range: Minimum value of 0". (The Go SDK refuses a
//     missing required member itself, before sending, with a
//     smithy.InvalidParamsError; the sim, called in-process, answers as
//     AWS does a request that reaches it.)
//   - SpotMaxPricePercentageOverLowestPrice,
//     OnDemandMaxPricePercentageOverLowestPrice and
//     MaxSpotPriceAsPercentageOfOptimalOnDemandPrice: "Valid Range: Minimum
//     value of 0".
//   - AllowedInstanceTypes and ExcludedInstanceTypes: "Array Members:
//     Maximum number of 400 items", each "Length Constraints: Minimum
//     length of 1. Maximum length of 30. Pattern: [a-zA-Z0-9\.\*\-]+".
//
// Then the rules the pages state in prose, each its own ValidationError
// (AWS does not document these messages; the sim's wording is its own):
// "If you specify AllowedInstanceTypes, you can't specify
// ExcludedInstanceTypes"; "Only one of SpotMaxPricePercentageOverLowestPrice
// or MaxSpotPriceAsPercentageOfOptimalOnDemandPrice can be specified"; and
// a Max below its Min, a range no instance type is in.

// Bounds of InstanceRequirements (Auto Scaling API Reference).
const (
	maxTypeFilters   = 400
	maxTypeFilterLen = 30
	typeFilterRegexp = `[a-zA-Z0-9\.\*\-]+`
)

var typeFilterRE = regexp.MustCompile(`^(?:` + typeFilterRegexp + `)$`)

// violations are the model constraints one request breaks, in AWS's
// words.
type violations []string

// add records that value at (the member's path, lowerCamelCase, list
// members 1-based as the Query protocol numbers them) fails constraint.
func (v *violations) add(value, at, constraint string) {
	if value == "" {
		*v = append(*v, fmt.Sprintf("Value null at '%s' failed to satisfy constraint: %s", at, constraint))
		return
	}
	*v = append(*v, fmt.Sprintf("Value '%s' at '%s' failed to satisfy constraint: %s", value, at, constraint))
}

// atLeastZero records n at at when it is below 0.
func (v *violations) atLeastZero(n *int32, at string) {
	if n != nil && *n < 0 {
		v.add(fmt.Sprint(*n), at, "Member must have value greater than or equal to 0")
	}
}

// err is the ValidationError of every violation, nil for none.
func (v violations) err() error {
	switch len(v) {
	case 0:
		return nil
	case 1:
		return apiErr(cloud.CodeValidation, "1 validation error detected: "+v[0])
	}
	return apiErrf(cloud.CodeValidation, "%d validation errors detected: %s", len(v), strings.Join(v, "; "))
}

// checkOverrideModels checks the model constraints of every override's
// InstanceRequirements.
func checkOverrideModels(overrides []astypes.LaunchTemplateOverrides) error {
	var v violations
	for i, o := range overrides {
		if q := o.InstanceRequirements; q != nil {
			v.requirements(q, fmt.Sprintf("mixedInstancesPolicy.launchTemplate.overrides.%d.member.instanceRequirements", i+1))
		}
	}
	return v.err()
}

// requirements records what q, at at, breaks of the model.
func (v *violations) requirements(q *astypes.InstanceRequirements, at string) {
	if q.VCpuCount == nil {
		v.add("", at+".vCpuCount", "Member must not be null")
	} else {
		v.minMax(q.VCpuCount.Min, q.VCpuCount.Max, at+".vCpuCount")
	}
	if q.MemoryMiB == nil {
		v.add("", at+".memoryMiB", "Member must not be null")
	} else {
		v.minMax(q.MemoryMiB.Min, q.MemoryMiB.Max, at+".memoryMiB")
	}
	v.atLeastZero(q.SpotMaxPricePercentageOverLowestPrice, at+".spotMaxPricePercentageOverLowestPrice")
	v.atLeastZero(q.OnDemandMaxPricePercentageOverLowestPrice, at+".onDemandMaxPricePercentageOverLowestPrice")
	v.atLeastZero(q.MaxSpotPriceAsPercentageOfOptimalOnDemandPrice, at+".maxSpotPriceAsPercentageOfOptimalOnDemandPrice")
	v.typeFilters(q.AllowedInstanceTypes, at+".allowedInstanceTypes")
	v.typeFilters(q.ExcludedInstanceTypes, at+".excludedInstanceTypes")
}

// minMax records a missing Min and a Min or Max below 0.
func (v *violations) minMax(lo, hi *int32, at string) {
	if lo == nil {
		v.add("", at+".min", "Member must not be null")
	}
	v.atLeastZero(lo, at+".min")
	v.atLeastZero(hi, at+".max")
}

// typeFilters records a list of more than 400 filters, and a list with a
// filter that is empty, longer than 30 or off the pattern (AWS names the
// list, then each constraint its members break).
func (v *violations) typeFilters(list []string, at string) {
	shown := "[" + strings.Join(list, ", ") + "]"
	if len(list) > maxTypeFilters {
		v.add(shown, at, fmt.Sprintf("Member must have length less than or equal to %d", maxTypeFilters))
	}
	var broken []string
	for _, c := range []struct {
		what  string
		fails func(string) bool
	}{
		{fmt.Sprintf("Member must have length less than or equal to %d", maxTypeFilterLen), func(s string) bool { return len(s) > maxTypeFilterLen }},
		{"Member must have length greater than or equal to 1", func(s string) bool { return s == "" }},
		{"Member must satisfy regular expression pattern: " + typeFilterRegexp, func(s string) bool { return s != "" && !typeFilterRE.MatchString(s) }},
	} {
		for _, s := range list {
			if c.fails(s) {
				broken = append(broken, c.what)
				break
			}
		}
	}
	if len(broken) > 0 {
		v.add(shown, at, "Member must satisfy constraint: ["+strings.Join(broken, ", ")+"]")
	}
}

// checkRequirements checks the rules InstanceRequirements states in
// prose, once its model constraints hold.
func checkRequirements(q *astypes.InstanceRequirements) error {
	switch {
	case q.VCpuCount.Max != nil && *q.VCpuCount.Max < *q.VCpuCount.Min:
		return apiErrf(cloud.CodeValidation, "VCpuCount Max (%d) must be greater than or equal to Min (%d).", *q.VCpuCount.Max, *q.VCpuCount.Min)
	case q.MemoryMiB.Max != nil && *q.MemoryMiB.Max < *q.MemoryMiB.Min:
		return apiErrf(cloud.CodeValidation, "MemoryMiB Max (%d) must be greater than or equal to Min (%d).", *q.MemoryMiB.Max, *q.MemoryMiB.Min)
	case len(q.AllowedInstanceTypes) > 0 && len(q.ExcludedInstanceTypes) > 0:
		return apiErr(cloud.CodeValidation, "You can specify either AllowedInstanceTypes or ExcludedInstanceTypes, but not both.")
	case q.SpotMaxPricePercentageOverLowestPrice != nil && q.MaxSpotPriceAsPercentageOfOptimalOnDemandPrice != nil:
		return apiErr(cloud.CodeValidation, "Only one of SpotMaxPricePercentageOverLowestPrice or MaxSpotPriceAsPercentageOfOptimalOnDemandPrice can be specified.")
	}
	return nil
}
