package deployer

import (
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/store/halt"
	"github.com/ferryhq/ferry/internal/tuning"
)

// Eventual consistency at the clean-up: AWS may answer a describe from a
// replica that has not seen a group yet ("Eventual consistency", Amazon
// EC2 API Reference; modelled by sim.Hiding), so a group a clean-up does
// not see is "not visible yet", never "gone", until the last attempt.
// Each scenario runs once to count the group's lookups before the
// clean-up, then again hiding the lookups of the clean-up's first
// invocation.

// TestCleanUpAfterDeployWithoutItsRecordWaitsForAGroupNotVisible: Deploy
// made the release's group and finished (Deployed), the release then
// failed its checks, and its deploying record is gone (deleted by
// someone). The group's name is deterministic: while AWS does not show
// the group, CleanUpFailure retries rather than end FailureClean with
// the group running, and once AWS shows it, deletes it.
func TestCleanUpAfterDeployWithoutItsRecordWaitsForAGroupNotVisible(t *testing.T) {
	deployed := func(hide *sim.Hiding) (*harness, *run, string, int) {
		h := newHarness(t)
		r := h.baseRelease()
		name := naming.GroupName(project, config, "web", r.ReleaseID)
		x := h.start(r)
		require.NoError(t, x.steps(upToDeploy[:4]...))
		if hide != nil {
			hide.Prefix = name
			require.NoError(t, h.world.Faults().Hide(*hide))
		}
		require.NoError(t, x.step(execution.TaskDeploy))
		require.True(t, x.state.Deployed)
		_, err := h.s3.DeleteObject(t.Context(), &s3.DeleteObjectInput{Bucket: aws.String(bucket),
			Key: aws.String(naming.DeployingKey(project, config, r.ReleaseID))})
		require.NoError(t, err)
		x.state.Error = &execution.Error{Error: "States.Timeout", Cause: "CheckHealthy timed out"}
		return h, x, name, h.world.Lookups(sim.HideGroups)[name]
	}
	_, _, _, before := deployed(nil)

	h, x, name, _ := deployed(&sim.Hiding{Kind: sim.HideGroups, From: before + 1, Calls: 20})
	err := x.once(execution.TaskCleanUpFailure)
	require.Equal(t, failure.NameRetryable, failure.NameOf(err), "not visible yet is not gone: %v", err)
	require.NoError(t, x.stepRetrying(execution.TaskCleanUpFailure))
	require.NoError(t, x.stepRetrying(execution.TaskReleaseLock))
	if g, ok := h.groups()[name]; ok {
		assert.Equal(t, "Delete in progress", g.Status, "the group is removed once AWS shows it")
	}
	o, found, err := h.ledger.GetOutcome(t.Context(), project, config, x.state.ReleaseID)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, execution.EndFailureClean, o.End)
}

// haltedInBake deploys prev, bakes next with prev standing by, and halts
// the bake: CleanUpFailure is next, to roll back to prev's group. hide,
// when set, hides prev's group (from its creation on, as Hiding counts).
// It returns the run, prev's group and its lookups so far.
func haltedInBake(t *testing.T, hide *sim.Hiding) (*harness, *run, string, int) {
	t.Helper()
	h := newHarness(t)
	prev, next := h.baseRelease(), h.baseRelease()
	next.BakeSeconds = 600
	old := naming.GroupName(project, config, "web", prev.ReleaseID)
	if hide != nil {
		hide.Prefix = old
		require.NoError(t, h.world.Faults().Hide(*hide))
	}
	x := h.atSwap(prev, next)
	require.NoError(t, x.once(execution.TaskBake))
	require.NoError(t, h.halts.Put(t.Context(), project, config, halt.Marker{By: "oncall", Reason: "errors up", At: h.clk.Now()}))
	h.clk.Advance(time.Duration(x.state.Bake.WaitSeconds) * time.Second)
	err := x.step(execution.TaskBake)
	var halted *failure.HaltError
	require.ErrorAs(t, err, &halted)
	x.state.Error = &execution.Error{Error: failure.NameOf(err), Cause: failure.Cause(err)}
	return h, x, old, h.world.Lookups(sim.HideGroups)[old]
}

// TestRollbackWaitsForAPreviousGroupNotVisible: a halt rolls back to the
// previous group, which AWS does not show for one lookup of the
// rollback's first invocation (each in turn). Whichever it is, the
// rollback retries (it is not visible yet, not gone) and then restores
// it: FailureClean, the previous group serving again. Hidden from the
// rollback's own describe, the retry names the group "not visible".
func TestRollbackWaitsForAPreviousGroupNotVisible(t *testing.T) {
	h, x, old, before := haltedInBake(t, nil)
	require.NoError(t, x.once(execution.TaskCleanUpFailure))
	first := h.world.Lookups(sim.HideGroups)[old] - before
	require.Positive(t, first)

	notVisible := false
	for lookup := 1; lookup <= first; lookup++ {
		h, x, old, _ := haltedInBake(t, &sim.Hiding{Kind: sim.HideGroups, From: before + lookup, Calls: 1})
		err := x.once(execution.TaskCleanUpFailure)
		if err != nil {
			require.Equal(t, failure.NameRetryable, failure.NameOf(err), "lookup %d: %v", lookup, err)
			notVisible = notVisible || (strings.Contains(err.Error(), "roll back to "+old) && strings.Contains(err.Error(), "not visible"))
		}
		require.NoError(t, x.stepRetrying(execution.TaskCleanUpFailure), "lookup %d", lookup)
		require.NoError(t, x.stepRetrying(execution.TaskReleaseLock), "lookup %d", lookup)
		assert.Equal(t, []string{old}, x.state.RolledBack, "lookup %d: rolled back to the previous group", lookup)
		attached, n := serving(h.groups()[old])
		assert.True(t, attached && n > 0, "lookup %d: the previous group serves again", lookup)
	}
	assert.True(t, notVisible, "one of the lookups hidden was the rollback's describe of the previous group")
}

// TestRollbackGivesUpOnAPreviousGroupNotVisibleAtTheLastAttempt: at the
// state machine's last attempt, a previous group AWS still does not show
// is gone: the clean-up ends FailureDirty, naming it, and leaves the
// release's own group serving (never nothing).
func TestRollbackGivesUpOnAPreviousGroupNotVisibleAtTheLastAttempt(t *testing.T) {
	_, _, _, before := haltedInBake(t, nil)
	_, x, old, _ := haltedInBake(t, &sim.Hiding{Kind: sim.HideGroups, From: before + 1, Calls: 1000})
	x.ctx.RetryCount = tuning.TaskRetryMaxAttempts
	err := x.once(execution.TaskCleanUpFailure)
	var ce *failure.CleanUpError
	require.ErrorAs(t, err, &ce, "%v", err)
	assert.Contains(t, ce.Leftovers, "previous group "+old+": gone, nothing to roll back to (the release's groups are left serving)")
}

// TestRecheckWaitsForANewGroupNotVisible: a retirement step after the
// gate's judges the new groups again while a previous group still has
// instances (recheck). AWS may answer that step's describe from a replica
// that has not seen the new group ("Eventual consistency", Amazon EC2 API
// Reference; sim.Hiding): the step is retried, never taken as the new
// group gone, which would put the previous group back and end
// FailureDirty with the release serving.
func TestRecheckWaitsForANewGroupNotVisible(t *testing.T) {
	// toSecondStep runs a release to its retirement's second step, hiding
	// hide (when set), and returns the new group's name and its lookups.
	toSecondStep := func(hide *sim.Hiding) (*harness, *run, string, int) {
		h := newHarness(t)
		x, name, _ := h.toSwapHiding(hide)
		require.NoError(t, x.once(execution.TaskCleanUpSuccess))
		require.False(t, x.state.Retire.Done, "the previous group drains: a second step")
		h.clk.Advance(time.Duration(x.state.Retire.WaitSeconds) * time.Second)
		return h, x, name, h.world.Lookups(sim.HideGroups)[name]
	}
	_, _, _, before := toSecondStep(nil)

	// Hidden from the step's describe and from the health report's own
	// look for a group the describe did not show.
	h, x, name, _ := toSecondStep(&sim.Hiding{Kind: sim.HideGroups, From: before + 1, Calls: 2})
	err := x.once(execution.TaskCleanUpSuccess)
	require.Error(t, err, "the step's describe did not show the new group")
	require.Equal(t, failure.NameRetryable, failure.NameOf(err), "not visible yet is not gone: %v", err)
	assert.Contains(t, err.Error(), "not visible")
	require.NoError(t, x.stepRetrying(execution.TaskCleanUpSuccess))
	for steps := 0; !x.state.Retire.Done; steps++ {
		require.Less(t, steps, 100)
		h.clk.Advance(time.Duration(x.state.Retire.WaitSeconds) * time.Second)
		require.NoError(t, x.stepRetrying(execution.TaskCleanUpSuccess))
	}
	assert.Contains(t, h.groups(), name, "the new group serves")
	o, found, err := h.ledger.GetOutcome(t.Context(), project, config, x.state.ReleaseID)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, execution.EndSuccess, o.End)
}
