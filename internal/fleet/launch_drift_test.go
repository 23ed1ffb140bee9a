package fleet_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/stretchr/testify/assert"

	"github.com/ferryhq/ferry/internal/fleet"
)

// TestLaunchDrift: a group launches as ferry made it only from its own
// launch template at the version ferry pinned, without a mixed
// instances policy.
func TestLaunchDrift(t *testing.T) {
	const name = "acme/shop/staging/web/r1"
	lt := func(name, version string) *asgtypes.LaunchTemplateSpecification {
		return &asgtypes.LaunchTemplateSpecification{LaunchTemplateName: aws.String(name), Version: aws.String(version)}
	}
	for _, tc := range []struct {
		what string
		g    asgtypes.AutoScalingGroup
		want string
	}{
		{"as made", asgtypes.AutoScalingGroup{LaunchTemplate: lt(name, "1")}, ""},
		{"another version", asgtypes.AutoScalingGroup{LaunchTemplate: lt(name, "$Latest")}, "launches from " + name + " version $Latest, not from " + name + " version 1"},
		{"another template", asgtypes.AutoScalingGroup{LaunchTemplate: lt("hand-made", "3")}, "launches from hand-made version 3, not from " + name + " version 1"},
		{"a template by id", asgtypes.AutoScalingGroup{LaunchTemplate: &asgtypes.LaunchTemplateSpecification{LaunchTemplateId: aws.String("lt-0abc"), Version: aws.String("1")}},
			"launches from lt-0abc version 1, not from " + name + " version 1"},
		{"no template", asgtypes.AutoScalingGroup{}, "launches from no launch template, not from " + name + " version 1"},
		{"a mixed instances policy beside the template", asgtypes.AutoScalingGroup{LaunchTemplate: lt(name, "1"), MixedInstancesPolicy: &asgtypes.MixedInstancesPolicy{}},
			"launches from a mixed instances policy without its launch template " + name + " version 1"},
		{"a mixed instances policy with a template of its own beside the template", asgtypes.AutoScalingGroup{LaunchTemplate: lt(name, "1"), MixedInstancesPolicy: &asgtypes.MixedInstancesPolicy{
			LaunchTemplate: &asgtypes.LaunchTemplate{LaunchTemplateSpecification: lt(name, "1")}}},
			"launches from a mixed instances policy without its launch template " + name + " version 1"},
		{"a mixed instances policy as made", asgtypes.AutoScalingGroup{MixedInstancesPolicy: &asgtypes.MixedInstancesPolicy{
			LaunchTemplate: &asgtypes.LaunchTemplate{LaunchTemplateSpecification: lt(name, "1"), Overrides: []asgtypes.LaunchTemplateOverrides{{InstanceType: aws.String("m5.large")}}}}}, ""},
		{"a mixed instances policy at another version", asgtypes.AutoScalingGroup{MixedInstancesPolicy: &asgtypes.MixedInstancesPolicy{
			LaunchTemplate: &asgtypes.LaunchTemplate{LaunchTemplateSpecification: lt(name, "$Latest")}}},
			"launches from " + name + " version $Latest, not from " + name + " version 1"},
		{"an override from another template", asgtypes.AutoScalingGroup{MixedInstancesPolicy: &asgtypes.MixedInstancesPolicy{
			LaunchTemplate: &asgtypes.LaunchTemplate{LaunchTemplateSpecification: lt(name, "1"), Overrides: []asgtypes.LaunchTemplateOverrides{
				{InstanceType: aws.String("m5.large"), LaunchTemplateSpecification: lt("hand-made", "1")}}}}},
			"launches an override of its mixed instances policy from another launch template, not from " + name + " version 1"},
	} {
		tc.g.AutoScalingGroupName = aws.String(name)
		assert.Equal(t, tc.want, fleet.LaunchDrift(tc.g), tc.what)
	}
}
