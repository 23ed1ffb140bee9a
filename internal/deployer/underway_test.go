package deployer

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/local/s3server/s3test"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/tuning"
)

// startMarkers are the start markers of the deploys to account's region.
func (h *harness) startMarkers(acct string) []string {
	h.t.Helper()
	return h.keys(naming.StartsPrefix(acct, region))
}

// onTheirWay writes the start markers of n other deploys to acct's region,
// started at at, and returns their keys.
func (h *harness) onTheirWay(acct string, n int, at time.Time) []string {
	h.t.Helper()
	var keys []string
	for i := range n {
		key := naming.StartKey(acct, region, naming.StartStamp(at), naming.ExecutionName(fmt.Sprintf("other/p%02d", i), config, fmt.Sprintf("other-%02d", i)))
		s3test.Put(h.t, h.s3, bucket, key, "")
		keys = append(keys, key)
	}
	return keys
}

// TestStartMarkerLifecycle: a deploy's start marker (ValidateResources,
// lock.Starts.Take) says it is on its way to a healthy fleet: it is
// written when the deploy takes its turn, and cleared at its last health
// check (healthy, no canary step left), when its deploy fails
// (CleanUpFailure's first step) or ends before Deploy (ReleaseLock).
func TestStartMarkerLifecycle(t *testing.T) {
	tests := []struct {
		name string
		// end runs the deploy from ValidateResources on, to where its
		// marker must be gone.
		end func(t *testing.T, x *run)
	}{
		{"healthy", func(t *testing.T, x *run) {
			require.NoError(t, x.steps(execution.TaskPublish, execution.TaskDeploy))
			x.h.clk.Advance(time.Minute)
			require.NoError(t, x.once(execution.TaskCheckHealthy))
			require.False(t, x.state.Health.Healthy)
			assert.Len(t, x.h.startMarkers(account), 1, "on its way while not healthy")
			_, err := x.untilHealthy(200)
			require.NoError(t, err)
		}},
		{"timed out in its health loop", func(t *testing.T, x *run) {
			require.NoError(t, x.steps(execution.TaskPublish, execution.TaskDeploy))
			x.state.Error = &execution.Error{Error: failure.NameTimeout, Cause: failure.Cause(&failure.TimeoutError{Timeout: time.Hour, Elapsed: time.Hour})}
			require.NoError(t, x.once(execution.TaskCleanUpFailure))
		}},
		{"ended before Deploy", func(t *testing.T, x *run) {
			x.state.Error = &execution.Error{Error: failure.NameHalt, Cause: failure.Cause(&failure.HaltError{Reason: "halted"})}
			require.NoError(t, x.stepRetrying(execution.TaskReleaseLock))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			x := h.start(h.baseRelease())
			require.NoError(t, x.steps(execution.TaskValidate, execution.TaskLock, execution.TaskValidateResources))
			require.Equal(t, []string{naming.StartKey(account, region, naming.StartStamp(x.ctx.StartTime), naming.ExecutionName(project, config, x.state.ReleaseID))},
				h.startMarkers(account), "written when it takes its turn")
			tt.end(t, x)
			assert.Empty(t, h.startMarkers(account), "cleared: no longer on its way")
		})
	}
}

// TestRetirementGivesWayToDeploysOnTheirWay: a retirement past its point
// of no return spends the account's one Auto Scaling bucket (Amazon EC2
// Auto Scaling API Reference, Welcome, API request rate) that deploys to
// its account and region still need to reach healthy before their
// timeouts. While their start markers say they are on their way, its
// steps space out by tuning.RetireYieldPer each (at most
// tuning.RetireYieldMax); another account's deploys, markers older than
// tuning.UnderwayHorizon, and deploys that have arrived do not slow it;
// from tuning.RetireYieldFor on it goes at its own pace, and it still
// ends in Success once its hooks let the previous instances go.
func TestRetirementGivesWayToDeploysOnTheirWay(t *testing.T) {
	h := newHarness(t)
	r1 := h.baseRelease()
	withTerminationHook(r1, 3600)
	r2 := h.baseRelease()
	x := h.atSwap(r1, r2)
	require.Empty(t, h.startMarkers(account), "both deploys arrived: healthy")

	ownPace := int((30 * time.Second * 6 / 5).Seconds()) // RetireChecks' longest, jittered
	const k = 20
	yieldLow := int((k * tuning.RetireYieldPer * 4 / 5).Seconds())
	yieldHigh := int((k * tuning.RetireYieldPer * 6 / 5).Seconds())
	step := func(what string) int {
		t.Helper()
		require.NoError(t, x.once(execution.TaskCleanUpSuccess), what)
		require.False(t, x.state.Retire.Done, what)
		w := x.state.Retire.WaitSeconds
		h.clk.Advance(time.Duration(w) * time.Second)
		return w
	}

	h.onTheirWay("222222222222", k, h.clk.Now())
	h.onTheirWay(account, k, h.clk.Now().Add(-tuning.UnderwayHorizon-time.Minute))
	assert.LessOrEqual(t, step("another account's, and stale"), ownPace, "not slowed by another account's deploys or stale markers")

	underway := h.onTheirWay(account, k, h.clk.Now())
	for i := range 4 {
		w := step("yielding")
		assert.GreaterOrEqual(t, w, yieldLow, "step %d gives way to %d deploys on their way", i, k)
		assert.LessOrEqual(t, w, yieldHigh, "step %d", i)
	}
	for _, key := range underway {
		_, err := h.s3.DeleteObject(t.Context(), &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		require.NoError(t, err)
	}
	// Once they are healthy it no longer gives way to them, but steps at
	// its share of the refill beside their retirements.
	beside := int(math.Ceil((time.Duration(retireCalls(k)*(k+1)) * time.Second / limits.AutoScalingRefill).Seconds() * (1 + tuning.ShareJitter)))
	require.Less(t, beside, yieldLow)
	assert.LessOrEqual(t, step("arrived"), max(ownPace, beside), "no longer giving way once they are healthy")

	h.onTheirWay(account, k, h.clk.Now())
	plan, found, err := h.ledger.GetDeleting(t.Context(), project, config, r2.ReleaseID)
	require.NoError(t, err)
	require.True(t, found)
	for h.clk.Now().Sub(plan.Since) < tuning.RetireYieldFor {
		step("yielding until its bound")
	}
	assert.LessOrEqual(t, step("past RetireYieldFor"), ownPace, "a retirement gives way for RetireYieldFor at most")
	require.NoError(t, x.step(execution.TaskCleanUpSuccess), "it still ends")
	assert.Less(t, h.clk.Now().Sub(plan.Since), tuning.RetireTimeout)
	o, found, err := h.ledger.GetOutcome(t.Context(), project, config, r2.ReleaseID)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, execution.EndSuccess, o.End)
}

// TestCleanUpFailureGivesWay: the clean-up of a failed release retires
// its new groups as CleanUpSuccess retires the previous ones, spending
// the account's one Auto Scaling bucket (Amazon EC2 Auto Scaling API
// Reference, Welcome, API request rate) the deploys on their way beside it
// need. While their start markers are there, a step that leaves a group
// draining waits K times tuning.RetireYieldPer (jittered by a fifth)
// rather than tuning.RetireCheckInterval; alone it waits that.
func TestCleanUpFailureGivesWay(t *testing.T) {
	const k = 20
	for _, tc := range []struct {
		name      string
		underway  int
		low, high int
	}{
		{"alone", 0, int(tuning.RetireCheckInterval / time.Second), int(tuning.RetireCheckInterval / time.Second)},
		{"beside others", k, int((k * tuning.RetireYieldPer * 4 / 5).Seconds()), int((k * tuning.RetireYieldPer * 6 / 5).Seconds())},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			x := h.start(h.baseRelease())
			require.NoError(t, x.steps(upToDeploy...))
			h.onTheirWay(account, tc.underway, h.clk.Now())
			x.state.Error = &execution.Error{Error: failure.NameTimeout, Cause: failure.Cause(&failure.TimeoutError{Timeout: time.Hour, Elapsed: time.Hour})}
			require.NoError(t, x.once(execution.TaskCleanUpFailure))
			require.NotNil(t, x.state.Retire, "a group drains: the clean-up steps again")
			require.False(t, x.state.Retire.Done)
			assert.GreaterOrEqual(t, x.state.Retire.WaitSeconds, tc.low)
			assert.LessOrEqual(t, x.state.Retire.WaitSeconds, tc.high)
		})
	}
}

// TestRetirementStepsWithinTheirShare: a step of a retirement spends the
// account's one Auto Scaling bucket (Amazon EC2 Auto Scaling API
// Reference, Welcome, API request rate: 40 calls, refilled at 10 a
// second) that deploys on their way beside it spend too, and, once
// healthy, their retirements. Beside nine, a step of retiring eight
// previous groups makes at most retireCalls(9) (half the bucket) of
// the calls that step the groups (detach, ask their attachments, scale
// in), and the next step goes on where it stopped; it keeps that share
// after the nine arrived (their retirements step beside it), though its
// steps no longer give way to them (their share of the refill is less
// than its own pace: TestRetirementStepsSpreadBesideOthers). Alone, a step takes every
// group's step at once. Either way the release succeeds.
func TestRetirementStepsWithinTheirShare(t *testing.T) {
	stepOps := map[string]bool{"DetachLoadBalancers": true, "DetachLoadBalancerTargetGroups": true, "DescribeLoadBalancers": true,
		"DescribeLoadBalancerTargetGroups": true, "SetInstanceProtection": true, "SuspendProcesses": true, "ResumeProcesses": true, "UpdateAutoScalingGroup": true}
	ownPace := int((30 * time.Second * 6 / 5).Seconds()) // RetireChecks' longest, jittered
	retire := func(t *testing.T, k int) (most int) {
		h, r1 := manyServices(t, 8)
		r2 := h.baseRelease()
		r2.Services = r1.Services
		x := h.atSwap(r1, r2)
		underway := h.onTheirWay(account, k, h.clk.Now())
		for steps := 1; ; steps++ {
			require.LessOrEqual(t, steps, limits.MaxRetireSteps)
			before := len(h.world.CallLog())
			require.NoError(t, x.once(execution.TaskCleanUpSuccess))
			if x.state.Retire.Done {
				break
			}
			n := 0
			for _, c := range h.world.CallLog()[before:] {
				if c.Service == "Auto Scaling" && stepOps[c.Op] {
					n++
				}
			}
			most = max(most, n)
			if steps == 2 {
				for _, key := range underway {
					_, err := h.s3.DeleteObject(t.Context(), &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
					require.NoError(t, err)
				}
			}
			if steps > 2 {
				assert.LessOrEqual(t, x.state.Retire.WaitSeconds, ownPace, "step %d: no longer giving way", steps)
			}
			h.clk.Advance(time.Duration(x.state.Retire.WaitSeconds) * time.Second)
		}
		o, found, err := h.ledger.GetOutcome(t.Context(), project, config, r2.ReleaseID)
		require.NoError(t, err)
		require.True(t, found)
		assert.Equal(t, execution.EndSuccess, o.End)
		return most
	}
	assert.Greater(t, retire(t, 0), retireCalls(9), "alone: every group's step at once")
	most := retire(t, 9)
	assert.Positive(t, most)
	assert.LessOrEqual(t, most, retireCalls(9), "beside nine, and once they arrived: its share of the bucket")
}

// TestRetirementStepsSpreadBesideOthers: the wait before a retirement's
// next step is the longest of its own pace, the wait that gives way to
// the deploys on their way (k times tuning.RetireYieldPer, jittered by a
// fifth) and the time its (crowd+1)-th of the account's Auto Scaling
// refill (Amazon EC2 Auto Scaling API Reference, Welcome, API request
// rate: 10 a second) takes to bring back a step's calls (retireCalls),
// jittered by tuning.ShareJitter and at most tuning.RetireYieldMax: the
// retirements that gave way together, once the deploys arrived, spread
// their steps rather than all step at their own pace at once.
func TestRetirementStepsSpreadBesideOthers(t *testing.T) {
	const own = 30
	share := func(crowd int) time.Duration {
		return min(time.Duration(retireCalls(crowd)*(crowd+1))*time.Second/limits.AutoScalingRefill, tuning.RetireYieldMax)
	}
	// jittered is d's range jittered by a share by either way, seconds.
	jittered := func(d time.Duration, by float64) [2]int {
		return [2]int{int(d.Seconds() * (1 - by)), int(math.Ceil(d.Seconds() * (1 + by)))}
	}
	tests := []struct {
		name string
		b    beside
		span [2]int
	}{
		{"alone: its own pace", beside{}, [2]int{own, own}},
		{"a few beside it: its own pace still", beside{crowd: 2}, [2]int{own, own}},
		{"twenty on their way: giving way to them", beside{k: 20, crowd: 20}, jittered(20*tuning.RetireYieldPer, 0.2)},
		{"99 arrived, retiring beside it: its share of the refill", beside{crowd: 99}, jittered(share(99), tuning.ShareJitter)},
		{"a thousand: at most RetireYieldMax", beside{crowd: 1000}, jittered(tuning.RetireYieldMax, tuning.ShareJitter)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen := map[int]bool{}
			for i := range 50 {
				req := execution.Request{Execution: execution.Context{ID: fmt.Sprintf("exec-%d", i)}}
				w := tt.b.wait(req, time.Duration(i)*time.Minute, own)
				assert.GreaterOrEqual(t, w, max(own, tt.span[0]))
				assert.LessOrEqual(t, w, max(own, tt.span[1]))
				seen[w] = true
			}
			if tt.span[0] > own {
				assert.Greater(t, len(seen), 5, "spread, not in step")
			}
		})
	}
}

// TestDeploysOnTheirWayListedOnlyWhenTheyMatter: the start markers of
// the deploys on their way (one S3 LIST) are listed by a health check
// only while Deploy, or the check before, counted some: a deploy that
// went alone, whose retirement has nothing to retire, never lists them
// after Deploy. A check whose listing fails keeps the count it had: its
// reads never grow for not knowing.
func TestDeploysOnTheirWayListedOnlyWhenTheyMatter(t *testing.T) {
	starts := naming.StartsPrefix(account, region)
	t.Run("alone", func(t *testing.T) {
		h := newHarness(t)
		x := h.start(h.baseRelease())
		require.NoError(t, x.steps(upToDeploy...))
		listed := 0
		h.store.Deny = func(op, key string) bool {
			if op == "ListObjectsV2" && key == starts {
				listed++
			}
			return false
		}
		_, err := x.untilHealthy(200)
		require.NoError(t, err)
		require.NoError(t, x.step(execution.TaskCleanUpSuccess))
		require.True(t, x.state.Retire.Done)
		assert.Zero(t, listed)
	})
	t.Run("a failed listing", func(t *testing.T) {
		h := newHarness(t)
		x := h.start(h.baseRelease())
		h.onTheirWay(account, 3, h.clk.Now())
		require.NoError(t, x.steps(upToDeploy...))
		require.Equal(t, 3, x.state.Health.Underway, "counted by Deploy")
		h.onTheirWay(account, 2, h.clk.Now())
		h.clk.Advance(time.Duration(x.state.Health.WaitSeconds) * time.Second)
		require.NoError(t, x.step(execution.TaskCheckHealthy))
		require.Equal(t, 5, x.state.Health.Underway, "counted again")
		h.store.Deny = func(op, key string) bool { return op == "ListObjectsV2" && key == starts }
		h.clk.Advance(time.Duration(x.state.Health.WaitSeconds) * time.Second)
		require.NoError(t, x.step(execution.TaskCheckHealthy))
		assert.Equal(t, 5, x.state.Health.Underway, "kept")
	})
}
