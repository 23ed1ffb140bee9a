package reliability

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/events"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/local/sim"
)

// TestCheckEvents: each rule of CheckEvents catches the sequence that
// breaks it, and a deploy's events as ferry puts them (with a retry's
// repeat) break none.
func TestCheckEvents(t *testing.T) {
	const arn = "arn:aws:states:us-east-1:111111111111:execution:ferry-deployer:x"
	ev := func(k events.Kind, id string, end ...string) sim.BusEvent {
		d := map[string]any{"id": id, "event": k.Name, "execution_arn": arn}
		if len(end) > 0 {
			d["end"] = end[0]
		}
		raw, err := json.Marshal(d)
		require.NoError(t, err)
		return sim.BusEvent{Source: events.Source, DetailType: k.DetailType, Detail: raw}
	}
	started, healthy, swapped := ev(events.Started, "s"), ev(events.Healthy, "h"), ev(events.Swapped, "w")
	succeeded, failedClean := ev(events.Succeeded, "ok"), ev(events.Failed, "f", execution.EndFailureClean)
	failedDirty := ev(events.Failed, "fd", execution.EndFailureDirty)
	for _, tc := range []struct {
		name  string
		bus   []sim.BusEvent
		end   string
		lossy bool
		want  string // a part of a violation; "" for none
	}{
		{"a success", []sim.BusEvent{started, healthy, swapped, succeeded}, execution.EndSuccess, false, ""},
		{"a retry repeats with its id", []sim.BusEvent{started, started, healthy, succeeded, succeeded}, execution.EndSuccess, false, ""},
		{"a failure", []sim.BusEvent{started, failedClean}, execution.EndFailureClean, false, ""},
		{"no event at all", nil, execution.EndFailureClean, false, ""},
		{"a dirty end kept from the bus", []sim.BusEvent{started, healthy}, execution.EndFailureDirty, false, ""},
		{"a lossy run lost its end", []sim.BusEvent{started, healthy}, execution.EndSuccess, true, ""},
		{"still running", []sim.BusEvent{started, healthy}, "", false, ""},
		{"not started first", []sim.BusEvent{healthy, started, succeeded}, execution.EndSuccess, false, "the first event"},
		{"failed after succeeded", []sim.BusEvent{started, succeeded, failedDirty}, execution.EndFailureDirty, false, "two terminal events"},
		{"two failures", []sim.BusEvent{started, failedClean, failedDirty}, execution.EndFailureDirty, false, "two terminal events"},
		{"an event after the end", []sim.BusEvent{started, succeeded, swapped}, execution.EndSuccess, false, "after"},
		{"succeeded but failed", []sim.BusEvent{started, succeeded}, execution.EndFailureClean, false, "though the execution ended FailureClean"},
		{"the wrong failure", []sim.BusEvent{started, failedClean}, execution.EndFailureDirty, false, "says FailureClean"},
		{"no end", []sim.BusEvent{started, healthy}, execution.EndSuccess, false, "no terminal event"},
		{"one fact, two ids", []sim.BusEvent{started, healthy, ev(events.Healthy, "h2"), succeeded}, execution.EndSuccess, false, "put twice"},
		{"one id, two facts", []sim.BusEvent{started, ev(events.Healthy, "s"), succeeded}, execution.EndSuccess, false, "is both"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := CheckEvents(tc.bus, []EventRun{{ARN: arn, End: tc.end, Lossy: tc.lossy}})
			if tc.want == "" {
				assert.Empty(t, got)
				return
			}
			assert.True(t, slices.ContainsFunc(got, func(v string) bool { return strings.Contains(v, tc.want) }), "%q has no %q", got, tc.want)
		})
	}
}

// TestPutEventsFaults runs every schedule of the matrix whose faults all
// fail PutEvents calls (each call kind at each PutEvents of each base):
// the deploy ends as its base did, and the events that reached the bus
// keep CheckEvents' rules (deploy events are best effort: EventBridge
// API Reference, PutEvents, a whole request failing or its entries).
func TestPutEventsFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("deploys once for each PutEvents of each base")
	}
	sc := reference(t)
	m := &Matrix{Bases: Bases{Success: clean(t), Failure: failed(t), Rollback: rolledBack(t)}}
	for _, s := range m.Bases.Schedules() {
		if len(s.Faults) > 0 && s.RaceAt == "" && !s.RaceAfterLost && !slices.ContainsFunc(s.Faults, func(f Fault) bool { return f.Call.Op != "PutEvents" || f.Kind.invocationLevel() }) {
			res, err := sc.Run(t.Context(), RunOptions{Schedule: s})
			m.Entries = append(m.Entries, Entry{Schedule: s, Result: res, Err: err})
		}
	}
	require.NotEmpty(t, m.Entries)
	var bad []string
	for _, v := range m.Violations() {
		bad = append(bad, fmt.Sprintf("%s: %s", v.Schedule, v.Message))
	}
	assert.Empty(t, bad)
	t.Logf("%d schedules fail PutEvents", len(m.Entries))
}
