package shape

import (
	"encoding/json"
	"github.com/ferryhq/ferry/internal/release"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/statemachine/definition"
)

func TestStateNamesAreUniqueAndKnown(t *testing.T) {
	m := Deploy()
	names := m.States()
	for i, n := range names {
		assert.NotEmpty(t, n)
		assert.NotContains(t, names[:i], n, "state %q is declared twice", n)
	}
	assert.ElementsMatch(t, execution.Tasks(), m.TaskNames(), "the tasks are execution.Tasks()")
	for _, w := range m.Waves {
		for _, n := range w.States() {
			assert.NotContains(t, names, n, "state %q of wave %s is declared twice", n, w.Name)
		}
	}
	var ends []string
	for _, e := range m.Ends {
		ends = append(ends, e.Name)
		succeeds := e.Name == execution.EndSuccess || e.Name == execution.EndAnswered
		assert.Equal(t, !succeeds, e.Fail, "only %s and %s succeed", execution.EndSuccess, execution.EndAnswered)
	}
	assert.Equal(t, []string{execution.EndSuccess, execution.EndFailureClean, execution.EndFailureDirty, execution.EndAnswered}, ends)
}

func TestEveryTransitionNamesAState(t *testing.T) {
	m := Deploy()
	states := m.States()
	var targets []string
	for _, task := range m.Tasks {
		targets = append(targets, task.Next)
		for _, c := range task.Catches() {
			targets = append(targets, c.Next)
		}
	}
	for _, l := range m.Loops {
		for _, r := range l.Choice.Rules {
			targets = append(targets, r.Next)
		}
		targets = append(targets, l.Choice.Default, l.Wait.Next, l.Bad.Next)
	}
	for _, n := range targets {
		assert.Contains(t, states, n)
	}
}

func TestCatchesNameFailures(t *testing.T) {
	for _, task := range Deploy().Tasks {
		assert.NotEmpty(t, task.Catch, "%s names the errors it expects", task.Name)
		assert.Empty(t, task.Otherwise.Errors, "%s: Otherwise catches States.ALL only", task.Name)
		for _, c := range task.Catch {
			require.NotEmpty(t, c.Errors, task.Name)
			for _, e := range c.Errors {
				assert.Contains(t, failure.Names(), e, task.Name)
			}
		}
		all := task.Catches()
		assert.Equal(t, []string{ErrorAll}, all[len(all)-1].Errors, task.Name)
		assert.Len(t, all, len(task.Catch)+1, task.Name)
	}
}

func TestTestsHaveWords(t *testing.T) {
	for _, l := range Deploy().Loops {
		for _, r := range l.Choice.Rules {
			assert.Contains(t, testWords, r.Test)
		}
	}
	assert.Equal(t, "Test(0)", Test(0).String())
}

// aslTests are the Amazon States Language comparisons of the Choice tests.
var aslTests = map[Test]struct{ operator, operand string }{
	Absent:     {"IsPresent", "false"},
	NotBoolean: {"IsBoolean", "false"},
	True:       {"BooleanEquals", "true"},
	NotNumeric: {"IsNumeric", "false"},
	Negative:   {"NumericLessThan", "0"},
}

// TestDefinitionRoutesAsDeclared checks, without the CDK, that the
// committed definition (which package statemachine synthesizes from the
// shape and tests byte for byte) routes every state as the shape says, so
// the docs tested against the shape say what the definition runs.
func TestDefinitionRoutesAsDeclared(t *testing.T) {
	m := Deploy()
	def, err := definition.Parse()
	require.NoError(t, err)
	assert.Equal(t, m.StartAt(), def.StartAt)
	assert.Equal(t, m.Comment, def.Comment)
	assert.ElementsMatch(t, m.States(), def.StateNames(), "the definition has exactly the shape's states")

	for _, task := range m.Tasks {
		s := def.States[task.Name]
		assert.Equal(t, "Task", s.Type, task.Name)
		assert.Equal(t, task.Comment, s.Comment, task.Name)
		assert.Equal(t, task.Next, s.Next, task.Name)
		var catches []definition.Catcher
		for _, c := range task.Catches() {
			catches = append(catches, definition.Catcher{ErrorEquals: c.Errors, Next: c.Next, ResultPath: ptr(PathError)})
		}
		assert.Equal(t, catches, s.Catch, task.Name)
		r := m.Retry
		assert.Equal(t, []definition.Retrier{{ErrorEquals: r.Errors, IntervalSeconds: r.IntervalSeconds,
			MaxAttempts: &r.MaxAttempts, BackoffRate: r.BackoffRate, MaxDelaySeconds: r.MaxDelaySeconds}}, s.Retry, task.Name)
		if task.ResultPath == "" {
			assert.Nil(t, s.ResultPath, task.Name)
		} else {
			assert.Equal(t, ptr(task.ResultPath), s.ResultPath, task.Name)
		}
	}

	for _, l := range m.Loops {
		choice := def.States[l.Choice.Name]
		assert.Equal(t, "Choice", choice.Type)
		assert.Equal(t, l.Choice.Comment, choice.Comment)
		assert.Equal(t, l.Choice.Default, choice.Default)
		var rules []definition.ChoiceRule
		for _, r := range l.Choice.Rules {
			c := aslTests[r.Test]
			rules = append(rules, definition.ChoiceRule{Variable: r.Variable, Operator: c.operator,
				Operand: json.RawMessage(c.operand), Next: r.Next})
		}
		assert.Equal(t, rules, choice.Choices)

		wait := def.States[l.Wait.Name]
		assert.Equal(t, definition.State{Type: "Wait", Comment: l.Wait.Comment, SecondsPath: l.Wait.SecondsPath, Next: l.Wait.Next}, wait)

		pass := def.States[l.Bad.Name]
		p := l.Bad
		assert.Equal(t, "Pass", pass.Type)
		assert.Equal(t, p.Comment, pass.Comment)
		assert.Equal(t, p.Next, pass.Next)
		assert.Equal(t, ptr(p.ResultPath), pass.ResultPath)
		assert.JSONEq(t, string(mustJSON(t, map[string]string{"Error": p.Error, "Cause": p.Cause})), string(pass.Result))
	}

	for _, e := range m.Ends {
		want := definition.State{Type: "Succeed", Comment: e.Comment}
		if e.Fail {
			want = definition.State{Type: "Fail", Comment: e.Comment, ErrorPath: PathError + ".Error", CausePath: PathError + ".Cause"}
		}
		assert.Equal(t, want, def.States[e.Name], e.Name)
	}
}

func TestMachineLookups(t *testing.T) {
	m := Deploy()
	_, ok := m.Task("Nope")
	assert.False(t, ok)
	assert.Equal(t, StateQuery, m.StartAt())
	assert.Equal(t, execution.TaskValidate, m.Next(StateQuery), "a release goes to Validate")
	assert.Equal(t, execution.TaskLock, m.Next(execution.TaskValidate))
	assert.Equal(t, StateWaitForHealthy, m.Next(StateHealthy))
	assert.Equal(t, execution.TaskCheckHealthy, m.Next(StateWaitForHealthy))
	assert.Equal(t, execution.TaskCleanUpFailure, m.Next(StateBadHealthReport))
	assert.Equal(t, StateRetired, m.Next(execution.TaskCleanUpSuccess))
	assert.Equal(t, StateWaitForRetire, m.Next(StateRetired))
	assert.Equal(t, execution.TaskCleanUpSuccess, m.Next(StateWaitForRetire))
	assert.Equal(t, execution.EndFailureDirty, m.Next(StateBadRetireReport))
	l, ok := m.Loop(StateRetired)
	assert.True(t, ok)
	assert.Equal(t, StateWaitForRetire, l.Wait.Name)
	assert.Empty(t, m.Next(execution.EndSuccess))
	assert.True(t, slices.Contains(m.States(), execution.EndFailureDirty))

	// Each call is a new value.
	m.Tasks[0].Catch[0].Errors[0] = "changed"
	assert.Equal(t, failure.NameBadRelease, Deploy().Tasks[0].Catch[0].Errors[0])
}

func ptr(s string) *string { return &s }

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// TestEntryKeysAreNoReleaseKeys: the entry Choice tells a query from a
// release by a top-level key; a release that had one (a field named like
// it) would be taken for that query and never deployed. No field of a
// release may be named like an entry rule's variable.
func TestEntryKeysAreNoReleaseKeys(t *testing.T) {
	fields := map[string]bool{}
	rt := reflect.TypeFor[release.Release]()
	for i := range rt.NumField() {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		fields[name] = true
	}
	require.True(t, fields["project_name"], "the release's JSON names are read")
	m := Deploy()
	require.NotNil(t, m.Entry)
	for _, r := range m.Entry.Rules {
		key, ok := strings.CutPrefix(r.Variable, "$.")
		require.True(t, ok, r.Variable)
		assert.NotContains(t, key, ".", "%s is a top-level key", r.Variable)
		assert.False(t, fields[key], "release field %q would send a release to %s", key, r.Next)
	}
}
