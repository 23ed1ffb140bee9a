package asl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"
)

// StateType is the Type of a state.
type StateType string

// The state types the interpreter runs.
const (
	TypeTask    StateType = "Task"
	TypePass    StateType = "Pass"
	TypeChoice  StateType = "Choice"
	TypeWait    StateType = "Wait"
	TypeSucceed StateType = "Succeed"
	TypeFail    StateType = "Fail"
	TypeMap     StateType = "Map"
)

// Limits of the States Language that Parse enforces.
const (
	maxStateNameLen = 80
	maxSeconds      = 99999999
)

// Machine is a parsed, validated state machine definition. It is immutable
// and safe to run many executions of at once.
type Machine struct {
	comment string
	startAt string
	timeout time.Duration
	states  map[string]*state
	order   []string
}

// StartAt returns the name of the first state.
func (m *Machine) StartAt() string { return m.startAt }

// StateNames returns every state's name in definition order.
func (m *Machine) StateNames() []string { return append([]string(nil), m.order...) }

// StateType returns the type of the named state, and false if the machine
// has no such state.
func (m *Machine) StateType(name string) (StateType, bool) {
	s, ok := m.states[name]
	if !ok {
		return "", false
	}
	return s.typ, true
}

// ioPath is an InputPath, OutputPath or ResultPath: a path, or null.
type ioPath struct {
	p    *path
	null bool
}

var rootPath = &path{raw: "$"}

type retrier struct {
	errorEquals []string
	interval    float64
	maxAttempts int
	backoff     float64
	maxDelay    float64 // seconds; 0 means no cap
}

type catcher struct {
	errorEquals []string
	next        string
	resultPath  ioPath
}

type state struct {
	name string
	typ  StateType
	next string
	end  bool

	inputPath, outputPath, resultPath ioPath
	parameters, resultSelector        *template
	result                            any
	hasResult                         bool

	resource       string
	timeoutSeconds int64
	retry          []retrier
	catch          []catcher

	choices     []*choiceRule
	defaultNext string

	seconds       *int64
	secondsPath   *path
	timestamp     *time.Time
	timestampPath *path

	errorName, cause     string
	errorPath, causePath *path

	mapped *mapState
}

// fields allowed per state type, beyond Type and Comment.
var allowedFields = map[StateType][]string{
	TypeTask: {"Next", "End", "InputPath", "OutputPath", "ResultPath", "Parameters",
		"ResultSelector", "Retry", "Catch", "Resource", "TimeoutSeconds"},
	TypePass:    {"Next", "End", "InputPath", "OutputPath", "ResultPath", "Parameters", "Result"},
	TypeChoice:  {"InputPath", "OutputPath", "Choices", "Default"},
	TypeWait:    {"Next", "End", "InputPath", "OutputPath", "Seconds", "SecondsPath", "Timestamp", "TimestampPath"},
	TypeSucceed: {"InputPath", "OutputPath"},
	TypeFail:    {"Error", "Cause", "ErrorPath", "CausePath"},
	TypeMap: {"Next", "End", "InputPath", "OutputPath", "ResultPath", "ResultSelector", "ItemsPath",
		"ItemSelector", "ItemProcessor", "MaxConcurrency", "Retry", "Catch"},
}

// unsupportedFields are States Language fields the interpreter refuses with
// a clearer message than "unknown field".
var unsupportedFields = map[string]string{
	"HeartbeatSeconds":           "heartbeats are not supported",
	"HeartbeatSecondsPath":       "heartbeats are not supported",
	"TimeoutSecondsPath":         "use TimeoutSeconds",
	"Credentials":                "task credentials are not supported",
	"Arguments":                  "JSONata is not supported",
	"Output":                     "JSONata is not supported",
	"Assign":                     "variables are not supported",
	"QueryLanguage":              "JSONata is not supported",
	"Iterator":                   "use ItemProcessor",
	"ItemReader":                 "distributed Map is not supported",
	"ItemBatcher":                "distributed Map is not supported",
	"ResultWriter":               "distributed Map is not supported",
	"ToleratedFailureCount":      "tolerated failures are not supported",
	"ToleratedFailurePercentage": "tolerated failures are not supported",
}

// Parse parses and validates a state machine definition (Amazon States
// Language JSON). Every problem is reported with the state and field it is
// in; the first problem found is returned.
func Parse(data []byte) (*Machine, error) {
	top, err := objectOf(data, "definition")
	if err != nil {
		return nil, err
	}
	o := &fieldSet{where: "definition", m: top}
	if err := o.only("StartAt", "States", "Comment", "Version", "TimeoutSeconds", "QueryLanguage"); err != nil {
		return nil, err
	}
	m := &Machine{states: map[string]*state{}}
	if m.startAt, err = o.str("StartAt", true); err != nil {
		return nil, err
	}
	if m.comment, err = o.str("Comment", false); err != nil {
		return nil, err
	}
	if _, err = o.str("Version", false); err != nil {
		return nil, err
	}
	if ql, err := o.str("QueryLanguage", false); err != nil {
		return nil, err
	} else if ql != "" && ql != "JSONPath" {
		return nil, fmt.Errorf("definition: QueryLanguage %q is not supported (only JSONPath)", ql)
	}
	if t, ok, err := o.integer("TimeoutSeconds", 1, maxSeconds); err != nil {
		return nil, err
	} else if ok {
		m.timeout = time.Duration(t) * time.Second
	}
	if err := m.parseStates(top, "definition"); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, s := range m.all() {
		if seen[s.name] {
			return nil, fmt.Errorf("state %q is named twice: a state's name must be unique in the machine, Map processors included", s.name)
		}
		seen[s.name] = true
	}
	return m, nil
}

// all returns every state of m, those of its Maps' processors included.
func (m *Machine) all() []*state {
	var out []*state
	for _, name := range m.order {
		s := m.states[name]
		out = append(out, s)
		if s.mapped != nil {
			out = append(out, s.mapped.processor.all()...)
		}
	}
	return out
}

// parseStates parses and validates the States of top (a definition, or a
// Map's ItemProcessor) into m: every state, and the graph from StartAt.
func (m *Machine) parseStates(top map[string]json.RawMessage, where string) error {
	raw, ok := top["States"]
	if !ok {
		return fmt.Errorf("%s: States is required", where)
	}
	names, err := orderedKeys(raw)
	if err != nil {
		return fmt.Errorf("%s: States: %w", where, err)
	}
	statesObj, err := objectOf(raw, where+": States")
	if err != nil {
		return err
	}
	if len(names) == 0 {
		return fmt.Errorf("%s: States must have at least one state", where)
	}
	for _, name := range names {
		s, err := parseState(name, statesObj[name])
		if err != nil {
			return err
		}
		m.states[name] = s
		m.order = append(m.order, name)
	}
	return m.validateGraph()
}

// validateGraph checks that every transition names a state and that every
// state is reachable from StartAt.
func (m *Machine) validateGraph() error {
	if _, ok := m.states[m.startAt]; !ok {
		return fmt.Errorf("definition: StartAt %q names no state", m.startAt)
	}
	for _, name := range m.order {
		for _, t := range m.states[name].transitions() {
			if _, ok := m.states[t.to]; !ok {
				return fmt.Errorf("state %q: %s %q names no state", name, t.field, t.to)
			}
		}
	}
	seen := map[string]bool{m.startAt: true}
	queue := []string{m.startAt}
	for len(queue) > 0 {
		s := m.states[queue[0]]
		queue = queue[1:]
		for _, t := range s.transitions() {
			if !seen[t.to] {
				seen[t.to] = true
				queue = append(queue, t.to)
			}
		}
	}
	for _, name := range m.order {
		if !seen[name] {
			return fmt.Errorf("state %q is not reachable from StartAt %q", name, m.startAt)
		}
	}
	return nil
}

type transition struct{ field, to string }

func (s *state) transitions() []transition {
	var out []transition
	if s.next != "" {
		out = append(out, transition{"Next", s.next})
	}
	for i, c := range s.catch {
		out = append(out, transition{fmt.Sprintf("Catch[%d].Next", i), c.next})
	}
	for i, c := range s.choices {
		out = append(out, transition{fmt.Sprintf("Choices[%d].Next", i), c.next})
	}
	if s.defaultNext != "" {
		out = append(out, transition{"Default", s.defaultNext})
	}
	return out
}

func parseState(name string, raw json.RawMessage) (*state, error) {
	where := fmt.Sprintf("state %q", name)
	if name == "" || len(name) > maxStateNameLen {
		return nil, fmt.Errorf("%s: a state name must have 1 to %d characters", where, maxStateNameLen)
	}
	fm, err := objectOf(raw, where)
	if err != nil {
		return nil, err
	}
	o := &fieldSet{where: where, m: fm}
	typ, err := o.str("Type", true)
	if err != nil {
		return nil, err
	}
	s := &state{name: name, typ: StateType(typ)}
	allowed, ok := allowedFields[s.typ]
	if !ok {
		if typ == "Parallel" {
			return nil, fmt.Errorf("%s: Type %s is not supported by this interpreter", where, typ)
		}
		return nil, fmt.Errorf("%s: unknown Type %q", where, typ)
	}
	if err := o.only(append([]string{"Type", "Comment"}, allowed...)...); err != nil {
		return nil, err
	}
	if _, err := o.str("Comment", false); err != nil {
		return nil, err
	}
	if err := s.parseTransition(o); err != nil {
		return nil, err
	}
	if s.inputPath, err = o.ioPath("InputPath", false); err != nil {
		return nil, err
	}
	if s.outputPath, err = o.ioPath("OutputPath", false); err != nil {
		return nil, err
	}
	if s.resultPath, err = o.ioPath("ResultPath", true); err != nil {
		return nil, err
	}
	if s.parameters, err = o.template("Parameters"); err != nil {
		return nil, err
	}
	if s.resultSelector, err = o.template("ResultSelector"); err != nil {
		return nil, err
	}
	switch s.typ {
	case TypeTask:
		err = s.parseTask(o)
	case TypePass:
		if r, ok := fm["Result"]; ok {
			s.hasResult = true
			s.result, err = decodeJSON(r)
			if err != nil {
				err = fmt.Errorf("%s: Result: %w", where, err)
			}
		}
	case TypeChoice:
		err = s.parseChoice(o)
	case TypeWait:
		err = s.parseWait(o)
	case TypeFail:
		err = s.parseFail(o)
	case TypeMap:
		err = s.parseMap(o)
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (s *state) parseTransition(o *fieldSet) error {
	next, err := o.str("Next", false)
	if err != nil {
		return err
	}
	end, hasEnd, err := o.boolean("End")
	if err != nil {
		return err
	}
	s.next, s.end = next, end
	_, hasNext := o.m["Next"]
	switch s.typ {
	case TypeChoice, TypeSucceed, TypeFail:
		return nil // Next/End are not in their allowed fields.
	}
	if hasEnd && !end {
		return fmt.Errorf("%s: End must be true when present", o.where)
	}
	if hasNext && end {
		return fmt.Errorf("%s: Next and End cannot both be set", o.where)
	}
	if !hasNext && !end {
		return fmt.Errorf("%s: one of Next or End is required", o.where)
	}
	if hasNext && next == "" {
		return fmt.Errorf("%s: Next must name a state", o.where)
	}
	return nil
}

func (s *state) parseTask(o *fieldSet) error {
	var err error
	if s.resource, err = o.str("Resource", true); err != nil {
		return err
	}
	if s.resource == "" {
		return fmt.Errorf("%s: Resource must not be empty", o.where)
	}
	if _, callback := callbackOf(s.resource); !callback && strings.HasSuffix(s.resource, waitForTaskToken) {
		return fmt.Errorf("%s: Resource %q: only a service integration (arn:aws:states:::SERVICE:ACTION) can wait for a task token", o.where, s.resource)
	}
	if t, ok, err := o.integer("TimeoutSeconds", 1, maxSeconds); err != nil {
		return err
	} else if ok {
		s.timeoutSeconds = t
	}
	return s.parseRetryCatch(o)
}

// parseRetryCatch reads a Task's or a Map's Retry and Catch.
func (s *state) parseRetryCatch(o *fieldSet) error {
	if raw, ok := o.m["Retry"]; ok {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return fmt.Errorf("%s: Retry must be an array", o.where)
		}
		for i, item := range items {
			r, err := parseRetrier(fmt.Sprintf("%s: Retry[%d]", o.where, i), item, i == len(items)-1)
			if err != nil {
				return err
			}
			s.retry = append(s.retry, r)
		}
	}
	if raw, ok := o.m["Catch"]; ok {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return fmt.Errorf("%s: Catch must be an array", o.where)
		}
		for i, item := range items {
			c, err := parseCatcher(fmt.Sprintf("%s: Catch[%d]", o.where, i), item, i == len(items)-1)
			if err != nil {
				return err
			}
			s.catch = append(s.catch, c)
		}
	}
	return nil
}

func parseErrorEquals(o *fieldSet, last bool) ([]string, error) {
	raw, ok := o.m["ErrorEquals"]
	if !ok {
		return nil, fmt.Errorf("%s: ErrorEquals is required", o.where)
	}
	var names []string
	if err := json.Unmarshal(raw, &names); err != nil || len(names) == 0 {
		return nil, fmt.Errorf("%s: ErrorEquals must be a non-empty array of strings", o.where)
	}
	for _, n := range names {
		if n == "" {
			return nil, fmt.Errorf("%s: ErrorEquals: empty error name", o.where)
		}
		if strings.HasPrefix(n, "States.") && !knownStatesErrors[n] {
			return nil, fmt.Errorf("%s: ErrorEquals: unknown error name %q", o.where, n)
		}
		if n == ErrorAll && (len(names) != 1 || !last) {
			return nil, fmt.Errorf("%s: ErrorEquals: States.ALL must appear alone, in the last retrier or catcher", o.where)
		}
	}
	return names, nil
}

func parseRetrier(where string, raw json.RawMessage, last bool) (retrier, error) {
	fm, err := objectOf(raw, where)
	if err != nil {
		return retrier{}, err
	}
	o := &fieldSet{where: where, m: fm}
	if err := o.only("ErrorEquals", "IntervalSeconds", "MaxAttempts", "BackoffRate", "MaxDelaySeconds", "JitterStrategy", "Comment"); err != nil {
		return retrier{}, err
	}
	r := retrier{interval: 1, maxAttempts: 3, backoff: 2}
	if r.errorEquals, err = parseErrorEquals(o, last); err != nil {
		return r, err
	}
	if v, ok, err := o.integer("IntervalSeconds", 1, maxSeconds); err != nil {
		return r, err
	} else if ok {
		r.interval = float64(v)
	}
	if v, ok, err := o.integer("MaxAttempts", 0, maxSeconds); err != nil {
		return r, err
	} else if ok {
		r.maxAttempts = int(v)
	}
	if v, ok, err := o.integer("MaxDelaySeconds", 1, maxSeconds); err != nil {
		return r, err
	} else if ok {
		r.maxDelay = float64(v)
	}
	if raw, ok := fm["BackoffRate"]; ok {
		var f float64
		if err := json.Unmarshal(raw, &f); err != nil || f < 1 || math.IsInf(f, 0) {
			return r, fmt.Errorf("%s: BackoffRate must be a number >= 1.0", where)
		}
		r.backoff = f
	}
	if js, err := o.str("JitterStrategy", false); err != nil {
		return r, err
	} else if js != "" && js != "NONE" {
		return r, fmt.Errorf("%s: JitterStrategy %q is not supported (only NONE)", where, js)
	}
	return r, nil
}

func parseCatcher(where string, raw json.RawMessage, last bool) (catcher, error) {
	fm, err := objectOf(raw, where)
	if err != nil {
		return catcher{}, err
	}
	o := &fieldSet{where: where, m: fm}
	if err := o.only("ErrorEquals", "Next", "ResultPath", "Comment"); err != nil {
		return catcher{}, err
	}
	var c catcher
	if c.errorEquals, err = parseErrorEquals(o, last); err != nil {
		return c, err
	}
	if c.next, err = o.str("Next", true); err != nil {
		return c, err
	}
	if c.resultPath, err = o.ioPath("ResultPath", true); err != nil {
		return c, err
	}
	return c, nil
}

func (s *state) parseChoice(o *fieldSet) error {
	raw, ok := o.m["Choices"]
	if !ok {
		return fmt.Errorf("%s: Choices is required", o.where)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil || len(items) == 0 {
		return fmt.Errorf("%s: Choices must be a non-empty array", o.where)
	}
	for i, item := range items {
		r, err := parseChoiceRule(fmt.Sprintf("%s: Choices[%d]", o.where, i), item, true)
		if err != nil {
			return err
		}
		s.choices = append(s.choices, r)
	}
	var err error
	s.defaultNext, err = o.str("Default", false)
	return err
}

func (s *state) parseWait(o *fieldSet) error {
	n := 0
	for _, f := range []string{"Seconds", "SecondsPath", "Timestamp", "TimestampPath"} {
		if _, ok := o.m[f]; ok {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("%s: exactly one of Seconds, SecondsPath, Timestamp or TimestampPath is required", o.where)
	}
	if v, ok, err := o.integer("Seconds", 0, maxSeconds); err != nil {
		return err
	} else if ok {
		s.seconds = &v
	}
	var err error
	if s.secondsPath, err = o.refPath("SecondsPath"); err != nil {
		return err
	}
	if s.timestampPath, err = o.refPath("TimestampPath"); err != nil {
		return err
	}
	ts, err := o.str("Timestamp", false)
	if err != nil {
		return err
	}
	if _, ok := o.m["Timestamp"]; ok {
		t, err := parseTimestamp(ts)
		if err != nil {
			return fmt.Errorf("%s: Timestamp: %w", o.where, err)
		}
		s.timestamp = &t
	}
	return nil
}

func (s *state) parseFail(o *fieldSet) error {
	var err error
	if s.errorName, err = o.str("Error", false); err != nil {
		return err
	}
	if s.cause, err = o.str("Cause", false); err != nil {
		return err
	}
	if s.errorPath, err = o.refPath("ErrorPath"); err != nil {
		return err
	}
	if s.causePath, err = o.refPath("CausePath"); err != nil {
		return err
	}
	for _, pair := range [][2]string{{"Error", "ErrorPath"}, {"Cause", "CausePath"}} {
		_, a := o.m[pair[0]]
		_, b := o.m[pair[1]]
		if a && b {
			return fmt.Errorf("%s: %s and %s cannot both be set", o.where, pair[0], pair[1])
		}
	}
	return nil
}

// timestampRE is the States Language's profile of RFC 3339: uppercase T
// and Z.
var timestampRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$`)

func parseTimestamp(s string) (time.Time, error) {
	if !timestampRE.MatchString(s) {
		return time.Time{}, fmt.Errorf("%q is not an RFC 3339 timestamp (like 2016-03-14T01:59:00Z)", s)
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not a valid timestamp: %w", s, err)
	}
	return t, nil
}

// fieldSet reads the fields of one JSON object of the definition, naming
// where it is in every error.
type fieldSet struct {
	where string
	m     map[string]json.RawMessage
}

func objectOf(raw []byte, where string) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, fmt.Errorf("%s: must be a JSON object", where)
	}
	return m, nil
}

// orderedKeys returns the keys of a JSON object in document order, and an
// error for a duplicate key.
func orderedKeys(raw []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("must be a JSON object")
	}
	var keys []string
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := t.(string)
		if seen[k] {
			return nil, fmt.Errorf("duplicate key %q", k)
		}
		seen[k] = true
		keys = append(keys, k)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

func (o *fieldSet) only(allowed ...string) error {
	ok := map[string]bool{}
	for _, a := range allowed {
		ok[a] = true
	}
	for _, k := range sortedKeys(o.m) {
		if ok[k] {
			continue
		}
		if why, known := unsupportedFields[k]; known {
			return fmt.Errorf("%s: field %s is not supported: %s", o.where, k, why)
		}
		return fmt.Errorf("%s: unknown field %q", o.where, k)
	}
	return nil
}

func (o *fieldSet) str(key string, required bool) (string, error) {
	raw, ok := o.m[key]
	if !ok {
		if required {
			return "", fmt.Errorf("%s: %s is required", o.where, key)
		}
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return "", fmt.Errorf("%s: %s must be a string", o.where, key)
	}
	return s, nil
}

func (o *fieldSet) boolean(key string) (bool, bool, error) {
	raw, ok := o.m[key]
	if !ok {
		return false, false, nil
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return false, true, fmt.Errorf("%s: %s must be a boolean", o.where, key)
	}
	return b, true, nil
}

func (o *fieldSet) integer(key string, lo, hi int64) (int64, bool, error) {
	raw, ok := o.m[key]
	if !ok {
		return 0, false, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		if v, err := n.Int64(); err == nil && v >= lo && v <= hi {
			return v, true, nil
		}
	}
	return 0, true, fmt.Errorf("%s: %s must be an integer from %d to %d", o.where, key, lo, hi)
}

// ioPath reads InputPath, OutputPath or ResultPath: absent means "$", null
// means discard. ResultPath must be a reference path into the input.
func (o *fieldSet) ioPath(key string, result bool) (ioPath, error) {
	raw, ok := o.m[key]
	if !ok {
		return ioPath{p: rootPath}, nil
	}
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return ioPath{null: true}, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return ioPath{}, fmt.Errorf("%s: %s must be a path string or null", o.where, key)
	}
	p, err := parsePath(s, result)
	if err != nil {
		return ioPath{}, fmt.Errorf("%s: %s: %w", o.where, key, err)
	}
	if result && p.context {
		return ioPath{}, fmt.Errorf("%s: %s: %q cannot write to the context object", o.where, key, s)
	}
	return ioPath{p: p}, nil
}

func (o *fieldSet) refPath(key string) (*path, error) {
	s, err := o.str(key, false)
	if err != nil {
		return nil, err
	}
	if _, ok := o.m[key]; !ok {
		return nil, nil
	}
	p, err := parsePath(s, true)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", o.where, key, err)
	}
	return p, nil
}

func (o *fieldSet) template(key string) (*template, error) {
	raw, ok := o.m[key]
	if !ok {
		return nil, nil
	}
	t, err := parseTemplate(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", o.where, key, err)
	}
	return t, nil
}
