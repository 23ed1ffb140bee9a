package fleet

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/naming/tags"
)

// RetireProcesses are the processes a retiring group has suspended before
// it is scaled to zero: nothing may launch into it again (a scaling alarm,
// a rebalance, a replacement, a scheduled action), while Terminate runs.
var RetireProcesses = []string{"Launch", "AlarmNotification", "AZRebalance", "ReplaceUnhealthy", "ScheduledActions"}

// Attachment states, as Auto Scaling's DescribeLoadBalancers and
// DescribeLoadBalancerTargetGroups report them (LoadBalancerState,
// LoadBalancerTargetGroupState): a load balancer "enters the Removing
// state while deregistering the instances in the group. When all
// instances are deregistered, then you can no longer describe" it
// (DetachLoadBalancerTargetGroups, Auto Scaling API Reference).
const (
	attachmentRemoving = "Removing"
	attachmentRemoved  = "Removed"
)

// Retirer retires Auto Scaling groups a step at a time, gracefully: a
// group first leaves its load balancers, which drain its instances
// (classic ELB connection draining, target group deregistration delay),
// then is scaled to zero with its launches suspended, so each instance's
// termination lifecycle hooks run (Terminating:Wait until the hook is
// completed or its heartbeat times out), and is deleted only once empty.
// A Retirer never waits: Step does what can be done now and says what is
// still under way, and its caller waits (the state machine) and steps
// again. Every call is idempotent.
type Retirer struct {
	API cloud.AutoScaling
	// Owner and Owns say which groups it may retire: a visible group must
	// carry Owner's tags and satisfy Owns (a release's own, or another
	// release's); any other it leaves alone (the removal refuses it).
	Owner Owner
	Owns  func(tags map[string]string) bool
	// LastAttempt says the task is on its last attempt: a ValidationError
	// (Auto Scaling's "not found") naming a group Step has just seen is
	// retryable until then (AWS is eventually consistent).
	LastAttempt bool
	// Detached are the groups a previous step saw out of every load
	// balancer and target group, none still draining them (PhaseScalingIn
	// or PhaseDeleting: see DetachedIn). Step does not ask Auto Scaling
	// for their attachments again while the group's own description names
	// no load balancer, target group or traffic source (an attachment
	// made since shows there at once): on an account's shared Auto
	// Scaling request bucket (Amazon EC2 Auto Scaling API Reference, API
	// request rate) two describes per group per step are most of a
	// retirement's calls.
	Detached map[string]bool
	// Draining is, for each group a previous step left draining, the
	// kind of attachment it saw draining it or detached it from
	// (DrainingIn): Step asks for that kind only, for no other can be
	// draining the group (an attachment made since shows in its
	// description at once, and is detached from there). A group not in
	// it is asked for every kind.
	Draining map[string]string
	// From is the group a throttled step stopped at (the previous
	// Retirement's Stopped), or the first it left unasked while another
	// drained (its Next): Step takes the groups in name order from it,
	// wrapping around, so the groups a step did not reach come first in
	// the next.
	From string
	// Calls is the most Auto Scaling calls a Step makes (0: no bound):
	// a step takes no group's step that could take it over (StepCalls,
	// the most one makes), but always the first one's. The groups it
	// does not reach are reported as the previous step left them, and
	// the next step starts at the first of them (Retirement.Next): on an
	// account's shared Auto Scaling bucket (Amazon EC2 Auto Scaling API
	// Reference, API request rate: 40 calls, refilled at 10 a second) a
	// step of ten groups' scale-ins is forty calls in about a second.
	Calls int
	// Headless says the groups Step describes, or StepDescribed is given,
	// are described without their instances (IncludeInstances false: a
	// step draining 50 groups of 100 instances need not read 5,000
	// instances it does not count). A group described so never looks
	// empty: Step takes it as far as its scale-in (its capacity set to
	// zero; its instances' scale-in protection, which takes their names,
	// is removed by a step that sees them) and never reports it
	// PhaseDeleting, so a retirement is Ready only on a step that saw
	// every group's instances. Its instances are reported as Reported
	// last had them, else as its desired capacity.
	Headless bool
	// Reported is the retirement's last report (the State's
	// Retire.Groups): the instances a group described without them
	// (Headless) is reported with.
	Reported []execution.RetiringGroup
	Log      *slog.Logger
}

// StepCalls is the most Auto Scaling calls one group's step makes
// (Retirer.Calls): its attachments asked, of both kinds, and its detach;
// or its protection removed, its processes suspended and Terminate
// resumed, and its capacity set (a group of more than 50 protected
// instances, or of more than ten attachments of a kind, makes more).
const StepCalls = 4

// DetachedIn are the groups of a retirement's last report (the State's
// Retire.Groups) that were out of every load balancer, none draining:
// scaling in, or empty. A name reported twice (groups of one name in two
// regions) is detached only when every report says so.
func DetachedIn(groups []execution.RetiringGroup) map[string]bool {
	out := map[string]bool{}
	for _, g := range groups {
		done := g.Phase == execution.PhaseScalingIn || g.Phase == execution.PhaseDeleting
		if prev, seen := out[g.Name]; seen {
			done = done && prev
		}
		out[g.Name] = done
	}
	return out
}

// DrainingIn is, for each group of a retirement's last report (the
// State's Retire.Groups) that was draining with the kind known
// (RetiringGroup.Draining), that kind. A name reported twice (groups of
// one name in two regions) gets the kinds of both.
func DrainingIn(groups []execution.RetiringGroup) map[string]string {
	out := map[string]string{}
	unknown := map[string]bool{}
	for _, g := range groups {
		switch {
		case g.Phase != execution.PhaseDraining:
		case g.Draining == "":
			unknown[g.Name] = true
		default:
			out[g.Name] = joinKinds(out[g.Name], g.Draining)
		}
	}
	for name := range unknown {
		delete(out, name)
	}
	return out
}

// joinKinds is the kind of attachment that covers a and b ("" is none).
func joinKinds(a, b string) string {
	switch {
	case a == "" || a == b:
		return b
	case b == "":
		return a
	}
	return execution.AttachmentAll
}

// covers says whether kinds ("" or AttachmentAll: every kind) covers
// kind.
func covers(kinds, kind string) bool {
	return kinds == "" || kinds == execution.AttachmentAll || kinds == kind
}

// Retirement is where the retirement of a set of groups stands after a
// Step.
type Retirement struct {
	// Ready says every group is empty, out of every load balancer, or
	// gone: they can be deleted without cutting a connection or a hook.
	Ready bool
	// Groups are the groups still standing, in name order, each with the
	// phase it is in.
	Groups []GroupState
	// Stopped is the group whose step AWS throttled (a Step that returns
	// a throttling error, cloud.Throttled): the groups before it in the
	// step's order took their step, it and those after it did not, and
	// report the phase the previous step left them in. The next step
	// starts there (Retirer.From).
	Stopped string
	// Stepped counts the groups that took their step.
	Stepped int
	// Next is the first group the step did not ask for its attachments
	// because one before it still drains, or did not reach within its
	// calls (Retirer.Calls) ("" when it stepped every group it would):
	// the next step starts there (Retirer.From), so the draining groups
	// are asked in turn, and none waits on another's longer drain for
	// more than a step per group.
	Next string
}

// GroupState is where one group stands in its retirement: what the State
// reports of it, and what keeps it standing: its instances InService
// (not terminating yet), in Standby (EnterStandby: out of its load
// balancers, never terminated by a scale-in) and protected from scale-in
// (ProtectedFromScaleIn).
type GroupState struct {
	execution.RetiringGroup
	InService, Standby, Protected int
}

// State is what the State reports of the groups: each one's phase,
// instances and pending hooks.
func (r Retirement) State() []execution.RetiringGroup {
	out := make([]execution.RetiringGroup, 0, len(r.Groups))
	for _, g := range r.Groups {
		out = append(out, g.RetiringGroup)
	}
	return out
}

// Stuck are the groups of r no further step empties: scaled in, with only
// instances in Standby left, which a scale-in never terminates ("Temporarily
// remove instances from your Auto Scaling group", Auto Scaling User
// Guide). Someone put them there on purpose (to inspect them): the Retirer
// neither exits nor terminates them; whoever did decides.
func (r Retirement) Stuck() []GroupState {
	var out []GroupState
	for _, g := range r.Groups {
		if g.Phase == execution.PhaseScalingIn && g.Standby > 0 && g.Standby == g.Instances {
			out = append(out, g)
		}
	}
	return out
}

// Step takes the next step of retiring each of names, once each, that
// AWS shows, is not being deleted and is the Retirer's to retire (a name
// it does not show is gone, not visible yet, or never was: a launch
// template's name, say; the removal that follows deals with each); see
// Retirer. A failure is classified: a transient one is retryable, any
// other a *failure.CleanUpError naming the group and what it keeps.
//
// A step AWS throttles part-way (an account's shared Auto Scaling bucket
// holds about 40 calls: a step of 50 groups needs more) keeps what it
// did: it returns the throttling error with the Retirement so far,
// Stopped naming the group it stopped at, each group it did not reach
// as the previous step left it (Detached), and makes no further call.
func (r *Retirer) Step(ctx context.Context, names []string) (Retirement, error) {
	groups, err := describe(ctx, r.API, names, nil, !r.Headless)
	if err != nil {
		return Retirement{}, err
	}
	return r.StepDescribed(ctx, names, groups)
}

// StepDescribed is Step on groups, names as Describe described them
// moments before (by a caller that needed them too: one describe less on
// the account's shared Auto Scaling bucket). Every step's call is
// conditioned on what groups shows, and idempotent.
//
// Groups taken out of their load balancers together drain together: once
// a group's attachments, asked for, show it still draining, the groups
// after it that would be asked too are not asked in this step. Each is
// reported draining, as the previous step left it (only ever a later
// scale-in), and the next step starts at the first of them
// (Retirement.Next), wrapping around. While they all drain a step then
// asks for one group's attachments, not every group's: on an account's
// shared Auto Scaling bucket, a retirement of 50 groups draining for
// AWS's default deregistration delay of 300 s otherwise asks 50 times a
// step, for nothing.
func (r *Retirer) StepDescribed(ctx context.Context, names []string, groups map[string]asgtypes.AutoScalingGroup) (Retirement, error) {
	ret := Retirement{Ready: true}
	var throttled error
	waiting := false // a group asked for this step still drains
	calls := &counted{AutoScaling: r.API}
	stepper := *r
	stepper.API = calls
	for _, name := range r.order(names) {
		g, ok := groups[name]
		if !ok || Deleting(g) || !r.owns(g) {
			continue
		}
		rg := r.carried(g)
		switch {
		case throttled != nil:
		case r.leaves(g, ret, calls.n, waiting):
			rg = r.left(g, rg)
			if ret.Next == "" {
				ret.Next = name
			}
		default:
			stepped, err := stepper.step(ctx, g)
			switch {
			case err == nil:
				waiting = waiting || r.asks(g) && stepped.Phase == execution.PhaseDraining
				rg = stepped
				ret.Stepped++
			case cloud.Throttled(err):
				throttled, ret.Stopped = err, name
			default:
				return Retirement{}, err
			}
		}
		ret.Groups = append(ret.Groups, rg)
		if rg.Phase != execution.PhaseDeleting {
			ret.Ready = false
		}
	}
	slices.SortFunc(ret.Groups, func(a, b GroupState) int { return strings.Compare(a.Name, b.Name) })
	ret.Ready = ret.Ready && throttled == nil
	return ret, throttled
}

// leaves says whether a step that made calls Auto Scaling calls and
// stepped ret's groups so far leaves g for the next step: it has no room
// left for another group's step (Retirer.Calls), or a group it asked
// still drains (waiting) and g's step would ask too.
func (r *Retirer) leaves(g asgtypes.AutoScalingGroup, ret Retirement, calls int, waiting bool) bool {
	spent := r.Calls > 0 && ret.Stepped > 0 && calls+StepCalls > r.Calls
	return spent || waiting && r.asks(g)
}

// left is where g, which a step leaves for the next (carried as rg),
// stands: draining when its step would have asked for its attachments.
func (r *Retirer) left(g asgtypes.AutoScalingGroup, rg GroupState) GroupState {
	if r.asks(g) {
		rg.Phase, rg.Draining = execution.PhaseDraining, r.Draining[rg.Name]
	}
	return rg
}

// order is names in name order, once each, from r.From (the first name
// at or after it), wrapping around.
func (r *Retirer) order(names []string) []string {
	sorted := slices.Compact(slices.Sorted(slices.Values(names)))
	i, _ := slices.BinarySearch(sorted, r.From)
	return append(sorted[i:], sorted[:i]...)
}

// carried is where g stands for a step that did not reach it: its
// census, in the phase the previous step left it in (out of its load
// balancers when Detached says so, else draining).
func (r *Retirer) carried(g asgtypes.AutoScalingGroup) GroupState {
	rg := r.census(g)
	switch {
	case !r.Detached[rg.Name]:
		rg.Phase, rg.Draining = execution.PhaseDraining, r.Draining[rg.Name]
	case r.empty(g):
		rg.Phase = execution.PhaseDeleting
	default:
		rg.Phase = execution.PhaseScalingIn
	}
	return rg
}

// owns reports whether g is one the Retirer may retire.
func (r *Retirer) owns(g asgtypes.AutoScalingGroup) bool {
	t := tags.FromASG(g.Tags)
	return r.Owner.Marks(t) && (r.Owns == nil || r.Owns(t))
}

// step takes the next step of retiring g: detach it from the load
// balancers it is attached to, else wait while they drain it, else scale
// it to zero (launches suspended, termination running), else wait while
// its instances terminate; empty, it is ready for deletion.
func (r *Retirer) step(ctx context.Context, g asgtypes.AutoScalingGroup) (GroupState, error) {
	name := aws.ToString(g.AutoScalingGroupName)
	rg := r.census(g)
	var draining string
	var err error
	switch {
	case len(g.LoadBalancerNames)+len(g.TargetGroupARNs) > 0:
		draining, err = r.detachNamed(ctx, g)
	case r.asks(g):
		draining, err = r.detach(ctx, name, r.Draining[name])
	}
	if err != nil {
		return rg, err
	}
	switch {
	case draining != "":
		rg.Phase, rg.Draining = execution.PhaseDraining, draining
	case r.empty(g):
		rg.Phase = execution.PhaseDeleting
	default:
		rg.Phase = execution.PhaseScalingIn
		err = r.scaleIn(ctx, g)
	}
	return rg, err
}

// asks says whether the step of g asks Auto Scaling for its
// attachments: its description names no classic load balancer or target
// group (those it detaches without asking), and it was not seen detached
// before or its description names an attachment since.
func (r *Retirer) asks(g asgtypes.AutoScalingGroup) bool {
	return len(g.LoadBalancerNames)+len(g.TargetGroupARNs) == 0 && (!r.Detached[aws.ToString(g.AutoScalingGroupName)] || attached(g))
}

// attached says whether g's description names a load balancer, target
// group or traffic source.
func attached(g asgtypes.AutoScalingGroup) bool {
	return len(g.LoadBalancerNames) > 0 || len(g.TargetGroupARNs) > 0 || len(g.TrafficSources) > 0
}

// empty says whether g, as described, has no instance left: never when
// described without them (Headless).
func (r *Retirer) empty(g asgtypes.AutoScalingGroup) bool {
	return !r.Headless && len(g.Instances) == 0
}

// census is where g stands, before this step (census); described
// without its instances (Headless), its instances and pending hooks as
// the last report had them (Reported), else its desired capacity.
func (r *Retirer) census(g asgtypes.AutoScalingGroup) GroupState {
	if !r.Headless {
		return census(g)
	}
	name := aws.ToString(g.AutoScalingGroupName)
	for _, rg := range r.Reported {
		if rg.Name == name {
			return GroupState{RetiringGroup: execution.RetiringGroup{Name: name, Instances: rg.Instances, HooksPending: rg.HooksPending}}
		}
	}
	return GroupState{RetiringGroup: execution.RetiringGroup{Name: name, Instances: int(aws.ToInt32(g.DesiredCapacity))}}
}

// census is where g stands, before this step: its instances, those
// InService, in Standby, protected from scale-in, and waiting on a
// termination hook.
func census(g asgtypes.AutoScalingGroup) GroupState {
	rg := GroupState{RetiringGroup: execution.RetiringGroup{Name: aws.ToString(g.AutoScalingGroupName), Instances: len(g.Instances)}}
	for _, i := range g.Instances {
		switch i.LifecycleState {
		case asgtypes.LifecycleStateTerminatingWait:
			rg.HooksPending++
		case asgtypes.LifecycleStateInService:
			rg.InService++
		case asgtypes.LifecycleStateStandby:
			rg.Standby++
		}
		if aws.ToBool(i.ProtectedFromScaleIn) && !terminating(i) {
			rg.Protected++
		}
	}
	return rg
}

// terminating says whether i is on its way out (any Terminating state).
func terminating(i asgtypes.Instance) bool {
	return strings.HasPrefix(string(i.LifecycleState), "Terminating")
}

// Standing says what keeps rg, a group a Retirement reports standing, from
// being deleted without cutting anything: still draining from its load
// balancers, instances in service, termination hooks pending, instances in
// Standby or protected from scale-in.
func Standing(rg GroupState) string {
	var why []string
	if rg.Phase == execution.PhaseDraining {
		why = append(why, "still attached to or draining from its load balancers")
	}
	for _, c := range []struct {
		n    int
		what string
	}{
		{rg.InService, "in service"},
		{rg.HooksPending, "waiting on a termination hook (Terminating:Wait)"},
		{rg.Standby, "in Standby (a scale-in never terminates them: exit-standby, or terminate them)"},
		{rg.Protected, "protected from scale-in"},
	} {
		if c.n > 0 {
			why = append(why, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	if len(why) == 0 {
		why = append(why, fmt.Sprintf("%d instances left", rg.Instances))
	}
	return fmt.Sprintf("auto scaling group %s (not deleted): %s", rg.Name, strings.Join(why, "; "))
}

// detachNamed detaches g from the classic load balancers and target
// groups its description names, without asking Auto Scaling for its
// attachments (their Removing state is what the next step asks for),
// and returns the kind of attachment draining it now: those it detached
// it from, with r.Draining's for g; every kind when nothing is known of
// what drained it before (not Detached: not asked yet).
func (r *Retirer) detachNamed(ctx context.Context, g asgtypes.AutoScalingGroup) (string, error) {
	name := aws.ToString(g.AutoScalingGroupName)
	if err := r.detachFrom(ctx, name, g.LoadBalancerNames, g.TargetGroupARNs); err != nil {
		return "", err
	}
	kinds, known := r.Draining[name]
	if !known && !r.Detached[name] {
		return execution.AttachmentAll, nil
	}
	if len(g.LoadBalancerNames) > 0 {
		kinds = joinKinds(kinds, execution.AttachmentClassic)
	}
	if len(g.TargetGroupARNs) > 0 {
		kinds = joinKinds(kinds, execution.AttachmentTargetGroups)
	}
	return kinds, nil
}

// detach asks Auto Scaling for the group name's attachments of kinds
// ("": every kind), detaches it from every classic load balancer and
// target group it is attached to (and not leaving already), and returns
// the kind of those it detached it from or that still drain it
// (Removing); "" for none.
func (r *Retirer) detach(ctx context.Context, name, kinds string) (string, error) {
	var elbs, tgs []string
	var elbsDraining, tgsDraining bool
	var err error
	if covers(kinds, execution.AttachmentClassic) {
		if elbs, elbsDraining, err = r.classicAttachments(ctx, name); err != nil {
			return "", err
		}
	}
	if covers(kinds, execution.AttachmentTargetGroups) {
		if tgs, tgsDraining, err = r.targetGroupAttachments(ctx, name); err != nil {
			return "", err
		}
	}
	if err := r.detachFrom(ctx, name, elbs, tgs); err != nil {
		return "", err
	}
	draining := ""
	if elbsDraining || len(elbs) > 0 {
		draining = execution.AttachmentClassic
	}
	if tgsDraining || len(tgs) > 0 {
		draining = joinKinds(draining, execution.AttachmentTargetGroups)
	}
	return draining, nil
}

// detachFrom detaches the group name from the classic load balancers
// elbs and the target groups tgs, ten a call.
func (r *Retirer) detachFrom(ctx context.Context, name string, elbs, tgs []string) error {
	for batch := range slices.Chunk(elbs, 10) {
		if _, err := r.API.DetachLoadBalancers(ctx, &autoscaling.DetachLoadBalancersInput{
			AutoScalingGroupName: aws.String(name), LoadBalancerNames: batch,
		}); err != nil {
			return r.failed("autoscaling:DetachLoadBalancers "+name, err, name+": still attached to its classic load balancers")
		}
		r.log().Info("detached from classic load balancers", "asg", name, "elbs", batch)
	}
	for batch := range slices.Chunk(tgs, 10) {
		if _, err := r.API.DetachLoadBalancerTargetGroups(ctx, &autoscaling.DetachLoadBalancerTargetGroupsInput{
			AutoScalingGroupName: aws.String(name), TargetGroupARNs: batch,
		}); err != nil {
			return r.failed("autoscaling:DetachLoadBalancerTargetGroups "+name, err, name+": still attached to its target groups")
		}
		r.log().Info("detached from target groups", "asg", name, "target_groups", batch)
	}
	return nil
}

// classicAttachments are the classic load balancers the group name is
// attached to and not leaving, and whether any is draining it.
func (r *Retirer) classicAttachments(ctx context.Context, name string) (attached []string, draining bool, err error) {
	in := &autoscaling.DescribeLoadBalancersInput{AutoScalingGroupName: aws.String(name)}
	for {
		out, err := r.API.DescribeLoadBalancers(ctx, in)
		if err != nil {
			return nil, false, r.failed("autoscaling:DescribeLoadBalancers "+name, err, name+": its load balancers unknown")
		}
		for _, lb := range out.LoadBalancers {
			switch aws.ToString(lb.State) {
			case attachmentRemoving:
				draining = true
			case attachmentRemoved:
			default:
				attached = append(attached, aws.ToString(lb.LoadBalancerName))
			}
		}
		if aws.ToString(out.NextToken) == "" {
			return attached, draining, nil
		}
		in.NextToken = out.NextToken
	}
}

// targetGroupAttachments are the target groups the group name is attached
// to and not leaving, and whether any is draining it.
func (r *Retirer) targetGroupAttachments(ctx context.Context, name string) (attached []string, draining bool, err error) {
	in := &autoscaling.DescribeLoadBalancerTargetGroupsInput{AutoScalingGroupName: aws.String(name)}
	for {
		out, err := r.API.DescribeLoadBalancerTargetGroups(ctx, in)
		if err != nil {
			return nil, false, r.failed("autoscaling:DescribeLoadBalancerTargetGroups "+name, err, name+": its target groups unknown")
		}
		for _, tg := range out.LoadBalancerTargetGroups {
			switch aws.ToString(tg.State) {
			case attachmentRemoving:
				draining = true
			case attachmentRemoved:
			default:
				attached = append(attached, aws.ToString(tg.LoadBalancerTargetGroupARN))
			}
		}
		if aws.ToString(out.NextToken) == "" {
			return attached, draining, nil
		}
		in.NextToken = out.NextToken
	}
}

// scaleIn suspends RetireProcesses of g (those not suspended yet), lets
// Terminate run, removes the scale-in protection of its instances (a
// protected instance is never terminated by a scale-in: the group would
// never empty), and sets its minimum and desired capacity to zero, each
// only when g does not show it done already.
func (r *Retirer) scaleIn(ctx context.Context, g asgtypes.AutoScalingGroup) error {
	name := aws.ToString(g.AutoScalingGroupName)
	if err := r.unprotect(ctx, g); err != nil {
		return err
	}
	if suspend := Unsuspended(g, RetireProcesses); len(suspend) > 0 {
		if _, err := r.API.SuspendProcesses(ctx, &autoscaling.SuspendProcessesInput{
			AutoScalingGroupName: aws.String(name), ScalingProcesses: suspend,
		}); err != nil {
			return r.failed("autoscaling:SuspendProcesses "+name, err, name+": not scaled in, launches not suspended")
		}
	}
	if suspended(g, "Terminate") {
		if _, err := r.API.ResumeProcesses(ctx, &autoscaling.ResumeProcessesInput{
			AutoScalingGroupName: aws.String(name), ScalingProcesses: []string{"Terminate"},
		}); err != nil {
			return r.failed("autoscaling:ResumeProcesses "+name, err, name+": not scaled in, Terminate suspended")
		}
	}
	if aws.ToInt32(g.MinSize) == 0 && aws.ToInt32(g.DesiredCapacity) == 0 {
		return nil
	}
	if _, err := r.API.UpdateAutoScalingGroup(ctx, &autoscaling.UpdateAutoScalingGroupInput{
		AutoScalingGroupName: aws.String(name), MinSize: aws.Int32(0), DesiredCapacity: aws.Int32(0),
	}); err != nil {
		return r.failed("autoscaling:UpdateAutoScalingGroup "+name, err, fmt.Sprintf("%s: not scaled in (%d instances)", name, len(g.Instances)))
	}
	r.log().Info("scaling in to retire", "asg", name, "instances", len(g.Instances))
	return nil
}

// unprotect removes the scale-in protection of g's protected instances
// that are not terminating already (SetInstanceProtection, at most 50 a
// call).
func (r *Retirer) unprotect(ctx context.Context, g asgtypes.AutoScalingGroup) error {
	name := aws.ToString(g.AutoScalingGroupName)
	var ids []string
	for _, i := range g.Instances {
		if aws.ToBool(i.ProtectedFromScaleIn) && !terminating(i) {
			ids = append(ids, aws.ToString(i.InstanceId))
		}
	}
	for batch := range slices.Chunk(ids, maxProtectionBatch) {
		if _, err := r.API.SetInstanceProtection(ctx, &autoscaling.SetInstanceProtectionInput{
			AutoScalingGroupName: aws.String(name), InstanceIds: batch, ProtectedFromScaleIn: aws.Bool(false),
		}); err != nil {
			return r.failed("autoscaling:SetInstanceProtection "+name, err, fmt.Sprintf("%s: not scaled in, %d instances protected from scale-in", name, len(ids)))
		}
		r.log().Info("removed scale-in protection to retire", "asg", name, "instances", batch)
	}
	return nil
}

// maxProtectionBatch is how many instances one SetInstanceProtection call
// may name (Auto Scaling API Reference).
const maxProtectionBatch = 50

// failed classifies the error of op: transient ones are retryable, as is
// a ValidationError until the last attempt (the group was in the describe
// moments before: it is not visible to this call yet); the rest a
// *failure.CleanUpError naming what is left.
func (r *Retirer) failed(op string, err error, what string) error {
	if cloud.IsCode(err, cloud.CodeValidation) && !r.LastAttempt {
		return &failure.RetryableError{Op: op, Err: fmt.Errorf("the group was described moments ago and may not be visible to this call yet: %w", err)}
	}
	return cloud.ClassifyAs(op, err, func(string, error) error {
		return &failure.CleanUpError{Leftovers: []string{what}, Err: fmt.Errorf("%s: %w", op, err)}
	})
}

func (r *Retirer) log() *slog.Logger {
	if r.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Log
}

// counted is an Auto Scaling API that counts the calls a retirement's
// step makes (Retirer.Calls): those of Retirer.step.
type counted struct {
	cloud.AutoScaling
	n int
}

var _ cloud.AutoScaling = (*counted)(nil)

func (c *counted) DescribeLoadBalancers(ctx context.Context, in *autoscaling.DescribeLoadBalancersInput, optFns ...func(*autoscaling.Options)) (*autoscaling.DescribeLoadBalancersOutput, error) {
	c.n++
	return c.AutoScaling.DescribeLoadBalancers(ctx, in, optFns...)
}

func (c *counted) DescribeLoadBalancerTargetGroups(ctx context.Context, in *autoscaling.DescribeLoadBalancerTargetGroupsInput, optFns ...func(*autoscaling.Options)) (*autoscaling.DescribeLoadBalancerTargetGroupsOutput, error) {
	c.n++
	return c.AutoScaling.DescribeLoadBalancerTargetGroups(ctx, in, optFns...)
}

func (c *counted) DetachLoadBalancers(ctx context.Context, in *autoscaling.DetachLoadBalancersInput, optFns ...func(*autoscaling.Options)) (*autoscaling.DetachLoadBalancersOutput, error) {
	c.n++
	return c.AutoScaling.DetachLoadBalancers(ctx, in, optFns...)
}

func (c *counted) DetachLoadBalancerTargetGroups(ctx context.Context, in *autoscaling.DetachLoadBalancerTargetGroupsInput, optFns ...func(*autoscaling.Options)) (*autoscaling.DetachLoadBalancerTargetGroupsOutput, error) {
	c.n++
	return c.AutoScaling.DetachLoadBalancerTargetGroups(ctx, in, optFns...)
}

func (c *counted) SetInstanceProtection(ctx context.Context, in *autoscaling.SetInstanceProtectionInput, optFns ...func(*autoscaling.Options)) (*autoscaling.SetInstanceProtectionOutput, error) {
	c.n++
	return c.AutoScaling.SetInstanceProtection(ctx, in, optFns...)
}

func (c *counted) SuspendProcesses(ctx context.Context, in *autoscaling.SuspendProcessesInput, optFns ...func(*autoscaling.Options)) (*autoscaling.SuspendProcessesOutput, error) {
	c.n++
	return c.AutoScaling.SuspendProcesses(ctx, in, optFns...)
}

func (c *counted) ResumeProcesses(ctx context.Context, in *autoscaling.ResumeProcessesInput, optFns ...func(*autoscaling.Options)) (*autoscaling.ResumeProcessesOutput, error) {
	c.n++
	return c.AutoScaling.ResumeProcesses(ctx, in, optFns...)
}

func (c *counted) UpdateAutoScalingGroup(ctx context.Context, in *autoscaling.UpdateAutoScalingGroupInput, optFns ...func(*autoscaling.Options)) (*autoscaling.UpdateAutoScalingGroupOutput, error) {
	c.n++
	return c.AutoScaling.UpdateAutoScalingGroup(ctx, in, optFns...)
}
