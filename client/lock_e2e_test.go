package main

import (
	"bytes"
	"context"
	"flag"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/lock"
)

// A deploy of another release while one runs starts nothing: it exits
// exitNotStarted naming the holder (release, who, since) and the commands
// to run next, each pasting as is (--local kept).
func TestDeployRefusedWhileAnotherRuns(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	hold := tr.Hold()
	defer hold()
	first := tr.ferry(t, "deploy", "--local", "--no-wait", deployTestRelease)
	require.Equal(t, exitOK, first.code, first.stderr)
	id1 := releaseIDOf(t, first.stdout)

	second := tr.ferry(t, "deploy", "--local", demoV2)
	assert.Equal(t, exitNotStarted, second.code, "stdout:\n%s\nstderr:\n%s", second.stdout, second.stderr)
	assert.Contains(t, second.stderr, "ferry deploy: coinbase/deploy-test development is locked by release "+id1+" by tester (execution ")
	assert.Contains(t, second.stderr, "; nothing was started\nwait for it with --wait-lock[=DURATION]; see it with ferry status --local coinbase/deploy-test development\n")
	assert.Len(t, tr.Executions(""), 1, "the second deploy started nothing")
}

// A lock left behind (no execution of its release runs) refuses a deploy
// with the status and unlock commands to run, exactly.
func TestDeployRefusedByLockLeftBehind(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	locks := lock.New(tr.S3(), tr.Bucket(), tr.Clock())
	require.NoError(t, locks.Acquire(context.Background(), "coinbase/deploy-test", "development",
		lock.Holder{ReleaseID: "r-left", Execution: "arn:aws:states:us-east-1:111111111111:execution:ferry-deployer:x"}))

	res := tr.ferry(t, "deploy", "--local", deployTestRelease)
	assert.Equal(t, exitNotStarted, res.code, res.stderr)
	assert.Contains(t, res.stderr, "is locked by release r-left (execution arn:aws:states:us-east-1:111111111111:execution:ferry-deployer:x) since 2025-03-04 10:00:00Z, left behind: no execution of it runs; nothing was started\n"+
		"see ferry status --local coinbase/deploy-test development, clean up, then ferry unlock --local --release r-left coinbase/deploy-test development\n")
	assert.Empty(t, tr.Executions(""))
}

// --wait-lock waits (on the injected clock) for the running deploy to end,
// then deploys.
func TestDeployWaitsForTheLock(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	first := tr.ferry(t, "deploy", "--local", "--no-wait", deployTestRelease)
	require.Equal(t, exitOK, first.code, first.stderr)
	id1 := releaseIDOf(t, first.stdout)

	second := tr.ferry(t, "deploy", "--local", "--wait-lock=20m", demoV2)
	require.Equal(t, exitOK, second.code, "stdout:\n%s\nstderr:\n%s", second.stdout, second.stderr)
	assert.Contains(t, second.stdout, "ferry deploy: coinbase/deploy-test development is locked by release "+id1+" by tester")
	assert.Contains(t, second.stdout, "waiting up to 20m0s for it\n")
	assert.Len(t, tr.Executions(""), 2)

	// Waiting too little refuses, saying how long it waited.
	tr2 := startRegion(t, "deploy-test.json")
	hold := tr2.Hold()
	defer hold()
	require.Equal(t, exitOK, tr2.ferry(t, "deploy", "--local", "--no-wait", deployTestRelease).code)
	var out, errOut bytes.Buffer
	env := tr2.env(&out, &errOut)
	env.Sleep = func(_ context.Context, d time.Duration) error { tr2.clk.Advance(d); return nil }
	code := run(t.Context(), env, []string{"deploy", "--local", "--wait-lock=12s", demoV2})
	assert.Equal(t, exitNotStarted, code, errOut.String())
	assert.Contains(t, errOut.String(), " after waiting 12s; nothing was started\n")
}

// Flags and arguments in hints are shell-quoted, and read back as they
// were given.
func TestHintPastesAsIs(t *testing.T) {
	f := deployerFlags{local: true, bucket: "my bucket", stateMachine: "arn:aws:states:us-east-1:1:stateMachine:d"}
	h := f.hint("status", "it's/mine", "dev")
	assert.Equal(t, `ferry status --local --state-machine arn:aws:states:us-east-1:1:stateMachine:d --bucket 'my bucket' 'it'\''s/mine' dev`, h)

	var got statusCommand
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	got.defineFlags(fs)
	words := shellWords(t, h)
	require.Equal(t, []string{"ferry", "status"}, words[:2])
	require.NoError(t, fs.Parse(words[2:]))
	assert.Equal(t, f, got.deployer)
	assert.Equal(t, []string{"it's/mine", "dev"}, fs.Args())
}

// shellWords splits s as a POSIX shell does words of plain, escaped and
// single-quoted text (all that shellQuote makes).
func shellWords(t *testing.T, s string) []string {
	t.Helper()
	var words []string
	var cur []rune
	inWord, quoted, escaped := false, false, false
	for _, r := range s {
		switch {
		case escaped:
			cur, escaped = append(cur, r), false
		case r == '\\' && !quoted:
			escaped, inWord = true, true
		case r == '\'':
			quoted, inWord = !quoted, true
		case r == ' ' && !quoted:
			if inWord {
				words = append(words, string(cur))
			}
			cur, inWord = nil, false
		default:
			cur, inWord = append(cur, r), true
		}
	}
	require.False(t, quoted, "unbalanced quote in %q", s)
	if inWord {
		words = append(words, string(cur))
	}
	return words
}
