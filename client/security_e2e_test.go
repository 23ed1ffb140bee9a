package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/client/submit"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/ledger"
	"github.com/ferryhq/ferry/internal/store/lock"
)

// whileHeld runs the commands concurrently while the region's time stands
// still, and lets time run once n executions have started, so the deploys
// overlap whatever the scheduling.
func (tr *testRegion) whileHeld(t *testing.T, n int, commands ...[]string) []result {
	t.Helper()
	release := tr.Hold()
	defer release()
	results := make([]result, len(commands))
	var wg sync.WaitGroup
	// A command may return without starting an execution (a deploy that
	// sees the lock taken starts nothing), so those count towards n too.
	var returned atomic.Int32
	for i, args := range commands {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = tr.ferryCtx(context.Background(), args...)
			returned.Add(1)
		}()
	}
	wait := tr.sleeper()
	for len(tr.Executions(""))+int(returned.Load()) < n {
		require.NoError(t, wait(context.Background(), 0))
	}
	release()
	wg.Wait()
	return results
}

// TestConcurrentDeploysOfOneConfig: two different releases of one
// project-config at once: exactly one runs; the other either ends at Lock
// with LockExistsError (FailureClean) or, when it sees the lock taken
// before starting, starts nothing (exit 3). Either way it changes nothing.
func TestConcurrentDeploysOfOneConfig(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	res := tr.whileHeld(t, 2, []string{"deploy", "--local", deployTestRelease}, []string{"deploy", "--local", demoV2})
	loser, winner := res[0], res[1]
	if res[0].code == exitOK {
		loser, winner = res[1], res[0]
	}
	require.Equal(t, exitOK, winner.code, "%+v", res)
	holder := releaseIDOf(t, winner.stdout)
	switch loser.code {
	case exitFailure:
		assert.Contains(t, loser.stdout, "FailureClean: LockExistsError: lock on coinbase/deploy-test/development is held by release "+holder)
	case exitNotStarted:
		assert.Contains(t, loser.stderr, "coinbase/deploy-test development is locked by release "+holder)
	default:
		t.Fatalf("the losing deploy exited %d: %+v", loser.code, loser)
	}
	groups := tr.groups(devAccount, usEast1)
	assert.Equal(t, map[string]int{devGroup(releaseIDOf(t, winner.stdout)): groups[devGroup(releaseIDOf(t, winner.stdout))]}, groups)
}

// TestSameReleaseTwice: the same release deployed again while it is
// being deployed starts nothing new; the second command follows the first
// execution.
func TestSameReleaseTwice(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	hold := tr.Hold()
	first := make(chan result, 1)
	go func() { first <- tr.ferryCtx(context.Background(), "deploy", "--local", deployTestRelease) }()
	wait := tr.sleeper()
	for len(tr.Executions("")) < 1 {
		require.NoError(t, wait(context.Background(), 0))
	}
	// Time stands still until the second command, having attached, waits
	// for the first time.
	var out, errOut bytes.Buffer
	env := tr.env(&out, &errOut)
	follow := env.Sleep
	env.Sleep = func(ctx context.Context, d time.Duration) error {
		hold()
		return follow(ctx, d)
	}
	code := run(context.Background(), env, []string{"deploy", "--local", deployTestRelease})
	f := <-first
	assert.Equal(t, exitOK, f.code, f.stderr)
	assert.Equal(t, exitOK, code, errOut.String())
	assert.Contains(t, out.String(), "already deploying this release to coinbase/deploy-test development (release "+releaseIDOf(t, f.stdout)+"); following it")
	assert.Len(t, tr.Executions(""), 1)
}

// TestConcurrentDeploysOfTwoConfigs: two configs (one in a second account,
// through its bootstrap role) deploy at once and both succeed.
func TestConcurrentDeploysOfTwoConfigs(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	res := tr.whileHeld(t, 2, []string{"deploy", "--local", deployTestRelease}, []string{"deploy", "--local", demoProduction})
	for _, r := range res {
		assert.Equal(t, exitOK, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	assert.Contains(t, tr.groups(devAccount, usEast1), devGroup(releaseIDOf(t, res[0].stdout)))
	prod := tr.groups(prodAccount, usEast1)
	assert.Contains(t, prod, naming.GroupName("coinbase/deploy-test", "production", "web", releaseIDOf(t, res[1].stdout)),
		"deployed into account 222222222222 through its bootstrap role")
}

// uploadRelease prepares a release file as ferry deploy does and uploads
// it, returning the deployer connection, the release and its bytes.
func uploadRelease(t *testing.T, tr *testRegion, file string) (*deployer, *release.Release, []byte) {
	t.Helper()
	var out, errOut bytes.Buffer
	env := tr.env(&out, &errOut)
	env.Sleep, env.Now = sleep, tr.Clock().Now
	d, err := connect(context.Background(), env, &deployerFlags{local: true})
	require.NoError(t, err)
	r, err := release.ReadFile(file)
	require.NoError(t, err)
	now := tr.Clock().Now()
	p, err := submit.Prepare(context.Background(), d.prover, r, file, now, "tester", submit.NewReleaseID(now, nil))
	require.NoError(t, err)
	raw := p.Raw
	require.NoError(t, ledger.New(d.s3, d.cfg.Bucket).PutRelease(context.Background(), r.ProjectName, r.ConfigName, r.ReleaseID, raw))
	return d, r, raw
}

// runExecution starts an execution with input raw under name and follows
// it to its end.
func runExecution(t *testing.T, tr *testRegion, d *deployer, name string, raw []byte) progress {
	t.Helper()
	arn, err := d.submitter().StartNamed(context.Background(), name, raw)
	require.NoError(t, err)
	var buf bytes.Buffer
	u, err := followExecution(context.Background(), d.sfn, arn, &display{w: &buf, mode: modePlain}, followOptions{Sleep: tr.sleeper()})
	require.NoError(t, err)
	return u
}

// TestReleaseAlteredInS3: a release whose copy in the bucket was changed
// after upload is refused at Validate, before anything is locked or made.
func TestReleaseAlteredInS3(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	d, r, raw := uploadRelease(t, tr, deployTestRelease)
	altered := strings.Replace(string(raw), `"ami":"ubuntu"`, `"ami":"ubuntu-crashing"`, 1)
	require.NotEqual(t, string(raw), altered)
	_, err := tr.S3().PutObject(context.Background(), &s3.PutObjectInput{
		Bucket: aws.String(d.cfg.Bucket), Key: aws.String(naming.ReleaseKey(r.ProjectName, r.ConfigName, r.ReleaseID)),
		Body: strings.NewReader(altered),
	})
	require.NoError(t, err)

	u := runExecution(t, tr, d, naming.ExecutionName(r.ProjectName, r.ConfigName, r.ReleaseID), raw)
	assert.Equal(t, execution.EndFailureClean, u.End)
	assert.Equal(t, "BadReleaseError", u.Error)
	assert.Contains(t, u.Cause, "release differs from the copy in the deployer bucket")
	assert.Empty(t, tr.groups(devAccount, usEast1))
	_, locked, err := lock.New(d.s3, d.cfg.Bucket, tr.Clock()).Get(context.Background(), r.ProjectName, r.ConfigName)
	require.NoError(t, err)
	assert.False(t, locked)
}

// TestReleaseReplayed: the input of a release that already ran, started
// again under another name, is refused.
func TestReleaseReplayed(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	d, r, raw := uploadRelease(t, tr, deployTestRelease)
	name := naming.ExecutionName(r.ProjectName, r.ConfigName, r.ReleaseID)
	first := runExecution(t, tr, d, name, raw)
	require.Equal(t, execution.EndSuccess, first.End)

	again := runExecution(t, tr, d, name, raw)
	assert.Equal(t, execution.EndSuccess, again.End, "the same name is the same execution: nothing new starts")
	assert.Len(t, tr.Executions(""), 1)

	replay := runExecution(t, tr, d, name+"-replay", raw)
	assert.Equal(t, execution.EndFailureClean, replay.End)
	assert.Equal(t, "BadReleaseError", replay.Error)
	assert.Contains(t, replay.Cause, "already ran")
	assert.Len(t, tr.groups(devAccount, usEast1), 1, "the replay made nothing")
}

// TestSameReleaseTwiceNoWait: --no-wait returns at once when the same
// release is already being deployed, naming that execution; it does not
// follow it.
func TestSameReleaseTwiceNoWait(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	hold := tr.Hold()
	defer hold()
	first := tr.ferry(t, "deploy", "--local", "--no-wait", deployTestRelease)
	require.Equal(t, exitOK, first.code, first.stderr)
	require.Len(t, tr.Executions(""), 1)

	var out, errOut bytes.Buffer
	env := tr.env(&out, &errOut)
	env.Sleep = func(context.Context, time.Duration) error {
		t.Error("ferry deploy --no-wait followed the running execution")
		return context.Canceled
	}
	code := run(context.Background(), env, []string{"deploy", "--local", "--no-wait", deployTestRelease})
	assert.Equal(t, exitOK, code, errOut.String())
	assert.Contains(t, out.String(), "already deploying this release to coinbase/deploy-test development (release "+releaseIDOf(t, first.stdout)+")")
	assert.Contains(t, out.String(), "execution "+tr.Executions("")[0].ARN())
	assert.NotContains(t, out.String(), "following it")
	assert.Len(t, tr.Executions(""), 1)
}

// TestPoisonedRollbackRefused is the attack on rollbacks: release.json of
// a release that succeeded is overwritten (new user data) in the client's
// prefix, where more than the deployer may write. ferry rollback to it
// and ferry show of it refuse, naming the release and both hashes (the
// one Validate recorded under _state/, and release.json's), and nothing
// is started.
func TestPoisonedRollbackRefused(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	first := tr.ferry(t, "deploy", "--local", deployTestRelease)
	require.Equal(t, exitOK, first.code, first.stderr)
	id1 := releaseIDOf(t, first.stdout)
	second := tr.ferry(t, "deploy", "--local", demoV2)
	require.Equal(t, exitOK, second.code, second.stderr)

	const project, config = "coinbase/deploy-test", "development"
	l := ledger.New(tr.S3(), tr.Bucket())
	_, recorded, err := l.VerifiedRelease(context.Background(), project, config, id1)
	require.NoError(t, err)
	stored, err := l.GetRelease(context.Background(), project, config, id1)
	require.NoError(t, err)
	stored.UserData = "#!/bin/sh\n# mallory was here\n"
	poisoned, err := release.Canonical(stored)
	require.NoError(t, err)
	poisonedSum, err := release.Hash(stored)
	require.NoError(t, err)
	_, err = tr.S3().PutObject(context.Background(), &s3.PutObjectInput{
		Bucket: aws.String(tr.Bucket()), Key: aws.String(naming.ReleaseKey(project, config, id1)), Body: bytes.NewReader(poisoned),
	})
	require.NoError(t, err)
	before := len(tr.Executions(""))

	want := "release " + id1 + " changed after the deployer accepted it: its recorded sha256 is " + recorded + ", release.json's is " + poisonedSum
	res := tr.ferry(t, "rollback", "--local", "--no-wait", "--to", id1, project, config)
	assert.Equal(t, exitNotStarted, res.code, res.stdout)
	assert.Contains(t, res.stderr, want)
	// The default target passes over it (its listing order is
	// release.json's write time, which the overwrite moved).
	res = tr.ferry(t, "rollback", "--local", "--no-wait", project, config)
	assert.Equal(t, exitNotStarted, res.code, res.stdout)
	assert.Len(t, tr.Executions(""), before, "a rollback started")
	show := tr.ferry(t, "show", "--local", project, config, id1)
	assert.NotEqual(t, exitOK, show.code)
	assert.Contains(t, show.stderr, want)
}
