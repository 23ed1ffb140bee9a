package deployer

import (
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
)

// A release's autoscaling:EC2_INSTANCE_LAUNCHING hook holds each new
// instance in Pending:Wait, registered with no load balancer, until the
// action is completed or its heartbeat timeout applies the hook's
// DefaultResult (ferry's hooks CONTINUE); an action completed with ABANDON
// terminates the instance and its group launches another ("How lifecycle
// hooks work in Amazon EC2 Auto Scaling groups", Auto Scaling User Guide,
// https://docs.aws.amazon.com/autoscaling/ec2/userguide/lifecycle-hooks-overview.html;
// PutLifecycleHook and CompleteLifecycleAction, Auto Scaling API
// Reference). The simulation models it (package sim, launchhook.go).

// withLaunchHook gives r a launching hook of heartbeat seconds and user
// data whose boot does what marker says with the hook's action
// ("complete", "abandon", or "" for nothing).
func withLaunchHook(r *release.Release, heartbeat int, marker string) {
	r.Lifecycle = map[string]*release.LifecycleHook{
		"warmup": {Transition: release.TransitionLaunching, Role: "asg_lifecycle_hooks", SNS: "asg_lifecycle_hooks", HeartbeatTimeout: heartbeat},
	}
	if marker != "" {
		r.UserData += sim.LaunchHookMarker + " " + marker + "\n"
	}
}

// withTerminationHook gives r a termination hook ("termhook") of
// heartbeat seconds that nobody completes: the previous instances of a
// retirement wait on it, in Terminating:Wait, until its timeout.
func withTerminationHook(r *release.Release, heartbeat int) {
	r.Lifecycle = map[string]*release.LifecycleHook{
		"termhook": {Transition: release.TransitionTerminating, Role: "asg_lifecycle_hooks", SNS: "asg_lifecycle_hooks", HeartbeatTimeout: heartbeat},
	}
}

// hookRun is a release with a launching hook deployed over a serving one,
// checked until it is healthy or fails.
type hookRun struct {
	x          *run
	prev, next string // the previous and the new web group
	// overcounted counts the checks that found more healthy instances
	// than the new group had in service and healthy in its load balancer
	// and target group; waited says a check saw one in Pending:Wait.
	overcounted int
	waited      bool
	err         error
}

// deployWithLaunchHook deploys a plain release to Success, then next up
// to its swap or its failure, watching the new group at every check.
func deployWithLaunchHook(t *testing.T, h *harness, next *release.Release) *hookRun {
	t.Helper()
	prev := h.baseRelease()
	h.start(prev).succeed()
	h.clk.Advance(time.Hour)
	next.CreatedAt = h.clk.Now().Add(-time.Minute)
	hr := &hookRun{x: h.start(next), prev: naming.GroupName(project, config, "web", prev.ReleaseID), next: naming.GroupName(project, config, "web", next.ReleaseID)}
	require.NoError(t, hr.x.steps(upToDeploy...))
	for range 400 {
		h.clk.Advance(time.Duration(hr.x.state.Health.WaitSeconds) * time.Second)
		serving := 0
		for _, i := range h.groups()[hr.next].Instances {
			switch {
			case i.Lifecycle == "Pending:Wait":
				hr.waited = true
				assert.Empty(t, i.LB, "%s is registered while it waits", i.ID)
			case i.Lifecycle == "InService" && i.LB["coinbase-deploy-test-web-elb"] == "healthy" && i.LB["coinbase-deploy-test-web-tg"] == "healthy":
				serving++
			}
		}
		if hr.err = hr.x.step(execution.TaskCheckHealthy); hr.err != nil {
			return hr
		}
		if hr.x.state.Health.Services["web"].Healthy > serving {
			hr.overcounted++
		}
		if hr.x.state.Health.Healthy {
			return hr
		}
	}
	t.Fatalf("neither healthy nor failed: %+v", hr.x.state.Health)
	return nil
}

// assertStillServes asserts that group name serves: its instances in
// service and healthy in the load balancer and the target group, and no
// connection cut.
func assertStillServes(t *testing.T, h *harness, name string) {
	t.Helper()
	g, ok := h.groups()[name]
	require.True(t, ok, "%s is gone", name)
	assert.Empty(t, g.Status)
	assert.NotEmpty(t, g.LoadBalancers)
	serving := 0
	for _, i := range g.Instances {
		if strings.HasPrefix(i.Lifecycle, "Terminating") {
			continue // scaled in to its desired capacity
		}
		serving++
		assert.Equal(t, "InService", i.Lifecycle, i.ID)
		assert.Equal(t, map[string]string{"coinbase-deploy-test-web-elb": "healthy", "coinbase-deploy-test-web-tg": "healthy"}, i.LB, i.ID)
	}
	assert.Positive(t, serving)
	assert.Zero(t, h.world.CutConnections())
}

// TestLaunchHookCompletedDeploys: the instances' boot completes their
// launching action: they wait in Pending:Wait, counted launched and never
// healthy, then serve; the release succeeds and retires the previous
// group.
func TestLaunchHookCompletedDeploys(t *testing.T) {
	h := newHarness(t)
	r := h.baseRelease()
	withLaunchHook(r, 600, "complete")
	hr := deployWithLaunchHook(t, h, r)
	require.NoError(t, hr.err)
	assert.True(t, hr.waited, "the new instances waited on the hook")
	assert.Zero(t, hr.overcounted, "a waiting instance counted healthy")
	require.NoError(t, hr.x.stepRetrying(execution.TaskBake))
	require.NoError(t, hr.x.stepRetrying(execution.TaskCleanUpSuccess))
	assertStillServes(t, h, hr.next)
	h.clk.Advance(10 * time.Minute)
	assert.NotContains(t, h.groups(), hr.prev, "the previous group is retired")
}

// TestLaunchHookAbandonedFailsClean: each instance's boot abandons its
// launching action (its setup failed): Auto Scaling terminates it and
// launches another, which abandons in turn. ferry never counts one
// healthy, takes the terminations as the release's (max_terms 0: a
// Halt), never retires the previous group, and ends FailureClean with the
// previous group serving as before.
func TestLaunchHookAbandonedFailsClean(t *testing.T) {
	h := newHarness(t)
	r := h.baseRelease()
	withLaunchHook(r, 600, "abandon")
	hr := deployWithLaunchHook(t, h, r)
	assert.True(t, hr.waited)
	assert.Zero(t, hr.overcounted, "a waiting instance counted healthy")
	var he *failure.HaltError
	require.ErrorAs(t, hr.err, &he)
	assert.Contains(t, hr.err.Error(), "service web: 1 instance of its new group terminated during the deploy, more than its max_terms of 0")
	require.NoError(t, hr.x.fail(hr.err))
	assertFailedClean(t, h, r, failure.NameHalt)
	assertStillServes(t, h, hr.prev)
}

// TestLaunchHookNeverCompletedTimesOut: nobody completes the launching
// action and its heartbeat timeout (1800 s) outlasts the release's
// timeout (600 s): ferry never counts a waiting instance healthy, times
// out and ends FailureClean, the previous group serving as before.
func TestLaunchHookNeverCompletedTimesOut(t *testing.T) {
	h := newHarness(t)
	r := h.baseRelease()
	withLaunchHook(r, 1800, "")
	hr := deployWithLaunchHook(t, h, r)
	assert.True(t, hr.waited)
	assert.Zero(t, hr.overcounted, "a waiting instance counted healthy")
	var te *failure.TimeoutError
	require.ErrorAs(t, hr.err, &te)
	assert.Zero(t, hr.x.state.Health.Services["web"].Healthy)
	assert.Positive(t, hr.x.state.Health.Services["web"].Launched, "waiting, launched")
	require.NoError(t, hr.x.fail(hr.err))
	assertFailedClean(t, h, r, failure.NameTimeout)
	assertStillServes(t, h, hr.prev)
}

// TestLaunchHookContinuesAfterTimeout: nobody completes the launching
// action; its heartbeat timeout (300 s) passes within the release's
// timeout, CONTINUE (ferry's DefaultResult) puts the instances in
// service, and the release succeeds, healthy no sooner than the timeout.
func TestLaunchHookContinuesAfterTimeout(t *testing.T) {
	h := newHarness(t)
	r := h.baseRelease()
	withLaunchHook(r, 300, "")
	hr := deployWithLaunchHook(t, h, r)
	require.NoError(t, hr.err)
	assert.True(t, hr.waited)
	assert.Zero(t, hr.overcounted, "a waiting instance counted healthy")
	assert.GreaterOrEqual(t, h.clk.Now().Sub(hr.x.ctx.StartTime), 300*time.Second, "healthy only once the hook timed out")
	require.NoError(t, hr.x.stepRetrying(execution.TaskBake))
	require.NoError(t, hr.x.stepRetrying(execution.TaskCleanUpSuccess))
	assertStillServes(t, h, hr.next)
}

// TestLaunchHookWaitSettlesInDrift: a replacement instance of a serving
// group waits on the release's launching hook (1800 s, nobody completing
// it: a long setup). A drift query calls it settling, not unhealthy drift,
// for as long as the hook can hold it (its heartbeat timeout) and the
// usual threshold after: a reconciler that heals never redeploys a fleet
// whose instance Auto Scaling is still bringing up. Kept waiting past that
// by heartbeats, it is drift, and healed.
func TestLaunchHookWaitSettlesInDrift(t *testing.T) {
	h := newHarness(t)
	r := h.baseRelease()
	withLaunchHook(r, 1800, "")
	r.Timeout = 2400
	r.Reconcile = release.ReconcileHeal
	h.start(r).succeed()
	h.clk.Advance(10 * time.Minute)
	web := naming.GroupName(project, config, "web", r.ReleaseID)
	c := h.world.Clients(account, region).AutoScaling.(*sim.AutoScaling)
	require.NotEmpty(t, h.groups()[web].Instances)
	_, err := c.TerminateInstanceInAutoScalingGroup(t.Context(), &autoscaling.TerminateInstanceInAutoScalingGroupInput{
		InstanceId: aws.String(h.groups()[web].Instances[0].ID), ShouldDecrementDesiredCapacity: aws.Bool(false)})
	require.NoError(t, err)
	h.clk.Advance(time.Second)
	var fresh string
	for _, i := range h.groups()[web].Instances {
		if i.Lifecycle == "Pending:Wait" {
			fresh = i.ID
		}
	}
	require.NotEmpty(t, fresh, "the replacement waits on the hook")
	h.driftNow()
	heartbeat := func() {
		_, err := c.RecordLifecycleActionHeartbeat(t.Context(), &autoscaling.RecordLifecycleActionHeartbeatInput{
			AutoScalingGroupName: aws.String(web), LifecycleHookName: aws.String("warmup"), InstanceId: aws.String(fresh)})
		require.NoError(t, err)
	}

	h.clk.Advance(25 * time.Minute)
	d := h.driftNow()
	assert.Empty(t, d.Drifts, "waiting on its launching hook, within its heartbeat timeout")
	require.Len(t, d.Settling, 1)
	assert.Contains(t, d.Settling[0].What, fresh)
	assert.Empty(t, h.pass().Healed, "nothing to heal")

	// Heartbeats keep it waiting past the heartbeat timeout and the
	// threshold (40 minutes): drift.
	heartbeat()
	h.clk.Advance(20 * time.Minute)
	heartbeat()
	d = h.driftNow()
	require.Len(t, d.Drifts, 1, "waiting longer than its hook holds it on its own")
	assert.Equal(t, execution.DriftUnhealthy, d.Drifts[0].Kind)
	assert.Contains(t, d.Drifts[0].What, fresh+" is not healthy (Pending:Wait")
	assert.Len(t, h.pass().Healed, 1, "healed")
}
