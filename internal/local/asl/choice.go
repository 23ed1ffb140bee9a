package asl

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// operand kinds of the comparison operators.
type opKind int

const (
	opString opKind = iota
	opNumeric
	opBoolean
	opTimestamp
	opType
	opMatch
)

var comparisonOps = func() map[string]opKind {
	m := map[string]opKind{"StringMatches": opMatch}
	for _, rel := range []string{"Equals", "LessThan", "GreaterThan", "LessThanEquals", "GreaterThanEquals"} {
		m["String"+rel] = opString
		m["Numeric"+rel] = opNumeric
		m["Timestamp"+rel] = opTimestamp
	}
	m["BooleanEquals"] = opBoolean
	for _, t := range []string{"IsNull", "IsPresent", "IsNumeric", "IsString", "IsBoolean", "IsTimestamp"} {
		m[t] = opType
	}
	return m
}()

// choiceRule is a Choice Rule: a boolean expression (And, Or, Not) or a
// data-test expression (Variable and one comparison operator).
type choiceRule struct {
	next string
	and  []*choiceRule
	or   []*choiceRule
	not  *choiceRule

	variable *path
	op       string // the operator, without a "Path" suffix
	kind     opKind
	literal  any
	operand  *path // set for the ...Path operators
}

func parseChoiceRule(where string, raw json.RawMessage, top bool) (*choiceRule, error) {
	fm, err := objectOf(raw, where)
	if err != nil {
		return nil, err
	}
	o := &fieldSet{where: where, m: fm}
	r := &choiceRule{}
	if top {
		if r.next, err = o.str("Next", true); err != nil {
			return nil, err
		}
	} else if _, ok := fm["Next"]; ok {
		return nil, fmt.Errorf("%s: Next is only allowed on a top-level choice rule", where)
	}
	var ops []string
	for k := range fm {
		switch k {
		case "Next", "Comment":
		case "And", "Or", "Not", "Variable":
		default:
			base := strings.TrimSuffix(k, "Path")
			kind, ok := comparisonOps[base]
			if !ok || (base != k && (kind == opType || kind == opMatch)) {
				return nil, fmt.Errorf("%s: unknown field %q", where, k)
			}
			ops = append(ops, k)
		}
	}
	_, hasVar := fm["Variable"]
	boolOps := 0
	for _, k := range []string{"And", "Or", "Not"} {
		if _, ok := fm[k]; ok {
			boolOps++
		}
	}
	switch {
	case boolOps > 1 || (boolOps == 1 && (hasVar || len(ops) > 0)):
		return nil, fmt.Errorf("%s: a choice rule has exactly one of And, Or, Not or a Variable with one comparison", where)
	case boolOps == 1:
		return r, r.parseBoolean(o)
	case !hasVar:
		return nil, fmt.Errorf("%s: Variable is required", where)
	case len(ops) != 1:
		return nil, fmt.Errorf("%s: exactly one comparison operator is required, got %d", where, len(ops))
	}
	if r.variable, err = o.refPath("Variable"); err != nil {
		return nil, err
	}
	return r, r.parseComparison(o, ops[0])
}

func (r *choiceRule) parseBoolean(o *fieldSet) error {
	if raw, ok := o.m["Not"]; ok {
		n, err := parseChoiceRule(o.where+".Not", raw, false)
		r.not = n
		return err
	}
	key := "And"
	if _, ok := o.m["Or"]; ok {
		key = "Or"
	}
	var items []json.RawMessage
	if err := json.Unmarshal(o.m[key], &items); err != nil || len(items) == 0 {
		return fmt.Errorf("%s: %s must be a non-empty array of choice rules", o.where, key)
	}
	for i, item := range items {
		n, err := parseChoiceRule(fmt.Sprintf("%s.%s[%d]", o.where, key, i), item, false)
		if err != nil {
			return err
		}
		if key == "And" {
			r.and = append(r.and, n)
		} else {
			r.or = append(r.or, n)
		}
	}
	return nil
}

func (r *choiceRule) parseComparison(o *fieldSet, op string) error {
	r.op = strings.TrimSuffix(op, "Path")
	r.kind = comparisonOps[r.op]
	if r.op != op {
		p, err := o.refPath(op)
		if err != nil {
			return err
		}
		r.operand = p
		return nil
	}
	v, err := decodeJSON(o.m[op])
	if err != nil {
		return fmt.Errorf("%s: %s: %w", o.where, op, err)
	}
	bad := func(what string) error { return fmt.Errorf("%s: %s must be %s", o.where, op, what) }
	switch r.kind {
	case opString, opMatch:
		s, ok := v.(string)
		if !ok {
			return bad("a string")
		}
		r.literal = s
	case opNumeric:
		n, ok := v.(json.Number)
		if !ok {
			return bad("a number")
		}
		f, err := n.Float64()
		if err != nil {
			return bad("a number")
		}
		r.literal = f
	case opBoolean, opType:
		b, ok := v.(bool)
		if !ok {
			return bad("a boolean")
		}
		r.literal = b
	case opTimestamp:
		s, ok := v.(string)
		if !ok {
			return bad("a timestamp string")
		}
		t, err := parseTimestamp(s)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", o.where, op, err)
		}
		r.literal = t
	}
	return nil
}

// eval evaluates the rule against the state's effective input. A Variable
// (or operand path) that names nothing is a States.Runtime error, except
// for IsPresent.
func (r *choiceRule) eval(input, ctxObj any) (bool, error) {
	switch {
	case r.not != nil:
		b, err := r.not.eval(input, ctxObj)
		return !b, err
	case r.and != nil:
		return evalAll(r.and, input, ctxObj, false)
	case r.or != nil:
		return evalAll(r.or, input, ctxObj, true)
	}
	return r.test(input, ctxObj)
}

// evalAll evaluates rules in order and stops at the first whose value is
// stop (true for Or, false for And), returning it; otherwise !stop. An
// error stops it too.
func evalAll(rules []*choiceRule, input, ctxObj any, stop bool) (bool, error) {
	for _, n := range rules {
		b, err := n.eval(input, ctxObj)
		if err != nil {
			return false, err
		}
		if b == stop {
			return stop, nil
		}
	}
	return !stop, nil
}

// test evaluates a data-test expression: the Variable's value against the
// literal, or against the value the operand path names.
func (r *choiceRule) test(input, ctxObj any) (bool, error) {
	v, found := r.variable.get(input, ctxObj)
	if r.op == "IsPresent" {
		return found == r.literal.(bool), nil
	}
	if !found {
		return false, invalidChoicePath(r.variable)
	}
	if r.kind == opType {
		return isType(r.op, v) == r.literal.(bool), nil
	}
	want := r.literal
	if r.operand != nil {
		w, ok := r.operand.get(input, ctxObj)
		if !ok {
			return false, invalidChoicePath(r.operand)
		}
		want = w
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(r.op, "String"), "Numeric"), "Timestamp")
	return comparisons[r.kind](rel, v, want), nil
}

// invalidChoicePath is the States.Runtime error of a condition path that
// names nothing.
func invalidChoicePath(p *path) error {
	return stateErr(ErrorRuntime,
		"Invalid path '%s': The choice state's condition path references an invalid value.", p.raw)
}

// comparisons compares a value v with want by operand kind, for the
// relation rel (Equals, LessThan, ...). A value of another type than the
// operator's compares false, as the States Language says: "the
// comparison evaluates to false" when the types differ.
var comparisons = map[opKind]func(rel string, v, want any) bool{
	opMatch: func(_ string, v, want any) bool {
		s, ok := v.(string)
		return ok && wildcardMatch(want.(string), s)
	},
	opString: func(rel string, v, want any) bool {
		a, ok1 := v.(string)
		b, ok2 := want.(string)
		return ok1 && ok2 && compare(rel, strings.Compare(a, b))
	},
	opNumeric: func(rel string, v, want any) bool {
		a, ok1 := number(v)
		b, ok2 := number(want)
		return ok1 && ok2 && compare(rel, cmpFloat(a, b))
	},
	opBoolean: func(_ string, v, want any) bool {
		a, ok1 := v.(bool)
		b, ok2 := want.(bool)
		return ok1 && ok2 && a == b
	},
	opTimestamp: func(rel string, v, want any) bool {
		a, ok1 := timestamp(v)
		b, ok2 := timestamp(want)
		return ok1 && ok2 && compare(rel, a.Compare(b))
	},
}

func compare(rel string, c int) bool {
	switch rel {
	case "Equals":
		return c == 0
	case "LessThan":
		return c < 0
	case "GreaterThan":
		return c > 0
	case "LessThanEquals":
		return c <= 0
	case "GreaterThanEquals":
		return c >= 0
	}
	return false
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case float64:
		return n, true
	}
	return 0, false
}

func timestamp(v any) (time.Time, bool) {
	switch t := v.(type) {
	case time.Time:
		return t, true
	case string:
		ts, err := parseTimestamp(t)
		return ts, err == nil
	}
	return time.Time{}, false
}

func isType(op string, v any) bool {
	switch op {
	case "IsNull":
		return v == nil
	case "IsNumeric":
		_, ok := number(v)
		return ok
	case "IsString":
		_, ok := v.(string)
		return ok
	case "IsBoolean":
		_, ok := v.(bool)
		return ok
	case "IsTimestamp":
		_, ok := v.(string)
		if !ok {
			return false
		}
		_, ok = timestamp(v)
		return ok
	}
	return false
}

// wildcardMatch implements StringMatches: "*" matches any run of
// characters, "\*" a literal star and "\\" a literal backslash.
func wildcardMatch(pattern, s string) bool {
	type tok struct {
		star bool
		lit  string
	}
	var toks []tok
	var lit strings.Builder
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case c == '\\' && i+1 < len(pattern) && (pattern[i+1] == '*' || pattern[i+1] == '\\'):
			lit.WriteByte(pattern[i+1])
			i++
		case c == '*':
			toks = append(toks, tok{lit: lit.String()}, tok{star: true})
			lit.Reset()
		default:
			lit.WriteByte(c)
		}
	}
	toks = append(toks, tok{lit: lit.String()})
	// Greedy-free matching: literals between stars are found left to right.
	first := toks[0].lit
	if !strings.HasPrefix(s, first) {
		return false
	}
	s = s[len(first):]
	if len(toks) == 1 {
		return s == ""
	}
	lastLit := toks[len(toks)-1].lit
	middle := toks[1 : len(toks)-1]
	for _, t := range middle {
		if t.star || t.lit == "" {
			continue
		}
		i := strings.Index(s, t.lit)
		if i < 0 {
			return false
		}
		s = s[i+len(t.lit):]
	}
	return len(s) >= len(lastLit) && strings.HasSuffix(s, lastLit)
}
