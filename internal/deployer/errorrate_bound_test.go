package deployer

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/naming"
)

// TestErrorRateAtItsMaxPasses: max_error_rate is the most a service may
// answer with a 5xx: during a bake only the new fleet serves, each of its
// instances answering exactly half of its requests with a 5xx, so the
// rate is exactly 50%; a max_error_rate of 0.5 lets the bake and the swap
// through (a rate above the max halts: TestErrorRateRollsBackTheBake).
func TestErrorRateAtItsMaxPasses(t *testing.T) {
	h := newHarness(t, withErrors(50))
	r1, r2 := h.baseRelease(), h.baseRelease()
	r2.AMI = "ubuntu-errors"
	r2.BakeSeconds = 600
	limit := 0.5
	r2.Services["web"].MaxErrorRate = &limit
	x := h.atSwap(r1, r2)
	require.NoError(t, x.step(execution.TaskBake), "a rate of exactly max_error_rate passes")
	require.NoError(t, x.step(execution.TaskCleanUpSuccess))
	assert.True(t, x.state.Retire.Done)
	assert.Equal(t, "Delete in progress", h.groups()[naming.GroupName(project, config, "web", r1.ReleaseID)].Status, "the previous group is retired")
}
