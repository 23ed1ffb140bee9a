package tags

import (
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	elbtypes "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing/types"
	elbv2types "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
)

// FromEC2 returns EC2 tags (images, subnets, security groups, launch
// templates) as a map.
func FromEC2(list []ec2types.Tag) map[string]string {
	return toMap(list, func(t ec2types.Tag) (*string, *string) { return t.Key, t.Value })
}

// FromASG returns an Auto Scaling group's tags as a map.
func FromASG(list []asgtypes.TagDescription) map[string]string {
	return toMap(list, func(t asgtypes.TagDescription) (*string, *string) { return t.Key, t.Value })
}

// FromELB returns a classic load balancer's tags as a map.
func FromELB(list []elbtypes.Tag) map[string]string {
	return toMap(list, func(t elbtypes.Tag) (*string, *string) { return t.Key, t.Value })
}

// FromELBv2 returns a target group's tags as a map.
func FromELBv2(list []elbv2types.Tag) map[string]string {
	return toMap(list, func(t elbv2types.Tag) (*string, *string) { return t.Key, t.Value })
}

// FromCloudWatch returns an alarm's tags as a map.
func FromCloudWatch(list []cwtypes.Tag) map[string]string {
	return toMap(list, func(t cwtypes.Tag) (*string, *string) { return t.Key, t.Value })
}

// FromSNS returns a topic's tags as a map.
func FromSNS(list []snstypes.Tag) map[string]string {
	return toMap(list, func(t snstypes.Tag) (*string, *string) { return t.Key, t.Value })
}

// EC2 returns m as EC2 tags, sorted by key.
func EC2(m map[string]string) []ec2types.Tag {
	return toList(m, func(k, v string) ec2types.Tag { return ec2types.Tag{Key: aws.String(k), Value: aws.String(v)} })
}

// ASG returns m as the tags of the Auto Scaling group group, each
// propagated to its instances at launch, sorted by key.
func ASG(m map[string]string, group string) []asgtypes.Tag {
	return toList(m, func(k, v string) asgtypes.Tag {
		return asgtypes.Tag{
			Key: aws.String(k), Value: aws.String(v), PropagateAtLaunch: aws.Bool(true),
			ResourceId: aws.String(group), ResourceType: aws.String("auto-scaling-group"),
		}
	})
}

// CloudWatch returns m as CloudWatch tags, sorted by key.
func CloudWatch(m map[string]string) []cwtypes.Tag {
	return toList(m, func(k, v string) cwtypes.Tag { return cwtypes.Tag{Key: aws.String(k), Value: aws.String(v)} })
}

func toMap[T any](list []T, kv func(T) (k, v *string)) map[string]string {
	m := make(map[string]string, len(list))
	for _, t := range list {
		k, v := kv(t)
		m[aws.ToString(k)] = aws.ToString(v)
	}
	return m
}

// toList returns nil for an empty map, as the callers' appends did.
func toList[T any](m map[string]string, tag func(k, v string) T) []T {
	var out []T
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, tag(k, m[k]))
	}
	return out
}
