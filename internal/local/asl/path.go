package asl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// segKind is the kind of one step of a path.
type segKind int

const (
	segField    segKind = iota // .name or ['name']
	segIndex                   // [3]
	segWildcard                // .* or [*]
	segSlice                   // [start:end]
)

type segment struct {
	kind       segKind
	name       string
	index      int
	start, end *int
}

// path is a parsed JSONPath of the subset ferry supports: "$" or "$$"
// followed by fields (.name, ['name']), array indexes ([0]) and, outside
// reference paths, wildcards (.*, [*]) and slices ([1:3]).
type path struct {
	raw     string
	context bool
	segs    []segment
}

// parsePath parses a Path. reference restricts it to a reference path (a
// single node: no wildcards or slices).
func parsePath(s string, reference bool) (*path, error) {
	p := &path{raw: s}
	rest := ""
	switch {
	case strings.HasPrefix(s, "$$"):
		p.context, rest = true, s[2:]
	case strings.HasPrefix(s, "$"):
		rest = s[1:]
	default:
		return nil, fmt.Errorf("path %q must start with $", s)
	}
	for rest != "" {
		switch rest[0] {
		case '.':
			if strings.HasPrefix(rest, "..") {
				return nil, fmt.Errorf("path %q: recursive descent (..) is not supported", s)
			}
			rest = rest[1:]
			n := strings.IndexAny(rest, ".[")
			if n < 0 {
				n = len(rest)
			}
			name := rest[:n]
			rest = rest[n:]
			switch {
			case name == "":
				return nil, fmt.Errorf("path %q: empty field name", s)
			case name == "*":
				p.segs = append(p.segs, segment{kind: segWildcard})
			case strings.ContainsAny(name, "]'\" \t\n@?()"):
				return nil, fmt.Errorf("path %q: field name %q needs bracket notation", s, name)
			default:
				p.segs = append(p.segs, segment{kind: segField, name: name})
			}
		case '[':
			end := strings.IndexByte(rest, ']')
			inner := ""
			if q := rest[1:]; len(q) > 0 && (q[0] == '\'' || q[0] == '"') {
				closeQ := strings.IndexByte(q[1:], q[0])
				if closeQ < 0 || len(q) < closeQ+3 || q[closeQ+2] != ']' {
					return nil, fmt.Errorf("path %q: unterminated quoted field", s)
				}
				p.segs = append(p.segs, segment{kind: segField, name: q[1 : closeQ+1]})
				rest = q[closeQ+3:]
				continue
			}
			if end < 0 {
				return nil, fmt.Errorf("path %q: missing ]", s)
			}
			inner, rest = rest[1:end], rest[end+1:]
			seg, err := parseBracket(inner)
			if err != nil {
				return nil, fmt.Errorf("path %q: %w", s, err)
			}
			p.segs = append(p.segs, seg)
		default:
			return nil, fmt.Errorf("path %q: unexpected %q", s, rest[:1])
		}
	}
	if reference && !p.definite() {
		return nil, fmt.Errorf("path %q must be a reference path (no wildcards or slices)", s)
	}
	return p, nil
}

func parseBracket(inner string) (segment, error) {
	switch {
	case inner == "*":
		return segment{kind: segWildcard}, nil
	case strings.HasPrefix(inner, "?") || strings.HasPrefix(inner, "("):
		return segment{}, errors.New("filter and script expressions are not supported")
	case strings.Contains(inner, ":"):
		parts := strings.Split(inner, ":")
		if len(parts) != 2 {
			return segment{}, fmt.Errorf("slice [%s]: steps are not supported", inner)
		}
		seg := segment{kind: segSlice}
		for i, part := range parts {
			if part == "" {
				continue
			}
			n, err := strconv.Atoi(part)
			if err != nil {
				return segment{}, fmt.Errorf("slice [%s]: %q is not an integer", inner, part)
			}
			if i == 0 {
				seg.start = &n
			} else {
				seg.end = &n
			}
		}
		return seg, nil
	}
	n, err := strconv.Atoi(inner)
	if err != nil || n < 0 {
		return segment{}, fmt.Errorf("[%s] is not a non-negative array index", inner)
	}
	return segment{kind: segIndex, index: n}, nil
}

// definite reports whether the path names at most one node.
func (p *path) definite() bool {
	for _, s := range p.segs {
		if s.kind == segWildcard || s.kind == segSlice {
			return false
		}
	}
	return true
}

func (p *path) String() string { return p.raw }

// get evaluates the path against data (or ctxObj for a "$$" path). A
// definite path returns the node and whether it exists; an indefinite path
// returns the array of every node it matches (found is always true).
func (p *path) get(data, ctxObj any) (any, bool) {
	root := data
	if p.context {
		root = ctxObj
	}
	if p.definite() {
		cur := root
		for _, s := range p.segs {
			next, ok := step(cur, s)
			if !ok || len(next) == 0 {
				return nil, false
			}
			cur = next[0]
		}
		return cur, true
	}
	nodes := []any{root}
	for _, s := range p.segs {
		var out []any
		for _, n := range nodes {
			next, _ := step(n, s)
			out = append(out, next...)
		}
		nodes = out
	}
	if nodes == nil {
		nodes = []any{}
	}
	return nodes, true
}

// step applies one segment to a node.
func step(node any, s segment) ([]any, bool) {
	switch s.kind {
	case segField:
		obj, ok := node.(map[string]any)
		if !ok {
			return nil, false
		}
		v, ok := obj[s.name]
		if !ok {
			return nil, false
		}
		return []any{v}, true
	case segIndex:
		arr, ok := node.([]any)
		if !ok || s.index >= len(arr) {
			return nil, false
		}
		return []any{arr[s.index]}, true
	case segWildcard:
		switch n := node.(type) {
		case []any:
			return append([]any(nil), n...), true
		case map[string]any:
			keys := sortedKeys(n)
			out := make([]any, 0, len(keys))
			for _, k := range keys {
				out = append(out, n[k])
			}
			return out, true
		}
		return nil, false
	case segSlice:
		arr, ok := node.([]any)
		if !ok {
			return nil, false
		}
		start, end := 0, len(arr)
		if s.start != nil {
			start = clampIndex(*s.start, len(arr))
		}
		if s.end != nil {
			end = clampIndex(*s.end, len(arr))
		}
		if start >= end {
			return []any{}, true
		}
		return append([]any(nil), arr[start:end]...), true
	}
	return nil, false
}

func clampIndex(i, n int) int {
	if i < 0 {
		i += n
	}
	return max(0, min(i, n))
}

// errResultPath says a ResultPath could not be applied to the input.
var errResultPath = errors.New("cannot be applied to the state's input")

// set returns a copy of doc with v stored at the reference path p,
// creating missing objects on the way. It fails with errResultPath when a
// node on the way is not an object (or an array with that index).
func (p *path) set(doc, v any) (any, error) {
	if len(p.segs) == 0 {
		return v, nil
	}
	root := deepCopy(doc)
	cur := root
	for i, s := range p.segs {
		last := i == len(p.segs)-1
		switch s.kind {
		case segField:
			obj, ok := cur.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("ResultPath %q: %s is not an object: %w", p.raw, prefix(p, i), errResultPath)
			}
			if last {
				obj[s.name] = v
				return root, nil
			}
			next, ok := obj[s.name]
			if !ok {
				next = map[string]any{}
				obj[s.name] = next
			}
			cur = next
		case segIndex:
			arr, ok := cur.([]any)
			if !ok || s.index >= len(arr) {
				return nil, fmt.Errorf("ResultPath %q: %s has no element %d: %w", p.raw, prefix(p, i), s.index, errResultPath)
			}
			if last {
				arr[s.index] = v
				return root, nil
			}
			cur = arr[s.index]
		default:
			return nil, fmt.Errorf("ResultPath %q is not a reference path: %w", p.raw, errResultPath)
		}
	}
	return root, nil
}

// prefix renders the path up to (excluding) segment i, for messages.
func prefix(p *path, i int) string {
	var b strings.Builder
	b.WriteString("$")
	for _, s := range p.segs[:i] {
		switch s.kind {
		case segField:
			b.WriteString("." + s.name)
		case segIndex:
			fmt.Fprintf(&b, "[%d]", s.index)
		}
	}
	return b.String()
}

// decodeJSON decodes exactly one JSON value, keeping numbers exact.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

// encodeJSON renders a value as compact JSON without HTML escaping.
func encodeJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Values come from decodeJSON or the interpreter itself; they are
		// always encodable.
		return "null"
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = deepCopy(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = deepCopy(x)
		}
		return out
	}
	return v
}
