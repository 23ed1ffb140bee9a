package deployer

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/fleet"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/target"
)

// TestSwapRetiresGracefully: the swap takes the previous group out of its
// load balancers, waits for them to drain it, scales it to zero, waits
// until it is empty and only then deletes it; the client sees each phase;
// and no load balancer or target group counts a cut connection.
func TestSwapRetiresGracefully(t *testing.T) {
	h := newHarness(t)
	r1 := h.baseRelease()
	r2 := h.baseRelease()
	r2.ReleaseID = "r2-130240"
	x := h.atSwap(r1, r2)
	old := naming.GroupName(project, config, "web", r1.ReleaseID)
	h.world.ResetCalls()

	var phases []string
	for steps := 0; ; steps++ {
		require.NoError(t, x.once(execution.TaskCleanUpSuccess))
		require.NotNil(t, x.state.Retire)
		if x.state.Retire.Done {
			break
		}
		require.Len(t, x.state.Retire.Groups, 1)
		assert.Equal(t, old, x.state.Retire.Groups[0].Name)
		if p := x.state.Retire.Groups[0].Phase; len(phases) == 0 || phases[len(phases)-1] != p {
			phases = append(phases, p)
		}
		require.Less(t, steps, 100)
		h.clk.Advance(15e9)
	}
	assert.Equal(t, []string{execution.PhaseDraining, execution.PhaseScalingIn}, phases)

	var ops []string
	for _, c := range h.world.CallLog() {
		if slices.Contains([]string{"DetachLoadBalancers", "DetachLoadBalancerTargetGroups", "UpdateAutoScalingGroup", "DeleteAutoScalingGroup"}, c.Op) {
			if len(ops) == 0 || ops[len(ops)-1] != c.Op {
				ops = append(ops, c.Op)
			}
		}
	}
	assert.Equal(t, []string{"DetachLoadBalancers", "DetachLoadBalancerTargetGroups", "UpdateAutoScalingGroup", "DeleteAutoScalingGroup", "UpdateAutoScalingGroup"}, ops,
		"detach, scale to zero, delete when empty, then settle the new group")
	assert.Equal(t, "Delete in progress", h.groups()[old].Status, "the previous group is being deleted")
	assert.Empty(t, h.groups()[old].Instances, "deleted empty")
	assert.Zero(t, h.world.CutConnections(), "no request cut")
}

// TestSwapStepsReadLittle: the steps of a swap's retirement draw little
// on the account's one shared Auto Scaling request bucket (Amazon EC2
// Auto Scaling API Reference, Welcome, API request rate: "throttles API
// requests based on a shared API bucket"). The first step detaches the
// previous group from the load balancers its description names
// (DescribeAutoScalingGroups lists LoadBalancerNames and TargetGroupARNs)
// without reading its attachments; the next reads both kinds once (what
// drained it before is unknown), then only the kind still draining it;
// once it is out of them no step reads them again; and every step
// describes the previous groups once, the re-check and the step sharing
// the description.
func TestSwapStepsReadLittle(t *testing.T) {
	h := newHarness(t)
	r1, r2 := h.baseRelease(), h.baseRelease()
	x := h.atSwap(r1, r2)
	type step struct {
		phase, draining   string
		describes         int
		elbReads, tgReads int
	}
	var got []step
	for steps := 0; ; steps++ {
		h.world.ResetCalls()
		require.NoError(t, x.once(execution.TaskCleanUpSuccess))
		if x.state.Retire.Done {
			break
		}
		s := step{phase: x.state.Retire.Groups[0].Phase, draining: x.state.Retire.Groups[0].Draining}
		for _, c := range h.world.CallLog() {
			switch {
			case c.Op == "DescribeAutoScalingGroups":
				s.describes++
			case c.Service == "Auto Scaling" && c.Op == "DescribeLoadBalancers":
				s.elbReads++
			case c.Op == "DescribeLoadBalancerTargetGroups":
				s.tgReads++
			}
		}
		got = append(got, s)
		require.Less(t, steps, 100)
		h.clk.Advance(time.Duration(x.state.Retire.WaitSeconds) * time.Second)
	}
	require.GreaterOrEqual(t, len(got), 3, "%+v", got)
	assert.Zero(t, got[0].elbReads+got[0].tgReads, "the first step detaches from the group's description: %+v", got[0])
	assert.Equal(t, 1, got[1].elbReads, "the second reads each kind once: %+v", got[1])
	scalingIn := 0
	for i := 2; i < len(got); i++ {
		prev, s := got[i-1], got[i]
		switch prev.phase {
		case execution.PhaseDraining:
			assert.Equal(t, prev.draining != execution.AttachmentTargetGroups, s.elbReads == 1, "classic load balancers read only while they drain it: %+v after %+v", s, prev)
			assert.Equal(t, prev.draining != execution.AttachmentClassic, s.tgReads == 1, "target groups read only while they drain it: %+v after %+v", s, prev)
		case execution.PhaseScalingIn:
			scalingIn++
			assert.Zero(t, s.elbReads+s.tgReads, "no read once detached: %+v", s)
			assert.Equal(t, 1, s.describes, "one describe of the previous groups a step: %+v", s)
		}
	}
	assert.Positive(t, scalingIn, "%+v", got)
	assert.Zero(t, h.world.CutConnections())
}

// TestSwapStepsDecodeOneFleet: no step of a swap decodes the instances
// of both the previous and the new fleet. DescribeAutoScalingGroups
// decodes a group's every instance unless IncludeInstances is false
// (Amazon EC2 Auto Scaling API Reference, DescribeAutoScalingGroups);
// at 50 services of 100 instances both fleets are 10,500 instances, 1.4
// s at a 512 MB Lambda's share of a CPU. The gate and the steps while a
// previous group drains describe the previous groups without their
// instances and the new ones with theirs (the gate and the re-check judge
// them); once every previous group is scaled in, the previous ones with
// theirs (the retirer sees them empty) and the new ones without, but for
// the settle, which describes them after the previous are gone. A step
// makes two describes at most, and the gate's judgement stands for the
// first step's re-check: it reads each load balancer's health once.
func TestSwapStepsDecodeOneFleet(t *testing.T) {
	h := newHarness(t)
	x := h.atSwap(h.baseRelease(), h.baseRelease())
	count := &decoded{}
	h.d.connector = countingConnector{next: h.d.connector, decoded: count}
	var saw []string
	for steps := 0; ; steps++ {
		h.world.ResetCalls()
		*count = decoded{}
		require.NoError(t, x.once(execution.TaskCleanUpSuccess))
		calls := h.world.Calls()
		assert.LessOrEqual(t, calls["DescribeAutoScalingGroups"], 2, "step %d: %v", steps, calls)
		if steps == 0 {
			assert.Equal(t, 1, calls["DescribeTargetHealth"], "the gate's read only: %v", calls)
			assert.Equal(t, 1, calls["DescribeInstanceHealth"], "the gate's read only: %v", calls)
		}
		assert.LessOrEqual(t, len(count.fleets), 1, "step %d decodes the instances of %v", steps, count.fleets)
		saw = append(saw, count.fleets...)
		if x.state.Retire.Done {
			break
		}
		require.Less(t, steps, 100)
		h.clk.Advance(time.Duration(x.state.Retire.WaitSeconds) * time.Second)
	}
	assert.Contains(t, saw, "new", "the steps draining judge the new groups")
	assert.Contains(t, saw, "previous", "the steps scaling in see the previous groups' instances")
}

// decoded are the fleets whose instances a step's
// DescribeAutoScalingGroups calls decoded: "new" for the new release's
// groups, "previous" for another release's, once each.
type decoded struct{ fleets []string }

// countingConnector connects as next does, its Auto Scaling client
// noting in decoded whose instances each describe decodes.
type countingConnector struct {
	next    Connector
	decoded *decoded
}

func (c countingConnector) Connect(ctx context.Context, t target.Target, s cloud.Session) (*cloud.Clients, error) {
	clients, err := c.next.Connect(ctx, t, s)
	if err != nil {
		return nil, err
	}
	out := *clients
	out.AutoScaling = countingAutoScaling{AutoScaling: clients.AutoScaling, decoded: c.decoded, release: s.ReleaseID}
	return &out, nil
}

type countingAutoScaling struct {
	cloud.AutoScaling
	decoded *decoded
	release string
}

func (a countingAutoScaling) DescribeAutoScalingGroups(ctx context.Context, in *autoscaling.DescribeAutoScalingGroupsInput, optFns ...func(*autoscaling.Options)) (*autoscaling.DescribeAutoScalingGroupsOutput, error) {
	out, err := a.AutoScaling.DescribeAutoScalingGroups(ctx, in, optFns...)
	if err != nil || !aws.ToBool(in.IncludeInstances) {
		return out, err
	}
	for _, g := range out.AutoScalingGroups {
		whose := "previous"
		if fleet.ReleaseOf(g) == a.release {
			whose = "new"
		}
		if len(g.Instances) > 0 && !slices.Contains(a.decoded.fleets, whose) {
			a.decoded.fleets = append(a.decoded.fleets, whose)
		}
	}
	return out, nil
}

// TestNotReadyCarriesTheNextGroup: a step that left draining groups
// unasked (fleet.Retirement.Next) reports where the next starts
// (Retire.From, which resumeRetirer hands the next step's Retirer), so
// the draining groups are asked in turn, not the same one every step.
func TestNotReadyCarriesTheNextGroup(t *testing.T) {
	ret := fleet.Retirement{Next: "g2", Groups: []fleet.GroupState{
		{RetiringGroup: execution.RetiringGroup{Name: "g1", Phase: execution.PhaseDraining}},
		{RetiringGroup: execution.RetiringGroup{Name: "g2", Phase: execution.PhaseDraining}},
	}}
	w, err := notReady(ret, time.Minute, 15)
	require.NoError(t, err)
	assert.Equal(t, "g2", w.From)
	st := &execution.State{Retire: w}
	r := &fleet.Retirer{}
	resumeRetirer(r, st)
	assert.Equal(t, "g2", r.From)
}
