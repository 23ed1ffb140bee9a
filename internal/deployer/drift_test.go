package deployer

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
)

// driftNow runs the Drift task for the harness's project-config as a
// drift query's execution does, and checks it changed nothing in the
// target.
func (h *harness) driftNow(alarms ...string) *execution.Drift {
	h.t.Helper()
	input, err := json.Marshal(execution.DriftInput{Drift: execution.DriftQuery{ProjectName: project, ConfigName: config, Alarms: alarms}})
	require.NoError(h.t, err)
	h.n++
	name := "drift-" + h.clk.Now().Format("150405") + "-" + string(rune('a'+h.n%26))
	arn := asl.ExecutionARN(naming.StateMachineARN(account, region), name)
	h.executions.register(arn, input, h.clk.Now())
	x := &run{h: h, input: input, ctx: execution.Context{ID: arn, Name: name, StartTime: h.clk.Now()}}
	world := h.snapshot()
	out, err := x.invoke(execution.TaskDrift, json.RawMessage(input))
	require.NoError(h.t, err)
	assert.Equal(h.t, world, h.snapshot(), "a drift query changes nothing in the target")
	var d execution.Drift
	require.NoError(h.t, json.Unmarshal(out, &d))
	return &d
}

// kinds are the drifts' kinds by group.
func kinds(items []execution.DriftItem) map[string][]string {
	out := map[string][]string{}
	for _, it := range items {
		out[it.Group] = append(out[it.Group], it.Kind)
	}
	return out
}

// TestDrift: a drift query finds what changed outside ferry in what the
// current release runs (capacity set by hand, a load balancer detached, a
// group deleted), dates each from the first query that saw it, keeps a
// replaced instance settling until the threshold, and finds nothing where
// nothing changed. It writes only its record.
func TestDrift(t *testing.T) {
	h := newHarness(t)
	r1 := h.baseRelease()
	r1.Services["worker"] = &release.Service{InstanceType: "t3.small", SecurityGroups: []string{"ec2::coinbase/deploy-test::development-worker"}}
	h.start(r1).succeed()
	h.clk.Advance(10 * time.Minute)
	web, worker := naming.GroupName(project, config, "web", r1.ReleaseID), naming.GroupName(project, config, "worker", r1.ReleaseID)

	d := h.driftNow()
	assert.Equal(t, r1.ReleaseID, d.Deployed)
	assert.Empty(t, d.Drifts, "nothing changed")
	assert.Empty(t, d.Settling)

	c := h.world.Clients(account, region).AutoScaling.(*sim.AutoScaling)
	ctx := t.Context()
	_, err := c.UpdateAutoScalingGroup(ctx, &autoscaling.UpdateAutoScalingGroupInput{AutoScalingGroupName: aws.String(web), MinSize: aws.Int32(1), MaxSize: aws.Int32(10)})
	require.NoError(t, err)
	_, err = c.UpdateAutoScalingGroup(ctx, &autoscaling.UpdateAutoScalingGroupInput{AutoScalingGroupName: aws.String(worker), MaxSize: aws.Int32(3), DesiredCapacity: aws.Int32(2)})
	require.NoError(t, err)
	_, err = c.DetachLoadBalancers(ctx, &autoscaling.DetachLoadBalancersInput{AutoScalingGroupName: aws.String(web), LoadBalancerNames: []string{"coinbase-deploy-test-web-elb"}})
	require.NoError(t, err)
	first := h.clk.Now()
	d = h.driftNow()
	assert.Equal(t, map[string][]string{
		web:    {execution.DriftCapacity, execution.DriftLoadBalancers},
		worker: {execution.DriftCapacity, execution.DriftCapacity},
	}, kinds(d.Drifts))
	assert.Contains(t, d.Drifts, execution.DriftItem{Kind: execution.DriftCapacity, Service: "worker", Group: worker, What: "desired 2, not 1 as deployed", Since: d.Drifts[0].Since})
	for _, it := range d.Drifts {
		assert.Equal(t, first.UTC(), it.Since.UTC(), it.What)
	}
	assert.Contains(t, d.Drifts, execution.DriftItem{Kind: execution.DriftCapacity, Service: "web", Group: web, What: "min 1 max 10, not the release's min 2 max 4", Since: d.Drifts[0].Since})

	// A replaced instance settles; the drifts keep their first sight.
	h.clk.Advance(5 * time.Minute)
	g := h.groups()[worker]
	require.NotEmpty(t, g.Instances)
	_, err = c.TerminateInstanceInAutoScalingGroup(ctx, &autoscaling.TerminateInstanceInAutoScalingGroupInput{
		InstanceId: aws.String(g.Instances[0].ID), ShouldDecrementDesiredCapacity: aws.Bool(false)})
	require.NoError(t, err)
	h.clk.Advance(time.Second)
	d = h.driftNow()
	for _, it := range d.Drifts {
		assert.Equal(t, first.UTC(), it.Since.UTC(), "%s: still dated from its first sight", it.What)
	}
	assert.NotEmpty(t, d.Settling, "the replacement is settling, not drift")
	for _, it := range d.Settling {
		assert.Equal(t, execution.DriftUnhealthy, it.Kind)
	}

	// A group deleted by hand is missing.
	_, err = c.DeleteAutoScalingGroup(ctx, &autoscaling.DeleteAutoScalingGroupInput{AutoScalingGroupName: aws.String(worker), ForceDelete: aws.Bool(true)})
	require.NoError(t, err)
	h.clk.Advance(10 * time.Minute)
	d = h.driftNow()
	assert.Equal(t, []string{execution.DriftGroupMissing}, kinds(d.Drifts)[worker])
	rec, found, err := h.ledger.GetDrift(ctx, project, config)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, r1.ReleaseID, rec.ReleaseID)
}

// TestDriftNothingDeployed: a drift query of a config with nothing
// deployed compares nothing and writes nothing.
func TestDriftNothingDeployed(t *testing.T) {
	h := newHarness(t)
	d := h.driftNow()
	assert.Empty(t, d.Deployed)
	assert.Empty(t, d.Drifts)
	_, found, err := h.ledger.GetDrift(t.Context(), project, config)
	require.NoError(t, err)
	assert.False(t, found)
}

// TestDriftExtraGroup: a group of the config that the current release
// did not make is drift, but not while its release holds the lock (a
// deploy under way).
func TestDriftExtraGroup(t *testing.T) {
	h := newHarness(t)
	r1 := h.baseRelease()
	h.start(r1).succeed()
	h.clk.Advance(time.Hour)
	r2 := h.baseRelease()
	require.NoError(t, h.start(r2).steps(upToDeploy...))
	extra := naming.GroupName(project, config, "web", r2.ReleaseID)
	require.Contains(t, h.groups(), extra)

	assert.Empty(t, h.driftNow().Drifts, "r2 holds the lock: a deploy under way")
	require.NoError(t, h.locks.Release(t.Context(), project, config, r2.ReleaseID))
	d := h.driftNow()
	require.Len(t, d.Drifts, 1, d.Drifts)
	assert.Equal(t, execution.DriftExtraGroup, d.Drifts[0].Kind)
	assert.Equal(t, extra, d.Drifts[0].Group)
	assert.Contains(t, d.Drifts[0].What, "did not make (release "+r2.ReleaseID+")")
}

// TestDriftReadsAlarms: a drift query asked for alarms gives each one's
// state, in the order asked, as the deployed release's session reads it
// (a pipeline's alarm gate); one CloudWatch does not have is missing, so
// a gate on it fails closed.
func TestDriftReadsAlarms(t *testing.T) {
	h := newHarness(t)
	r := h.baseRelease()
	h.start(r).succeed()
	group := naming.GroupName(project, config, "web", r.ReleaseID)
	h.putAlarm(t, "deploy-test-errors", group, projectTags)
	h.putAlarmAfter(t, "deploy-test-quiet", group, projectTags, 60)
	h.clk.Advance(5 * time.Minute)
	d := h.driftNow("deploy-test-quiet", "deploy-test-errors", "never-made")
	assert.Equal(t, []execution.AlarmState{
		{Name: "deploy-test-quiet", State: "INSUFFICIENT_DATA"}, // not 60 minutes of data yet
		{Name: "deploy-test-errors", State: "ALARM"},
		{Name: "never-made", State: execution.AlarmMissing},
	}, d.Alarms)
	assert.Empty(t, h.driftNow().Alarms, "none asked, none read")
}

// TestDriftQueryAlarmsChecked: a drift query naming alarms that are no
// alarm names, or too many, is refused naming each.
func TestDriftQueryAlarmsChecked(t *testing.T) {
	many := make([]string, 17)
	for i := range many {
		many[i] = "a" + string(rune('a'+i))
	}
	for _, tt := range []struct {
		alarms []string
		want   string
	}{
		{[]string{"ok", " padded"}, "drift.alarms[1]: must be a name or ID"},
		{many, "drift.alarms: at most 16, not 17"},
	} {
		input, err := json.Marshal(execution.DriftInput{Drift: execution.DriftQuery{ProjectName: project, ConfigName: config, Alarms: tt.alarms}})
		require.NoError(t, err)
		_, err = driftQuery(execution.Request{Task: execution.TaskDrift, Input: input})
		require.Error(t, err)
		assert.Contains(t, err.Error(), tt.want)
	}
}

// inFlightStates are the groups of a drift report's deploy under way by
// what it does with them.
func inFlightStates(d *execution.Drift) map[string]string {
	out := map[string]string{}
	if d.InFlight != nil {
		for _, g := range d.InFlight.Groups {
			out[g.Group] = g.State
		}
	}
	return out
}

// TestDriftInFlight: ferry's own deploy is no drift while it holds the
// lock: its new group is deploying; through its bake the previous group,
// out of its load balancers on purpose, is standing by (not
// load_balancers drift); through its swap the previous group is retiring
// (not an extra group), and the new one, already current, is not judged
// on a capacity the swap has not settled yet. A reconcile pass counts no
// drift either. Once the deploy ends, nothing is in flight.
func TestDriftInFlight(t *testing.T) {
	h := newHarness(t)
	r1, r2 := h.baseRelease(), h.baseRelease()
	r2.BakeSeconds = 3600
	x := h.atSwap(r1, r2)
	old, next := naming.GroupName(project, config, "web", r1.ReleaseID), naming.GroupName(project, config, "web", r2.ReleaseID)

	d := h.driftNow()
	assert.Empty(t, d.Drifts)
	require.NotNil(t, d.InFlight)
	assert.Equal(t, r2.ReleaseID, d.InFlight.ReleaseID)
	assert.Equal(t, map[string]string{next: execution.InFlightDeploying}, inFlightStates(d))

	require.NoError(t, x.once(execution.TaskBake))
	require.False(t, x.state.Bake.Done)
	require.Empty(t, h.groups()[old].LoadBalancers, "the previous group stands by, out of its load balancer")
	h.clk.Advance(30 * time.Minute)
	d = h.driftNow()
	assert.Empty(t, d.Drifts, "standing by is the bake's, not drift")
	assert.Equal(t, map[string]string{old: execution.InFlightStandingBy, next: execution.InFlightDeploying}, inFlightStates(d))
	assert.Equal(t, execution.InFlightGroup{State: execution.InFlightStandingBy, Service: "web", Group: old}, d.InFlight.Groups[0])
	assert.Zero(t, h.pass().Drifted, "nor to the reconciler")

	require.NoError(t, x.step(execution.TaskBake))
	require.NoError(t, x.once(execution.TaskCleanUpSuccess))
	require.False(t, x.state.Retire.Done, "retiring")
	cur, _, err := h.ledger.GetCurrent(t.Context(), project, config)
	require.NoError(t, err)
	require.Equal(t, r2.ReleaseID, cur.ReleaseID, "the swap is past its point of no return")
	d = h.driftNow()
	assert.Empty(t, d.Drifts, "retiring is the swap's, not an extra group")
	assert.Equal(t, map[string]string{old: execution.InFlightRetiring, next: execution.InFlightDeploying}, inFlightStates(d))

	require.NoError(t, x.step(execution.TaskCleanUpSuccess))
	d = h.driftNow()
	assert.Nil(t, d.InFlight)
	assert.Empty(t, d.Drifts)
}

// TestDriftInFlightUnknown: a lock the drift query cannot read leaves the
// deploy under way unknown, never "no drift": every group is compared,
// the bake's standing by and the new group included.
func TestDriftInFlightUnknown(t *testing.T) {
	h := newHarness(t)
	r1, r2 := h.baseRelease(), h.baseRelease()
	r2.BakeSeconds = 3600
	x := h.atSwap(r1, r2)
	require.NoError(t, x.once(execution.TaskBake))
	old, next := naming.GroupName(project, config, "web", r1.ReleaseID), naming.GroupName(project, config, "web", r2.ReleaseID)

	for _, key := range []string{naming.LockKey(project, config), naming.StandbyKey(project, config, r2.ReleaseID)} {
		h.store.Deny = func(op, k string) bool { return op == "GetObject" && k == key }
		d := h.driftNow()
		require.NotNil(t, d.InFlight, key)
		assert.Contains(t, d.InFlight.Unknown, key, "says what it could not read")
		assert.Empty(t, d.InFlight.Groups, key)
		assert.Equal(t, map[string][]string{old: {execution.DriftLoadBalancers, execution.DriftLoadBalancers}, next: {execution.DriftExtraGroup}}, kinds(d.Drifts), key)
	}
	h.store.Deny = nil
	assert.Empty(t, h.driftNow().Drifts)
}

// TestDriftInFlightFailed: a release whose deploy failed retires its own
// groups (its deploying record says since when): while it holds the lock
// they are retiring, not extra groups, and what it never touched, the
// current release's group, is still compared.
func TestDriftInFlightFailed(t *testing.T) {
	h := newHarness(t)
	r1, r2 := h.baseRelease(), h.baseRelease()
	x := h.atSwap(r1, r2)
	old, next := naming.GroupName(project, config, "web", r1.ReleaseID), naming.GroupName(project, config, "web", r2.ReleaseID)
	x.state.Error = &execution.Error{Error: failure.NameHalt, Cause: "halted"}
	require.NoError(t, x.once(execution.TaskCleanUpFailure))
	require.False(t, x.state.Retire.Done, "retiring its own groups")
	c := h.world.Clients(account, region).AutoScaling.(*sim.AutoScaling)
	_, err := c.UpdateAutoScalingGroup(t.Context(), &autoscaling.UpdateAutoScalingGroupInput{AutoScalingGroupName: aws.String(old), MaxSize: aws.Int32(9)})
	require.NoError(t, err)

	d := h.driftNow()
	assert.Equal(t, map[string]string{next: execution.InFlightRetiring}, inFlightStates(d))
	assert.Equal(t, map[string][]string{old: {execution.DriftCapacity}}, kinds(d.Drifts), "the current group is still compared")
}

// TestDriftMixedInstances: a group deployed with a mixed instances policy
// (testdata/spot-fleet-release.json's: weighted instance types, On-Demand
// base and percentage, Spot strategy, Capacity Rebalancing) is no drift
// as DescribeAutoScalingGroups shows it (its InstancesDistribution with
// AWS's defaults filled in, MixedInstancesPolicy and CapacityRebalance,
// Auto Scaling API Reference); changed by hand (UpdateAutoScalingGroup:
// another weight, another On-Demand percentage and Spot strategy,
// Capacity Rebalancing off), each change is a mixed_instances drift.
func TestDriftMixedInstances(t *testing.T) {
	h := newHarness(t)
	spot, err := release.ReadFile(filepath.Join("..", "..", "testdata", "spot-fleet-release.json"))
	require.NoError(t, err)
	r1 := h.baseRelease()
	web := r1.Services["web"]
	web.InstanceType, web.MixedInstances = "", spot.Services["web"].MixedInstances
	h.start(r1).succeed()
	h.clk.Advance(10 * time.Minute)
	group := naming.GroupName(project, config, "web", r1.ReleaseID)
	assert.Empty(t, h.driftNow().Drifts, "the policy as deployed, AWS's defaults and all")

	c := h.world.Clients(account, region).AutoScaling.(*sim.AutoScaling)
	_, err = c.UpdateAutoScalingGroup(t.Context(), &autoscaling.UpdateAutoScalingGroupInput{AutoScalingGroupName: aws.String(group), CapacityRebalance: aws.Bool(false),
		MixedInstancesPolicy: &asgtypes.MixedInstancesPolicy{
			LaunchTemplate: &asgtypes.LaunchTemplate{Overrides: []asgtypes.LaunchTemplateOverrides{
				{InstanceType: aws.String("m5.large"), WeightedCapacity: aws.String("1")}, {InstanceType: aws.String("m5.xlarge"), WeightedCapacity: aws.String("3")},
			}},
			InstancesDistribution: &asgtypes.InstancesDistribution{OnDemandPercentageAboveBaseCapacity: aws.Int32(50), SpotAllocationStrategy: aws.String("lowest-price")},
		}})
	require.NoError(t, err)
	var got []string
	for _, it := range h.driftNow().Drifts {
		require.Equal(t, execution.DriftMixedInstances, it.Kind, it.What)
		got = append(got, it.What)
	}
	assert.Equal(t, []string{
		"overrides [m5.large=1 m5.xlarge=3], not the release's [m5.large=1 m5.xlarge=2 c5.xlarge=2]",
		"On-Demand base 1 and 50% above it, Spot lowest-price across 2 pools, On-Demand prioritized, not the release's On-Demand base 1 and 25% above it, Spot price-capacity-optimized, On-Demand prioritized",
		"capacity rebalance false, not the release's true",
	}, got)
}
