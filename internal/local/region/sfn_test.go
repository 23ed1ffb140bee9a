package region

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/local/asl"
)

func TestWithoutData(t *testing.T) {
	tests := []struct {
		name string
		in   asl.Event
		want asl.Event
	}{
		{"ExecutionStarted",
			asl.Event{ID: 1, ExecutionStarted: &asl.ExecutionStartedDetails{Input: `{"a":1}`, RoleARN: "role"}},
			asl.Event{ID: 1, ExecutionStarted: &asl.ExecutionStartedDetails{RoleARN: "role"}}},
		{"ExecutionSucceeded",
			asl.Event{ExecutionSucceeded: &asl.ExecutionSucceededDetails{Output: `{}`, OutputDetails: asl.DataDetails{Truncated: true}}},
			asl.Event{ExecutionSucceeded: &asl.ExecutionSucceededDetails{OutputDetails: asl.DataDetails{Truncated: true}}}},
		{"StateEntered",
			asl.Event{StateEntered: &asl.StateEnteredDetails{Name: "Deploy", Input: `{}`}},
			asl.Event{StateEntered: &asl.StateEnteredDetails{Name: "Deploy"}}},
		{"StateExited",
			asl.Event{StateExited: &asl.StateExitedDetails{Name: "Deploy", Output: `{}`}},
			asl.Event{StateExited: &asl.StateExitedDetails{Name: "Deploy"}}},
		{"TaskScheduled",
			asl.Event{TaskScheduled: &asl.TaskScheduledDetails{Resource: "invoke", Parameters: `{}`}},
			asl.Event{TaskScheduled: &asl.TaskScheduledDetails{Resource: "invoke"}}},
		{"TaskSucceeded",
			asl.Event{TaskSucceeded: &asl.TaskSucceededDetails{Resource: "invoke", Output: `{}`}},
			asl.Event{TaskSucceeded: &asl.TaskSucceededDetails{Resource: "invoke"}}},
		{"LambdaFunctionScheduled",
			asl.Event{LambdaFunctionScheduled: &asl.LambdaScheduledDetails{Resource: "fn", Input: `{}`}},
			asl.Event{LambdaFunctionScheduled: &asl.LambdaScheduledDetails{Resource: "fn"}}},
		{"LambdaFunctionSucceeded",
			asl.Event{LambdaFunctionSucceeded: &asl.ExecutionSucceededDetails{Output: `{}`}},
			asl.Event{LambdaFunctionSucceeded: &asl.ExecutionSucceededDetails{}}},
		{"an error keeps its cause",
			asl.Event{ExecutionFailed: &asl.ErrorDetails{Error: "E", Cause: "c"}},
			asl.Event{ExecutionFailed: &asl.ErrorDetails{Error: "E", Cause: "c"}}},
		{"no details", asl.Event{ID: 7}, asl.Event{ID: 7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, err := json.Marshal(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, withoutData(tt.in))
			after, err := json.Marshal(tt.in)
			require.NoError(t, err)
			assert.JSONEq(t, string(before), string(after), "the history's own event is left as it was")
		})
	}
}
