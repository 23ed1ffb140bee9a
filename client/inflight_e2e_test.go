package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/local/region"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/statemachine/shape"
)

// withBake writes a copy of the release file file with bake_seconds set,
// and returns its path.
func withBake(t *testing.T, file string, seconds int) string {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	var raw map[string]any
	require.NoError(t, json.Unmarshal(data, &raw))
	raw["bake_seconds"] = seconds
	out := filepath.Join(t.TempDir(), "baking-"+filepath.Base(file))
	writeJSON(t, out, raw)
	return out
}

// holdWhen arms the region to hold its time still once an execution
// enters state; held waits for that and returns the release of the hold
// (released at the latest when the test ends).
func (tr *testRegion) holdWhen(t *testing.T, state string) (held func() (release func())) {
	t.Helper()
	ch := make(chan func(), 1)
	var once sync.Once
	tr.observe(func(_ string, ev asl.Event) {
		if ev.StateEntered != nil && ev.StateEntered.Name == state {
			once.Do(func() { ch <- tr.Hold() })
		}
	})
	return func() func() {
		release := <-ch
		tr.observe(func(string, asl.Event) {})
		t.Cleanup(release)
		return release
	}
}

// holdIn starts a deploy of file (--no-wait) and holds the region's time
// still once its execution enters state: the deploy stays there, its lock
// held, until release is called (at the latest when the test ends).
// Commands run meanwhile must not let time pass (inFlight).
func (tr *testRegion) holdIn(t *testing.T, state, file string) (releaseID string, release func()) {
	t.Helper()
	held := tr.holdWhen(t, state)
	started := tr.ferry(t, "deploy", "--local", "--no-wait", file)
	require.Equal(t, exitOK, started.code, "stdout:\n%s\nstderr:\n%s", started.stdout, started.stderr)
	return releaseIDOf(t, started.stdout), held()
}

// inFlight runs one command while holdIn holds time still: its waits
// between reads of its execution end when the region records an event,
// not when time passes.
func (tr *testRegion) inFlight(t *testing.T, args ...string) result {
	t.Helper()
	return tr.ferryAt(t.Context(), func(e *Env) { e.Sleep = tr.sleeper() }, args...)
}

// startShop starts the us-west-2 region of the multi-service world and
// deploys the shop's two services there, returning the release id.
func startShop(t *testing.T) (*testRegion, string) {
	t.Helper()
	tr := startRegion(t, "multi-service.json", func(o *region.Options) { o.Region = "us-west-2" })
	first := tr.ferry(t, "deploy", "--local", "testdata/e2e/shop-two-services.json")
	require.Equal(t, exitOK, first.code, "stdout:\n%s\nstderr:\n%s", first.stdout, first.stderr)
	return tr, releaseIDOf(t, first.stdout)
}

// TestPlanDuringBake: ferry plan while another release bakes says that
// release is deploying, as the one reason, and plans nothing it would
// not do: no complaint about two previous groups, no retire list made of
// the groups the deploy under way serves with or stands by.
func TestPlanDuringBake(t *testing.T) {
	tr, id1 := startShop(t)
	id2, _ := tr.holdIn(t, shape.StateWaitForBake, withBake(t, "testdata/e2e/shop-two-services.json", 3600))

	res := tr.inFlight(t, "plan", "--local", "testdata/e2e/shop-web-only.json")
	require.Equal(t, exitFailure, res.code, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
	assert.Contains(t, res.stdout, "  deployed now: "+id1+"\n")
	assert.Regexp(t, `\nthe deploy would be refused \(1 reason\):\n  lock: release `+id2+` is deploying to acme/shop staging \(locked since [^)]+\): plan again when it ends\n$`, res.stdout)
	assert.NotContains(t, res.stdout, "previous Auto Scaling groups")
	assert.NotContains(t, res.stdout, "retire")
	assert.NotContains(t, res.stdout, "remove services")

	js := tr.inFlight(t, "plan", "--local", "--json", "testdata/e2e/shop-web-only.json")
	require.Equal(t, exitFailure, js.code, js.stderr)
	var p execution.Plan
	require.NoError(t, json.Unmarshal([]byte(js.stdout), &p))
	assert.Len(t, p.Refusals, 1)
	assert.Equal(t, []string{}, p.Retire)
	assert.Equal(t, []string{}, p.Remove)
}

// TestStatusDriftDuringDeploy: ferry status --drift while another release
// bakes and then retires the previous groups shows that deploy under way,
// each group it acts on with what it does with it, and no drift: the
// groups standing by out of their load balancers are not load_balancers
// drift, the groups retiring are no extra groups.
func TestStatusDriftDuringDeploy(t *testing.T) {
	tr, id1 := startShop(t)
	id2, baking := tr.holdIn(t, shape.StateWaitForBake, withBake(t, "testdata/e2e/shop-two-services.json", 3600))
	web1, worker1 := naming.GroupName("acme/shop", "staging", "web", id1), naming.GroupName("acme/shop", "staging", "worker", id1)
	web2, worker2 := naming.GroupName("acme/shop", "staging", "web", id2), naming.GroupName("acme/shop", "staging", "worker", id2)

	res := tr.inFlight(t, "status", "--local", "--drift", "acme/shop", "staging")
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.Regexp(t, `\n  deploy under way: release `+id2+` \(locked since [^)]+\)\n`, res.stdout)
	assert.Regexp(t, `\n    web +standing_by +`+web1+`\n`, res.stdout)
	assert.Regexp(t, `\n    web +deploying +`+web2+`\n`, res.stdout)
	assert.Contains(t, res.stdout, "  drift: none, what runs is what ferry deployed and is deploying (checked ")
	assert.NotContains(t, res.stdout, "load_balancers")

	retiring := tr.holdWhen(t, shape.StateWaitForRetire)
	baking()
	retiring()
	js := tr.inFlight(t, "status", "--local", "--drift", "--json", "acme/shop", "staging")
	require.Equal(t, exitOK, js.code, js.stderr)
	var ps projectStatus
	require.NoError(t, json.Unmarshal([]byte(js.stdout), &ps))
	d := ps.Configs[0].Drift
	require.NotNil(t, d)
	assert.Equal(t, id2, d.Deployed, "past the swap's point of no return")
	assert.Empty(t, d.Drifts)
	require.NotNil(t, d.InFlight)
	assert.Equal(t, id2, d.InFlight.ReleaseID)
	assert.ElementsMatch(t, []execution.InFlightGroup{
		{State: execution.InFlightRetiring, Service: "web", Group: web1},
		{State: execution.InFlightRetiring, Service: "worker", Group: worker1},
		{State: execution.InFlightDeploying, Service: "web", Group: web2},
		{State: execution.InFlightDeploying, Service: "worker", Group: worker2},
	}, d.InFlight.Groups)
}

// TestWriteDriftInFlight: the drift report says what it knows of a deploy
// under way: its groups, or that it is unknown, and then never "none" as
// if nothing could be hidden.
func TestWriteDriftInFlight(t *testing.T) {
	at := e2eStart
	for _, tc := range []struct {
		name string
		fl   *execution.InFlight
		want string
	}{
		{"none", nil, "  drift: none, what runs is what ferry deployed (checked 2025-03-04 10:00:00Z)\n"},
		{"baking", &execution.InFlight{ReleaseID: "r2", Since: at, Groups: []execution.InFlightGroup{
			{State: execution.InFlightStandingBy, Service: "web", Group: "g1"}, {State: execution.InFlightDeploying, Service: "web", Group: "g2"}}},
			"  deploy under way: release r2 (locked since 2025-03-04 10:00:00Z)\n" +
				"    web  standing_by  g1\n" +
				"    web  deploying    g2\n" +
				"  drift: none, what runs is what ferry deployed and is deploying (checked 2025-03-04 10:00:00Z)\n"},
		{"unknown", &execution.InFlight{Unknown: "lock: read _state/a/b/lock: AccessDenied"},
			"  deploy under way: unknown (lock: read _state/a/b/lock: AccessDenied); every group is compared\n" +
				"  drift: none found, but the deploy under way is unknown (checked 2025-03-04 10:00:00Z)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			writeDrift(&b, &execution.Drift{Deployed: "r1", CheckedAt: at, InFlight: tc.fl})
			assert.Equal(t, tc.want, b.String())
		})
	}
}
