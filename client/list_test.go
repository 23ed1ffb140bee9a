package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/store/lock"
)

func TestList(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")

	empty := tr.ferry(t, "list", "--local")
	require.Equal(t, exitOK, empty.code, empty.stderr)
	assert.Equal(t, "the deployer knows no project yet\n", empty.stdout)

	first := tr.ferry(t, "deploy", "--local", deployTestRelease)
	require.Equal(t, exitOK, first.code, first.stderr)
	id := releaseIDOf(t, first.stdout)

	text := tr.ferry(t, "list", "--local")
	require.Equal(t, exitOK, text.code, text.stderr)
	assert.Equal(t, "PROJECT               CONFIG       DEPLOYED                 LATEST                   OUTCOME  RUNNING\n"+
		"coinbase/deploy-test  development  "+id+"  "+id+"  Success  no\n", text.stdout)

	hold := tr.Hold()
	defer hold()
	started := tr.ferry(t, "deploy", "--local", "--no-wait", demoV2)
	require.Equal(t, exitOK, started.code, started.stderr)
	id2 := releaseIDOf(t, started.stdout)
	tr.untilLocked(t, "coinbase/deploy-test", "development")
	var doc listDoc
	js := tr.ferry(t, "list", "--local", "--json")
	require.Equal(t, exitOK, js.code, js.stderr)
	require.NoError(t, json.Unmarshal([]byte(js.stdout), &doc))
	entries := doc.Configs
	require.Len(t, entries, 1)
	assert.Equal(t, listEntry{Project: "coinbase/deploy-test", Config: "development", Deployed: id, Latest: id2, End: "running", Running: true, LockedBy: id2}, entries[0])

	bad := tr.ferry(t, "list", "--local", "extra")
	assert.Equal(t, exitUsage, bad.code)
	assert.Contains(t, bad.stderr, "ferry list: takes no arguments")
}

// untilLocked lets the region's time run until a deploy holds the lock of
// project/config, and returns the locks it read.
func (tr *testRegion) untilLocked(t *testing.T, project, config string) *lock.Locks {
	t.Helper()
	wait := tr.sleeper()
	locks := lock.New(tr.S3(), tr.Bucket(), tr.Clock())
	for {
		_, found, err := locks.Get(context.Background(), project, config)
		require.NoError(t, err)
		if found {
			return locks
		}
		require.NoError(t, wait(context.Background(), 0))
	}
}
