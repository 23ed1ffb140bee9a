package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/pipeline"
	"github.com/ferryhq/ferry/internal/release"
)

const (
	deployTestPipeline = "../testdata/pipelines/deploy-test.json"
	invalidPipeline    = "../testdata/pipelines/invalid/wave.json"
)

// TestPipelineValidate: a valid pipeline and release print the stages,
// their targets and configs, and the artifact's digest (the base
// release's, which every stage deploys); an invalid one exits 1 with a
// line per problem; --json says the same.
func TestPipelineValidate(t *testing.T) {
	code, stdout, stderr := runFerry(t, "pipeline", "validate", deployTestPipeline, "../testdata/deploy-test-release.json")
	require.Equal(t, exitOK, code, stderr)
	r, err := release.ReadTemplate("../testdata/deploy-test-release.json")
	require.NoError(t, err)
	digest, err := pipeline.Digest(r)
	require.NoError(t, err)
	assert.Contains(t, stdout, "pipeline coinbase/deploy-test: 3 stages, 4 targets\n")
	assert.Regexp(t, `(?m)^  production +use1: 222222222222 us-east-1 +production-use1 +soak 1h, 1 alarm, approval$`, stdout)
	assert.Regexp(t, `(?m)^ +euw1: 222222222222 eu-west-1 +production-euw1$`, stdout)
	assert.Contains(t, stdout, "artifact "+digest+", deployed by every stage")

	code, stdout, stderr = runFerry(t, "pipeline", "validate", "--json", deployTestPipeline)
	require.Equal(t, exitOK, code, stderr)
	var v pipelineValidation
	require.NoError(t, json.Unmarshal([]byte(stdout), &v))
	assert.True(t, v.Valid)
	assert.Empty(t, v.Artifact, "no release given")
	require.Len(t, v.Stages, 3)
	assert.Equal(t, "production-euw1", v.Stages[2].Targets[1].Config)

	code, stdout, stderr = runFerry(t, "pipeline", "validate", invalidPipeline)
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stdout, invalidPipeline+": stages[1].targets[0].name: required")
	assert.Contains(t, stderr, "is invalid")

	code, stdout, _ = runFerry(t, "pipeline", "validate", "--json", deployTestPipeline, "../testdata/multi-service-release.json")
	assert.Equal(t, exitFailure, code)
	require.NoError(t, json.Unmarshal([]byte(stdout), &v))
	assert.False(t, v.Valid)
	require.Len(t, v.Problems, 2)
	assert.Equal(t, "release.config_name", v.Problems[0].Path)

	code, _, stderr = runFerry(t, "pipeline", "validate", "../testdata/pipelines/missing.json")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "missing.json is invalid")
}

func TestPipelineUsage(t *testing.T) {
	for _, args := range [][]string{{"pipeline"}, {"pipeline", "promote", "x"}, {"pipeline", "validate"}, {"pipeline", "status"}, {"pipeline", "schema", "x"}} {
		code, _, stderr := runFerry(t, args...)
		assert.Equal(t, exitUsage, code, "%v", args)
		assert.Contains(t, stderr, "usage: ferry pipeline", "%v", args)
	}
	code, stdout, stderr := runFerry(t, "pipeline", "schema")
	assert.Equal(t, exitOK, code, stderr)
	assert.Equal(t, string(pipeline.Schema()), stdout)
}

// TestPipelineStatus: after a deploy of development (the release ferry
// pipeline release prints for it), the status of the
// deploy-test pipeline shows it in the first stage with the artifact's
// digest ferry pipeline validate gives the release file (what the
// deployer keeps is the same artifact); staging runs nothing and waits
// for its soak; production cannot compare with a stage that runs no one
// artifact.
func TestPipelineStatus(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	// development's release, as ferry pipeline release makes it, deployed.
	rel := tr.ferry(t, "pipeline", "release", deployTestPipeline, deployTestRelease, "development")
	require.Equal(t, exitOK, rel.code, rel.stderr)
	file := filepath.Join(t.TempDir(), "development.json")
	require.NoError(t, os.WriteFile(file, []byte(rel.stdout), 0o644))
	d := tr.ferry(t, "deploy", "--local", file)
	require.Equal(t, exitOK, d.code, "stdout:\n%s\nstderr:\n%s", d.stdout, d.stderr)
	id := releaseIDOf(t, d.stdout)

	v := tr.ferry(t, "pipeline", "validate", "--json", deployTestPipeline, deployTestRelease)
	require.Equal(t, exitOK, v.code, v.stderr)
	var val pipelineValidation
	require.NoError(t, json.Unmarshal([]byte(v.stdout), &val))

	// The client's own clock is a day off: ages and soaks are on the
	// deployer's, which the records are.
	offClock := func(e *Env) { e.Now = func() time.Time { return e2eStart.Add(-24 * time.Hour) } }
	s := tr.ferryAt(t.Context(), offClock, "pipeline", "status", "--local", "--json", deployTestPipeline)
	require.Equal(t, exitOK, s.code, s.stderr)
	var ps pipelineStatus
	require.NoError(t, json.Unmarshal([]byte(s.stdout), &ps))
	require.Len(t, ps.Stages, 3)
	dev := ps.Stages[0].Targets[0]
	assert.Equal(t, id, dev.ReleaseID)
	assert.Equal(t, val.Artifact, dev.Digest, "the deployed release's artifact is the release file's")
	assert.Equal(t, pipeline.ParityFirst, dev.Parity)
	assert.Equal(t, val.Artifact, ps.Stages[0].Artifact)
	staging := ps.Stages[1]
	assert.Equal(t, pipeline.ParityUndeploy, staging.Targets[0].Parity)
	assert.False(t, staging.Promoted)
	require.Len(t, staging.Pending, 2)
	assert.Equal(t, "development: whether release "+id+" serves healthily was not read (held until it is): not asked for", staging.Pending[0],
		"without --alarms, whether development serves is not read, and holds as the deployer's gate would")
	assert.Regexp(t, `^soak 30m: [0-9ms]+ left \(counted from the stage before's last swap\)$`, staging.Pending[1], "at most 30m left, on the deployer's clock")
	assert.GreaterOrEqual(t, dev.AgeSeconds, 0.0)
	assert.Less(t, dev.AgeSeconds, 3600.0)
	assert.Equal(t, pipeline.ParityUnknown, ps.Stages[2].Targets[1].Parity)

	text := tr.ferry(t, "pipeline", "status", "--local", deployTestPipeline)
	require.Equal(t, exitOK, text.code, text.stderr)
	assert.Regexp(t, `(?m)^  development +111111111111 us-east-1 +development +`+id+` +`+val.Artifact[:12]+` +\S+ +first stage +- +-$`, text.stdout)
	assert.Regexp(t, `(?m)^  staging +.* not deployed +- +pending: development: whether release `+id+` serves healthily was not read .*; soak 30m: [0-9ms]+ left`, text.stdout)
	assert.Regexp(t, `(?m)^ +euw1: 222222222222 eu-west-1 +production-euw1 +none +- +- +unknown +-$`, text.stdout)
}

// TestPipelineRelease: the release a target deploys is printed as a
// release file: it decodes strictly, is valid, names the target's config,
// account, region and overrides, and has the artifact's digest; a config
// no target deploys is refused, naming those that are.
func TestPipelineRelease(t *testing.T) {
	code, stdout, stderr := runFerry(t, "pipeline", "release", deployTestPipeline, "../testdata/deploy-test-release.json", "production-euw1")
	require.Equal(t, exitOK, code, stderr)
	r, err := release.DecodeFile([]byte(stdout))
	require.NoError(t, err)
	require.NoError(t, r.Validate(false))
	assert.Equal(t, []string{"production-euw1", "222222222222", "eu-west-1", "t3.small"},
		[]string{r.ConfigName, r.AccountID, r.Region, r.Services["web"].InstanceType})
	assert.Equal(t, []string{"ec2::coinbase/deploy-test::production-euw1"}, r.Services["web"].SecurityGroups)
	base, err := release.ReadTemplate("../testdata/deploy-test-release.json")
	require.NoError(t, err)
	want, err := pipeline.Digest(base)
	require.NoError(t, err)
	got, err := pipeline.Digest(r)
	require.NoError(t, err)
	assert.Equal(t, want, got)

	code, _, stderr = runFerry(t, "pipeline", "release", deployTestPipeline, "../testdata/deploy-test-release.json", "qa")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, `deploys config "qa" (its configs: development, staging, production-use1, production-euw1)`)
}

// TestPipelinePromotedByHand: the deploy-test pipeline's release,
// promoted by hand through every stage (ferry pipeline release, then ferry
// deploy, for each of the four targets: development and staging in one
// account, production in another account's two regions, each with its
// own names), deploys everywhere, and the status shows one artifact in
// every target, each stage promoted.
func TestPipelinePromotedByHand(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	dir := t.TempDir()
	for _, config := range []string{"development", "staging", "production-use1", "production-euw1"} {
		rel := tr.ferry(t, "pipeline", "release", deployTestPipeline, deployTestRelease, config)
		require.Equal(t, exitOK, rel.code, rel.stderr)
		file := filepath.Join(dir, config+".json")
		require.NoError(t, os.WriteFile(file, []byte(rel.stdout), 0o644))
		d := tr.ferry(t, "deploy", "--local", file)
		require.Equal(t, exitOK, d.code, "%s:\nstdout:\n%s\nstderr:\n%s", config, d.stdout, d.stderr)
	}
	s := tr.ferry(t, "pipeline", "status", "--local", "--json", deployTestPipeline)
	require.Equal(t, exitOK, s.code, s.stderr)
	var ps pipelineStatus
	require.NoError(t, json.Unmarshal([]byte(s.stdout), &ps))
	artifact := ps.Stages[0].Artifact
	require.Len(t, artifact, 64)
	for i, st := range ps.Stages {
		assert.Equal(t, artifact, st.Artifact, st.Config)
		assert.Equal(t, i > 0, st.Promoted, st.Config)
		assert.Empty(t, st.Pending, st.Config)
		for _, tg := range st.Targets {
			assert.NotEmpty(t, tg.ReleaseID, tg.Config)
			if i > 0 {
				assert.Equal(t, pipeline.ParitySame, tg.Parity, tg.Config)
			}
		}
	}
	text := tr.ferry(t, "pipeline", "status", "--local", deployTestPipeline)
	require.Equal(t, exitOK, text.code, text.stderr)
	assert.Regexp(t, `(?m)^ +euw1: 222222222222 eu-west-1 +production-euw1 +\S+ +`+artifact[:12]+` +\S+ +same +-$`, text.stdout)
	assert.Regexp(t, `(?m)^  staging .* same +- +promoted$`, text.stdout)
}

// TestPipelineStatusReadsAlarms: with development and staging deployed,
// production's gate alarm (in staging's account) shows as not read
// without --alarms; read OK it is not pending (pipeline's TestStatus
// shows one in ALARM pending).
func TestPipelineStatusReadsAlarms(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	addStagingAlarm(t, tr)
	dir := t.TempDir()
	for _, config := range []string{"development", "staging"} {
		rel := tr.ferry(t, "pipeline", "release", deployTestPipeline, deployTestRelease, config)
		require.Equal(t, exitOK, rel.code, rel.stderr)
		file := filepath.Join(dir, config+".json")
		require.NoError(t, os.WriteFile(file, []byte(rel.stdout), 0o644))
		d := tr.ferry(t, "deploy", "--local", file)
		require.Equal(t, exitOK, d.code, "%s:\nstdout:\n%s\nstderr:\n%s", config, d.stdout, d.stderr)
	}
	pending := func(args ...string) []string {
		t.Helper()
		s := tr.ferry(t, append([]string{"pipeline", "status", "--local", "--json"}, append(args, deployTestPipeline)...)...)
		require.Equal(t, exitOK, s.code, s.stderr)
		var ps pipelineStatus
		require.NoError(t, json.Unmarshal([]byte(s.stdout), &ps))
		return ps.Stages[2].Pending
	}
	const alarm = "coinbase-deploy-test-staging-errors"
	assert.Contains(t, pending(), "alarm "+alarm+" not read in staging")
	ok := pending("--alarms")
	assert.Contains(t, ok, "the stage needs a person's approval: ferry pipeline approve")
	for _, p := range ok {
		assert.NotContains(t, p, alarm, "an OK alarm is not pending")
	}
}

// TestPipelineValidateBlames: ferry pipeline validate PIPELINE RELEASE
// names the file a problem is in, with the path of the bad value: the
// pipeline's for a stage's override the release cannot take, the
// release's for its own.
func TestPipelineValidateBlames(t *testing.T) {
	raw, err := os.ReadFile(deployTestPipeline)
	require.NoError(t, err)
	bad := strings.Replace(string(raw), `"elbs": ["cdt-{{CONFIG_NAME}}-web"],
            "target_groups": ["cdt-{{CONFIG_NAME}}-web"],
            "profile": "coinbase-deploy-test-{{CONFIG_NAME}}"
          }
        }
      },
      "gates": {"soak_seconds": 3600`, `"elbs": ["coinbase-deploy-test-{{CONFIG_NAME}}-web"],
            "target_groups": ["cdt-{{CONFIG_NAME}}-web"],
            "profile": "coinbase-deploy-test-{{CONFIG_NAME}}"
          }
        }
      },
      "gates": {"soak_seconds": 3600`, 1)
	require.NotEqual(t, string(raw), bad)
	file := filepath.Join(t.TempDir(), "pipeline.json")
	require.NoError(t, os.WriteFile(file, []byte(bad), 0o644))
	code, stdout, _ := runFerry(t, "pipeline", "validate", file, deployTestRelease)
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stdout, file+": stages[2].overrides.services.web.elbs: makes the release of target stages[2].targets[0] (config production-use1) invalid: services.web.elbs[0]: must be at most 32 characters")
	assert.NotContains(t, stdout, deployTestRelease+":")

	code, stdout, _ = runFerry(t, "pipeline", "validate", "--json", deployTestPipeline, "../testdata/multi-service-release.json")
	assert.Equal(t, exitFailure, code)
	var v pipelineValidation
	require.NoError(t, json.Unmarshal([]byte(stdout), &v))
	require.NotEmpty(t, v.Problems)
	assert.Equal(t, "../testdata/multi-service-release.json", v.Problems[0].File, "release.config_name is the release's")
}
