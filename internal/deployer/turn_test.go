package deployer

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/local/s3server/s3test"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/store/lock"
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

// TestStartAnnouncedInItsTurn: Release Started is a deploy's first event
// (internal/events), put once, before anything in the target changes, in
// the deploy's turn to start there: a burst of deploys to one target
// puts its starts spread as its first calls are (EventBridge's PutEvents
// quota is the account's, EventBridge User Guide, "Amazon EventBridge
// quotas"), not all in Validate's second. Validate puts nothing for a
// release it accepts; ValidateResources puts it in the round that checks
// the resources, not in the round that reports the wait for its turn,
// nor again in a round after AWS throttled it; an end recorded before
// (a lock held by another, resources refused) puts it first, in the
// same PutEvents request as Release Failed.
func TestStartAnnouncedInItsTurn(t *testing.T) {
	tests := []struct {
		name string
		// ahead are the deploys to the target that started before.
		ahead int
		// throttled: AWS throttles ValidateResources' first calls.
		throttled bool
		// held: another release holds the lock; bad: the release names
		// a subnet the target lacks.
		held, bad bool
		want      []string
		puts      int
	}{
		{name: "a lone deploy", want: []string{"Release Started ValidateResources"}, puts: 1},
		{name: "the third of a burst", ahead: 2, want: []string{"Release Started ValidateResources"}, puts: 1},
		{name: "throttled", throttled: true, want: []string{"Release Started ValidateResources"}, puts: 1},
		{name: "the lock held by another", held: true, want: []string{"Release Started Lock", "Release Failed Lock"}, puts: 1},
		{name: "resources refused", bad: true, want: []string{"Release Started ReleaseLock", "Release Failed ReleaseLock"}, puts: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			r := h.baseRelease()
			if tt.bad {
				r.Services["web"].SecurityGroups = []string{"ec2::coinbase/deploy-test::no-such-group"}
			}
			if tt.held {
				require.NoError(t, h.locks.Acquire(t.Context(), project, config, lock.Holder{ReleaseID: "r-other", Execution: "arn:other"}))
			}
			x := h.start(r)
			announced := func() []string {
				var out []string
				for _, ev := range h.world.BusEvents() {
					var d struct {
						ExecutionARN string `json:"execution_arn"`
						Task         string `json:"task"`
					}
					require.NoError(t, json.Unmarshal(ev.Detail, &d))
					if d.ExecutionARN == x.ctx.ID {
						out = append(out, ev.DetailType+" "+d.Task)
					}
				}
				return out
			}
			require.NoError(t, x.steps(execution.TaskValidate))
			assert.Empty(t, announced(), "Validate announces no start")
			assert.True(t, x.state.StartUnannounced)
			if tt.held {
				require.Error(t, x.once(execution.TaskLock))
				assert.Equal(t, tt.want, announced())
				assert.Equal(t, tt.puts, h.world.Calls()["PutEvents"])
				return
			}
			require.NoError(t, x.steps(execution.TaskLock))
			for i := range tt.ahead {
				other := naming.ExecutionName(fmt.Sprintf("other/p%02d", i), config, fmt.Sprintf("other-%02d", i))
				s3test.Put(t, h.s3, bucket, naming.StartKey(account, region, naming.StartStamp(x.ctx.StartTime), other), "")
			}
			if tt.throttled {
				_, err := h.world.Faults().Add(sim.Rule{Op: "DescribeAutoScalingGroups", Times: 2, Err: sim.Throttling()})
				require.NoError(t, err)
			}
			if tt.ahead > 0 {
				require.NoError(t, x.once(execution.TaskValidateResources))
				require.NotZero(t, x.state.Resources.WaitSeconds)
				assert.Empty(t, announced(), "no start announced before its turn")
				h.clk.Advance(time.Duration(x.state.Resources.WaitSeconds) * time.Second)
			}
			if tt.bad {
				err := x.once(execution.TaskValidateResources)
				require.Error(t, err)
				assert.Empty(t, announced(), "the refused round announces nothing")
				x.state.Error = &execution.Error{Error: failure.NameOf(err), Cause: failure.Cause(err)}
				require.NoError(t, x.stepRetrying(execution.TaskReleaseLock))
			} else {
				require.NoError(t, x.untilDone(execution.TaskValidateResources))
				assert.False(t, x.state.StartUnannounced)
				assert.Equal(t, tt.throttled, x.state.Resources.Throttled > 0, "a round AWS throttled")
				require.NoError(t, x.steps(execution.TaskPublish, execution.TaskDeploy))
			}
			assert.Equal(t, tt.want, announced())
			assert.Equal(t, tt.puts, h.world.Calls()["PutEvents"], "one request")
		})
	}
}
