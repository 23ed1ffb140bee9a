package asl

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/clock"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// taskDef is a Task state A (with fields) followed by Done, and the
// catchers' targets Recovery and EndMachine when fields name them.
func taskDef(fields string) string {
	states := `"A": {"Type": "Task", "Resource": "` + lambdaARN + `", "Next": "Done", ` + fields + `}, "Done": {"Type": "Succeed"}`
	for _, target := range []string{"Recovery", "EndMachine"} {
		if strings.Contains(fields, `"`+target+`"`) {
			states += `, "` + target + `": {"Type": "Pass", "End": true}`
		}
	}
	return def(states)
}

// retryTimes runs state A of def with the outcomes and returns the virtual
// offsets from t0 of every invocation.
func retryTimes(t *testing.T, d string, outcomes []outcome) ([]time.Duration, *Execution) {
	t.Helper()
	c := clock.NewVirtual(t0)
	inv := newScripted(scenario{Outcomes: map[string][]outcome{"A": outcomes}}, c)
	x := runDef(t, d, `{}`, inv, c)
	var at []time.Duration
	for i, call := range inv.invocations() {
		at = append(at, call.At.Sub(t0))
		assert.Equal(t, i, call.Retry, "RetryCount of invocation %d", i)
	}
	return at, x
}

func TestRetryTimes(t *testing.T) {
	fail := func(name string) outcome { return outcome{Error: name, Cause: "boom"} }
	ok := outcome{Result: json.RawMessage(`{"ok": true}`)}
	s := time.Second
	tests := []struct {
		name, retry string
		outcomes    []outcome
		want        []time.Duration
		status      Status
		errName     string
	}{
		{"spec: 3s then 4.5s", `[{"ErrorEquals": ["States.Timeout", "E"], "IntervalSeconds": 3, "MaxAttempts": 2, "BackoffRate": 1.5}]`,
			[]outcome{fail("E")}, []time.Duration{0, 3 * s, 7500 * time.Millisecond}, StatusFailed, "E"},
		{"defaults: 1s, 2s, 4s", `[{"ErrorEquals": ["E"]}]`,
			[]outcome{fail("E")}, []time.Duration{0, s, 3 * s, 7 * s}, StatusFailed, "E"},
		{"MaxDelaySeconds caps the backoff", `[{"ErrorEquals": ["E"], "IntervalSeconds": 2, "MaxAttempts": 6, "BackoffRate": 2, "MaxDelaySeconds": 30}]`,
			[]outcome{fail("E")}, []time.Duration{0, 2 * s, 6 * s, 14 * s, 30 * s, 60 * s, 90 * s}, StatusFailed, "E"},
		{"MaxAttempts 0 never retries", `[{"ErrorEquals": ["E"], "MaxAttempts": 0}, {"ErrorEquals": ["States.ALL"]}]`,
			[]outcome{fail("E")}, []time.Duration{0}, StatusFailed, "E"},
		{"success after retries", `[{"ErrorEquals": ["E"], "IntervalSeconds": 5}]`,
			[]outcome{fail("E"), fail("E"), ok}, []time.Duration{0, 5 * s, 15 * s}, StatusSucceeded, ""},
		{"spec: retriers count separately", `[{"ErrorEquals": ["ErrorA", "ErrorB"], "IntervalSeconds": 1, "BackoffRate": 2, "MaxAttempts": 2}, {"ErrorEquals": ["ErrorC"], "IntervalSeconds": 5}]`,
			[]outcome{fail("ErrorA"), fail("ErrorC"), fail("ErrorB"), fail("ErrorC"), fail("ErrorA")},
			[]time.Duration{0, s, 6 * s, 8 * s, 18 * s}, StatusFailed, "ErrorA"},
		{"unmatched error is not retried", `[{"ErrorEquals": ["E"]}]`,
			[]outcome{fail("Other")}, []time.Duration{0}, StatusFailed, "Other"},
		{"TaskFailed matches task errors", `[{"ErrorEquals": ["States.TaskFailed"], "MaxAttempts": 1}]`,
			[]outcome{fail("E")}, []time.Duration{0, s}, StatusFailed, "E"},
		{"ALL matches any task error", `[{"ErrorEquals": ["States.ALL"], "MaxAttempts": 1}]`,
			[]outcome{fail("Lambda.ServiceException")}, []time.Duration{0, s}, StatusFailed, "Lambda.ServiceException"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at, x := retryTimes(t, taskDef(`"Retry": `+tt.retry), tt.outcomes)
			assert.Equal(t, tt.want, at)
			d := x.Describe()
			assert.Equal(t, tt.status, d.Status)
			assert.Equal(t, tt.errName, d.Error)
		})
	}
}

func TestTaskTimeout(t *testing.T) {
	// The task takes 40 virtual seconds; TimeoutSeconds is 30.
	slow := outcome{Result: json.RawMessage(`{}`), Advance: 40 * time.Second}
	tests := []struct {
		name, retry string
		invocations int
		status      Status
		errName     string
	}{
		{"not retried by TaskFailed", `"Retry": [{"ErrorEquals": ["States.TaskFailed"]}]`, 1, StatusFailed, ErrorTimeout},
		{"retried by Timeout", `"Retry": [{"ErrorEquals": ["States.Timeout"], "MaxAttempts": 1}]`, 2, StatusFailed, ErrorTimeout},
		{"caught by ALL", `"Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Recovery"}]`, 1, StatusSucceeded, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := clock.NewVirtual(t0)
			inv := newScripted(scenario{Outcomes: map[string][]outcome{"A": {slow}}}, c)
			x := runDef(t, taskDef(`"TimeoutSeconds": 30, `+tt.retry), `{}`, inv, c)
			assert.Len(t, inv.invocations(), tt.invocations)
			d := x.Describe()
			assert.Equal(t, tt.status, d.Status)
			assert.Equal(t, tt.errName, d.Error)
			// AWS records the timeout as error States.Timeout with no cause,
			// in LambdaFunctionTimedOut and in ExecutionFailed: localstack's
			// snapshot of test_fixed_timeout_lambda, recorded against AWS
			// (localstack/localstack,
			// tests/aws/services/stepfunctions/v2/timeouts/test_timeouts.snapshot.json).
			assert.Empty(t, d.Cause)
			var timedOut []ErrorDetails
			for _, ev := range x.History() {
				if ev.LambdaFunctionTimedOut != nil {
					timedOut = append(timedOut, *ev.LambdaFunctionTimedOut)
				}
			}
			require.NotEmpty(t, timedOut)
			for _, d := range timedOut {
				assert.Equal(t, ErrorDetails{Error: ErrorTimeout}, d)
			}
		})
	}
}

func TestCatch(t *testing.T) {
	catch := `"Catch": [
		{"ErrorEquals": ["java.lang.Exception"], "ResultPath": "$.error-info", "Next": "Recovery"},
		{"ErrorEquals": ["States.ALL"], "Next": "EndMachine"}]`
	tests := []struct {
		name, fields, errName, path, output string
		status                              Status
	}{
		{"named catcher with ResultPath", catch, "java.lang.Exception", "Recovery",
			`{"in": 1, "error-info": {"Error": "java.lang.Exception", "Cause": "boom"}}`, StatusSucceeded},
		{"States.ALL with default ResultPath", catch, "Other", "EndMachine",
			`{"Error": "Other", "Cause": "boom"}`, StatusSucceeded},
		{"ResultPath null keeps the input", `"Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": null, "Next": "Recovery"}]`, "E", "Recovery",
			`{"in": 1}`, StatusSucceeded},
		{"retry first, then catch", `"Retry": [{"ErrorEquals": ["E"], "MaxAttempts": 2}], ` + catch, "E", "EndMachine",
			`{"Error": "E", "Cause": "boom"}`, StatusSucceeded},
		{"uncaught", `"Catch": [{"ErrorEquals": ["X"], "Next": "Recovery"}]`, "E", "", "", StatusFailed},
		{"DataLimitExceeded is not caught by ALL", catch, ErrorDataLimitExceeded, "", "", StatusFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := clock.NewVirtual(t0)
			inv := newScripted(scenario{Outcomes: map[string][]outcome{"A": {{Error: tt.errName, Cause: "boom"}}}}, c)
			x := runDef(t, taskDef(tt.fields), `{"in": 1}`, inv, c)
			d := x.Describe()
			require.Equal(t, tt.status, d.Status)
			if tt.status == StatusFailed {
				assert.Equal(t, tt.errName, d.Error)
				assert.Equal(t, "boom", d.Cause)
				assert.Equal(t, []string{"A"}, x.Path())
				return
			}
			assert.Equal(t, []string{"A", tt.path}, x.Path())
			assert.JSONEq(t, tt.output, d.Output)
		})
	}
}

func TestRuntimeErrorsAreNotCaught(t *testing.T) {
	all := `"Retry": [{"ErrorEquals": ["States.ALL"]}], "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Recovery"}]`
	tests := []struct {
		name, fields, result, errName string
	}{
		{"InputPath matches nothing", `"InputPath": "$.missing", ` + all, `{}`, ErrorRuntime},
		{"OutputPath matches nothing", `"OutputPath": "$.missing", ` + all, `{}`, ErrorRuntime},
		{"result is not JSON", all, `{nope`, ErrorRuntime},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			inv := InvokerFunc(func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
				calls++
				return json.RawMessage(tt.result), nil
			})
			x := runDef(t, taskDef(tt.fields), `{"in": 1}`, inv, nil)
			d := x.Describe()
			assert.Equal(t, StatusFailed, d.Status)
			assert.Equal(t, tt.errName, d.Error)
			assert.LessOrEqual(t, calls, 1)
		})
	}
}

func TestPathFailuresAreCaught(t *testing.T) {
	tests := []struct {
		name, fields, input, errName string
	}{
		{"Parameters path", `"Parameters": {"a.$": "$.missing"}`, `{"in": 1}`, ErrorParameterPathFailure},
		{"ResultSelector path", `"ResultSelector": {"a.$": "$.missing"}`, `{"in": 1}`, ErrorParameterPathFailure},
		{"ResultPath into a number", `"ResultPath": "$.in.x"`, `{"in": 1}`, ErrorResultPathMatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := runDef(t, taskDef(tt.fields+`, "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": "Recovery"}]`),
				tt.input, returning(`{"r": 1}`, nil), nil)
			d := x.Describe()
			require.Equal(t, StatusSucceeded, d.Status, d.Cause)
			var out struct{ Error struct{ Error, Cause string } }
			require.NoError(t, json.Unmarshal([]byte(d.Output), &out))
			assert.Equal(t, tt.errName, out.Error.Error)
			assert.NotEmpty(t, out.Error.Cause)
		})
	}
}

func TestFailState(t *testing.T) {
	tests := []struct {
		name, fields, input, errName, cause string
	}{
		{"Error and Cause", `"Error": "ErrorA", "Cause": "Kaiju attack"`, `{}`, "ErrorA", "Kaiju attack"},
		{"neither", ``, `{}`, "", ""},
		{"ErrorPath and CausePath", `"ErrorPath": "$.error.Error", "CausePath": "$.error.Cause"`,
			`{"error": {"Error": "LockExistsError", "Cause": "held by r0"}}`, "LockExistsError", "held by r0"},
		{"context path", `"Error": "E", "CausePath": "$$.Execution.Name"`, `{}`, "E", "test"},
		{"ErrorPath missing", `"ErrorPath": "$.error.Error"`, `{}`, ErrorRuntime, "Fail state 'A': ErrorPath '$.error.Error' must point to a string, found nothing"},
		{"CausePath not a string", `"CausePath": "$.c"`, `{"c": 3}`, ErrorRuntime, "Fail state 'A': CausePath '$.c' must point to a string, found 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sep := ""
			if tt.fields != "" {
				sep = ", "
			}
			x := runDef(t, def(`"A": {"Type": "Fail"`+sep+tt.fields+`}`), tt.input, nil, nil)
			d := x.Describe()
			assert.Equal(t, StatusFailed, d.Status)
			assert.Equal(t, tt.errName, d.Error)
			assert.Equal(t, tt.cause, d.Cause)
			h := x.History()
			require.Len(t, h, 3)
			assert.Equal(t, EventFailStateEntered, h[1].Type)
			assert.Equal(t, EventExecutionFailed, h[2].Type)
		})
	}
}

func TestMachineTimeout(t *testing.T) {
	c := clock.NewVirtual(t0)
	x := runDef(t, `{"StartAt": "W", "TimeoutSeconds": 60, "States": {"W": {"Type": "Wait", "Seconds": 600, "End": true}}}`, `{}`, nil, c)
	d := x.Describe()
	assert.Equal(t, StatusTimedOut, d.Status)
	assert.Equal(t, ErrorTimeout, d.Error)
	assert.Equal(t, t0.Add(time.Minute), d.StopDate)
}

// blocking is an Invoker that blocks until its context ends.
type blocking struct{ started chan struct{} }

func (b blocking) Invoke(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
	close(b.started)
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestStop(t *testing.T) {
	m, err := Parse([]byte(taskDef(`"Retry": [{"ErrorEquals": ["States.ALL"]}]`)))
	require.NoError(t, err)
	inv := blocking{started: make(chan struct{})}
	var seen []EventType
	x, err := Start(context.Background(), m, RunOptions{Name: "stop-me", Clock: clock.NewVirtual(t0), Invoker: inv,
		Observer: func(e Event) { seen = append(seen, e.Type) }})
	require.NoError(t, err)
	<-inv.started
	assert.Equal(t, StatusRunning, x.Describe().Status)
	assert.True(t, x.Stop("Halted", "by the operator"))
	require.NoError(t, x.Wait(context.Background()))
	assert.False(t, x.Stop("again", ""), "a second Stop changes nothing")
	d := x.Describe()
	assert.Equal(t, StatusAborted, d.Status)
	assert.Equal(t, "Halted", d.Error)
	assert.Equal(t, "by the operator", d.Cause)
	types := eventTypes(x.History())
	assert.Equal(t, []EventType{EventExecutionStarted, EventTaskStateEntered, EventLambdaFunctionScheduled,
		EventLambdaFunctionStarted, EventTaskStateAborted, EventExecutionAborted}, types)
	assert.Equal(t, types, seen, "the observer sees every event in order")
}

func TestContextEndAborts(t *testing.T) {
	m, err := Parse([]byte(taskDef(`"Retry": [{"ErrorEquals": ["States.ALL"]}]`)))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	inv := blocking{started: make(chan struct{})}
	x, err := Start(ctx, m, RunOptions{Name: "n", Clock: clock.NewVirtual(t0), Invoker: inv})
	require.NoError(t, err)
	<-inv.started
	cancel()
	require.NoError(t, x.Wait(context.Background()))
	assert.Equal(t, StatusAborted, x.Describe().Status)
}

func TestStartErrors(t *testing.T) {
	m, err := Parse([]byte(taskDef(`"TimeoutSeconds": 5`)))
	require.NoError(t, err)
	inv := returning(`{}`, nil)
	tests := []struct {
		name string
		opts RunOptions
		want string
	}{
		{"no name", RunOptions{Invoker: inv}, "must have 1 to 80 characters"},
		{"bad input", RunOptions{Name: "n", Input: json.RawMessage(`{`), Invoker: inv}, "not valid JSON"},
		{"trailing input", RunOptions{Name: "n", Input: json.RawMessage(`{} {}`), Invoker: inv}, "trailing data"},
		{"huge input", RunOptions{Name: "n", Input: json.RawMessage(`"` + string(make([]byte, 300<<10)) + `"`), Invoker: inv}, "over the limit"},
		{"no invoker", RunOptions{Name: "n"}, `Invoker is required: state "A" is a Task`},
		{"clock without waiter", RunOptions{Name: "n", Invoker: inv, Clock: otherClock{}}, "Waiter is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Start(context.Background(), m, tt.opts)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

type otherClock struct{}

func (otherClock) Now() time.Time { return t0 }

func TestUnnamedTaskError(t *testing.T) {
	inv := InvokerFunc(func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return nil, errors.New("plain failure")
	})
	x := runDef(t, taskDef(`"Retry": [{"ErrorEquals": ["X"]}]`), `{}`, inv, nil)
	d := x.Describe()
	assert.Equal(t, ErrorLambdaUnknown, d.Error)
	assert.Equal(t, "plain failure", d.Cause)
}

func TestServiceIntegrationEvents(t *testing.T) {
	d := def(`"A": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Parameters": {"FunctionName": "f", "Payload.$": "$"}, "End": true}`)
	var got string
	x := runDef(t, d, `{"a": 1}`, returning(`{"Payload": 1}`, &got), nil)
	assert.JSONEq(t, `{"FunctionName": "f", "Payload": {"a": 1}}`, got)
	h := x.History()
	assert.Equal(t, []EventType{EventExecutionStarted, EventTaskStateEntered, EventTaskScheduled, EventTaskStarted,
		EventTaskSucceeded, EventTaskStateExited, EventExecutionSucceeded}, eventTypes(h))
	assert.Equal(t, TaskScheduledDetails{ResourceType: "lambda", Resource: "invoke", Region: "us-east-1",
		Parameters: `{"FunctionName":"f","Payload":{"a":1}}`}, *h[2].TaskScheduled)
}

func eventTypes(h []Event) []EventType {
	out := make([]EventType, len(h))
	for i, e := range h {
		out[i] = e.Type
	}
	return out
}

// TestHistoryGolden runs a machine through every kind of state, a retry and
// a catch, and compares its history, as the Step Functions JSON API renders
// it, with testdata/history.golden.json.
func TestHistoryGolden(t *testing.T) {
	d := `{"StartAt": "Init", "States": {
	  "Init": {"Type": "Pass", "Result": {"wait": 2}, "ResultPath": "$.cfg", "Next": "Work"},
	  "Work": {"Type": "Task", "Resource": "` + lambdaARN + `", "TimeoutSeconds": 30,
	           "Parameters": {"task": "Work", "input.$": "$", "execution.$": "$$.Execution.Id"},
	           "ResultPath": "$.result",
	           "Retry": [{"ErrorEquals": ["RetryableError"], "IntervalSeconds": 2}],
	           "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": "Failed"}],
	           "Next": "Done?"},
	  "Done?": {"Type": "Choice", "Choices": [{"Variable": "$.result.done", "BooleanEquals": true, "Next": "Finish"}], "Default": "Pause"},
	  "Pause": {"Type": "Wait", "SecondsPath": "$.cfg.wait", "Next": "Work"},
	  "Finish": {"Type": "Succeed", "OutputPath": "$.result"},
	  "Failed": {"Type": "Fail", "ErrorPath": "$.error.Error", "CausePath": "$.error.Cause"}}}`
	c := clock.NewVirtual(t0)
	inv := newScripted(scenario{Outcomes: map[string][]outcome{"Work": {
		{Error: "RetryableError", Cause: "throttled"},
		{Result: json.RawMessage(`{"done": false}`)},
		{Result: json.RawMessage(`{"done": true}`)},
	}}}, c)
	x := runDef(t, d, `{"release": "r1"}`, inv, c)
	require.Equal(t, StatusSucceeded, x.Describe().Status)
	assert.Equal(t, []string{"Init", "Work", "Done?", "Pause", "Work", "Done?", "Finish"}, x.Path())

	got, err := json.MarshalIndent(x.History(), "", "  ")
	require.NoError(t, err)
	got = append(got, '\n')
	golden := filepath.Join("testdata", "history.golden.json")
	if *update {
		require.NoError(t, os.WriteFile(golden, got, 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run go test ./internal/local/asl -run TestHistoryGolden -update")
	assert.Equal(t, string(want), string(got))

	// Every event converts to the SDK's type with the same id, type and
	// details.
	for _, e := range ToSFNHistory(x.History()) {
		assert.NotNil(t, e.Timestamp)
		assert.NotEmpty(t, e.Type)
	}
	sfn := x.History()[len(x.History())-1].ToSFN()
	require.NotNil(t, sfn.ExecutionSucceededEventDetails)
	assert.JSONEq(t, `{"done": true}`, *sfn.ExecutionSucceededEventDetails.Output)
}

func TestToSFN(t *testing.T) {
	ts := t0.Add(1500 * time.Millisecond)
	tests := []struct {
		name  string
		event Event
		check func(t *testing.T, e Event)
	}{
		{"state entered", Event{ID: 2, PreviousEventID: 1, Timestamp: ts, Type: EventTaskStateEntered,
			StateEntered: &StateEnteredDetails{Name: "Lock", Input: `{}`}}, func(t *testing.T, e Event) {
			h := e.ToSFN()
			assert.Equal(t, int64(2), h.Id)
			assert.Equal(t, int64(1), h.PreviousEventId)
			assert.Equal(t, ts, *h.Timestamp)
			assert.Equal(t, "TaskStateEntered", string(h.Type))
			assert.Equal(t, "Lock", *h.StateEnteredEventDetails.Name)
			assert.Equal(t, `{}`, *h.StateEnteredEventDetails.Input)
		}},
		{"lambda failed", Event{Type: EventLambdaFunctionFailed, LambdaFunctionFailed: &ErrorDetails{Error: "LockExistsError", Cause: "held"}},
			func(t *testing.T, e Event) {
				h := e.ToSFN()
				assert.Equal(t, "LockExistsError", *h.LambdaFunctionFailedEventDetails.Error)
				assert.Equal(t, "held", *h.LambdaFunctionFailedEventDetails.Cause)
			}},
		{"execution failed without cause", Event{Type: EventExecutionFailed, ExecutionFailed: &ErrorDetails{Error: "E"}},
			func(t *testing.T, e Event) {
				h := e.ToSFN()
				assert.Equal(t, "E", *h.ExecutionFailedEventDetails.Error)
				assert.Nil(t, h.ExecutionFailedEventDetails.Cause)
			}},
		{"task failed", Event{Type: EventTaskFailed, TaskFailed: &TaskErrorDetails{ResourceType: "lambda", Resource: "invoke", Error: "E", Cause: "c"}},
			func(t *testing.T, e Event) {
				h := e.ToSFN()
				assert.Equal(t, "lambda", *h.TaskFailedEventDetails.ResourceType)
				assert.Equal(t, "E", *h.TaskFailedEventDetails.Error)
			}},
		{"wire JSON", Event{ID: 1, Timestamp: ts, Type: EventExecutionAborted, ExecutionAborted: &ErrorDetails{Cause: "stopped"}},
			func(t *testing.T, e Event) {
				b, err := json.Marshal(e)
				require.NoError(t, err)
				assert.JSONEq(t, `{"id": 1, "previousEventId": 0, "timestamp": 1773450001.5, "type": "ExecutionAborted",
					"executionAbortedEventDetails": {"cause": "stopped"}}`, string(b))
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.check(t, tt.event) })
	}
}

// TestInputVerbatim: an execution's input is reported exactly as it was
// given to StartExecution, in DescribeExecution's input and in the
// ExecutionStarted event's input (API reference: DescribeExecution's input
// is "The string that contains the JSON input data of the execution",
// https://docs.aws.amazon.com/step-functions/latest/apireference/API_DescribeExecution.html;
// ExecutionStartedEventDetails' input "The JSON data input to the
// execution",
// https://docs.aws.amazon.com/step-functions/latest/apireference/API_ExecutionStartedEventDetails.html):
// key order, spacing, escapes and number spellings are kept. The states
// still see the value: the first state's input is its JSON.
func TestInputVerbatim(t *testing.T) {
	def := `{"StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}}`
	tests := []struct {
		name      string
		input     string
		wantInput string
		wantState string
	}{
		{"keys out of order, spaced", `{"b": 1, "a": [1, 2]}`, `{"b": 1, "a": [1, 2]}`, `{"a":[1,2],"b":1}`},
		{"indented", "{\n  \"a\": true\n}\n", "{\n  \"a\": true\n}\n", `{"a":true}`},
		{"escapes", `{"s":"\u003c\/x\u003e"}`, `{"s":"\u003c\/x\u003e"}`, `{"s":"</x>"}`},
		{"number spellings", `{"n":1.0,"m":1e2}`, `{"n":1.0,"m":1e2}`, `{"m":1e2,"n":1.0}`},
		{"not an object", `[1, "two"]`, `[1, "two"]`, `[1,"two"]`},
		{"empty is {}", ``, `{}`, `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := runDef(t, def, tt.input, nil, nil)
			require.Equal(t, StatusSucceeded, x.Describe().Status)
			assert.Equal(t, tt.wantInput, x.Describe().Input)
			h := x.History()
			require.Equal(t, EventExecutionStarted, h[0].Type)
			assert.Equal(t, tt.wantInput, h[0].ExecutionStarted.Input)
			assert.Equal(t, tt.wantInput, *h[0].ToSFN().ExecutionStartedEventDetails.Input)
			require.Equal(t, EventPassStateEntered, h[1].Type)
			assert.Equal(t, tt.wantState, h[1].StateEntered.Input)
		})
	}
}

// recordingAwaiter is an Awaiter on a virtual clock that records how each
// wait was asked for: Wait's durations, Await's limits.
type recordingAwaiter struct {
	VirtualWaiter
	waits, awaits []time.Duration
}

func (w *recordingAwaiter) Wait(ctx context.Context, d time.Duration) error {
	w.waits = append(w.waits, d)
	return w.VirtualWaiter.Wait(ctx, d)
}

func (w *recordingAwaiter) Await(limit time.Duration) Await {
	w.awaits = append(w.awaits, limit)
	return &chanAwait{w: w.VirtualWaiter, limit: limit, woken: make(chan struct{})}
}

func (w *recordingAwaiter) Fork() (leave func()) { return func() {} }

// TestOutsideWaits: a Wait state named in RunOptions.OutsideWaits waits
// as an Await limited to its length (on a region's own clock, a limit
// that passes with the wall clock); any other Wait state as a Wait. Both
// last as long as asked in execution time.
func TestOutsideWaits(t *testing.T) {
	m, err := Parse([]byte(`{"StartAt": "Held", "States": {
		"Held": {"Type": "Wait", "Seconds": 300, "Next": "Plain"},
		"Plain": {"Type": "Wait", "Seconds": 60, "End": true}}}`))
	require.NoError(t, err)
	c := clock.NewVirtual(t0)
	w := &recordingAwaiter{VirtualWaiter: VirtualWaiter{Clock: c}}
	x, err := Run(context.Background(), m, RunOptions{Name: "test", Clock: c, Waiter: w, OutsideWaits: []string{"Held"}})
	require.NoError(t, err)
	assert.Equal(t, StatusSucceeded, x.Describe().Status)
	assert.Equal(t, []time.Duration{300 * time.Second}, w.awaits, "the outside wait is an Await")
	assert.Equal(t, []time.Duration{60 * time.Second}, w.waits, "the plain wait is a Wait")
	assert.Equal(t, t0.Add(360*time.Second), c.Now())
}
