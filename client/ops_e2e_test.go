package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/local/region"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/store/halt"
	"github.com/ferryhq/ferry/internal/store/lock"
)

// TestRemovedServiceDeleted: a release that drops a service and names it
// under remove deletes that service's old ASG when it succeeds.
func TestRemovedServiceDeleted(t *testing.T) {
	tr := startRegion(t, "multi-service.json", func(o *region.Options) { o.Region = "us-west-2" })
	first := tr.ferry(t, "deploy", "--local", "testdata/e2e/shop-two-services.json")
	require.Equal(t, exitOK, first.code, "stdout:\n%s\nstderr:\n%s", first.stdout, first.stderr)
	id1 := releaseIDOf(t, first.stdout)
	group := func(service, id string) string { return naming.GroupName("acme/shop", "staging", service, id) }
	groups := tr.groups("111111111111", "us-west-2")
	require.Contains(t, groups, group("web", id1))
	require.Contains(t, groups, group("worker", id1))

	// Without worker under remove, the release is refused, naming it,
	// and worker keeps serving.
	data, err := os.ReadFile("testdata/e2e/shop-web-only.json")
	require.NoError(t, err)
	leftOut := filepath.Join(t.TempDir(), "shop-web-left-out.json")
	require.NoError(t, os.WriteFile(leftOut, bytes.Replace(data, []byte(`"remove": ["worker"],`), nil, 1), 0o644))
	refused := tr.ferry(t, "deploy", "--local", leftOut)
	assert.Equal(t, exitFailure, refused.code)
	assert.Contains(t, refused.stdout+refused.stderr, `the deploy would delete the serving groups of worker, which the release does not deploy; name them under "remove"`)
	require.Contains(t, tr.groups("111111111111", "us-west-2"), group("worker", id1))

	second := tr.ferry(t, "deploy", "--local", "testdata/e2e/shop-web-only.json")
	require.Equal(t, exitOK, second.code, "stdout:\n%s\nstderr:\n%s", second.stdout, second.stderr)
	id2 := releaseIDOf(t, second.stdout)
	groups = tr.groups("111111111111", "us-west-2")
	assert.Contains(t, groups, group("web", id2))
	assert.NotContains(t, groups, group("web", id1))
	assert.NotContains(t, groups, group("worker", id1), "the removed service's old ASG is deleted")
	assert.Len(t, groups, 1)
}

// TestUnlock: unlock removes a lock left behind only for the release that
// holds it, never while that release's execution runs, and says what it
// did.
func TestUnlock(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	locks := lock.New(tr.S3(), tr.Bucket(), tr.Clock())
	gone := "arn:aws:states:us-east-1:111111111111:execution:ferry-deployer:coinbase_deploy-test_development_r-left"
	require.NoError(t, locks.Acquire(context.Background(), "coinbase/deploy-test", "development",
		lock.Holder{ReleaseID: "r-left", Execution: gone}))

	st := tr.ferry(t, "status", "--local", "coinbase/deploy-test", "development")
	require.Equal(t, exitOK, st.code, st.stderr)
	checkGolden(t, "e2e-status-locked", st.stdout)

	other := tr.ferry(t, "unlock", "--local", "coinbase/deploy-test", "development", "--release", "r-other")
	assert.Equal(t, exitFailure, other.code)
	assert.Contains(t, other.stderr, "not removed: the lock of coinbase/deploy-test development is held by release r-left")

	ok := tr.ferry(t, "unlock", "--local", "coinbase/deploy-test", "development", "--release", "r-left")
	assert.Equal(t, exitOK, ok.code, ok.stderr)
	assert.Equal(t, "removed the lock of coinbase/deploy-test development held by release r-left since 2025-03-04 10:00:00Z\n", ok.stdout)
	_, found, err := locks.Get(context.Background(), "coinbase/deploy-test", "development")
	require.NoError(t, err)
	assert.False(t, found)

	none := tr.ferry(t, "unlock", "--local", "coinbase/deploy-test", "development", "--release", "r-left")
	assert.Equal(t, exitOK, none.code)
	assert.Equal(t, "no lock on coinbase/deploy-test development: nothing to do\n", none.stdout)
}

// TestUnlockRefusedWhileRunning: the lock of a running deploy is not
// removed, even for its own release.
func TestUnlockRefusedWhileRunning(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	hold := tr.Hold()
	defer hold()
	started := tr.ferry(t, "deploy", "--local", "--no-wait", demoSlow)
	require.Equal(t, exitOK, started.code, started.stderr)
	id := releaseIDOf(t, started.stdout)
	locks := tr.untilLocked(t, "coinbase/deploy-test", "development")
	res := tr.ferry(t, "unlock", "--local", "coinbase/deploy-test", "development", "--release", id)
	assert.Equal(t, exitFailure, res.code)
	assert.Contains(t, res.stderr, "not removed: release "+id+" is still deploying")
	_, found, err := locks.Get(context.Background(), "coinbase/deploy-test", "development")
	require.NoError(t, err)
	assert.True(t, found)
}

// TestStatusUnknown: status of a project the deployer knows nothing of
// fails and says so.
func TestStatusUnknown(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	res := tr.ferry(t, "status", "--local", "nobody/nothing")
	assert.Equal(t, exitNotFound, res.code)
	assert.Equal(t, "ferry status: the deployer knows nothing of nobody/nothing\n", res.stderr)
}

// TestNoDeployer: with no local region answering, every command that
// reaches a deployer exits 7 (no_deployer), the one code of the one
// table, naming the endpoint it tried.
func TestNoDeployer(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	tr.url = deadRegion(t)
	for _, args := range [][]string{
		{"deploy", "--local", deployTestRelease},
		{"halt", "--local", deployTestRelease},
		{"status", "--local", "coinbase/deploy-test"},
		{"list", "--local"},
		{"history", "--local", "coinbase/deploy-test", "development"},
		{"follow", "--local", "coinbase/deploy-test", "development"},
		{"show", "--local", "20250101T000000Z-000000"},
		{"unlock", "--local", "coinbase/deploy-test", "development", "--release", "r1"},
		{"rollback", "--local", "coinbase/deploy-test", "development"},
	} {
		res := tr.ferry(t, args...)
		assert.Equal(t, exitNoDeployer, res.code, "%v: %s", args, res.stderr)
		assert.Contains(t, res.stderr, "no deployer found: the local region at "+tr.url+" does not answer", args)
	}
}

// TestThroughEndpointURL: AWS_ENDPOINT_URL alone (what ferry local tells
// people to set) reaches the region: the deployer is named from the
// caller's account, as against AWS, and nothing but ferry's own output is
// printed (no SDK warnings about checksums the local S3 does not send).
func TestThroughEndpointURL(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	vars := map[string]string{
		"AWS_ENDPOINT_URL": tr.url, "AWS_REGION": usEast1,
		"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local-secret",
		"AWS_CONFIG_FILE": filepath.Join(t.TempDir(), "none"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(t.TempDir(), "none"),
		"AWS_PROFILE": "", "AWS_EC2_METADATA_DISABLED": "true",
	}
	var list []string
	for k, v := range vars {
		t.Setenv(k, v)
		list = append(list, k, v)
	}
	run := func(args ...string) result {
		var out, errOut bytes.Buffer
		env := tr.env(&out, &errOut, append([]string{envLocalEndpoint, ""}, list...)...)
		return result{runCmd(env, args), out.String(), errOut.String()}
	}
	d := run("deploy", "--no-wait", deployTestRelease)
	require.Equal(t, exitOK, d.code, d.stderr)
	assert.Empty(t, d.stderr)
	for _, x := range tr.Executions("") {
		_, err := tr.Wait(context.Background(), x.ARN())
		require.NoError(t, err)
	}
	st := run("status", "coinbase/deploy-test")
	require.Equal(t, exitOK, st.code, st.stderr)
	assert.Contains(t, st.stdout, "deployed  "+releaseIDOf(t, d.stdout))
	assert.Empty(t, st.stderr)
}

func runCmd(env Env, args []string) int { return run(context.Background(), env, args) }

// TestDeployRefusedWhileLocked: with the lock held by another release (one
// left behind here), deploy starts nothing and exits 3, naming the holder
// and the exact commands that look and unlock; --wait-lock waits for the
// lock and deploys once it is free, or gives up when its time is over
// (issue #17, item 4).
func TestDeployRefusedWhileLocked(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	locks := lock.New(tr.S3(), tr.Bucket(), tr.Clock())
	const project, config = "coinbase/deploy-test", "development"
	gone := "arn:aws:states:us-east-1:111111111111:execution:ferry-deployer:coinbase_deploy-test_development_r-left"
	require.NoError(t, locks.Acquire(context.Background(), project, config, lock.Holder{ReleaseID: "r-left", Execution: gone}))

	res := tr.ferry(t, "deploy", "--local", deployTestRelease)
	assert.Equal(t, exitNotStarted, res.code, res.stderr)
	assert.Contains(t, res.stderr, "coinbase/deploy-test development is locked by release r-left")
	assert.Contains(t, res.stderr, "nothing was started")
	assert.Contains(t, res.stderr, "ferry status --local coinbase/deploy-test development")
	assert.Contains(t, res.stderr, "ferry unlock --local coinbase/deploy-test development --release r-left")
	assert.Empty(t, tr.Executions(""), "nothing started")

	// --wait-lock 1m (its value after a space, as every flag's may be),
	// and the lock is never freed: refused after a minute of the client's
	// clock.
	var out, errOut bytes.Buffer
	env := tr.env(&out, &errOut)
	now := tr.Clock().Now()
	sleeps := 0
	env.Now = func() time.Time { return now }
	env.Sleep = func(_ context.Context, d time.Duration) error { sleeps++; now = now.Add(d); return nil }
	code := run(context.Background(), env, []string{"deploy", "--local", "--wait-lock", "1m", deployTestRelease})
	assert.Equal(t, exitNotStarted, code, errOut.String())
	assert.Contains(t, errOut.String(), "still held after --wait-lock=1m0s")
	assert.Equal(t, 60, sleeps, "one read a poll interval (1s) for a minute")
	assert.Contains(t, out.String(), "  0:30  waiting for the lock; giving up in 0:30; held by release r-left (coinbase/deploy-test development)\n",
		"a log is told what ferry waits for, at least every 30 s")
	assert.Empty(t, tr.Executions(""), "nothing started")

	// --wait-lock, and the holder's lock goes at the third look: deployed.
	out.Reset()
	errOut.Reset()
	env = tr.env(&out, &errOut)
	follow := env.Sleep
	looks := 0
	env.Sleep = func(ctx context.Context, d time.Duration) error {
		if looks++; looks <= 2 {
			if looks == 2 {
				require.NoError(t, locks.Release(ctx, project, config, "r-left"))
			}
			return nil // waiting for the lock: nothing else happens
		}
		return follow(ctx, d)
	}
	code = run(context.Background(), env, []string{"deploy", "--local", "--wait-lock", deployTestRelease})
	assert.Equal(t, exitOK, code, "stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
	assert.Contains(t, out.String()+errOut.String(), "is locked by release r-left")
	assert.Contains(t, out.String(), "Success")
}

// TestHaltUnknownRefused: a halt of a project-config the deployer knows
// nothing of (a typo) writes nothing and exits 9 (not_found), saying so; --force
// writes the marker anyway (issue #17, item 11).
func TestHaltUnknownRefused(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	res := tr.ferry(t, "halt", "--local", "coinbase/nope", "development")
	assert.Equal(t, exitNotFound, res.code, res.stderr)
	assert.Contains(t, res.stderr, "the deployer knows nothing of coinbase/nope development")
	assert.Contains(t, res.stderr, "ferry list --local")
	_, _, found, err := halt.New(tr.S3(), tr.Bucket()).Get(context.Background(), "coinbase/nope", "development")
	require.NoError(t, err)
	assert.False(t, found, "no marker written")

	forced := tr.ferry(t, "halt", "--local", "--force", "coinbase/nope", "development")
	assert.Equal(t, exitOK, forced.code, forced.stderr)
	_, _, found, err = halt.New(tr.S3(), tr.Bucket()).Get(context.Background(), "coinbase/nope", "development")
	require.NoError(t, err)
	assert.True(t, found, "--force writes the marker")
}

// TestNoCredentials: with no AWS credentials anywhere in the standard
// chain, every command that reaches a deployer in AWS exits 8
// (no_credentials), saying so and naming the region and profile it
// looked for them for, never "no deployer found"; a profile the shared
// files do not have is no credentials too (an SDK configuration error
// before).
func TestNoCredentials(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	vars := map[string]string{
		"AWS_ENDPOINT_URL": tr.url, "AWS_REGION": usEast1,
		"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "",
		"AWS_CONFIG_FILE": filepath.Join(t.TempDir(), "none"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(t.TempDir(), "none"),
		"AWS_PROFILE": "", "AWS_EC2_METADATA_DISABLED": "true", "AWS_CONTAINER_CREDENTIALS_FULL_URI": "",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "", "AWS_WEB_IDENTITY_TOKEN_FILE": "",
	}
	var list []string
	for k, v := range vars {
		t.Setenv(k, v)
		list = append(list, k, v)
	}
	for _, tc := range []struct {
		args  []string
		where string
	}{
		{[]string{"deploy", deployTestRelease}, "(region us-east-1, profile default)"},
		{[]string{"status", "coinbase/deploy-test"}, "(region us-east-1, profile default)"},
		{[]string{"list"}, "(region us-east-1, profile default)"},
		{[]string{"follow", "20250101T000000Z-000000"}, "(region us-east-1, profile default)"},
		{[]string{"--region", "eu-west-1", "status", "coinbase/deploy-test"}, "(region eu-west-1, profile default)"},
		{[]string{"list", "--region", "eu-west-1"}, "(region eu-west-1, profile default)"},
		{[]string{"list", "--profile", "nope"}, "(profile nope: not in the shared config or credentials files)"},
	} {
		var out, errOut bytes.Buffer
		env := tr.env(&out, &errOut, append([]string{envLocalEndpoint, ""}, list...)...)
		code := runCmd(env, tc.args)
		assert.Equal(t, exitNoCredentials, code, "%v: %s", tc.args, errOut.String())
		assert.Contains(t, errOut.String(), "no AWS credentials found "+tc.where, tc.args)
		assert.NotContains(t, errOut.String(), "no deployer found", tc.args)
	}
}

// TestGlobalFlagsBeforeTheCommand: --local and --json before the
// command's name work as after it.
func TestGlobalFlagsBeforeTheCommand(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	after := tr.ferry(t, "list", "--local", "--json")
	require.Equal(t, exitOK, after.code, after.stderr)
	before := tr.ferry(t, "--local", "--json", "list")
	require.Equal(t, exitOK, before.code, before.stderr)
	assert.Equal(t, after.stdout, before.stdout)
	unknown := tr.ferry(t, "--local", "status", "nobody/nothing")
	assert.Equal(t, exitNotFound, unknown.code, unknown.stderr)
}

// TestDeployerErrorsNameTheEndpoint: an error of the deployer's API (its
// bucket is not there) names the endpoint the call reached, and a
// deployer found missing by that call exits 7 (no_deployer), as one not
// answering does.
func TestDeployerErrorsNameTheEndpoint(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	for _, args := range [][]string{
		{"status", "--local", "--bucket", "no-such-bucket", "coinbase/deploy-test"},
		{"history", "--local", "--bucket", "no-such-bucket", "coinbase/deploy-test", "development"},
	} {
		res := tr.ferry(t, args...)
		assert.Equal(t, exitNoDeployer, res.code, "%v: %s", args, res.stderr)
		assert.Contains(t, res.stderr, "NoSuchBucket", args)
		assert.Contains(t, res.stderr, "(at "+tr.url+")", args)
	}
}
