package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/events"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/store/halt"
)

// bakedRelease is the deploy-test release with a bake of bakeSeconds,
// written in dir.
func bakedRelease(t *testing.T, dir string, bakeSeconds int) string {
	t.Helper()
	raw, err := os.ReadFile(deployTestRelease)
	require.NoError(t, err)
	var r map[string]any
	require.NoError(t, json.Unmarshal(raw, &r))
	r["bake_seconds"] = bakeSeconds
	r["user_data"] = "#cloud-config\n"
	out, err := json.Marshal(r)
	require.NoError(t, err)
	path := filepath.Join(dir, "baked.json")
	require.NoError(t, os.WriteFile(path, out, 0o600))
	return path
}

// deployEvents runs ferry local events --json on tr with args, checks
// every detail against ferry schema events (checkEvents), and returns
// their kinds and the details, in order.
func deployEvents(t *testing.T, tr *testRegion, args ...string) ([]string, []map[string]any) {
	t.Helper()
	r := tr.ferry(t, append([]string{"local", "events", "--endpoint", tr.url, "--json"}, args...)...)
	require.Equal(t, exitOK, r.code, r.stderr)
	kinds := checkEvents(t, r.stdout)
	var details []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if line == "" {
			continue
		}
		var d map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &d))
		details = append(details, d)
	}
	return kinds, details
}

// since is the kinds after the first n.
func since(kinds []string, n int) []string { return kinds[min(n, len(kinds)):] }

// TestDeployEvents runs deploys on the local region (the real definition,
// the real handlers) and reads what they put on the default bus: a
// success puts started, healthy, baked, swapped and succeeded in that
// order; a release that never gets healthy is rolled back and fails; a
// halt puts halted before failed; every detail is valid against ferry
// schema events, and each names its execution, with an id no other event
// has. A PutEvents that fails does not fail the deploy. A canary puts
// its step; a drift is put once, however many checks see it.
func TestDeployEvents(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	baked := bakedRelease(t, t.TempDir(), 60)

	ok := tr.ferry(t, "deploy", "--local", baked)
	require.Equal(t, exitOK, ok.code, "stdout:\n%s\nstderr:\n%s", ok.stdout, ok.stderr)
	kinds, details := deployEvents(t, tr)
	assert.Equal(t, []string{"release_started", "release_healthy", "release_baked", "release_swapped", "release_succeeded"}, kinds)
	id := releaseIDOf(t, ok.stdout)
	seen := map[any]bool{}
	for _, d := range details {
		assert.Equal(t, id, d["release_id"])
		assert.Equal(t, "coinbase/deploy-test", d["project"])
		assert.Contains(t, d["execution_arn"], "coinbase_deploy-test_development_")
		assert.False(t, seen[d["id"]], "ids are distinct: %v", d["id"])
		seen[d["id"]] = true
	}
	assert.Equal(t, []any{"ValidateResources", "CheckHealthy", "Bake", "CleanUpSuccess", "CleanUpSuccess"},
		[]any{details[0]["task"], details[1]["task"], details[2]["task"], details[3]["task"], details[4]["task"]})

	broken := tr.ferry(t, "deploy", "--local", demoBroken)
	require.Equal(t, exitFailure, broken.code, broken.stdout)
	kinds, details = deployEvents(t, tr)
	assert.Equal(t, []string{"release_started", "release_rolled_back", "release_failed"}, since(kinds, 5))
	assert.Equal(t, "FailureClean", details[len(details)-1]["end"])
	assert.Equal(t, "TimeoutError", details[len(details)-1]["error"])

	// A halt marker written during the second health check halts the
	// deploy.
	var checks atomic.Int32
	halts := halt.New(tr.S3(), tr.Bucket())
	tr.observe(func(_ string, ev asl.Event) {
		if ev.StateEntered != nil && ev.StateEntered.Name == execution.TaskCheckHealthy && checks.Add(1) == 2 {
			require.NoError(t, halts.Put(t.Context(), "coinbase/deploy-test", "development", halt.Marker{By: "tester", Reason: "bad build", At: tr.Clock().Now()}))
		}
	})
	tr.clk.Advance(time.Minute)
	halted := tr.ferry(t, "deploy", "--local", demoSlow)
	require.Equal(t, exitFailure, halted.code, halted.stdout)
	tr.observe(func(string, asl.Event) {})
	kinds, details = deployEvents(t, tr)
	assert.Equal(t, []string{"release_started", "release_rolled_back", "release_halted", "release_failed"}, since(kinds, 8))
	assert.Equal(t, "HaltError", details[len(details)-1]["error"])

	// EventBridge failing every call: the deploy succeeds all the same.
	_, err := tr.World().Faults().Add(sim.Rule{Service: "EventBridge", Op: "PutEvents", Err: sim.InternalError()})
	require.NoError(t, err)
	tr.clk.Advance(time.Minute)
	again := tr.ferry(t, "deploy", "--local", deployTestRelease)
	require.Equal(t, exitOK, again.code, "stdout:\n%s\nstderr:\n%s", again.stdout, again.stderr)
	kinds, _ = deployEvents(t, tr)
	assert.Len(t, kinds, 12, "no event put while EventBridge fails")
	tr.World().Faults().Clear()

	// A canary's step, then drift: a group deleted behind ferry's back
	// is announced once, however many checks see it.
	tr.clk.Advance(time.Minute)
	canary := tr.ferry(t, "deploy", "--local", demoV2)
	require.Equal(t, exitOK, canary.code, "stdout:\n%s\nstderr:\n%s", canary.stdout, canary.stderr)
	kinds, details = deployEvents(t, tr)
	assert.Equal(t, []string{"release_started", "canary_step", "release_healthy", "release_swapped", "release_succeeded"}, since(kinds, 12))
	assert.Equal(t, "web", details[13]["service"])
	assert.Equal(t, "build-1042", details[13]["version"], "details carry the release's version")
	gone := tr.ferry(t, "local", "world", "--endpoint", tr.url, "delete-group", devGroup(releaseIDOf(t, canary.stdout)))
	require.Equal(t, exitOK, gone.code, gone.stderr)
	for range 2 {
		tr.clk.Advance(time.Minute)
		st := tr.ferry(t, "status", "--local", "--drift", "coinbase/deploy-test", "development")
		require.Contains(t, st.stdout, "drift", st.stderr)
	}
	kinds, details = deployEvents(t, tr)
	assert.Equal(t, []string{"drift_found"}, since(kinds, 17))
	assert.Equal(t, []any{devGroup(releaseIDOf(t, canary.stdout)) + ": the group is gone"}, details[17]["problems"])

	// --project and --since filter.
	kinds, _ = deployEvents(t, tr, "--project", "someone/else")
	assert.Empty(t, kinds)
	kinds, _ = deployEvents(t, tr, "--since", tr.Clock().Now().Add(time.Hour).UTC().Format(time.RFC3339))
	assert.Empty(t, kinds)
	text := tr.ferry(t, "local", "events", "--endpoint", tr.url)
	require.Equal(t, exitOK, text.code, text.stderr)
	assert.Regexp(t, `\n2025-03-04T10:00:00Z +`+events.Started.DetailType+` +coinbase/deploy-test/development +`+id+` +ValidateResources\n`, text.stdout)
}

// TestLocalEventsFollow: ferry local events -f prints what is on the bus,
// then each event put after, until it is interrupted (its wait fails).
func TestLocalEventsFollow(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	put := func(id string) {
		t.Helper()
		d, err := events.Event{Kind: events.Healthy, Body: events.HealthyDetail{
			Head: events.Head{ID: id, Project: "coinbase/deploy-test", Config: "development", ReleaseID: "r-" + id}, Services: []string{"web"}}}.Detail()
		require.NoError(t, err)
		_, err = tr.World().Clients(devAccount, usEast1).EventBridge.PutEvents(t.Context(), &eventbridge.PutEventsInput{
			Entries: []ebtypes.PutEventsRequestEntry{{Source: aws.String(events.Source), DetailType: aws.String(events.Healthy.DetailType), Detail: aws.String(d)}}})
		require.NoError(t, err)
	}
	put("first")
	waits := 0
	res := tr.ferryAt(t.Context(), func(env *Env) {
		env.Sleep = func(ctx context.Context, _ time.Duration) error {
			if waits++; waits == 1 {
				put("second") // put while ferry waits
				return nil
			}
			return context.Canceled // Ctrl-C
		}
	}, "local", "events", "--endpoint", tr.url, "--json", "-f")
	require.Equal(t, exitOK, res.code, res.stderr)
	kinds := checkEvents(t, res.stdout)
	assert.Equal(t, []string{"release_healthy", "release_healthy"}, kinds)
	assert.Regexp(t, `(?s)"release_id":"r-first".*\n.*"release_id":"r-second"`, res.stdout)
	assert.Equal(t, 2, waits)
}
