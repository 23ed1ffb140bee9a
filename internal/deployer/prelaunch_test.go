package deployer

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/fanout"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/resources"
)

// The tasks before a deploy's first launch make their calls one after
// the other only where one needs another's answer: each test here counts
// a task's time in calls, every call to AWS and to the deployer bucket
// taking the same modelled time (package fanout's Timeline).
const prelaunchCall = 30 * time.Millisecond

// timedRun is a run of the base release whose tasks' calls spend
// prelaunchCall each, the clock passing each invocation's time.
func timedRun(t *testing.T) (*harness, *release.Release, *run) {
	h := newHarness(t)
	h.timed = true
	h.spendEach(prelaunchCall)
	r := h.baseRelease()
	return h, r, h.start(r)
}

// taskTime runs task once and returns the time its calls took.
func taskTime(t *testing.T, x *run, task string) time.Duration {
	before := x.h.clk.Now()
	require.NoError(t, x.once(task))
	return x.h.clk.Now().Sub(before)
}

// resolutionTime is the time the resolution of r's resources takes
// alone.
func resolutionTime(t *testing.T, h *harness, r *release.Release) time.Duration {
	ctx, tl := fanout.WithTimeline(t.Context())
	_, err := resources.Resolve(ctx, h.world.Clients(account, region), r)
	require.NoError(t, err)
	return tl.Elapsed()
}

// TestValidateReadsBesideItsConsume: Validate consumes the release id
// (the run-once marker's conditional write) while it reads the release's
// copy in the deployer bucket and the config's current record, then
// records the release's hash once the copy matches: two calls' time, not
// four.
func TestValidateReadsBesideItsConsume(t *testing.T) {
	_, _, x := timedRun(t)
	assert.Equal(t, 2*prelaunchCall, taskTime(t, x, execution.TaskValidate))
	_, consumed, err := x.h.locks.Started(t.Context(), project, config, x.state.ReleaseID)
	require.NoError(t, err)
	assert.True(t, consumed)
}

// TestValidateResourcesReadsBesideItsTurn: ValidateResources reads the
// release and its run-once marker beside its turn among the deploys
// starting in its target (a marker written, then listed), reads the
// marker once for the session it acts as, the config's other
// environments and its announcement's author, and resolves the
// release's resources with the config's current record and its other
// environments beside: the turn's two calls, the resolution's, then the
// announcement's.
func TestValidateResourcesReadsBesideItsTurn(t *testing.T) {
	h, r, x := timedRun(t)
	require.NoError(t, x.steps(execution.TaskValidate, execution.TaskLock))
	alone := resolutionTime(t, h, r)
	assert.Equal(t, 2*prelaunchCall+alone+prelaunchCall, taskTime(t, x, execution.TaskValidateResources))
	assert.False(t, x.state.StartUnannounced, "Release Started put")
}

// TestDeployReadsBesideItsHaltCheck: the first round of Deploy reads the
// release and its run-once marker beside its halt check, and the
// config's environments beside its resolution: the first create of a
// deploy in place (a launch template, then its group) follows the halt
// check's call, the resolution's and the write of the release's intent
// (the deploying record), nothing more.
func TestDeployReadsBesideItsHaltCheck(t *testing.T) {
	h, _, prev := timedRun(t)
	prev.succeed()
	h.clk.Advance(time.Hour)
	r := h.baseRelease()
	x := h.start(r)
	require.NoError(t, x.steps(upToDeploy[:4]...))
	alone := resolutionTime(t, h, r)
	first := time.Duration(-1)
	h.world.OnCall(func(ctx context.Context, c sim.Call) {
		if c.Op == "CreateLaunchTemplate" && first < 0 {
			first = fanout.Offset(ctx)
		}
		fanout.Spend(ctx, prelaunchCall)
	})
	require.NoError(t, x.once(execution.TaskDeploy))
	assert.Equal(t, prelaunchCall+alone+prelaunchCall, first)
}

// TestPublishWritesEveryUserDataAtOnce: Publish reads the release, its
// run-once marker and the config's environments (a first deploy's: the
// targets record, then, without one, the current record) side by side,
// then writes the user data of a release's most services all at once
// (tuning.StoreParallel): three calls' time, whatever the number of
// services.
func TestPublishWritesEveryUserDataAtOnce(t *testing.T) {
	h, r := manyServices(t, limits.MaxServices)
	h.timed = true
	h.spendEach(prelaunchCall)
	x := h.start(r)
	require.NoError(t, x.steps(execution.TaskValidate, execution.TaskLock, execution.TaskValidateResources))
	writes := 0
	h.store.Observe = func(ctx context.Context, op, _ string) {
		if op == "PutObject" {
			writes++
		}
		fanout.Spend(ctx, prelaunchCall)
	}
	assert.Equal(t, 3*prelaunchCall, taskTime(t, x, execution.TaskPublish))
	assert.Equal(t, limits.MaxServices, writes, "one user data a service")
}

// TestAllOfRunsEveryPart: allOf runs every part whatever the others'
// failures (Validate's consume goes on when a read beside it fails; a
// task's reads beside its halt check run all the same), and returns the
// failure of the first part, in order, that failed.
func TestAllOfRunsEveryPart(t *testing.T) {
	first, second := errors.New("first"), errors.New("second")
	ran := 0
	err := allOf(fanout.InOrder(t.Context()),
		func(context.Context) error { return first },
		func(context.Context) error { ran++; return second },
		func(context.Context) error { ran++; return nil })
	assert.Equal(t, first, err)
	assert.Equal(t, 2, ran, "the parts after a failure ran")
}
