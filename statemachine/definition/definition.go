package definition

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// FunctionARNPlaceholder stands for the deployer function's ARN in the
// committed definition (the Resource of every Task state).
const FunctionARNPlaceholder = "${DeployerFunctionArn}"

//go:embed definition.asl.json
var raw []byte

// JSON returns the committed definition, with FunctionARNPlaceholder in
// place of the function ARN. The caller owns the returned slice.
func JSON() []byte { return bytes.Clone(raw) }

// Render returns the definition with every FunctionARNPlaceholder replaced
// by functionARN, escaped as a JSON string so the result is valid JSON
// whatever the ARN holds.
func Render(functionARN string) []byte {
	quoted, _ := json.Marshal(functionARN) // marshalling a string cannot fail
	escaped := string(quoted[1 : len(quoted)-1])
	return []byte(strings.ReplaceAll(string(raw), FunctionARNPlaceholder, escaped))
}

// Format returns a definition in the committed form: parsed, keys sorted,
// two-space indentation, no HTML escaping, a trailing newline. It fails on
// anything that is not one JSON object.
func Format(def []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(def))
	dec.UseNumber()
	var v map[string]interface{}
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("format definition: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("format definition: data after the JSON object")
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("format definition: %w", err)
	}
	return b.Bytes(), nil
}

// Machine is a parsed state machine definition: the subset of the Amazon
// States Language (JSONPath query language) that ferry's definition uses.
// Parse refuses any field it does not model, so a consumer that handles
// every field of Machine handles the whole definition.
type Machine struct {
	Comment        string           `json:"Comment,omitempty"`
	StartAt        string           `json:"StartAt"`
	TimeoutSeconds int              `json:"TimeoutSeconds,omitempty"`
	States         map[string]State `json:"States"`
}

// State is one state of a Machine. Which fields are set depends on Type
// (Task, Choice, Wait, Pass, Succeed, Fail).
type State struct {
	Type    string `json:"Type"`
	Comment string `json:"Comment,omitempty"`
	Next    string `json:"Next,omitempty"`
	End     bool   `json:"End,omitempty"`

	// Task.
	Resource       string                     `json:"Resource,omitempty"`
	Parameters     map[string]json.RawMessage `json:"Parameters,omitempty"`
	TimeoutSeconds int                        `json:"TimeoutSeconds,omitempty"`
	Retry          []Retrier                  `json:"Retry,omitempty"`
	Catch          []Catcher                  `json:"Catch,omitempty"`

	// Input and output processing (Task, Pass, Wait, Choice). A nil
	// ResultPath means the default, "$".
	InputPath  *string         `json:"InputPath,omitempty"`
	OutputPath *string         `json:"OutputPath,omitempty"`
	ResultPath *string         `json:"ResultPath,omitempty"`
	Result     json.RawMessage `json:"Result,omitempty"`

	// Choice.
	Choices []ChoiceRule `json:"Choices,omitempty"`
	Default string       `json:"Default,omitempty"`

	// Wait.
	Seconds       *int   `json:"Seconds,omitempty"`
	SecondsPath   string `json:"SecondsPath,omitempty"`
	Timestamp     string `json:"Timestamp,omitempty"`
	TimestampPath string `json:"TimestampPath,omitempty"`

	// Fail.
	Error     string `json:"Error,omitempty"`
	ErrorPath string `json:"ErrorPath,omitempty"`
	Cause     string `json:"Cause,omitempty"`
	CausePath string `json:"CausePath,omitempty"`

	// Task and Map: the result's selection.
	ResultSelector map[string]json.RawMessage `json:"ResultSelector,omitempty"`

	// Map (inline).
	ItemsPath      string                     `json:"ItemsPath,omitempty"`
	ItemSelector   map[string]json.RawMessage `json:"ItemSelector,omitempty"`
	ItemProcessor  *Processor                 `json:"ItemProcessor,omitempty"`
	MaxConcurrency int                        `json:"MaxConcurrency,omitempty"`
}

// Processor is a Map state's ItemProcessor: the states each item runs.
type Processor struct {
	ProcessorConfig struct {
		Mode string `json:"Mode"`
	} `json:"ProcessorConfig"`
	StartAt string           `json:"StartAt"`
	States  map[string]State `json:"States"`
}

// Retrier is one entry of a Task's Retry.
type Retrier struct {
	ErrorEquals     []string `json:"ErrorEquals"`
	IntervalSeconds int      `json:"IntervalSeconds,omitempty"`
	MaxAttempts     *int     `json:"MaxAttempts,omitempty"`
	BackoffRate     float64  `json:"BackoffRate,omitempty"`
	MaxDelaySeconds int      `json:"MaxDelaySeconds,omitempty"`
}

// Catcher is one entry of a Task's Catch.
type Catcher struct {
	ErrorEquals []string `json:"ErrorEquals"`
	Next        string   `json:"Next"`
	ResultPath  *string  `json:"ResultPath,omitempty"`
}

// ChoiceRule is one rule of a Choice state, or a nested rule of And, Or or
// Not (which have no Next). A comparison rule has a Variable, an Operator
// (the comparison's field name, e.g. "BooleanEquals", "IsPresent",
// "NumericLessThan") and its Operand as raw JSON.
type ChoiceRule struct {
	Variable string
	Operator string
	Operand  json.RawMessage
	And      []ChoiceRule
	Or       []ChoiceRule
	Not      *ChoiceRule
	Next     string
}

// comparisonOperators are the Choice comparison fields of the Amazon States
// Language.
var comparisonOperators = func() map[string]bool {
	m := map[string]bool{}
	for _, op := range []string{
		"BooleanEquals", "BooleanEqualsPath",
		"IsBoolean", "IsNull", "IsNumeric", "IsPresent", "IsString", "IsTimestamp",
		"NumericEquals", "NumericEqualsPath", "NumericGreaterThan", "NumericGreaterThanPath",
		"NumericGreaterThanEquals", "NumericGreaterThanEqualsPath", "NumericLessThan", "NumericLessThanPath",
		"NumericLessThanEquals", "NumericLessThanEqualsPath",
		"StringEquals", "StringEqualsPath", "StringGreaterThan", "StringGreaterThanPath",
		"StringGreaterThanEquals", "StringGreaterThanEqualsPath", "StringLessThan", "StringLessThanPath",
		"StringLessThanEquals", "StringLessThanEqualsPath", "StringMatches",
		"TimestampEquals", "TimestampEqualsPath", "TimestampGreaterThan", "TimestampGreaterThanPath",
		"TimestampGreaterThanEquals", "TimestampGreaterThanEqualsPath", "TimestampLessThan", "TimestampLessThanPath",
		"TimestampLessThanEquals", "TimestampLessThanEqualsPath",
	} {
		m[op] = true
	}
	return m
}()

// UnmarshalJSON decodes a Choice rule, refusing unknown fields and rules
// that are not exactly one of a comparison, And, Or or Not.
func (r *ChoiceRule) UnmarshalJSON(b []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return fmt.Errorf("choice rule: %w", err)
	}
	*r = ChoiceRule{}
	kinds := 0
	for _, k := range sortedKeys(fields) {
		v := fields[k]
		var err error
		switch {
		case k == "Variable":
			err = json.Unmarshal(v, &r.Variable)
		case k == "Next":
			err = json.Unmarshal(v, &r.Next)
		case k == "And":
			kinds++
			err = json.Unmarshal(v, &r.And)
		case k == "Or":
			kinds++
			err = json.Unmarshal(v, &r.Or)
		case k == "Not":
			kinds++
			r.Not = new(ChoiceRule)
			err = json.Unmarshal(v, r.Not)
		case comparisonOperators[k]:
			kinds++
			r.Operator, r.Operand = k, append(json.RawMessage(nil), v...)
		default:
			return fmt.Errorf("choice rule: unknown field %q", k)
		}
		if err != nil {
			return fmt.Errorf("choice rule: %s: %w", k, err)
		}
	}
	if kinds != 1 {
		return fmt.Errorf("choice rule: has %d of comparison, And, Or, Not; want exactly 1", kinds)
	}
	if r.Operator != "" && r.Variable == "" {
		return fmt.Errorf("choice rule: %s without Variable", r.Operator)
	}
	return nil
}

// MarshalJSON encodes a Choice rule in the Amazon States Language form.
func (r ChoiceRule) MarshalJSON() ([]byte, error) {
	m := map[string]interface{}{}
	if r.Variable != "" {
		m["Variable"] = r.Variable
	}
	if r.Operator != "" {
		m[r.Operator] = r.Operand
	}
	if r.And != nil {
		m["And"] = r.And
	}
	if r.Or != nil {
		m["Or"] = r.Or
	}
	if r.Not != nil {
		m["Not"] = r.Not
	}
	if r.Next != "" {
		m["Next"] = r.Next
	}
	return json.Marshal(m)
}

// Parse parses the committed definition (JSON()).
func Parse() (*Machine, error) { return ParseBytes(raw) }

// ParseBytes parses a definition, refusing fields ferry's model does not
// know, a StartAt or a transition naming a state that does not exist.
func ParseBytes(def []byte) (*Machine, error) {
	dec := json.NewDecoder(bytes.NewReader(def))
	dec.DisallowUnknownFields()
	var m Machine
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("parse definition: %w", err)
	}
	if err := checkGraph(m.StartAt, m.States); err != nil {
		return nil, err
	}
	return &m, nil
}

// checkGraph checks that startAt and every transition of states (and of
// their Map processors, each within its own) name a state.
func checkGraph(startAt string, states map[string]State) error {
	if _, ok := states[startAt]; !ok {
		return fmt.Errorf("parse definition: StartAt %q is not a state", startAt)
	}
	for _, name := range sortedKeys(states) {
		for _, next := range states[name].Successors() {
			if _, ok := states[next]; !ok {
				return fmt.Errorf("parse definition: state %q transitions to %q, which is not a state", name, next)
			}
		}
		if p := states[name].ItemProcessor; p != nil {
			if err := checkGraph(p.StartAt, p.States); err != nil {
				return err
			}
		}
	}
	return nil
}

// AllStates returns every state of the machine by name, those of its Map
// processors included (state names are unique in a machine).
func (m *Machine) AllStates() map[string]State {
	out := map[string]State{}
	var add func(states map[string]State)
	add = func(states map[string]State) {
		for name, s := range states {
			out[name] = s
			if s.ItemProcessor != nil {
				add(s.ItemProcessor.States)
			}
		}
	}
	add(m.States)
	return out
}

// StateNames returns the names of the machine's states, sorted.
func (m *Machine) StateNames() []string { return sortedKeys(m.States) }

// Successors returns the names of every state s can transition to (Next,
// the Choice rules' Next and Default, the Catch targets), without
// duplicates, in that order.
func (s State) Successors() []string {
	var out []string
	seen := map[string]bool{}
	add := func(n string) {
		if n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	add(s.Next)
	for _, c := range s.Choices {
		add(c.Next)
	}
	add(s.Default)
	for _, c := range s.Catch {
		add(c.Next)
	}
	return out
}

// Terminal says whether s ends an execution (Succeed, Fail, or End).
func (s State) Terminal() bool { return s.Type == "Succeed" || s.Type == "Fail" || s.End }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
