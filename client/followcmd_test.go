package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/release"
)

// TestFollow: ferry follow attaches to a running deploy by its release id
// or its project-config, shows it as deploy does and exits as deploy does.
func TestFollow(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")

	started := tr.ferry(t, "deploy", "--local", "--no-wait", deployTestRelease)
	require.Equal(t, exitOK, started.code, started.stderr)
	id := releaseIDOf(t, started.stdout)
	byID := tr.ferry(t, "follow", "--local", id)
	require.Equal(t, exitOK, byID.code, "stdout:\n%s\nstderr:\n%s", byID.stdout, byID.stderr)
	assert.Contains(t, byID.stdout, "ferry follow: coinbase/deploy-test development release "+id+"\n")
	assert.Contains(t, byID.stdout, "  CleanUpSuccess\n")
	assert.Contains(t, byID.stdout, "created group "+devGroup(id)+"\n")

	broken := tr.ferry(t, "deploy", "--local", "--no-wait", demoBroken)
	require.Equal(t, exitOK, broken.code, broken.stderr)
	brokenID := releaseIDOf(t, broken.stdout)
	byConfig := tr.ferry(t, "follow", "--local", "coinbase/deploy-test", "development")
	assert.Equal(t, exitFailure, byConfig.code, "stdout:\n%s\nstderr:\n%s", byConfig.stdout, byConfig.stderr)
	assert.Contains(t, byConfig.stdout, "release "+brokenID+"\n")

	// Ended, a deploy's follower learns its outcome and exits with its
	// code, as ferry deploy would have at its end.
	ended := tr.ferry(t, "follow", "--local", id)
	assert.Equal(t, exitOK, ended.code, "stdout:\n%s\nstderr:\n%s", ended.stdout, ended.stderr)
	assert.Contains(t, ended.stdout, "ferry follow: coinbase/deploy-test development release "+id+" has ended\n")
	assert.Regexp(t, `\d+:\d\d  Success\n`, ended.stdout)
	assert.Contains(t, ended.stdout, "created group "+devGroup(id)+"\n")
	endedBroken := tr.ferry(t, "follow", "--local", "--json", brokenID)
	assert.Equal(t, exitFailure, endedBroken.code, "stdout:\n%s\nstderr:\n%s", endedBroken.stdout, endedBroken.stderr)
	assert.Contains(t, endedBroken.stdout, `"end":"FailureClean"`)
	assert.Contains(t, endedBroken.stdout, `"exit_code":1`)

	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"nothing running for the config", []string{"coinbase/deploy-test", "development"}, exitNotFound, "ferry follow: no deploy of coinbase/deploy-test development is running"},
		{"no config holds the release", []string{"20260101T000000Z-none"}, exitNotFound, "ferry follow: no deploy of release 20260101T000000Z-none is running, and no config of the deployer holds"},
		{"no arguments", nil, exitUsage, "ferry follow: follow takes a project and a config, or a release id"},
		{"three arguments", []string{"a/b", "c", "d"}, exitUsage, "follow takes a project and a config, or a release id"},
		{"a bad release id", []string{"no_such id"}, exitUsage, "ferry follow: "},
		{"a bad project", []string{"nope", "development"}, exitUsage, "ferry follow: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := tr.ferry(t, append([]string{"follow", "--local"}, tt.args...)...)
			assert.Equal(t, tt.code, res.code, res.stderr)
			assert.Contains(t, res.stderr, tt.want)
		})
	}
}

// lostHistory serves a history's first events, then fails as the SDK
// does once its retries are spent on a deployer that no longer answers.
type lostHistory struct {
	pagedHistory
	calls int
}

func (h *lostHistory) GetExecutionHistory(ctx context.Context, in *sfn.GetExecutionHistoryInput, opts ...func(*sfn.Options)) (*sfn.GetExecutionHistoryOutput, error) {
	if h.calls++; h.calls > 3 {
		refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
		return nil, fmt.Errorf("operation error SFN: GetExecutionHistory, exceeded maximum number of attempts, 5, https response error StatusCode: 0, RequestID: , request send failed, Post \"http://127.0.0.1:4590/\": %w", refused)
	}
	return h.pagedHistory.GetExecutionHistory(ctx, in, opts...)
}

// TestLostContactSaysHowToResume: when the deployer stops answering, the
// clock line is cleared and the message, on lines of its own, names the
// endpoint, says why in a few words (not the SDK's retry chain) and gives
// the exact ferry follow command that resumes; it exits 5.
func TestLostContactSaysHowToResume(t *testing.T) {
	var out bytes.Buffer
	r := &release.Release{ProjectName: "coinbase/deploy-test", ConfigName: "development", ReleaseID: "20260101T000000Z-abcdef"}
	d := &deployer{cfg: deployerConfig{Endpoint: "http://127.0.0.1:4590"},
		sfn: &lostHistory{pagedHistory: pagedHistory{events: goldenHistories()["success"]}},
		now: func(context.Context) (time.Time, error) { return historyStart.Add(time.Minute), nil }}
	c := &deployCommand{env: Env{Sleep: func(context.Context, time.Duration) error { return nil }}, deployer: deployerFlags{local: true}}
	c.follow.poll = time.Second
	err := c.followToEnd(t.Context(), d, &display{w: &out, mode: modeLive}, r, "", "arn")
	var errOut bytes.Buffer
	assert.Equal(t, exitDetached, exitStatus(&errOut, err))
	assert.True(t, strings.HasSuffix(out.String(), ansiClearLn), "the clock line is cleared: %q", out.String())
	assert.Equal(t, "ferry: lost contact with the deployer at http://127.0.0.1:4590: dial: connection refused\n"+
		"The deploy goes on. Follow it again with: ferry follow --local 20260101T000000Z-abcdef\n"+
		"Stop it with: ferry halt --local coinbase/deploy-test development\n", errOut.String())
}
