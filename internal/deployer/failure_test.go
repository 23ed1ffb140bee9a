package deployer

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/events"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/halt"
	"github.com/ferryhq/ferry/internal/store/ledger"
	"github.com/ferryhq/ferry/internal/tuning"
)

// assertFailedClean checks what a failure path must leave: nothing of the
// release in the target, the outcome FailureClean with the error, the lock
// released and no halt marker.
func assertFailedClean(t *testing.T, h *harness, r *release.Release, errName string) {
	t.Helper()
	ctx := t.Context()
	h.clk.Advance(10 * time.Minute) // deleted groups vanish
	for name, g := range h.groups() {
		assert.NotEqual(t, r.ReleaseID, g.Tags[naming.TagReleaseID], "group %s of the release is left", name)
	}
	for _, lt := range h.account().LaunchTemplates {
		assert.NotEqual(t, r.ReleaseID, lt.Tags[naming.TagReleaseID], "launch template %s is left", lt.Name)
	}
	for _, a := range h.account().Alarms {
		assert.NotContains(t, a.Name, r.ReleaseID, "alarm %s is left", a.Name)
	}
	o, found, err := h.ledger.GetOutcome(ctx, project, config, r.ReleaseID)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, execution.EndFailureClean, o.End)
	assert.Equal(t, harnessVersion, o.DeployerVersion)
	assert.Equal(t, errName, o.Error)
	assert.Equal(t, r.CreatedBy, o.CreatedBy)
	_, held, err := h.locks.Get(ctx, project, config)
	require.NoError(t, err)
	assert.False(t, held, "the lock is released")
	_, _, found, err = h.halts.Get(ctx, project, config)
	require.NoError(t, err)
	assert.False(t, found, "the halt marker is removed")
}

func TestHalt(t *testing.T) {
	ctx := t.Context()
	marker := halt.Marker{By: "bob", Reason: "bad build"}

	t.Run("fresh marker before Deploy: nothing is created", func(t *testing.T) {
		h := newHarness(t)
		r := h.baseRelease()
		x := h.start(r)
		require.NoError(t, x.steps(upToDeploy[:4]...))
		require.NoError(t, h.halts.Put(ctx, project, config, marker))
		before := h.snapshot()
		err := x.step(execution.TaskDeploy)
		var he *failure.HaltError
		require.ErrorAs(t, err, &he)
		assert.Equal(t, "halted: halt marker by bob: bad build", err.Error())
		assert.Equal(t, before, h.snapshot())
		require.NoError(t, x.fail(err))
		assertFailedClean(t, h, r, failure.NameHalt)
	})

	t.Run("stale marker is ignored", func(t *testing.T) {
		h := newHarness(t)
		require.NoError(t, h.halts.Put(ctx, project, config, marker))
		h.clk.Advance(time.Minute)
		x := h.start(h.baseRelease())
		x.succeed()
		_, _, found, err := h.halts.Get(ctx, project, config)
		require.NoError(t, err)
		assert.False(t, found, "success removes the marker")
	})

	t.Run("fresh marker during health checks", func(t *testing.T) {
		h := newHarness(t)
		r := h.baseRelease()
		x := h.start(r)
		require.NoError(t, x.steps(upToDeploy...))
		h.clk.Advance(5 * time.Second)
		require.NoError(t, x.step(execution.TaskCheckHealthy))
		require.NoError(t, h.halts.Put(ctx, project, config, marker))
		h.clk.Advance(5 * time.Second)
		err := x.step(execution.TaskCheckHealthy)
		var he *failure.HaltError
		require.ErrorAs(t, err, &he)
		require.NoError(t, x.fail(err))
		assertFailedClean(t, h, r, failure.NameHalt)
	})
}

func TestTimeout(t *testing.T) {
	h := newHarness(t)
	r := h.baseRelease()
	r.AMI = "ubuntu-broken"
	r.Timeout = 180
	x := h.start(r)
	require.NoError(t, x.steps(upToDeploy...))
	var err error
	for range 100 {
		assert.LessOrEqual(t, h.clk.Now().Add(time.Duration(x.state.Health.WaitSeconds)*time.Second),
			x.ctx.StartTime.Add(181*time.Second), "the wait never passes the timeout by more than a second")
		h.clk.Advance(time.Duration(x.state.Health.WaitSeconds) * time.Second)
		if err = x.step(execution.TaskCheckHealthy); err != nil {
			break
		}
		require.False(t, x.state.Health.Healthy)
	}
	var te *failure.TimeoutError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, 180*time.Second, te.Timeout)
	assert.Greater(t, x.state.Health.Services["web"].Launched, 0)
	require.NoError(t, x.fail(err))
	assertFailedClean(t, h, r, failure.NameTimeout)
}

func TestCrashLoopHalts(t *testing.T) {
	h := newHarness(t)
	r := h.baseRelease()
	r.AMI = "ubuntu-crashing"
	x := h.start(r)
	require.NoError(t, x.steps(upToDeploy...))
	var err error
	for range 200 {
		h.clk.Advance(time.Duration(x.state.Health.WaitSeconds) * time.Second)
		if err = x.step(execution.TaskCheckHealthy); err != nil {
			break
		}
	}
	var he *failure.HaltError
	require.ErrorAs(t, err, &he)
	assert.Contains(t, err.Error(), "service web: 1 instance of its new group terminated during the deploy, more than its max_terms of 0")
	require.NoError(t, x.fail(err))
	assertFailedClean(t, h, r, failure.NameHalt)
}

func TestCrashLoopWithinMaxTerms(t *testing.T) {
	// A user data marker makes the instances crash; max_terms tolerates
	// some terminating instances, then the timeout ends the deploy.
	h := newHarness(t)
	r := h.baseRelease()
	r.UserData = "#ferry-sim: crash-loop\n"
	r.Timeout = 300
	r.Services["web"].Autoscaling.MaxTerms = 100
	x := h.start(r)
	require.NoError(t, x.steps(upToDeploy...))
	var err error
	terminating := 0
	for range 200 {
		h.clk.Advance(time.Duration(x.state.Health.WaitSeconds) * time.Second)
		if err = x.step(execution.TaskCheckHealthy); err != nil {
			break
		}
		terminating = max(terminating, x.state.Health.Services["web"].Terminating)
	}
	var te *failure.TimeoutError
	require.ErrorAs(t, err, &te)
	assert.Positive(t, terminating, "terminating instances were seen")
}

// TestServiceRemovedFromRelease: a release that leaves out a service
// whose groups serve is refused at ValidateResources, naming it, with
// nothing created; one that names it under remove retires its groups at
// the swap.
func TestServiceRemovedFromRelease(t *testing.T) {
	h := newHarness(t)
	r1 := h.baseRelease()
	r1.Services["worker"] = &release.Service{InstanceType: "t3.small", SecurityGroups: []string{"ec2::coinbase/deploy-test::development-worker"}}
	h.start(r1).succeed()
	worker1 := naming.GroupName(project, config, "worker", r1.ReleaseID)
	require.Contains(t, h.groups(), worker1)

	h.clk.Advance(time.Hour)
	left := h.baseRelease()
	x := h.start(left)
	require.NoError(t, x.steps(upToDeploy[:2]...))
	err := x.step(execution.TaskValidateResources)
	var bad *failure.BadReleaseError
	require.ErrorAs(t, err, &bad)
	assert.Equal(t, `bad release: remove: the deploy would delete the serving groups of worker, which the release does not deploy; name them under "remove" to delete them, or deploy them`, err.Error())
	require.NoError(t, x.fail(err))
	assert.Len(t, h.groups(), 2, "nothing created, nothing retired")

	h.clk.Advance(time.Hour)
	r2 := h.baseRelease()
	r2.Remove = []string{"worker", "never-deployed"}
	x2 := h.start(r2)
	x2.succeed()
	assert.Equal(t, []string{"web"}, x2.state.Services)
	h.clk.Advance(10 * time.Minute)
	groups := h.groups()
	assert.NotContains(t, groups, worker1, "the removed service's group is deleted")
	assert.NotContains(t, groups, naming.GroupName(project, config, "web", r1.ReleaseID))
	assert.Len(t, groups, 1)
	assert.Len(t, h.account().LaunchTemplates, 1)
}

func TestCleanUpSuccessRefusesUnhealthy(t *testing.T) {
	h := newHarness(t)
	r1 := h.baseRelease()
	h.start(r1).succeed()
	h.clk.Advance(time.Hour)
	r2 := h.baseRelease()
	r2.AMI = "ubuntu-broken"
	x := h.start(r2)
	require.NoError(t, x.steps(upToDeploy...))
	h.clk.Advance(5 * time.Minute)
	before := h.snapshot()
	err := x.step(execution.TaskCleanUpSuccess)
	var he *failure.HaltError
	require.ErrorAs(t, err, &he)
	assert.Contains(t, err.Error(), "no longer stable before retiring the previous groups: web")
	assert.Equal(t, before, h.snapshot(), "nothing is deleted")
	require.NoError(t, x.fail(err))
	assert.Contains(t, h.groups(), naming.GroupName(project, config, "web", r1.ReleaseID), "the previous release stays")
	assertFailedClean(t, h, r2, failure.NameHalt)
}

// TestCleanUpSuccessPastPointOfNoReturn: once CleanUpSuccess recorded the
// groups it retires, a retry finishes the swap whatever the new groups
// look like now: failing into CleanUpFailure would delete the only groups
// left serving. Without the record, the same unhealthy release is refused
// before anything is deleted.
func TestCleanUpSuccessPastPointOfNoReturn(t *testing.T) {
	for _, past := range []bool{false, true} {
		t.Run(map[bool]string{false: "gate", true: "past the point of no return"}[past], func(t *testing.T) {
			h := newHarness(t)
			r := h.baseRelease()
			r.AMI = "ubuntu-broken"
			x := h.start(r)
			require.NoError(t, x.steps(upToDeploy...))
			h.clk.Advance(5 * time.Minute)
			if past {
				_, _, err := h.ledger.CreateDeleting(t.Context(), project, config, ledger.Intent{ReleaseID: r.ReleaseID, Execution: x.ctx.ID})
				require.NoError(t, err)
			}
			err := x.step(execution.TaskCleanUpSuccess)
			if !past {
				var halt *failure.HaltError
				require.ErrorAs(t, err, &halt)
				assert.Contains(t, h.groups(), naming.GroupName(project, config, "web", r.ReleaseID))
				return
			}
			require.NoError(t, err)
			out, found, err := h.ledger.GetOutcome(t.Context(), project, config, r.ReleaseID)
			require.NoError(t, err)
			require.True(t, found)
			assert.Equal(t, execution.EndSuccess, out.End)
		})
	}
}

func TestDeployErrorThenCleanUp(t *testing.T) {
	h := newHarness(t)
	r := h.baseRelease()
	x := h.start(r)
	require.NoError(t, x.steps(upToDeploy[:4]...))
	_, err := h.world.Faults().Add(sim.Rule{Op: "CreateAutoScalingGroup", Err: sim.AccessDenied()})
	require.NoError(t, err)
	err = x.step(execution.TaskDeploy)
	var de *failure.DeployError
	require.ErrorAs(t, err, &de)
	require.Len(t, h.account().LaunchTemplates, 1, "the launch template was made before the group failed")
	h.world.Faults().Clear()
	require.NoError(t, x.fail(err))
	assertFailedClean(t, h, r, failure.NameDeploy)
}

func TestCleanUpFailureLeftovers(t *testing.T) {
	h := newHarness(t)
	r := h.baseRelease()
	x := h.start(r)
	require.NoError(t, x.steps(upToDeploy...))
	_, err := h.world.Faults().Add(sim.Rule{Op: "DeleteAutoScalingGroup", Err: sim.AccessDenied()})
	require.NoError(t, err)
	// What the Catch stores: the function error payload, as AWS reports it.
	x.state.Error = &execution.Error{Error: failure.NameTimeout, Cause: `{"errorMessage":"timed out","errorType":"TimeoutError"}`}
	err = x.step(execution.TaskCleanUpFailure)
	var ce *failure.CleanUpError
	require.ErrorAs(t, err, &ce)
	name := naming.GroupName(project, config, "web", r.ReleaseID)
	assert.Equal(t, []string{"auto scaling group " + name, "launch template " + name}, ce.Leftovers)
	o, found, err := h.ledger.GetOutcome(t.Context(), project, config, r.ReleaseID)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, execution.EndFailureDirty, o.End)
	assert.Equal(t, ce.Leftovers, o.Leftovers)
	assert.Equal(t, harnessVersion, o.DeployerVersion)
	assert.Equal(t, failure.NameTimeout, o.Error)
	assert.Equal(t, "timed out; then "+ce.Error(), o.Cause, "the outcome reads as text, not JSON")
	_, held, err := h.locks.Get(t.Context(), project, config)
	require.NoError(t, err)
	assert.True(t, held, "a dirty failure keeps the lock")

	// Transient failures are retryable, not dirty.
	h.world.Faults().Clear()
	_, err = h.world.Faults().Add(sim.Rule{Op: "DeleteAutoScalingGroup", Err: sim.InternalError()})
	require.NoError(t, err)
	err = x.step(execution.TaskCleanUpFailure)
	var re *failure.RetryableError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, failure.NameRetryable, failure.NameOf(err))
}

// A CleanUpSuccess that deleted some previous groups and then failed
// transiently is past its point of no return: when its retry finds a new
// group no longer healthy, it must not fail into CleanUpFailure (which
// would delete the new groups too, leaving a service with no group at
// all). The health gate only protects a release whose clean up has not
// started deleting.
func TestCleanUpSuccessRetryAfterPartialDeleteKeepsGoing(t *testing.T) {
	tests := []struct {
		name  string
		fault sim.Rule
	}{
		{"second group delete timed out", sim.Rule{Op: "DeleteAutoScalingGroup", Nth: 2, Err: sim.Timeout()}},
		{"second group delete failed with a 5xx", sim.Rule{Op: "DeleteAutoScalingGroup", Nth: 2, Err: sim.InternalError()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			withWorker := func(r *release.Release) *release.Release {
				r.Services["worker"] = &release.Service{InstanceType: "t3.small", SecurityGroups: []string{"ec2::coinbase/deploy-test::development-worker"}}
				return r
			}
			r1, r2 := withWorker(h.baseRelease()), withWorker(h.baseRelease())
			x := h.atSwap(r1, r2)

			_, err := h.world.Faults().Add(tt.fault)
			require.NoError(t, err)
			err = x.step(execution.TaskCleanUpSuccess)
			require.Equal(t, failure.NameRetryable, failure.NameOf(err), "%v", err)
			h.world.Faults().Clear()
			webOld := naming.GroupName(project, config, "web", r1.ReleaseID)
			h.clk.Advance(10 * time.Minute) // the deleted group vanishes
			require.NotContains(t, h.groups(), webOld, "the first previous group was deleted")

			// The new web group loses its instances before the retry.
			webNew := naming.GroupName(project, config, "web", r2.ReleaseID)
			_, err = h.world.Clients(account, region).AutoScaling.UpdateAutoScalingGroup(t.Context(), &autoscaling.UpdateAutoScalingGroupInput{
				AutoScalingGroupName: aws.String(webNew), MinSize: aws.Int32(0), DesiredCapacity: aws.Int32(0),
			})
			require.NoError(t, err)
			h.clk.Advance(10 * time.Minute)

			require.NoError(t, x.step(execution.TaskCleanUpSuccess), "the retry finishes the clean up")
			h.clk.Advance(10 * time.Minute)
			groups := h.groups()
			assert.Contains(t, groups, webNew, "the new web group is kept: it is the only one left")
			assert.NotContains(t, groups, naming.GroupName(project, config, "worker", r1.ReleaseID))
			o, found, err := h.ledger.GetOutcome(t.Context(), project, config, r2.ReleaseID)
			require.NoError(t, err)
			require.True(t, found)
			assert.Equal(t, execution.EndSuccess, o.End)
		})
	}
}

// A group Deploy created that a tag-filtered describe does not show yet
// (eventual consistency) is still found by its name and deleted: a
// FailureClean never leaves a fleet of the release running.
func TestCleanUpFailureFindsGroupsHiddenFromTagListing(t *testing.T) {
	tests := []struct {
		name  string
		fault sim.Rule
	}{
		{"alarm refused", sim.Rule{Op: "PutMetricAlarm", Err: sim.AccessDenied()}},
		{"policy refused", sim.Rule{Op: "PutScalingPolicy", Err: sim.AccessDenied()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			r := h.baseRelease()
			x := h.start(r)
			require.NoError(t, x.steps(upToDeploy[:4]...))
			h.world.Faults().HideNewGroups(1)
			_, err := h.world.Faults().Add(tt.fault)
			require.NoError(t, err)
			err = x.stepRetrying(execution.TaskDeploy)
			var de *failure.DeployError
			require.ErrorAs(t, err, &de)
			h.world.Faults().Clear()
			require.NoError(t, x.fail(err))
			assertFailedClean(t, h, r, failure.NameDeploy)
		})
	}
}

// A clean-up that is still failing transiently on its last attempt
// (tuning.TaskRetryMaxAttempts retries behind it) records the FailureDirty
// outcome the execution is heading for, naming what is left; earlier
// attempts just ask to be retried.
func TestCleanUpsExhaustedRecordTheOutcome(t *testing.T) {
	tests := []struct {
		name    string
		task    string
		retries int
		// wantErr is the error name; dirty whether a FailureDirty outcome
		// is recorded naming the group.
		wantErr string
		dirty   bool
	}{
		{"clean up success, retries left", execution.TaskCleanUpSuccess, tuning.TaskRetryMaxAttempts - 1, failure.NameRetryable, false},
		{"clean up success, last attempt", execution.TaskCleanUpSuccess, tuning.TaskRetryMaxAttempts, failure.NameCleanUp, true},
		{"clean up failure, retries left", execution.TaskCleanUpFailure, tuning.TaskRetryMaxAttempts - 1, failure.NameRetryable, false},
		{"clean up failure, last attempt", execution.TaskCleanUpFailure, tuning.TaskRetryMaxAttempts, failure.NameCleanUp, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			ctx := t.Context()
			r1, r2 := h.baseRelease(), h.baseRelease()
			x := h.atSwap(r1, r2)
			_, err := h.world.Faults().Add(sim.Rule{Op: "DeleteAutoScalingGroup", Err: sim.InternalError()})
			require.NoError(t, err)
			doomed := naming.GroupName(project, config, "web", r1.ReleaseID)
			if tt.task == execution.TaskCleanUpFailure {
				doomed = naming.GroupName(project, config, "web", r2.ReleaseID)
				x.state.Error = &execution.Error{Error: failure.NameHalt, Cause: "halted"}
			}
			x.ctx.RetryCount = tt.retries
			err = x.step(tt.task)
			require.Error(t, err)
			assert.Equal(t, tt.wantErr, failure.NameOf(err))
			out, found, gerr := h.ledger.GetOutcome(ctx, project, config, r2.ReleaseID)
			require.NoError(t, gerr)
			if !tt.dirty {
				assert.False(t, found, "no outcome while retries are left")
				return
			}
			require.True(t, found)
			assert.Equal(t, execution.EndFailureDirty, out.End)
			assert.True(t, slices.ContainsFunc(out.Leftovers, func(l string) bool { return strings.Contains(l, doomed) }),
				"leftovers %q name %s", out.Leftovers, doomed)
		})
	}
}

// ReleaseLock that cannot release the lock (here: an unreadable lock
// object) fails with LockError, which ends FailureDirty, and says so in
// the outcome instead of leaving the FailureClean it wrote first.
func TestReleaseLockFailureRecordsDirtyOutcome(t *testing.T) {
	h := newHarness(t)
	ctx := t.Context()
	r := h.baseRelease()
	x := h.start(r)
	require.NoError(t, x.steps(execution.TaskValidate, execution.TaskLock))
	_, err := h.s3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(naming.LockKey(project, config)),
		Body: strings.NewReader("not a lock")})
	require.NoError(t, err)
	x.state.Error = &execution.Error{Error: failure.NameBadRelease, Cause: "bad"}
	err = x.step(execution.TaskReleaseLock)
	assert.Equal(t, failure.NameLock, failure.NameOf(err))
	out, found, err := h.ledger.GetOutcome(ctx, project, config, r.ReleaseID)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, execution.EndFailureDirty, out.End)
	assert.Equal(t, []string{"the lock " + naming.LockKey(project, config) + " (kept)"}, out.Leftovers)
}

// TestOutcomeEventsFollowTheLock: a release whose lock cannot be released
// after its outcome is written ends FailureDirty, and its deploy events
// say only that: no Release Succeeded (CleanUpSuccess) and no Release
// Failed of a FailureClean end (ReleaseLock) before the Release Failed of
// the dirty end. The outcome is announced once the lock is released; a
// dirty end is announced even when S3 refuses its outcome record.
func TestOutcomeEventsFollowTheLock(t *testing.T) {
	failing := func(h *harness) *run {
		x := h.start(h.baseRelease())
		require.NoError(t, x.steps(execution.TaskValidate, execution.TaskLock))
		x.state.Error = &execution.Error{Error: failure.NameBadRelease, Cause: "bad"}
		return x
	}
	for _, tc := range []struct {
		name    string
		run     func(h *harness) *run
		task    string
		outcome bool // S3 refuses the outcome record too
	}{
		{"success whose lock is kept", func(h *harness) *run { return h.atSwap(h.baseRelease(), h.baseRelease()) }, execution.TaskCleanUpSuccess, false},
		{"failure whose lock is kept", failing, execution.TaskReleaseLock, false},
		{"failure whose lock and outcome S3 refuses", failing, execution.TaskReleaseLock, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			x := tc.run(h)
			outcome := naming.OutcomeKey(project, config, x.state.ReleaseID)
			h.store.Deny = func(op, key string) bool {
				return op == "DeleteObject" && key == naming.LockKey(project, config) || tc.outcome && op == "PutObject" && key == outcome
			}
			require.Error(t, x.stepRetrying(tc.task))
			var terminal []string
			for _, ev := range h.world.BusEvents() {
				var d struct {
					ExecutionARN string `json:"execution_arn"`
					End          string `json:"end"`
				}
				require.NoError(t, json.Unmarshal(ev.Detail, &d))
				if d.ExecutionARN == x.ctx.ID && (ev.DetailType == events.Succeeded.DetailType || ev.DetailType == events.Failed.DetailType) {
					terminal = append(terminal, strings.TrimSpace(ev.DetailType+" "+d.End))
				}
			}
			assert.Equal(t, []string{events.Failed.DetailType + " " + execution.EndFailureDirty}, terminal)
		})
	}
}
