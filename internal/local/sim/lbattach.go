package sim

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"

	"github.com/ferryhq/ferry/internal/cloud"
)

// Load balancer attachments of a group, as Auto Scaling reports them
// (LoadBalancerState.State, LoadBalancerTargetGroupState.State, Auto
// Scaling API Reference): Added once attached, InService once an instance
// of the group passes the load balancer's health check, Removing while a
// detached load balancer deregisters (and drains) the group's instances;
// once they are deregistered it is no longer described.
const (
	attachmentAdded     = "Added"
	attachmentInService = "InService"
	attachmentRemoving  = "Removing"
)

// maxAttachBatch is how many load balancers or target groups one
// Attach*/Detach* call may name.
const maxAttachBatch = 10

// removal is a load balancer or target group detached from a group and
// still draining its instances until until.
type removal struct {
	elb   *classicLB
	tg    *targetGroup
	until time.Time
}

// servingCounter counts, for one classic load balancer or target group,
// the cuts of the traffic it serves, as its clients would see them:
// in-flight requests dropped (an instance a ForceDelete stops while it
// still routes to it, a serving instance deregistered without draining)
// and each time it went dark while something still claimed it, from a
// healthy instance to none: a group attached to it, or an instance
// registered and not deregistering (its clients get the load balancer's
// 503 with nothing of its own taking it out of service: a fleet scaled
// in or killed under it, every instance unhealthy).
//
// Going dark with nothing left to claim it, every instance that served
// it drained out (its groups detached, its targets deregistered with the
// delay honoured), drops no connection: it was withdrawn, which is what a
// destroy, a release that drops it, or a move leaves behind on purpose.
// A withdrawal becomes a cut only if it serves again while an instance it
// drained still runs: that was a gap in service (a group detached and
// attached again, an operator's detach a rollback undid), counted when it
// ends. Once every instance it drained is gone, the withdrawal is the
// intended end, and whatever serves it later starts anew.
type servingCounter struct {
	cuts int
	// dark counts the cuts among cuts that were it going dark (or a
	// withdrawal undone), not a connection dropped.
	dark int
	// serving says it had a healthy instance when last checked.
	serving bool
	// drained are the instances a withdrawal drained out of it, while it
	// is dark and one of them still runs; nil otherwise.
	drained []*instance
}

// check updates the counter at now with whether it serves, whether
// something still claims it (claimed) and the instances it is
// deregistering (leaving).
func (s *servingCounter) check(now time.Time, serves, claimed bool, leaving []*instance) {
	switch {
	case s.serving && !serves && claimed:
		s.cuts++
		s.dark++
	case s.serving && !serves:
		s.drained = leaving
	case serves && s.drained != nil && anyRuns(s.drained, now):
		s.cuts++
		s.dark++
	}
	if serves || !anyRuns(s.drained, now) {
		s.drained = nil
	}
	s.serving = serves
}

// anyRuns says whether one of instances has not terminated at now.
func anyRuns(instances []*instance, now time.Time) bool {
	return slices.ContainsFunc(instances, func(i *instance) bool { return !i.dying(now) })
}

// checkServing updates every load balancer's and target group's counter
// at now. It runs after every event and every call.
//
// It runs so often (a world of a thousand target groups runs it for
// every call of a hundred deploys) that it marks the ones a group
// claims with the pass's number rather than building a set each time.
func (r *region) checkServing(now time.Time) {
	r.servingPass++
	pass := r.servingPass
	for _, g := range r.groups {
		if g.deleting {
			continue
		}
		for _, lb := range g.lbs {
			lb.claimedIn = pass
		}
		for _, tg := range g.tgs {
			tg.claimedIn = pass
		}
	}
	for _, lb := range r.elbs {
		serves, claimed, leaving := lb.look(now)
		lb.serving.check(now, serves, claimed || lb.claimedIn == pass, leaving)
	}
	for _, tg := range r.tgs {
		serves, claimed, leaving := tg.look(now)
		tg.serving.check(now, serves, claimed || tg.claimedIn == pass, leaving)
	}
}

// look is, in one pass over lb's instances (it runs after every call),
// whether it serves an instance at now, whether it has one registered
// and not deregistering (claimed), and, when it has none, the instances
// deregistering (leaving).
func (lb *classicLB) look(now time.Time) (serves, claimed bool, leaving []*instance) {
	for id, i := range lb.instances {
		if _, ok := lb.leaving[id]; !ok {
			claimed = true
		} else if !claimed {
			leaving = append(leaving, i)
		}
		serves = serves || lb.sends(i, now)
	}
	if claimed {
		leaving = nil
	}
	return serves, claimed, leaving
}

// look is, in one pass over tg's targets, whether it gets traffic for a
// target at now in any zone, whether it has a target registered and not
// draining (claimed), and, when it has none, the targets draining
// (leaving).
func (tg *targetGroup) look(now time.Time) (serves, claimed bool, leaving []*instance) {
	for _, tr := range tg.targets {
		if tr.drainingAt.IsZero() {
			claimed = true
		} else if !claimed {
			leaving = append(leaving, tr.inst)
		}
		serves = serves || tg.state(tr, now) == "healthy"
	}
	if claimed {
		leaving = nil
	}
	return serves, claimed, leaving
}

// servingAt is who lb sends traffic to at t: the instances in a zone it
// routes to that pass its health check, but those deregistering.
func (lb *classicLB) servingAt(t time.Time) serving {
	var s serving
	for _, i := range lb.instances {
		if lb.sends(i, t) {
			s.n, s.bp = s.n+1, s.bp+i.errorsBP
		}
	}
	return s
}

// servingAt is who the load balancer lb sends to tg at t: its targets
// that pass the health check in a zone lb enables; with lb nil, in any
// zone.
func (tg *targetGroup) servingAt(lb *loadBalancer, t time.Time) serving {
	var s serving
	for _, tr := range tg.targets {
		if tg.state(tr, t) == "healthy" && (lb == nil || slices.Contains(lb.zones, tr.inst.subnet.az)) {
			s.n, s.bp = s.n+1, s.bp+tr.inst.errorsBP
		}
	}
	return s
}

// countTraffic counts every load balancer's traffic up to t, before
// anything changes who it serves: the world runs it before each event and
// at the end of each advance, so every interval is counted with the
// registrations it had.
func (r *region) countTraffic(t time.Time) {
	for _, lb := range r.elbs {
		lb.traffic.observe(t, lb.servingAt)
	}
	for _, tg := range r.tgs {
		for _, lb := range tg.lbs {
			tr := tg.traffic[lb.arn]
			if tr == nil {
				tr = &traffic{}
				tg.traffic[lb.arn] = tr
			}
			tr.observe(t, func(at time.Time) serving { return tg.servingAt(lb, at) })
		}
	}
}

// cutForce counts a cut on each load balancer and target group that
// still routes to inst, an instance that had passed its health checks,
// as a ForceDelete terminates it at t: nothing waits for its in-flight
// requests.
func (r *region) cutForce(inst *instance, t time.Time) {
	if t.Before(inst.healthyAt) || inst.behavior == NeverHealthy {
		return
	}
	for _, lb := range r.elbs {
		if lb.instances[inst.id] == inst && lb.routes(inst) {
			lb.serving.cuts++
		}
	}
	for _, tg := range r.tgs {
		if tr := tg.targets[inst.id]; tr != nil && tr.inst == inst && tg.notInUse(inst) == "" {
			tg.serving.cuts++
		}
	}
}

// CutConnections is how many cuts every load balancer and target group of
// the world counted (see servingCounter): ferry's guarantee is that it
// stays 0.
func (w *World) CutConnections() int {
	return w.countServing(func(s servingCounter) int { return s.cuts })
}

// countServing sums count over the serving counters of every load
// balancer and target group of the world, now.
func (w *World) countServing(count func(servingCounter) int) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.advance(w.clk.Now())
	n := 0
	for _, a := range w.accounts {
		for _, r := range a.regions {
			for _, lb := range r.elbs {
				n += count(lb.serving)
			}
			for _, tg := range r.tgs {
				n += count(tg.serving)
			}
		}
	}
	return n
}

// deregisterELB takes inst out of lb at t: at once without connection
// draining, else after lb's draining timeout (the instance keeps its
// in-flight requests meanwhile). Without draining, an instance lb was
// sending traffic to loses its in-flight requests: a cut ("Configure
// connection draining for your Classic Load Balancer", User Guide for
// Classic Load Balancers). It returns when the deregistration ends.
func (r *region) deregisterELB(lb *classicLB, inst *instance, t time.Time) time.Time {
	inst.lbs = slices.DeleteFunc(inst.lbs, func(l *classicLB) bool { return l == lb })
	if lb.instances[inst.id] != inst {
		return t
	}
	if lb.drain == 0 {
		if lb.routes(inst) && lb.health(inst, t) == "healthy" {
			lb.serving.cuts++
		}
		delete(lb.instances, inst.id)
		return t
	}
	end := t.Add(lb.drain)
	lb.leaving[inst.id] = end
	r.w.at(end, func(time.Time) {
		if lb.instances[inst.id] == inst && lb.leaving[inst.id].Equal(end) {
			delete(lb.instances, inst.id)
			delete(lb.leaving, inst.id)
		}
	})
	return end
}

// deregisterTG starts draining inst from tg at t, for the deregistration
// delay, and returns when it ends.
func (r *region) deregisterTG(tg *targetGroup, inst *instance, t time.Time) time.Time {
	inst.tgs = slices.DeleteFunc(inst.tgs, func(x *targetGroup) bool { return x == tg })
	tr := tg.targets[inst.id]
	if tr == nil || tr.inst != inst {
		return t
	}
	if !tr.drainingAt.IsZero() {
		return tr.drainingAt.Add(r.drainFor(tg, inst))
	}
	tr.drainingAt = t
	end := t.Add(r.drainFor(tg, inst))
	r.w.at(end, func(time.Time) {
		if tg.targets[inst.id] == tr {
			delete(tg.targets, inst.id)
		}
	})
	return end
}

// drainFor is how long inst drains from tg: the target group's
// deregistration delay, else its image's deregistration timing.
func (r *region) drainFor(tg *targetGroup, inst *instance) time.Duration {
	if tg.delay != nil {
		return *tg.delay
	}
	return r.timingsOf(inst).Deregistration.pick(seed(inst.id, "drain"))
}

// timingsOf are the timings of inst's image, else the world's.
func (r *region) timingsOf(inst *instance) Timings {
	if a := r.amis[inst.imageID]; a != nil {
		return a.timings
	}
	return r.w.timings
}

// DetachLoadBalancers detaches classic load balancers from a group: each
// is Removing while it deregisters the group's instances (connection
// draining respected); the instances keep running.
func (c *AutoScaling) DetachLoadBalancers(ctx context.Context, in *autoscaling.DetachLoadBalancersInput, _ ...func(*autoscaling.Options)) (*autoscaling.DetachLoadBalancersOutput, error) {
	const op = "DetachLoadBalancers"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	return &autoscaling.DetachLoadBalancersOutput{}, c.end(op, r.detach(op, deref(in.AutoScalingGroupName), in.LoadBalancerNames, nil))
}

// DetachLoadBalancerTargetGroups detaches target groups from a group: each
// is Removing while the group's instances drain from it (its deregistration
// delay); the instances keep running.
func (c *AutoScaling) DetachLoadBalancerTargetGroups(ctx context.Context, in *autoscaling.DetachLoadBalancerTargetGroupsInput, _ ...func(*autoscaling.Options)) (*autoscaling.DetachLoadBalancerTargetGroupsOutput, error) {
	const op = "DetachLoadBalancerTargetGroups"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	return &autoscaling.DetachLoadBalancerTargetGroupsOutput{}, c.end(op, r.detach(op, deref(in.AutoScalingGroupName), nil, in.TargetGroupARNs))
}

// detach detaches the named classic load balancers and target groups (by
// ARN) from the group name. One the group is not attached to is ignored,
// as AWS does; more than ten, or none, is a ValidationError.
func (r *region) detach(op, name string, elbs, tgARNs []string) error {
	g, err := r.lookupGroup(name)
	if err != nil {
		return err
	}
	if err := checkAttachBatch(len(elbs) + len(tgARNs)); err != nil {
		return err
	}
	if err := r.w.authorize(groupAuth(op, g)); err != nil {
		return err
	}
	now := r.w.now
	for _, n := range elbs {
		i := slices.IndexFunc(g.lbs, func(lb *classicLB) bool { return lb.name == n })
		if i < 0 {
			continue
		}
		lb := g.lbs[i]
		g.lbs = slices.Delete(g.lbs, i, i+1)
		rm := &removal{elb: lb, until: now}
		for _, inst := range g.instances {
			rm.until = later(rm.until, r.deregisterELB(lb, inst, now))
		}
		g.removing = append(g.removing, rm)
	}
	for _, a := range tgARNs {
		i := slices.IndexFunc(g.tgs, func(tg *targetGroup) bool { return tg.arn == a })
		if i < 0 {
			continue
		}
		tg := g.tgs[i]
		g.tgs = slices.Delete(g.tgs, i, i+1)
		rm := &removal{tg: tg, until: now}
		for _, inst := range g.instances {
			rm.until = later(rm.until, r.deregisterTG(tg, inst, now))
		}
		g.removing = append(g.removing, rm)
	}
	return nil
}

// AttachLoadBalancers attaches classic load balancers to a group and
// registers its instances with them.
func (c *AutoScaling) AttachLoadBalancers(ctx context.Context, in *autoscaling.AttachLoadBalancersInput, _ ...func(*autoscaling.Options)) (*autoscaling.AttachLoadBalancersOutput, error) {
	const op = "AttachLoadBalancers"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	return &autoscaling.AttachLoadBalancersOutput{}, c.end(op, r.attach(op, deref(in.AutoScalingGroupName), in.LoadBalancerNames, nil))
}

// AttachLoadBalancerTargetGroups attaches target groups to a group and
// registers its instances with them.
func (c *AutoScaling) AttachLoadBalancerTargetGroups(ctx context.Context, in *autoscaling.AttachLoadBalancerTargetGroupsInput, _ ...func(*autoscaling.Options)) (*autoscaling.AttachLoadBalancerTargetGroupsOutput, error) {
	const op = "AttachLoadBalancerTargetGroups"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	return &autoscaling.AttachLoadBalancerTargetGroupsOutput{}, c.end(op, r.attach(op, deref(in.AutoScalingGroupName), nil, in.TargetGroupARNs))
}

// attach attaches the named classic load balancers and target groups (by
// ARN) to the group name and registers its live instances. One that does
// not exist is a ValidationError and nothing is attached; one attached
// already is left as it is.
func (r *region) attach(op, name string, elbs, tgARNs []string) error {
	g, err := r.lookupGroup(name)
	if err != nil {
		return err
	}
	if err := checkAttachBatch(len(elbs) + len(tgARNs)); err != nil {
		return err
	}
	var lbs []*classicLB
	for _, n := range elbs {
		if r.elbs[n] == nil {
			return apiErr(cloud.CodeValidation, "Provided Load Balancers may not be valid. Please ensure they exist and try again.")
		}
		lbs = append(lbs, r.elbs[n])
	}
	var tgs []*targetGroup
	for _, a := range tgARNs {
		if r.tgARNs[a] == nil {
			return apiErr(cloud.CodeValidation, "Provided Target Groups may not be valid. Please ensure they exist and try again.")
		}
		tgs = append(tgs, r.tgARNs[a])
	}
	auth := groupAuth(op, g)
	auth.Context = withTraffic(map[string][]string{}, elbs, tgARNs)
	if err := r.w.authorize(auth); err != nil {
		return err
	}
	for _, lb := range lbs {
		r.attachELB(g, lb, r.w.now)
	}
	for _, tg := range tgs {
		r.attachTG(g, tg, r.w.now)
	}
	return nil
}

// attachELB attaches lb to g, unless it is already, and registers g's
// live instances with it at now (registerELB). One draining from it (the
// group was detached moments ago) stays registered and serves on; every
// other passes the load balancer's health check only after its
// registration (the image's health timing from now): a group attached
// again after it drained serves once its instances pass, not at once.
func (r *region) attachELB(g *group, lb *classicLB, now time.Time) {
	if slices.Contains(g.lbs, lb) {
		return
	}
	g.lbs = append(g.lbs, lb)
	g.removing = slices.DeleteFunc(g.removing, func(rm *removal) bool { return rm.elb == lb })
	for _, inst := range g.instances {
		if inst.terminating.IsZero() && !inst.standby {
			r.registerELB(lb, inst, now)
		}
	}
}

// attachTG attaches tg to g, unless it is already, and registers g's live
// instances with it at now: a target draining from it (the group was
// detached moments ago) is registered anew, initial until it passes its
// health checks (the image's health timing from now).
func (r *region) attachTG(g *group, tg *targetGroup, now time.Time) {
	if slices.Contains(g.tgs, tg) {
		return
	}
	g.tgs = append(g.tgs, tg)
	g.removing = slices.DeleteFunc(g.removing, func(rm *removal) bool { return rm.tg == tg })
	for _, inst := range g.instances {
		if inst.terminating.IsZero() && !inst.standby {
			r.registerTG(tg, inst, now)
		}
	}
}

// checkAttachBatch refuses an Attach* or Detach* call naming none, or
// more than maxAttachBatch.
func checkAttachBatch(n int) error {
	if n == 0 || n > maxAttachBatch {
		return apiErrf(cloud.CodeValidation, "1 validation error detected: the list must have between 1 and %d members", maxAttachBatch)
	}
	return nil
}

// DescribeLoadBalancers describes the classic load balancers attached to a
// group, and those still Removing.
func (c *AutoScaling) DescribeLoadBalancers(ctx context.Context, in *autoscaling.DescribeLoadBalancersInput, _ ...func(*autoscaling.Options)) (*autoscaling.DescribeLoadBalancersOutput, error) {
	const op = "DescribeLoadBalancers"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	g, err := r.lookupGroup(deref(in.AutoScalingGroupName))
	if err != nil {
		return nil, c.end(op, err)
	}
	now := r.w.now
	out := &autoscaling.DescribeLoadBalancersOutput{}
	for _, lb := range g.lbs {
		state := attachmentAdded
		for _, i := range g.instances {
			if lb.instances[i.id] == i && lb.sends(i, now) {
				state = attachmentInService
			}
		}
		out.LoadBalancers = append(out.LoadBalancers, astypes.LoadBalancerState{LoadBalancerName: aws.String(lb.name), State: aws.String(state)})
	}
	for _, rm := range g.removing {
		if rm.elb != nil && now.Before(rm.until) {
			out.LoadBalancers = append(out.LoadBalancers, astypes.LoadBalancerState{LoadBalancerName: aws.String(rm.elb.name), State: aws.String(attachmentRemoving)})
		}
	}
	return out, c.end(op, nil)
}

// DescribeLoadBalancerTargetGroups describes the target groups attached
// to a group, and those still Removing.
func (c *AutoScaling) DescribeLoadBalancerTargetGroups(ctx context.Context, in *autoscaling.DescribeLoadBalancerTargetGroupsInput, _ ...func(*autoscaling.Options)) (*autoscaling.DescribeLoadBalancerTargetGroupsOutput, error) {
	const op = "DescribeLoadBalancerTargetGroups"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	g, err := r.lookupGroup(deref(in.AutoScalingGroupName))
	if err != nil {
		return nil, c.end(op, err)
	}
	now := r.w.now
	out := &autoscaling.DescribeLoadBalancerTargetGroupsOutput{}
	for _, tg := range g.tgs {
		state := attachmentAdded
		for _, i := range g.instances {
			if t := tg.targets[i.id]; t != nil && t.inst == i && tg.state(t, now) == "healthy" {
				state = attachmentInService
			}
		}
		out.LoadBalancerTargetGroups = append(out.LoadBalancerTargetGroups, astypes.LoadBalancerTargetGroupState{LoadBalancerTargetGroupARN: aws.String(tg.arn), State: aws.String(state)})
	}
	for _, rm := range g.removing {
		if rm.tg != nil && now.Before(rm.until) {
			out.LoadBalancerTargetGroups = append(out.LoadBalancerTargetGroups, astypes.LoadBalancerTargetGroupState{LoadBalancerTargetGroupARN: aws.String(rm.tg.arn), State: aws.String(attachmentRemoving)})
		}
	}
	return out, c.end(op, nil)
}

// CompleteLifecycleAction completes a lifecycle action
// (CompleteLifecycleAction, Auto Scaling API Reference): a launching
// action of LifecycleHookName pending on an instance in Pending:Wait, by
// instance id or LifecycleActionToken, with LifecycleActionResult
// CONTINUE (it proceeds into service once its other launching actions
// have) or ABANDON (it is terminated and replaced); or the termination
// action of an instance in Terminating:Wait, by instance id: it proceeds
// to terminate at once (CONTINUE and ABANDON alike, for a termination).
// A result other than CONTINUE or ABANDON, or an instance not waiting on
// a hook, is a ValidationError, the latter as Auto Scaling answers "No
// active Lifecycle Action found".
func (c *AutoScaling) CompleteLifecycleAction(ctx context.Context, in *autoscaling.CompleteLifecycleActionInput, _ ...func(*autoscaling.Options)) (*autoscaling.CompleteLifecycleActionOutput, error) {
	const op = "CompleteLifecycleAction"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	return &autoscaling.CompleteLifecycleActionOutput{}, c.end(op, r.completeLifecycleAction(in))
}

func (r *region) completeLifecycleAction(in *autoscaling.CompleteLifecycleActionInput) error {
	g, err := r.lookupGroup(deref(in.AutoScalingGroupName))
	if err != nil {
		return err
	}
	if err := r.w.authorize(groupAuth("CompleteLifecycleAction", g)); err != nil {
		return err
	}
	result := deref(in.LifecycleActionResult)
	if result != resultContinue && result != resultAbandon {
		return apiErrf(cloud.CodeValidation, "Invalid LifecycleActionResult: %s (CONTINUE or ABANDON)", result)
	}
	now := r.w.now
	if inst, a := g.pendingLaunchAction(deref(in.LifecycleHookName), deref(in.InstanceId), deref(in.LifecycleActionToken)); a != nil {
		r.endLaunchAction(inst, a, result, now)
		return nil
	}
	for _, i := range g.instances {
		if i.id == deref(in.InstanceId) && i.lifecycle(now) == astypes.LifecycleStateTerminatingWait && !i.hookFrom.IsZero() {
			r.proceed(i, now)
			return nil
		}
	}
	return noActiveAction(in.InstanceId, in.LifecycleActionToken)
}

// DescribeAccountLimits answers the region's Auto Scaling group quota and
// how many groups it has (those being deleted included: they count
// until they are gone), as Auto Scaling does; launch configurations,
// which the simulation does not model, are at AWS's default quota of
// 200 and none used. It has no resource-level permissions.
func (c *AutoScaling) DescribeAccountLimits(ctx context.Context, _ *autoscaling.DescribeAccountLimitsInput, _ ...func(*autoscaling.Options)) (*autoscaling.DescribeAccountLimitsOutput, error) {
	const op = "DescribeAccountLimits"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	if err := r.w.authorize(Auth{Action: "autoscaling:DescribeAccountLimits", Resource: "*"}); err != nil {
		return nil, c.end(op, err)
	}
	return &autoscaling.DescribeAccountLimitsOutput{
		MaxNumberOfAutoScalingGroups:    aws.Int32(int32(r.w.quotas.AutoScalingGroups)),
		NumberOfAutoScalingGroups:       aws.Int32(int32(len(r.groups))),
		MaxNumberOfLaunchConfigurations: aws.Int32(200), NumberOfLaunchConfigurations: aws.Int32(0),
	}, c.end(op, nil)
}

// DescribeLifecycleHooks describes a group's lifecycle hooks.
func (c *AutoScaling) DescribeLifecycleHooks(ctx context.Context, in *autoscaling.DescribeLifecycleHooksInput, _ ...func(*autoscaling.Options)) (*autoscaling.DescribeLifecycleHooksOutput, error) {
	const op = "DescribeLifecycleHooks"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	g, err := r.lookupGroup(deref(in.AutoScalingGroupName))
	if err != nil {
		return nil, c.end(op, err)
	}
	out := &autoscaling.DescribeLifecycleHooksOutput{}
	for _, h := range g.hooks {
		out.LifecycleHooks = append(out.LifecycleHooks, astypes.LifecycleHook{
			AutoScalingGroupName: aws.String(g.name), LifecycleHookName: h.LifecycleHookName,
			LifecycleTransition: h.LifecycleTransition, HeartbeatTimeout: aws.Int32(heartbeatOf(h)),
			DefaultResult:         aws.String(cmp.Or(deref(h.DefaultResult), "ABANDON")),
			NotificationTargetARN: h.NotificationTargetARN, RoleARN: h.RoleARN,
		})
	}
	return out, c.end(op, nil)
}

// defaultHeartbeat is a lifecycle hook's heartbeat timeout when it names
// none: one hour ("By default, the instance remains in a wait state for
// one hour", How lifecycle hooks work, Auto Scaling User Guide).
const defaultHeartbeat = 3600

// heartbeatOf is h's heartbeat timeout in seconds.
func heartbeatOf(h astypes.LifecycleHookSpecification) int32 {
	if h.HeartbeatTimeout == nil {
		return defaultHeartbeat
	}
	return *h.HeartbeatTimeout
}

// termHeartbeat is how long g's termination hooks hold an instance in
// Terminating:Wait at most: the longest heartbeat timeout of its
// EC2_INSTANCE_TERMINATING hooks.
func (g *group) termHeartbeat() time.Duration {
	var longest int32
	for _, h := range g.hooks {
		if deref(h.LifecycleTransition) == transitionTerminating {
			longest = max(longest, heartbeatOf(h))
		}
	}
	return time.Duration(longest) * time.Second
}

// retire terminates inst gracefully at t, as a scale-in or a request does
// (How lifecycle hooks work; Elastic Load Balancing's deregistration
// delay and connection draining): it leaves its load balancers and
// drains; then, with a termination hook, it waits in Terminating:Wait
// until the action is completed (a worker completes it once its job is
// done) or the heartbeat times out; then it proceeds and is gone after
// its terminate time. It never cuts a connection.
func (r *region) retire(inst *instance, t time.Time, cause string) {
	if !inst.terminating.IsZero() {
		return
	}
	inst.terminating = t
	drained := t
	for _, lb := range slices.Clone(inst.lbs) {
		drained = later(drained, r.deregisterELB(lb, inst, t))
	}
	for _, tg := range slices.Clone(inst.tgs) {
		drained = later(drained, r.deregisterTG(tg, inst, t))
	}
	g := inst.g
	inst.hookFrom, inst.hookUntil = drained, drained
	if g.termHook {
		inst.hookUntil = drained.Add(g.termHeartbeat())
		if inst.behavior == Worker {
			inst.workerDone = drained.Add(r.timingsOf(inst).Finish.pick(seed(inst.id, "finish")))
			inst.hookUntil = earlier(inst.hookUntil, inst.workerDone)
		}
	}
	goneAt := inst.hookUntil.Add(r.timingsOf(inst).Terminate.pick(seed(inst.id, "terminate")))
	g.record(&activity{
		id: r.w.newActivityID(), description: "Terminating EC2 instance: " + inst.id, cause: cause,
		details: activityDetails(inst.subnet), start: t, end: goneAt,
	})
	r.goneAt(inst, goneAt)
}

// proceed ends inst's Terminating:Wait at t: it is gone after its
// terminate time.
func (r *region) proceed(inst *instance, t time.Time) {
	inst.hookUntil = t
	r.goneAt(inst, t.Add(r.timingsOf(inst).Terminate.pick(seed(inst.id, "terminate"))))
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func earlier(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
