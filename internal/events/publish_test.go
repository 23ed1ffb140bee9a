package events_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/events"
	"github.com/ferryhq/ferry/internal/local/sim"
)

const account, region = "111111111111", "us-east-1"

// bus is the simulated default bus of the deploy-test world's account,
// with a log that records what Publish says.
type bus struct {
	world *sim.World
	api   events.Bus
	log   *slog.Logger
	logs  *bytes.Buffer
}

func newBus(t *testing.T) *bus {
	t.Helper()
	spec, err := sim.Load(filepath.Join("..", "..", "testdata", "worlds", "deploy-test.json"))
	require.NoError(t, err)
	w, err := sim.New(clock.NewVirtual(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)), spec)
	require.NoError(t, err)
	var logs bytes.Buffer
	return &bus{world: w, api: w.Clients(account, region).EventBridge, log: slog.New(slog.NewTextHandler(&logs, nil)), logs: &logs}
}

// puts are the PutEvents calls made, each as its number of entries (one
// authorization per entry).
func (b *bus) puts() []int {
	var n []int
	for _, c := range b.world.CallLog() {
		if c.Op == "PutEvents" {
			n = append(n, len(c.Auth))
		}
	}
	return n
}

// kept are the detail ids on the bus, in order.
func (b *bus) kept(t *testing.T) []string {
	var ids []string
	for _, ev := range b.world.BusEvents() {
		var h events.Head
		require.NoError(t, json.Unmarshal(ev.Detail, &h))
		assert.Equal(t, events.Source, ev.Source)
		ids = append(ids, h.ID)
	}
	return ids
}

func started(id string, services ...string) events.Event {
	return events.Event{Kind: events.Started, Body: events.StartedDetail{Head: events.Head{ID: id}, Services: services}}
}

func ids(n int) ([]events.Event, []string) {
	var evs []events.Event
	var want []string
	for i := range n {
		id := string(rune('a'+i%26)) + strings.Repeat("x", i/26)
		evs, want = append(evs, started(id, "web")), append(want, id)
	}
	return evs, want
}

// TestPublishBatches: at most ten entries a request (API Reference,
// PutEvents), in order.
func TestPublishBatches(t *testing.T) {
	b := newBus(t)
	evs, want := ids(23)
	assert.Equal(t, 23, events.Publish(context.Background(), b.api, b.log, evs...))
	assert.Equal(t, []int{10, 10, 3}, b.puts())
	assert.Equal(t, want, b.kept(t))
}

// TestPublishSizes: an entry over 256 KB is dropped and logged, the
// others are put; entries are split so no request reaches 256 KB
// together (EventBridge User Guide, Calculating PutEvents event entry
// size).
func TestPublishSizes(t *testing.T) {
	b := newBus(t)
	hundredKB := strings.Repeat("s", 100*1024)
	n := events.Publish(context.Background(), b.api, b.log,
		started("a", hundredKB), started("huge", strings.Repeat("s", 300*1024)), started("b", hundredKB), started("c", hundredKB))
	assert.Equal(t, 3, n)
	assert.Equal(t, []int{2, 1}, b.puts())
	assert.Equal(t, []string{"a", "b", "c"}, b.kept(t))
	assert.Contains(t, b.logs.String(), "not less than PutEvents' 262144")
}

// TestPublishRetriesFailedEntriesOnce: entries a request fails with a
// retryable code (InternalFailure, ThrottlingException:
// PutEventsResultEntry, API Reference) are put again once, at once; one
// that fails again, or fails with another code, is logged and left.
func TestPublishRetriesFailedEntriesOnce(t *testing.T) {
	for _, tc := range []struct {
		name  string
		n     int
		fail  []string
		puts  []int
		kept  []string
		count int
	}{
		{"a throttled entry is put again", 3, []string{"ThrottlingException"}, []int{3, 1}, []string{"b", "c", "a"}, 3},
		{"two failed entries are put again together", 3, []string{"InternalFailure", "ThrottlingException"}, []int{3, 2}, []string{"c", "a", "b"}, 3},
		{"twice failed is left", 1, []string{"InternalFailure", "InternalFailure"}, []int{1, 1}, nil, 0},
		{"not retryable is left", 3, []string{"AccessDeniedException"}, []int{3}, []string{"b", "c"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBus(t)
			b.world.Faults().FailEntries(tc.fail...)
			evs, _ := ids(tc.n)
			assert.Equal(t, tc.count, events.Publish(context.Background(), b.api, b.log, evs...))
			assert.Equal(t, tc.puts, b.puts())
			assert.Equal(t, tc.kept, b.kept(t))
			if tc.count < tc.n {
				assert.Contains(t, b.logs.String(), "deploy event")
			}
		})
	}
}

// TestPublishNeverFails: a PutEvents that fails whole is logged; Publish
// reports nothing put and returns.
func TestPublishNeverFails(t *testing.T) {
	b := newBus(t)
	_, err := b.world.Faults().Add(sim.Rule{Service: "EventBridge", Op: "PutEvents", Err: sim.InternalError()})
	require.NoError(t, err)
	evs, _ := ids(3)
	assert.Zero(t, events.Publish(context.Background(), b.api, b.log, evs...))
	assert.Contains(t, b.logs.String(), "deploy events not put")
	assert.Empty(t, b.world.BusEvents())
}

// TestDetail: a detail starts with schema_version and event, then its
// body's keys; a body of another type than its kind's is refused.
func TestDetail(t *testing.T) {
	d, err := events.Event{Kind: events.Baked, Body: events.BakedDetail{Head: events.Head{ID: "x"}, BakeSeconds: 60}}.Detail()
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(d, `{"schema_version":1,"event":"release_baked","id":"x",`), d)
	assert.Contains(t, d, `"bake_seconds":60}`)
	_, err = events.Event{Kind: events.Baked, Body: events.StartedDetail{}}.Detail()
	assert.ErrorContains(t, err, "release_baked written from a events.StartedDetail")
}

// TestKinds: every kind has a distinct name and detail-type, within
// PutEvents' 128 characters.
func TestKinds(t *testing.T) {
	names, types := map[string]bool{}, map[string]bool{}
	for _, k := range events.Kinds {
		assert.False(t, names[k.Name] || types[k.DetailType], k.Name)
		names[k.Name], types[k.DetailType] = true, true
		assert.LessOrEqual(t, len(k.DetailType), 128)
		assert.NotEmpty(t, k.About)
	}
}

// TestNewID: the same facts give the same id; another execution, kind or
// fact another.
func TestNewID(t *testing.T) {
	x := "arn:aws:states:us-east-1:111111111111:execution:ferry-deployer:x"
	id := events.NewID(x, events.CanaryStep, "web", "1")
	assert.Len(t, id, 32)
	assert.Equal(t, id, events.NewID(x, events.CanaryStep, "web", "1"))
	assert.NotEqual(t, id, events.NewID(x, events.CanaryStep, "web", "2"))
	assert.NotEqual(t, id, events.NewID(x+"2", events.CanaryStep, "web", "1"))
	assert.NotEqual(t, id, events.NewID(x, events.Healthy, "web", "1"))
}
