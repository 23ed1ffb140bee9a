package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
