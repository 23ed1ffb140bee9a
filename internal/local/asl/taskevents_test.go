package asl

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/ferryhq/ferry/internal/clock"
)

// TestTaskEvents pins the events of a Task's invocation for both ways of
// naming its Resource and every way an attempt ends.
func TestTaskEvents(t *testing.T) {
	const fn = "arn:aws:lambda:us-east-1:123456789012:function:f"
	integration := TaskResource{ResourceType: "lambda", Resource: "invoke"}
	timeout := int64(30)
	tests := []struct {
		name, resource string
		outcome        outcome
		want           []Event
	}{
		{"integration succeeds", "arn:aws:states:::lambda:invoke", outcome{Result: json.RawMessage(`{"b":2}`)}, []Event{
			{Type: EventTaskScheduled, TaskScheduled: &TaskScheduledDetails{ResourceType: "lambda", Resource: "invoke",
				Region: "us-east-1", Parameters: `{"a":1}`, TimeoutInSeconds: &timeout}},
			{Type: EventTaskStarted, TaskStarted: &integration},
			{Type: EventTaskSucceeded, TaskSucceeded: &TaskSucceededDetails{ResourceType: "lambda", Resource: "invoke", Output: `{"b":2}`}},
		}},
		{"integration fails", "arn:aws:states:::lambda:invoke", outcome{Error: "Oops", Cause: "why"}, []Event{
			{Type: EventTaskScheduled, TaskScheduled: &TaskScheduledDetails{ResourceType: "lambda", Resource: "invoke",
				Region: "us-east-1", Parameters: `{"a":1}`, TimeoutInSeconds: &timeout}},
			{Type: EventTaskStarted, TaskStarted: &integration},
			{Type: EventTaskFailed, TaskFailed: &TaskErrorDetails{ResourceType: "lambda", Resource: "invoke", Error: "Oops", Cause: "why"}},
		}},
		{"integration times out", "arn:aws:states:::lambda:invoke", outcome{Advance: time.Minute}, []Event{
			{Type: EventTaskScheduled, TaskScheduled: &TaskScheduledDetails{ResourceType: "lambda", Resource: "invoke",
				Region: "us-east-1", Parameters: `{"a":1}`, TimeoutInSeconds: &timeout}},
			{Type: EventTaskStarted, TaskStarted: &integration},
			{Type: EventTaskTimedOut, TaskTimedOut: &TaskErrorDetails{ResourceType: "lambda", Resource: "invoke", Error: ErrorTimeout}},
		}},
		{"function succeeds", fn, outcome{Result: json.RawMessage(`{"b":2}`)}, []Event{
			{Type: EventLambdaFunctionScheduled, LambdaFunctionScheduled: &LambdaScheduledDetails{Resource: fn, Input: `{"a":1}`, TimeoutInSeconds: &timeout}},
			{Type: EventLambdaFunctionStarted},
			{Type: EventLambdaFunctionSucceeded, LambdaFunctionSucceeded: &ExecutionSucceededDetails{Output: `{"b":2}`}},
		}},
		{"function fails", fn, outcome{Error: "Oops", Cause: "why"}, []Event{
			{Type: EventLambdaFunctionScheduled, LambdaFunctionScheduled: &LambdaScheduledDetails{Resource: fn, Input: `{"a":1}`, TimeoutInSeconds: &timeout}},
			{Type: EventLambdaFunctionStarted},
			{Type: EventLambdaFunctionFailed, LambdaFunctionFailed: &ErrorDetails{Error: "Oops", Cause: "why"}},
		}},
		{"function returns no JSON", fn, outcome{Result: json.RawMessage(`{`)}, []Event{
			{Type: EventLambdaFunctionScheduled, LambdaFunctionScheduled: &LambdaScheduledDetails{Resource: fn, Input: `{"a":1}`, TimeoutInSeconds: &timeout}},
			{Type: EventLambdaFunctionStarted},
			{Type: EventLambdaFunctionFailed, LambdaFunctionFailed: &ErrorDetails{Error: ErrorRuntime,
				Cause: "the result of task 'A' is not valid JSON: unexpected EOF"}},
		}},
		{"function times out", fn, outcome{Advance: time.Minute}, []Event{
			{Type: EventLambdaFunctionScheduled, LambdaFunctionScheduled: &LambdaScheduledDetails{Resource: fn, Input: `{"a":1}`, TimeoutInSeconds: &timeout}},
			{Type: EventLambdaFunctionStarted},
			{Type: EventLambdaFunctionTimedOut, LambdaFunctionTimedOut: &ErrorDetails{Error: ErrorTimeout}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := clock.NewVirtual(t0)
			inv := newScripted(scenario{Outcomes: map[string][]outcome{"A": {tt.outcome}}}, c)
			x := runDef(t, def(`"A": {"Type": "Task", "Resource": "`+tt.resource+`", "TimeoutSeconds": 30, "End": true}`), `{"a": 1}`, inv, c)
			h := x.History()
			var got []Event
			for _, ev := range h[2 : len(h)-1] { // between TaskStateEntered and the end
				if ev.Type == EventTaskStateExited {
					break
				}
				ev.ID, ev.PreviousEventID, ev.Timestamp = 0, 0, time.Time{}
				got = append(got, ev)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}
