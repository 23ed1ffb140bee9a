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

	"github.com/ferryhq/ferry/internal/asl"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/ledger"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/lock"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/sim"
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
// Validate accepts and the deploy path takes to Success; a fleet healed
// resets the heals in a row; heals that do not help wait longer each
// time.
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
	require.Len(t, first.Healed, 1)
	// That heal never runs (its execution stays RUNNING): the next pass
	// finds the lock free and the fleet still gone, but waits its retry.
	h.clk.Advance(5 * time.Minute)
	assert.Empty(t, h.pass().Healed, "the retry interval has not passed")
	h.clk.Advance(10 * time.Minute)
	second := h.pass()
	require.Len(t, second.Healed, 1, "15 minutes after the first heal")
	h.clk.Advance(20 * time.Minute)
	assert.Empty(t, h.pass().Healed, "the second heal in a row waits 30 minutes")
	h.clk.Advance(11 * time.Minute)
	assert.Len(t, h.pass().Healed, 1)
	rec, _, err := h.ledger.GetHeal(t.Context(), project, config)
	require.NoError(t, err)
	assert.Equal(t, 3, rec.InARow)
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
