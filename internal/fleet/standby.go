package fleet

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
)

// StandbyProcesses are the processes a group standing by during a bake
// has suspended: out of its load balancers and idle, nothing may scale it
// in or out (a scaling alarm on its idle CPU, a scheduled action), so it
// is at its capacity when a rollback puts it back. It keeps replacing
// unhealthy instances.
var StandbyProcesses = []string{"AlarmNotification", "ScheduledActions"}

// ToSuspend are the StandbyProcesses g has not suspended: what StandBy
// suspends, and what a rollback resumes.
func ToSuspend(g asgtypes.AutoScalingGroup) []string { return Unsuspended(g, StandbyProcesses) }

// Unsuspended are those of processes g has not suspended, in their order.
func Unsuspended(g asgtypes.AutoScalingGroup, processes []string) []string {
	var out []string
	for _, p := range processes {
		if !suspended(g, p) {
			out = append(out, p)
		}
	}
	return out
}

// StandBy takes g out of its load balancers as a retirement does (they
// drain its instances) and suspends the StandbyProcesses it has not
// suspended, so it stays running at its capacity, serving nothing. It
// touches g only when it is the Retirer's (Owner, Owns). Idempotent: a
// load balancer it has left already, or a process suspended already, is
// left as it is.
func (r *Retirer) StandBy(ctx context.Context, g asgtypes.AutoScalingGroup) error {
	name := aws.ToString(g.AutoScalingGroupName)
	if !r.owns(g) {
		return nil
	}
	if suspend := ToSuspend(g); len(suspend) > 0 {
		if _, err := r.API.SuspendProcesses(ctx, &autoscaling.SuspendProcessesInput{
			AutoScalingGroupName: aws.String(name), ScalingProcesses: suspend,
		}); err != nil {
			return r.failed("autoscaling:SuspendProcesses "+name, err, name+": standing by with its scaling processes running")
		}
	}
	if _, err := r.detach(ctx, name, ""); err != nil {
		return err
	}
	r.log().Info("standing by", "asg", name)
	return nil
}

// Serving is how a group served before a bake stood it by or a swap
// began to retire it: its classic load balancers and target groups
// (ARNs), its desired capacity and minimum size, and the processes to
// resume (those StandBy, or a retirement, suspended).
type Serving struct {
	LoadBalancers, TargetGroups []string
	Desired, Min                int
	Resume                      []string
}

// Restore puts g, a group standing by or being retired, back in service as
// s says it served: attached again to its classic load balancers and
// target groups (those it is not attached to), its capacity back (a
// desired capacity or minimum size below s's, someone's scale-in or a
// scheduled action's while it stood by, raised to s's, its maximum size
// raised when needed to allow it; a capacity above s's is left as it is),
// and the processes s resumes resumed (those still suspended). Its load
// balancers then register its instances, which serve once they pass their
// health checks: the caller waits for that. It touches g only when it is
// the Retirer's. Idempotent.
func (r *Retirer) Restore(ctx context.Context, g asgtypes.AutoScalingGroup, s Serving) error {
	name := aws.ToString(g.AutoScalingGroupName)
	if !r.owns(g) {
		return nil
	}
	if err := r.restoreCapacity(ctx, g, s); err != nil {
		return err
	}
	elbs := slices.DeleteFunc(slices.Clone(s.LoadBalancers), func(lb string) bool { return slices.Contains(g.LoadBalancerNames, lb) })
	tgs := slices.DeleteFunc(slices.Clone(s.TargetGroups), func(tg string) bool { return slices.Contains(g.TargetGroupARNs, tg) })
	for batch := range slices.Chunk(elbs, 10) {
		if _, err := r.API.AttachLoadBalancers(ctx, &autoscaling.AttachLoadBalancersInput{
			AutoScalingGroupName: aws.String(name), LoadBalancerNames: batch,
		}); err != nil {
			return r.failed("autoscaling:AttachLoadBalancers "+name, err, name+": standing by, out of its classic load balancers")
		}
		r.log().Info("attached to classic load balancers again", "asg", name, "elbs", batch)
	}
	for batch := range slices.Chunk(tgs, 10) {
		if _, err := r.API.AttachLoadBalancerTargetGroups(ctx, &autoscaling.AttachLoadBalancerTargetGroupsInput{
			AutoScalingGroupName: aws.String(name), TargetGroupARNs: batch,
		}); err != nil {
			return r.failed("autoscaling:AttachLoadBalancerTargetGroups "+name, err, name+": standing by, out of its target groups")
		}
		r.log().Info("attached to target groups again", "asg", name, "target_groups", batch)
	}
	resume := slices.DeleteFunc(slices.Clone(s.Resume), func(p string) bool { return !suspended(g, p) })
	if len(resume) > 0 {
		if _, err := r.API.ResumeProcesses(ctx, &autoscaling.ResumeProcessesInput{
			AutoScalingGroupName: aws.String(name), ScalingProcesses: resume,
		}); err != nil {
			return r.failed("autoscaling:ResumeProcesses "+name, err, name+": back in its load balancers with "+strings.Join(resume, " and ")+" suspended")
		}
	}
	return nil
}

// restoreCapacity raises g's desired capacity and minimum size to s's
// when they are below (see Restore), in one call, only when needed.
func (r *Retirer) restoreCapacity(ctx context.Context, g asgtypes.AutoScalingGroup, s Serving) error {
	name := aws.ToString(g.AutoScalingGroupName)
	desired := max(aws.ToInt32(g.DesiredCapacity), int32(s.Desired))
	minSize := min(max(aws.ToInt32(g.MinSize), int32(s.Min)), desired)
	maxSize := max(aws.ToInt32(g.MaxSize), desired)
	if desired == aws.ToInt32(g.DesiredCapacity) && minSize == aws.ToInt32(g.MinSize) {
		return nil
	}
	if _, err := r.API.UpdateAutoScalingGroup(ctx, &autoscaling.UpdateAutoScalingGroupInput{
		AutoScalingGroupName: aws.String(name), DesiredCapacity: aws.Int32(desired), MinSize: aws.Int32(minSize), MaxSize: aws.Int32(maxSize),
	}); err != nil {
		return r.failed("autoscaling:UpdateAutoScalingGroup "+name, err, fmt.Sprintf("%s: its capacity not restored (%d desired of the %d it served with)", name, aws.ToInt32(g.DesiredCapacity), s.Desired))
	}
	r.log().Info("capacity restored", "asg", name, "desired", desired, "min", minSize)
	return nil
}
