package querylist

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbv2types "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	smithytime "github.com/aws/smithy-go/time"
)

// AutoScaling is an option of an Auto Scaling client (NewFromConfig's
// optFns) that decodes the instances and tags of DescribeAutoScalingGroups'
// groups, and DescribeScalingActivities' activities, here, the rest of
// each answer with the SDK.
func AutoScaling(o *autoscaling.Options) {
	o.APIOptions = append(o.APIOptions, swap("DescribeAutoScalingGroups", groups), swap("DescribeScalingActivities", activities))
}

// ELBv2 is an option of an Elastic Load Balancing v2 client that decodes
// DescribeTargetHealth's targets here, the rest of the answer with the
// SDK.
func ELBv2(o *elbv2.Options) {
	o.APIOptions = append(o.APIOptions, swap("DescribeTargetHealth", targetHealth))
}

// groups are DescribeAutoScalingGroups' answers: each group's instances
// and tags (Auto Scaling API Reference: DescribeAutoScalingGroups,
// AutoScalingGroup, Instance, TagDescription).
var groups = answer{
	result: "DescribeAutoScalingGroupsResult",
	owner:  []string{"AutoScalingGroups", "member"},
	count: func(result any) (int, bool) {
		out, ok := result.(*autoscaling.DescribeAutoScalingGroupsOutput)
		if !ok {
			return 0, false
		}
		return len(out.AutoScalingGroups), true
	},
	lists: []lister{
		list[asgtypes.Instance]{
			elem: "Instances",
			set: func(result any, owner int, members []asgtypes.Instance) {
				result.(*autoscaling.DescribeAutoScalingGroupsOutput).AutoScalingGroups[owner].Instances = members
			},
			member: fields[asgtypes.Instance]{
				str("AvailabilityZone", func(v *asgtypes.Instance) **string { return &v.AvailabilityZone }),
				str("AvailabilityZoneId", func(v *asgtypes.Instance) **string { return &v.AvailabilityZoneId }),
				str("HealthStatus", func(v *asgtypes.Instance) **string { return &v.HealthStatus }),
				str("ImageId", func(v *asgtypes.Instance) **string { return &v.ImageId }),
				str("InstanceId", func(v *asgtypes.Instance) **string { return &v.InstanceId }),
				str("InstanceType", func(v *asgtypes.Instance) **string { return &v.InstanceType }),
				str("LaunchConfigurationName", func(v *asgtypes.Instance) **string { return &v.LaunchConfigurationName }),
				object("LaunchTemplate", func(v *asgtypes.Instance) **asgtypes.LaunchTemplateSpecification { return &v.LaunchTemplate },
					fields[asgtypes.LaunchTemplateSpecification]{
						str("LaunchTemplateId", func(v *asgtypes.LaunchTemplateSpecification) **string { return &v.LaunchTemplateId }),
						str("LaunchTemplateName", func(v *asgtypes.LaunchTemplateSpecification) **string { return &v.LaunchTemplateName }),
						str("Version", func(v *asgtypes.LaunchTemplateSpecification) **string { return &v.Version }),
					}),
				enum("LifecycleState", func(v *asgtypes.Instance) *asgtypes.LifecycleState { return &v.LifecycleState }),
				parsed("ProtectedFromScaleIn", func(v *asgtypes.Instance) **bool { return &v.ProtectedFromScaleIn }, boolean),
				str("WeightedCapacity", func(v *asgtypes.Instance) **string { return &v.WeightedCapacity }),
			},
		},
		list[asgtypes.TagDescription]{
			elem: "Tags",
			set: func(result any, owner int, members []asgtypes.TagDescription) {
				result.(*autoscaling.DescribeAutoScalingGroupsOutput).AutoScalingGroups[owner].Tags = members
			},
			member: fields[asgtypes.TagDescription]{
				str("Key", func(v *asgtypes.TagDescription) **string { return &v.Key }),
				parsed("PropagateAtLaunch", func(v *asgtypes.TagDescription) **bool { return &v.PropagateAtLaunch }, boolean),
				str("ResourceId", func(v *asgtypes.TagDescription) **string { return &v.ResourceId }),
				str("ResourceType", func(v *asgtypes.TagDescription) **string { return &v.ResourceType }),
				str("Value", func(v *asgtypes.TagDescription) **string { return &v.Value }),
			},
		},
	},
}

// activities are DescribeScalingActivities' answers: the activities
// (Auto Scaling API Reference: DescribeScalingActivities, Activity).
var activities = answer{
	result: "DescribeScalingActivitiesResult",
	count:  resultOf[autoscaling.DescribeScalingActivitiesOutput],
	lists: []lister{list[asgtypes.Activity]{
		elem: "Activities",
		set: func(result any, _ int, members []asgtypes.Activity) {
			result.(*autoscaling.DescribeScalingActivitiesOutput).Activities = members
		},
		member: fields[asgtypes.Activity]{
			str("ActivityId", func(v *asgtypes.Activity) **string { return &v.ActivityId }),
			str("AutoScalingGroupARN", func(v *asgtypes.Activity) **string { return &v.AutoScalingGroupARN }),
			str("AutoScalingGroupName", func(v *asgtypes.Activity) **string { return &v.AutoScalingGroupName }),
			str("AutoScalingGroupState", func(v *asgtypes.Activity) **string { return &v.AutoScalingGroupState }),
			str("Cause", func(v *asgtypes.Activity) **string { return &v.Cause }),
			str("Description", func(v *asgtypes.Activity) **string { return &v.Description }),
			str("Details", func(v *asgtypes.Activity) **string { return &v.Details }),
			parsed("EndTime", func(v *asgtypes.Activity) **time.Time { return &v.EndTime }, dateTime),
			parsed("Progress", func(v *asgtypes.Activity) **int32 { return &v.Progress }, digits),
			parsed("StartTime", func(v *asgtypes.Activity) **time.Time { return &v.StartTime }, dateTime),
			enum("StatusCode", func(v *asgtypes.Activity) *asgtypes.ScalingActivityStatusCode { return &v.StatusCode }),
			str("StatusMessage", func(v *asgtypes.Activity) **string { return &v.StatusMessage }),
		},
	}},
}

// targetHealth are DescribeTargetHealth's answers: the targets (Elastic
// Load Balancing API Reference, version 2015-12-01: DescribeTargetHealth,
// TargetHealthDescription).
var targetHealth = answer{
	result: "DescribeTargetHealthResult",
	count:  resultOf[elbv2.DescribeTargetHealthOutput],
	lists: []lister{list[elbv2types.TargetHealthDescription]{
		elem: "TargetHealthDescriptions",
		set: func(result any, _ int, members []elbv2types.TargetHealthDescription) {
			result.(*elbv2.DescribeTargetHealthOutput).TargetHealthDescriptions = members
		},
		member: fields[elbv2types.TargetHealthDescription]{
			object("AdministrativeOverride", func(v *elbv2types.TargetHealthDescription) **elbv2types.AdministrativeOverride {
				return &v.AdministrativeOverride
			},
				fields[elbv2types.AdministrativeOverride]{
					str("Description", func(v *elbv2types.AdministrativeOverride) **string { return &v.Description }),
					enum("Reason", func(v *elbv2types.AdministrativeOverride) *elbv2types.TargetAdministrativeOverrideReasonEnum {
						return &v.Reason
					}),
					enum("State", func(v *elbv2types.AdministrativeOverride) *elbv2types.TargetAdministrativeOverrideStateEnum {
						return &v.State
					}),
				}),
			object("AnomalyDetection", func(v *elbv2types.TargetHealthDescription) **elbv2types.AnomalyDetection { return &v.AnomalyDetection },
				fields[elbv2types.AnomalyDetection]{
					enum("MitigationInEffect", func(v *elbv2types.AnomalyDetection) *elbv2types.MitigationInEffectEnum { return &v.MitigationInEffect }),
					enum("Result", func(v *elbv2types.AnomalyDetection) *elbv2types.AnomalyResultEnum { return &v.Result }),
				}),
			str("HealthCheckPort", func(v *elbv2types.TargetHealthDescription) **string { return &v.HealthCheckPort }),
			object("Target", func(v *elbv2types.TargetHealthDescription) **elbv2types.TargetDescription { return &v.Target },
				fields[elbv2types.TargetDescription]{
					str("AvailabilityZone", func(v *elbv2types.TargetDescription) **string { return &v.AvailabilityZone }),
					str("Id", func(v *elbv2types.TargetDescription) **string { return &v.Id }),
					parsed("Port", func(v *elbv2types.TargetDescription) **int32 { return &v.Port }, digits),
					str("QuicServerId", func(v *elbv2types.TargetDescription) **string { return &v.QuicServerId }),
				}),
			object("TargetHealth", func(v *elbv2types.TargetHealthDescription) **elbv2types.TargetHealth { return &v.TargetHealth },
				fields[elbv2types.TargetHealth]{
					str("Description", func(v *elbv2types.TargetHealth) **string { return &v.Description }),
					enum("Reason", func(v *elbv2types.TargetHealth) *elbv2types.TargetHealthReasonEnum { return &v.Reason }),
					enum("State", func(v *elbv2types.TargetHealth) *elbv2types.TargetHealthStateEnum { return &v.State }),
				}),
		},
	}},
}

// resultOf counts no owners, and checks that result is an O.
func resultOf[O any](result any) (int, bool) {
	_, ok := result.(*O)
	return 0, ok
}

// boolean is s as the SDK's strconv.ParseBool reads it, for its
// canonical spellings alone.
func boolean(s string) (bool, bool) { return s == "true", s == "true" || s == "false" }

// digits is s as the SDK's strconv.ParseInt and int32 conversion read it,
// for one to nine decimal digits alone (no sign; never overflowing).
func digits(s string) (int32, bool) {
	if len(s) == 0 || len(s) > 9 {
		return 0, false
	}
	var n int32
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int32(c-'0')
	}
	return n, true
}

// dateTime is s as the SDK reads a timestamp of the query protocol: with
// its own parser.
func dateTime(s string) (time.Time, bool) {
	t, err := smithytime.ParseDateTime(s)
	return t, err == nil
}
