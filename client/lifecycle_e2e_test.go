package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/local/region"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/asset"
	"github.com/ferryhq/ferry/internal/store/ledger"
)

// TestHistoryShowRollback: two deploys are in the history with their
// outcome, who and how long; show names each one's groups and timeline;
// rollback deploys the first one's content again as a new release from
// the records alone, and the history says so.
func TestHistoryShowRollback(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	first := tr.ferry(t, "deploy", "--local", deployTestRelease)
	require.Equal(t, exitOK, first.code, "stdout:\n%s\nstderr:\n%s", first.stdout, first.stderr)
	id1 := releaseIDOf(t, first.stdout)
	second := tr.ferry(t, "deploy", "--local", demoV2)
	require.Equal(t, exitOK, second.code, "stdout:\n%s\nstderr:\n%s", second.stdout, second.stderr)
	id2 := releaseIDOf(t, second.stdout)

	h := tr.ferry(t, "history", "--local", "--json", "coinbase/deploy-test", "development")
	require.Equal(t, exitOK, h.code, h.stderr)
	var doc historyDoc
	require.NoError(t, json.Unmarshal([]byte(h.stdout), &doc))
	entries := doc.Releases
	require.Len(t, entries, 2)
	assert.Equal(t, id2, entries[0].ReleaseID, "newest first")
	assert.True(t, entries[0].Deployed)
	assert.False(t, entries[1].Deployed)
	for _, e := range entries {
		assert.Equal(t, execution.EndSuccess, e.End, e.ReleaseID)
		assert.Positive(t, e.DurationSeconds, e.ReleaseID)
		assert.False(t, e.StartedAt.IsZero(), e.ReleaseID)
		assert.NotEmpty(t, e.CreatedBy, e.ReleaseID)
	}
	assert.Equal(t, "build-1042", entries[0].Version)
	limited := tr.ferry(t, "history", "--local", "--limit", "1", "coinbase/deploy-test", "development")
	require.Equal(t, exitOK, limited.code, limited.stderr)
	assert.Regexp(t, `(?m)^`+regexp.QuoteMeta(id2)+` \*\s+Success\s`, limited.stdout)
	assert.NotContains(t, limited.stdout, id1, "--limit 1 shows the newest only")

	// show finds the release by its id alone.
	s1 := tr.ferry(t, "show", "--local", "--json", id1)
	require.Equal(t, exitOK, s1.code, s1.stderr)
	var rd releaseDetail
	require.NoError(t, json.Unmarshal([]byte(s1.stdout), &rd))
	assert.Equal(t, []string{devGroup(id1)}, rd.Created)
	assert.Empty(t, rd.Retired, "the first release retired nothing")
	assert.Len(t, rd.Digest, 64)
	require.NotNil(t, rd.Outcome)
	assert.Equal(t, execution.EndSuccess, rd.Outcome.End)
	var states []string
	for _, s := range rd.Timeline {
		states = append(states, s.State)
	}
	assert.Subset(t, states, []string{"Validate", "Lock", "Deploy", "CheckHealthy", "CleanUpSuccess", "Success"})
	assert.Less(t, slices.Index(states, "Validate"), slices.Index(states, "Lock"), "in the order first entered")
	assert.Less(t, slices.Index(states, "Deploy"), slices.Index(states, "CleanUpSuccess"), "in the order first entered")
	s2 := tr.ferry(t, "show", "--local", "coinbase/deploy-test", "development", id2)
	require.Equal(t, exitOK, s2.code, s2.stderr)
	assert.Contains(t, s2.stdout, "coinbase/deploy-test development release "+id2+" (deployed now)\n")
	assert.Contains(t, s2.stdout, "  retired groups\n    "+devGroup(id1)+"\n")
	assert.Contains(t, s2.stdout, "  created groups\n    "+devGroup(id2)+"\n")
	assert.Regexp(t, `\n    CheckHealthy +×\d+ +`, s2.stdout, "a loop's state says how many times it ran")

	// rollback: the content of id1, as a new release.
	rb := tr.ferry(t, "rollback", "--local", "coinbase/deploy-test", "development")
	require.Equal(t, exitOK, rb.code, "stdout:\n%s\nstderr:\n%s", rb.stdout, rb.stderr)
	assert.Contains(t, rb.stdout, "ferry rollback: coinbase/deploy-test development back from release "+id2+" to the content of release "+id1+"\n")
	id3 := releaseIDOf(t, rb.stdout)
	assert.NotContains(t, []string{id1, id2}, id3)
	groups := tr.groups(devAccount, usEast1)
	assert.Contains(t, groups, devGroup(id3))
	assert.NotContains(t, groups, devGroup(id2), "the rolled back release's group is retired")
	l := ledger.New(tr.S3(), tr.Bucket())
	r1, err := l.GetRelease(context.Background(), "coinbase/deploy-test", "development", id1)
	require.NoError(t, err)
	r3, err := l.GetRelease(context.Background(), "coinbase/deploy-test", "development", id3)
	require.NoError(t, err)
	assert.Equal(t, id1, r3.RollbackOf)
	c1, err := release.ContentHash(r1)
	require.NoError(t, err)
	c3, err := release.ContentHash(r3)
	require.NoError(t, err)
	assert.Equal(t, c1, c3, "the same content")
	cur, _, err := l.GetCurrent(context.Background(), "coinbase/deploy-test", "development")
	require.NoError(t, err)
	assert.Equal(t, id3, cur.ReleaseID)
	h = tr.ferry(t, "history", "--local", "coinbase/deploy-test", "development")
	require.Equal(t, exitOK, h.code, h.stderr)
	assert.Regexp(t, `(?m)^`+regexp.QuoteMeta(id3)+` \*\s+Success\s.*rollback to `+regexp.QuoteMeta(id1)+`$`, h.stdout)

	// The default target is now id2, the success before id3.
	rb2 := tr.ferry(t, "rollback", "--local", "--no-wait", "coinbase/deploy-test", "development")
	require.Equal(t, exitOK, rb2.code, rb2.stderr)
	assert.Contains(t, rb2.stdout, "back from release "+id3+" to the content of release "+id2+"\n")
}

// TestRollbackPassesOverTheSameContent: a release of the same content as
// the one deployed now (deployed again, or a heal) is no rollback: the
// default target is the success before it with other content.
func TestRollbackPassesOverTheSameContent(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	first := tr.ferry(t, "deploy", "--local", deployTestRelease)
	require.Equal(t, exitOK, first.code, first.stderr)
	id1 := releaseIDOf(t, first.stdout)
	for range 2 {
		again := tr.ferry(t, "deploy", "--local", demoV2)
		require.Equal(t, exitOK, again.code, again.stderr)
	}
	rb := tr.ferry(t, "rollback", "--local", "--no-wait", "coinbase/deploy-test", "development")
	require.Equal(t, exitOK, rb.code, rb.stderr)
	assert.Contains(t, rb.stdout, " to the content of release "+id1+"\n", "past the first deploy of the same content")
}

// TestRollbackRefused: a rollback with nothing to go back to, or to a
// release that is not a success of that config, says why and starts
// nothing.
func TestRollbackRefused(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	none := tr.ferry(t, "rollback", "--local", "coinbase/deploy-test", "development")
	assert.Equal(t, exitNotStarted, none.code)
	assert.Contains(t, none.stderr, "nothing is deployed to coinbase/deploy-test development: name the release to deploy again with --to")

	first := tr.ferry(t, "deploy", "--local", deployTestRelease)
	require.Equal(t, exitOK, first.code, first.stderr)
	id1 := releaseIDOf(t, first.stdout)
	broken := tr.ferry(t, "deploy", "--local", demoBroken)
	require.Equal(t, exitFailure, broken.code, broken.stdout)
	idBroken := releaseIDOf(t, broken.stdout)

	for _, tc := range []struct {
		name string
		args []string
		want string
		code int
	}{
		{"only one success", nil, "no release of coinbase/deploy-test development with other content than " + id1 + ", the one deployed now, succeeded before it", exitNotStarted},
		{"to current", []string{"--to", id1}, "release " + id1 + " is the one deployed to coinbase/deploy-test development now", exitNotStarted},
		{"to a failure", []string{"--to", idBroken}, "release " + idBroken + " of coinbase/deploy-test development ended FailureClean; only a release that succeeded can be deployed again", exitNotStarted},
		{"to unknown", []string{"--to", "20250101T000000Z-000000"}, "release 20250101T000000Z-000000 of coinbase/deploy-test development has no outcome", exitNotStarted},
		{"bad id", []string{"--to", "../x"}, `release id "../x"`, exitUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, err := ledger.New(tr.S3(), tr.Bucket()).Releases(context.Background(), "coinbase/deploy-test", "development")
			require.NoError(t, err)
			res := tr.ferry(t, append([]string{"rollback", "--local"}, append(tc.args, "coinbase/deploy-test", "development")...)...)
			assert.Equal(t, tc.code, res.code, res.stderr)
			assert.Contains(t, res.stderr, tc.want)
			after, err := ledger.New(tr.S3(), tr.Bucket()).Releases(context.Background(), "coinbase/deploy-test", "development")
			require.NoError(t, err)
			assert.Equal(t, before, after, "nothing was uploaded")
		})
	}
}

// TestRollbackDetaches: rolling back to a release that did not name a
// target group the release deployed now names takes the service out of
// it explicitly (under detach), says so, and succeeds; the deploy of
// that content without it would be refused.
func TestRollbackDetaches(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	dir := t.TempDir()
	data, err := os.ReadFile(deployTestRelease)
	require.NoError(t, err)
	var raw map[string]any
	require.NoError(t, json.Unmarshal(data, &raw))
	raw["user_data"] = "#!/bin/sh\necho {{SERVICE_NAME}}\n"
	web := raw["services"].(map[string]any)["web"].(map[string]any)
	tg := web["target_groups"].([]any)[0].(string)
	delete(web, "target_groups")
	withoutTG := filepath.Join(dir, "without-tg.json")
	writeJSON(t, withoutTG, raw)

	first := tr.ferry(t, "deploy", "--local", withoutTG)
	require.Equal(t, exitOK, first.code, "stdout:\n%s\nstderr:\n%s", first.stdout, first.stderr)
	id1 := releaseIDOf(t, first.stdout)
	second := tr.ferry(t, "deploy", "--local", deployTestRelease)
	require.Equal(t, exitOK, second.code, "stdout:\n%s\nstderr:\n%s", second.stdout, second.stderr)
	id2 := releaseIDOf(t, second.stdout)

	refused := tr.ferry(t, "deploy", "--local", withoutTG)
	assert.Equal(t, exitFailure, refused.code, "stdout:\n%s\nstderr:\n%s", refused.stdout, refused.stderr)
	assert.Contains(t, refused.stdout+refused.stderr, "name it under services.web.detach.target_groups")

	rb := tr.ferry(t, "rollback", "--local", "--to", id1, "coinbase/deploy-test", "development")
	require.Equal(t, exitOK, rb.code, "stdout:\n%s\nstderr:\n%s", rb.stdout, rb.stderr)
	assert.Contains(t, rb.stdout, "it takes web out of target groups "+tg+", which release "+id2+" names and release "+id1+" does not\n")
	r3, err := ledger.New(tr.S3(), tr.Bucket()).GetRelease(context.Background(), "coinbase/deploy-test", "development", releaseIDOf(t, rb.stdout))
	require.NoError(t, err)
	require.NotNil(t, r3.Services["web"].Detach)
	assert.Equal(t, []string{tg}, r3.Services["web"].Detach.TargetGroups)
}

// TestRollbackAssetGone: a rollback whose release's asset is no longer in
// the deployer bucket is refused, naming the asset, and starts nothing.
func TestRollbackAssetGone(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "app.conf"), []byte("color = blue\n"), 0o644))
	data, err := os.ReadFile(deployTestRelease)
	require.NoError(t, err)
	var raw map[string]any
	require.NoError(t, json.Unmarshal(data, &raw))
	raw["user_data"] = "#!/bin/sh\ncurl -fsS '{{ASSET_URL:app-config}}'\n"
	raw["assets"] = map[string]any{"app-config": map[string]any{"path": "app.conf"}}
	withAsset := filepath.Join(dir, "with-asset.json")
	writeJSON(t, withAsset, raw)
	raw["description"] = "second"
	second := filepath.Join(dir, "second.json")
	writeJSON(t, second, raw)

	first := tr.ferry(t, "deploy", "--local", withAsset)
	require.Equal(t, exitOK, first.code, "stdout:\n%s\nstderr:\n%s", first.stdout, first.stderr)
	next := tr.ferry(t, "deploy", "--local", second)
	require.Equal(t, exitOK, next.code, next.stderr)

	f, err := os.Open(filepath.Join(dir, "app.conf"))
	require.NoError(t, err)
	sum, _, err := asset.Hash(f)
	f.Close()
	require.NoError(t, err)
	_, err = tr.S3().DeleteObject(context.Background(), &s3.DeleteObjectInput{
		Bucket: aws.String(tr.Bucket()), Key: aws.String(naming.AssetKey("coinbase/deploy-test", "development", sum)),
	})
	require.NoError(t, err)
	before, err := ledger.New(tr.S3(), tr.Bucket()).Releases(context.Background(), "coinbase/deploy-test", "development")
	require.NoError(t, err)

	res := tr.ferry(t, "rollback", "--local", "coinbase/deploy-test", "development")
	assert.Equal(t, exitNotStarted, res.code, res.stdout)
	assert.Contains(t, res.stderr, "asset app-config (sha256 "+sum+"): no longer in the deployer bucket; deploy its release file instead")
	after, err := ledger.New(tr.S3(), tr.Bucket()).Releases(context.Background(), "coinbase/deploy-test", "development")
	require.NoError(t, err)
	assert.Equal(t, before, after, "nothing was uploaded")
}

// TestHistoryShowUnknown: a config or a release the deployer does not
// know is an error saying so.
func TestHistoryShowUnknown(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	h := tr.ferry(t, "history", "--local", "coinbase/deploy-test", "nowhere")
	assert.Equal(t, exitNotFound, h.code)
	assert.Contains(t, h.stderr, "the deployer knows nothing of coinbase/deploy-test nowhere")
	s := tr.ferry(t, "show", "--local", "20250101T000000Z-000000")
	assert.Equal(t, exitNotFound, s.code)
	assert.Contains(t, s.stderr, "no config of the deployer holds a release 20250101T000000Z-000000")
	s = tr.ferry(t, "show", "--local", "coinbase/deploy-test", "development", "20250101T000000Z-000000")
	assert.Equal(t, exitFailure, s.code)
	assert.Contains(t, s.stderr, "release 20250101T000000Z-000000 not found in the deployer bucket")
	bad := tr.ferry(t, "history", "--local", "--limit", "-1", "coinbase/deploy-test", "development")
	assert.Equal(t, exitUsage, bad.code)
	assert.Contains(t, bad.stderr, "--limit must be 0 (every release) or more")
}

// TestRemovals: a rollback removes the services deployed now that the
// release it copies does not deploy, and keeps that release's removals
// of services it still does not deploy.
func TestRemovals(t *testing.T) {
	stored := &release.Release{Services: map[string]*release.Service{"web": {}, "api": {}}, Remove: []string{"cron", "api"}}
	assert.Equal(t, []string{"cron", "worker"}, removals(stored, []string{"web", "worker"}))
	assert.Equal(t, []string{"cron"}, removals(stored, []string{"web", "api"}), "its own removals it still does not deploy")
}

// TestDetaches: a rollback takes each service it deploys out of the load
// balancers the release deployed now names for it and the release it
// copies does not, and keeps that release's own detach.
func TestDetaches(t *testing.T) {
	stored := &release.Release{Services: map[string]*release.Service{
		"web": {ELBs: []string{"a"}, TargetGroups: []string{"tg"}, Detach: &release.Detach{ELBs: []string{"old"}}},
		"api": {ELBs: []string{"api"}},
	}}
	current := &release.Release{Services: map[string]*release.Service{
		"web":    {ELBs: []string{"a", "b"}, TargetGroups: []string{"tg", "tg2"}},
		"api":    {ELBs: []string{"api"}},
		"worker": {ELBs: []string{"w"}},
	}}
	assert.Equal(t, map[string]release.Detach{"web": {ELBs: []string{"old", "b"}, TargetGroups: []string{"tg2"}}}, detaches(stored, current))
	assert.Equal(t, map[string]release.Detach{"web": {ELBs: []string{"old"}}}, detaches(stored, stored.Clone()), "nothing left out: its own detach only")
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

// atTerminal is a person at a terminal typing typed.
func atTerminal(typed string) func(*Env) {
	return func(env *Env) {
		env.Stdin = strings.NewReader(typed)
		env.Terminal = func() bool { return true }
	}
}

// ctrlCReader is a terminal at which the person presses Ctrl-C as soon as
// ferry reads it: the read cancels the command's context, then blocks
// until the test ends, as a terminal's read does (or a minute passes: a
// ferry that waits for the read anyway fails the test, not hangs it).
type ctrlCReader struct {
	cancel context.CancelFunc
	ended  <-chan struct{}
}

func (r ctrlCReader) Read([]byte) (int, error) {
	r.cancel()
	select {
	case <-r.ended:
	case <-time.After(time.Minute):
	}
	return 0, io.EOF
}

// TestDestroyConfirmation: the confirmation names the account and region
// the destroy runs in, the deployer's when the release names neither (not
// "(the deployer's)"), and Ctrl-C while it asks ends ferry at once,
// interrupted, with nothing destroyed.
func TestDestroyConfirmation(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	first := tr.ferry(t, "deploy", "--local", deployTestRelease)
	require.Equal(t, exitOK, first.code, "stdout:\n%s\nstderr:\n%s", first.stdout, first.stderr)
	id1 := releaseIDOf(t, first.stdout)
	groups := tr.groups(devAccount, usEast1)
	require.Len(t, groups, 1)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ended := make(chan struct{})
	defer close(ended)
	stopped := tr.ferryAt(ctx, func(env *Env) {
		env.Stdin = ctrlCReader{cancel: cancel, ended: ended}
		env.Terminal = func() bool { return true }
	}, "destroy", "--local", "coinbase/deploy-test", "development")
	assert.Equal(t, exitInterrupted, stopped.code, "stdout:\n%s\nstderr:\n%s", stopped.stdout, stopped.stderr)
	assert.Contains(t, stopped.stderr, "ferry destroy: coinbase/deploy-test development, in account "+devAccount+" region "+usEast1+"\n")
	assert.NotContains(t, stopped.stderr, "deployer's")
	assert.Contains(t, stopped.stderr, "interrupted: nothing was destroyed")
	assert.NotContains(t, stopped.stdout, "release", "no destroy was started")
	assert.Equal(t, groups, tr.groups(devAccount, usEast1), "nothing was retired")
	cur, deployed, err := ledger.New(tr.S3(), tr.Bucket()).GetCurrent(context.Background(), "coinbase/deploy-test", "development")
	require.NoError(t, err)
	assert.True(t, deployed)
	assert.Equal(t, id1, cur.ReleaseID)
}

// TestDestroy: destroy retires every group of the config through the
// deploy path, removes the record of what is deployed and records its
// outcome; it asks at a terminal, needs --yes elsewhere, and is
// idempotent; a config the deployer never saw is refused.
func TestDestroy(t *testing.T) {
	tr := startRegion(t, "multi-service.json", func(o *region.Options) { o.Region = "us-west-2" })
	first := tr.ferry(t, "deploy", "--local", "testdata/e2e/shop-two-services.json")
	require.Equal(t, exitOK, first.code, "stdout:\n%s\nstderr:\n%s", first.stdout, first.stderr)
	id1 := releaseIDOf(t, first.stdout)
	require.Len(t, tr.groups("111111111111", "us-west-2"), 2)

	noTerminal := tr.ferry(t, "destroy", "--local", "acme/shop", "staging")
	assert.Equal(t, exitUsage, noTerminal.code)
	assert.Contains(t, noTerminal.stderr, "destroy retires every group of acme/shop staging; confirm with --yes (no terminal to ask at)")
	refused := tr.ferryAt(context.Background(), atTerminal("stagin\n"), "destroy", "--local", "acme/shop", "staging")
	assert.Equal(t, exitNotStarted, refused.code)
	assert.Contains(t, refused.stderr, "deployed now: release "+id1+"; every group of the config is retired:\n    "+naming.GroupName("acme/shop", "staging", "web", id1))
	assert.Contains(t, refused.stderr, "not confirmed: nothing was started")
	require.Len(t, tr.groups("111111111111", "us-west-2"), 2, "nothing was retired")

	gone := tr.ferryAt(context.Background(), atTerminal("staging\n"), "destroy", "--local", "acme/shop", "staging")
	require.Equal(t, exitOK, gone.code, "stdout:\n%s\nstderr:\n%s", gone.stdout, gone.stderr)
	idD := releaseIDOf(t, gone.stdout)
	assert.Contains(t, gone.stdout, "retired group "+naming.GroupName("acme/shop", "staging", "web", id1))
	assert.Contains(t, gone.stdout, "retired group "+naming.GroupName("acme/shop", "staging", "worker", id1))
	assert.Empty(t, tr.groups("111111111111", "us-west-2"), "every group of the config is gone")
	_, deployed, err := ledger.New(tr.S3(), tr.Bucket()).GetCurrent(context.Background(), "acme/shop", "staging")
	require.NoError(t, err)
	assert.False(t, deployed, "nothing is deployed")
	st := tr.ferry(t, "status", "--local", "acme/shop", "staging")
	require.Equal(t, exitOK, st.code, st.stderr)
	assert.Contains(t, st.stdout, "  deployed  nothing: destroyed by release "+idD+"  ")
	h := tr.ferry(t, "history", "--local", "acme/shop", "staging")
	require.Equal(t, exitOK, h.code, h.stderr)
	assert.Regexp(t, `(?m)^`+regexp.QuoteMeta(idD)+`\s+Success\s.*destroy$`, h.stdout)

	again := tr.ferry(t, "destroy", "--local", "--yes", "acme/shop", "staging")
	require.Equal(t, exitOK, again.code, "stdout:\n%s\nstderr:\n%s", again.stdout, again.stderr)
	assert.NotContains(t, again.stdout, "retired group", "nothing left to retire")

	// rollback needs something deployed; --to brings the config back.
	back := tr.ferry(t, "rollback", "--local", "--to", id1, "acme/shop", "staging")
	require.Equal(t, exitOK, back.code, "stdout:\n%s\nstderr:\n%s", back.stdout, back.stderr)
	assert.Len(t, tr.groups("111111111111", "us-west-2"), 2)

	unknown := tr.ferry(t, "destroy", "--local", "--yes", "acme/shop", "nowhere")
	assert.Equal(t, exitNotFound, unknown.code)
	assert.Contains(t, unknown.stderr, "the deployer knows no release of acme/shop nowhere: nothing to destroy")
}

// TestPlan: plan says what a deploy would do, through the deployer's own
// code, and changes nothing: the groups it would create, those it would
// retire, the services it would remove, what changed, and every reason it
// would be refused (exit 1); an invalid release is exit 3.
func TestPlan(t *testing.T) {
	tr := startRegion(t, "multi-service.json", func(o *region.Options) { o.Region = "us-west-2" })
	first := tr.ferry(t, "deploy", "--local", "testdata/e2e/shop-two-services.json")
	require.Equal(t, exitOK, first.code, "stdout:\n%s\nstderr:\n%s", first.stdout, first.stderr)
	id1 := releaseIDOf(t, first.stdout)
	l := ledger.New(tr.S3(), tr.Bucket())
	releases, err := l.Releases(context.Background(), "acme/shop", "staging")
	require.NoError(t, err)
	groups := tr.groups("111111111111", "us-west-2")

	data, err := os.ReadFile("testdata/e2e/shop-web-only.json")
	require.NoError(t, err)
	leftOut := filepath.Join(t.TempDir(), "shop-web-left-out.json")
	require.NoError(t, os.WriteFile(leftOut, bytes.Replace(data, []byte(`"remove": ["worker"],`), nil, 1), 0o644))
	refused := tr.ferry(t, "plan", "--local", leftOut)
	assert.Equal(t, exitFailure, refused.code, "stdout:\n%s\nstderr:\n%s", refused.stdout, refused.stderr)
	assert.Contains(t, refused.stdout, "  deployed now: "+id1+"\n")
	assert.NotContains(t, refused.stdout, "  retire\n", "a refused deploy retires nothing")
	assert.NotContains(t, refused.stdout, "  remove services:", "a refused deploy removes nothing")
	assert.Contains(t, refused.stdout, "    worker service: deployed -> removed\n")
	assert.Contains(t, refused.stdout, "the deploy would be refused (1 reason):\n  remove: the deploy would delete the serving groups of worker")

	ok := tr.ferry(t, "plan", "--local", "--json", "testdata/e2e/shop-web-only.json")
	require.Equal(t, exitOK, ok.code, "stdout:\n%s\nstderr:\n%s", ok.stdout, ok.stderr)
	var p execution.Plan
	require.NoError(t, json.Unmarshal([]byte(ok.stdout), &p))
	assert.True(t, p.Proceed)
	assert.Empty(t, p.Refusals)
	require.Len(t, p.Groups, 1)
	assert.Equal(t, "web", p.Groups[0].Service)
	assert.Regexp(t, `^ami-`, p.Groups[0].ImageID)
	assert.Regexp(t, `^subnet-`, p.Groups[0].Subnets[0])
	assert.Positive(t, p.Groups[0].Launch)
	assert.Equal(t, []string{"worker"}, p.Remove)

	// A target group web leaves: refused unless named under its detach,
	// then a line of its own.
	noTG := bytes.Replace(data, []byte(`"target_groups": ["acme-shop-staging-web-tg"],`), nil, 1)
	dropped := filepath.Join(t.TempDir(), "shop-web-drops-tg.json")
	require.NoError(t, os.WriteFile(dropped, noTG, 0o644))
	refusedTG := tr.ferry(t, "plan", "--local", dropped)
	assert.Equal(t, exitFailure, refusedTG.code, "stdout:\n%s\nstderr:\n%s", refusedTG.stdout, refusedTG.stderr)
	assert.Contains(t, refusedTG.stdout, "  services.web.target_groups: the deploy would take service web out of target group acme-shop-staging-web-tg, "+
		"which its serving group is attached to and the release no longer names; name it under services.web.detach.target_groups")
	explicit := filepath.Join(t.TempDir(), "shop-web-detaches-tg.json")
	require.NoError(t, os.WriteFile(explicit, bytes.Replace(noTG, []byte(`"profile": "acme-shop-web"`),
		[]byte(`"profile": "acme-shop-web", "detach": {"target_groups": ["acme-shop-staging-web-tg"]}`), 1), 0o644))
	detached := tr.ferry(t, "plan", "--local", explicit)
	require.Equal(t, exitOK, detached.code, "stdout:\n%s\nstderr:\n%s", detached.stdout, detached.stderr)
	assert.Contains(t, detached.stdout, "  remove services: worker\n  detach: web leaves target group acme-shop-staging-web-tg\n")
	assert.Contains(t, detached.stdout, "    web target_groups: acme-shop-staging-web-tg -> (none)\n")

	after, err := l.Releases(context.Background(), "acme/shop", "staging")
	require.NoError(t, err)
	assert.Equal(t, releases, after, "no release was uploaded")
	assert.Equal(t, groups, tr.groups("111111111111", "us-west-2"), "nothing changed in the target")
	st := tr.ferry(t, "status", "--local", "acme/shop", "staging")
	assert.NotContains(t, st.stdout, "locked by")

	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"project_name": "acme/shop"}`), 0o644))
	invalid := tr.ferry(t, "plan", "--local", bad)
	assert.Equal(t, exitNotStarted, invalid.code)
	assert.Contains(t, invalid.stderr, "is not a valid release")
}

// TestStatusDrift: ferry local world changes what runs from outside
// ferry; ferry status --drift, answered by the deployer, shows each
// change with since when, and none where nothing changed.
func TestStatusDrift(t *testing.T) {
	tr := startRegion(t, "multi-service.json", func(o *region.Options) { o.Region = "us-west-2" })
	first := tr.ferry(t, "deploy", "--local", "testdata/e2e/shop-two-services.json")
	require.Equal(t, exitOK, first.code, "stdout:\n%s\nstderr:\n%s", first.stdout, first.stderr)
	id1 := releaseIDOf(t, first.stdout)
	web, worker := naming.GroupName("acme/shop", "staging", "web", id1), naming.GroupName("acme/shop", "staging", "worker", id1)

	clean := tr.ferry(t, "status", "--local", "--drift", "acme/shop", "staging")
	require.Equal(t, exitOK, clean.code, clean.stderr)
	assert.Contains(t, clean.stdout, "  drift: none, what runs is what ferry deployed (checked ")

	for _, args := range [][]string{
		{"set-capacity", web, "1", "2", "5"},
		{"detach", web, "acme-shop-staging-web-tg"},
		{"delete-group", worker},
	} {
		res := tr.ferry(t, append([]string{"local", "world"}, args...)...)
		require.Equal(t, exitOK, res.code, "%v: %s", args, res.stderr)
	}
	drifted := tr.ferry(t, "status", "--local", "--drift", "--json", "acme/shop", "staging")
	require.Equal(t, exitOK, drifted.code, drifted.stderr)
	var ps projectStatus
	require.NoError(t, json.Unmarshal([]byte(drifted.stdout), &ps))
	require.Len(t, ps.Configs, 1)
	d := ps.Configs[0].Drift
	require.NotNil(t, d)
	assert.Equal(t, id1, d.Deployed)
	var got []string
	for _, it := range d.Drifts {
		got = append(got, it.Kind+" "+it.Group+": "+it.What)
		assert.False(t, it.Since.IsZero())
	}
	assert.ElementsMatch(t, []string{
		"capacity " + web + ": min 1 max 5, not the release's min 1 max 1",
		"capacity " + web + ": desired 2, not 1 as deployed",
		"load_balancers " + web + ": target groups [], not the release's [acme-shop-staging-web-tg]",
		"group_missing " + worker + ": the group is gone",
	}, got)

	plain := tr.ferry(t, "status", "--local", "--drift", "acme/shop", "staging")
	require.Equal(t, exitOK, plain.code, plain.stderr)
	assert.Regexp(t, `\n  drift \(checked [^)]+\)\n    web +capacity +min 1 max 5`, plain.stdout)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"local", "world", "explode", "x"}, `unknown world action "explode"`},
		{[]string{"local", "world", "set-capacity", web, "1", "2"}, "world set-capacity takes GROUP MIN DESIRED MAX"},
		{[]string{"local", "world", "set-capacity", web, "1", "two", "5"}, `DESIRED "two" is not a count`},
	} {
		res := tr.ferry(t, tc.args...)
		assert.Equal(t, exitUsage, res.code, tc.args)
		assert.Contains(t, res.stderr, tc.want)
	}
	missing := tr.ferry(t, "local", "world", "delete-group", "no-such-group")
	assert.Equal(t, exitFailure, missing.code)
	assert.Contains(t, missing.stderr, `the world has no group "no-such-group"`)

	// kill-instance terminates an instance without lowering desired: Auto
	// Scaling replaces it.
	var victim string
	for _, a := range tr.World().Snapshot().Accounts {
		for _, g := range a.Groups {
			if g.Name == web && len(g.Instances) > 0 {
				victim = g.Instances[0].ID
			}
		}
	}
	require.NotEmpty(t, victim)
	killed := tr.ferry(t, "local", "world", "kill-instance", victim)
	require.Equal(t, exitOK, killed.code, killed.stderr)
	assert.Equal(t, "instance "+victim+" of group "+web+" terminated; Auto Scaling replaces it\n", killed.stdout)
	for _, a := range tr.World().Snapshot().Accounts {
		for _, g := range a.Groups {
			for _, i := range g.Instances {
				if i.ID == victim {
					assert.Contains(t, i.Lifecycle, "Terminat", "the instance is terminating")
				}
			}
		}
	}
	unknown := tr.ferry(t, "local", "world", "kill-instance", "i-nobody")
	assert.Equal(t, exitFailure, unknown.code)
	assert.Contains(t, unknown.stderr, `no group of the world has an instance "i-nobody"`)
	notAttached := tr.ferry(t, "local", "world", "detach", web, "no-such-lb")
	assert.Equal(t, exitFailure, notAttached.code)
	assert.Contains(t, notAttached.stderr, `has no classic load balancer or target group "no-such-lb" attached`)
}

// TestReconcileHealsOnSchedule: with a release that opted into heal, a
// group deleted by hand comes back at the scheduled reconcile pass after
// the one that first saw it missing,
// as a heal release (the same content, by the reconciler) deployed
// through the deploy path; ferry follow shows it and history names it.
func TestReconcileHealsOnSchedule(t *testing.T) {
	tr := startRegion(t, "multi-service.json", func(o *region.Options) {
		o.Region, o.ReconcileEvery = "us-west-2", 15*time.Minute
	})
	data, err := os.ReadFile("testdata/e2e/shop-two-services.json")
	require.NoError(t, err)
	var raw map[string]any
	require.NoError(t, json.Unmarshal(data, &raw))
	raw["reconcile"] = "heal"
	file := filepath.Join(t.TempDir(), "shop-heal.json")
	writeJSON(t, file, raw)
	first := tr.ferry(t, "deploy", "--local", file)
	require.Equal(t, exitOK, first.code, "stdout:\n%s\nstderr:\n%s", first.stdout, first.stderr)
	id1 := releaseIDOf(t, first.stdout)
	worker := naming.GroupName("acme/shop", "staging", "worker", id1)
	gone := tr.ferry(t, "local", "world", "delete-group", worker)
	require.Equal(t, exitOK, gone.code, gone.stderr)

	ctx := context.Background()
	passAt := func(after time.Duration) {
		t.Helper()
		require.NoError(t, tr.Pass(ctx, after))
		pass, err := tr.ReconcileIfDue()
		require.NoError(t, err)
		require.NotNil(t, pass, "a pass is due every 15 minutes")
		require.NoError(t, pass.Wait(ctx))
		require.Equal(t, asl.StatusSucceeded, pass.Describe().Status, "%+v", pass.Describe())
	}
	passAt(20 * time.Minute) // sees the worker missing
	none := tr.ferry(t, "follow", "--local", "acme/shop", "staging")
	require.Equal(t, exitNotFound, none.code, "no heal at the first sight")
	passAt(15 * time.Minute) // the worker missing for longer than tuning.HealAfter
	followed := tr.ferry(t, "follow", "--local", "acme/shop", "staging")
	require.Equal(t, exitOK, followed.code, "stdout:\n%s\nstderr:\n%s", followed.stdout, followed.stderr)

	cur, found, err := ledger.New(tr.S3(), tr.Bucket()).GetCurrent(ctx, "acme/shop", "staging")
	require.NoError(t, err)
	require.True(t, found)
	require.NotEqual(t, id1, cur.ReleaseID, "a heal release is deployed")
	groups := tr.groups("111111111111", "us-west-2")
	assert.Contains(t, groups, naming.GroupName("acme/shop", "staging", "worker", cur.ReleaseID), "the worker serves again")
	assert.Len(t, groups, 2)
	h := tr.ferry(t, "history", "--local", "--json", "acme/shop", "staging")
	require.Equal(t, exitOK, h.code, h.stderr)
	var doc historyDoc
	require.NoError(t, json.Unmarshal([]byte(h.stdout), &doc))
	entries := doc.Releases
	assert.Equal(t, id1, entries[0].HealOf)
	assert.Equal(t, "ferry-reconciler", entries[0].CreatedBy)

	again, err := tr.ReconcileIfDue()
	require.NoError(t, err)
	assert.Nil(t, again, "the next pass is not due yet")

	// Heals of the release deployed now that have not made it well show
	// in status.
	require.NoError(t, ledger.New(tr.S3(), tr.Bucket()).PutHeal(ctx, "acme/shop", "staging",
		ledger.HealRecord{Of: cur.ReleaseID, InARow: 2, LastAt: e2eStart, LastHeal: "20250304T100000Z-heal"}))
	st := tr.ferry(t, "status", "--local", "acme/shop", "staging")
	require.Equal(t, exitOK, st.code, st.stderr)
	assert.Contains(t, st.stdout, "  healing   2 heals in a row of this release, the last 20250304T100000Z-heal  at "+formatTime(e2eStart)+"\n")
	require.NoError(t, ledger.New(tr.S3(), tr.Bucket()).PutHeal(ctx, "acme/shop", "staging",
		ledger.HealRecord{Of: cur.ReleaseID, Difference: "group_missing worker", InARow: 3, LastAt: e2eStart, LastHeal: "20250304T100000Z-heal"}))
	st = tr.ferry(t, "status", "--local", "acme/shop", "staging")
	require.Equal(t, exitOK, st.code, st.stderr)
	assert.Contains(t, st.stdout, "  healing   3 heals in a row of group_missing worker, the last 20250304T100000Z-heal  at "+formatTime(e2eStart)+"\n")
	// A pass found the fleet well since: the row is kept for the next
	// heal of the same difference, but nothing is healing.
	well := e2eStart.Add(time.Hour)
	require.NoError(t, ledger.New(tr.S3(), tr.Bucket()).PutHeal(ctx, "acme/shop", "staging",
		ledger.HealRecord{Of: cur.ReleaseID, InARow: 2, LastAt: e2eStart, LastHeal: "20250304T100000Z-heal", WellAt: &well}))
	st = tr.ferry(t, "status", "--local", "acme/shop", "staging")
	require.Equal(t, exitOK, st.code, st.stderr)
	assert.NotContains(t, st.stdout, "healing")
}
