package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/local/region"
	"github.com/ferryhq/ferry/internal/target"
)

// usWest2 is the region the deploy-test config moves to: a copy of
// us-east-1 in the same account.
const usWest2 = "us-west-2"

// movedReleaseFile writes the deploy-test release, targeting us-west-2,
// with move (nil: none) as its move_from, and its user data file, and
// returns its path.
func movedReleaseFile(t *testing.T, move map[string]string) string {
	t.Helper()
	data, err := os.ReadFile(deployTestRelease)
	require.NoError(t, err)
	var r map[string]any
	require.NoError(t, json.Unmarshal(data, &r))
	r["region"] = usWest2
	if move != nil {
		r["move_from"] = move
	}
	out, err := json.Marshal(r)
	require.NoError(t, err)
	userData, err := os.ReadFile(deployTestRelease + ".userdata")
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "west.json")
	require.NoError(t, os.WriteFile(path, out, 0o644))
	require.NoError(t, os.WriteFile(path+".userdata", userData, 0o644))
	return path
}

// TestMoveToAnotherRegion: a config deployed in us-east-1 whose release
// now says us-west-2 is refused by plan and by deploy, with the
// move_from that asks for the move; with it, plan lists the us-east-1
// group under "retire in account ... region us-east-1", the deploy
// succeeds in us-west-2 and retires the us-east-1 fleet (show names it
// among the groups it retired), status --drift
// finds nothing; a rollback to the first release's content is a move
// back, refused without --move-from and done with it; and destroy leaves
// nothing in either region.
func TestMoveToAnotherRegion(t *testing.T) {
	tr := startRegion(t, "deploy-test.json", func(o *region.Options) {
		require.NoError(t, o.World.CopyRegion(devAccount, usEast1, usWest2))
	})
	first := tr.ferry(t, "deploy", "--local", deployTestRelease)
	require.Equal(t, exitOK, first.code, "stdout:\n%s\nstderr:\n%s", first.stdout, first.stderr)
	id1 := releaseIDOf(t, first.stdout)
	const how = `set "move_from": {"account_id":"111111111111","region":"us-east-1"} (ferry rollback --move-from 111111111111/us-east-1)`

	west := movedReleaseFile(t, nil)
	plan := tr.ferry(t, "plan", "--local", west)
	assert.Equal(t, exitFailure, plan.code, "stdout:\n%s\nstderr:\n%s", plan.stdout, plan.stderr)
	assert.Contains(t, plan.stdout, "move_from: coinbase/deploy-test development is deployed to account 111111111111 region us-east-1, this release to account 111111111111 region us-west-2")
	assert.Contains(t, plan.stdout, how)
	refused := tr.ferry(t, "deploy", "--local", west)
	assert.NotEqual(t, exitOK, refused.code)
	assert.Contains(t, refused.stdout+refused.stderr, how)
	assert.Empty(t, tr.groups(devAccount, usWest2), "nothing made in us-west-2")
	assert.Equal(t, map[string]int{devGroup(id1): 1}, tr.groups(devAccount, usEast1), "us-east-1 serves on")

	moved := movedReleaseFile(t, map[string]string{"account_id": devAccount, "region": usEast1})
	plan = tr.ferry(t, "plan", "--local", moved)
	require.Equal(t, exitOK, plan.code, "stdout:\n%s\nstderr:\n%s", plan.stdout, plan.stderr)
	assert.Contains(t, plan.stdout, "ferry plan: coinbase/deploy-test development in account 111111111111 region us-west-2\n")
	assert.Contains(t, plan.stdout, "  retire in account 111111111111 region us-east-1\n    "+devGroup(id1)+"\n")
	planJSON := tr.ferry(t, "plan", "--local", "--json", moved)
	require.Equal(t, exitOK, planJSON.code, planJSON.stderr)
	var p execution.Plan
	require.NoError(t, json.Unmarshal([]byte(planJSON.stdout), &p))
	require.Len(t, p.Elsewhere, 1)
	assert.Equal(t, usEast1, p.Elsewhere[0].Target.Region)
	assert.Equal(t, []string{devGroup(id1)}, p.Elsewhere[0].Groups)

	move := tr.ferry(t, "deploy", "--local", moved)
	require.Equal(t, exitOK, move.code, "stdout:\n%s\nstderr:\n%s", move.stdout, move.stderr)
	id2 := releaseIDOf(t, move.stdout)
	assert.Empty(t, tr.groups(devAccount, usEast1), "the us-east-1 fleet is retired")
	assert.Equal(t, map[string]int{devGroup(id2): 1}, tr.groups(devAccount, usWest2))
	assert.Zero(t, tr.World().CutConnections(), "no connection cut, no load balancer dark while claimed")
	show := tr.ferry(t, "show", "--local", "--json", id2)
	require.Equal(t, exitOK, show.code, show.stderr)
	var rd releaseDetail
	require.NoError(t, json.Unmarshal([]byte(show.stdout), &rd))
	assert.Equal(t, []string{devGroup(id1)}, rd.Retired, "show names the group it retired in us-east-1")

	st := tr.ferry(t, "status", "--local", "--drift", "coinbase/deploy-test", "development")
	require.Equal(t, exitOK, st.code, st.stderr)
	assert.Contains(t, st.stdout, "drift: none")
	assert.NotContains(t, st.stdout, "also in")

	// Back to us-east-1: the content of the first release, moved back.
	back := tr.ferry(t, "rollback", "--local", "coinbase/deploy-test", "development")
	assert.NotEqual(t, exitOK, back.code)
	assert.Contains(t, back.stdout+back.stderr, "(ferry rollback --move-from 111111111111/us-west-2)")
	assert.Equal(t, map[string]int{devGroup(id2): 1}, tr.groups(devAccount, usWest2), "us-west-2 serves on")
	back = tr.ferry(t, "rollback", "--local", "--move-from", devAccount+"/"+usWest2, "coinbase/deploy-test", "development")
	require.Equal(t, exitOK, back.code, "stdout:\n%s\nstderr:\n%s", back.stdout, back.stderr)
	id3 := releaseIDOf(t, back.stdout)
	assert.Equal(t, map[string]int{devGroup(id3): 1}, tr.groups(devAccount, usEast1))
	assert.Empty(t, tr.groups(devAccount, usWest2), "the us-west-2 fleet is retired")

	destroyed := tr.ferry(t, "destroy", "--local", "--yes", "coinbase/deploy-test", "development")
	require.Equal(t, exitOK, destroyed.code, "stdout:\n%s\nstderr:\n%s", destroyed.stdout, destroyed.stderr)
	assert.Empty(t, tr.groups(devAccount, usEast1))
	assert.Empty(t, tr.groups(devAccount, usWest2))
}

// TestParseMoveFrom: --move-from is ACCOUNT_ID/REGION[/QUALIFIER], each
// part checked as a release's move_from is, and a wrong one says which.
func TestParseMoveFrom(t *testing.T) {
	for _, tc := range []struct {
		in, wantErr string
		want        target.Target
	}{
		{in: "111111111111/us-east-1", want: target.Target{AccountID: "111111111111", Region: "us-east-1"}},
		{in: "111111111111/eu-west-1/blue", want: target.Target{AccountID: "111111111111", Region: "eu-west-1", Qualifier: "blue"}},
		{in: "us-east-1", wantErr: "must be ACCOUNT_ID/REGION or ACCOUNT_ID/REGION/QUALIFIER"},
		{in: "111111111111/us-east-1/blue/x", wantErr: "must be ACCOUNT_ID/REGION or ACCOUNT_ID/REGION/QUALIFIER"},
		{in: "1111/us-east-1", wantErr: "the account id must be 12 digits"},
		{in: "111111111111/US-EAST-1", wantErr: "the region must be an AWS region like us-east-1"},
		{in: "111111111111/us-east-1/Blue", wantErr: "the qualifier must be 1 to 10 lowercase letters and digits"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseMoveFrom(tc.in)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestMoveStoppedBeforeTheSwap: a move stopped once it made its group in
// us-west-2, before its swap (an execution aborted, its lock left
// behind), forgets neither region: status names us-west-2 ("also in"),
// status --drift reports the group left there, and destroy, which says
// so when it asks for the confirmation, retires the groups of both
// regions.
func TestMoveStoppedBeforeTheSwap(t *testing.T) {
	tr := startRegion(t, "deploy-test.json", func(o *region.Options) {
		require.NoError(t, o.World.CopyRegion(devAccount, usEast1, usWest2))
	})
	first := tr.ferry(t, "deploy", "--local", deployTestRelease)
	require.Equal(t, exitOK, first.code, "stdout:\n%s\nstderr:\n%s", first.stdout, first.stderr)
	id1 := releaseIDOf(t, first.stdout)

	hold := tr.Hold()
	started := tr.ferry(t, "deploy", "--local", "--no-wait", movedReleaseFile(t, map[string]string{"account_id": devAccount, "region": usEast1}))
	require.Equal(t, exitOK, started.code, started.stderr)
	id2 := releaseIDOf(t, started.stdout)
	wait := tr.sleeper()
	for len(tr.groups(devAccount, usWest2)) == 0 {
		require.NoError(t, wait(context.Background(), 0))
	}
	running := tr.Executions(asl.StatusRunning)
	require.Len(t, running, 1)
	_, err := tr.Stop(running[0].ARN(), "Aborted", "stopped by hand")
	require.NoError(t, err)
	hold()
	unlock := tr.ferry(t, "unlock", "--local", "coinbase/deploy-test", "development", "--release", id2)
	require.Equal(t, exitOK, unlock.code, unlock.stderr)

	st := tr.ferry(t, "status", "--local", "--drift", "coinbase/deploy-test", "development")
	require.Equal(t, exitOK, st.code, st.stderr)
	assert.Contains(t, st.stdout, "deployed  "+id1)
	assert.Regexp(t, `also in\s+account 111111111111 region us-west-2\s+groups of the config may be left there`, st.stdout)
	assert.Contains(t, st.stdout, devGroup(id2))
	assert.Contains(t, st.stdout, "a group of the config left in account 111111111111 region us-west-2")
	asJSON := tr.ferry(t, "status", "--local", "--json", "--drift", "coinbase/deploy-test", "development")
	require.Equal(t, exitOK, asJSON.code, asJSON.stderr)
	var ps projectStatus
	require.NoError(t, json.Unmarshal([]byte(asJSON.stdout), &ps))
	require.Len(t, ps.Configs, 1)
	assert.Equal(t, []target.Target{{AccountID: devAccount, Region: usWest2}}, ps.Configs[0].Elsewhere)
	require.NotNil(t, ps.Configs[0].Drift)
	require.Len(t, ps.Configs[0].Drift.Drifts, 1)
	assert.Equal(t, &target.Target{AccountID: devAccount, Region: usWest2}, ps.Configs[0].Drift.Drifts[0].Target)

	destroyed := tr.ferryAt(context.Background(), atTerminal("development\n"), "destroy", "--local", "coinbase/deploy-test", "development")
	require.Equal(t, exitOK, destroyed.code, "stdout:\n%s\nstderr:\n%s", destroyed.stdout, destroyed.stderr)
	assert.Contains(t, destroyed.stderr, "  also in account 111111111111 region us-west-2: every group of the config there is retired\n")
	assert.Contains(t, destroyed.stdout, "retired group "+devGroup(id1))
	assert.Contains(t, destroyed.stdout, "retired group "+devGroup(id2))
	assert.Empty(t, tr.groups(devAccount, usEast1))
	assert.Empty(t, tr.groups(devAccount, usWest2))
	assert.Zero(t, tr.World().CutConnections(), "no connection cut, no load balancer dark while claimed")
}
