package fleet

import (
	"context"
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
func ToSuspend(g asgtypes.AutoScalingGroup) []string {
	var out []string
	for _, p := range StandbyProcesses {
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
	if _, err := r.detach(ctx, name); err != nil {
		return err
	}
	r.log().Info("standing by", "asg", name)
	return nil
}

// Restore puts g, a group standing by, back in service: attached again to
// the classic load balancers elbs and the target groups tgs (those it is
// not attached to), and the processes resume resumed (those still
// suspended). Its load balancers then register its instances, which serve
// once they pass their health checks: the caller waits for that. It
// touches g only when it is the Retirer's. Idempotent.
func (r *Retirer) Restore(ctx context.Context, g asgtypes.AutoScalingGroup, elbs, tgs, resume []string) error {
	name := aws.ToString(g.AutoScalingGroupName)
	if !r.owns(g) {
		return nil
	}
	elbs = slices.DeleteFunc(slices.Clone(elbs), func(lb string) bool { return slices.Contains(g.LoadBalancerNames, lb) })
	tgs = slices.DeleteFunc(slices.Clone(tgs), func(tg string) bool { return slices.Contains(g.TargetGroupARNs, tg) })
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
	resume = slices.DeleteFunc(slices.Clone(resume), func(p string) bool { return !suspended(g, p) })
	if len(resume) > 0 {
		if _, err := r.API.ResumeProcesses(ctx, &autoscaling.ResumeProcessesInput{
			AutoScalingGroupName: aws.String(name), ScalingProcesses: resume,
		}); err != nil {
			return r.failed("autoscaling:ResumeProcesses "+name, err, name+": back in its load balancers with "+strings.Join(resume, " and ")+" suspended")
		}
	}
	return nil
}
