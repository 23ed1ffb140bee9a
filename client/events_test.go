package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/events"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/store/lock"
)

// eventsSchemaOnce is ferry schema events, compiled once for the tests.
var eventsSchemaOnce = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(eventsSchema(eventKinds, eventKeyDocs)))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(eventsSchemaID, doc); err != nil {
		return nil, err
	}
	return c.Compile(eventsSchemaID)
})

// asksJSON reports whether a command line asks for --json.
func asksJSON(args []string) bool {
	return slices.ContainsFunc(args, func(a string) bool { return a == "--json" || a == "--json=true" })
}

// checkEvents validates every JSON value of a --json command's stdout
// (one object a line, or one indented object) against ferry schema
// events, and returns their kinds in order. Anything else on stdout
// fails the test.
func checkEvents(t *testing.T, stdout string) []string {
	t.Helper()
	schema, err := eventsSchemaOnce()
	require.NoError(t, err, "ferry schema events compiles")
	var kinds []string
	dec := json.NewDecoder(strings.NewReader(stdout))
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
			return kinds
		} else if !assert.NoError(t, err, "stdout under --json is JSON objects only:\n%s", stdout) {
			return kinds
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		require.NoError(t, err)
		assert.NoError(t, schema.Validate(inst), "an object ferry printed drifts from ferry schema events:\n%s", raw)
		var head struct {
			Event string `json:"event"`
		}
		_ = json.Unmarshal(raw, &head)
		kinds = append(kinds, head.Event)
	}
}

// TestEventsSchemaEveryCommand runs every command that takes --json, on
// the local region, on a good and a refused path, and validates every
// object it prints against ferry schema events (checkEvents; the harness
// checks every other test's --json output the same way). The kinds seen
// here and from a deploy's every update cover every kind but those only
// the pipeline tests print.
func TestEventsSchemaEveryCommand(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	seen := map[string]bool{}
	run := func(want int, args ...string) string {
		t.Helper()
		r := tr.ferry(t, append(args, "--json")...)
		require.Equal(t, want, r.code, "ferry %s\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.stdout, r.stderr)
		require.NotEmpty(t, r.stdout, "ferry %s --json prints JSON", strings.Join(args, " "))
		for _, k := range checkEvents(t, r.stdout) {
			seen[k] = true
		}
		return r.stdout
	}
	run(exitOK, "validate", deployTestRelease)
	run(exitFailure, "validate", "../testdata/invalid/tags.json")
	run(exitOK, "version")
	run(exitUsage, "status")
	run(exitNotFound, "status", "--local", "nobody/nothing")
	run(exitOK, "list", "--local")
	run(exitOK, "plan", "--local", deployTestRelease)
	run(exitNotStarted, "deploy", "--local", "testdata/no-such-release.json")

	first := run(exitOK, "deploy", "--local", deployTestRelease)
	assert.Contains(t, first, `"event":"outcome"`)
	assert.Regexp(t, `"created_groups":\["coinbase/deploy-test/development/web/`, first, "the outcome names the group it created")
	id := jsonField(t, first, "release", "release_id")
	require.NotEmpty(t, id)
	run(exitOK, "status", "--local", "coinbase/deploy-test")
	run(exitOK, "history", "--local", "coinbase/deploy-test", "development")
	run(exitNotFound, "history", "--local", "coinbase/deploy-test", "nothing")
	run(exitOK, "show", "--local", "coinbase/deploy-test", "development", id)
	followed := run(exitOK, "follow", "--local", id)
	assert.Equal(t, jsonField(t, first, "outcome", "created_groups"), jsonField(t, followed, "outcome", "created_groups"),
		"follow of an ended deploy names the groups it created, as deploy did")
	run(exitOK, "halt", "--local", "coinbase/deploy-test", "development")

	// The lock held by another release: the deploy is refused, naming
	// the holder.
	locks := lock.New(tr.S3(), tr.Bucket(), tr.Clock())
	require.NoError(t, locks.Acquire(t.Context(), "coinbase/deploy-test", "development", lock.Holder{ReleaseID: "r-left", Execution: "x-left"}))
	refused := run(exitNotStarted, "deploy", "--local", deployTestRelease)
	assert.Equal(t, "LockExistsError", jsonField(t, refused, "error", "error"))
	assert.JSONEq(t, `{"release_id":"r-left","execution_arn":"x-left","since":"`+tr.Clock().Now().UTC().Format(time.RFC3339Nano)+`"}`,
		jsonField(t, refused, "error", "holder"))
	require.NoError(t, locks.Release(t.Context(), "coinbase/deploy-test", "development", "r-left"))

	// A deploy under way: halt halts it and follows it to its end. The
	// region's time stays still from the deploy's start to the halt's:
	// the deploy is still under way when the halt comes.
	tr.clk.Advance(time.Minute)
	hold := tr.Hold()
	started := tr.ferry(t, "deploy", "--local", "--no-wait", deployTestRelease)
	require.Equal(t, exitOK, started.code, started.stderr)
	tr.untilLocked(t, "coinbase/deploy-test", "development")
	tr.handOver(hold)
	halted := run(exitOK, "halt", "--local", "coinbase/deploy-test", "development")
	assert.Equal(t, releaseIDOf(t, started.stdout), jsonField(t, halted, "halted", "release_id"))
	run(exitOK, "destroy", "--local", "--yes", "coinbase/deploy-test", "development")
	run(exitOK, "local", "world", "--endpoint", tr.url)
	run(exitOK, "local", "events", "--endpoint", tr.url)
	run(exitOK, "pipeline", "validate", deployTestPipeline, deployTestRelease)

	// Every update of a deploy, as the display writes it.
	for _, event := range []string{updateStarted, updateState, updateHealth, updateStep, updateRetire, updateBake, updateThrottled, updateError, updateOutcome} {
		var out bytes.Buffer
		d := &display{w: &out, mode: modeJSON}
		d.show(progress{Event: event, At: e2eStart, Bake: &execution.Bake{}})
		for _, k := range checkEvents(t, out.String()) {
			seen[k] = true
		}
	}
	// The deploy events of canaries, bakes, rollbacks, drift, heals and promotions
	// are checked where those run (TestDeployEvents, the deployer's tests).
	elsewhere := []string{events.CanaryStep.Name, events.Baked.Name, events.RolledBack.Name, events.Refused.Name, events.DriftFound.Name, events.Healed.Name,
		events.StageReached.Name, events.ApprovalWaiting.Name, events.ApprovalReceived.Name}
	var missing []string
	for _, k := range eventKinds {
		if !seen[k.name] && !strings.HasPrefix(k.name, "promotion") && k.name != "pipeline_registered" && k.name != "pipeline_status" &&
			!slices.Contains(elsewhere, k.name) {
			missing = append(missing, k.name)
		}
	}
	assert.Empty(t, missing, "kinds no command printed here (seen: %v)", seen)
}

// jsonField is the value of key in the first object of kind event in a
// --json stream, as JSON text for objects ("" when absent).
func jsonField(t *testing.T, stdout, event, key string) string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(stdout))
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			return ""
		}
		if m["event"] != event {
			continue
		}
		switch v := m[key].(type) {
		case string:
			return v
		case nil:
			return ""
		default:
			b, _ := json.Marshal(v)
			return string(b)
		}
	}
}

// TestEventsSchemaCatchesDrift: the schema holds an object to its kind's
// definition: a key dropped, null for an array, a key of another kind, a
// kind it does not know and a missing schema_version are each refused.
func TestEventsSchemaCatchesDrift(t *testing.T) {
	schema, err := eventsSchemaOnce()
	require.NoError(t, err)
	var good bytes.Buffer
	require.NoError(t, writeEvent(&good, evPlan, stablePlan(execution.Plan{}), false))
	ok := strings.TrimSpace(good.String())
	validate := func(s string) error {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(s))
		require.NoError(t, err)
		return schema.Validate(inst)
	}
	require.NoError(t, validate(ok), ok)
	for name, drifted := range map[string]string{
		"changes null":      strings.Replace(ok, `"changes":[]`, `"changes":null`, 1),
		"a key dropped":     strings.Replace(ok, `,"changes":[]`, ``, 1),
		"an unknown key":    strings.Replace(ok, `{`, `{"extra":1,`, 1),
		"an unknown kind":   strings.Replace(ok, `"event":"plan"`, `"event":"planned"`, 1),
		"no schema_version": strings.Replace(ok, `"schema_version":1,`, ``, 1),
		"a health event without a zero count": `{"schema_version":1,"event":"health","id":1,"at":"2025-03-04T10:00:00Z","elapsed_seconds":0,"state":"CheckHealthy","healthy":false,` +
			`"services":[{"name":"web","launched":1,"healthy":0,"in_service":0,"target":1,"desired":0,"terminated":0,"stable_seconds":0,"healthy_since":null,"step":0,"steps":0,"step_desired":0,"missing":false}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			require.NotEqual(t, ok, drifted, "the case changes the object")
			assert.Error(t, validate(drifted), drifted)
		})
	}
}

// TestSchemaEvents: ferry schema events prints the schema the tests
// validate with, one definition per kind; an unknown schema is a usage
// error.
func TestSchemaEvents(t *testing.T) {
	code, stdout, stderr := runFerry(t, "schema", "events")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, string(eventsSchema(eventKinds, eventKeyDocs)), stdout)
	var doc struct {
		Defs map[string]any `json:"$defs"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
	assert.Len(t, doc.Defs, len(eventKinds), "one definition per kind")
	code, _, stderr = runFerry(t, "schema", "event")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `unknown schema "event": release or events`)
}
