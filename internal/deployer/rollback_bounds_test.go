package deployer

import (
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
	"github.com/ferryhq/ferry/internal/store/halt"
	"github.com/ferryhq/ferry/internal/tuning"
)

// The rollback scenarios: the previous group stands by during a bake,
// someone scales it in to zero, a halt rolls back. The rollback sets its
// recorded capacity back; its new instances boot as their image's
// timings say (each picked per instance from the range: internal/local/sim,
// Timings), and only once every one passes its load balancers' health
// checks do the release's own groups leave.

// withBoot is the harness's world with an image "ubuntu-boot" whose
// instances take boot seconds (a range, per instance) from launch to
// InService.
func withBoot(boot sim.Range) func(*sim.WorldSpec) {
	return func(w *sim.WorldSpec) {
		r := &w.Accounts[0].Regions[0]
		cpu := 20.0
		r.AMIs = append(r.AMIs, sim.AMISpec{ID: "ami-00000000000b0071", Name: "ubuntu-boot",
			Tags: map[string]string{"Name": "ubuntu-boot", "DeployWith": "ferry"}, Behavior: sim.Healthy,
			CPUPercent: &cpu, Timings: &sim.Timings{Boot: &boot}})
	}
}

// rollbackStep is one CleanUpFailure invocation of a rollback: when,
// since the rollback began, what it waited for, and how it ended.
type rollbackStep struct {
	elapsed    time.Duration
	restoring  []execution.RestoringGroup
	rolledBack []string
	err        error
}

// rollBackAfterScaleIn deploys prev, bakes next (600 s) with prev
// standing by, scales prev's group in to zero, halts the bake, and runs
// CleanUpFailure one invocation at a time, as the state machine's
// RolledBack? loop does, until the rollback is over (the release's
// groups leave) or fails. Both releases boot from image. It returns the
// steps and the previous group's name.
func rollBackAfterScaleIn(t *testing.T, h *harness, prev, next *release.Release, image string) ([]rollbackStep, string) {
	t.Helper()
	prev.AMI, next.AMI = image, image
	prev.Timeout, next.Timeout = 3600, 3600
	next.BakeSeconds = 600
	x := h.atSwap(prev, next)
	old := naming.GroupName(project, config, "web", prev.ReleaseID)
	require.NoError(t, x.once(execution.TaskBake))
	_, err := h.world.Clients(account, region).AutoScaling.UpdateAutoScalingGroup(t.Context(), &autoscaling.UpdateAutoScalingGroupInput{
		AutoScalingGroupName: aws.String(old), MinSize: aws.Int32(0), DesiredCapacity: aws.Int32(0),
	})
	require.NoError(t, err)
	h.clk.Advance(2 * time.Minute)
	require.Empty(t, h.groups()[old].Instances, "scaled in while standing by")
	require.NoError(t, h.halts.Put(t.Context(), project, config, halt.Marker{By: "oncall", Reason: "errors up", At: h.clk.Now()}))
	h.clk.Advance(time.Duration(x.state.Bake.WaitSeconds) * time.Second)
	err = x.step(execution.TaskBake)
	var halted *failure.HaltError
	require.ErrorAs(t, err, &halted)

	x.state.Error = &execution.Error{Error: failure.NameOf(err), Cause: failure.Cause(err)}
	start := h.clk.Now()
	var steps []rollbackStep
	for len(steps) <= 2*int(tuning.RollbackTimeout/tuning.RollbackCheckInterval) {
		err := x.once(execution.TaskCleanUpFailure)
		s := rollbackStep{elapsed: h.clk.Now().Sub(start), err: err}
		if err == nil {
			s.restoring, s.rolledBack = x.state.Retire.Restoring, x.state.RolledBack
		}
		steps = append(steps, s)
		if err != nil || len(s.restoring) == 0 {
			return steps, old
		}
		h.clk.Advance(time.Duration(x.state.Retire.WaitSeconds) * time.Second)
	}
	t.Fatalf("the rollback neither ended nor gave up in %d checks", len(steps))
	return nil, ""
}

// healthyIn counts g's InService instances healthy in every load
// balancer and target group they are registered with.
func healthyIn(g sim.GroupSnapshot) int {
	n := 0
	for _, i := range g.Instances {
		ok := i.Lifecycle == "InService" && len(i.LB) > 0
		for _, s := range i.LB {
			ok = ok && s == "healthy"
		}
		if ok {
			n++
		}
	}
	return n
}

// TestRollbackGivesUpAtItsBound: the previous group's instances take 17
// minutes to boot, longer than tuning.RollbackTimeout (15): the rollback
// waits up to the bound, every check up to it still waiting, and the
// first check past it gives up: FailureDirty naming the group and what
// it has, the release's own groups left serving (never nothing).
func TestRollbackGivesUpAtItsBound(t *testing.T) {
	h := newHarness(t, withBoot(sim.Range{Min: 1020, Max: 1020}))
	prev, next := h.baseRelease(), h.baseRelease()
	steps, old := rollBackAfterScaleIn(t, h, prev, next, "ubuntu-boot")

	last := steps[len(steps)-1]
	for _, s := range steps[:len(steps)-1] {
		require.NoError(t, s.err, "at %s", s.elapsed)
		assert.NotEmpty(t, s.restoring, "at %s the rollback waits", s.elapsed)
	}
	require.Error(t, last.err, "the rollback gave up")
	assert.LessOrEqual(t, steps[len(steps)-2].elapsed, tuning.RollbackTimeout, "it waited up to its bound")
	assert.Greater(t, last.elapsed, tuning.RollbackTimeout, "not before its bound")
	assert.LessOrEqual(t, last.elapsed, tuning.RollbackTimeout+tuning.RollbackCheckInterval, "at its first check past its bound")
	var ce *failure.CleanUpError
	require.ErrorAs(t, last.err, &ce)
	assert.Contains(t, ce.Leftovers, "previous group "+old+", back in its load balancers with 0 of 2 instances healthy")
	assert.Contains(t, ce.Leftovers, "auto scaling group "+naming.GroupName(project, config, "web", next.ReleaseID), "the release's own group is named, left serving")

	o, found, err := h.ledger.GetOutcome(t.Context(), project, config, next.ReleaseID)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, execution.EndFailureDirty, o.End)
	assert.Equal(t, ce.Leftovers, o.Leftovers)
	for name, g := range h.groups() {
		if g.Tags[naming.TagReleaseID] == next.ReleaseID {
			attached, n := serving(g)
			assert.True(t, attached, "%s is left serving", name)
			assert.Positive(t, n)
		}
	}
	assert.Zero(t, h.world.CutConnections())
}

// TestRollbackRestoresOneInstance: a previous group of one instance: the
// rollback waits until that one passes its health checks, and no request
// is cut as the release's own groups leave.
func TestRollbackRestoresOneInstance(t *testing.T) {
	h := newHarness(t, withBoot(sim.Range{Min: 90, Max: 90}))
	prev, next := h.baseRelease(), h.baseRelease()
	prev.Services["web"].Autoscaling.MinSize, prev.Services["web"].Autoscaling.MaxSize = 1, 2
	steps, old := rollBackAfterScaleIn(t, h, prev, next, "ubuntu-boot")
	assertRestoredWhole(t, h, steps, old, 1)
}

// TestRollbackWaitsForEveryInstance: the previous group's two instances
// boot one after the other (60 to 300 s, per instance): the rollback
// goes on waiting while one of the two is healthy, and ends only once
// both are.
func TestRollbackWaitsForEveryInstance(t *testing.T) {
	h := newHarness(t, withBoot(sim.Range{Min: 60, Max: 300}))
	prev, next := h.baseRelease(), h.baseRelease()
	steps, old := rollBackAfterScaleIn(t, h, prev, next, "ubuntu-boot")
	assertRestoredWhole(t, h, steps, old, 2)
	oneOfTwo := false
	for _, s := range steps {
		for _, r := range s.restoring {
			oneOfTwo = oneOfTwo || (r.Healthy == 1 && r.Want == 2)
		}
	}
	assert.True(t, oneOfTwo, "a check saw one instance of two healthy and waited")
}

// assertRestoredWhole checks a rollback that ended: it waited (the
// instances had to boot) for the previous group, whose want instances
// all pass their health checks at its end; it ends FailureClean with the
// group serving again and nothing cut.
func assertRestoredWhole(t *testing.T, h *harness, steps []rollbackStep, old string, want int) {
	t.Helper()
	last := steps[len(steps)-1]
	require.NoError(t, last.err)
	require.Greater(t, len(steps), 1, "the rollback waited for the instances to boot")
	for _, r := range steps[len(steps)-2].restoring {
		assert.Equal(t, old, r.Name)
		assert.Less(t, r.Healthy, want)
		assert.Equal(t, want, r.Want)
	}
	assert.Equal(t, []string{old}, last.rolledBack, "the step that restored it names it")
	assert.Equal(t, want, healthyIn(h.groups()[old]), "every instance of the previous group passes its health checks once the rollback is over")
	assert.Zero(t, h.world.CutConnections(), "no request cut as the release's groups leave")
}

// TestRollbackWaitsForTheLoadBalancer: releases served by a classic load
// balancer only, or a target group only; the previous group's instances
// are InService 60 s after launch but pass the load balancer's health
// check 300 s later ("InService" in DescribeInstanceHealth, Elastic Load
// Balancing API Reference; "healthy" in DescribeTargetHealth, Elastic
// Load Balancing API Reference version 2015-12-01). An instance InService
// in its group but not passing its load balancer's checks serves
// nothing: the rollback waits until the load balancer passes both, and
// no request is cut as the release's own group leaves.
func TestRollbackWaitsForTheLoadBalancer(t *testing.T) {
	for name, only := range map[string]func(*release.Service){
		"classic load balancer": func(s *release.Service) { s.TargetGroups = nil },
		"target group":          func(s *release.Service) { s.ELBs = nil },
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, func(w *sim.WorldSpec) {
				r := &w.Accounts[0].Regions[0]
				cpu := 20.0
				r.AMIs = append(r.AMIs, sim.AMISpec{ID: "ami-00000000000b0072", Name: "ubuntu-slow-check",
					Tags: map[string]string{"Name": "ubuntu-slow-check", "DeployWith": "ferry"}, Behavior: sim.Healthy,
					CPUPercent: &cpu, Timings: &sim.Timings{Boot: &sim.Range{Min: 60, Max: 60}, Health: &sim.Range{Min: 300, Max: 300}}})
			})
			prev, next := h.baseRelease(), h.baseRelease()
			only(prev.Services["web"])
			only(next.Services["web"])
			steps, old := rollBackAfterScaleIn(t, h, prev, next, "ubuntu-slow-check")
			assertRestoredWhole(t, h, steps, old, 2)
		})
	}
}
