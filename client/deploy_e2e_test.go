package main

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/client/submit"
	"github.com/ferryhq/ferry/internal/buildinfo"
	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/local/region"
	"github.com/ferryhq/ferry/internal/naming"
)

const (
	deployTestRelease = "../testdata/deploy-test-release.json"
	demoV2            = "../testdata/demo/deploy-test-v2.json"
	demoBroken        = "../testdata/demo/deploy-test-broken.json"
	demoSlow          = "../testdata/demo/deploy-test-slow.json"
	demoProduction    = "../testdata/demo/deploy-test-production.json"

	devAccount  = "111111111111"
	prodAccount = "222222222222"
	usEast1     = "us-east-1"
)

func devGroup(releaseID string) string {
	return naming.GroupName("coinbase/deploy-test", "development", "web", releaseID)
}

// TestDeployBlueGreen is the demo's first two steps: a first deploy, then
// a changed release replaces it (new ASG healthy, old ASG deleted).
func TestDeployBlueGreen(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")

	first := tr.ferry(t, "deploy", "--local", deployTestRelease)
	require.Equal(t, exitOK, first.code, "stdout:\n%s\nstderr:\n%s", first.stdout, first.stderr)
	id1 := releaseIDOf(t, first.stdout)
	checkGolden(t, "e2e-deploy-first", stable(first.stdout))
	assert.Equal(t, map[string]int{devGroup(id1): 1}, tr.groups(devAccount, usEast1))

	second := tr.ferry(t, "deploy", "--local", demoV2)
	require.Equal(t, exitOK, second.code, "stdout:\n%s\nstderr:\n%s", second.stdout, second.stderr)
	id2 := releaseIDOf(t, second.stdout)
	require.NotEqual(t, id1, id2)
	assert.Contains(t, second.stdout, "\ncreated group "+devGroup(id2)+"\nretired group "+devGroup(id1)+"\n", "deploy names the groups it created and retired")
	assert.Contains(t, second.stdout, "release "+id2+"\n  version build-1042: Serve the new landing page.\n", "deploy shows the release's version and description")
	groups := tr.groups(devAccount, usEast1)
	assert.NotContains(t, groups, devGroup(id1), "the old ASG is deleted")
	assert.Contains(t, groups, devGroup(id2))
	assert.GreaterOrEqual(t, groups[devGroup(id2)], 2, "min_size 2")

	st := tr.ferry(t, "status", "--local", "coinbase/deploy-test")
	require.Equal(t, exitOK, st.code, st.stderr)
	assert.Contains(t, st.stdout, "deployed  "+id2)
	assert.Contains(t, st.stdout, "deployer "+buildinfo.Get().String(), "which deployer deployed it")
	assert.Regexp(t, `\n  release +build-1042 +Serve the new landing page\.\n`, st.stdout, "status shows the release's version and description")
	assert.Regexp(t, `\n  target +account `+devAccount+` +region `+usEast1+`\n`, st.stdout, "status shows the environment")
	assert.Regexp(t, `\n  services \(desired instances, as deployed\)\n    web  `+regexp.QuoteMeta(devGroup(id2))+`  ami-[0-9a-f]+  desired 2\n`, st.stdout, "status shows each service's group, image and desired count")
	assert.Contains(t, st.stdout, id1)
	assert.NotContains(t, st.stdout, "locked by")
}

// TestDeployNeverHealthy is the demo's third step: instances that never
// become healthy end in FailureClean at the release's timeout, and nothing
// of the release is left.
func TestDeployNeverHealthy(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	res := tr.ferry(t, "deploy", "--local", demoBroken)
	require.Equal(t, exitFailure, res.code, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
	id := releaseIDOf(t, res.stdout)
	assert.Contains(t, res.stdout, "FailureClean: TimeoutError")
	checkGolden(t, "e2e-deploy-never-healthy", stable(res.stdout))
	assert.Empty(t, tr.groups(devAccount, usEast1), "nothing of the release is left")

	st := tr.ferry(t, "status", "--local", "coinbase/deploy-test", "development")
	require.Equal(t, exitOK, st.code, st.stderr)
	assert.Contains(t, st.stdout, "deployed  nothing yet")
	assert.Contains(t, st.stdout, id+"  FailureClean")
	assert.NotContains(t, st.stdout, "locked by", "the lock is released")
}

// TestDeployJSON: --json prints one JSON object per line, the release
// event first, ending with the outcome and its exit code.
func TestDeployJSON(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	res := tr.ferry(t, "deploy", "--local", "--json", deployTestRelease)
	require.Equal(t, exitOK, res.code, res.stderr)
	lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
	require.Greater(t, len(lines), 3)
	var events []map[string]any
	for _, l := range lines {
		var ev map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &ev), l)
		events = append(events, ev)
	}
	last := events[len(events)-1]
	assert.Equal(t, "outcome", last["event"])
	assert.Equal(t, "Success", last["end"])
	assert.Equal(t, float64(0), last["exit_code"])
	var kinds []string
	for _, ev := range events {
		kinds = append(kinds, ev["event"].(string))
	}
	assert.Equal(t, "release", kinds[0], "the first event names the release and its execution")
	assert.NotEmpty(t, events[0]["release_id"])
	assert.NotEmpty(t, events[0]["execution_arn"])
	assert.Contains(t, kinds, "health")
}

// TestDeployNoWaitThenHaltNothing: --no-wait returns once started; halt of
// a project-config with nothing running says so and succeeds.
func TestDeployNoWaitThenHaltNothing(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	res := tr.ferry(t, "deploy", "--local", "--no-wait", deployTestRelease)
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.Contains(t, res.stdout, "started execution arn:aws:states:us-east-1:111111111111:execution:ferry-deployer:coinbase_deploy-test_development_")
	for _, x := range tr.Executions("") {
		_, err := tr.Wait(context.Background(), x.ARN())
		require.NoError(t, err)
	}
	h := tr.ferry(t, "halt", "--local", "coinbase/deploy-test", "development")
	require.Equal(t, exitOK, h.code, h.stderr)
	assert.Contains(t, h.stdout, "no deploy of coinbase/deploy-test development is running")
}

// TestHaltDuringDeploy is the demo's fourth step: ferry halt during a
// deploy's health checks ends it in FailureClean with HaltError, and both
// the deploy and the halt command follow it to that end.
func TestHaltDuringDeploy(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	held := make(chan func(), 1)
	var once sync.Once
	tr.observe(func(_ string, ev asl.Event) {
		if ev.StateEntered != nil && ev.StateEntered.Name == execution.TaskCheckHealthy {
			once.Do(func() { held <- tr.Hold() })
		}
	})
	deployed := make(chan result, 1)
	go func() { deployed <- tr.ferryCtx(context.Background(), "deploy", "--local", demoSlow) }()

	release := <-held // time stands still in the first health check
	var out, errOut bytes.Buffer
	env := tr.env(&out, &errOut)
	follow := env.Sleep
	env.Sleep = func(ctx context.Context, d time.Duration) error {
		release() // the marker is written: let time run again
		return follow(ctx, d)
	}
	code := run(context.Background(), env, []string{"halt", "--local", "--reason", "bad build", demoSlow})
	require.Equal(t, exitOK, code, "stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
	assert.Contains(t, out.String(), "halt marker written for coinbase/deploy-test development (by tester: bad build)")
	assert.Contains(t, out.String(), "FailureClean: HaltError")

	res := <-deployed
	assert.Equal(t, exitFailure, res.code, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
	assert.Contains(t, res.stdout, "FailureClean: HaltError")
	assert.Empty(t, tr.groups(devAccount, usEast1))
}

// TestLeftOverHaltOnIdleLocalRegion: on a region that runs its own
// discrete-event clock (ferry local --speed 0), ferry halt with nothing
// running leaves its marker; a deploy started after some wall time is not
// halted by it, as the statemachine help page promises ("A marker left over from an old
// halt never stops a new deploy"): the idle region's clock passed with
// the wall clock. (TestHaltDuringDeploy is the converse.)
func TestLeftOverHaltOnIdleLocalRegion(t *testing.T) {
	wall := clock.NewVirtual(e2eStart)
	tr := startRegion(t, "deploy-test.json", func(o *region.Options) {
		o.Clock, o.WallClock = nil, wall
	})
	h := tr.ferry(t, "halt", "--local", "--force", "coinbase/deploy-test", "development")
	require.Equal(t, exitOK, h.code, h.stderr)
	assert.Contains(t, h.stdout, "no deploy of coinbase/deploy-test development is running")

	wall.Advance(5 * time.Second)
	res := tr.ferry(t, "deploy", "--local", deployTestRelease)
	assert.Equal(t, exitOK, res.code, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
	assert.Contains(t, res.stdout, "Success")
}

// TestDeployInterrupted: Ctrl-C while following stops following, not the
// deploy, and says how to halt it.
func TestDeployInterrupted(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut bytes.Buffer
	env := tr.env(&out, &errOut)
	env.Sleep = func(ctx context.Context, _ time.Duration) error {
		cancel() // Ctrl-C at the first wait
		return ctx.Err()
	}
	code := run(ctx, env, []string{"deploy", "--local", deployTestRelease})
	assert.Equal(t, exitInterrupted, code)
	assert.Contains(t, errOut.String(), "the deploy goes on")
	assert.Contains(t, errOut.String(), "ferry halt --local "+deployTestRelease)
	xs := tr.Executions("")
	require.Len(t, xs, 1)
	d, err := tr.Wait(context.Background(), xs[0].ARN())
	require.NoError(t, err)
	assert.Equal(t, asl.StatusSucceeded, d.Status, "the deploy went on")
}

// A name already taken is followed only when it runs the same release:
// StartExecution answers ExecutionAlreadyExists for a name used with
// another input, or by a closed execution (StartExecution, Step Functions
// API Reference), and following that execution as this release's would
// report another deploy's outcome.
func TestStartOnlyFollowsItsOwnExecution(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	ctx := context.Background()
	var stdout, stderr bytes.Buffer
	d, err := connectLocal(ctx, tr.env(&stdout, &stderr), deployerConfig{})
	require.NoError(t, err)
	mine, theirs := []byte(`{"release_id":"r1","note":"mine"}`), []byte(`{"release_id":"r1","note":"theirs"}`)
	_, err = d.sfn.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(d.cfg.StateMachineARN),
		Name: aws.String("taken"), Input: aws.String(string(theirs))})
	require.NoError(t, err)

	_, err = d.submitter().StartNamed(ctx, "taken", mine)
	require.ErrorIs(t, err, submit.ErrNameTaken)
	arn, err := d.submitter().StartNamed(ctx, "taken", theirs)
	require.NoError(t, err, "the same input is the same execution")
	assert.Equal(t, asl.ExecutionARN(d.cfg.StateMachineARN, "taken"), arn)
}

// TestDeployWhileTheRegionRunsAhead: a local region's clock may run far
// ahead of the wall clock (--speed 60 runs an hour a wall minute); a
// release's identity proof is signed at the region's time, so the
// region's STS (which refuses a proof 15 minutes after it was signed, as
// AWS's does: identity.ProofLifetime) accepts it. Signed at the wall
// clock's time, it was out of date there and every deploy failed at
// Validate.
func TestDeployWhileTheRegionRunsAhead(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	tr.clk.Set(time.Now().Add(3 * time.Hour))
	res := tr.ferry(t, "deploy", "--local", deployTestRelease)
	require.Equal(t, exitOK, res.code, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
	assert.NotContains(t, res.stdout, "ExpiredToken")
}
