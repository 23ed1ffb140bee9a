package fleet

import (
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"

	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/naming/tags"
)

// Summary is an Auto Scaling group as DescribeAutoScalingGroups shows it
// with IncludeInstances false ("Specifies whether to include information
// about Amazon EC2 instances in the response. When set to true (default),
// the response includes instance details", DescribeAutoScalingGroups,
// Auto Scaling API Reference): what a caller needs that names, records or
// retires a group, and nothing of its instances. It has no field for
// them: a description made without instances cannot be mistaken for a
// group with none (not serving, scaled in), for no code that counts a
// group's instances takes a Summary.
type Summary struct {
	Name string
	Tags map[string]string
	// Status is AWS's Status of the group: set only while it is being
	// deleted (see Deleting).
	Status string
	// LoadBalancers and TargetGroups are the classic load balancers and
	// target groups the group's description names.
	LoadBalancers, TargetGroups []string
	Desired, Min                int
	// Suspended are the processes the group has suspended.
	Suspended []string
}

// Summarize is g's Summary.
func Summarize(g asgtypes.AutoScalingGroup) Summary {
	s := Summary{
		Name: aws.ToString(g.AutoScalingGroupName), Tags: tags.FromASG(g.Tags), Status: aws.ToString(g.Status),
		LoadBalancers: g.LoadBalancerNames, TargetGroups: g.TargetGroupARNs,
		Desired: int(aws.ToInt32(g.DesiredCapacity)), Min: int(aws.ToInt32(g.MinSize)),
	}
	for _, p := range g.SuspendedProcesses {
		s.Suspended = append(s.Suspended, aws.ToString(p.ProcessName))
	}
	return s
}

// Summaries is each of groups summarized.
func Summaries(groups []asgtypes.AutoScalingGroup) []Summary {
	out := make([]Summary, 0, len(groups))
	for _, g := range groups {
		out = append(out, Summarize(g))
	}
	return out
}

// Release is the release the group belongs to (its ReleaseID tag).
func (s Summary) Release() string { return s.Tags[naming.TagReleaseID] }

// Deleting reports whether the group is being deleted (see Deleting).
func (s Summary) Deleting() bool { return deleting(s.Status) }

// Unsuspended are those of processes the group has not suspended, in
// their order.
func (s Summary) Unsuspended(processes []string) []string {
	var out []string
	for _, p := range processes {
		if !slices.Contains(s.Suspended, p) {
			out = append(out, p)
		}
	}
	return out
}
