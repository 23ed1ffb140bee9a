package deployer

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/fanout"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/resources"
	"github.com/ferryhq/ferry/internal/tuning"
)

// TestDeployPacedByAutoScalingBucket: every Auto Scaling call of an
// account and region takes a token from one shared bucket (Amazon EC2
// Auto Scaling API Reference, Welcome, API request rate; the simulation's
// figures, limits.AutoScalingBurst refilled at limits.AutoScalingRefill a
// second). A release of more services than the bucket holds creates the
// bucket's worth of groups in its first round (alone: its listing's
// token is back before its creates go, each call taking the modelled
// time of one, to AWS and to S3 alike, package fanout's Timeline), every
// one of them before any other mutating Auto Scaling call, and asks for
// the wait the bucket
// takes to refill before the next round creates the rest: no call of the
// deploy is throttled, and a throttled create's backoff delays no
// launch. The processes are suspended once every group is made, and the
// scaling policies put once every group's processes are suspended.
func TestDeployPacedByAutoScalingBucket(t *testing.T) {
	services := limits.AutoScalingBurst + 9
	h, r := manyServices(t, services)
	require.LessOrEqual(t, services, limits.MaxServices)
	h.timed = true
	h.spendEach(30 * time.Millisecond)
	x := h.start(r)
	require.NoError(t, x.steps(upToDeploy[:4]...))
	h.clk.Advance(time.Minute) // the bucket refilled after ValidateResources
	from := len(h.world.CallLog())

	require.NoError(t, x.once(execution.TaskDeploy))
	p := x.state.Deploy
	require.NotNil(t, p)
	assert.False(t, p.Done, "the rest is for the next round")
	assert.Zero(t, p.Throttled, "paced, not throttled")
	assert.True(t, p.Paced)
	assert.Equal(t, 1, p.WaitSeconds, "9 creates take a second of refill")
	assert.Equal(t, limits.AutoScalingBurst, len(h.groups()))
	assert.Equal(t, services, len(h.account().LaunchTemplates), "every launch template in the first round: EC2's bucket is not Auto Scaling's")

	h.clk.Advance(time.Duration(p.WaitSeconds) * time.Second) // the state machine's WaitForDeploy
	require.NoError(t, x.step(execution.TaskDeploy))
	require.True(t, x.state.Deploy.Done)
	assert.Equal(t, services, len(h.groups()))
	throttled := h.world.Throttles()
	assert.Empty(t, throttled.Retried, "no call throttled")
	assert.Empty(t, throttled.Failed)

	ops := map[string][]int{}
	for i, c := range h.world.CallLog()[from:] {
		ops[c.Op] = append(ops[c.Op], i)
	}
	require.Len(t, ops["CreateAutoScalingGroup"], services)
	require.NotEmpty(t, ops["SuspendProcesses"])
	require.NotEmpty(t, ops["PutScalingPolicy"])
	assert.Less(t, slices.Max(ops["CreateAutoScalingGroup"]), slices.Min(ops["SuspendProcesses"]), "every group is created before any is suspended")
	assert.Less(t, slices.Max(ops["SuspendProcesses"]), slices.Min(ops["PutScalingPolicy"]), "the policies come once every group's processes are suspended")
	for _, op := range []string{"PutLifecycleHook", "CreateOrUpdateTags", "AttachLoadBalancerTargetGroups", "AttachLoadBalancers", "AttachTrafficSources"} {
		assert.Empty(t, ops[op], "%s: given in CreateAutoScalingGroup", op)
	}
	_, err := x.untilHealthy(200)
	require.NoError(t, err)
}

// manyServices is a harness whose world throttles (limits.AutoScalingBurst
// refilled at limits.AutoScalingRefill a second, Auto Scaling's one
// shared bucket) and a release of n services.
func manyServices(t *testing.T, n int) (*harness, *release.Release) {
	names := make([]string, 0, n)
	for i := 1; i < n; i++ {
		names = append(names, fmt.Sprintf("svc%02d", i))
	}
	h := newHarness(t, func(s *sim.WorldSpec) {
		s.Throttle = true
		rs := &s.Accounts[0].Regions[0]
		for i, svc := range names {
			sg := "ec2::coinbase/deploy-test::development-" + svc
			rs.SecurityGroups = append(rs.SecurityGroups, sim.SecurityGroupSpec{ID: fmt.Sprintf("sg-00000000000ff%04d", i), Name: sg, VPCID: "vpc-0000000000000c001",
				Tags: map[string]string{"Name": sg, "ProjectName": project, "ConfigName": config, "ServiceName": svc}})
		}
	})
	r := h.baseRelease()
	for _, svc := range names {
		r.Services[svc] = &release.Service{InstanceType: "t3.small", SecurityGroups: []string{"ec2::coinbase/deploy-test::development-" + svc}}
	}
	return h, r
}

// TestCreatesSideBySide: a round of Deploy that finds Auto Scaling's
// shared bucket empty (Amazon EC2 Auto Scaling API Reference, Welcome,
// API request rate; a previous deploy's last calls spent it) has its
// creates throttled, each retried by the SDK after its backoff (up to
// tuning.AWSMaxAttempts attempts). Its creates go side by side
// (tuning.MakeParallel, the round's budget), so the round lasts about
// the longest one create's backoffs take, not the sum of those of the
// services queued behind a throttled one in fewer lanes: the bucket's
// refill is not left unused while launches wait.
func TestCreatesSideBySide(t *testing.T) {
	h, r := manyServices(t, tuning.AutoScalingCallsPerRound)
	x := h.start(r)
	require.NoError(t, x.steps(upToDeploy[:4]...))
	h.clk.Advance(time.Minute)
	c := h.world.Clients(account, region)
	for range limits.AutoScalingBurst {
		_, err := c.AutoScaling.DescribeAutoScalingGroups(t.Context(), &autoscaling.DescribeAutoScalingGroupsInput{})
		require.NoError(t, err)
	}
	h.world.OnCall(func(ctx context.Context, _ sim.Call) { fanout.Spend(ctx, 30*time.Millisecond) })
	ctx, tl := fanout.WithTimeline(t.Context())
	raw, err := json.Marshal(x.state)
	require.NoError(t, err)
	_, err = h.d.Invoke(ctx, execution.Request{Task: execution.TaskDeploy, Input: raw, Execution: x.ctx})
	require.NoError(t, err)
	require.Positive(t, h.world.Throttles().Retried["Auto Scaling:CreateAutoScalingGroup"], "the creates found the bucket empty")
	longest := time.Duration(0)
	for a := 1; a < tuning.AWSMaxAttempts; a++ {
		longest += time.Duration(1<<a) * time.Second
	}
	assert.Less(t, tl.Elapsed(), longest+time.Second, "a round lasts one create's backoffs at most, and its other calls")
}

// TestPacedWait: the wait before a paced round is the time the bucket
// takes to refill what that round makes (a round's budget at most), a
// second at least; a round after a paced wait makes no more than the
// wait refilled. Beside K other deploys to its account and region, a
// round makes a (K+1)-th of the budget (a second's refill of EC2's
// CreateLaunchTemplate bucket at least) and
// waits for a (K+1)-th of the refill to bring that many back, jittered
// by half either way.
func TestPacedWait(t *testing.T) {
	alone := shareOf(0, "x", 0)
	for _, tc := range []struct{ left, want int }{
		{1, 1}, {10, 1}, {11, 2}, {tuning.AutoScalingCallsPerRound, (tuning.AutoScalingCallsPerRound + 9) / 10}, {1000, (tuning.AutoScalingCallsPerRound + 9) / 10},
	} {
		assert.Equal(t, tc.want, alone.wait(tc.left), "%d left", tc.left)
	}
	assert.Equal(t, limits.AutoScalingBurst, alone.budget(&execution.State{}), "a first round alone: the whole bucket")
	assert.Equal(t, tuning.AutoScalingCallsPerRound/2, shareOf(1, "x", 0).budget(&execution.State{}), "a first round beside another: its share")
	assert.Equal(t, 2*limits.AutoScalingRefill, alone.budget(&execution.State{Deploy: &execution.Progress{WaitSeconds: 2}}))
	assert.Equal(t, tuning.AutoScalingCallsPerRound, alone.budget(&execution.State{Deploy: &execution.Progress{WaitSeconds: 20, Throttled: 1}}), "after a throttled round's wait, the whole budget")

	for _, tc := range []struct {
		k, budget, left int
		every           float64
	}{
		{1, tuning.AutoScalingCallsPerRound / 2, 1000, float64(tuning.AutoScalingCallsPerRound/2*2) / limits.AutoScalingRefill},
		{9, limits.EC2MutateRefill, 1000, 5},
		{99, limits.EC2MutateRefill, 1000, 50},
		{99, limits.EC2MutateRefill, 3, 30},
	} {
		budget, wait := 0, map[int]bool{}
		for checks := range 200 {
			s := shareOf(tc.k, fmt.Sprint("exec-", checks%7), checks)
			budget = s.budget(&execution.State{Deploy: &execution.Progress{WaitSeconds: 1}})
			w := s.wait(tc.left)
			assert.InDelta(t, tc.every, w, tc.every*tuning.ShareJitter+1, "K=%d, %d left", tc.k, tc.left)
			wait[w] = true
		}
		assert.Equal(t, tc.budget, budget, "K=%d: the round's share", tc.k)
		assert.Greater(t, len(wait), 2, "K=%d: the waits are spread", tc.k)
	}
}

// TestThrottledPartRoundPaced: a call AWS throttled through the SDK's
// retries in a round of Deploy that made groups all the same (the other
// creates, or the creates before its suspends) is left for the next
// round, after the paced wait (the bucket's refill: pacedWait), not the
// throttled one (tuning.ThrottledSteps, 20 s): a launch waits no longer
// than the bucket needs. Nothing is made twice, and the deploy goes on.
func TestThrottledPartRoundPaced(t *testing.T) {
	for _, op := range []string{"CreateAutoScalingGroup", "SuspendProcesses"} {
		t.Run(op, func(t *testing.T) {
			h := newHarness(t)
			r := h.baseRelease()
			r.Services["worker"] = &release.Service{InstanceType: "t3.small", SecurityGroups: []string{"ec2::coinbase/deploy-test::development-worker"}}
			x := h.start(r)
			require.NoError(t, x.steps(upToDeploy[:4]...))
			id, err := h.world.Faults().Add(sim.Rule{Op: op, Nth: 1, Err: sim.Throttling()})
			require.NoError(t, err)
			require.NoError(t, x.once(execution.TaskDeploy))
			assert.Equal(t, 1, h.world.Faults().Applied(id))
			p := x.state.Deploy
			require.NotNil(t, p)
			assert.False(t, p.Done)
			assert.Equal(t, 1, p.Throttled, "counted among the throttled rounds (limits.MaxThrottledSteps)")
			assert.False(t, p.Paced, "a follower is told AWS throttled it")
			assert.Equal(t, 1, p.WaitSeconds, "the round made something: the bucket's refill, not a throttled round's wait")
			h.clk.Advance(time.Duration(p.WaitSeconds) * time.Second)
			require.NoError(t, x.step(execution.TaskDeploy))
			assert.True(t, x.state.Deploy.Done)
			assert.Equal(t, 2, len(h.groups()))
			creates := 0
			for _, c := range h.world.CallLog() {
				if c.Op == "CreateAutoScalingGroup" {
					creates++
				}
			}
			assert.Equal(t, 2+btoi(op == "CreateAutoScalingGroup"), creates, "the throttled create again, nothing else")
			_, err = x.untilHealthy(100)
			require.NoError(t, err)
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestDeploySharesBucketWithDeploysOnTheirWay: Auto Scaling's one bucket
// is the account's and region's (Amazon EC2 Auto Scaling API Reference,
// Welcome, API request rate: "throttles API requests based on a shared
// API bucket"), spent by every deploy to them, and so is EC2's bucket of
// CreateLaunchTemplate (Amazon EC2 Developer Guide, "Request throttling
// for the Amazon EC2 API": a mutating action's, refilled at 5 a second).
// Beside K other deploys on their way (their start markers,
// lock.Starts.Underway), its first round makes nothing, reads nothing of
// AWS (they are counted beside its halt check) and waits for its
// place in the share (anywhere within two periods of it: deploys that
// started together do not make their first rounds together), then a
// round of Deploy creates no more than its
// (K+1)-th of the round's budget (a second's refill of EC2's at least), each
// group's launch template with it, and waits about K+1 times the refill
// of what the next round makes, so that together they ask the buckets
// for about what they refill; another account's deploys do not slow it,
// and alone it creates every group in one round.
func TestDeploySharesBucketWithDeploysOnTheirWay(t *testing.T) {
	const services, k = 2 * limits.EC2MutateRefill, 9
	h, r := manyServices(t, services)
	x := h.start(r)
	require.NoError(t, x.steps(upToDeploy[:4]...))
	h.clk.Advance(time.Minute)
	h.onTheirWay("222222222222", 50, h.clk.Now())
	underway := h.onTheirWay(account, k, h.clk.Now())

	var first []string
	h.world.OnCall(func(_ context.Context, c sim.Call) { first = append(first, c.Op) })
	require.NoError(t, x.once(execution.TaskDeploy))
	h.world.OnCall(nil)
	assert.Empty(t, first, "the first round beside deploys on their way resolves nothing: it only waits its place")
	p := x.state.Deploy
	require.False(t, p.Done)
	assert.True(t, p.Paced)
	assert.Empty(t, h.groups(), "the first round waits its place in the share")
	assert.Empty(t, h.account().LaunchTemplates)
	period := limits.EC2MutateRefill * (k + 1) / limits.EC2MutateRefill
	assert.LessOrEqual(t, p.WaitSeconds, 2*period, "within two periods of its share")

	h.clk.Advance(time.Duration(p.WaitSeconds) * time.Second)
	require.NoError(t, x.once(execution.TaskDeploy))
	p = x.state.Deploy
	require.False(t, p.Done)
	assert.True(t, p.Paced)
	assert.Len(t, h.groups(), limits.EC2MutateRefill, "a round's share beside %d others", k)
	assert.Len(t, h.account().LaunchTemplates, limits.EC2MutateRefill, "each launch template with its group: EC2's bucket is shared too")
	every := float64(limits.EC2MutateRefill * (k + 1) / limits.EC2MutateRefill)
	assert.InDelta(t, every, p.WaitSeconds, every*tuning.ShareJitter+1, "the refill of its share at a %d-th of the rate of EC2's CreateLaunchTemplate bucket, the slower", k+1)

	h.clk.Advance(time.Duration(p.WaitSeconds) * time.Second)
	require.NoError(t, x.once(execution.TaskDeploy))
	assert.Len(t, h.groups(), services, "the rest in the next round")
	assert.False(t, x.state.Deploy.Done, "the suspends are left for the next")

	for _, key := range underway {
		_, err := h.s3.DeleteObject(t.Context(), &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		require.NoError(t, err)
	}
	h.clk.Advance(time.Duration(x.state.Deploy.WaitSeconds) * time.Second)
	require.NoError(t, x.once(execution.TaskDeploy))
	assert.True(t, x.state.Deploy.Done, "alone again: every suspend in one round")
	assert.Empty(t, h.world.Throttles().Retried, "no call throttled")
}

// TestSettlePacedByAutoScalingBucket: the swap's last calls, settling
// each new group (scaled down to its desired capacity, its processes
// resumed: Auto Scaling calls that each take a token from the account's
// one bucket, Amazon EC2 Auto Scaling API Reference, Welcome, API
// request rate), are spent tuning.SettleCallsPerStep a step at most,
// the step that ran the gate (a read of each new group's activities)
// counted in, and tuning.SettleLastCalls by the step that ends the
// release, each next step after the bucket refilled, the groups of a
// step side by side: none of them is throttled, and the release ends
// with three quarters of the bucket at least, for whatever deploys next,
// rather than drained by its own burst.
func TestSettlePacedByAutoScalingBucket(t *testing.T) {
	services := tuning.SettleCallsPerStep + 5 // more settles than the bucket holds
	h, r := manyServices(t, services)
	x := h.start(r)
	require.NoError(t, x.steps(upToDeploy...))
	_, err := x.untilHealthy(200)
	require.NoError(t, err)
	require.NoError(t, x.step(execution.TaskBake))

	settles := func(calls []sim.Call) int {
		n := 0
		for _, c := range calls {
			if c.Op == "UpdateAutoScalingGroup" || c.Op == "ResumeProcesses" {
				n++
			}
		}
		return n
	}
	// Each call takes the modelled time of one (package fanout's
	// Timeline): a step's settles go side by side, a group's two in turn.
	const call = 30 * time.Millisecond
	var offsets []time.Duration
	h.timed = true
	h.world.OnCall(func(ctx context.Context, c sim.Call) {
		if c.Op == "UpdateAutoScalingGroup" || c.Op == "ResumeProcesses" {
			offsets = append(offsets, fanout.Offset(ctx))
		}
		fanout.Spend(ctx, call)
	})
	var steps []int
	for x.state.Retire == nil || !x.state.Retire.Done {
		from := len(h.world.CallLog())
		offsets = nil
		require.NoError(t, x.once(execution.TaskCleanUpSuccess))
		steps = append(steps, settles(h.world.CallLog()[from:]))
		if len(offsets) > 0 {
			assert.LessOrEqual(t, slices.Max(offsets)-slices.Min(offsets), call, "step %d: the groups settled side by side", len(steps))
		}
		require.LessOrEqual(t, len(steps), limits.MaxRetireSteps)
		h.clk.Advance(time.Duration(x.state.Retire.WaitSeconds) * time.Second)
	}
	require.Greater(t, len(steps), 2, "settled over several steps: %v", steps)
	assert.Zero(t, steps[0], "the gate's step spent its share on the gate")
	for i, n := range steps {
		assert.LessOrEqual(t, n, tuning.SettleCallsPerStep, "step %d", i)
	}
	assert.LessOrEqual(t, steps[len(steps)-1], tuning.SettleLastCalls, "the last step")
	throttled := h.world.Throttles()
	for _, op := range []string{"UpdateAutoScalingGroup", "ResumeProcesses"} {
		assert.Zero(t, throttled.Retried["Auto Scaling:"+op], "%s throttled", op)
	}
	for name, g := range h.groups() {
		assert.Empty(t, g.Suspended, "%s settled", name)
	}
	c := h.world.Clients(account, region)
	before := throttled.Retried["Auto Scaling:DescribeAutoScalingGroups"]
	for range limits.AutoScalingBurst - tuning.SettleLastCalls {
		_, err := c.AutoScaling.DescribeAutoScalingGroups(t.Context(), &autoscaling.DescribeAutoScalingGroupsInput{})
		require.NoError(t, err)
	}
	assert.Equal(t, before, h.world.Throttles().Retried["Auto Scaling:DescribeAutoScalingGroups"], "the release left three quarters of the bucket")
}

// TestDeployCreatesOnceResolved: the first round of Deploy lists the
// project-config's launch templates beside its resolution of the
// release's resources, so its first create (a launch template, then its
// group) follows the resolution's calls at once: a round's launches wait
// for no read that could have run beside them. Each call costs the same
// modelled time (package fanout's Timeline).
func TestDeployCreatesOnceResolved(t *testing.T) {
	const call = 30 * time.Millisecond
	h := newHarness(t)
	r := h.baseRelease()
	x := h.start(r)
	require.NoError(t, x.steps(upToDeploy[:4]...))

	first := time.Duration(-1)
	h.world.OnCall(func(ctx context.Context, c sim.Call) {
		if c.Op == "CreateLaunchTemplate" && first < 0 {
			first = fanout.Offset(ctx)
		}
		fanout.Spend(ctx, call)
	})
	rctx, alone := fanout.WithTimeline(t.Context())
	_, err := resources.Resolve(rctx, h.world.Clients(account, region), r)
	require.NoError(t, err)

	ctx, _ := fanout.WithTimeline(t.Context())
	raw, err := json.Marshal(x.state)
	require.NoError(t, err)
	_, err = h.d.Invoke(ctx, execution.Request{Task: execution.TaskDeploy, Input: raw, Execution: x.ctx})
	require.NoError(t, err)
	assert.Equal(t, alone.Elapsed(), first, "the first create right after the resolution")
}

// TestDeployRecordsIntentOnce: the first round of Deploy records the
// groups the release may create (the deploying record CleanUpFailure
// deletes them by) before it creates anything; a round after a paced
// wait finds it recorded and writes it no more: its creates wait for no
// write.
func TestDeployRecordsIntentOnce(t *testing.T) {
	h, r := manyServices(t, limits.AutoScalingBurst+5)
	x := h.start(r)
	require.NoError(t, x.steps(upToDeploy[:4]...))
	h.clk.Advance(time.Minute)
	require.NoError(t, x.once(execution.TaskDeploy))
	require.False(t, x.state.Deploy.Done)
	first, found, err := h.ledger.GetDeploying(t.Context(), project, config, r.ReleaseID)
	require.NoError(t, err)
	require.True(t, found)
	require.Len(t, first.Groups, len(r.Services))

	h.clk.Advance(time.Duration(x.state.Deploy.WaitSeconds) * time.Second)
	require.NoError(t, x.once(execution.TaskDeploy))
	again, _, err := h.ledger.GetDeploying(t.Context(), project, config, r.ReleaseID)
	require.NoError(t, err)
	assert.Equal(t, first.Since, again.Since, "the first round's record stands")
	assert.Equal(t, first.Groups, again.Groups)
}

// TestSettleWaitSharesBucket: the wait after a settling step is the time
// Auto Scaling's bucket takes to refill the calls it spent
// (tuning.SettleStepWait at least, its whole burst's at most); beside K
// deploys on their way to
// their account and region, K+1 times as long: the settle takes a
// (K+1)-th of the refill, theirs is the rest.
func TestSettleWaitSharesBucket(t *testing.T) {
	h := newHarness(t)
	r := h.baseRelease()
	x := h.start(r)
	require.NoError(t, x.steps(execution.TaskValidate))
	st := x.state
	least := int(tuning.SettleStepWait / time.Second)
	alone := []struct{ spent, want int }{
		{0, least}, {tuning.SettleLastCalls, least},
		{1000, max(least, limits.AutoScalingBurst/limits.AutoScalingRefill)},
	}
	for _, tc := range alone {
		assert.Equal(t, tc.want, h.d.settleWait(t.Context(), st, tc.spent), "%d spent", tc.spent)
	}
	const k = 3
	h.onTheirWay(account, k, h.clk.Now())
	assert.Equal(t, (k+1)*limits.AutoScalingBurst/limits.AutoScalingRefill, h.d.settleWait(t.Context(), st, limits.AutoScalingBurst))
}
