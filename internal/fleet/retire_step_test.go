package fleet_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/fleet"
	"github.com/ferryhq/ferry/internal/local/sim"
)

// attachments is Auto Scaling as the simulator answers it, except that
// DescribeLoadBalancers and DescribeLoadBalancerTargetGroups report the
// group's one classic load balancer and one target group in the states
// elb and tg ("": not attached at all).
type attachments struct {
	cloud.AutoScaling
	elb, tg string
}

var _ cloud.AutoScaling = (*attachments)(nil)

func (a *attachments) DescribeLoadBalancers(context.Context, *autoscaling.DescribeLoadBalancersInput, ...func(*autoscaling.Options)) (*autoscaling.DescribeLoadBalancersOutput, error) {
	out := &autoscaling.DescribeLoadBalancersOutput{}
	if a.elb != "" {
		out.LoadBalancers = []astypes.LoadBalancerState{{LoadBalancerName: aws.String("coinbase-deploy-test-web-elb"), State: aws.String(a.elb)}}
	}
	return out, nil
}

func (a *attachments) DescribeLoadBalancerTargetGroups(ctx context.Context, in *autoscaling.DescribeLoadBalancerTargetGroupsInput, opts ...func(*autoscaling.Options)) (*autoscaling.DescribeLoadBalancerTargetGroupsOutput, error) {
	if _, err := a.AutoScaling.DescribeLoadBalancerTargetGroups(ctx, in, opts...); err != nil {
		return nil, err
	}
	out := &autoscaling.DescribeLoadBalancerTargetGroupsOutput{}
	if a.tg != "" {
		out.LoadBalancerTargetGroups = []astypes.LoadBalancerTargetGroupState{{LoadBalancerTargetGroupARN: aws.String(webTargetGroupARN), State: aws.String(a.tg)}}
	}
	return out, nil
}

// webTargetGroupARN is the deploy-test target group's ARN, as attachments
// reports it.
const webTargetGroupARN = "arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/coinbase-deploy-test-web-tg/0123456789abcdef"

// unattached makes a group its description names in no load balancer or
// target group: what Auto Scaling's own describes report of its
// attachments is then what a step goes by (attachments).
func unattached(in *autoscaling.CreateAutoScalingGroupInput) {
	in.LoadBalancerNames, in.TargetGroupARNs = nil, nil
}

// TestRetirerWaitsForEveryAttachment: a group is scaled in only once no
// load balancer of either kind is still draining it. A classic load
// balancer or a target group "enters the Removing state while
// deregistering the instances in the group" (DetachLoadBalancers,
// DetachLoadBalancerTargetGroups, Auto Scaling API Reference): one of
// them Removing, or still attached (InService), is enough to keep the
// group draining, whatever the other says.
func TestRetirerWaitsForEveryAttachment(t *testing.T) {
	for _, tc := range []struct {
		elb, tg string
		phase   string
	}{
		{"Removed", "Removing", execution.PhaseDraining},
		{"Removing", "Removed", execution.PhaseDraining},
		{"", "Removing", execution.PhaseDraining},
		{"Removed", "InService", execution.PhaseDraining},
		{"InService", "", execution.PhaseDraining},
		{"Removed", "Removed", execution.PhaseScalingIn},
		{"", "", execution.PhaseScalingIn},
	} {
		t.Run(tc.elb+"/"+tc.tg, func(t *testing.T) {
			e := newEnv(t)
			name := e.serving(t, "r1", unattached)
			r := &fleet.Retirer{API: &attachments{AutoScaling: e.c.AutoScaling, elb: tc.elb, tg: tc.tg}, Owner: owner, Owns: ofRelease("r1")}
			ret, err := r.Step(e.ctx, []string{name})
			require.NoError(t, err)
			require.Len(t, ret.Groups, 1)
			assert.Equal(t, tc.phase, ret.Groups[0].Phase)
			g := describe(t, e, name)
			if tc.phase == execution.PhaseDraining {
				assert.Equal(t, int32(2), aws.ToInt32(g.DesiredCapacity), "not scaled in while draining")
			} else {
				assert.Zero(t, aws.ToInt32(g.DesiredCapacity), "scaled in once drained")
			}
		})
	}
}

// detached steps r until the group name is out of its load balancers
// and scaling in.
func detached(t *testing.T, e *env, r *fleet.Retirer, name string) fleet.Retirement {
	t.Helper()
	for range 40 {
		ret, err := r.Step(e.ctx, []string{name})
		require.NoError(t, err)
		require.Len(t, ret.Groups, 1)
		if ret.Groups[0].Phase != execution.PhaseDraining {
			return ret
		}
		e.clk.Advance(15e9)
	}
	t.Fatal("still draining after 40 steps")
	return fleet.Retirement{}
}

// TestRetirerScalesInAGroupWithMinimumZero: a group whose minimum size is
// already 0 but still runs instances is scaled in all the same (its
// desired capacity set to 0: UpdateAutoScalingGroup, Auto Scaling API
// Reference); only a group at 0 of both is left without a call.
func TestRetirerScalesInAGroupWithMinimumZero(t *testing.T) {
	e := newEnv(t)
	name := e.serving(t, "r1", func(in *autoscaling.CreateAutoScalingGroupInput) { in.MinSize = aws.Int32(0) })
	r := &fleet.Retirer{API: e.c.AutoScaling, Owner: owner, Owns: ofRelease("r1")}
	ret := detached(t, e, r, name)
	assert.Equal(t, execution.PhaseScalingIn, ret.Groups[0].Phase)
	assert.Zero(t, aws.ToInt32(describe(t, e, name).DesiredCapacity))
}

// TestRetirerCallsOnlyWhatIsLeft: scaling in suspends RetireProcesses
// (nothing launches into the group again) with one call, and a step makes
// only the calls still needed, every call drawing on the account's one
// Auto Scaling request bucket (Amazon EC2 Auto Scaling API Reference,
// Welcome, API request rate). A group that has them all suspended already
// gets no SuspendProcesses call, since one naming no process suspends every
// process, Terminate included ("If you omit this property, all processes
// are specified", SuspendProcesses, Auto Scaling API Reference), and the
// group would never empty; a group at 0 already gets no
// UpdateAutoScalingGroup; a group without protected instances no
// SetInstanceProtection.
func TestRetirerCallsOnlyWhatIsLeft(t *testing.T) {
	e := newEnv(t)
	name := e.serving(t, "r1", nil)
	r := &fleet.Retirer{API: e.c.AutoScaling, Owner: owner, Owns: ofRelease("r1")}
	detached(t, e, r, name)
	var suspended []string
	for _, p := range describe(t, e, name).SuspendedProcesses {
		suspended = append(suspended, aws.ToString(p.ProcessName))
	}
	assert.ElementsMatch(t, fleet.RetireProcesses, suspended)
	calls := func() map[string]int {
		n := map[string]int{}
		for _, c := range e.world.CallLog() {
			n[c.Op]++
		}
		return n
	}
	before := calls()
	assert.Zero(t, before["SetInstanceProtection"], "no instance was protected")
	_, err := r.Step(e.ctx, []string{name})
	require.NoError(t, err)
	after := calls()
	for _, op := range []string{"SuspendProcesses", "UpdateAutoScalingGroup", "SetInstanceProtection"} {
		assert.Equal(t, before[op], after[op], "%s: nothing left to do, no call", op)
	}
}

// TestRetirerCountsProtection: a step reports the instances protected
// from scale-in that are not terminating (a protected instance is never
// terminated by a scale-in: "Use instance scale-in protection", Auto
// Scaling User Guide), and none for a group without protection.
func TestRetirerCountsProtection(t *testing.T) {
	for _, protected := range []bool{true, false} {
		e := newEnv(t)
		name := e.serving(t, "r1", func(in *autoscaling.CreateAutoScalingGroupInput) {
			in.NewInstancesProtectedFromScaleIn = aws.Bool(protected)
		})
		r := &fleet.Retirer{API: e.c.AutoScaling, Owner: owner, Owns: ofRelease("r1")}
		ret, err := r.Step(e.ctx, []string{name})
		require.NoError(t, err)
		require.Len(t, ret.Groups, 1)
		want := 0
		if protected {
			want = 2
		}
		assert.Equal(t, want, ret.Groups[0].Protected, "protected: %v", protected)
	}
}

// TestRetirerLeavesAnotherReleasesGroup: Step neither reports nor touches
// a group its Owns refuses (another release's, still serving).
func TestRetirerLeavesAnotherReleasesGroup(t *testing.T) {
	e := newEnv(t)
	name := e.serving(t, "r1", nil)
	r := &fleet.Retirer{API: e.c.AutoScaling, Owner: owner, Owns: ofRelease("r2")}
	ret, err := r.Step(e.ctx, []string{name})
	require.NoError(t, err)
	assert.True(t, ret.Ready)
	assert.Empty(t, ret.Groups)
	g := describe(t, e, name)
	assert.Len(t, g.LoadBalancerNames, 1, "still in its load balancer")
	assert.Equal(t, int32(2), aws.ToInt32(g.DesiredCapacity))
}

// TestRetirerFailures: a call of a scale-in that AWS refuses is an error
// naming the group and what it keeps (a CleanUpError), never a step
// reported done; a ValidationError (Auto Scaling's "not found") of a
// group just described is retryable (eventual consistency) until the last
// attempt.
func TestRetirerFailures(t *testing.T) {
	validation := &smithy.GenericAPIError{Code: cloud.CodeValidation, Message: "group not found", Fault: smithy.FaultClient}
	for _, tc := range []struct {
		name, op    string
		err         error
		last        bool
		protected   bool
		retryable   bool
		leftoverSay string
	}{
		{name: "suspend denied", op: "SuspendProcesses", err: sim.AccessDenied(), leftoverSay: "launches not suspended"},
		{name: "update denied", op: "UpdateAutoScalingGroup", err: sim.AccessDenied(), leftoverSay: "not scaled in (2 instances)"},
		{name: "protection denied", op: "SetInstanceProtection", err: sim.AccessDenied(), protected: true, leftoverSay: "2 instances protected from scale-in"},
		{name: "not visible yet", op: "UpdateAutoScalingGroup", err: validation, retryable: true},
		{name: "not found on the last attempt", op: "UpdateAutoScalingGroup", err: validation, last: true, leftoverSay: "not scaled in"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			name := e.serving(t, "r1", func(in *autoscaling.CreateAutoScalingGroupInput) {
				unattached(in)
				in.NewInstancesProtectedFromScaleIn = aws.Bool(tc.protected)
			})
			r := &fleet.Retirer{API: &attachments{AutoScaling: e.c.AutoScaling}, Owner: owner, Owns: ofRelease("r1"), LastAttempt: tc.last}
			_, err := e.world.Faults().Add(sim.Rule{Op: tc.op, Nth: 1, Err: tc.err})
			require.NoError(t, err)
			_, err = r.Step(e.ctx, []string{name})
			require.Error(t, err)
			assert.Equal(t, tc.retryable, failure.IsRetryable(err), "%v", err)
			if tc.retryable {
				return
			}
			var ce *failure.CleanUpError
			require.ErrorAs(t, err, &ce)
			require.Len(t, ce.Leftovers, 1)
			assert.Contains(t, ce.Leftovers[0], name+": ")
			assert.Contains(t, ce.Leftovers[0], tc.leftoverSay)
		})
	}
}

// TestRetirerResumesTerminate: a group whose Terminate process someone
// suspended would never lose an instance to the scale-in; the step resumes
// it (ResumeProcesses, Auto Scaling API Reference), and a refusal of that
// is an error naming it.
func TestRetirerResumesTerminate(t *testing.T) {
	for _, denied := range []bool{false, true} {
		e := newEnv(t)
		name := e.serving(t, "r1", unattached)
		_, err := e.c.AutoScaling.SuspendProcesses(e.ctx, &autoscaling.SuspendProcessesInput{AutoScalingGroupName: aws.String(name), ScalingProcesses: []string{"Terminate"}})
		require.NoError(t, err)
		if denied {
			_, err := e.world.Faults().Add(sim.Rule{Op: "ResumeProcesses", Nth: 1, Err: sim.AccessDenied()})
			require.NoError(t, err)
		}
		r := &fleet.Retirer{API: &attachments{AutoScaling: e.c.AutoScaling}, Owner: owner, Owns: ofRelease("r1")}
		_, err = r.Step(e.ctx, []string{name})
		if denied {
			require.Error(t, err)
			assert.Contains(t, err.Error(), "Terminate suspended")
			continue
		}
		require.NoError(t, err)
		for _, p := range describe(t, e, name).SuspendedProcesses {
			assert.NotEqual(t, "Terminate", aws.ToString(p.ProcessName))
		}
	}
}

// TestStanding: what keeps a group standing is said in full: draining,
// each count that is not zero, and the instances left when nothing else
// explains them.
func TestStanding(t *testing.T) {
	for _, tc := range []struct {
		g    fleet.GroupState
		want string
	}{
		{fleet.GroupState{RetiringGroup: execution.RetiringGroup{Name: "g", Phase: execution.PhaseDraining, Instances: 2}, InService: 2},
			"auto scaling group g (not deleted): still attached to or draining from its load balancers; 2 in service"},
		{fleet.GroupState{RetiringGroup: execution.RetiringGroup{Name: "g", Phase: execution.PhaseScalingIn, Instances: 1, HooksPending: 1}},
			"auto scaling group g (not deleted): 1 waiting on a termination hook (Terminating:Wait)"},
		{fleet.GroupState{RetiringGroup: execution.RetiringGroup{Name: "g", Phase: execution.PhaseScalingIn, Instances: 3}},
			"auto scaling group g (not deleted): 3 instances left"},
	} {
		assert.Equal(t, tc.want, fleet.Standing(tc.g))
	}
}

// deleting is Auto Scaling as the simulator answers it, except that every
// group it describes is being deleted: Status "Delete in progress", "the
// current state of the group when the DeleteAutoScalingGroup operation is
// in progress" (AutoScalingGroup, Auto Scaling API Reference).
type deleting struct{ cloud.AutoScaling }

func (d deleting) DescribeAutoScalingGroups(ctx context.Context, in *autoscaling.DescribeAutoScalingGroupsInput, opts ...func(*autoscaling.Options)) (*autoscaling.DescribeAutoScalingGroupsOutput, error) {
	out, err := d.AutoScaling.DescribeAutoScalingGroups(ctx, in, opts...)
	if err != nil {
		return nil, err
	}
	for i := range out.AutoScalingGroups {
		out.AutoScalingGroups[i].Status = aws.String("Delete in progress")
	}
	return out, nil
}

// TestRetirerLeavesAGroupBeingDeleted: a group already being deleted is
// neither reported nor touched (its deletion is under way: detaching or
// scaling it in would fail or race it), and the retirement is ready.
func TestRetirerLeavesAGroupBeingDeleted(t *testing.T) {
	e := newEnv(t)
	name := e.serving(t, "r1", nil)
	r := &fleet.Retirer{API: deleting{e.c.AutoScaling}, Owner: owner, Owns: ofRelease("r1")}
	ret, err := r.Step(e.ctx, []string{name})
	require.NoError(t, err)
	assert.True(t, ret.Ready)
	assert.Empty(t, ret.Groups)
	assert.Len(t, describe(t, e, name).LoadBalancerNames, 1, "left as it is")
}

// TestDetachedIn: a group is detached when the last report had it out of
// every load balancer (scaling in, or empty and deleting), not while
// draining; a name reported twice (one per region) only when both say so.
func TestDetachedIn(t *testing.T) {
	g := func(name, phase string) execution.RetiringGroup {
		return execution.RetiringGroup{Name: name, Phase: phase}
	}
	got := fleet.DetachedIn([]execution.RetiringGroup{
		g("draining", execution.PhaseDraining),
		g("scaling-in", execution.PhaseScalingIn),
		g("deleting", execution.PhaseDeleting),
		g("twice", execution.PhaseScalingIn), g("twice", execution.PhaseDraining),
		g("twice-done", execution.PhaseDeleting), g("twice-done", execution.PhaseScalingIn),
	})
	assert.Equal(t, map[string]bool{"draining": false, "scaling-in": true, "deleting": true, "twice": false, "twice-done": true}, got)
}

// TestDrainingIn: the kind of attachment draining a group is the last
// report's, joined over a name reported twice (one per region); a group
// draining with no kind reported (a report from before the kind was
// kept), or not draining, has none known: the next step asks for every
// kind.
func TestDrainingIn(t *testing.T) {
	g := func(name, phase, kind string) execution.RetiringGroup {
		return execution.RetiringGroup{Name: name, Phase: phase, Draining: kind}
	}
	got := fleet.DrainingIn([]execution.RetiringGroup{
		g("tg", execution.PhaseDraining, execution.AttachmentTargetGroups),
		g("elb", execution.PhaseDraining, execution.AttachmentClassic),
		g("unknown", execution.PhaseDraining, ""),
		g("scaling-in", execution.PhaseScalingIn, ""),
		g("twice", execution.PhaseDraining, execution.AttachmentClassic), g("twice", execution.PhaseDraining, execution.AttachmentTargetGroups),
		g("twice-unknown", execution.PhaseDraining, execution.AttachmentClassic), g("twice-unknown", execution.PhaseDraining, ""),
	})
	assert.Equal(t, map[string]string{"tg": execution.AttachmentTargetGroups, "elb": execution.AttachmentClassic, "twice": execution.AttachmentAll}, got)
}

// TestRetirerReadsOnlyWhatDrains: a retirement reads a group's
// attachments (Auto Scaling's DescribeLoadBalancers and
// DescribeLoadBalancerTargetGroups, on the account's one shared request
// bucket: Amazon EC2 Auto Scaling API Reference, API request rate) only
// where they can tell it something. Its first step detaches the group
// from what its description names (DescribeAutoScalingGroups lists
// LoadBalancerNames and TargetGroupARNs) without a read; the next reads
// both kinds (what drained it before the retirement is unknown); after
// that only the kind still draining it (Removing: its target group, for
// its deregistration delay; it has no classic load balancer), until it is
// out of both and scaled in.
func TestRetirerReadsOnlyWhatDrains(t *testing.T) {
	e := newEnv(t)
	name := e.serving(t, "r1", func(in *autoscaling.CreateAutoScalingGroupInput) { in.LoadBalancerNames = nil })
	r := &fleet.Retirer{API: e.c.AutoScaling, Owner: owner, Owns: ofRelease("r1")}
	reads := func() (elb, tg int) {
		for _, c := range e.world.CallLog() {
			switch {
			case c.Service == "Auto Scaling" && c.Op == "DescribeLoadBalancers":
				elb++
			case c.Op == "DescribeLoadBalancerTargetGroups":
				tg++
			}
		}
		return elb, tg
	}
	type step struct {
		elbReads, tgReads int
		phase, draining   string
	}
	var got []step
	var ret fleet.Retirement
	for range 40 {
		r.Detached, r.Draining = fleet.DetachedIn(ret.State()), fleet.DrainingIn(ret.State())
		elb0, tg0 := reads()
		var err error
		ret, err = r.Step(e.ctx, []string{name})
		require.NoError(t, err)
		require.Len(t, ret.Groups, 1)
		elb1, tg1 := reads()
		got = append(got, step{elb1 - elb0, tg1 - tg0, ret.Groups[0].Phase, ret.Groups[0].Draining})
		if ret.Groups[0].Phase != execution.PhaseDraining {
			break
		}
		e.clk.Advance(15e9)
	}
	require.GreaterOrEqual(t, len(got), 3, "%+v", got)
	assert.Equal(t, step{0, 0, execution.PhaseDraining, execution.AttachmentAll}, got[0], "detached from its description")
	assert.Equal(t, step{1, 1, execution.PhaseDraining, execution.AttachmentTargetGroups}, got[1], "both kinds read once")
	for _, s := range got[2 : len(got)-1] {
		assert.Equal(t, step{0, 1, execution.PhaseDraining, execution.AttachmentTargetGroups}, s, "only the target groups, still draining")
	}
	assert.Equal(t, step{0, 1, execution.PhaseScalingIn, ""}, got[len(got)-1], "scaled in once the target group let it go")
	assert.Zero(t, aws.ToInt32(describe(t, e, name).DesiredCapacity))
	assert.Zero(t, e.world.CutConnections())
}

// TestRetirerDetachRefused: a retirement step whose detach Auto Scaling
// refuses (DetachLoadBalancerTargetGroups or DetachLoadBalancers
// answering AccessDenied, Amazon EC2 Auto Scaling API Reference,
// "Common Errors") reports the failure and leaves the group attached and
// in service: never scaled in while a load balancer still routes to it.
func TestRetirerDetachRefused(t *testing.T) {
	for _, tc := range []struct {
		name, op string
		mutate   func(*autoscaling.CreateAutoScalingGroupInput)
	}{
		{"target groups", "DetachLoadBalancerTargetGroups", func(in *autoscaling.CreateAutoScalingGroupInput) { in.LoadBalancerNames = nil }},
		{"classic load balancers", "DetachLoadBalancers", func(in *autoscaling.CreateAutoScalingGroupInput) { in.TargetGroupARNs = nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			name := e.serving(t, "r1", tc.mutate)
			before := describe(t, e, name)
			_, err := e.world.Faults().Add(sim.Rule{Op: tc.op, Err: sim.AccessDenied()})
			require.NoError(t, err)
			r := &fleet.Retirer{API: e.c.AutoScaling, Owner: owner, Owns: ofRelease("r1")}
			_, err = r.Step(e.ctx, []string{name})
			require.Error(t, err, "a refused detach is the step's failure")
			after := describe(t, e, name)
			assert.Equal(t, before.LoadBalancerNames, after.LoadBalancerNames)
			assert.Equal(t, before.TargetGroupARNs, after.TargetGroupARNs)
			assert.Equal(t, aws.ToInt32(before.DesiredCapacity), aws.ToInt32(after.DesiredCapacity), "not scaled in")
		})
	}
}

// TestRetirerReattachedKeepsItsKind: a retiring group attached again
// from outside (AttachLoadBalancers, Amazon EC2 Auto Scaling API
// Reference) is detached again from what its description names, and the
// step still reports only the kind of attachment that drains it: a
// group with classic load balancers alone is never asked about target
// groups.
func TestRetirerReattachedKeepsItsKind(t *testing.T) {
	e := newEnv(t)
	name := e.serving(t, "r1", func(in *autoscaling.CreateAutoScalingGroupInput) { in.TargetGroupARNs = nil })
	elbs := describe(t, e, name).LoadBalancerNames
	require.NotEmpty(t, elbs)
	r := &fleet.Retirer{API: e.c.AutoScaling, Owner: owner, Owns: ofRelease("r1")}
	step := func() fleet.GroupState {
		t.Helper()
		ret, err := r.Step(e.ctx, []string{name})
		require.NoError(t, err)
		require.Len(t, ret.Groups, 1)
		r.Detached, r.Draining = fleet.DetachedIn(ret.State()), fleet.DrainingIn(ret.State())
		return ret.Groups[0]
	}
	step()
	e.clk.Advance(1e9)
	require.Equal(t, execution.AttachmentClassic, step().Draining, "its classic load balancers drain it")
	_, err := e.c.AutoScaling.AttachLoadBalancers(e.ctx, &autoscaling.AttachLoadBalancersInput{AutoScalingGroupName: aws.String(name), LoadBalancerNames: elbs})
	require.NoError(t, err)
	got := step()
	assert.Equal(t, execution.PhaseDraining, got.Phase)
	assert.Equal(t, execution.AttachmentClassic, got.Draining, "attached again, to classic load balancers only")
	assert.Empty(t, describe(t, e, name).LoadBalancerNames, "detached again")
}

// trafficSources is Auto Scaling as attachments answers it, except that
// DescribeAutoScalingGroups lists sources in each group's TrafficSources:
// what a group attached through AttachTrafficSources shows (Amazon EC2
// Auto Scaling API Reference, AttachTrafficSources, AutoScalingGroup),
// which the simulator does not model.
type trafficSources struct {
	*attachments
	sources []astypes.TrafficSourceIdentifier
}

func (s trafficSources) DescribeAutoScalingGroups(ctx context.Context, in *autoscaling.DescribeAutoScalingGroupsInput, opts ...func(*autoscaling.Options)) (*autoscaling.DescribeAutoScalingGroupsOutput, error) {
	out, err := s.attachments.DescribeAutoScalingGroups(ctx, in, opts...)
	if err != nil {
		return nil, err
	}
	for i := range out.AutoScalingGroups {
		out.AutoScalingGroups[i].TrafficSources = s.sources
	}
	return out, nil
}

// TestRetirerDetachesATrafficSource: a retiring group out of its load
// balancers already (Detached) whose description names neither a
// classic load balancer nor a target group, but a traffic source
// (attached again through AttachTrafficSources, which "does not detach
// existing traffic sources", Amazon EC2 Auto Scaling API Reference), is
// asked again for its attachments, and the target group still attached
// (DescribeLoadBalancerTargetGroups: the original API and
// AttachTrafficSources can be used "on the same Auto Scaling group") is
// detached and drains it; it is not scaled in while that target group
// routes to it.
func TestRetirerDetachesATrafficSource(t *testing.T) {
	e := newEnv(t)
	name := e.serving(t, "r1", unattached)
	api := trafficSources{
		attachments: &attachments{AutoScaling: e.c.AutoScaling, tg: "InService"},
		sources:     []astypes.TrafficSourceIdentifier{{Identifier: aws.String(webTargetGroupARN), Type: aws.String("elbv2")}},
	}
	r := &fleet.Retirer{API: api, Owner: owner, Owns: ofRelease("r1"), Detached: map[string]bool{name: true}}
	ret, err := r.Step(e.ctx, []string{name})
	require.NoError(t, err)
	require.Len(t, ret.Groups, 1)
	assert.Equal(t, execution.PhaseDraining, ret.Groups[0].Phase)
	assert.Equal(t, execution.AttachmentTargetGroups, ret.Groups[0].Draining)
	detaches := 0
	for _, c := range e.world.CallLog() {
		if c.Op == "DetachLoadBalancerTargetGroups" {
			detaches++
		}
	}
	assert.Equal(t, 1, detaches, "detached from the target group")
	assert.Equal(t, int32(2), aws.ToInt32(describe(t, e, name).DesiredCapacity), "not scaled in while attached")
}

// TestRetirerAsksOneDrainingGroupAStep: groups taken out of their load
// balancers in one step drain together (a target group's deregistration
// delay, a classic load balancer's connection draining: "Removing" while
// the instances deregister, DescribeLoadBalancerTargetGroups and
// DescribeLoadBalancers, Auto Scaling API Reference). While the first
// group asked still drains, a step asks for no other group's
// attachments and reports every one draining; none is scaled in while
// it drains, nothing is cut, and once the first is out, the step asks
// for the others and scales in each that is out too. The step after one
// that left groups unasked starts at the first of them (Next), so the
// draining groups are asked in turn: none waits on another's longer
// drain for more than a step per group.
func TestRetirerAsksOneDrainingGroupAStep(t *testing.T) {
	e := newEnv(t)
	var names []string
	for _, id := range []string{"r1", "r2", "r3"} {
		names = append(names, e.serving(t, id, nil))
	}
	r := &fleet.Retirer{API: e.c.AutoScaling, Owner: owner, Owns: func(map[string]string) bool { return true }}
	asked := func() int {
		n := 0
		for _, c := range e.world.CallLog() {
			if c.Service == "Auto Scaling" && (c.Op == "DescribeLoadBalancers" || c.Op == "DescribeLoadBalancerTargetGroups") {
				n++
			}
		}
		return n
	}
	var ret fleet.Retirement
	var perStep []int
	var nexts []string // the group each step asks first next: the draining groups in turn
	for steps := 0; ; steps++ {
		require.Less(t, steps, 40)
		r.Detached, r.Draining, r.From = fleet.DetachedIn(ret.State()), fleet.DrainingIn(ret.State()), ret.Next
		e.world.ResetCalls()
		var err error
		ret, err = r.Step(e.ctx, names)
		require.NoError(t, err)
		require.Len(t, ret.Groups, 3)
		perStep = append(perStep, asked())
		if steps > 0 && ret.Next != "" {
			nexts = append(nexts, ret.Next)
		}
		phases := map[string]int{}
		for _, g := range ret.Groups {
			phases[g.Phase]++
		}
		if phases[execution.PhaseDraining] < 3 {
			assert.Equal(t, map[string]int{execution.PhaseScalingIn: 3}, phases, "the others drained with the first: scaled in in the same step")
			assert.Equal(t, 6, perStep[len(perStep)-1], "every group asked for both kinds once the first is out")
			break
		}
		for _, name := range names {
			assert.Equal(t, int32(2), aws.ToInt32(describe(t, e, name).DesiredCapacity), "not scaled in while draining")
		}
		e.clk.Advance(5e9) // steps closer than the drain: several while it lasts
	}
	require.GreaterOrEqual(t, len(perStep), 4, "%v", perStep)
	assert.Zero(t, perStep[0], "the first step detaches from the groups' descriptions")
	require.GreaterOrEqual(t, len(nexts), 2, "%v", nexts)
	for i, next := range nexts {
		assert.Equal(t, names[(i+1)%len(names)], next, "the draining groups asked in turn: %v", nexts)
	}
	for _, n := range perStep[1 : len(perStep)-1] {
		assert.Equal(t, 2, n, "one group asked (both kinds) while it drains: %v", perStep)
	}
	assert.Zero(t, e.world.CutConnections())
}

// TestRetirerHeadless: a group described without its instances
// (IncludeInstances false, DescribeAutoScalingGroups, Auto Scaling API
// Reference) shows none whether it has any or not. A Headless step takes
// it as far as its scale-in and never reports it empty: a retirement is
// Ready only once a step saw its instances. Its instances are reported
// as the last report had them (else its desired capacity), and a
// protected instance, which takes its name to unprotect, is unprotected
// by the step that sees it.
func TestRetirerHeadless(t *testing.T) {
	e := newEnv(t)
	name := e.serving(t, "r1", func(in *autoscaling.CreateAutoScalingGroupInput) {
		unattached(in)
		in.NewInstancesProtectedFromScaleIn = aws.Bool(true)
	})
	headless := &fleet.Retirer{API: e.c.AutoScaling, Owner: owner, Owns: ofRelease("r1"), Headless: true}
	ret, err := headless.Step(e.ctx, []string{name})
	require.NoError(t, err)
	require.Len(t, ret.Groups, 1)
	assert.Equal(t, execution.PhaseScalingIn, ret.Groups[0].Phase, "out of its load balancers: scaled in")
	assert.Equal(t, 2, ret.Groups[0].Instances, "its desired capacity, no report before")
	assert.False(t, ret.Ready)
	g := describe(t, e, name)
	assert.Zero(t, aws.ToInt32(g.DesiredCapacity), "scaled in")
	require.Len(t, g.Instances, 2)
	assert.True(t, aws.ToBool(g.Instances[0].ProtectedFromScaleIn), "not unprotected: its instances unseen")

	headless.Detached, headless.Reported = map[string]bool{name: true}, ret.State()
	headless.Reported[0].Instances = 7
	for range 10 {
		ret, err = headless.Step(e.ctx, []string{name})
		require.NoError(t, err)
		assert.Equal(t, execution.PhaseScalingIn, ret.Groups[0].Phase, "never empty, unseen")
		assert.Equal(t, 7, ret.Groups[0].Instances, "as the last report had them")
		assert.False(t, ret.Ready)
		e.clk.Advance(15e9)
	}

	whole := &fleet.Retirer{API: e.c.AutoScaling, Owner: owner, Owns: ofRelease("r1"), Detached: map[string]bool{name: true}}
	for range 40 {
		if ret, err = whole.Step(e.ctx, []string{name}); err != nil || ret.Ready {
			break
		}
		e.clk.Advance(15e9)
	}
	require.NoError(t, err)
	assert.True(t, ret.Ready, "seen empty once its instances, unprotected, terminated: %+v", ret.Groups)
}
