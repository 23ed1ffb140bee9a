package deployer

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/naming"
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
