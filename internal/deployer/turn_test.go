package deployer

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/local/s3server/s3test"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/tuning"
)

// TestStartTakesItsTurn: deploys to one account and region share its
// request buckets (Auto Scaling's one bucket above all: Amazon EC2 Auto
// Scaling API Reference, Welcome, API request rate), so ValidateResources'
// first round, before any call to AWS, takes the deploy's turn among
// those that started with it (their start markers, S3's strongly
// consistent LIST): a lone deploy checks its resources at once; the
// k-th of deploys that started together reports a wait of k turns
// (tuning.StartEvery each), makes no call, and checks them when it runs
// again; a deploy to another target is no one's turn.
func TestStartTakesItsTurn(t *testing.T) {
	tests := []struct {
		name    string
		ahead   int
		account string
		// sameID: the deploys ahead are other projects' releases of
		// the same id.
		sameID bool
	}{
		{"a lone deploy", 0, account, false},
		{"the second", 1, account, false},
		{"the fourth", 3, account, false},
		{"the eleventh", 10, account, false},
		{"the third, after other projects' releases of its id", 2, account, true},
		{"ten to another account", 10, "222222222222", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			r := h.baseRelease()
			x := h.start(r)
			require.NoError(t, x.steps(execution.TaskValidate, execution.TaskLock))
			for i := range tt.ahead {
				other := naming.ExecutionName(fmt.Sprintf("other/p%02d", i), config, fmt.Sprintf("other-%02d", i))
				if tt.sameID {
					other = naming.ExecutionName(fmt.Sprintf("other/p%02d", i), config, r.ReleaseID)
				}
				s3test.Put(t, h.s3, bucket, naming.StartKey(tt.account, region, naming.StartStamp(x.ctx.StartTime), other), "")
			}
			calls := h.world.TotalCalls()
			require.NoError(t, x.once(execution.TaskValidateResources))
			if tt.ahead == 0 || tt.account != account {
				assert.True(t, x.state.Resources.Done, "no wait: checked at once")
				assert.Zero(t, x.state.Resources.WaitSeconds)
				return
			}
			want := int(math.Ceil((time.Duration(tt.ahead) * tuning.StartEvery).Seconds()))
			assert.Equal(t, &execution.Progress{WaitSeconds: want}, x.state.Resources)
			assert.Equal(t, calls, h.world.TotalCalls(), "no call to AWS before its turn")

			h.clk.Advance(time.Duration(want) * time.Second)
			require.NoError(t, x.once(execution.TaskValidateResources))
			assert.True(t, x.state.Resources.Done, "checked when it runs again, not queued again")
			require.NoError(t, x.steps(execution.TaskPublish, execution.TaskDeploy))
			_, err := x.untilHealthy(100)
			require.NoError(t, err)
		})
	}
}
