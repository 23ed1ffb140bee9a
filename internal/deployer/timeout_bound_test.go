package deployer

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
)

// TestTimeoutBoundary: a release's timeout is how long its health checks
// may run from the execution's start: a check at exactly the timeout
// still judges the release; the first after it times out, saying how
// long it ran.
func TestTimeoutBoundary(t *testing.T) {
	h := newHarness(t)
	r := h.baseRelease()
	r.AMI = "ubuntu-broken"
	r.Timeout = 180
	x := h.start(r)
	require.NoError(t, x.steps(upToDeploy...))
	h.clk.Advance(x.ctx.StartTime.Add(180 * time.Second).Sub(h.clk.Now()))
	require.NoError(t, x.step(execution.TaskCheckHealthy), "at exactly the timeout")
	assert.False(t, x.state.Health.Healthy)
	h.clk.Advance(time.Second)
	err := x.step(execution.TaskCheckHealthy)
	var te *failure.TimeoutError
	require.ErrorAs(t, err, &te, "a second past the timeout")
	assert.Equal(t, 180*time.Second, te.Timeout)
	assert.Equal(t, 181*time.Second, te.Elapsed)
}
