package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
		{"nothing running for the config", []string{"coinbase/deploy-test", "development"}, exitFailure, "ferry follow: no deploy of coinbase/deploy-test development is running"},
		{"no config holds the release", []string{"20260101T000000Z-none"}, exitFailure, "ferry follow: no deploy of release 20260101T000000Z-none is running, and no config of the deployer holds"},
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
