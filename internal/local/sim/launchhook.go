package sim

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"

	"github.com/ferryhq/ferry/internal/cloud"
)

// Launching lifecycle hooks ("How lifecycle hooks work", Auto Scaling User
// Guide): an instance of a group with an autoscaling:EC2_INSTANCE_LAUNCHING
// hook waits in Pending:Wait from its launch until every such hook's
// action is completed (CompleteLifecycleAction) or times out (its
// heartbeat timeout, restarted by RecordLifecycleActionHeartbeat, never
// past its global timeout: 48 hours or 100 heartbeats, whichever is
// smaller; LifecycleHook, API Reference). The hook's DefaultResult then
// applies (ABANDON when it names none): CONTINUE moves it to
// Pending:Proceed and, once its own boot is over, InService, registered
// with the group's load balancers and target groups only then; ABANDON
// terminates it and the group launches a replacement.

const (
	transitionLaunching   = "autoscaling:EC2_INSTANCE_LAUNCHING"
	transitionTerminating = "autoscaling:EC2_INSTANCE_TERMINATING"
	resultContinue        = "CONTINUE"
	resultAbandon         = "ABANDON"
	// maxGlobalTimeout is the longest an instance waits on a lifecycle
	// action: 172800 seconds (48 hours), unless 100 heartbeats are less
	// (GlobalTimeout, LifecycleHook, Auto Scaling API Reference).
	maxGlobalTimeout = 48 * time.Hour
)

// LaunchHookMarker, on a line of its own in an instance's user data
// followed by "complete" or "abandon", makes the instance's boot complete
// each of its launching lifecycle actions with CONTINUE or ABANDON once it
// is over, as a user data script calling complete-lifecycle-action does.
// Without it nobody completes them: each waits out its timeout.
const LaunchHookMarker = "#ferry-sim-launch-hook:"

// launchAction is one launching lifecycle action of an instance.
type launchAction struct {
	hook, token string
	heartbeat   time.Duration
	// deadline is when it times out; limit is its global timeout.
	deadline, limit time.Time
	// result is what applies when it times out (the hook's DefaultResult).
	result string
	done   bool
}

// launchHooks are g's autoscaling:EC2_INSTANCE_LAUNCHING hooks.
func (g *group) launchHooks() []astypes.LifecycleHookSpecification {
	var out []astypes.LifecycleHookSpecification
	for _, h := range g.hooks {
		if deref(h.LifecycleTransition) == transitionLaunching {
			out = append(out, h)
		}
	}
	return out
}

// launchResultOf is what an instance launched with userData does with its
// launching lifecycle actions once booted: CONTINUE, ABANDON or nothing
// ("").
func launchResultOf(userData string) string {
	var out string
	for _, line := range strings.Split(decodeUserData(userData), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), LaunchHookMarker); ok {
			switch strings.TrimSpace(rest) {
			case "complete":
				out = resultContinue
			case "abandon":
				out = resultAbandon
			}
		}
	}
	return out
}

// holdLaunch puts inst, launched at t and booted at booted, in
// Pending:Wait on each of hooks. Until the actions end, its bootAt is the
// latest it can come into service (the last global timeout).
func (r *region) holdLaunch(inst *instance, hooks []astypes.LifecycleHookSpecification, t, booted time.Time, userData string) {
	inst.booted = booted
	inst.bootAt = t
	for _, h := range hooks {
		hb := time.Duration(heartbeatOf(h)) * time.Second
		a := &launchAction{
			hook: deref(h.LifecycleHookName), token: uuidFrom(seed(inst.id, "launch-action "+deref(h.LifecycleHookName))),
			heartbeat: hb, deadline: t.Add(hb), limit: t.Add(min(maxGlobalTimeout, 100*hb)),
			result: cmp.Or(deref(h.DefaultResult), resultAbandon),
		}
		inst.launch = append(inst.launch, a)
		inst.bootAt = later(inst.bootAt, a.limit)
		r.armLaunchTimeout(inst, a)
	}
	inst.healthyAt = inst.bootAt.Add(r.w.draw(*r.timingsOf(inst).Health, inst.id, "health"))
	if result := launchResultOf(userData); result != "" {
		r.w.at(booted, func(at time.Time) {
			for _, a := range inst.launch {
				r.endLaunchAction(inst, a, result, at)
			}
		})
	}
}

// armLaunchTimeout ends a with its default result at its deadline, unless
// it ended or its deadline moved (a heartbeat) before.
func (r *region) armLaunchTimeout(inst *instance, a *launchAction) {
	deadline := a.deadline
	r.w.at(deadline, func(at time.Time) {
		if a.deadline.Equal(deadline) {
			r.endLaunchAction(inst, a, a.result, at)
		}
	})
}

// endLaunchAction ends inst's launching action a with result at t: ABANDON
// terminates inst (the group replaces it); the last action to CONTINUE
// lets it proceed, into service once its boot is over.
func (r *region) endLaunchAction(inst *instance, a *launchAction, result string, t time.Time) {
	if a.done || !inst.terminating.IsZero() || !inst.gone.IsZero() {
		return
	}
	a.done = true
	if result == resultAbandon {
		inst.launchActivity.end = t
		r.terminate(inst, t, true, fmt.Sprintf("At %s an instance was taken out of service in response to a lifecycle action %s of hook %s (ABANDON).", stamp(t), a.token, a.hook))
		r.serviceDecided(inst, func(bool) time.Time { return t })
		return
	}
	for _, other := range inst.launch {
		if !other.done {
			return
		}
	}
	inst.proceedAt = t
	r.inService(inst, later(t, inst.booted))
	r.serviceDecided(inst, inst.readyAt)
}

// readyAt is when inst is in service or, with health, also passes its
// load balancers' health checks.
func (i *instance) readyAt(health bool) time.Time {
	if health {
		return i.healthyAt
	}
	return i.bootAt
}

// atReady runs fn once inst is in service (with health, once it also
// passes its health checks): at that moment, known at once for an
// instance without launching hooks; for one waiting on them, at the
// latest it can be (the last global timeout), or as soon as its actions
// decide it (into service, or abandoned: then at once), whichever comes
// first.
func (r *region) atReady(inst *instance, health bool, fn func(time.Time)) {
	done := false
	once := func(at time.Time) {
		if !done {
			done = true
			fn(at)
		}
	}
	r.w.at(inst.readyAt(health), once)
	if inst.launch != nil && inst.proceedAt.IsZero() {
		inst.onReady = append(inst.onReady, readyWait{health: health, fn: once})
	}
}

// readyWait is an atReady waiting on an instance's launching actions.
type readyWait struct {
	health bool
	fn     func(time.Time)
}

// serviceDecided runs inst's atReady waits at the moments its launching
// actions decided (when says, by each wait's health).
func (r *region) serviceDecided(inst *instance, when func(health bool) time.Time) {
	for _, w := range inst.onReady {
		r.w.at(when(w.health), w.fn)
	}
	inst.onReady = nil
}

// unregistered reports whether inst is not registered with its group's
// load balancers and target groups at now: it waits on a launching hook,
// or was abandoned there (Auto Scaling registers it once its actions
// continue, just before InService).
func (i *instance) unregistered(now time.Time) bool {
	return i.launch != nil && (i.proceedAt.IsZero() || now.Before(i.bootAt))
}

// waitingLaunch is inst's launching action of hook that is pending at
// now, if any.
func (i *instance) waitingLaunch(hook string) *launchAction {
	for _, a := range i.launch {
		if a.hook == hook && !a.done && i.terminating.IsZero() {
			return a
		}
	}
	return nil
}

// pendingLaunchAction finds the pending launching action of hook in g by
// instance id or token.
func (g *group) pendingLaunchAction(hook, instanceID, token string) (*instance, *launchAction) {
	for _, i := range g.instances {
		a := i.waitingLaunch(hook)
		if a != nil && ((instanceID != "" && i.id == instanceID) || (token != "" && a.token == token)) {
			return i, a
		}
	}
	return nil, nil
}

// RecordLifecycleActionHeartbeat restarts the timeout of a pending
// lifecycle action for another heartbeat, never past its global timeout
// (RecordLifecycleActionHeartbeat, Auto Scaling API Reference): a
// launching action by instance id or token, or the Terminating:Wait of an
// instance by id. An action not pending is a ValidationError ("No active
// Lifecycle Action found").
func (c *AutoScaling) RecordLifecycleActionHeartbeat(ctx context.Context, in *autoscaling.RecordLifecycleActionHeartbeatInput, _ ...func(*autoscaling.Options)) (*autoscaling.RecordLifecycleActionHeartbeatOutput, error) {
	const op = "RecordLifecycleActionHeartbeat"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	g, err := r.lookupGroup(deref(in.AutoScalingGroupName))
	if err != nil {
		return nil, c.end(op, err)
	}
	if err := r.w.authorize(groupAuth(op, g)); err != nil {
		return nil, c.end(op, err)
	}
	if inst, a := g.pendingLaunchAction(deref(in.LifecycleHookName), deref(in.InstanceId), deref(in.LifecycleActionToken)); a != nil {
		a.deadline = earlier(r.w.now.Add(a.heartbeat), a.limit)
		r.armLaunchTimeout(inst, a)
		return &autoscaling.RecordLifecycleActionHeartbeatOutput{}, c.end(op, nil)
	}
	if inst := g.terminationWaiting(deref(in.InstanceId), r.w.now); inst != nil {
		r.extendTermination(inst, r.w.now)
		return &autoscaling.RecordLifecycleActionHeartbeatOutput{}, c.end(op, nil)
	}
	return nil, c.end(op, noActiveAction(in.InstanceId, in.LifecycleActionToken))
}

// terminationWaiting is g's instance id in Terminating:Wait at now, if
// any.
func (g *group) terminationWaiting(id string, now time.Time) *instance {
	for _, i := range g.instances {
		if i.id == id && !i.hookFrom.IsZero() && i.lifecycle(now) == astypes.LifecycleStateTerminatingWait {
			return i
		}
	}
	return nil
}

// extendTermination restarts inst's Terminating:Wait timeout at now for
// another heartbeat of its group's termination hooks, never past their
// global timeout from the start of the wait, nor past the moment a worker
// completes its own action; it is gone its terminate time after.
func (r *region) extendTermination(inst *instance, now time.Time) {
	hb := inst.g.termHeartbeat()
	until := earlier(now.Add(hb), inst.hookFrom.Add(min(maxGlobalTimeout, 100*hb)))
	if !inst.workerDone.IsZero() {
		until = earlier(until, inst.workerDone)
	}
	if !until.After(inst.hookUntil) {
		return
	}
	inst.hookUntil = until
	inst.goneDue = time.Time{}
	gone := until.Add(r.timingsOf(inst).Terminate.pick(seed(inst.id, "terminate")))
	r.goneAt(inst, gone)
	for k := len(inst.g.activities) - 1; k >= 0; k-- {
		if a := inst.g.activities[k]; a.description == "Terminating EC2 instance: "+inst.id {
			a.end = gone
			break
		}
	}
}

// noActiveAction is Auto Scaling's answer to an action that is not
// pending.
func noActiveAction(instanceID, token *string) error {
	if instanceID == nil {
		return apiErrf(cloud.CodeValidation, "No active Lifecycle Action found with token %s", deref(token))
	}
	return apiErrf(cloud.CodeValidation, "No active Lifecycle Action found with instance ID %s", deref(instanceID))
}

// LaunchActionToken is the token of instanceID's pending launching
// lifecycle action of hook, as Auto Scaling sends it to the hook's
// notification target; false when none is pending.
func (w *World) LaunchActionToken(account, region, instanceID, hook string) (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.advance(w.clk.Now())
	r := w.region(account, region)
	if r == nil {
		return "", false
	}
	for _, g := range r.groups {
		if i, a := g.pendingLaunchAction(hook, instanceID, ""); a != nil && i != nil {
			return a.token, true
		}
	}
	return "", false
}
