package sim

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"

	"github.com/ferryhq/ferry/internal/cloud"
)

// Batch limits of the instance calls (Auto Scaling API Reference:
// SetInstanceProtection "up to 50 instances", EnterStandby and
// ExitStandby "up to 20 instances").
const (
	maxProtectBatch = 50
	maxStandbyBatch = 20
)

// SetInstanceProtection sets the scale-in protection of instances of a
// group (SetInstanceProtection, Auto Scaling API Reference; "Use instance
// scale-in protection", Auto Scaling User Guide): a protected instance is
// never chosen when the group scales in, though its desired capacity still
// drops, so the group keeps more instances than it wants until the
// protection is removed; then the surplus terminates. An instance that is
// not the group's is a ValidationError; more than 50 is LimitExceeded.
func (c *AutoScaling) SetInstanceProtection(ctx context.Context, in *autoscaling.SetInstanceProtectionInput, _ ...func(*autoscaling.Options)) (*autoscaling.SetInstanceProtectionOutput, error) {
	const op = "SetInstanceProtection"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	return &autoscaling.SetInstanceProtectionOutput{}, c.end(op, r.setProtection(in))
}

func (r *region) setProtection(in *autoscaling.SetInstanceProtectionInput) error {
	g, err := r.lookupGroup(deref(in.AutoScalingGroupName))
	if err != nil {
		return err
	}
	if err := r.w.authorize(groupAuth("SetInstanceProtection", g)); err != nil {
		return err
	}
	if len(in.InstanceIds) > maxProtectBatch {
		return apiErrf(cloud.CodeLimitExceeded, "The number of instance ids that may be passed in is limited to %d.", maxProtectBatch)
	}
	insts, err := g.named(in.InstanceIds, func(*instance) bool { return true })
	if err != nil {
		return err
	}
	for _, i := range insts {
		i.protected = deref(in.ProtectedFromScaleIn)
	}
	if !deref(in.ProtectedFromScaleIn) {
		r.setDesired(g, g.desired, r.w.now, "")
	}
	return nil
}

// EnterStandby moves InService instances of a group to Standby (EnterStandby,
// Auto Scaling API Reference; "Temporarily remove instances from your Auto
// Scaling group", User Guide): each leaves its load balancers (connection
// draining and deregistration delay apply), is not health checked, is
// never terminated by a scale-in, and does not count toward the desired
// capacity. With ShouldDecrementDesiredCapacity the desired capacity drops
// by their number (refused below the minimum size), else the group
// launches replacements.
func (c *AutoScaling) EnterStandby(ctx context.Context, in *autoscaling.EnterStandbyInput, _ ...func(*autoscaling.Options)) (*autoscaling.EnterStandbyOutput, error) {
	const op = "EnterStandby"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	return &autoscaling.EnterStandbyOutput{}, c.end(op, r.enterStandby(in))
}

func (r *region) enterStandby(in *autoscaling.EnterStandbyInput) error {
	g, err := r.lookupGroup(deref(in.AutoScalingGroupName))
	if err != nil {
		return err
	}
	if err := r.w.authorize(groupAuth("EnterStandby", g)); err != nil {
		return err
	}
	now := r.w.now
	if len(in.InstanceIds) > maxStandbyBatch {
		return apiErrf(cloud.CodeValidation, "The number of instance ids that may be passed in is limited to %d.", maxStandbyBatch)
	}
	insts, err := g.named(in.InstanceIds, func(i *instance) bool { return i.lifecycle(now) == astypes.LifecycleStateInService })
	if err != nil {
		return err
	}
	decrement := deref(in.ShouldDecrementDesiredCapacity)
	if decrement && g.desired-int32(len(insts)) < g.min {
		return apiErrf(cloud.CodeValidation, "AutoScalingGroup %s has min-size=%d, max-size=%d, and desired-size=%d. To place into standby %d instances, please update the AutoScalingGroup sizes appropriately.",
			g.name, g.min, g.max, g.desired, len(insts))
	}
	for _, i := range insts {
		i.standby = true
		for _, lb := range append([]*classicLB(nil), i.lbs...) {
			r.deregisterELB(lb, i, now)
		}
		for _, tg := range append([]*targetGroup(nil), i.tgs...) {
			r.deregisterTG(tg, i, now)
		}
	}
	if decrement {
		g.desired -= int32(len(insts))
		g.lastScaling = now
		return nil
	}
	r.fill(g, now, fmt.Sprintf("At %s instances were moved to Standby.  ", stamp(now)))
	return nil
}

// ExitStandby puts Standby instances of a group back in service (ExitStandby,
// Auto Scaling API Reference): the desired capacity rises by their number
// (refused above the maximum size) and each registers with the group's
// load balancers again, serving once it passes their health checks.
func (c *AutoScaling) ExitStandby(ctx context.Context, in *autoscaling.ExitStandbyInput, _ ...func(*autoscaling.Options)) (*autoscaling.ExitStandbyOutput, error) {
	const op = "ExitStandby"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	return &autoscaling.ExitStandbyOutput{}, c.end(op, r.exitStandby(in))
}

func (r *region) exitStandby(in *autoscaling.ExitStandbyInput) error {
	g, err := r.lookupGroup(deref(in.AutoScalingGroupName))
	if err != nil {
		return err
	}
	if err := r.w.authorize(groupAuth("ExitStandby", g)); err != nil {
		return err
	}
	if len(in.InstanceIds) > maxStandbyBatch {
		return apiErrf(cloud.CodeValidation, "The number of instance ids that may be passed in is limited to %d.", maxStandbyBatch)
	}
	insts, err := g.named(in.InstanceIds, func(i *instance) bool { return i.standby && i.terminating.IsZero() })
	if err != nil {
		return err
	}
	if g.desired+int32(len(insts)) > g.max {
		return apiErrf(cloud.CodeValidation, "AutoScalingGroup %s has max-size=%d and desired-size=%d. Exiting %d instances from standby would exceed the max-size.", g.name, g.max, g.desired, len(insts))
	}
	now := r.w.now
	g.desired += int32(len(insts))
	g.lastScaling = now
	for _, i := range insts {
		i.standby = false
		for _, lb := range g.lbs {
			r.registerELB(lb, i, now)
		}
		for _, tg := range g.tgs {
			r.registerTG(tg, i, now)
		}
	}
	return nil
}

// named returns g's instances of ids, each of which must satisfy ok, else
// a ValidationError naming the first that does not.
func (g *group) named(ids []string, ok func(*instance) bool) ([]*instance, error) {
	var out []*instance
	for _, id := range ids {
		var found *instance
		for _, i := range g.instances {
			if i.id == id && i.gone.IsZero() {
				found = i
			}
		}
		if found == nil || !ok(found) {
			return nil, apiErrf(cloud.CodeValidation, "The instance %s is not in the right state or is not part of Auto Scaling group %s.", id, g.name)
		}
		out = append(out, found)
	}
	return out, nil
}

// registerELB registers inst with lb at now, as an attach does: it passes
// lb's health check after the image's health timing, unless lb still has
// it registered, draining (its deregistration in progress, it kept
// passing): that deregistration is called off and it serves on.
func (r *region) registerELB(lb *classicLB, inst *instance, now time.Time) {
	_, draining := lb.leaving[inst.id]
	if !draining || lb.instances[inst.id] != inst {
		lb.passesFrom[inst.id] = now.Add(r.w.draw(*r.timingsOf(inst).Health, inst.id, "register "+lb.name))
	}
	lb.instances[inst.id] = inst
	delete(lb.leaving, inst.id)
	inst.lbs = append(inst.lbs, lb)
}

// registerTG registers inst with tg at now: initial until it passes its
// health checks.
func (r *region) registerTG(tg *targetGroup, inst *instance, now time.Time) {
	tg.targets[inst.id] = &target{inst: inst, passesFrom: now.Add(r.w.draw(*r.timingsOf(inst).Health, inst.id, "register "+tg.arn))}
	inst.tgs = append(inst.tgs, tg)
}
