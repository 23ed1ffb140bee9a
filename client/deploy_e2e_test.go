package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	groups := tr.groups(devAccount, usEast1)
	assert.NotContains(t, groups, devGroup(id1), "the old ASG is deleted")
	assert.Contains(t, groups, devGroup(id2))
	assert.GreaterOrEqual(t, groups[devGroup(id2)], 2, "min_size 2")

	st := tr.ferry(t, "status", "--local", "coinbase/deploy-test")
	require.Equal(t, exitOK, st.code, st.stderr)
	assert.Contains(t, st.stdout, "deployed  "+id2)
	assert.Contains(t, st.stdout, id1)
	assert.NotContains(t, st.stdout, "locked by")
}
