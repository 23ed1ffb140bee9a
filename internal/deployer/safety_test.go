package deployer

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
)

// The tests of this file are the deploy-safety defects of issue #13, each
// produced on the simulation as AWS documents the behaviour behind it.

// crashAfterHealthy makes a release's instances pass their health checks,
// serve for 10-50 s and die (sim.CrashAfterHealthy).
func crashAfterHealthy(r *release.Release) {
	r.UserData = "#cloud-config\n" + sim.UserDataMarker + " " + string(sim.CrashAfterHealthy) + "\n"
}

// TestStabilityWindow: a fleet that is healthy for a moment and then
// crashes is never judged healthy. With the default max_terms of 0 the
// first termination halts the release; with a tolerance the window
// restarts at every termination, so the release times out rather than
// succeed. A fleet that holds its target for the window is judged healthy
// once the window has passed, not before.
func TestStabilityWindow(t *testing.T) {
	t.Run("crash after healthy halts", func(t *testing.T) {
		h := newHarness(t)
		r := h.baseRelease()
		crashAfterHealthy(r)
		x := h.start(r)
		require.NoError(t, x.steps(upToDeploy...))
		_, err := x.untilHealthy(100)
		var halt *failure.HaltError
		require.ErrorAs(t, err, &halt)
		// Checks are 30 s apart while the service holds its target
		// (tuning.StableCheckInterval): one or both of its instances may
		// have crashed by the check that sees it.
		assert.Regexp(t, `service web: [12] instances? of its new group terminated during the deploy`, halt.Reason)
	})
	t.Run("crash after healthy within max_terms times out", func(t *testing.T) {
		h := newHarness(t)
		r := h.baseRelease()
		crashAfterHealthy(r)
		r.Services["web"].Autoscaling.MaxTerms = 1000
		r.Timeout = 900
		x := h.start(r)
		require.NoError(t, x.steps(upToDeploy...))
		_, err := x.untilHealthy(1000)
		var timeout *failure.TimeoutError
		require.ErrorAs(t, err, &timeout, "never stable: the window restarts with every crash")
		assert.Positive(t, x.state.Health.Services["web"].Terminated)
	})
	t.Run("holding the target", func(t *testing.T) {
		h := newHarness(t)
		x := h.start(h.baseRelease())
		require.NoError(t, x.steps(upToDeploy...))
		var firstAtTarget time.Time
		for range 100 {
			h.clk.Advance(time.Duration(x.state.Health.WaitSeconds) * time.Second)
			require.NoError(t, x.step(execution.TaskCheckHealthy))
			web := x.state.Health.Services["web"]
			if web.Healthy >= web.Target && firstAtTarget.IsZero() {
				firstAtTarget = h.clk.Now()
				assert.False(t, x.state.Health.Healthy, "at its target, not yet stable")
			}
			if x.state.Health.Healthy {
				break
			}
		}
		require.True(t, x.state.Health.Healthy)
		assert.Equal(t, 60*time.Second, h.clk.Now().Sub(firstAtTarget), "healthy exactly one window after it reached its target")
	})
}

// TestFailFast: a release that can never become healthy fails at the next
// check, naming the resource and the reason, instead of waiting out its
// timeout: a launch Auto Scaling reports failed for a reason that will not
// go away, and a load balancer that does not route to an instance's zone.
// A zone short of capacity is Auto Scaling's to work around: it does not
// fail the release.
func TestFailFast(t *testing.T) {
	t.Run("failed launch", func(t *testing.T) {
		h := newHarness(t)
		x := h.start(h.baseRelease())
		require.NoError(t, x.steps(upToDeploy[:4]...))
		require.NoError(t, h.world.Faults().FailLaunches(account, region, 100,
			"Value (coinbase-deploy-test) for parameter iamInstanceProfile.name is invalid. Invalid IAM Instance Profile name. Launching EC2 instance failed."))
		require.NoError(t, x.step(execution.TaskDeploy))
		h.clk.Advance(5 * time.Second)
		err := x.step(execution.TaskCheckHealthy)
		var de *failure.DeployError
		require.ErrorAs(t, err, &de)
		assert.Contains(t, err.Error(), "Auto Scaling reports a failed launch that will fail again")
		assert.Contains(t, err.Error(), "Invalid IAM Instance Profile name")
	})
	t.Run("zones short of capacity", func(t *testing.T) {
		h := newHarness(t)
		x := h.start(h.baseRelease())
		require.NoError(t, x.steps(upToDeploy[:4]...))
		for _, zone := range []string{"us-east-1a", "us-east-1b"} {
			require.NoError(t, h.world.Faults().ImpairZone(account, region, zone, h.clk.Now().Add(3*time.Minute)))
		}
		require.NoError(t, x.step(execution.TaskDeploy))
		_, err := x.untilHealthy(200)
		require.NoError(t, err, "the group launched once the zones had capacity again")
	})
	t.Run("load balancer stops routing to a zone", func(t *testing.T) {
		h := newHarness(t)
		x := h.start(h.baseRelease())
		require.NoError(t, x.steps(upToDeploy...))
		require.NoError(t, h.world.SetLoadBalancerZones(account, region, "coinbase-deploy-test-web-alb", []string{"us-east-1a"}))
		_, err := x.untilHealthy(100)
		var de *failure.DeployError
		require.ErrorAs(t, err, &de)
		assert.Contains(t, err.Error(), "does not send traffic to instance")
		assert.Contains(t, err.Error(), "Target.NotInUse")
	})
}

// TestCleanUpSuccessPastPointOfNoReturnNeverRollsBack: CleanUpSuccess
// deletes the previous groups, then a call fails transiently; its retry
// cannot assume the deploy role any more (cached credentials due for
// refresh, AccessDenied). That retry must end FailureDirty (a CleanUpError
// naming what is left), never a DeployError that sends the release to
// CleanUpFailure, which would delete the new groups: the only ones left.
func TestCleanUpSuccessPastPointOfNoReturnNeverRollsBack(t *testing.T) {
	h := newHarness(t)
	r := h.baseRelease()
	x := h.atSwap(h.baseRelease(), r)
	_, err := h.world.Faults().Add(sim.Rule{Op: "DeleteLaunchTemplate", Nth: 1, Err: sim.InternalError()})
	require.NoError(t, err)
	err = x.step(execution.TaskCleanUpSuccess)
	require.Equal(t, failure.NameRetryable, failure.NameOf(err), "%v", err)

	h.clk.Advance(time.Hour) // the role's credentials are due for refresh
	_, err = h.world.Faults().Add(sim.Rule{Op: "AssumeRole", Err: sim.AccessDenied()})
	require.NoError(t, err)
	x.ctx.RetryCount = 1
	err = x.step(execution.TaskCleanUpSuccess)
	var ce *failure.CleanUpError
	require.ErrorAs(t, err, &ce, "%v", err)
	assert.Equal(t, failure.NameCleanUp, failure.NameOf(err))
	assert.Contains(t, h.groups(), naming.GroupName(project, config, "web", r.ReleaseID), "the new group serves")
	out, found, err := h.ledger.GetOutcome(t.Context(), project, config, r.ReleaseID)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, execution.EndFailureDirty, out.End)
	assert.Contains(t, out.Leftovers, "the lock "+naming.LockKey(project, config)+" (kept)")
}

// TestCleanUpSuccessRetriedAfterItFinished: CleanUpSuccess finishes (the
// lock released last) and its response is lost; release B takes the lock
// and deploys; then the retry of the first CleanUpSuccess runs. It must
// touch nothing: its outcome already says Success.
func TestCleanUpSuccessRetriedAfterItFinished(t *testing.T) {
	h := newHarness(t)
	h.start(h.baseRelease()).succeed()
	h.clk.Advance(time.Hour)
	a := h.start(h.baseRelease())
	require.NoError(t, a.steps(upToDeploy...))
	_, err := a.untilHealthy(100)
	require.NoError(t, err)
	require.NoError(t, a.step(execution.TaskCleanUpSuccess))
	doneState := *a.state

	h.clk.Advance(time.Minute)
	rb := h.baseRelease()
	b := h.start(rb)
	require.NoError(t, b.steps(upToDeploy...))
	before := h.snapshot()

	a.state = &doneState
	require.NoError(t, a.step(execution.TaskCleanUpSuccess))
	assert.Equal(t, before, h.snapshot(), "the late retry touched nothing")
	holder, held, err := h.locks.Get(t.Context(), project, config)
	require.NoError(t, err)
	require.True(t, held)
	assert.Equal(t, rb.ReleaseID, holder.ReleaseID, "B keeps its lock")
}

// TestCleanUpSuccessRequiresTheLock: a CleanUpSuccess whose lock was
// taken away (someone ran ferry unlock, another release took it) deletes
// nothing: before its point of no return it fails the release (the
// previous release keeps serving); after it, it ends FailureDirty.
func TestCleanUpSuccessRequiresTheLock(t *testing.T) {
	h := newHarness(t)
	prev, r := h.baseRelease(), h.baseRelease()
	x := h.atSwap(prev, r)
	require.NoError(t, h.locks.Release(t.Context(), project, config, r.ReleaseID))
	before := h.snapshot()
	err := x.step(execution.TaskCleanUpSuccess)
	var de *failure.DeployError
	require.ErrorAs(t, err, &de, "%v", err)
	assert.Contains(t, err.Error(), "no longer holds the lock")
	assert.Equal(t, before, h.snapshot())
	assert.Contains(t, h.groups(), naming.GroupName(project, config, "web", prev.ReleaseID))
}

// TestCleanUpFailureFindsInvisibleGroups: Deploy created a group, then
// failed; AWS shows the group to no describe and answers "not found" to
// its delete for a while (eventual consistency). CleanUpFailure must not
// call that "gone": it retries until AWS shows the group, deletes it, and
// only then ends clean.
func TestCleanUpFailureFindsInvisibleGroups(t *testing.T) {
	h := newHarness(t)
	r := h.baseRelease()
	x := h.start(r)
	require.NoError(t, x.steps(upToDeploy[:4]...))
	require.NoError(t, h.world.Faults().Hide(sim.Hiding{Kind: sim.HideGroups, Calls: 6}))
	_, err := h.world.Faults().Add(sim.Rule{Op: "SuspendProcesses", Err: sim.AccessDenied()})
	require.NoError(t, err)
	err = x.step(execution.TaskDeploy)
	require.Error(t, err)
	h.world.Faults().Clear()
	name := naming.GroupName(project, config, "web", r.ReleaseID)
	require.Contains(t, h.groups(), name, "the group exists, though AWS does not show it yet")

	x.state.Error = &execution.Error{Error: failure.NameOf(err), Cause: failure.Cause(err)}
	err = x.step(execution.TaskCleanUpFailure)
	require.Equal(t, failure.NameRetryable, failure.NameOf(err), "not visible yet is not gone: %v", err)
	require.NoError(t, x.stepRetrying(execution.TaskCleanUpFailure))
	require.NoError(t, x.stepRetrying(execution.TaskReleaseLock))
	if g, ok := h.groups()[name]; ok {
		assert.Equal(t, "Delete in progress", g.Status)
	}
	assert.Empty(t, h.account().LaunchTemplates)
}

// TestDeployRetryFindsItsLaunchTemplate: Deploy creates a launch template,
// which EC2 does not show for a while; the group's create then fails
// ("launch template does not exist"), and so does a describe of the
// template after the retry's create answers AlreadyExists. The retry is
// retryable, and the client token gets the retry its own template: one
// template, one group.
func TestDeployRetryFindsItsLaunchTemplate(t *testing.T) {
	h := newHarness(t)
	x := h.start(h.baseRelease())
	require.NoError(t, x.steps(upToDeploy[:4]...))
	require.NoError(t, h.world.Faults().Hide(sim.Hiding{Kind: sim.HideLaunchTemplates, Calls: 4}))
	err := x.step(execution.TaskDeploy)
	require.Equal(t, failure.NameRetryable, failure.NameOf(err), "%v", err)
	require.NoError(t, x.stepRetrying(execution.TaskDeploy))
	assert.Len(t, h.account().LaunchTemplates, 1)
	assert.Len(t, h.groups(), 1)
	_, err = x.untilHealthy(100)
	require.NoError(t, err)
}

// TestScalingSuspendedDuringDeploy: the new group's own policies and AZ
// rebalancing cannot terminate its instances while it is being judged.
// An idle fleet (5% CPU) with a cpu_scale_down alarm on a one-minute
// period, and a zone short of capacity that recovers mid-deploy, would
// each terminate an instance and halt a good release; with AlarmNotification
// and AZRebalance suspended until the swap, the release succeeds, and
// after the swap the group is back at its desired capacity from ferry's
// launch count and its processes are resumed.
func TestScalingSuspendedDuringDeploy(t *testing.T) {
	h := newHarness(t, func(w *sim.WorldSpec) {
		// Idle, and slow to pass the load balancers' checks: the alarm
		// fires while the release is judged.
		idle := 5.0
		w.Accounts[0].Regions[0].AMIs[0].CPUPercent = &idle
		w.Accounts[0].Regions[0].AMIs[0].Timings = &sim.Timings{Health: &sim.Range{Min: 150, Max: 150}}
	})
	r := h.baseRelease()
	r.Services["web"].Autoscaling.Policies = []release.Policy{
		{Type: "cpu_scale_down", Threshold: 15, ScalingAdjustment: -1, Period: 60, EvaluationPeriods: 1, Cooldown: 60},
	}
	r.Services["web"].Autoscaling.MinSize = 1
	r.Services["web"].Autoscaling.MaxSize = 4
	r.Services["web"].Autoscaling.Spread = 0.5
	x := h.start(r)
	require.NoError(t, x.steps(upToDeploy[:4]...))
	require.NoError(t, h.world.Faults().ImpairZone(account, region, "us-east-1b", h.clk.Now().Add(90*time.Second)))
	require.NoError(t, x.step(execution.TaskDeploy))
	name := naming.GroupName(project, config, "web", r.ReleaseID)
	g := h.groups()[name]
	assert.ElementsMatch(t, []string{"AZRebalance", "AlarmNotification"}, g.Suspended)
	_, err := x.untilHealthy(100)
	require.NoError(t, err, "no policy or rebalance terminated an instance")
	for _, al := range h.account().Alarms {
		if al.Name == naming.AlarmName(name, "cpu_scale_down") {
			assert.Equal(t, "ALARM", al.State, "the alarm fired, and did nothing")
		}
	}
	require.NoError(t, x.step(execution.TaskCleanUpSuccess))
	g = h.groups()[name]
	assert.Empty(t, g.Suspended, "resumed after the swap")
	assert.Equal(t, int32(x.state.Health.Services["web"].Desired), g.Desired, "scaled back from ferry's launch count")
}

// TestFailureDirtyNamesWhatIsLeft: when a clean-up cannot finish, its
// FailureDirty outcome names every group, launch template and alarm that
// may be left, by name, even when S3 or AWS refuses the reads that would
// say what the release made or what it was retiring.
func TestFailureDirtyNamesWhatIsLeft(t *testing.T) {
	outcome := func(t *testing.T, h *harness, releaseID string) []string {
		o, found, err := h.ledger.GetOutcome(t.Context(), project, config, releaseID)
		require.NoError(t, err)
		require.True(t, found)
		assert.Equal(t, execution.EndFailureDirty, o.End)
		return o.Leftovers
	}
	// failedDeploy runs a release to a failed Deploy that made its group,
	// its launch template and its alarms.
	failedDeploy := func(t *testing.T, h *harness) (*run, string, error) {
		r := h.baseRelease()
		x := h.start(r)
		require.NoError(t, x.steps(upToDeploy...))
		name := naming.GroupName(project, config, "web", r.ReleaseID)
		require.Len(t, h.account().Alarms, 2)
		return x, name, &failure.HaltError{Reason: "halted by a test"}
	}
	t.Run("CleanUpFailure cannot read what Deploy made", func(t *testing.T) {
		h := newHarness(t)
		x, name, cause := failedDeploy(t, h)
		deploying := naming.DeployingKey(project, config, x.state.ReleaseID)
		h.store.Deny = func(op, key string) bool { return op == "GetObject" && key == deploying }
		var ce *failure.CleanUpError
		require.ErrorAs(t, x.fail(cause), &ce)
		assert.Subset(t, outcome(t, h, x.state.ReleaseID), []string{"auto scaling group " + name, "launch template " + name, "alarms " + name + "/*"})
	})
	t.Run("CleanUpFailure cannot describe the groups it removes", func(t *testing.T) {
		h := newHarness(t)
		x, name, cause := failedDeploy(t, h)
		// The first describe lists the release's groups; the second is
		// the removal's own.
		_, err := h.world.Faults().Add(sim.Rule{Op: "DescribeAutoScalingGroups", Nth: 2, Err: sim.AccessDenied()})
		require.NoError(t, err)
		var ce *failure.CleanUpError
		require.ErrorAs(t, x.fail(cause), &ce)
		assert.Len(t, h.account().Alarms, 2, "the alarms are left")
		assert.Contains(t, outcome(t, h, x.state.ReleaseID), "alarms "+name+"/*")
	})
	t.Run("CleanUpSuccess cannot read its record nor describe the previous groups", func(t *testing.T) {
		h := newHarness(t)
		prev := h.baseRelease()
		x := h.atSwap(prev, h.baseRelease())
		deleting := naming.DeletingKey(project, config, x.state.ReleaseID)
		h.store.Deny = func(op, key string) bool { return op == "GetObject" && key == deleting }
		_, err := h.world.Faults().Add(sim.Rule{Op: "DescribeAutoScalingGroups", Err: sim.AccessDenied()})
		require.NoError(t, err)
		err = x.step(execution.TaskCleanUpSuccess)
		var ce *failure.CleanUpError
		require.ErrorAs(t, err, &ce, "%v", err)
		previous := naming.GroupName(project, config, "web", prev.ReleaseID)
		assert.Contains(t, h.groups(), previous, "nothing was retired")
		assert.Contains(t, outcome(t, h, x.state.ReleaseID), "previous group and launch template "+previous+" (may remain)",
			"named from what Deploy saw")
	})
}

// TestCleanUpSuccessSettleWaitsForTheNewGroup: past the point of no return,
// AWS answers "not found" for a moment to the new group it showed a call
// before (eventual consistency: a read may hit a replica that has not seen
// the group). Whichever of the swap's lookups of the group it hides, the
// swap is retried and succeeds, never given up as FailureDirty; among
// them are settling the group (UpdateAutoScalingGroup, ResumeProcesses).
func TestCleanUpSuccessSettleWaitsForTheNewGroup(t *testing.T) {
	toSwap := func(hide *sim.Hiding) (*harness, *run, string, int) {
		h := newHarness(t)
		x, name, lookups := h.toSwapHiding(hide)
		return h, x, name, lookups
	}
	h, x, name, before := toSwap(nil)
	require.NoError(t, x.step(execution.TaskCleanUpSuccess))
	swap := h.world.Lookups(sim.HideGroups)[name] - before
	require.Positive(t, swap)

	retried := map[string]bool{}
	for lookup := 1; lookup <= swap; lookup++ {
		h, x, name, _ := toSwap(&sim.Hiding{Kind: sim.HideGroups, From: before + lookup, Calls: 1})
		err := x.step(execution.TaskCleanUpSuccess)
		if err != nil {
			require.Equal(t, failure.NameRetryable, failure.NameOf(err), "lookup %d: %v", lookup, err)
			for _, op := range []string{"UpdateAutoScalingGroup", "ResumeProcesses"} {
				retried[op] = retried[op] || strings.Contains(err.Error(), op)
			}
			require.NoError(t, x.stepRetrying(execution.TaskCleanUpSuccess), "lookup %d", lookup)
		}
		g := h.groups()[name]
		assert.Equal(t, int32(x.state.Health.Services["web"].Desired), g.Desired, "lookup %d: settled", lookup)
		assert.Empty(t, g.Suspended, "lookup %d: resumed", lookup)
	}
	assert.True(t, retried["UpdateAutoScalingGroup"] && retried["ResumeProcesses"], "settling was hidden from: %v", retried)
}

// TestTerminationBeforeTheFirstCheckCounts: an instance of the new group
// is terminated and replaced before the first health check (a person ran
// TerminateInstanceInAutoScalingGroup, "Terminates the specified instance
// and optionally adjusts the desired group size", Auto Scaling API
// Reference), so no check sees its instances change, and no check reads
// its scaling activities. The swap's gate reads those no check read, and
// the release fails before the point of no return, the previous release
// still serving: with max_terms 0 on the termination; with max_terms 1
// because it restarted the service's stability window, as a check that
// saw it would have.
func TestTerminationBeforeTheFirstCheckCounts(t *testing.T) {
	for _, tc := range []struct {
		maxTerms int
		reason   string
	}{
		{0, "service web: 1 instance of its new group terminated during the deploy"},
		{1, "no longer stable before retiring the previous groups: web"},
	} {
		t.Run(fmt.Sprintf("max_terms %d", tc.maxTerms), func(t *testing.T) {
			h := newHarness(t)
			prev := h.baseRelease()
			h.start(prev).succeed()
			h.clk.Advance(time.Hour)
			r := h.baseRelease()
			r.Services["web"].Autoscaling.MaxTerms = tc.maxTerms
			x := h.start(r)
			require.NoError(t, x.steps(upToDeploy...))
			name := naming.GroupName(project, config, "web", r.ReleaseID)
			victim := h.groups()[name].Instances[0].ID
			_, err := h.world.Clients(account, region).AutoScaling.(*sim.AutoScaling).TerminateInstanceInAutoScalingGroup(t.Context(),
				&autoscaling.TerminateInstanceInAutoScalingGroupInput{InstanceId: aws.String(victim), ShouldDecrementDesiredCapacity: aws.Bool(false)})
			require.NoError(t, err)
			h.clk.Advance(2 * time.Minute) // gone and replaced before the first check
			require.Len(t, h.groups()[name].Instances, 3)

			_, err = x.untilHealthy(100)
			require.NoError(t, err, "no check saw the termination")
			assert.Zero(t, x.state.Health.Services["web"].Terminated)
			err = x.step(execution.TaskCleanUpSuccess)
			var halt *failure.HaltError
			require.ErrorAs(t, err, &halt, "%v", err)
			assert.Contains(t, halt.Reason, tc.reason)
			assert.Contains(t, h.groups(), naming.GroupName(project, config, "web", prev.ReleaseID))
			_, found, err := h.ledger.GetDeleting(t.Context(), project, config, r.ReleaseID)
			require.NoError(t, err)
			assert.False(t, found, "before the point of no return")
		})
	}
}

// TestSwapCountsATerminationNoCheckSaw: a check sees an instance of the
// new group replaced and reads its scaling activities (max_terms 1
// tolerates it). After the last check, a person scales the group out by
// one and terminates the instance it launched, decrementing the desired
// capacity: the group has the instances the last check saw, none
// terminating, at its launch count, so nothing a check sees changed. The
// gate sees the group's newest scaling activity began after that read
// (activities are described in progress first, then newest first:
// DescribeScalingActivities, Auto Scaling API Reference), reads them
// again, and the release fails on its second termination before the
// point of no return: the previous release keeps serving.
func TestSwapCountsATerminationNoCheckSaw(t *testing.T) {
	h := newHarness(t)
	prev := h.baseRelease()
	h.start(prev).succeed()
	h.clk.Advance(time.Hour)
	r := h.baseRelease()
	r.Services["web"].Autoscaling.MaxTerms = 1
	x := h.start(r)
	require.NoError(t, x.steps(upToDeploy...))
	name := naming.GroupName(project, config, "web", r.ReleaseID)
	asg := h.world.Clients(account, region).AutoScaling.(*sim.AutoScaling)
	h.clk.Advance(time.Duration(x.state.Health.WaitSeconds) * time.Second)
	require.NoError(t, x.step(execution.TaskCheckHealthy))
	_, err := asg.TerminateInstanceInAutoScalingGroup(t.Context(), &autoscaling.TerminateInstanceInAutoScalingGroupInput{
		InstanceId: aws.String(h.groups()[name].Instances[0].ID), ShouldDecrementDesiredCapacity: aws.Bool(false)})
	require.NoError(t, err)
	_, err = x.untilHealthy(100)
	require.NoError(t, err)
	require.Equal(t, 1, x.state.Health.Services["web"].Terminated, "a check saw the replacement")
	require.NotNil(t, x.state.Health.Services["web"].ActivitiesAt)

	before := h.groups()[name]
	_, err = asg.UpdateAutoScalingGroup(t.Context(), &autoscaling.UpdateAutoScalingGroupInput{
		AutoScalingGroupName: aws.String(name), DesiredCapacity: aws.Int32(before.Desired + 1)})
	require.NoError(t, err)
	h.clk.Advance(time.Minute)
	var added string
	for _, i := range h.groups()[name].Instances {
		if !slices.ContainsFunc(before.Instances, func(b sim.InstanceSnapshot) bool { return b.ID == i.ID }) {
			added = i.ID
		}
	}
	require.NotEmpty(t, added, "the scale-out launched an instance")
	_, err = asg.TerminateInstanceInAutoScalingGroup(t.Context(),
		&autoscaling.TerminateInstanceInAutoScalingGroupInput{InstanceId: aws.String(added), ShouldDecrementDesiredCapacity: aws.Bool(true)})
	require.NoError(t, err)
	h.clk.Advance(5 * time.Minute)
	after := h.groups()[name]
	ids := func(g sim.GroupSnapshot) (out []string) {
		for _, i := range g.Instances {
			out = append(out, i.ID)
		}
		return out
	}
	require.Equal(t, before.Desired, after.Desired)
	require.ElementsMatch(t, ids(before), ids(after), "the instances the last check saw")

	err = x.step(execution.TaskCleanUpSuccess)
	var halt *failure.HaltError
	require.ErrorAs(t, err, &halt, "%v", err)
	assert.Contains(t, halt.Reason, "service web: 2 instances of its new group terminated during the deploy, more than its max_terms of 1")
	assert.Contains(t, h.groups(), naming.GroupName(project, config, "web", prev.ReleaseID))
}

// TestSwapReadsManyActivitiesApart: when the scaling activities no check
// read take more than tuning.GateReadsInline pages (a page per 100
// instances of a group's launch count, and one more: here the worker's
// report says 1,000), the swap reads them in an invocation of their own,
// and the gate follows at once in the next, reading none again (a gate
// the state machine retried asks each group whether an activity began
// since). A termination they
// show (an
// instance replaced before the first check, max_terms 0) fails the
// release there already, before the point of no return.
func TestSwapReadsManyActivitiesApart(t *testing.T) {
	for _, tc := range []struct{ terminate, retried bool }{{}, {retried: true}, {terminate: true}} {
		terminate := tc.terminate
		t.Run(fmt.Sprintf("terminated %v, retried %v", tc.terminate, tc.retried), func(t *testing.T) {
			h := newHarness(t)
			withWorker := func(r *release.Release) *release.Release {
				r.Services["worker"] = &release.Service{InstanceType: "t3.small", SecurityGroups: []string{"ec2::coinbase/deploy-test::development-worker"}}
				return r
			}
			prev := withWorker(h.baseRelease())
			h.start(prev).succeed()
			h.clk.Advance(time.Hour)
			r := withWorker(h.baseRelease())
			x := h.start(r)
			require.NoError(t, x.steps(upToDeploy...))
			if terminate {
				name := naming.GroupName(project, config, "worker", r.ReleaseID)
				_, err := h.world.Clients(account, region).AutoScaling.(*sim.AutoScaling).TerminateInstanceInAutoScalingGroup(t.Context(),
					&autoscaling.TerminateInstanceInAutoScalingGroupInput{InstanceId: aws.String(h.groups()[name].Instances[0].ID), ShouldDecrementDesiredCapacity: aws.Bool(false)})
				require.NoError(t, err)
				h.clk.Advance(2 * time.Minute)
			}
			_, err := x.untilHealthy(100)
			require.NoError(t, err, "no check saw a termination")
			worker := x.state.Health.Services["worker"]
			worker.Launch = 1000
			x.state.Health.Services["worker"] = worker
			var ops []string
			h.world.OnCall(func(_ context.Context, c sim.Call) { ops = append(ops, c.Op) })

			err = x.once(execution.TaskCleanUpSuccess)
			assert.Equal(t, 2, countOf(ops, "DescribeScalingActivities"), "each group's activities, a page each")
			assert.Zero(t, countOf(ops, "DescribeAutoScalingGroups"), "and nothing of the gate's")
			if terminate {
				var halt *failure.HaltError
				require.ErrorAs(t, err, &halt, "%v", err)
				assert.Contains(t, halt.Reason, "service worker: 1 instance of its new group terminated during the deploy")
				assert.Contains(t, h.groups(), naming.GroupName(project, config, "web", prev.ReleaseID))
				return
			}
			require.NoError(t, err)
			require.False(t, x.state.Retire.Done)
			assert.Zero(t, x.state.Retire.WaitSeconds, "the gate at once")
			for svc, s := range x.state.Health.Services {
				assert.NotNil(t, s.ActivitiesAt, svc)
			}
			ops = nil
			if tc.retried {
				x.ctx.RetryCount = 1 // as the state machine's Retry runs it again
			}
			require.NoError(t, x.once(execution.TaskCleanUpSuccess))
			if tc.retried {
				assert.Equal(t, 2, countOf(ops, "DescribeScalingActivities"), "the gate asks each group for its newest activity")
			} else {
				assert.Zero(t, countOf(ops, "DescribeScalingActivities"), "the gate reads none: they were read moments before")
			}
			_, found, err := h.ledger.GetDeleting(t.Context(), project, config, r.ReleaseID)
			require.NoError(t, err)
			assert.True(t, found, "the gate passed")
		})
	}
}

// countOf is how many of ops are op.
func countOf(ops []string, op string) int {
	n := 0
	for _, o := range ops {
		if o == op {
			n++
		}
	}
	return n
}

// TestGroupsLaunchOnlyWhatFerryCreated: after a deploy, someone allowed
// ec2:CreateLaunchTemplateVersion and ec2:ModifyLaunchTemplate adds a
// version of the group's template with other user data and makes it the
// default. Auto Scaling resolves "$Latest" and "$Default" at each launch
// (LaunchTemplateSpecification, Auto Scaling API Reference), so a group
// using either would launch it at the next replacement. ferry pins its
// groups to the version it created: the replacement runs the release.
func TestGroupsLaunchOnlyWhatFerryCreated(t *testing.T) {
	h := newHarness(t)
	r := h.baseRelease()
	h.start(r).succeed()
	ctx := t.Context()
	clients := h.world.Clients(account, region)
	name := naming.GroupName(project, config, "web", r.ReleaseID)
	forged := base64.StdEncoding.EncodeToString([]byte("#!/bin/sh\n" + sim.UserDataMarker + " " + string(sim.NeverHealthy) + "\n"))
	ec2c := clients.EC2.(*sim.EC2)
	_, err := ec2c.CreateLaunchTemplateVersion(ctx, &ec2.CreateLaunchTemplateVersionInput{
		LaunchTemplateName: aws.String(name), SourceVersion: aws.String("1"),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{UserData: aws.String(forged)},
	})
	require.NoError(t, err)
	_, err = ec2c.ModifyLaunchTemplate(ctx, &ec2.ModifyLaunchTemplateInput{LaunchTemplateName: aws.String(name), DefaultVersion: aws.String("2")})
	require.NoError(t, err)

	var victim string
	for _, i := range h.groups()[name].Instances {
		if i.Lifecycle == "InService" {
			victim = i.ID
		}
	}
	_, err = clients.AutoScaling.(*sim.AutoScaling).TerminateInstanceInAutoScalingGroup(ctx,
		&autoscaling.TerminateInstanceInAutoScalingGroupInput{InstanceId: aws.String(victim), ShouldDecrementDesiredCapacity: aws.Bool(false)})
	require.NoError(t, err)
	h.clk.Advance(10 * time.Minute)

	out, err := clients.AutoScaling.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{name}})
	require.NoError(t, err)
	require.Len(t, out.AutoScalingGroups, 1)
	replaced := false
	for _, i := range out.AutoScalingGroups[0].Instances {
		if i.LifecycleState != astypes.LifecycleStateInService {
			continue
		}
		replaced = replaced || aws.ToString(i.InstanceId) > victim // ids grow with each launch
		assert.Equal(t, "1", aws.ToString(i.LaunchTemplate.Version), "instance %s", aws.ToString(i.InstanceId))
	}
	assert.True(t, replaced, "the terminated instance was replaced")
	for _, i := range h.groups()[name].Instances {
		assert.NotEqual(t, sim.NeverHealthy, i.Behavior, "instance %s runs the forged user data", i.ID)
	}
}

// TestSwapReadsOpenTheWindowOnceRead: a termination only the swap's own
// reading of the activities shows (an instance replaced before the first
// check, within max_terms) restarts the service's stability window once
// those reads are done, not at the invocation's start: in a Lambda the
// clock runs while AWS answers (here each call takes two seconds).
func TestSwapReadsOpenTheWindowOnceRead(t *testing.T) {
	h := newHarness(t)
	withWorker := func(r *release.Release) *release.Release {
		r.Services["worker"] = &release.Service{InstanceType: "t3.small", SecurityGroups: []string{"ec2::coinbase/deploy-test::development-worker"},
			Autoscaling: &release.Autoscaling{MinSize: 1, MaxSize: 2, MaxTerms: 1}}
		return r
	}
	h.start(withWorker(h.baseRelease())).succeed()
	h.clk.Advance(time.Hour)
	r := withWorker(h.baseRelease())
	x := h.start(r)
	require.NoError(t, x.steps(upToDeploy...))
	name := naming.GroupName(project, config, "worker", r.ReleaseID)
	_, err := h.world.Clients(account, region).AutoScaling.(*sim.AutoScaling).TerminateInstanceInAutoScalingGroup(t.Context(),
		&autoscaling.TerminateInstanceInAutoScalingGroupInput{InstanceId: aws.String(h.groups()[name].Instances[0].ID), ShouldDecrementDesiredCapacity: aws.Bool(false)})
	require.NoError(t, err)
	h.clk.Advance(2 * time.Minute)
	_, err = x.untilHealthy(100)
	require.NoError(t, err, "no check saw the termination")
	worker := x.state.Health.Services["worker"]
	worker.Launch = 1000 // its activities take more pages than the gate reads inline
	x.state.Health.Services["worker"] = worker

	start := h.clk.Now()
	var lastRead time.Time
	h.world.OnCall(func(_ context.Context, c sim.Call) {
		h.clk.Advance(2 * time.Second)
		if c.Op == "DescribeScalingActivities" {
			lastRead = h.clk.Now()
		}
	})
	require.NoError(t, x.once(execution.TaskCleanUpSuccess))
	require.Greater(t, lastRead, start, "the swap read the activities apart")
	since := x.state.Health.Services["worker"].HealthySince
	require.NotNil(t, since)
	assert.False(t, since.Before(lastRead), "the window restarts once the reads that showed the termination are done (%s), not at the invocation's start (%s): %s",
		lastRead.Format(time.TimeOnly), start.Format(time.TimeOnly), since.Format(time.TimeOnly))
}
