package asl

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
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

// endReport is how an execution ends: the states it entered and its
// status and error.
type endReport struct {
	Path   []string `json:"path"`
	Status string   `json:"status"`
	Error  string   `json:"error,omitempty"`
}

// crossReport is everything an execution shows, as both interpreters
// report it (testdata/crosscheck.mjs prints the same JSON shape): the
// states entered, how it ended (error and cause, or output), every task
// invocation with the payload the Lambda function received, every state's
// output as it left it (a Task's result after ResultSelector, ResultPath
// and OutputPath, or a Catch's error output where the Catch stored it), and
// how many times each Task was invoked (1 + its retries). Both run on
// virtual time, so each invocation's time shows the Waits and retry
// intervals (IntervalSeconds, BackoffRate, MaxDelaySeconds) before it.
type crossReport struct {
	Path     []string       `json:"path"`
	Status   string         `json:"status"`
	Error    string         `json:"error,omitempty"`
	Cause    string         `json:"cause,omitempty"`
	Output   any            `json:"output,omitempty"`
	Calls    []crossCall    `json:"calls"`
	Exits    []crossExit    `json:"exits"`
	Attempts map[string]int `json:"attempts"`
}

type crossCall struct {
	State   string `json:"state"`
	Payload any    `json:"payload"`
	// At is when the call started, in milliseconds since the execution
	// started: it shows every Wait and retry interval before it.
	At int64 `json:"at"`
}

type crossExit struct {
	State  string `json:"state"`
	Output any    `json:"output"`
}

func (r crossReport) end() endReport { return endReport{r.Path, r.Status, r.Error} }

// statesCause stands for the cause of an error the interpreter raised
// itself (a States.* name): the States Language leaves that cause free text
// and each interpreter words it its own way, so the comparison keeps the
// error's name and where it is stored, not its wording. A task's error
// keeps its cause, which comes from the Lambda function.
const statesCause = "(the interpreter's own words)"

// normalize masks the causes of States.* errors, in the end of the
// execution and in every error output a Catch stored, and makes empty lists
// nil so that both sides' JSON compares equal.
func (r crossReport) normalize() crossReport {
	if strings.HasPrefix(r.Error, "States.") {
		r.Cause = statesCause
	}
	r.Output = maskStatesCauses(r.Output)
	var exits []crossExit
	for _, e := range r.Exits {
		exits = append(exits, crossExit{e.State, maskStatesCauses(e.Output)})
	}
	r.Exits = exits
	for i, c := range r.Calls {
		r.Calls[i].Payload = maskToken(c.Payload)
	}
	if len(r.Calls) == 0 {
		r.Calls = nil
	}
	if len(r.Attempts) == 0 {
		r.Attempts = nil
	}
	return r
}

// maskToken masks the task token of a callback task's payload: each side
// makes its own (aws-local-stepfunctions makes none; the run gives it one).
func maskToken(payload any) any {
	m, ok := payload.(map[string]any)
	if !ok {
		return payload
	}
	inner, ok := m["Payload"].(map[string]any)
	if !ok || inner["task_token"] == nil {
		return payload
	}
	out := maps.Clone(m)
	p := maps.Clone(inner)
	p["task_token"] = "(a task token)"
	out["Payload"] = p
	return out
}

func maskStatesCauses(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = maskStatesCauses(x)
		}
		if name, ok := v["Error"].(string); ok && strings.HasPrefix(name, "States.") {
			if _, ok := v["Cause"]; ok {
				out["Cause"] = statesCause
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = maskStatesCauses(x)
		}
		return out
	}
	return v
}

// decode parses JSON for a report; a value ferry's interpreter produced is
// always valid JSON.
func decode(t *testing.T, s string) any {
	t.Helper()
	if s == "" {
		return nil
	}
	var v any
	require.NoError(t, json.Unmarshal([]byte(s), &v), "%s", s)
	return v
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }

func echo(merge map[string]json.RawMessage) outcome {
	in := "input"
	return outcome{Echo: &in, Merge: merge}
}

// lambdaError is a Lambda function's error as Step Functions reports it for
// a Task that invokes the function: the error name is the function's
// errorType and the cause is the function's error payload,
// {"errorMessage": ..., "errorType": ...}, as the Go runtime writes it
// (AWS Step Functions Developer Guide, "Handling errors in Step Functions
// workflows" and the tutorial "Handling error conditions using a Step
// Functions state machine", whose caught error has the function's payload as
// its Cause). Both interpreters get the same payload, so the comparison
// covers where each stores it.
func lambdaError(name, message string) outcome {
	cause, err := json.Marshal(struct {
		ErrorMessage string `json:"errorMessage"`
		ErrorType    string `json:"errorType"`
	}{message, name})
	if err != nil {
		panic(err)
	}
	return outcome{Error: name, Cause: string(cause)}
}

func failWith(name string) outcome { return lambdaError(name, name+" from the scenario") }

// lambdaTimedOut is the error of a Lambda function that ran out of its own
// timeout: Lambda's Invoke answers FunctionError "Unhandled" with the
// payload {"errorMessage": "RequestId: <id> Error: Task timed out after
// <n> seconds", "errorType": "Sandbox.Timedout"} (AWS Lambda Developer
// Guide, "Troubleshoot invocation issues in Lambda", "Function times out
// during Init phase (Sandbox.Timedout)"), and Step Functions names the error
// after its errorType. Before Lambda named it, Step Functions reported a
// function timeout as Lambda.Unknown (AWS Step Functions Developer Guide,
// "Handle Lambda service exceptions"): ferry's definition retries both.
func lambdaTimedOut() outcome {
	return lambdaError("Sandbox.Timedout", "RequestId: 6c1b2a3e-0000-4000-8000-000000000000 Error: Task timed out after 900.00 seconds")
}

// ferryScenarios script the deployer's handlers through every path of the
// definition; want is the path and end this interpreter must take, and the
// cross-check compares everything else with aws-local-stepfunctions.
//
// diverges names a known divergence of aws-local-stepfunctions 3.0.0 that
// makes it show such a scenario differently (one of the constants below).
type ferryScenario struct {
	sc       scenario
	want     endReport
	diverges string
}

// isFalseBug: aws-local-stepfunctions' IsPresent/IsBoolean/IsNumeric/...
// operators never match when their operand is false (it tests `operand &&
// typeof value === ...`), where the specification says "IsBoolean": false
// matches any value that is not a boolean.
const isFalseBug = "aws-local-stepfunctions never matches an Is* operator whose operand is false"

// parameterPathRuntime: aws-local-stepfunctions raises States.Runtime
// (which no Catch catches) for a Parameters path that matches nothing, where
// the specification ("Errors") and the Step Functions Developer Guide's list
// of error names call that error States.ParameterPathFailure. This
// interpreter follows them.
const parameterPathRuntime = "aws-local-stepfunctions raises States.Runtime for a Parameters path failure"

// mapStartTime: inside a Map's iterations aws-local-stepfunctions 3.0.0
// gives $$.Execution.StartTime the time the iteration started, where the
// context object's Execution is the execution's own (Step Functions
// Developer Guide, "Accessing the Context object": the execution's start
// time), as this interpreter gives it.
const mapStartTime = "aws-local-stepfunctions gives $$.Execution.StartTime inside a Map the iteration's start"

func ferryScenarios() []ferryScenario {
	unhealthy := raw(`{"healthy": false, "next_step": false, "wait_seconds": 5, "services": {}}`)
	healthy := raw(`{"healthy": true, "next_step": false, "wait_seconds": 0, "services": {}}`)
	stepStable := raw(`{"healthy": false, "next_step": true, "wait_seconds": 5, "services": {}}`)
	stepTaken := raw(`{"healthy": false, "next_step": false, "wait_seconds": 5, "services": {"web": {"step": 2, "steps": 3}}}`)
	retired := echo(map[string]json.RawMessage{"retire": raw(`{"done": true, "wait_seconds": 0}`)})
	draining := echo(map[string]json.RawMessage{"retire": raw(`{"done": false, "wait_seconds": 15, "groups": [{"name": "g", "phase": "draining", "instances": 1}]}`)})
	baked := echo(map[string]json.RawMessage{"bake": raw(`{"done": true, "wait_seconds": 0}`)})
	baking := echo(map[string]json.RawMessage{"bake": raw(`{"done": false, "wait_seconds": 5, "left_seconds": 60, "standby": ["g"], "detached": true}`)})
	checked := echo(map[string]json.RawMessage{"resources": raw(`{"done": true, "wait_seconds": 0}`)})
	deployed := echo(map[string]json.RawMessage{"deployed": raw(`true`), "deploy": raw(`{"done": true, "wait_seconds": 0}`), "health": unhealthy})
	throttledChecks := echo(map[string]json.RawMessage{"resources": raw(`{"done": false, "wait_seconds": 20, "throttled": 1}`)})
	throttled := echo(map[string]json.RawMessage{"deployed": raw(`true`), "deploy": raw(`{"done": false, "wait_seconds": 20, "throttled": 1}`)})
	base := func(name string, override map[string][]outcome) scenario {
		o := map[string][]outcome{
			"Validate":          {{Result: raw(`{"project_name": "p", "config_name": "c", "release_id": "r1", "release_sha256": "00", "timeout": 600, "services": ["web"]}`)}},
			"Lock":              {echo(nil)},
			"ValidateResources": {checked},
			"Publish":           {echo(nil)},
			"Deploy":            {deployed},
			"CheckHealthy":      {{Result: healthy}},
			"NextStep":          {{Result: stepTaken}},
			"Bake":              {baked},
			"CleanUpSuccess":    {retired},
			"CleanUpFailure":    {retired},
			"ReleaseLock":       {echo(nil)},
		}
		for k, v := range override {
			o[k] = v
		}
		return scenario{Name: name, Input: raw(`{"release_id": "r1", "project_name": "p", "config_name": "c"}`), Outcomes: o}
	}
	start := []string{"Validate", "Lock", "ValidateResources", "ResourcesValid?", "Publish", "Deploy", "Deployed?", "Healthy?"}
	path := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	check := []string{"WaitForHealthy", "CheckHealthy", "Healthy?"}
	nextStep := []string{"NextStep"}
	success := []string{"Bake", "Baked?", "CleanUpSuccess", "Retired?", "Success"}
	bakeStep := []string{"Bake", "Baked?", "WaitForBake"}
	retireStep := []string{"CleanUpSuccess", "Retired?", "WaitForRetire"}
	cleanFail := []string{"CleanUpFailure", "CleanedUp?", "ReleaseLock", "FailureClean"}
	deploys := []ferryScenario{
		{base("success first try", nil),
			endReport{path(start, check, success), "SUCCEEDED", ""}, ""},
		{base("health needs 3 checks", map[string][]outcome{"CheckHealthy": {{Result: unhealthy}, {Result: unhealthy}, {Result: healthy}}}),
			endReport{path(start, check, check, check, success), "SUCCEEDED", ""}, ""},
		{base("bad release", map[string][]outcome{"Validate": {failWith("BadReleaseError")}}),
			endReport{[]string{"Validate", "FailureClean"}, "FAILED", "BadReleaseError"}, ""},
		{base("lock exists", map[string][]outcome{"Lock": {failWith("LockExistsError")}}),
			endReport{[]string{"Validate", "Lock", "FailureClean"}, "FAILED", "LockExistsError"}, ""},
		{base("bad resources", map[string][]outcome{"ValidateResources": {failWith("BadReleaseError")}}),
			endReport{[]string{"Validate", "Lock", "ValidateResources", "ReleaseLock", "FailureClean"}, "FAILED", "BadReleaseError"}, ""},
		{base("deploy error", map[string][]outcome{"Deploy": {failWith("DeployError")}}),
			endReport{path(start[:6], cleanFail), "FAILED", "DeployError"}, ""},
		// AWS throttled Deploy: it asks for a wait and runs again; a
		// report the Choice cannot read fails through clean up.
		{base("throttled deploy runs again", map[string][]outcome{"Deploy": {throttled, throttled, deployed}}),
			endReport{path(start[:7], []string{"WaitForDeploy", "Deploy", "Deployed?", "WaitForDeploy"}, start[5:], check, success), "SUCCEEDED", ""}, ""},
		{base("no deploy report", map[string][]outcome{"Deploy": {echo(nil)}}),
			endReport{path(start[:7], []string{"BadDeployReport"}, cleanFail), "FAILED", "InternalError"}, isFalseBug},
		{base("throttled resource checks run again", map[string][]outcome{"ValidateResources": {throttledChecks, checked}}),
			endReport{path(start[:4], []string{"WaitForResources", "ValidateResources"}, start[3:], check, success), "SUCCEEDED", ""}, ""},
		{base("no resources report", map[string][]outcome{"ValidateResources": {echo(nil)}}),
			endReport{path(start[:4], []string{"BadResourcesReport", "ReleaseLock", "FailureClean"}), "FAILED", "InternalError"}, isFalseBug},
		{base("halt during health", map[string][]outcome{"CheckHealthy": {{Result: unhealthy}, failWith("HaltError")}}),
			endReport{path(start, check, check[:2], cleanFail), "FAILED", "HaltError"}, ""},
		{base("timeout during health", map[string][]outcome{"CheckHealthy": {{Result: unhealthy}, failWith("TimeoutError")}}),
			endReport{path(start, check, check[:2], cleanFail), "FAILED", "TimeoutError"}, ""},
		{base("cleanup failure is dirty", map[string][]outcome{"Deploy": {failWith("DeployError")}, "CleanUpFailure": {failWith("CleanUpError")}}),
			endReport{path(start[:6], []string{"CleanUpFailure", "FailureDirty"}), "FAILED", "CleanUpError"}, ""},
		{base("lock release failure is dirty", map[string][]outcome{"Publish": {failWith("DeployError")}, "ReleaseLock": {failWith("LockError")}}),
			endReport{path(start[:5], []string{"ReleaseLock", "FailureDirty"}), "FAILED", "LockError"}, ""},
		{base("retryable error then success", map[string][]outcome{"Lock": {failWith("RetryableError"), failWith("Lambda.ServiceException"), echo(nil)}}),
			endReport{path(start, check, success), "SUCCEEDED", ""}, ""},
		{base("retries exhausted", map[string][]outcome{"Publish": {failWith("RetryableError")}}),
			endReport{path(start[:5], []string{"ReleaseLock", "FailureClean"}), "FAILED", "RetryableError"}, ""},
		{base("unexpected error is caught", map[string][]outcome{"CleanUpSuccess": {failWith("InternalError")}}),
			endReport{path(start, check, success[:3], []string{"FailureDirty"}), "FAILED", "InternalError"}, ""},
		{base("halt at clean up success", map[string][]outcome{"CleanUpSuccess": {failWith("HaltError")}}),
			endReport{path(start, check, success[:3], cleanFail), "FAILED", "HaltError"}, ""},
		// The bake takes checks, the state machine waiting between them;
		// a halt, an unhealthy service or an alarm during it, or a report
		// it cannot read, fails through CleanUpFailure, which rolls back.
		{base("bake takes checks", map[string][]outcome{"Bake": {baking, baking, baked}}),
			endReport{path(start, check, bakeStep, bakeStep, success), "SUCCEEDED", ""}, ""},
		{base("halt during the bake rolls back", map[string][]outcome{"Bake": {baking, failWith("HaltError")}, "CleanUpFailure": {draining, retired}}),
			endReport{path(start, check, bakeStep, []string{"Bake"}, []string{"CleanUpFailure", "CleanedUp?", "WaitForCleanUp"}, cleanFail), "FAILED", "HaltError"}, ""},
		{base("unexpected error during the bake rolls back", map[string][]outcome{"Bake": {failWith("InternalError")}}),
			endReport{path(start, check, []string{"Bake"}, cleanFail), "FAILED", "InternalError"}, ""},
		{base("no bake report", map[string][]outcome{"Bake": {echo(nil)}}),
			endReport{path(start, check, []string{"Bake", "Baked?", "BadBakeReport"}, cleanFail), "FAILED", "InternalError"}, isFalseBug},
		{base("bad health report", map[string][]outcome{"CheckHealthy": {{Result: raw(`{"healthy": "yes"}`)}}}),
			endReport{path(start, check, []string{"BadHealthReport"}, cleanFail), "FAILED", "InternalError"}, isFalseBug},
		{base("negative wait", map[string][]outcome{"CheckHealthy": {{Result: raw(`{"healthy": false, "next_step": false, "wait_seconds": -1}`)}}}),
			endReport{path(start, check, []string{"BadHealthReport"}, cleanFail), "FAILED", "InternalError"}, ""},
		// A canary: each stable step is followed by NextStep, then a wait
		// and a check; a halt or an error at a step fails through clean
		// up; a report without a boolean next_step is bad.
		{base("canary takes steps", map[string][]outcome{"CheckHealthy": {{Result: stepStable}, {Result: unhealthy}, {Result: stepStable}, {Result: healthy}}}),
			endReport{path(start, check, nextStep, check, check, nextStep, check, success), "SUCCEEDED", ""}, ""},
		{base("halt at a canary step", map[string][]outcome{"CheckHealthy": {{Result: stepStable}}, "NextStep": {failWith("HaltError")}}),
			endReport{path(start, check, []string{"NextStep"}, cleanFail), "FAILED", "HaltError"}, ""},
		{base("canary step refused", map[string][]outcome{"CheckHealthy": {{Result: stepStable}}, "NextStep": {failWith("DeployError")}}),
			endReport{path(start, check, []string{"NextStep"}, cleanFail), "FAILED", "DeployError"}, ""},
		{base("no next_step in the report", map[string][]outcome{"CheckHealthy": {{Result: raw(`{"healthy": false, "wait_seconds": 5}`)}}}),
			endReport{path(start, check, []string{"BadHealthReport"}, cleanFail), "FAILED", "InternalError"}, isFalseBug},
		// Retiring the previous groups takes steps, the state machine
		// waiting between them; a report it cannot read fails dirty (past
		// the point of no return).
		{base("retirement takes steps", map[string][]outcome{"CleanUpSuccess": {draining, draining, retired}}),
			endReport{path(start, check, success[:2], retireStep, retireStep, success[2:]), "SUCCEEDED", ""}, ""},
		{base("no retirement report", map[string][]outcome{"CleanUpSuccess": {echo(nil)}}),
			endReport{path(start, check, success[:3], []string{"Retired?", "BadRetireReport", "FailureDirty"}), "FAILED", "InternalError"}, isFalseBug},
		{base("clean-up takes steps", map[string][]outcome{"Deploy": {failWith("DeployError")}, "CleanUpFailure": {draining, retired}}),
			endReport{path(start[:6], []string{"CleanUpFailure", "CleanedUp?", "WaitForCleanUp"}, cleanFail), "FAILED", "DeployError"}, ""},
		{base("failure while retiring is dirty", map[string][]outcome{"CleanUpSuccess": {draining, failWith("CleanUpError")}}),
			endReport{path(start, check, success[:2], retireStep, []string{"CleanUpSuccess", "FailureDirty"}), "FAILED", "CleanUpError"}, ""},
		// A Lambda function that runs out of its own timeout is retried
		// like the other transient Lambda errors.
		{base("lambda timeout is retried", map[string][]outcome{"Lock": {lambdaTimedOut(), lambdaTimedOut(), echo(nil)}}),
			endReport{path(start, check, success), "SUCCEEDED", ""}, ""},
		{base("lambda timeouts exhaust the retries", map[string][]outcome{"CheckHealthy": {lambdaTimedOut()}}),
			endReport{path(start, check[:2], cleanFail), "FAILED", "Sandbox.Timedout"}, ""},
		// A Wait's SecondsPath must point to an integer: 2.5 is
		// States.Runtime, which no Catch catches (AWS Step Functions
		// Developer Guide, "Wait workflow state": SecondsPath "must be an
		// integer"; "Handling errors in Step Functions workflows",
		// States.Runtime is not retriable and always fails the execution).
		// The health report's wait_seconds must therefore be an integer.
		{base("fractional wait", map[string][]outcome{"CheckHealthy": {{Result: raw(`{"healthy": false, "next_step": false, "wait_seconds": 2.5, "services": {}}`)}}}),
			endReport{path(start, check, []string{"WaitForHealthy"}), "FAILED", "States.Runtime"}, ""},
	}
	// A release goes through the entry Choice to Validate.
	for i := range deploys {
		deploys[i].want.Path = append([]string{"Query?"}, deploys[i].want.Path...)
	}
	// A plan ({"plan": release}) goes to Plan, whose answer ends the
	// execution in Answered; a failure of Plan ends clean.
	plan := func(name string, outcomes []outcome) scenario {
		sc := base(name, map[string][]outcome{"Plan": outcomes})
		sc.Input = raw(`{"plan": {"release_id": "r1", "project_name": "p", "config_name": "c"}}`)
		return sc
	}
	answered := outcome{Result: raw(`{"project_name": "p", "config_name": "c", "proceed": true, "refusals": [], "groups": []}`)}
	query := func(name, input string, outcomes map[string][]outcome) scenario {
		sc := base(name, outcomes)
		sc.Input = raw(input)
		return sc
	}
	nextPage := outcome{Result: raw(`{"reconcile_pass": {"after": "p c", "done": false, "wait_seconds": 0, "checked": 10}}`)}
	lastPage := outcome{Result: raw(`{"reconcile_pass": {"after": "q c", "done": true, "wait_seconds": 0, "checked": 12}}`)}
	return append(append(deploys,
		ferryScenario{plan("plan answered", []outcome{answered}),
			endReport{[]string{"Query?", "Plan", "Answered"}, "SUCCEEDED", ""}, ""},
		ferryScenario{plan("plan of a bad release", []outcome{failWith("BadReleaseError")}),
			endReport{[]string{"Query?", "Plan", "FailureClean"}, "FAILED", "BadReleaseError"}, ""},
		ferryScenario{plan("plan retried", []outcome{failWith("RetryableError"), answered}),
			endReport{[]string{"Query?", "Plan", "Answered"}, "SUCCEEDED", ""}, ""},
		// A reconcile pass ({"reconcile_pass": {}}) takes Reconcile page after
		// page until it reports the pass done; a drift query is answered
		// by Drift.
		ferryScenario{query("reconcile in two pages", `{"reconcile_pass": {}}`, map[string][]outcome{"Reconcile": {nextPage, lastPage}}),
			endReport{[]string{"Query?", "Reconcile", "Reconciled?", "WaitForReconcile", "Reconcile", "Reconciled?", "Answered"}, "SUCCEEDED", ""}, ""},
		ferryScenario{query("reconcile fails clean", `{"reconcile_pass": {}}`, map[string][]outcome{"Reconcile": {failWith("DeployError")}}),
			endReport{[]string{"Query?", "Reconcile", "FailureClean"}, "FAILED", "DeployError"}, ""},
		ferryScenario{query("drift answered", `{"drift": {"project_name": "p/q", "config_name": "c"}}`, map[string][]outcome{"Drift": {answered}}),
			endReport{[]string{"Query?", "Drift", "Answered"}, "SUCCEEDED", ""}, ""},
	), promotionScenarios()...)
}

// promotionScenarios script a promotion ({"promotion": request}) of a
// two-stage pipeline with one target a stage (a Map's iterations run at
// once, so a wave of two would interleave its calls differently on each
// side): Gate's loop, the approval's callback, the wave's nested deploy
// (scripted by its state's name, as every task) and EndStage.
func promotionScenarios() []ferryScenario {
	state := func(stage int, extra string) json.RawMessage {
		return raw(`{"project_name": "p/q", "first_config": "dev", "promotion_id": "p1", "request_sha256": "00", "stage": ` +
			fmt.Sprint(stage) + `, "stages": 2` + extra + `}`)
	}
	open := func(stage int) outcome {
		return outcome{Result: state(stage, `, "gate": {"done": true, "approval": false, "wait_seconds": 0}, "targets": [0]`)}
	}
	soak := outcome{Result: state(1, `, "gate": {"done": false, "approval": false, "wait_seconds": 1800, "held": ["soak"]}`)}
	approval := outcome{Result: state(1, `, "gate": {"done": false, "approval": true, "wait_seconds": 0, "held": ["approval"]}`)}
	started := outcome{Result: raw(`{"name": "p_q_dev_p1", "release": {"release_id": "p1", "project_name": "p/q", "config_name": "dev"}}`)}
	succeeded := outcome{Result: raw(`{"ExecutionArn": "arn:x", "Status": "SUCCEEDED", "Output": {}}`)}
	moved := outcome{Result: state(1, `, "end": {"done": false}`)}
	last := outcome{Result: state(1, `, "end": {"done": true}`)}
	promotion := func(name string, o map[string][]outcome) scenario {
		outcomes := map[string][]outcome{
			"Promote": {{Result: state(0, "")}}, "Gate": {open(0), soak, approval, open(1)},
			"AwaitApproval": {{Result: raw(`{}`)}}, "StartTarget": {started}, "DeployTarget": {succeeded},
			"EndStage": {moved, last},
		}
		maps.Copy(outcomes, o)
		return scenario{Name: name, Input: raw(`{"promotion": {"promotion_id": "p1"}}`), Outcomes: outcomes}
	}
	wave := []string{"Wave", "StartTarget", "DeployTarget", "EndStage", "Promoted?"}
	first := append([]string{"Query?", "Promote", "Gate", "Gated?"}, wave...)
	gate := []string{"Gate", "Gated?"}
	return []ferryScenario{
		{promotion("promotion through both stages", nil),
			endReport{slices.Concat(first, gate, []string{"WaitForGate"}, gate, []string{"AwaitApproval"}, gate, wave, []string{"Success"}), "SUCCEEDED", ""}, mapStartTime},
		// The same, with no soak before the second stage: no time passes,
		// so both sides agree on every payload.
		{promotion("promotion with an approval", map[string][]outcome{"Gate": {open(0), approval, open(1)}}),
			endReport{slices.Concat(first, gate, []string{"AwaitApproval"}, gate, wave, []string{"Success"}), "SUCCEEDED", ""}, ""},
		{promotion("approval wait times out", map[string][]outcome{"Gate": {open(0), approval, approval, open(1)},
			"AwaitApproval": {{Error: "States.Timeout"}, {Result: raw(`{}`)}}}),
			endReport{slices.Concat(first, gate, []string{"AwaitApproval"}, gate, []string{"AwaitApproval"}, gate, wave, []string{"Success"}), "SUCCEEDED", ""}, ""},
		{promotion("halted while waiting", map[string][]outcome{"Gate": {open(0), approval, failWith("HaltError")},
			"AwaitApproval": {{Error: "ferry.Halted", Cause: "halted"}}}),
			endReport{slices.Concat(first, gate, []string{"AwaitApproval", "Gate", "FailureClean"}), "FAILED", "HaltError"}, ""},
		{promotion("a target's deploy fails", map[string][]outcome{"DeployTarget": {{Error: "States.TaskFailed", Cause: `{"Status": "FAILED"}`}},
			"EndStage": {failWith("DeployError")}}),
			endReport{[]string{"Query?", "Promote", "Gate", "Gated?", "Wave", "StartTarget", "DeployTarget", "TargetFailed", "EndStage", "FailureClean"}, "FAILED", "DeployError"}, ""},
		{promotion("a target's deploy ends dirty", map[string][]outcome{"EndStage": {failWith("CleanUpError")}}),
			endReport{slices.Concat(first[:len(first)-1], []string{"FailureDirty"}), "FAILED", "CleanUpError"}, ""},
		{promotion("bad request", map[string][]outcome{"Promote": {failWith("BadReleaseError")}}),
			endReport{[]string{"Query?", "Promote", "FailureClean"}, "FAILED", "BadReleaseError"}, ""},
		{promotion("no usable gate report", map[string][]outcome{"Gate": {{Result: state(0, `, "gate": {"done": "yes"}`)}}}),
			endReport{[]string{"Query?", "Promote", "Gate", "Gated?", "BadGateReport", "FailureClean"}, "FAILED", "InternalError"}, isFalseBug},
	}
}

// crossExecutionName names every cross-check execution on both sides.
const crossExecutionName = "crosscheck"

// runOurs runs a scenario on this package's interpreter.
func runOurs(t *testing.T, m *Machine, sc scenario) crossReport {
	t.Helper()
	c := clock.NewVirtual(t0)
	inv := newScripted(sc, c)
	x, err := Start(context.Background(), m, RunOptions{Input: sc.Input, Name: crossExecutionName, Clock: c, Invoker: inv})
	require.NoError(t, err)
	inv.started(x)
	<-x.Done()
	d := x.Describe()
	r := crossReport{Path: x.Path(), Status: string(d.Status), Error: d.Error, Cause: d.Cause, Attempts: map[string]int{}}
	if d.Status == StatusSucceeded {
		r.Output = decode(t, d.Output)
	}
	for _, call := range inv.invocations() {
		r.Calls = append(r.Calls, crossCall{call.State, decode(t, call.Payload), call.At.Sub(t0).Milliseconds()})
		r.Attempts[call.State]++
	}
	for _, ev := range x.History() {
		if ev.StateExited != nil {
			r.Exits = append(r.Exits, crossExit{ev.StateExited.Name, decode(t, ev.StateExited.Output)})
		}
	}
	return r.normalize()
}

func TestFerryDefinitionPaths(t *testing.T) {
	m, err := Parse(ferryDefinition(t))
	require.NoError(t, err)
	for _, tt := range ferryScenarios() {
		t.Run(tt.sc.Name, func(t *testing.T) {
			assert.Equal(t, tt.want, runOurs(t, m, tt.sc).end())
		})
	}
}

// TestCrossCheck runs ferry's definition and the package's own test
// machines on aws-local-stepfunctions (testdata/crosscheck.mjs) and on this
// interpreter with the same scripted task outcomes: both must show the same
// execution (crossReport: path, every payload and state output, attempts,
// the end). It needs node and `make tools`.
func TestCrossCheck(t *testing.T) {
	entry, err := filepath.Abs(filepath.Join("..", "..", "..", "infra", "node_modules", "aws-local-stepfunctions", "build", "main.node.esm.js"))
	require.NoError(t, err)
	if _, err := os.Stat(entry); err != nil {
		t.Fatalf("aws-local-stepfunctions is not installed (%s): run make tools", entry)
	}
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed: the cross-check needs Node.js 20 or later (make tools installs its packages)")
	}

	var scs []scenario
	var want []endReport
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
			assert.Equal(t, want[i], ours.end(), "this interpreter")
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

	// Errors the interpreter raises itself, on a small machine that reaches
	// each: its Choice picks the case named by the input.
	errs := []byte(`{"StartAt": "Case?", "States": {
	  "Case?": {"Type": "Choice", "Choices": [
	      {"Variable": "$.case", "StringEquals": "InputPath", "Next": "InputPath"},
	      {"Variable": "$.case", "StringEquals": "OutputPath", "Next": "OutputPath"},
	      {"Variable": "$.case", "StringEquals": "Parameters", "Next": "Parameters"},
	      {"Variable": "$.case", "StringEquals": "ResultPath", "Next": "MakeString"},
	      {"Variable": "$.case", "StringEquals": "Timeout", "Next": "Timeout"}]},
	  "InputPath": {"Type": "Task", "Resource": "` + lambdaARN + `", "InputPath": "$.missing", ` + retryCatchAll + `, "Next": "Done"},
	  "OutputPath": {"Type": "Task", "Resource": "` + lambdaARN + `", "OutputPath": "$.missing", ` + retryCatchAll + `, "Next": "Done"},
	  "Parameters": {"Type": "Task", "Resource": "` + lambdaARN + `", "Parameters": {"a.$": "$.missing"}, ` + retryCatchAll + `, "Next": "Done"},
	  "MakeString": {"Type": "Pass", "Result": "not an object", "ResultPath": "$", "Next": "ResultPath"},
	  "ResultPath": {"Type": "Task", "Resource": "` + lambdaARN + `", "ResultPath": "$.result",
	           "Retry": [{"ErrorEquals": ["States.ALL"], "IntervalSeconds": 1, "MaxAttempts": 1}],
	           "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Caught"}], "Next": "Done"},
	  "Timeout": {"Type": "Task", "Resource": "` + lambdaARN + `", "TimeoutSeconds": 1,
	           "Retry": [{"ErrorEquals": ["Sandbox.Timedout"], "IntervalSeconds": 1, "MaxAttempts": 1}],
	           "Catch": [{"ErrorEquals": ["States.TaskFailed"], "ResultPath": "$.error", "Next": "CaughtTaskFailed"},
	                     {"ErrorEquals": ["States.Timeout"], "ResultPath": "$.error", "Next": "CaughtTimeout"}],
	           "Next": "Done"},
	  "Caught": {"Type": "Succeed"},
	  "CaughtTaskFailed": {"Type": "Succeed"},
	  "CaughtTimeout": {"Type": "Succeed"},
	  "Done": {"Type": "Succeed"}}}`)
	ok := []outcome{{Result: raw(`{"r": 1}`)}}
	errScs := []struct {
		sc       scenario
		want     endReport
		diverges string
	}{
		// States.Runtime: "attempting to apply InputPath or OutputPath on
		// a null JSON payload" (States Language specification, "Errors";
		// AWS Step Functions Developer Guide, "Handling errors in Step
		// Functions workflows": not retriable, not caught by States.ALL).
		{scenario{Name: "InputPath matches nothing", Input: raw(`{"case": "InputPath"}`), Outcomes: map[string][]outcome{"InputPath": ok}},
			endReport{[]string{"Case?", "InputPath"}, "FAILED", ErrorRuntime}, ""},
		{scenario{Name: "OutputPath matches nothing", Input: raw(`{"case": "OutputPath"}`), Outcomes: map[string][]outcome{"OutputPath": ok}},
			endReport{[]string{"Case?", "OutputPath"}, "FAILED", ErrorRuntime}, ""},
		// A Parameters path that matches nothing is
		// States.ParameterPathFailure (States Language specification,
		// "Errors"), which States.ALL catches.
		{scenario{Name: "Parameters path matches nothing", Input: raw(`{"case": "Parameters"}`), Outcomes: map[string][]outcome{"Parameters": ok}},
			endReport{[]string{"Case?", "Parameters", "Caught"}, "SUCCEEDED", ""}, parameterPathRuntime},
		// A ResultPath into a value that is not an object is
		// States.ResultPathMatchFailure, which States.ALL retries and
		// catches.
		{scenario{Name: "ResultPath into a string", Input: raw(`{"case": "ResultPath"}`), Outcomes: map[string][]outcome{"ResultPath": ok}},
			endReport{[]string{"Case?", "MakeString", "ResultPath", "Caught"}, "SUCCEEDED", ""}, ""},
		// The Lambda function's own timeout is a task error
		// (Sandbox.Timedout, matched by States.TaskFailed); the state's
		// TimeoutSeconds passing is States.Timeout, which
		// States.TaskFailed does not match (AWS Step Functions Developer
		// Guide, "Handling errors in Step Functions workflows":
		// States.TaskFailed "matches any known error name except for
		// States.Timeout").
		{scenario{Name: "the function times out", Input: raw(`{"case": "Timeout"}`), Outcomes: map[string][]outcome{"Timeout": {lambdaTimedOut()}}},
			endReport{[]string{"Case?", "Timeout", "CaughtTaskFailed"}, "SUCCEEDED", ""}, ""},
		{scenario{Name: "the state times out", Input: raw(`{"case": "Timeout"}`), Outcomes: map[string][]outcome{"Timeout": {{Hang: true}}}},
			endReport{[]string{"Case?", "Timeout", "CaughtTimeout"}, "SUCCEEDED", ""}, ""},
	}
	var errScenarios []scenario
	for _, tt := range errScs {
		errScenarios = append(errScenarios, tt.sc)
	}
	gotErrs := runNode(t, nodeBin, entry, errs, errScenarios)
	require.Len(t, gotErrs, len(errScs))
	em, err := Parse(errs)
	require.NoError(t, err)
	for i, tt := range errScs {
		t.Run("errors/"+tt.sc.Name, func(t *testing.T) {
			ours := runOurs(t, em, tt.sc)
			assert.Equal(t, tt.want, ours.end(), "this interpreter")
			if tt.diverges != "" {
				assert.NotEqual(t, ours, gotErrs[i], "aws-local-stepfunctions no longer diverges (%s): remove the note", tt.diverges)
				return
			}
			assert.Equal(t, ours, gotErrs[i], "aws-local-stepfunctions")
		})
	}
}

// retryCatchAll retries and catches every error, for the states of
// TestCrossCheck's errors machine.
const retryCatchAll = `"Retry": [{"ErrorEquals": ["States.ALL"], "IntervalSeconds": 1, "MaxAttempts": 2}],
	  "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": "Caught"}]`

// runNode runs testdata/crosscheck.mjs on a definition and scenarios, with
// the context runOurs gives its executions, and returns its reports
// normalized.
func runNode(t *testing.T, nodeBin, entry string, def []byte, scs []scenario) []crossReport {
	t.Helper()
	dir := t.TempDir()
	defFile := filepath.Join(dir, "definition.json")
	runFile := filepath.Join(dir, "run.json")
	require.NoError(t, os.WriteFile(defFile, def, 0o644))
	type execution struct {
		ID   string `json:"Id"`
		Name string `json:"Name"`
	}
	type context struct {
		Execution    execution
		StateMachine execution
		StartTime    string
	}
	data, err := json.Marshal(struct {
		Context   context    `json:"context"`
		Scenarios []scenario `json:"scenarios"`
	}{
		Context: context{
			execution{ExecutionARN(DefaultStateMachineARN, crossExecutionName), crossExecutionName},
			execution{DefaultStateMachineARN, DefaultStateMachineARN[strings.LastIndex(DefaultStateMachineARN, ":")+1:]},
			formatTime(t0),
		},
		Scenarios: scs,
	})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(runFile, data, 0o644))
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(nodeBin, filepath.Join("testdata", "crosscheck.mjs"), entry, defFile, runFile)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "node crosscheck.mjs: %s", stderr.String())
	var reports []crossReport
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &reports), "node output: %s", stdout.String())
	for i := range reports {
		reports[i] = reports[i].normalize()
	}
	return reports
}
