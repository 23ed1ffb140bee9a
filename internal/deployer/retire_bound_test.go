package deployer

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/tuning"
)

// TestSwapGivesUpAtItsBound: the previous group's termination hook holds
// its instances (a 7200 s heartbeat nobody completes, as in
// TestSwapPastItsBoundEndsDirty): every step of the retirement before
// tuning.RetireTimeout from the point of no return waits; the first at
// or past it ends FailureDirty, and no later than its last wait allowed.
func TestSwapGivesUpAtItsBound(t *testing.T) {
	h := newHarness(t)
	r1 := h.baseRelease()
	withTerminationHook(r1, 7200)
	r2 := h.baseRelease()
	x := h.atSwap(r1, r2)
	var since time.Time
	var prev time.Duration
	for steps := 1; ; steps++ {
		require.LessOrEqual(t, steps, limits.MaxRetireSteps, "the retirement never gave up")
		err := x.once(execution.TaskCleanUpSuccess)
		if since.IsZero() {
			plan, found, gerr := h.ledger.GetDeleting(t.Context(), project, config, r2.ReleaseID)
			require.NoError(t, gerr)
			require.True(t, found, "past the point of no return")
			since = plan.Since
		}
		elapsed := h.clk.Now().Sub(since)
		if err != nil {
			var ce *failure.CleanUpError
			require.ErrorAs(t, err, &ce)
			assert.GreaterOrEqual(t, elapsed, tuning.RetireTimeout, "not before its bound")
			assert.Less(t, prev, tuning.RetireTimeout, "the step before was within its bound")
			assert.LessOrEqual(t, elapsed, tuning.RetireTimeout+36*time.Second, "at its first step past its bound (30 s, jittered by a fifth)")
			assert.Contains(t, strings.Join(ce.Leftovers, "\n"), "auto scaling group "+naming.GroupName(project, config, "web", r1.ReleaseID)+" (not deleted)")
			break
		}
		require.False(t, x.state.Retire.Done, "the group cannot go: its hook holds it")
		assert.Less(t, elapsed, tuning.RetireTimeout, "a step at %s past its bound waited", elapsed)
		prev = elapsed
		h.clk.Advance(time.Duration(x.state.Retire.WaitSeconds) * time.Second)
	}
	o, found, err := h.ledger.GetOutcome(t.Context(), project, config, r2.ReleaseID)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, execution.EndFailureDirty, o.End)
}

// TestSwapWaitsForATerminationHook: the previous group's termination hook
// holds each instance for its heartbeat timeout, an hour, and nobody
// completes it: AWS then takes the hook's default result and the
// instance terminates ("Amazon EC2 Auto Scaling lifecycle hooks", Auto
// Scaling User Guide: the instance remains in a wait state until the
// heartbeat timeout elapses). The swap waits those hooks out, well
// within tuning.RetireTimeout (a hook's timeout is at most 7200 s), and
// ends Success with the previous group deleted, not FailureDirty.
func TestSwapWaitsForATerminationHook(t *testing.T) {
	h := newHarness(t)
	r1 := h.baseRelease()
	withTerminationHook(r1, 3600)
	r2 := h.baseRelease()
	x := h.atSwap(r1, r2)
	old := naming.GroupName(project, config, "web", r1.ReleaseID)
	start := h.clk.Now()
	require.NoError(t, x.step(execution.TaskCleanUpSuccess), "the hooks ended by themselves: nothing is stuck")
	assert.GreaterOrEqual(t, h.clk.Now().Sub(start), time.Hour, "it waited for the hooks' heartbeat timeout")
	assert.Equal(t, "Delete in progress", h.groups()[old].Status, "the previous group is deleted once its hooks let its instances go")
	h.deletedEmpty()
	o, found, err := h.ledger.GetOutcome(t.Context(), project, config, r2.ReleaseID)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, execution.EndSuccess, o.End)
	assert.Zero(t, h.world.CutConnections())
}
