package deployer

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
)

// withErrors is the harness's world with an image "ubuntu-errors" whose
// instances answer percent of their requests with a 5xx once they serve.
func withErrors(percent float64) func(*sim.WorldSpec) {
	return func(w *sim.WorldSpec) {
		r := &w.Accounts[0].Regions[0]
		r.AMIs = append(r.AMIs, sim.AMISpec{ID: "ami-00000000000e0e01", Name: "ubuntu-errors",
			Tags: map[string]string{"Name": "ubuntu-errors", "DeployWith": "ferry"}, ErrorPercent: percent})
	}
}

// TestErrorRateGate: a service whose load balancers answer more of their
// requests with a 5xx than its max_error_rate halts the release before
// the point of no return, counted from the load balancers' own metrics
// (the previous fleet's requests, without errors, count too); one within
// it succeeds.
func TestErrorRateGate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		percent float64
		halts   bool
	}{
		{"a build that errors halts", 40, true},
		{"errors within the limit pass", 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, withErrors(tc.percent))
			r1 := h.baseRelease()
			h.start(r1).succeed()
			r2 := h.baseRelease()
			r2.AMI = "ubuntu-errors"
			limit := 0.05
			r2.Services["web"].MaxErrorRate = &limit
			x := h.start(r2)
			require.NoError(t, x.steps(upToDeploy...))
			_, err := x.untilHealthy(300)
			if !tc.halts {
				require.NoError(t, err)
				require.NoError(t, x.stepRetrying(execution.TaskBake))
				require.NoError(t, x.stepRetrying(execution.TaskCleanUpSuccess))
				return
			}
			var halted *failure.HaltError
			require.ErrorAs(t, err, &halted)
			assert.Regexp(t, `^service web: its load balancers answered [0-9.]+% of [0-9]+ requests with a 5xx in the last 2m0s, more than its max_error_rate of 5%$`, halted.Reason)
			require.NoError(t, x.fail(err))
			old := h.groups()[naming.GroupName(project, config, "web", r1.ReleaseID)]
			attached, _ := serving(old)
			assert.True(t, attached, "the previous fleet serves on")
			assert.Zero(t, h.world.CutConnections())
		})
	}
}

// TestErrorRateRollsBackTheBake: during the bake only the new fleet
// serves, so its own 5xx are the whole rate: above max_error_rate rolls
// back.
func TestErrorRateRollsBackTheBake(t *testing.T) {
	// 30% of the new fleet's requests: about 18% of the mixed fleet's
	// while it is judged, 30% alone.
	h := newHarness(t, withErrors(30))
	r1 := h.baseRelease()
	r2 := h.baseRelease()
	r2.AMI = "ubuntu-errors"
	r2.BakeSeconds = 600
	limit := 0.2
	r2.Services["web"].MaxErrorRate = &limit
	x := h.atSwap(r1, r2)
	err := x.step(execution.TaskBake)
	var halted *failure.HaltError
	require.ErrorAs(t, err, &halted)
	assert.Contains(t, halted.Reason, "more than its max_error_rate of 20%")
	require.NoError(t, x.fail(err))
	assert.Equal(t, []string{naming.GroupName(project, config, "web", r1.ReleaseID)}, x.state.RolledBack)
	assert.Zero(t, h.world.CutConnections())
}
