package deployer

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/events"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/ledger"
	"github.com/ferryhq/ferry/internal/store/lock"
	"github.com/ferryhq/ferry/internal/tuning"
)

// pass runs a reconcile pass as its execution does: Reconcile, page
// after page, until it reports the pass done.
func (h *harness) pass() execution.Reconcile {
	h.t.Helper()
	input := json.RawMessage(`{"reconcile_pass": {}}`)
	h.n++
	name := "reconcile-" + h.clk.Now().Format("150405") + "-" + string(rune('a'+h.n%26))
	arn := asl.ExecutionARN(naming.StateMachineARN(account, region), name)
	h.executions.register(arn, input, h.clk.Now())
	x := &run{h: h, input: input, ctx: execution.Context{ID: arn, Name: name, StartTime: h.clk.Now()}}
	for pages := 1; ; pages++ {
		out, err := x.invoke(execution.TaskReconcile, json.RawMessage(input))
		require.NoError(h.t, err)
		var in execution.ReconcileInput
		require.NoError(h.t, json.Unmarshal(out, &in))
		if in.Reconcile.Done {
			return in.Reconcile
		}
		require.Less(h.t, pages, 1000, "the pass never ends")
		input = out
	}
}

// healRun is the execution a pass started for heal, as the state machine
// runs it.
func (h *harness) healRun(heal execution.Heal) *run {
	h.t.Helper()
	desc, err := h.executions.DescribeExecution(h.t.Context(), &sfn.DescribeExecutionInput{ExecutionArn: aws.String(heal.Execution)})
	require.NoError(h.t, err)
	input := json.RawMessage(aws.ToString(desc.Input))
	return &run{h: h, input: input, ctx: execution.Context{ID: heal.Execution, Name: aws.ToString(desc.Name), StartTime: h.clk.Now()}}
}

// deleteGroup deletes a group from outside ferry and lets it vanish.
func (h *harness) deleteGroup(name string) {
	h.t.Helper()
	c := h.world.Clients(account, region).AutoScaling.(*sim.AutoScaling)
	_, err := c.DeleteAutoScalingGroup(h.t.Context(), &autoscaling.DeleteAutoScalingGroupInput{AutoScalingGroupName: aws.String(name), ForceDelete: aws.Bool(true)})
	require.NoError(h.t, err)
	h.clk.Advance(10 * time.Minute)
}

// TestReconcileHeals: a config whose release opted into heal and whose
// group is deleted by hand is healed once the group has been seen missing
// for tuning.HealAfter (not at the first sight: Auto Scaling's reads are
// eventually consistent): the pass starts a release of the
// same content (heal_of, created_by the reconciler, no proof), which
// Validate accepts and the deploy path takes to Success; the same
// difference coming back after a heal that made the fleet well is the
// next heal in a row; heals that do not help wait longer each time.
func TestReconcileHeals(t *testing.T) {
	h := newHarness(t)
	r1 := h.baseRelease()
	r1.Reconcile = release.ReconcileHeal
	h.start(r1).succeed()
	h.clk.Advance(10 * time.Minute)
	p := h.pass()
	assert.Equal(t, 1, p.Checked)
	assert.Empty(t, p.Healed, "nothing to heal")

	web := naming.GroupName(project, config, "web", r1.ReleaseID)
	h.deleteGroup(web)
	p = h.pass()
	assert.Empty(t, p.Healed, "seen missing once: AWS's reads are eventually consistent")
	assert.Equal(t, 1, p.Drifted)
	h.clk.Advance(tuning.HealAfter)
	p = h.pass()
	require.Len(t, p.Healed, 1, p.Errors)
	heal := p.Healed[0]
	assert.Equal(t, r1.ReleaseID, heal.Of)
	assert.Equal(t, web+": the group is gone", heal.Why)
	// The passes announced the drift once, when first seen, and the heal.
	var kinds []string
	for _, ev := range h.world.BusEvents() {
		kinds = append(kinds, ev.DetailType)
	}
	assert.Equal(t, []string{events.Started.DetailType, events.Healthy.DetailType, events.Swapped.DetailType, events.Succeeded.DetailType,
		events.DriftFound.DetailType, events.Healed.DetailType}, kinds)
	healDetail := h.world.BusEvents()[5].Detail
	assert.Contains(t, string(healDetail), `"heal_execution":"`+heal.Execution+`"`)
	assert.Contains(t, string(healDetail), `"release_id":"`+heal.ReleaseID+`"`)
	stored, err := h.ledger.GetRelease(t.Context(), project, config, heal.ReleaseID)
	require.NoError(t, err)
	assert.Equal(t, r1.ReleaseID, stored.HealOf)
	assert.Equal(t, Reconciler, stored.CreatedBy)
	assert.Nil(t, stored.Identity)

	h.healRun(heal).succeed()
	assert.Contains(t, h.groups(), naming.GroupName(project, config, "web", heal.ReleaseID), "the heal's group serves")
	cur, _, err := h.ledger.GetCurrent(t.Context(), project, config)
	require.NoError(t, err)
	assert.Equal(t, heal.ReleaseID, cur.ReleaseID)

	// The heal is now what is deployed, and opted in as its content did.
	h.clk.Advance(10 * time.Minute)
	assert.Empty(t, h.pass().Healed)
	healed := naming.GroupName(project, config, "web", heal.ReleaseID)
	h.deleteGroup(healed)
	require.Empty(t, h.pass().Healed)
	h.clk.Advance(tuning.HealAfter)
	first := h.pass()
	require.Len(t, first.Healed, 1, "the web group gone again: the second heal of it in a row")
	rec, _, err := h.ledger.GetHeal(t.Context(), project, config)
	require.NoError(t, err)
	assert.Equal(t, ledger.HealRecord{Of: heal.ReleaseID, Difference: "group_missing web", InARow: 2, LastAt: h.clk.Now(), LastHeal: first.Healed[0].ReleaseID}, rec)
	// That heal never runs (its execution stays RUNNING): the next pass
	// finds the lock free and the fleet still gone, but waits its retry.
	h.clk.Advance(25 * time.Minute)
	assert.Empty(t, h.pass().Healed, "the second heal in a row waits 30 minutes")
	h.clk.Advance(5 * time.Minute)
	second := h.pass()
	require.Len(t, second.Healed, 1, "30 minutes after the second heal")
	h.clk.Advance(55 * time.Minute)
	assert.Empty(t, h.pass().Healed, "the third heal in a row waits an hour")
	h.clk.Advance(5 * time.Minute)
	assert.Len(t, h.pass().Healed, 1)
	rec, _, err = h.ledger.GetHeal(t.Context(), project, config)
	require.NoError(t, err)
	assert.Equal(t, 4, rec.InARow)
}

// TestReconcileHealBackoff: a group someone deletes again after every
// heal that made the fleet well is healed less and less often, as
// documented ("doubled per heal in a row"): the intervals between heals
// double from tuning.HealRetry (once the heal and its sighting take less
// than the wait) up to tuning.MaxHealRetry. Another difference (the
// worker's group gone) starts a new row: healed as soon as it is seen
// gone long enough.
func TestReconcileHealBackoff(t *testing.T) {
	h := newHarness(t)
	r1 := h.baseRelease()
	r1.Reconcile = release.ReconcileHeal
	r1.Services["worker"] = &release.Service{InstanceType: "t3.small", SecurityGroups: []string{"ec2::coinbase/deploy-test::development-worker"}}
	h.start(r1).succeed()
	deployed := r1.ReleaseID
	// untilHealed runs a pass every minute until one starts a heal, and
	// runs that heal to Success: the fleet is well again.
	untilHealed := func() time.Time {
		t.Helper()
		for range 7 * 60 {
			h.clk.Advance(time.Minute)
			p := h.pass()
			if len(p.Healed) == 0 {
				continue
			}
			at := h.clk.Now()
			h.healRun(p.Healed[0]).succeed()
			deployed = p.Healed[0].ReleaseID
			assert.Zero(t, h.pass().Drifted, "the heal made the fleet well")
			return at
		}
		t.Fatal("no heal in 7 hours")
		return time.Time{}
	}
	var at []time.Time
	for range 7 {
		h.deleteGroup(naming.GroupName(project, config, "web", deployed))
		at = append(at, untilHealed())
	}
	var intervals []time.Duration
	for i := 1; i < len(at); i++ {
		intervals = append(intervals, at[i].Sub(at[i-1]).Truncate(time.Minute))
	}
	t.Logf("intervals between heals: %v", intervals)
	assert.Less(t, intervals[0], 30*time.Minute, "the second heal waits 15 minutes, less than the heal and the sighting of the group gone take")
	assert.Equal(t, []time.Duration{30 * time.Minute, time.Hour, 2 * time.Hour, 4 * time.Hour, tuning.MaxHealRetry}, intervals[1:],
		"each heal in a row waits twice as long as the one before, to the pass's minute, at most MaxHealRetry")
	rec, _, err := h.ledger.GetHeal(t.Context(), project, config)
	require.NoError(t, err)
	assert.Equal(t, 7, rec.InARow)

	h.deleteGroup(naming.GroupName(project, config, "worker", deployed))
	last := at[len(at)-1]
	next := untilHealed()
	assert.Less(t, next.Sub(last), tuning.MaxHealRetry, "another difference is not the row's")
	rec, _, err = h.ledger.GetHeal(t.Context(), project, config)
	require.NoError(t, err)
	assert.Equal(t, "group_missing worker", rec.Difference)
	assert.Equal(t, 1, rec.InARow)
}

// TestReconcileRecordsOnly: a config that did not opt in is checked and
// its drift recorded, never healed; a pass pages through many configs.
func TestReconcileRecordsOnly(t *testing.T) {
	h := newHarness(t)
	r1 := h.baseRelease()
	h.start(r1).succeed()
	for i := range limits.ReconcilePage + 2 { // configs with records but nothing deployed
		require.NoError(t, h.ledger.PutOutcome(t.Context(), project, "c"+string(rune('a'+i)), ledger.Outcome{ReleaseID: "r0", End: execution.EndFailureClean}))
	}
	h.deleteGroup(naming.GroupName(project, config, "web", r1.ReleaseID))
	p := h.pass()
	assert.Equal(t, limits.ReconcilePage+3, p.Checked)
	assert.Equal(t, 1, p.Drifted)
	assert.Empty(t, p.Healed, "reconcile record only")
	rec, found, err := h.ledger.GetDrift(t.Context(), project, config)
	require.NoError(t, err)
	require.True(t, found)
	require.Len(t, rec.Items, 1)
	assert.Equal(t, execution.DriftGroupMissing, rec.Items[0].Kind)
}

// TestHealRefused: a release naming heal_of is accepted without an
// identity proof only when the deployer's heal record names it (a
// reconcile pass started it), with the current release's exact content,
// and only while that release is deployed.
func TestHealRefused(t *testing.T) {
	h := newHarness(t)
	r1 := h.baseRelease()
	h.start(r1).succeed()
	h.clk.Advance(time.Hour)
	for _, tc := range []struct {
		name string
		edit func(*release.Release)
		// unrecorded: the deployer's heal record does not name the heal.
		unrecorded bool
		want       string
	}{
		{name: "another content", edit: func(r *release.Release) { r.AMI = "ubuntu-worker" }, want: "is not the content of release " + r1.ReleaseID},
		{name: "not what is deployed", edit: func(r *release.Release) { r.HealOf = "r0-000000" }, want: "release r0-000000 is not what is deployed"},
		{name: "not the reconciler's", edit: func(r *release.Release) { r.CreatedBy = "mallory" }, want: "is not a heal the deployer's reconcile pass started"},
		{name: "not started by the deployer", edit: func(*release.Release) {}, unrecorded: true, want: "is not a heal the deployer's reconcile pass started"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := r1.Clone()
			r.ReleaseID, r.CreatedAt, r.CreatedBy, r.Identity, r.HealOf = h.baseRelease().ReleaseID, h.clk.Now().Add(-time.Minute), Reconciler, nil, r1.ReleaseID
			tc.edit(r)
			if !tc.unrecorded {
				require.NoError(t, h.ledger.PutHeal(t.Context(), project, config, ledger.HealRecord{Of: r.HealOf, InARow: 1, LastAt: h.clk.Now(), LastHeal: r.ReleaseID}))
			}
			err := h.start(r).step(execution.TaskValidate)
			var bad *failure.BadReleaseError
			require.ErrorAs(t, err, &bad)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// assetThere says whether the deployer bucket holds the asset of r named
// name.
func (h *harness) assetThere(r *release.Release, name string) bool {
	h.t.Helper()
	_, err := h.s3.HeadObject(h.t.Context(), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(naming.AssetKey(project, config, r.Assets[name].SHA256))})
	return err == nil
}

// TestReconcileCollectsAssets: a pass deletes the assets of the deployer
// bucket that none of the newest KeepReleases releases names, once they
// are older than the grace; the assets of the release holding the lock,
// of the release deployed now, and young ones, stay.
func TestReconcileCollectsAssets(t *testing.T) {
	h := newHarness(t)
	h.d.cfg.KeepReleases = 1
	r1 := h.baseRelease()
	h.addAsset(r1, "app", []byte("v1"))
	h.start(r1).succeed()
	h.clk.Advance(time.Hour)
	r2 := h.baseRelease()
	h.addAsset(r2, "app", []byte("v2"))
	h.start(r2).succeed()

	h.clk.Advance(time.Hour)
	p := h.pass()
	assert.Zero(t, p.Collected, "r1's asset is younger than the grace")
	assert.True(t, h.assetThere(r1, "app"))

	h.clk.Advance(tuning.AssetGrace)
	young := h.baseRelease()
	h.addAsset(young, "app", []byte("uploaded, its release not yet"))
	p = h.pass()
	assert.Equal(t, 1, p.Collected)
	assert.False(t, h.assetThere(r1, "app"), "no release among the newest 1 names it")
	assert.True(t, h.assetThere(r2, "app"), "the newest release names it")
	assert.True(t, h.assetThere(young, "app"), "younger than the grace")

	// A release holding the lock keeps its assets, however old.
	held := h.baseRelease()
	h.addAsset(held, "app", []byte("v3"))
	h.upload(held)
	require.NoError(t, h.locks.Acquire(t.Context(), project, config, lock.Holder{ReleaseID: held.ReleaseID, Execution: "arn:held"}))
	h.clk.Advance(time.Minute)
	h.upload(h.baseRelease()) // newer, naming no asset
	h.clk.Advance(tuning.AssetGrace)
	p = h.pass()
	assert.True(t, h.assetThere(held, "app"), "the release holding the lock names it")
	assert.True(t, h.assetThere(r2, "app"), "no longer among the newest, but deployed now: a heal publishes it again")
	assert.False(t, h.assetThere(young, "app"), "now old, and named by no release")
	assert.Equal(t, 1, p.Collected)
}

// TestReconcileCollectsNothingItCannotRead: a release among the kept
// ones that cannot be read (access denied) makes the pass delete none of
// its config's assets, and count the config as failed, naming why.
func TestReconcileCollectsNothingItCannotRead(t *testing.T) {
	h := newHarness(t)
	h.d.cfg.KeepReleases = 2
	var rs []*release.Release
	for i := range 3 {
		r := h.baseRelease()
		h.addAsset(r, "app", []byte{byte('a' + i)})
		h.start(r).succeed()
		h.clk.Advance(time.Hour)
		rs = append(rs, r)
	}
	h.clk.Advance(tuning.AssetGrace)

	kept := naming.ReleaseKey(project, config, rs[1].ReleaseID) // kept, not deployed
	h.store.Deny = func(op, key string) bool { return op == "GetObject" && key == kept }
	p := h.pass()
	assert.Zero(t, p.Collected)
	assert.Equal(t, 1, p.Failed)
	require.Len(t, p.Errors, 1)
	assert.Contains(t, p.Errors[0], "assets of release "+rs[1].ReleaseID)
	assert.True(t, h.assetThere(rs[0], "app"), "what the unread release names is not known: nothing is deleted")

	h.store.Deny = nil
	p = h.pass()
	assert.Equal(t, 1, p.Collected)
	assert.False(t, h.assetThere(rs[0], "app"), "the oldest, which neither of the newest 2 names")
	assert.True(t, h.assetThere(rs[1], "app"))
}

// TestHealRow: the next heal continues the row only for the same
// difference, in the release the last heal healed or in that heal, and
// within tuning.HealRowEnds of it; else it starts a new row.
func TestHealRow(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	last := ledger.HealRecord{Of: "r1", Difference: "group_missing web", InARow: 3, LastAt: at, LastHeal: "h3"}
	for _, tc := range []struct {
		name     string
		found    bool
		deployed string
		diff     string
		after    time.Duration
		row      int
	}{
		{"the heal did not help", true, "r1", "group_missing web", time.Hour, 3},
		{"the heal helped, the difference came back", true, "h3", "group_missing web", time.Hour, 3},
		{"another difference", true, "h3", "group_missing worker", time.Hour, 0},
		{"another kind", true, "h3", "unhealthy web", time.Hour, 0},
		{"another release deployed since", true, "r2", "group_missing web", time.Hour, 0},
		{"a day since the last heal", true, "h3", "group_missing web", tuning.HealRowEnds, 0},
		{"no record", false, "r1", "group_missing web", time.Hour, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := healRow(last, tc.found, tc.deployed, tc.diff, at.Add(tc.after))
			assert.Equal(t, tc.row, got.InARow)
			if tc.row == 0 {
				assert.Equal(t, ledger.HealRecord{Of: tc.deployed, Difference: tc.diff}, got)
			}
		})
	}
	assert.Equal(t, "group_missing web", healDifference(execution.DriftItem{Kind: execution.DriftGroupMissing, Service: "web", Group: "g"}))
	assert.Equal(t, "extra_group g", healDifference(execution.DriftItem{Kind: execution.DriftExtraGroup, Group: "g"}))
}
