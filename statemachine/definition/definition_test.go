package definition

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
)

func parse(t *testing.T) *Machine {
	t.Helper()
	m, err := Parse()
	require.NoError(t, err)
	return m
}

// tasks are the names of the states that invoke the deployer function
// directly (a Map's processor's included), sorted.
func tasks(m *Machine) []string {
	var out []string
	all := m.AllStates()
	for _, n := range sortedKeys(all) {
		if all[n].Type == "Task" && all[n].Resource == FunctionARNPlaceholder {
			out = append(out, n)
		}
	}
	return out
}

// callbackResource is the Resource of a task that invokes the deployer
// through the callback pattern (Step Functions Developer Guide, "Wait for
// a Callback with Task Token").
const callbackResource = "arn:aws:states:::lambda:invoke.waitForTaskToken"

// reachable returns every state reachable from start, never entering the
// states in without.
func reachable(m *Machine, start string, without ...string) map[string]bool {
	seen := map[string]bool{}
	var visit func(string)
	visit = func(n string) {
		if seen[n] || slices.Contains(without, n) {
			return
		}
		seen[n] = true
		for _, next := range m.States[n].Successors() {
			visit(next)
		}
	}
	visit(start)
	return seen
}

func TestEndStates(t *testing.T) {
	m := parse(t)
	assert.Equal(t, "Query?", m.StartAt, "the entry Choice: a plan or a release")
	ends := []string{execution.EndSuccess, execution.EndFailureClean, execution.EndFailureDirty, execution.EndAnswered}
	var terminal []string
	for _, n := range m.StateNames() {
		if m.States[n].Terminal() {
			terminal = append(terminal, n)
		}
	}
	assert.ElementsMatch(t, ends, terminal, "the only terminal states are the end states")
	assert.Equal(t, "Succeed", m.States[execution.EndSuccess].Type)
	assert.Equal(t, "Succeed", m.States[execution.EndAnswered].Type)
	for _, n := range []string{execution.EndFailureClean, execution.EndFailureDirty} {
		s := m.States[n]
		assert.Equal(t, "Fail", s.Type, n)
		assert.Equal(t, "$.error.Error", s.ErrorPath, n)
		assert.Equal(t, "$.error.Cause", s.CausePath, n)
	}
	assert.Zero(t, m.TimeoutSeconds, "a machine timeout would end executions outside the three end states")
}

func TestEveryPathEnds(t *testing.T) {
	m := parse(t)
	all := reachable(m, m.StartAt)
	assert.Len(t, all, len(m.States), "every state is reachable from StartAt")
	for n := range all {
		s := m.States[n]
		if s.Terminal() {
			assert.Empty(t, s.Successors(), "terminal state %s has no successors", n)
			continue
		}
		assert.NotEmpty(t, s.Successors(), "non-terminal state %s has a successor", n)
		ends := 0
		for r := range reachable(m, n) {
			if m.States[r].Terminal() {
				ends++
			}
		}
		assert.Positive(t, ends, "an end state is reachable from %s (no trap cycle)", n)
	}
	// Every state on a cycle can leave it: the only cycle is the health
	// check loop, and CheckHealthy catches into the failure path.
	for n := range all {
		if reachable(m, n)[n] && len(m.States[n].Successors()) == 1 {
			next := m.States[n].Successors()[0]
			assert.NotEqual(t, n, next, "state %s loops on itself", n)
		}
	}
}

func TestFailurePaths(t *testing.T) {
	m := parse(t)
	tests := []struct {
		name    string
		from    string
		without []string
		cannot  string
	}{
		{"after the lock, failing clean goes through ReleaseLock", execution.TaskValidateResources, []string{execution.TaskReleaseLock}, execution.EndFailureClean},
		{"after publish, failing clean goes through ReleaseLock", execution.TaskPublish, []string{execution.TaskReleaseLock}, execution.EndFailureClean},
		{"after deploy, failing clean goes through CleanUpFailure", execution.TaskDeploy, []string{execution.TaskCleanUpFailure}, execution.EndFailureClean},
		{"after a health check, failing clean goes through CleanUpFailure", execution.TaskCheckHealthy, []string{execution.TaskCleanUpFailure}, execution.EndFailureClean},
		{"success goes through CleanUpSuccess", execution.TaskValidate, []string{execution.TaskCleanUpSuccess}, execution.EndSuccess},
		{"success never follows a failure clean up", execution.TaskCleanUpFailure, nil, execution.EndSuccess},
		{"success never follows a released lock", execution.TaskReleaseLock, nil, execution.EndSuccess},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.False(t, reachable(m, tt.from, tt.without...)[tt.cannot],
				"%s reaches %s without %v", tt.from, tt.cannot, tt.without)
		})
	}
	// Where each task's errors go.
	catchTargets := map[string][]string{
		execution.TaskValidate:          {execution.EndFailureClean},
		execution.TaskLock:              {execution.EndFailureClean, execution.TaskReleaseLock},
		execution.TaskValidateResources: {execution.TaskReleaseLock},
		execution.TaskPublish:           {execution.TaskReleaseLock},
		execution.TaskDeploy:            {execution.TaskCleanUpFailure},
		execution.TaskCheckHealthy:      {execution.TaskCleanUpFailure},
		execution.TaskCleanUpSuccess:    {execution.TaskCleanUpFailure, execution.EndFailureDirty},
		execution.TaskCleanUpFailure:    {execution.EndFailureDirty},
		execution.TaskReleaseLock:       {execution.EndFailureDirty},
	}
	for task, want := range catchTargets {
		var got []string
		for _, c := range m.States[task].Catch {
			if !slices.Contains(got, c.Next) {
				got = append(got, c.Next)
			}
		}
		assert.Equal(t, want, got, "catch targets of %s", task)
	}
	// CleanUpSuccess's catch-all is dirty: it may have deleted something.
	cs := m.States[execution.TaskCleanUpSuccess].Catch
	assert.Equal(t, execution.EndFailureDirty, cs[len(cs)-1].Next)
}

func TestEveryTaskCatchesAndRetries(t *testing.T) {
	m := parse(t)
	all := m.AllStates()
	for _, n := range tasks(m) {
		s := all[n]
		require.NotEmpty(t, s.Catch, "%s has a Catch", n)
		last := s.Catch[len(s.Catch)-1]
		assert.Equal(t, []string{"States.ALL"}, last.ErrorEquals, "%s catches States.ALL last, alone", n)
		assert.Greater(t, len(s.Catch), 1, "%s catches specific errors before States.ALL", n)
		for i, c := range s.Catch {
			require.NotNil(t, c.ResultPath, "%s catch %d stores the error", n, i)
			assert.Equal(t, "$.error", *c.ResultPath, "%s catch %d", n, i)
			if i < len(s.Catch)-1 {
				assert.NotContains(t, c.ErrorEquals, "States.ALL", "%s catch %d", n, i)
			}
		}
		require.Len(t, s.Retry, 1, "%s retries", n)
		r := s.Retry[0]
		assert.Contains(t, r.ErrorEquals, failure.NameRetryable, n)
		assert.Contains(t, r.ErrorEquals, "Lambda.TooManyRequestsException", n)
		assert.Contains(t, r.ErrorEquals, "Lambda.ServiceException", n)
		// A function that dies or runs out of its own timeout is retried:
		// Step Functions reports it as Lambda.Unknown or, named by Lambda's
		// error payload, Sandbox.Timedout.
		assert.Contains(t, r.ErrorEquals, "Lambda.Unknown", n)
		assert.Contains(t, r.ErrorEquals, lambdaTimedOut, n)
		assert.NotContains(t, r.ErrorEquals, "States.ALL", "%s retries only transient errors", n)
		require.NotNil(t, r.MaxAttempts, n)
		assert.True(t, *r.MaxAttempts >= 1 && *r.MaxAttempts <= 10, "%s MaxAttempts %d is bounded", n, *r.MaxAttempts)
		assert.Positive(t, r.IntervalSeconds, n)
		assert.GreaterOrEqual(t, r.BackoffRate, 1.0, n)
		assert.True(t, r.MaxDelaySeconds > 0 && r.MaxDelaySeconds <= 300, "%s MaxDelaySeconds %d is bounded", n, r.MaxDelaySeconds)
	}
}

// lambdaTimedOut is the errorType Lambda gives an invocation that ran out
// of the function's own timeout (AWS Lambda Developer Guide, "Troubleshoot
// invocation issues in Lambda"): a Lambda name without the Lambda. prefix.
const lambdaTimedOut = "Sandbox.Timedout"

func TestErrorNamesAreKnown(t *testing.T) {
	m := parse(t)
	known := failure.Names()
	for _, n := range m.StateNames() {
		s := m.States[n]
		var names []string
		for _, c := range s.Catch {
			names = append(names, c.ErrorEquals...)
		}
		for _, r := range s.Retry {
			names = append(names, r.ErrorEquals...)
		}
		for _, e := range names {
			ok := slices.Contains(known, e) || strings.HasPrefix(e, "States.") || strings.HasPrefix(e, "Lambda.") || e == lambdaTimedOut
			assert.True(t, ok, "state %s names error %q, which is not in failure.Names() nor a States.*/Lambda.* name nor %s", n, e, lambdaTimedOut)
		}
	}
	// A Pass state that records an error uses a known name too.
	var bad struct{ Error, Cause string }
	require.NoError(t, json.Unmarshal(m.States["BadHealthReport"].Result, &bad))
	assert.Contains(t, known, bad.Error)
	assert.NotEmpty(t, bad.Cause)
}

func TestTasksMatchExecution(t *testing.T) {
	m := parse(t)
	all := m.AllStates()
	want := slices.DeleteFunc(execution.Tasks(), func(n string) bool { return n == execution.TaskRequestApproval })
	sort.Strings(want)
	assert.Equal(t, want, tasks(m), "the Task states invoking the deployer are execution.Tasks() but the callback's")

	// The callback invokes the deployer with the same request, and the
	// task token.
	approval := all["AwaitApproval"]
	assert.Equal(t, callbackResource, approval.Resource)
	assert.JSONEq(t, `"`+FunctionARNPlaceholder+`"`, string(approval.Parameters["FunctionName"]))
	var payload map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(approval.Parameters["Payload"], &payload))
	assert.JSONEq(t, `"`+execution.TaskRequestApproval+`"`, string(payload["task"]))
	assert.JSONEq(t, `"$$.Task.Token"`, string(payload["task_token.$"]))
	assert.Positive(t, approval.TimeoutSeconds, "an approval's wait is bounded: the gates and halts are checked again")

	for _, n := range tasks(m) {
		s := all[n]
		assert.Equal(t, FunctionARNPlaceholder, s.Resource, n)
		assert.JSONEq(t, `"`+n+`"`, string(s.Parameters["task"]), "%s invokes the Lambda with its own name", n)
		assert.JSONEq(t, `"$"`, string(s.Parameters["input.$"]), n)
		assert.JSONEq(t, `{"id.$": "$$.Execution.Id", "name.$": "$$.Execution.Name", "start_time.$": "$$.Execution.StartTime",
			"retry_count.$": "$$.State.RetryCount"}`,
			string(s.Parameters["execution"]), n)
		assert.Len(t, s.Parameters, 3, n)
		// The payload decodes as the execution.Request the Lambda reads.
		var req execution.Request
		require.NoError(t, json.Unmarshal([]byte(`{"task":"`+n+`","input":{},"execution":{"id":"i","name":"n","start_time":"2024-01-02T03:04:05Z","retry_count":2}}`), &req))
		assert.Equal(t, n, req.Task)
		assert.Equal(t, 2, req.Execution.RetryCount)
	}
}

func TestStateDocumentPaths(t *testing.T) {
	m := parse(t)
	resultPaths := map[string]string{execution.TaskValidate: "$", execution.TaskCheckHealthy: "$.health", execution.TaskNextStep: "$.health"}
	all := m.AllStates()
	for _, n := range tasks(m) {
		got := "$"
		if p := all[n].ResultPath; p != nil {
			got = *p
		}
		want, ok := resultPaths[n]
		if !ok {
			want = "$"
		}
		assert.Equal(t, want, got, "ResultPath of %s", n)
	}
	assert.Equal(t, "$.health.wait_seconds", m.States["WaitForHealthy"].SecondsPath)
	assert.Equal(t, execution.TaskCheckHealthy, m.States["WaitForHealthy"].Next)
	assert.Equal(t, "ResourcesValid?", m.States[execution.TaskValidateResources].Next, "ValidateResources reports whether it checked everything")
	assert.Equal(t, "$.resources.wait_seconds", m.States["WaitForResources"].SecondsPath)
	assert.Equal(t, execution.TaskValidateResources, m.States["WaitForResources"].Next, "throttled, ValidateResources runs again after the wait")
	assert.Contains(t, m.States["ResourcesValid?"].Choices, ChoiceRule{Variable: "$.resources.done", Operator: "BooleanEquals", Operand: json.RawMessage("true"), Next: execution.TaskPublish})
	assert.Equal(t, "Deployed?", m.States[execution.TaskDeploy].Next, "Deploy reports whether its groups are made")
	assert.Equal(t, "$.deploy.wait_seconds", m.States["WaitForDeploy"].SecondsPath)
	assert.Equal(t, execution.TaskDeploy, m.States["WaitForDeploy"].Next, "throttled, Deploy runs again after the wait")
	deployed := m.States["Deployed?"]
	assert.Equal(t, "WaitForDeploy", deployed.Default)
	assert.Contains(t, deployed.Choices, ChoiceRule{Variable: "$.deploy.done", Operator: "BooleanEquals", Operand: json.RawMessage("true"), Next: "Healthy?"},
		"Deploy's first wait comes from its health report")
	assert.Equal(t, "Healthy?", m.States[execution.TaskCheckHealthy].Next)

	choice := m.States["Healthy?"]
	assert.Equal(t, "WaitForHealthy", choice.Default)
	var toBake []ChoiceRule
	for _, c := range choice.Choices {
		if c.Next == execution.TaskBake {
			toBake = append(toBake, c)
		}
	}
	require.Len(t, toBake, 1)
	assert.Equal(t, ChoiceRule{Variable: "$.health.healthy", Operator: "BooleanEquals", Operand: json.RawMessage("true"), Next: execution.TaskBake}, toBake[0])
	// The wait is reached only when healthy is false and wait_seconds is a
	// number: every rule before the default guards a path the Wait reads.
	guarded := map[string]bool{}
	for _, c := range choice.Choices {
		if c.Next == "BadHealthReport" {
			guarded[c.Variable+" "+c.Operator] = true
		}
	}
	for _, g := range []string{"$.health.healthy IsPresent", "$.health.healthy IsBoolean", "$.health.wait_seconds IsPresent", "$.health.wait_seconds IsNumeric", "$.health.wait_seconds NumericLessThan"} {
		assert.True(t, guarded[g], "Healthy? guards %s", g)
	}
	assert.Equal(t, execution.TaskCleanUpFailure, m.States["BadHealthReport"].Next)
}

// The state documents the handlers produce drive the choice as intended.
func TestHealthDocumentShape(t *testing.T) {
	b, err := json.Marshal(execution.State{Health: &execution.Health{WaitSeconds: 30}})
	require.NoError(t, err)
	var doc struct {
		Health map[string]json.RawMessage `json:"health"`
	}
	require.NoError(t, json.Unmarshal(b, &doc))
	assert.JSONEq(t, "false", string(doc.Health["healthy"]), "Deploy's health report has healthy=false")
	assert.JSONEq(t, "30", string(doc.Health["wait_seconds"]))
}

func TestRender(t *testing.T) {
	tests := []struct{ name, arn string }{
		{"plain", "arn:aws:lambda:eu-west-1:123456789012:function:ferry-deployer"},
		{"needs escaping", `arn:"odd"\name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := Render(tt.arn)
			assert.NotContains(t, string(out), FunctionARNPlaceholder)
			m, err := ParseBytes(out)
			require.NoError(t, err)
			all := m.AllStates()
			for _, n := range tasks(m) {
				assert.Equal(t, tt.arn, all[n].Resource, n)
			}
			arn, err := json.Marshal(tt.arn)
			require.NoError(t, err)
			assert.JSONEq(t, string(arn), string(all["AwaitApproval"].Parameters["FunctionName"]))
		})
	}
	assert.Contains(t, string(JSON()), FunctionARNPlaceholder, "Render does not change the embedded definition")
}

func TestFormatIsStable(t *testing.T) {
	out, err := Format(JSON())
	require.NoError(t, err)
	assert.Equal(t, string(JSON()), string(out), "the committed definition is in Format's form")

	_, err = Format([]byte(`{"a":1} {"b":2}`))
	assert.ErrorContains(t, err, "after the JSON object")
	_, err = Format([]byte(`[1]`))
	assert.Error(t, err)
}

func TestParseBytesRefuses(t *testing.T) {
	tests := []struct{ name, def, want string }{
		{"not JSON", `{`, "parse definition"},
		{"unknown field", `{"StartAt":"A","States":{"A":{"Type":"Succeed","Bogus":1}}}`, "Bogus"},
		{"missing start", `{"StartAt":"B","States":{"A":{"Type":"Succeed"}}}`, `StartAt "B"`},
		{"dangling next", `{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"B"}}}`, `"B", which is not a state`},
		{"dangling catch", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"r","End":true,"Catch":[{"ErrorEquals":["States.ALL"],"Next":"X"}]}}}`, `"X"`},
		{"two operators", `{"StartAt":"A","States":{"A":{"Type":"Choice","Choices":[{"Variable":"$.a","IsPresent":true,"IsNull":true,"Next":"A"}]}}}`, "exactly 1"},
		{"unknown operator", `{"StartAt":"A","States":{"A":{"Type":"Choice","Choices":[{"Variable":"$.a","IsPurple":true,"Next":"A"}]}}}`, "IsPurple"},
		{"operator without variable", `{"StartAt":"A","States":{"A":{"Type":"Choice","Choices":[{"IsPresent":true,"Next":"A"}]}}}`, "without Variable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseBytes([]byte(tt.def))
			assert.ErrorContains(t, err, tt.want)
		})
	}
}

func TestChoiceRuleRoundTrip(t *testing.T) {
	in := `{"And":[{"Variable":"$.a","IsPresent":true},{"Not":{"Variable":"$.b","NumericLessThan":3}}],"Next":"X"}`
	var r ChoiceRule
	require.NoError(t, json.Unmarshal([]byte(in), &r))
	assert.Len(t, r.And, 2)
	require.NotNil(t, r.And[1].Not)
	assert.Equal(t, "NumericLessThan", r.And[1].Not.Operator)
	out, err := json.Marshal(r)
	require.NoError(t, err)
	assert.JSONEq(t, in, string(out))
}

func FuzzParseBytes(f *testing.F) {
	f.Add(JSON())
	f.Add([]byte(`{"StartAt":"A","States":{"A":{"Type":"Choice","Choices":[{"Not":{"Or":[]},"Next":"A"}]}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseBytes(b)
		if err == nil {
			_ = m.StateNames()
		}
		_, _ = Format(b)
	})
}

// repoRoot is the directory holding go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, dir, parent, "go.mod not found above the test's directory")
		dir = parent
	}
}

func aslValidator(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(repoRoot(t), "infra", "node_modules", ".bin", "asl-validator")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("asl-validator is not installed at %s: run `make tools` (npm ci --prefix infra)", bin)
	}
	return bin
}

func TestASLValidator(t *testing.T) {
	bin := aslValidator(t)
	dir := t.TempDir()
	broken := filepath.Join(dir, "broken.asl.json")
	require.NoError(t, os.WriteFile(broken, []byte(`{"StartAt":"A","States":{"A":{"Type":"Task","Next":"Nowhere"}}}`), 0o600))
	tests := []struct {
		name  string
		path  string
		valid bool
	}{
		{"the committed definition", filepath.Join(repoRoot(t), "statemachine", "definition", "definition.asl.json"), true},
		{"a broken definition (the validator can fail)", broken, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := exec.Command(bin, "--json-path", tt.path).CombinedOutput()
			if tt.valid {
				assert.NoError(t, err, "asl-validator: %s", out)
			} else {
				assert.Error(t, err, "asl-validator accepted %s: %s", tt.path, out)
			}
		})
	}
}
