package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/local/region"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/store/ledger"
)

// TestHealBackoffOnSchedule: someone deletes the worker's group again
// after every heal; the scheduled passes heal it each time, and ferry
// history shows the heals further and further apart, as the commands
// help page documents ("doubling to at most 6 hours"): after the first retry the
// heals wait 30 minutes, then an hour, then two (each started by the
// first scheduled pass after its wait).
func TestHealBackoffOnSchedule(t *testing.T) {
	tr := startRegion(t, "multi-service.json", func(o *region.Options) {
		o.Region, o.ReconcileEvery = "us-west-2", 15*time.Minute
	})
	data, err := os.ReadFile("testdata/e2e/shop-two-services.json")
	require.NoError(t, err)
	var raw map[string]any
	require.NoError(t, json.Unmarshal(data, &raw))
	raw["reconcile"] = "heal"
	file := filepath.Join(t.TempDir(), "shop-heal.json")
	writeJSON(t, file, raw)
	first := tr.ferry(t, "deploy", "--local", file)
	require.Equal(t, exitOK, first.code, "stdout:\n%s\nstderr:\n%s", first.stdout, first.stderr)

	ctx := context.Background()
	l := ledger.New(tr.S3(), tr.Bucket())
	// untilHealed runs the scheduled passes until one starts a heal, and
	// follows that heal to its end.
	untilHealed := func() {
		t.Helper()
		for range 40 {
			require.NoError(t, tr.Pass(ctx, 15*time.Minute))
			pass, err := tr.ReconcileIfDue()
			require.NoError(t, err)
			require.NotNil(t, pass, "a pass is due every 15 minutes")
			require.NoError(t, pass.Wait(ctx))
			require.Equal(t, asl.StatusSucceeded, pass.Describe().Status, "%+v", pass.Describe())
			if len(tr.Executions(asl.StatusRunning)) == 0 {
				continue
			}
			healed := tr.ferry(t, "follow", "--local", "acme/shop", "staging")
			require.Equal(t, exitOK, healed.code, "stdout:\n%s\nstderr:\n%s", healed.stdout, healed.stderr)
			return
		}
		t.Fatal("no heal in 10 hours")
	}
	for range 5 {
		cur, found, err := l.GetCurrent(ctx, "acme/shop", "staging")
		require.NoError(t, err)
		require.True(t, found)
		gone := tr.ferry(t, "local", "world", "delete-group", naming.GroupName("acme/shop", "staging", "worker", cur.ReleaseID))
		require.Equal(t, exitOK, gone.code, gone.stderr)
		untilHealed()
	}

	h := tr.ferry(t, "history", "--local", "--json", "acme/shop", "staging")
	require.Equal(t, exitOK, h.code, h.stderr)
	var doc historyDoc
	require.NoError(t, json.Unmarshal([]byte(h.stdout), &doc))
	entries := doc.Releases
	var starts []time.Time
	for _, e := range entries {
		if e.HealOf != "" {
			assert.Equal(t, "Success", e.End, e.ReleaseID)
			starts = append(starts, e.StartedAt)
		}
	}
	slices.Reverse(starts) // oldest first
	require.Len(t, starts, 5)
	var intervals []time.Duration
	for i := 1; i < len(starts); i++ {
		intervals = append(intervals, starts[i].Sub(starts[i-1]).Round(time.Minute))
	}
	// The n-th heal in a row waits its retry after the one before, and
	// is started by the first scheduled pass after it.
	for i, wait := range []time.Duration{30 * time.Minute, time.Hour, 2 * time.Hour} {
		assert.GreaterOrEqual(t, intervals[i+1], wait, "intervals %v", intervals)
		assert.Less(t, intervals[i+1], wait+15*time.Minute, "intervals %v", intervals)
	}
}
