package region

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/statemachine/shape"
)

// TestDeployRefusedCreateFailsAtOnce runs a release through the real
// definition and handlers. Auto Scaling answers both a group it refuses
// and a launch template it does not show yet with a ValidationError
// (Common Errors, Auto Scaling API Reference; "Eventual consistency", EC2
// API Reference; sim.Hiding):
//
//   - A mixed instances policy whose instance requirements no instance
//     type meets (a region's types are not the release's to know, so
//     validation lets it through; InstanceRequirements, Auto Scaling API
//     Reference) is refused on every attempt: Deploy runs once, fails
//     naming the group and AWS's message, and the execution ends
//     FailureClean through CleanUpFailure, the previous fleet serving.
//   - The launch template Deploy made, not shown to CreateAutoScalingGroup
//     once, is waited for: Deploy is retried and the release succeeds.
func TestDeployRefusedCreateFailsAtOnce(t *testing.T) {
	impossible := func(rel *release.Release) {
		m := rel.Services["web"].MixedInstances
		m.OnDemandAllocationStrategy = release.OnDemandLowestPrice
		m.Overrides = []release.Override{{Requirements: &release.InstanceRequirements{
			VCPU: &release.IntRange{Min: 4096}, MemoryMiB: &release.IntRange{Min: 1024}}}}
	}
	for _, tc := range []struct {
		name     string
		mutate   func(*release.Release)
		hide     bool
		end      string
		attempts int // of Deploy; 0: more than one
	}{
		{name: "refused", mutate: impossible, end: execution.EndFailureClean, attempts: 1},
		{name: "not visible yet", hide: true, end: execution.EndSuccess},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			deploys := 0
			r, clk := newTestRegion(t, Options{Intercept: func(ctx context.Context, req execution.Request, next Invoke) (json.RawMessage, error) {
				if req.Execution.Name == "r-new" && req.Task == execution.TaskDeploy {
					deploys++
				}
				return next(ctx, req)
			}})
			prev, err := r.StartRelease(ctx, releaseJSON(t, clk, "r-prev"))
			require.NoError(t, err)
			require.NoError(t, prev.Wait(ctx))
			require.Equal(t, execution.EndSuccess, last(prev.Path()))

			group := naming.GroupName(testProject, testConfig, "web", "r-new")
			if tc.hide {
				require.NoError(t, r.World().Faults().Hide(sim.Hiding{Kind: sim.HideLaunchTemplates, Calls: 1, Prefix: group}))
			}
			var mutate []func(*release.Release)
			if tc.mutate != nil {
				mutate = append(mutate, tc.mutate)
			}
			x, err := r.StartRelease(ctx, spotReleaseJSON(t, "r-new", clk.Now().Add(-1), mutate...))
			require.NoError(t, err)
			require.NoError(t, x.Wait(ctx))
			d, path := x.Describe(), x.Path()
			require.Equal(t, tc.end, last(path), "%v: %s: %s", path, d.Error, d.Cause)
			if tc.attempts == 0 {
				assert.Greater(t, deploys, 1, "Deploy retried until AWS shows the template")
				return
			}
			assert.Equal(t, tc.attempts, deploys, "a refusal is not retried")
			assert.Equal(t, refusedPath, path, "failed in Deploy, cleaned up")
			assert.Contains(t, d.Cause, "autoscaling:CreateAutoScalingGroup "+group, "names the group")
			assert.Contains(t, d.Cause, "No instance type matches the InstanceRequirements", "and AWS's message")
			served, _ := inServiceIn(t, r.World(), webELB)
			assert.Positive(t, served[naming.GroupName(testProject, testConfig, "web", "r-prev")], "the previous fleet serves")
			for _, g := range r.World().Snapshot().Accounts[0].Groups {
				assert.NotEqual(t, group, g.Name, "nothing half-made")
			}
		})
	}
}

// refusedPath is the path of a release whose group AWS refuses: Deploy
// once, then the clean-up.
var refusedPath = []string{
	shape.StateQuery, execution.TaskValidate, execution.TaskLock, execution.TaskValidateResources, shape.StateResourcesValid,
	execution.TaskPublish, execution.TaskDeploy, execution.TaskCleanUpFailure, shape.StateCleanedUp,
	execution.TaskReleaseLock, execution.EndFailureClean,
}
