package asl

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// def wraps states (the inside of "States") into a definition starting at
// "A".
func def(states string) string {
	return `{"StartAt": "A", "States": {` + states + `}}`
}

const lambdaARN = "arn:aws:lambda:us-east-1:123456789012:function:F"

func TestParseErrors(t *testing.T) {
	task := func(extra string) string {
		return def(`"A": {"Type": "Task", "Resource": "` + lambdaARN + `", "End": true` + extra + `}`)
	}
	tests := []struct {
		name, def, want string
	}{
		{"not json", `{`, "definition: must be a JSON object"},
		{"no StartAt", `{"States": {"A": {"Type": "Succeed"}}}`, "StartAt is required"},
		{"no States", `{"StartAt": "A"}`, "States is required"},
		{"empty States", `{"StartAt": "A", "States": {}}`, "at least one state"},
		{"unknown top field", `{"StartAt": "A", "States": {"A": {"Type": "Succeed"}}, "Foo": 1}`, `definition: unknown field "Foo"`},
		{"jsonata", `{"StartAt": "A", "QueryLanguage": "JSONata", "States": {"A": {"Type": "Succeed"}}}`, "JSONata"},
		{"duplicate state", `{"StartAt": "A", "States": {"A": {"Type": "Succeed"}, "A": {"Type": "Succeed"}}}`, `duplicate key "A"`},
		{"StartAt missing state", `{"StartAt": "B", "States": {"A": {"Type": "Succeed"}}}`, `StartAt "B" names no state`},
		{"unknown type", def(`"A": {"Type": "Nope"}`), `state "A": unknown Type "Nope"`},
		{"parallel", def(`"A": {"Type": "Parallel", "End": true}`), `state "A": Type Parallel is not supported`},
		{"map without processor", def(`"A": {"Type": "Map", "End": true}`), `state "A": ItemProcessor is required`},
		{"map distributed", def(`"A": {"Type": "Map", "End": true, "ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED"}, "StartAt": "B", "States": {"B": {"Type": "Succeed"}}}}`),
			`state "A": ItemProcessor: ProcessorConfig: only Mode INLINE is supported`},
		{"map iterator", def(`"A": {"Type": "Map", "End": true, "Iterator": {}}`), `Iterator`},
		{"map state name twice", def(`"A": {"Type": "Map", "End": true, "ItemProcessor": {"StartAt": "A", "States": {"A": {"Type": "Succeed"}}}}`),
			`state "A" is named twice`},
		{"map processor unreachable", def(`"A": {"Type": "Map", "End": true, "ItemProcessor": {"StartAt": "B", "States": {"B": {"Type": "Succeed"}, "C": {"Type": "Succeed"}}}}`),
			`state "C" is not reachable`},
		{"map processor leaves", def(`"A": {"Type": "Map", "Next": "Z", "ItemProcessor": {"StartAt": "B", "States": {"B": {"Type": "Pass", "Next": "Z"}}}}, "Z": {"Type": "Succeed"}`),
			`state "B": Next "Z" names no state`},
		{"wait for token of a Lambda ARN", def(`"A": {"Type": "Task", "Resource": "arn:aws:lambda:us-east-1:123456789012:function:f.waitForTaskToken", "End": true}`),
			`.waitForTaskToken`},
		{"no type", def(`"A": {"End": true}`), `state "A": Type is required`},
		{"unknown field", def(`"A": {"Type": "Pass", "End": true, "Foo": 1}`), `state "A": unknown field "Foo"`},
		{"field of other type", def(`"A": {"Type": "Pass", "End": true, "Retry": []}`), `state "A": unknown field "Retry"`},
		{"heartbeat", task(`, "HeartbeatSeconds": 5`), `state "A": field HeartbeatSeconds is not supported`},
		{"next and end", def(`"A": {"Type": "Pass", "Next": "A", "End": true}`), "Next and End cannot both be set"},
		{"neither next nor end", def(`"A": {"Type": "Pass"}`), "one of Next or End is required"},
		{"end false", def(`"A": {"Type": "Pass", "End": false}`), "End must be true"},
		{"next to nowhere", def(`"A": {"Type": "Pass", "Next": "B"}`), `state "A": Next "B" names no state`},
		{"unreachable", def(`"A": {"Type": "Succeed"}, "B": {"Type": "Succeed"}`), `state "B" is not reachable`},
		{"long name", `{"StartAt": "` + strings.Repeat("x", 81) + `", "States": {"` + strings.Repeat("x", 81) + `": {"Type": "Succeed"}}}`, "1 to 80 characters"},
		{"no resource", def(`"A": {"Type": "Task", "End": true}`), `state "A": Resource is required`},
		{"bad timeout", task(`, "TimeoutSeconds": 0`), `state "A": TimeoutSeconds must be an integer from 1`},
		{"bad InputPath", task(`, "InputPath": "a.b"`), `state "A": InputPath: path "a.b" must start with $`},
		{"ResultPath wildcard", task(`, "ResultPath": "$.a[*]"`), `ResultPath: path "$.a[*]" must be a reference path`},
		{"ResultPath context", task(`, "ResultPath": "$$.a"`), "cannot write to the context object"},
		{"Parameters not object", task(`, "Parameters": 3`), `state "A": Parameters: must be a JSON object`},
		{"Parameters bad path", task(`, "Parameters": {"a": {"b.$": "nope"}}`), `state "A": Parameters: a.b.$: path "nope" must start with $`},
		{"Parameters non-string path", task(`, "Parameters": {"b.$": 3}`), "must be a path string"},
		{"Parameters duplicate", task(`, "Parameters": {"b.$": "$.x", "b": 1}`), `both "b" and "b.$"`},
		{"intrinsic", task(`, "Parameters": {"b.$": "States.Format('x')"}`), "intrinsic functions (States.Format"},
		{"ResultSelector on pass", def(`"A": {"Type": "Pass", "End": true, "ResultSelector": {}}`), `unknown field "ResultSelector"`},
		{"retry not array", task(`, "Retry": {}`), "Retry must be an array"},
		{"retry no ErrorEquals", task(`, "Retry": [{}]`), `Retry[0]: ErrorEquals is required`},
		{"retry empty ErrorEquals", task(`, "Retry": [{"ErrorEquals": []}]`), "non-empty array"},
		{"retry ALL not alone", task(`, "Retry": [{"ErrorEquals": ["States.ALL", "X"]}]`), "States.ALL must appear alone"},
		{"retry ALL not last", task(`, "Retry": [{"ErrorEquals": ["States.ALL"]}, {"ErrorEquals": ["X"]}]`), "Retry[0]: ErrorEquals: States.ALL must appear alone, in the last"},
		{"retry unknown States name", task(`, "Retry": [{"ErrorEquals": ["States.Nope"]}]`), `unknown error name "States.Nope"`},
		{"retry interval", task(`, "Retry": [{"ErrorEquals": ["X"], "IntervalSeconds": 0}]`), "Retry[0]: IntervalSeconds must be an integer from 1"},
		{"retry attempts", task(`, "Retry": [{"ErrorEquals": ["X"], "MaxAttempts": -1}]`), "MaxAttempts must be an integer from 0"},
		{"retry backoff", task(`, "Retry": [{"ErrorEquals": ["X"], "BackoffRate": 0.5}]`), "BackoffRate must be a number >= 1.0"},
		{"retry max delay", task(`, "Retry": [{"ErrorEquals": ["X"], "MaxDelaySeconds": 0}]`), "MaxDelaySeconds must be an integer from 1"},
		{"retry jitter", task(`, "Retry": [{"ErrorEquals": ["X"], "JitterStrategy": "FULL"}]`), `JitterStrategy "FULL" is not supported`},
		{"retry unknown field", task(`, "Retry": [{"ErrorEquals": ["X"], "Foo": 1}]`), `Retry[0]: unknown field "Foo"`},
		{"catch no next", task(`, "Catch": [{"ErrorEquals": ["X"]}]`), `Catch[0]: Next is required`},
		{"catch next nowhere", task(`, "Catch": [{"ErrorEquals": ["X"], "Next": "Z"}]`), `Catch[0].Next "Z" names no state`},
		{"catch bad ResultPath", task(`, "Catch": [{"ErrorEquals": ["X"], "Next": "A", "ResultPath": "x"}]`), "Catch[0]: ResultPath"},
		{"choice without choices", def(`"A": {"Type": "Choice"}`), "Choices is required"},
		{"choice with next", def(`"A": {"Type": "Choice", "Next": "A", "Choices": []}`), `unknown field "Next"`},
		{"choice rule no next", def(`"A": {"Type": "Choice", "Choices": [{"Variable": "$.a", "IsNull": true}]}`), "Choices[0]: Next is required"},
		{"choice rule two ops", def(`"A": {"Type": "Choice", "Choices": [{"Variable": "$.a", "IsNull": true, "IsString": true, "Next": "A"}]}`), "exactly one comparison operator"},
		{"choice rule no var", def(`"A": {"Type": "Choice", "Choices": [{"IsNull": true, "Next": "A"}]}`), "Variable is required"},
		{"choice rule unknown op", def(`"A": {"Type": "Choice", "Choices": [{"Variable": "$.a", "StringContains": "x", "Next": "A"}]}`), `unknown field "StringContains"`},
		{"choice rule IsNullPath", def(`"A": {"Type": "Choice", "Choices": [{"Variable": "$.a", "IsNullPath": "$.b", "Next": "A"}]}`), `unknown field "IsNullPath"`},
		{"choice wrong operand", def(`"A": {"Type": "Choice", "Choices": [{"Variable": "$.a", "NumericEquals": "1", "Next": "A"}]}`), "NumericEquals must be a number"},
		{"choice bad timestamp", def(`"A": {"Type": "Choice", "Choices": [{"Variable": "$.a", "TimestampEquals": "2016-03-14 01:59:00", "Next": "A"}]}`), "not an RFC 3339 timestamp"},
		{"choice nested next", def(`"A": {"Type": "Choice", "Choices": [{"Not": {"Variable": "$.a", "IsNull": true, "Next": "A"}, "Next": "A"}]}`), "Choices[0].Not: Next is only allowed on a top-level"},
		{"choice and empty", def(`"A": {"Type": "Choice", "Choices": [{"And": [], "Next": "A"}]}`), "And must be a non-empty array"},
		{"choice and plus var", def(`"A": {"Type": "Choice", "Choices": [{"And": [{"Variable": "$.a", "IsNull": true}], "Variable": "$.a", "Next": "A"}]}`), "exactly one of And, Or, Not"},
		{"choice default nowhere", def(`"A": {"Type": "Choice", "Choices": [{"Variable": "$.a", "IsNull": true, "Next": "A"}], "Default": "Z"}`), `Default "Z" names no state`},
		{"wait none", def(`"A": {"Type": "Wait", "End": true}`), "exactly one of Seconds"},
		{"wait two", def(`"A": {"Type": "Wait", "End": true, "Seconds": 1, "SecondsPath": "$.s"}`), "exactly one of Seconds"},
		{"wait negative", def(`"A": {"Type": "Wait", "End": true, "Seconds": -1}`), "Seconds must be an integer from 0"},
		{"wait bad timestamp", def(`"A": {"Type": "Wait", "End": true, "Timestamp": "2016-03-14t01:59:00z"}`), "not an RFC 3339 timestamp"},
		{"wait SecondsPath not reference", def(`"A": {"Type": "Wait", "End": true, "SecondsPath": "$.s[*]"}`), "SecondsPath: path"},
		{"fail with next", def(`"A": {"Type": "Fail", "Next": "A"}`), `unknown field "Next"`},
		{"fail error and path", def(`"A": {"Type": "Fail", "Error": "E", "ErrorPath": "$.e"}`), "Error and ErrorPath cannot both be set"},
		{"fail cause not string", def(`"A": {"Type": "Fail", "Cause": 3}`), "Cause must be a string"},
		{"succeed with end", def(`"A": {"Type": "Succeed", "End": true}`), `unknown field "End"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.def))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestParseAccepts(t *testing.T) {
	m, err := Parse([]byte(`{
	  "Comment": "every supported state",
	  "StartAt": "P",
	  "TimeoutSeconds": 3600,
	  "States": {
	    "P": {"Type": "Pass", "Result": {"x": 1}, "ResultPath": "$.p", "Next": "T"},
	    "T": {"Type": "Task", "Resource": "` + lambdaARN + `", "TimeoutSeconds": 30,
	          "InputPath": "$", "Parameters": {"a.$": "$.p", "c.$": "$$.Execution.Id", "list": [{"n.$": "$.p.x"}]},
	          "ResultSelector": {"r.$": "$"}, "ResultPath": null, "OutputPath": "$",
	          "Retry": [{"ErrorEquals": ["E"], "MaxAttempts": 0}, {"ErrorEquals": ["States.ALL"], "JitterStrategy": "NONE"}],
	          "Catch": [{"ErrorEquals": ["States.TaskFailed"], "Next": "F", "ResultPath": "$.error"}],
	          "Next": "C"},
	    "C": {"Type": "Choice", "Choices": [
	          {"Or": [{"Variable": "$.a", "StringMatches": "x*"}, {"Not": {"Variable": "$.b", "IsPresent": true}}], "Next": "W"}],
	          "Default": "S"},
	    "W": {"Type": "Wait", "Timestamp": "2016-03-14T01:59:00Z", "Next": "S"},
	    "S": {"Type": "Succeed"},
	    "F": {"Type": "Fail", "ErrorPath": "$.error.Error", "CausePath": "$.error.Cause"}
	  }
	}`))
	require.NoError(t, err)
	assert.Equal(t, "P", m.StartAt())
	assert.Equal(t, []string{"P", "T", "C", "W", "S", "F"}, m.StateNames())
	typ, ok := m.StateType("C")
	assert.True(t, ok)
	assert.Equal(t, TypeChoice, typ)
	_, ok = m.StateType("nope")
	assert.False(t, ok)
}

func TestSubstitute(t *testing.T) {
	out, err := Substitute([]byte(`{"Resource": "${Fn}", "Other": "${Fn}"}`), map[string]string{"Fn": `arn:"q"`})
	require.NoError(t, err)
	assert.JSONEq(t, `{"Resource": "arn:\"q\"", "Other": "arn:\"q\""}`, string(out))
	_, err = Substitute([]byte(`{"Resource": "${Fn}", "X": "${Missing}"}`), map[string]string{"Fn": "a"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "${Missing}")
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(def(`"A": {"Type": "Pass", "End": true}`)))
	f.Add([]byte(def(`"A": {"Type": "Choice", "Choices": [{"Not": {"Variable": "$.a", "IsNull": true}, "Next": "A"}]}`)))
	f.Add([]byte(def(`"A": {"Type": "Task", "Resource": "r", "End": true, "Retry": [{"ErrorEquals": ["States.ALL"]}], "Parameters": {"a.$": "$.b[1:]"}}`)))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = Parse(data)
	})
}
