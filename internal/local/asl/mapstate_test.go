package asl

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/clock"
)

// mapDef is a Map state over $.items whose iterations run a Task (given
// the item and the Map's index through ItemSelector) and then a Pass.
func mapDef(mapFields string) string {
	return def(`"A": {"Type": "Map", "ItemsPath": "$.items", ` + mapFields + `,
	  "ItemSelector": {"value.$": "$$.Map.Item.Value", "index.$": "$$.Map.Item.Index", "tag.$": "$.tag"},
	  "ItemProcessor": {"ProcessorConfig": {"Mode": "INLINE"}, "StartAt": "Work", "States": {
	    "Work": {"Type": "Task", "Resource": "` + lambdaARN + `", "Next": "Shape"},
	    "Shape": {"Type": "Pass", "Parameters": {"done.$": "$.value"}, "End": true}}},
	  "ResultPath": "$.results", "Next": "Done"},
	 "Done": {"Type": "Succeed"}`)
}

// Map state semantics follow the Step Functions Developer Guide, "Map
// state in Inline mode": ItemsPath selects the array, ItemSelector builds
// each iteration's input with $$.Map.Item.Index and .Value, the result is
// the array of the iterations' outputs in the items' order, and a failed
// iteration fails the Map state (its Retry and Catch then apply).
func TestMapRunsEveryItemInOrder(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	inv := InvokerFunc(func(_ context.Context, _ string, p json.RawMessage) (json.RawMessage, error) {
		mu.Lock()
		seen = append(seen, string(p))
		mu.Unlock()
		return p, nil
	})
	x := runDef(t, mapDef(`"MaxConcurrency": 2`), `{"items": ["a", "b", "c"], "tag": "t"}`, inv, nil)
	d := x.Describe()
	require.Equal(t, StatusSucceeded, d.Status, d.Cause)
	assert.JSONEq(t, `{"items": ["a", "b", "c"], "tag": "t", "results": [{"done": "a"}, {"done": "b"}, {"done": "c"}]}`, d.Output)
	assert.ElementsMatch(t, []string{`{"index":0,"tag":"t","value":"a"}`, `{"index":1,"tag":"t","value":"b"}`, `{"index":2,"tag":"t","value":"c"}`}, seen)

	counts := map[EventType]int{}
	for _, ev := range x.History() {
		counts[ev.Type]++
	}
	assert.Equal(t, 1, counts[EventMapStateEntered])
	assert.Equal(t, 1, counts[EventMapStateStarted])
	assert.Equal(t, 3, counts[EventMapIterationStarted])
	assert.Equal(t, 3, counts[EventMapIterationSucceded])
	assert.Equal(t, 1, counts[EventMapStateSucceeded])
	assert.Equal(t, 1, counts[EventMapStateExited])
	assert.Equal(t, 3, counts[EventPassStateEntered], "each iteration's states are in the history")
	assert.Equal(t, []string{"A", "Work", "Shape", "Work", "Shape", "Work", "Shape", "Done"}, sortedIterationPath(x.Path()))
}

// sortedIterationPath keeps the path's states; iterations interleave, so
// only the multiset of inner states is compared, in a fixed order.
func sortedIterationPath(p []string) []string {
	var work, shape int
	out := []string{}
	for _, s := range p {
		switch s {
		case "Work":
			work++
		case "Shape":
			shape++
		default:
			out = append(out, s)
		}
	}
	res := []string{out[0]}
	for i := 0; i < work && i < shape; i++ {
		res = append(res, "Work", "Shape")
	}
	return append(res, out[1:]...)
}

func TestMapOfNoItemsSucceeds(t *testing.T) {
	x := runDef(t, mapDef(`"MaxConcurrency": 0`), `{"items": [], "tag": "t"}`, InvokerFunc(func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return nil, errors.New("never invoked")
	}), nil)
	d := x.Describe()
	require.Equal(t, StatusSucceeded, d.Status, d.Cause)
	assert.JSONEq(t, `{"items": [], "tag": "t", "results": []}`, d.Output)
}

// A failed iteration fails the Map: the other iterations are aborted (their
// task's ctx is cancelled) and the Map's Catch takes the error.
func TestMapFailureAbortsTheOtherIterations(t *testing.T) {
	aborted := make(chan struct{}, 1)
	inv := InvokerFunc(func(ctx context.Context, _ string, p json.RawMessage) (json.RawMessage, error) {
		var in struct{ Value string }
		_ = json.Unmarshal(p, &in)
		if in.Value == "bad" {
			return nil, namedErr{"Boom", "the bad item"}
		}
		<-ctx.Done() // the good iteration runs until it is aborted
		aborted <- struct{}{}
		return nil, ctx.Err()
	})
	d := mapDef(`"Catch": [{"ErrorEquals": ["Boom"], "ResultPath": "$.error", "Next": "Caught"}]`)
	d = d[:len(d)-2] + `, "Caught": {"Type": "Pass", "End": true}}}`
	x := runDef(t, d, `{"items": ["good", "bad"], "tag": "t"}`, inv, nil)
	desc := x.Describe()
	require.Equal(t, StatusSucceeded, desc.Status, desc.Cause)
	assert.Contains(t, desc.Output, `"error":{"Cause":"the bad item","Error":"Boom"}`)
	<-aborted
	counts := map[EventType]int{}
	for _, ev := range x.History() {
		counts[ev.Type]++
	}
	assert.Equal(t, 1, counts[EventMapIterationFailed])
	assert.Equal(t, 1, counts[EventMapIterationAborted])
	assert.Equal(t, 1, counts[EventMapStateFailed])
	assert.Equal(t, []string{"A", "Caught"}, withoutInner(x.Path()))
}

func withoutInner(p []string) []string {
	var out []string
	for _, s := range p {
		if s != "Work" && s != "Shape" {
			out = append(out, s)
		}
	}
	return out
}

func TestMapItemsMustBeAnArray(t *testing.T) {
	x := runDef(t, mapDef(`"MaxConcurrency": 1`), `{"items": {"a": 1}, "tag": "t"}`, InvokerFunc(func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return nil, nil
	}), nil)
	d := x.Describe()
	assert.Equal(t, StatusFailed, d.Status)
	assert.Equal(t, ErrorRuntime, d.Error)
	assert.Contains(t, d.Cause, "not an array")
}

// tokenDef is a Task that invokes a Lambda function through the callback
// pattern, passing its token, with a timeout.
func tokenDef(timeout string) string {
	return def(`"A": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke.waitForTaskToken", ` + timeout + `
	  "Parameters": {"FunctionName": "f", "Payload": {"token.$": "$$.Task.Token", "stage.$": "$.stage"}},
	  "ResultPath": "$.answer", "Next": "Done"}, "Done": {"Type": "Succeed"}`)
}

// The callback pattern follows the Step Functions Developer Guide, "Wait
// for a Callback with Task Token": the task's API call is made with
// $$.Task.Token, then the task waits until SendTaskSuccess (its output is
// the task's result) or SendTaskFailure (its error and cause fail the
// task) with that token, or its TimeoutSeconds pass (States.Timeout).
// SendTaskSuccess with a token whose task has ended is refused
// (TaskDoesNotExist, or TaskTimedOut when it timed out).
func TestTaskTokenCallback(t *testing.T) {
	tokens := make(chan string, 1)
	inv := InvokerFunc(func(_ context.Context, resource string, p json.RawMessage) (json.RawMessage, error) {
		assert.Equal(t, "arn:aws:states:::lambda:invoke", resource, "the API called is the resource without .waitForTaskToken")
		var in struct {
			Payload struct{ Token string }
		}
		require.NoError(t, json.Unmarshal(p, &in))
		tokens <- in.Payload.Token
		return json.RawMessage(`{"StatusCode": 200}`), nil
	})
	for _, tc := range []struct {
		name    string
		answer  func(x *Execution, token string) error
		status  Status
		errName string
		output  string
	}{
		{"success", func(x *Execution, token string) error {
			return x.SendTaskSuccess(token, json.RawMessage(`{"approved_by": "alice"}`))
		}, StatusSucceeded, "", `{"stage": "production", "answer": {"approved_by": "alice"}}`},
		{"failure", func(x *Execution, token string) error {
			return x.SendTaskFailure(token, "ferry.Refused", "no")
		}, StatusFailed, "ferry.Refused", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Parse([]byte(tokenDef("")))
			require.NoError(t, err)
			x, err := Start(context.Background(), m, RunOptions{Input: json.RawMessage(`{"stage": "production"}`), Name: "t", Clock: clock.NewVirtual(t0), Invoker: inv})
			require.NoError(t, err)
			token := <-tokens
			arn, ok := TokenExecution(token)
			require.True(t, ok)
			assert.Equal(t, x.ARN(), arn)
			require.NoError(t, tc.answer(x, token))
			<-x.Done()
			d := x.Describe()
			assert.Equal(t, tc.status, d.Status, d.Cause)
			assert.Equal(t, tc.errName, d.Error)
			if tc.output != "" {
				assert.JSONEq(t, tc.output, d.Output)
			}
			var te *TaskTokenError
			require.ErrorAs(t, x.SendTaskSuccess(token, json.RawMessage(`{}`)), &te, "a second answer")
			assert.Equal(t, CodeTaskDoesNotExist, te.Code)
			var types []EventType
			for _, ev := range x.History() {
				types = append(types, ev.Type)
			}
			assert.Contains(t, types, EventTaskSubmitted)
		})
	}
}

func TestTaskTokenTimesOut(t *testing.T) {
	tokens := make(chan string, 1)
	inv := InvokerFunc(func(_ context.Context, _ string, p json.RawMessage) (json.RawMessage, error) {
		var in struct{ Payload struct{ Token string } }
		_ = json.Unmarshal(p, &in)
		tokens <- in.Payload.Token
		return json.RawMessage(`{}`), nil
	})
	c := clock.NewVirtual(t0)
	x := runDef(t, tokenDef(`"TimeoutSeconds": 3600,`), `{"stage": "s"}`, inv, c)
	d := x.Describe()
	assert.Equal(t, StatusFailed, d.Status)
	assert.Equal(t, ErrorTimeout, d.Error)
	assert.Equal(t, t0.Add(3600e9), c.Now(), "the wait lasted the task's TimeoutSeconds")
	var te *TaskTokenError
	require.ErrorAs(t, x.SendTaskSuccess(<-tokens, json.RawMessage(`{}`)), &te)
	assert.Equal(t, CodeTaskTimedOut, te.Code)
}

func TestTaskTokenRefusals(t *testing.T) {
	m, err := Parse([]byte(def(`"A": {"Type": "Wait", "Seconds": 1, "End": true}`)))
	require.NoError(t, err)
	x, err := Run(context.Background(), m, RunOptions{Name: "t", Clock: clock.NewVirtual(t0)})
	require.NoError(t, err)
	var te *TaskTokenError
	require.ErrorAs(t, x.SendTaskSuccess("nonsense", json.RawMessage(`{}`)), &te)
	assert.Equal(t, CodeInvalidToken, te.Code)
	require.ErrorAs(t, x.SendTaskSuccess(x.newToken(), json.RawMessage(`{`)), &te)
	assert.Equal(t, CodeInvalidOutput, te.Code)
	require.ErrorAs(t, x.SendTaskFailure(x.newToken(), "E", "c"), &te)
	assert.Equal(t, CodeTaskDoesNotExist, te.Code)
}
