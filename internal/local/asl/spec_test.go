package asl

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/clock"
)

// Tests built on the examples of the Amazon States Language specification
// (states-language.net) and AWS's input and output processing guide.

// returning is an Invoker that records the payload and returns result.
func returning(result string, got *string) Invoker {
	return InvokerFunc(func(_ context.Context, _ string, payload json.RawMessage) (json.RawMessage, error) {
		if got != nil {
			*got = string(payload)
		}
		return json.RawMessage(result), nil
	})
}

func TestSpecInputOutputProcessing(t *testing.T) {
	add := InvokerFunc(func(_ context.Context, _ string, payload json.RawMessage) (json.RawMessage, error) {
		var in struct{ Val1, Val2 int }
		if err := json.Unmarshal(payload, &in); err != nil {
			return nil, err
		}
		return json.Marshal(in.Val1 + in.Val2)
	})
	const numbers = `{"title": "Numbers to add", "numbers": {"val1": 3, "val2": 4}}`
	tests := []struct {
		name, fields, input, want string
		inv                       Invoker
	}{
		{"InputPath and ResultPath", `"InputPath": "$.numbers", "ResultPath": "$.sum"`, numbers,
			`{"title": "Numbers to add", "numbers": {"val1": 3, "val2": 4}, "sum": 7}`, add},
		{"OutputPath selects the result", `"InputPath": "$.numbers", "ResultPath": "$.sum", "OutputPath": "$.sum"`, numbers, `7`, add},
		{"default ResultPath replaces the input", `"InputPath": "$.numbers"`, numbers, `7`, add},
		{"ResultPath null keeps the input", `"InputPath": "$.numbers", "ResultPath": null`, numbers, numbers, add},
		{"OutputPath null gives {}", `"InputPath": "$.numbers", "OutputPath": null`, numbers, `{}`, add},
		{"ResultPath overwrites a field", `"ResultPath": "$.master.detail"`, `{"master": {"detail": [1, 2, 3]}}`,
			`{"master": {"detail": 6}}`, returning(`6`, nil)},
		{"ResultPath creates fields", `"ResultPath": "$.master.result.sum"`, `{"master": {"detail": [1, 2, 3]}}`,
			`{"master": {"detail": [1, 2, 3], "result": {"sum": 6}}}`, returning(`6`, nil)},
		{"ResultSelector", `"ResultSelector": {"ClusterId.$": "$.output.ClusterId", "ResourceType.$": "$.resourceType", "StaticValue": "foo"}, "ResultPath": "$.EMROutput"`,
			`{"cluster": "c1"}`,
			`{"cluster": "c1", "EMROutput": {"ClusterId": "AKIAIOSFODNN7EXAMPLE", "ResourceType": "elasticmapreduce", "StaticValue": "foo"}}`,
			returning(`{"resourceType": "elasticmapreduce", "resource": "createCluster.sync", "output": {"SdkHttpMetadata": {"HttpStatusCode": 200}, "ClusterId": "AKIAIOSFODNN7EXAMPLE"}}`, nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := runDef(t, def(`"A": {"Type": "Task", "Resource": "`+lambdaARN+`", "End": true, `+tt.fields+`}`), tt.input, tt.inv, nil)
			d := x.Describe()
			require.Equal(t, StatusSucceeded, d.Status, "%s: %s", d.Error, d.Cause)
			assert.JSONEq(t, tt.want, d.Output)
		})
	}
}

func TestSpecParameters(t *testing.T) {
	tests := []struct {
		name, params, input, want string
	}{
		{"spec example: paths and slices", `{"flagged": true, "parts": {"first.$": "$.vals[0]", "last3.$": "$.vals[3:]"}}`,
			`{"flagged": 7, "vals": [0, 10, 20, 30, 40, 50]}`,
			`{"flagged": true, "parts": {"first": 0, "last3": [30, 40, 50]}}`},
		{"AWS example: static and selected values", `{"comment": "Selecting what I care about.", "MyDetails": {"size.$": "$.product.details.size", "exists.$": "$.product.availability", "StaticValue": "foo"}}`,
			`{"comment": "An input comment.", "data": {"val1": 23, "val2": 17}, "extra": "foo", "lambda": {"who": "AWS Step Functions"}, "product": {"details": {"color": "blue", "size": "small", "material": "cotton"}, "availability": "in stock", "sku": "2317", "cost": "$23"}}`,
			`{"comment": "Selecting what I care about.", "MyDetails": {"size": "small", "exists": "in stock", "StaticValue": "foo"}}`},
		{"context object", `{"execution.$": "$$.Execution.Id", "name.$": "$$.Execution.Name", "start.$": "$$.Execution.StartTime", "state.$": "$$.State.Name", "entered.$": "$$.State.EnteredTime", "retry.$": "$$.State.RetryCount", "machine.$": "$$.StateMachine.Name", "input.$": "$$.Execution.Input"}`,
			`{"a": 1}`,
			`{"execution": "arn:aws:states:us-east-1:123456789012:execution:StateMachine:test", "name": "test", "start": "2026-03-14T01:00:00.000Z", "state": "A", "entered": "2026-03-14T01:00:00.000Z", "retry": 0, "machine": "StateMachine", "input": {"a": 1}}`},
		{"objects in arrays", `{"list": [{"v.$": "$.a"}, 2, "x"]}`, `{"a": 1}`, `{"list": [{"v": 1}, 2, "x"]}`},
		{"whole input", `{"task": "Validate", "input.$": "$"}`, `{"a": [1]}`, `{"task": "Validate", "input": {"a": [1]}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			x := runDef(t, def(`"A": {"Type": "Task", "Resource": "`+lambdaARN+`", "End": true, "Parameters": `+tt.params+`}`), tt.input, returning(`{}`, &got), nil)
			require.Equal(t, StatusSucceeded, x.Describe().Status)
			assert.JSONEq(t, tt.want, got)
			// The same template on a Pass state gives the same effective input.
			p := runDef(t, def(`"A": {"Type": "Pass", "End": true, "Parameters": `+tt.params+`}`), tt.input, nil, nil)
			assert.JSONEq(t, tt.want, p.Describe().Output)
		})
	}
}

func TestSpecPass(t *testing.T) {
	x := runDef(t, def(`"A": {"Type": "Pass", "Result": {"x-datum": 0.381018, "y-datum": 622.2269926397355}, "ResultPath": "$.coords", "Next": "B"}, "B": {"Type": "Succeed"}`),
		`{"georefOf": "Home"}`, nil, nil)
	assert.JSONEq(t, `{"georefOf": "Home", "coords": {"x-datum": 0.381018, "y-datum": 622.2269926397355}}`, x.Describe().Output)
	assert.Equal(t, []string{"A", "B"}, x.Path())
}

// specChoice is the specification's Choice state example.
const specChoice = `{"StartAt": "ChoiceStateX", "States": {
  "ChoiceStateX": {"Type": "Choice", "Choices": [
    {"Not": {"Variable": "$.type", "StringEquals": "Private"}, "Next": "Public"},
    {"And": [
      {"Variable": "$.value", "IsPresent": true},
      {"Variable": "$.value", "IsNumeric": true},
      {"Variable": "$.value", "NumericGreaterThanEquals": 20},
      {"Variable": "$.value", "NumericLessThan": 30}], "Next": "ValueInTwenties"},
    {"Variable": "$.rating", "NumericGreaterThanPath": "$.auditThreshold", "Next": "StartAudit"}],
   "Default": "RecordEvent"},
  "Public": {"Type": "Succeed"}, "ValueInTwenties": {"Type": "Succeed"},
  "StartAudit": {"Type": "Succeed"}, "RecordEvent": {"Type": "Succeed"}}}`

func TestSpecChoice(t *testing.T) {
	tests := []struct{ input, next string }{
		{`{"type": "Public"}`, "Public"},
		{`{"type": "Private", "value": 22}`, "ValueInTwenties"},
		{`{"type": "Private", "value": 30, "rating": 53, "auditThreshold": 60}`, "RecordEvent"},
		{`{"type": "Private", "rating": 70, "auditThreshold": 60}`, "StartAudit"},
		{`{"type": "Private", "value": "22", "rating": 1, "auditThreshold": 2}`, "RecordEvent"},
	}
	for _, tt := range tests {
		t.Run(tt.input, func(t *testing.T) {
			x := runDef(t, specChoice, tt.input, nil, nil)
			require.Equal(t, StatusSucceeded, x.Describe().Status, x.Describe().Cause)
			assert.Equal(t, []string{"ChoiceStateX", tt.next}, x.Path())
			assert.JSONEq(t, tt.input, x.Describe().Output, "a Choice passes its input through")
		})
	}
}

func TestChoiceOperators(t *testing.T) {
	tests := []struct {
		rule, input string
		want        bool
	}{
		{`"Variable": "$.s", "StringEquals": "a"`, `{"s": "a"}`, true},
		{`"Variable": "$.s", "StringEquals": "a"`, `{"s": 1}`, false},
		{`"Variable": "$.s", "StringEqualsPath": "$.t"`, `{"s": "a", "t": "a"}`, true},
		{`"Variable": "$.s", "StringLessThan": "b"`, `{"s": "a"}`, true},
		{`"Variable": "$.s", "StringGreaterThan": "b"`, `{"s": "a"}`, false},
		{`"Variable": "$.s", "StringLessThanEquals": "a"`, `{"s": "a"}`, true},
		{`"Variable": "$.s", "StringGreaterThanEqualsPath": "$.t"`, `{"s": "b", "t": "a"}`, true},
		{`"Variable": "$.s", "StringLessThanPath": "$.t"`, `{"s": "b", "t": "a"}`, false},
		{`"Variable": "$.s", "StringGreaterThanPath": "$.t"`, `{"s": "b", "t": "a"}`, true},
		{`"Variable": "$.s", "StringLessThanEqualsPath": "$.t"`, `{"s": "a", "t": "a"}`, true},
		{`"Variable": "$.s", "StringMatches": "log-*.txt"`, `{"s": "log-1.txt"}`, true},
		{`"Variable": "$.n", "NumericEquals": 1`, `{"n": 1.0}`, true},
		{`"Variable": "$.n", "NumericEquals": 1`, `{"n": "1"}`, false},
		{`"Variable": "$.n", "NumericEqualsPath": "$.m"`, `{"n": 2, "m": 2}`, true},
		{`"Variable": "$.n", "NumericLessThan": 1.5`, `{"n": 1}`, true},
		{`"Variable": "$.n", "NumericGreaterThan": 1.5`, `{"n": 1}`, false},
		{`"Variable": "$.n", "NumericLessThanEquals": 1`, `{"n": 1}`, true},
		{`"Variable": "$.n", "NumericGreaterThanEquals": 2`, `{"n": 1}`, false},
		{`"Variable": "$.n", "NumericLessThanPath": "$.m"`, `{"n": 1, "m": 2}`, true},
		{`"Variable": "$.n", "NumericGreaterThanPath": "$.m"`, `{"n": 1, "m": 2}`, false},
		{`"Variable": "$.n", "NumericLessThanEqualsPath": "$.m"`, `{"n": 2, "m": 2}`, true},
		{`"Variable": "$.n", "NumericGreaterThanEqualsPath": "$.m"`, `{"n": 3, "m": 2}`, true},
		{`"Variable": "$.b", "BooleanEquals": true`, `{"b": true}`, true},
		{`"Variable": "$.b", "BooleanEquals": true`, `{"b": "true"}`, false},
		{`"Variable": "$.b", "BooleanEqualsPath": "$.c"`, `{"b": false, "c": false}`, true},
		{`"Variable": "$.t", "TimestampEquals": "2016-03-14T01:59:00Z"`, `{"t": "2016-03-14T02:59:00+01:00"}`, true},
		{`"Variable": "$.t", "TimestampLessThan": "2016-03-14T01:59:00Z"`, `{"t": "2016-03-14T01:58:00Z"}`, true},
		{`"Variable": "$.t", "TimestampGreaterThan": "2016-03-14T01:59:00Z"`, `{"t": "2016-03-14T01:58:00Z"}`, false},
		{`"Variable": "$.t", "TimestampLessThanEquals": "2016-03-14T01:59:00Z"`, `{"t": "2016-03-14T01:59:00Z"}`, true},
		{`"Variable": "$.t", "TimestampGreaterThanEquals": "2016-03-14T01:59:00Z"`, `{"t": "not a time"}`, false},
		{`"Variable": "$.t", "TimestampEqualsPath": "$.u"`, `{"t": "2016-03-14T01:59:00Z", "u": "2016-03-14T01:59:00.000Z"}`, true},
		{`"Variable": "$.t", "TimestampLessThanPath": "$.u"`, `{"t": "2016-03-14T01:59:00Z", "u": "2016-03-14T01:59:01Z"}`, true},
		{`"Variable": "$.t", "TimestampGreaterThanPath": "$.u"`, `{"t": "2016-03-14T01:59:00Z", "u": "2016-03-14T01:59:01Z"}`, false},
		{`"Variable": "$.t", "TimestampLessThanEqualsPath": "$.u"`, `{"t": "2016-03-14T01:59:00Z", "u": "2016-03-14T01:59:00Z"}`, true},
		{`"Variable": "$.t", "TimestampGreaterThanEqualsPath": "$.u"`, `{"t": "2016-03-14T01:59:02Z", "u": "2016-03-14T01:59:01Z"}`, true},
		{`"Variable": "$.x", "IsNull": true`, `{"x": null}`, true},
		{`"Variable": "$.x", "IsNull": false`, `{"x": 0}`, true},
		{`"Variable": "$.x", "IsPresent": true`, `{"y": 0}`, false},
		{`"Variable": "$.x", "IsPresent": false`, `{"y": 0}`, true},
		{`"Variable": "$.x", "IsNumeric": true`, `{"x": 1.5}`, true},
		{`"Variable": "$.x", "IsString": true`, `{"x": "1"}`, true},
		{`"Variable": "$.x", "IsBoolean": true`, `{"x": "true"}`, false},
		{`"Variable": "$.x", "IsTimestamp": true`, `{"x": "2016-03-14T01:59:00Z"}`, true},
		{`"Variable": "$.x", "IsTimestamp": true`, `{"x": "yesterday"}`, false},
		{`"And": [{"Variable": "$.x", "IsNumeric": true}, {"Variable": "$.x", "NumericGreaterThan": 0}]`, `{"x": 1}`, true},
		{`"Or": [{"Variable": "$.x", "IsString": true}, {"Variable": "$.x", "NumericGreaterThan": 5}]`, `{"x": 1}`, false},
		{`"Not": {"Variable": "$.x", "IsNull": true}`, `{"x": 1}`, true},
		{`"Variable": "$$.Execution.Name", "StringEquals": "test"`, `{}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.rule+" "+tt.input, func(t *testing.T) {
			d := `{"StartAt": "C", "States": {"C": {"Type": "Choice", "Choices": [{` + tt.rule + `, "Next": "Yes"}], "Default": "No"},
				"Yes": {"Type": "Succeed"}, "No": {"Type": "Succeed"}}}`
			x := runDef(t, d, tt.input, nil, nil)
			require.Equal(t, StatusSucceeded, x.Describe().Status, x.Describe().Cause)
			want := "No"
			if tt.want {
				want = "Yes"
			}
			assert.Equal(t, []string{"C", want}, x.Path())
		})
	}
}

func TestChoiceErrors(t *testing.T) {
	tests := []struct {
		name, choices, input, errName, cause string
	}{
		{"no match and no default", `[{"Variable": "$.x", "IsNull": true, "Next": "S"}]`, `{"x": 1}`, ErrorNoChoiceMatched, "No Choice Rules matched"},
		{"missing variable", `[{"Variable": "$.x", "NumericEquals": 1, "Next": "S"}]`, `{}`, ErrorRuntime, "Invalid path '$.x'"},
		{"missing operand path", `[{"Variable": "$.x", "NumericEqualsPath": "$.y", "Next": "S"}]`, `{"x": 1}`, ErrorRuntime, "Invalid path '$.y'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := runDef(t, `{"StartAt": "C", "States": {"C": {"Type": "Choice", "Choices": `+tt.choices+`}, "S": {"Type": "Succeed"}}}`, tt.input, nil, nil)
			d := x.Describe()
			assert.Equal(t, StatusFailed, d.Status)
			assert.Equal(t, tt.errName, d.Error)
			assert.Contains(t, d.Cause, tt.cause)
		})
	}
}

func TestSpecWait(t *testing.T) {
	tests := []struct {
		name, fields, input string
		want                time.Duration
	}{
		{"wait_ten_seconds", `"Seconds": 10`, `{}`, 10 * time.Second},
		{"wait_until", `"Timestamp": "2026-03-14T01:59:00Z"`, `{}`, 59 * time.Minute},
		{"wait_until in the past", `"Timestamp": "2016-03-14T01:59:00Z"`, `{}`, 0},
		{"TimestampPath", `"TimestampPath": "$.expirydate"`, `{"expirydate": "2026-03-14T02:00:00Z"}`, time.Hour},
		{"SecondsPath", `"SecondsPath": "$.expiryseconds"`, `{"expiryseconds": 45}`, 45 * time.Second},
		{"InputPath before SecondsPath", `"InputPath": "$.health", "SecondsPath": "$.wait_seconds"`, `{"health": {"wait_seconds": 5}}`, 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := clock.NewVirtual(t0)
			x := runDef(t, def(`"A": {"Type": "Wait", "Next": "B", `+tt.fields+`}, "B": {"Type": "Succeed"}`), tt.input, nil, c)
			d := x.Describe()
			require.Equal(t, StatusSucceeded, d.Status, d.Cause)
			assert.Equal(t, t0.Add(tt.want), c.Now())
			h := x.History()
			assert.Equal(t, t0.Add(tt.want), h[len(h)-1].Timestamp)
		})
	}
	for _, in := range []string{`{}`, `{"s": -1}`, `{"s": 1.5}`, `{"s": "5"}`} {
		t.Run("bad SecondsPath "+in, func(t *testing.T) {
			x := runDef(t, def(`"A": {"Type": "Wait", "End": true, "SecondsPath": "$.s"}`), in, nil, nil)
			assert.Equal(t, StatusFailed, x.Describe().Status)
			assert.Equal(t, ErrorRuntime, x.Describe().Error)
		})
	}
}
