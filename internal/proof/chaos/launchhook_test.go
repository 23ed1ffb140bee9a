package chaos

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
)

// TestLaunchActionsAct: a release whose launching hook nobody completes
// holds its new instances in Pending:Wait for the heartbeat timeout; an
// operator's step completes one's action (CONTINUE or ABANDON) or records
// a heartbeat for it, by instance id or by token, and the world takes it
// (CompleteLifecycleAction, RecordLifecycleActionHeartbeat, Auto Scaling
// API Reference). The release deploys, or, with an instance abandoned
// (terminated: it counts against max_terms, 0 by default), fails clean;
// either way breaking no predicate.
func TestLaunchActionsAct(t *testing.T) {
	for _, tc := range []struct {
		action  string
		byToken int
		end     string
	}{
		{ActionContinue, 0, execution.EndSuccess},
		{ActionAbandon, 1, execution.EndFailureClean},
		{ActionHeartbeat, 1, execution.EndSuccess},
	} {
		t.Run(tc.action, func(t *testing.T) {
			t.Parallel()
			sc := Scenario{Seed: 1, Steps: []Step{
				{At: 0, Kind: KindDeploy, R: &Variant{Hook: HookWait, Heartbeat: 120}},
				{At: 40, Kind: KindLaunchAction, P: tc.action, D: tc.byToken},
			}}
			res, err := Run(context.Background(), "../../..", sc)
			require.NoError(t, err)
			assert.Equal(t, 1, res.WorldEvents, "the operator's action was taken")
			for name, end := range res.Ends {
				assert.Equal(t, tc.end, end, name)
			}
			assertPasses(t, res)
		})
	}
}
