package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/local/region"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
)

// TestPromote: the deploy-test pipeline's release promoted stage by stage
// with ferry promote, each refusal naming the gate that holds it back and
// starting nothing: production before staging runs the artifact; staging
// during its soak; production while its gate alarm does not exist in
// staging (an alarm that cannot be read never passes) and without
// --approve. Once every gate holds, the stage's targets (production's
// two regions) are deployed and every stage runs the artifact.
func TestPromote(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	stage := func(stage string, args ...string) result {
		t.Helper()
		return tr.ferry(t, append(append([]string{"promote", "--local"}, args...), deployTestPipeline, deployTestRelease, stage)...)
	}
	held := func(r result, why ...string) {
		t.Helper()
		assert.Equal(t, exitNotStarted, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
		assert.Contains(t, r.stderr, "is held back")
		for _, w := range why {
			assert.Contains(t, r.stderr, w)
		}
	}

	dev := stage("development")
	require.Equal(t, exitOK, dev.code, "stdout:\n%s\nstderr:\n%s", dev.stdout, dev.stderr)
	assert.Contains(t, dev.stdout, "into stage development: 1 target")
	held(stage("production"), "staging does not run artifact")
	held(stage("staging"), "soak 30m: ")

	tr.clk.Advance(31 * time.Minute)
	st := stage("staging")
	require.Equal(t, exitOK, st.code, "stdout:\n%s\nstderr:\n%s", st.stdout, st.stderr)

	tr.clk.Advance(61 * time.Minute)
	held(stage("production"), "alarm coinbase-deploy-test-staging-errors is missing in staging", "the stage needs a person's approval: ferry pipeline approve")
	addStagingAlarm(t, tr)
	held(stage("production"), "the stage needs a person's approval: ferry pipeline approve")
	prod := stage("production", "--approve")
	require.Equal(t, exitOK, prod.code, "stdout:\n%s\nstderr:\n%s", prod.stdout, prod.stderr)
	assert.Contains(t, prod.stdout, "into stage production: 2 targets")
	assert.Contains(t, prod.stdout, "production-use1 release")
	assert.Contains(t, prod.stdout, "production-euw1 release")

	s := tr.ferry(t, "pipeline", "status", "--local", deployTestPipeline)
	require.Equal(t, exitOK, s.code, s.stderr)
	assert.Regexp(t, `(?m)^  staging .* same +- +promoted$`, s.stdout)
	assert.Regexp(t, `(?m)^  production .* same +- +promoted$`, s.stdout)

	unknown := stage("qa")
	assert.Equal(t, exitNotStarted, unknown.code)
	assert.Contains(t, unknown.stderr, `has no stage "qa" (its stages: development, staging, production)`)
}

// TestPromoteHeldWhileTheStageBeforeDoesNotServe: with development's
// one instance killed from outside ferry, its load balancer dark, ferry
// promote refuses staging, and ferry pipeline status says why, as the
// deployer's promotion gate would hold it (the same reading, through a
// drift query); without --alarms, status does not read it and says so,
// never "ready". Once development serves again, staging may go.
func TestPromoteHeldWhileTheStageBeforeDoesNotServe(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	dev := tr.ferry(t, "promote", "--local", deployTestPipeline, deployTestRelease, "development")
	require.Equal(t, exitOK, dev.code, "stdout:\n%s\nstderr:\n%s", dev.stdout, dev.stderr)
	id := releaseIDOf(t, dev.stdout)
	tr.clk.Advance(31 * time.Minute)
	group := naming.GroupName("coinbase/deploy-test", "development", "web", id)
	var killed string
	for _, a := range tr.World().Snapshot().Accounts {
		for _, g := range a.Groups {
			if g.Name == group {
				killed = g.Instances[0].ID
			}
		}
	}
	require.NotEmpty(t, killed)
	_, err := tr.Meddle(t.Context(), region.Meddling{Action: region.MeddleKillInstance, Instance: killed})
	require.NoError(t, err)

	dark := "development: coinbase-deploy-test-web-elb has no healthy instance of release " + id
	held := tr.ferry(t, "promote", "--local", deployTestPipeline, deployTestRelease, "staging")
	assert.Equal(t, exitNotStarted, held.code, "stdout:\n%s\nstderr:\n%s", held.stdout, held.stderr)
	assert.Contains(t, held.stderr, "is held back")
	assert.Contains(t, held.stderr, dark)

	status := func(args ...string) string {
		t.Helper()
		s := tr.ferry(t, append([]string{"pipeline", "status", "--local"}, append(args, deployTestPipeline)...)...)
		require.Equal(t, exitOK, s.code, s.stderr)
		return s.stdout
	}
	assert.Regexp(t, `(?m)^  staging .* pending: `+regexp.QuoteMeta(dark), status("--alarms"))
	notRead := status()
	assert.Regexp(t, `(?m)^  staging .* pending: development: whether release `+id+` serves healthily was not read`, notRead)
	assert.NotContains(t, notRead, "ready")

	for i := 0; i < 60 && strings.Contains(status("--alarms"), dark); i++ {
		tr.clk.Advance(10 * time.Second) // Auto Scaling replaces the instance
	}
	assert.Regexp(t, `(?m)^  staging .* ready: every gate holds`, status("--alarms"))
	st := tr.ferry(t, "promote", "--local", deployTestPipeline, deployTestRelease, "staging")
	assert.Equal(t, exitOK, st.code, "stdout:\n%s\nstderr:\n%s", st.stdout, st.stderr)
}

// TestPromoteStopsAtAFailure: a release whose deploy fails in a stage
// (FailureClean: its instances never become healthy) goes no further:
// the stage keeps running the artifact before, its status shows the
// failure as its latest release, and promoting the failed release into
// the next stage is refused.
func TestPromoteStopsAtAFailure(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	good := tr.ferry(t, "promote", "--local", deployTestPipeline, deployTestRelease, "development")
	require.Equal(t, exitOK, good.code, good.stderr)

	dir := t.TempDir()
	raw, err := os.ReadFile(deployTestRelease)
	require.NoError(t, err)
	var r map[string]any
	require.NoError(t, json.Unmarshal(raw, &r))
	r["ami"], r["timeout"] = "ubuntu-broken", 300
	broken := filepath.Join(dir, "broken.json")
	data, err := json.Marshal(r)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(broken, data, 0o644))
	ud, err := os.ReadFile(release.UserDataFile(deployTestRelease))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(release.UserDataFile(broken), ud, 0o644))

	bad := tr.ferry(t, "promote", "--local", deployTestPipeline, broken, "development")
	require.Equal(t, exitFailure, bad.code, "stdout:\n%s\nstderr:\n%s", bad.stdout, bad.stderr)
	assert.Contains(t, bad.stdout, "FailureClean")
	failed := releaseIDOf(t, bad.stdout)

	s := tr.ferry(t, "pipeline", "status", "--local", "--json", deployTestPipeline)
	require.Equal(t, exitOK, s.code, s.stderr)
	var ps pipelineStatus
	require.NoError(t, json.Unmarshal([]byte(s.stdout), &ps))
	dev := ps.Stages[0].Targets[0]
	assert.Equal(t, failed, dev.Latest)
	assert.Equal(t, "FailureClean", dev.LatestEnd)
	assert.NotEqual(t, failed, dev.ReleaseID, "the release before still runs")

	tr.clk.Advance(time.Hour)
	next := tr.ferry(t, "promote", "--local", deployTestPipeline, broken, "staging")
	assert.Equal(t, exitNotStarted, next.code, "stdout:\n%s\nstderr:\n%s", next.stdout, next.stderr)
	assert.Contains(t, next.stderr, "development does not run artifact")
}
