package asl

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/statemachine/definition"
)

const testFunctionARN = "arn:aws:lambda:us-east-1:123456789012:function:ferry-deployer"

// ferryMachine is ferry's generated definition with the deployer function's
// ARN substituted.
func ferryDefinition(t *testing.T) []byte {
	t.Helper()
	data, err := Substitute(definition.JSON(), map[string]string{"DeployerFunctionArn": testFunctionARN})
	require.NoError(t, err)
	return data
}

// crossReport is what both interpreters report for a scenario.
type crossReport struct {
	Path   []string `json:"path"`
	Status string   `json:"status"`
	Error  string   `json:"error,omitempty"`
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }

func echo(merge map[string]json.RawMessage) outcome {
	in := "input"
	return outcome{Echo: &in, Merge: merge}
}

func failWith(name string) outcome { return outcome{Error: name, Cause: name + " from the scenario"} }

// ferryScenarios script the deployer's handlers through every path of the
// definition; want is the path and end both interpreters must take.
//
// diverges names a known bug of aws-local-stepfunctions 3.0.0 that makes it
// end such a scenario differently: its IsPresent/IsBoolean/IsNumeric/...
// operators never match when their operand is false (it tests
// `operand && typeof value === ...`), where the specification says
// "IsBoolean": false matches any value that is not a boolean.
type ferryScenario struct {
	sc       scenario
	want     crossReport
	diverges string
}

const isFalseBug = "aws-local-stepfunctions never matches an Is* operator whose operand is false"

func ferryScenarios() []ferryScenario {
	unhealthy := raw(`{"healthy": false, "wait_seconds": 5, "services": {}}`)
	healthy := raw(`{"healthy": true, "wait_seconds": 0, "services": {}}`)
	base := func(name string, override map[string][]outcome) scenario {
		o := map[string][]outcome{
			"Validate":          {{Result: raw(`{"project_name": "p", "config_name": "c", "release_id": "r1", "release_sha256": "00", "timeout": 600, "services": ["web"]}`)}},
			"Lock":              {echo(nil)},
			"ValidateResources": {echo(nil)},
			"Publish":           {echo(nil)},
			"Deploy":            {echo(map[string]json.RawMessage{"deployed": raw(`true`), "health": unhealthy})},
			"CheckHealthy":      {{Result: healthy}},
			"CleanUpSuccess":    {echo(nil)},
			"CleanUpFailure":    {echo(nil)},
			"ReleaseLock":       {echo(nil)},
		}
		for k, v := range override {
			o[k] = v
		}
		return scenario{Name: name, Input: raw(`{"release_id": "r1", "project_name": "p", "config_name": "c"}`), Outcomes: o}
	}
	start := []string{"Validate", "Lock", "ValidateResources", "Publish", "Deploy", "Healthy?"}
	path := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	check := []string{"WaitForHealthy", "CheckHealthy", "Healthy?"}
	success := []string{"CleanUpSuccess", "Success"}
	cleanFail := []string{"CleanUpFailure", "ReleaseLock", "FailureClean"}
	return []ferryScenario{
		{base("success first try", nil),
			crossReport{path(start, check, success), "SUCCEEDED", ""}, ""},
		{base("health needs 3 checks", map[string][]outcome{"CheckHealthy": {{Result: unhealthy}, {Result: unhealthy}, {Result: healthy}}}),
			crossReport{path(start, check, check, check, success), "SUCCEEDED", ""}, ""},
		{base("bad release", map[string][]outcome{"Validate": {failWith("BadReleaseError")}}),
			crossReport{[]string{"Validate", "FailureClean"}, "FAILED", "BadReleaseError"}, ""},
		{base("lock exists", map[string][]outcome{"Lock": {failWith("LockExistsError")}}),
			crossReport{[]string{"Validate", "Lock", "FailureClean"}, "FAILED", "LockExistsError"}, ""},
		{base("bad resources", map[string][]outcome{"ValidateResources": {failWith("BadReleaseError")}}),
			crossReport{[]string{"Validate", "Lock", "ValidateResources", "ReleaseLock", "FailureClean"}, "FAILED", "BadReleaseError"}, ""},
		{base("deploy error", map[string][]outcome{"Deploy": {failWith("DeployError")}}),
			crossReport{path(start[:5], cleanFail), "FAILED", "DeployError"}, ""},
		{base("halt during health", map[string][]outcome{"CheckHealthy": {{Result: unhealthy}, failWith("HaltError")}}),
			crossReport{path(start, check, check[:2], cleanFail), "FAILED", "HaltError"}, ""},
		{base("timeout during health", map[string][]outcome{"CheckHealthy": {{Result: unhealthy}, failWith("TimeoutError")}}),
			crossReport{path(start, check, check[:2], cleanFail), "FAILED", "TimeoutError"}, ""},
		{base("cleanup failure is dirty", map[string][]outcome{"Deploy": {failWith("DeployError")}, "CleanUpFailure": {failWith("CleanUpError")}}),
			crossReport{path(start[:5], []string{"CleanUpFailure", "FailureDirty"}), "FAILED", "CleanUpError"}, ""},
		{base("lock release failure is dirty", map[string][]outcome{"Publish": {failWith("DeployError")}, "ReleaseLock": {failWith("LockError")}}),
			crossReport{path(start[:4], []string{"ReleaseLock", "FailureDirty"}), "FAILED", "LockError"}, ""},
		{base("retryable error then success", map[string][]outcome{"Lock": {failWith("RetryableError"), failWith("Lambda.ServiceException"), echo(nil)}}),
			crossReport{path(start, check, success), "SUCCEEDED", ""}, ""},
		{base("retries exhausted", map[string][]outcome{"Publish": {failWith("RetryableError")}}),
			crossReport{path(start[:4], []string{"ReleaseLock", "FailureClean"}), "FAILED", "RetryableError"}, ""},
		{base("unexpected error is caught", map[string][]outcome{"CleanUpSuccess": {failWith("InternalError")}}),
			crossReport{path(start, check, []string{"CleanUpSuccess", "FailureDirty"}), "FAILED", "InternalError"}, ""},
		{base("halt at clean up success", map[string][]outcome{"CleanUpSuccess": {failWith("HaltError")}}),
			crossReport{path(start, check, []string{"CleanUpSuccess"}, cleanFail), "FAILED", "HaltError"}, ""},
		{base("bad health report", map[string][]outcome{"CheckHealthy": {{Result: raw(`{"healthy": "yes"}`)}}}),
			crossReport{path(start, check, []string{"BadHealthReport"}, cleanFail), "FAILED", "InternalError"}, isFalseBug},
		{base("negative wait", map[string][]outcome{"CheckHealthy": {{Result: raw(`{"healthy": false, "wait_seconds": -1}`)}}}),
			crossReport{path(start, check, []string{"BadHealthReport"}, cleanFail), "FAILED", "InternalError"}, ""},
	}
}

// runOurs runs a scenario on this package's interpreter.
func runOurs(t *testing.T, m *Machine, sc scenario) crossReport {
	t.Helper()
	c := clock.NewVirtual(t0)
	x, err := Run(context.Background(), m, RunOptions{Input: sc.Input, Name: "crosscheck", Clock: c, Invoker: newScripted(sc, c)})
	require.NoError(t, err)
	d := x.Describe()
	return crossReport{Path: x.Path(), Status: string(d.Status), Error: d.Error}
}

func TestFerryDefinitionPaths(t *testing.T) {
	m, err := Parse(ferryDefinition(t))
	require.NoError(t, err)
	for _, tt := range ferryScenarios() {
		t.Run(tt.sc.Name, func(t *testing.T) {
			assert.Equal(t, tt.want, runOurs(t, m, tt.sc))
		})
	}
}

// TestCrossCheck runs ferry's definition and the package's own test
// machines on aws-local-stepfunctions (testdata/crosscheck.mjs) and on this
// interpreter with the same scripted task outcomes: both must take the same
// path and end the same way. It needs node and `make tools`.
func TestCrossCheck(t *testing.T) {
	entry, err := filepath.Abs(filepath.Join("..", "..", "infra", "node_modules", "aws-local-stepfunctions", "build", "main.node.esm.js"))
	require.NoError(t, err)
	if _, err := os.Stat(entry); err != nil {
		t.Fatalf("aws-local-stepfunctions is not installed (%s): run make tools", entry)
	}
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed: the cross-check needs Node.js 20 or later (make tools installs its packages)")
	}

	var scs []scenario
	var want []crossReport
	var diverges []string
	for _, tt := range ferryScenarios() {
		scs = append(scs, tt.sc)
		want = append(want, tt.want)
		diverges = append(diverges, tt.diverges)
	}
	defData := ferryDefinition(t)
	got := runNode(t, nodeBin, entry, defData, scs)
	require.Len(t, got, len(scs))
	m, err := Parse(defData)
	require.NoError(t, err)
	for i, sc := range scs {
		t.Run("ferry/"+sc.Name, func(t *testing.T) {
			ours := runOurs(t, m, sc)
			assert.Equal(t, want[i], ours, "this interpreter")
			if diverges[i] != "" {
				// Keep the known divergence visible: when a new version fixes
				// it, this fails and the scenario joins the others.
				assert.NotEqual(t, ours, got[i], "aws-local-stepfunctions no longer diverges (%s): remove the note", diverges[i])
				return
			}
			assert.Equal(t, ours, got[i], "aws-local-stepfunctions")
		})
	}

	// The golden-history machine: a retry, a loop through Choice and Wait.
	loop := []byte(`{"StartAt": "Init", "States": {
	  "Init": {"Type": "Pass", "Result": {"wait": 2}, "ResultPath": "$.cfg", "Next": "Work"},
	  "Work": {"Type": "Task", "Resource": "` + lambdaARN + `", "ResultPath": "$.result",
	           "Retry": [{"ErrorEquals": ["RetryableError"], "IntervalSeconds": 2, "MaxAttempts": 1}],
	           "Catch": [{"ErrorEquals": ["States.TaskFailed"], "ResultPath": "$.error", "Next": "Failed"}],
	           "Next": "Done?"},
	  "Done?": {"Type": "Choice", "Choices": [
	      {"And": [{"Variable": "$.result.done", "IsPresent": true}, {"Variable": "$.result.done", "BooleanEquals": true}], "Next": "Finish"},
	      {"Variable": "$.result.n", "NumericGreaterThanEqualsPath": "$.cfg.wait", "Next": "Finish"}],
	    "Default": "Pause"},
	  "Pause": {"Type": "Wait", "SecondsPath": "$.cfg.wait", "Next": "Work"},
	  "Finish": {"Type": "Succeed"},
	  "Failed": {"Type": "Fail", "ErrorPath": "$.error.Error", "CausePath": "$.error.Cause"}}}`)
	loopScs := []scenario{
		{Name: "loop until done", Outcomes: map[string][]outcome{"Work": {{Result: raw(`{"done": false, "n": 0}`)}, {Result: raw(`{"done": true}`)}}}},
		{Name: "loop until n", Outcomes: map[string][]outcome{"Work": {{Result: raw(`{"n": 1}`)}, failWith("RetryableError"), {Result: raw(`{"n": 2}`)}}}},
		{Name: "retry exhausted then caught", Outcomes: map[string][]outcome{"Work": {failWith("RetryableError")}}},
	}
	gotLoop := runNode(t, nodeBin, entry, loop, loopScs)
	require.Len(t, gotLoop, len(loopScs))
	lm, err := Parse(loop)
	require.NoError(t, err)
	for i, sc := range loopScs {
		t.Run("loop/"+sc.Name, func(t *testing.T) {
			assert.Equal(t, runOurs(t, lm, sc), gotLoop[i])
		})
	}
}

// runNode runs testdata/crosscheck.mjs on a definition and scenarios.
func runNode(t *testing.T, nodeBin, entry string, def []byte, scs []scenario) []crossReport {
	t.Helper()
	dir := t.TempDir()
	defFile := filepath.Join(dir, "definition.json")
	scFile := filepath.Join(dir, "scenarios.json")
	require.NoError(t, os.WriteFile(defFile, def, 0o644))
	data, err := json.Marshal(scs)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(scFile, data, 0o644))
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(nodeBin, filepath.Join("testdata", "crosscheck.mjs"), entry, defFile, scFile)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "node crosscheck.mjs: %s", stderr.String())
	var reports []crossReport
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &reports), "node output: %s", stdout.String())
	return reports
}
