package asl

import (
	"encoding/json"
	"fmt"
	"strings"
)

// template is a payload template (Parameters, ResultSelector): a JSON
// object whose fields named "x.$" take their value from a path into the
// effective input or, for "$$." paths, the context object.
type template struct {
	root tnode
}

type tnode interface {
	eval(input, ctxObj any) (any, error)
}

type tliteral struct{ v any }

type tfield struct {
	key  string // without ".$"
	raw  string // the key as written
	node tnode
}

type tobject struct{ fields []tfield }

type tarray struct{ items []tnode }

type tpath struct{ p *path }

func parseTemplate(raw json.RawMessage) (*template, error) {
	v, err := decodeJSON(raw)
	if err != nil {
		return nil, err
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, fmt.Errorf("must be a JSON object (a payload template)")
	}
	root, err := templateNode(v, "")
	if err != nil {
		return nil, err
	}
	return &template{root: root}, nil
}

func templateNode(v any, where string) (tnode, error) {
	switch t := v.(type) {
	case map[string]any:
		obj := &tobject{}
		for _, k := range sortedKeys(t) {
			child := where + "." + k
			if strings.HasSuffix(k, ".$") {
				base := strings.TrimSuffix(k, ".$")
				if _, dup := t[base]; dup {
					return nil, fmt.Errorf("%s: both %q and %q are set", child, base, k)
				}
				s, ok := t[k].(string)
				if !ok {
					return nil, fmt.Errorf("%s: the value of a field ending in .$ must be a path string", strings.TrimPrefix(child, "."))
				}
				if strings.HasPrefix(s, "States.") {
					return nil, fmt.Errorf("%s: intrinsic functions (%s) are not supported", strings.TrimPrefix(child, "."), strings.SplitN(s, "(", 2)[0])
				}
				p, err := parsePath(s, false)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", strings.TrimPrefix(child, "."), err)
				}
				obj.fields = append(obj.fields, tfield{key: base, raw: k, node: tpath{p}})
				continue
			}
			n, err := templateNode(t[k], child)
			if err != nil {
				return nil, err
			}
			obj.fields = append(obj.fields, tfield{key: k, raw: k, node: n})
		}
		return obj, nil
	case []any:
		arr := &tarray{}
		for i, x := range t {
			n, err := templateNode(x, fmt.Sprintf("%s[%d]", where, i))
			if err != nil {
				return nil, err
			}
			arr.items = append(arr.items, n)
		}
		return arr, nil
	}
	return tliteral{v}, nil
}

func (t tliteral) eval(any, any) (any, error) { return deepCopy(t.v), nil }

func (t *tobject) eval(input, ctxObj any) (any, error) {
	out := make(map[string]any, len(t.fields))
	for _, f := range t.fields {
		if tp, ok := f.node.(tpath); ok {
			v, found := tp.p.get(input, ctxObj)
			if !found {
				src := input
				if tp.p.context {
					src = ctxObj
				}
				return nil, stateErr(ErrorParameterPathFailure,
					"The JSONPath '%s' specified for the field '%s' could not be found in the input '%s'",
					tp.p.raw, f.raw, encodeJSON(src))
			}
			out[f.key] = deepCopy(v)
			continue
		}
		v, err := f.node.eval(input, ctxObj)
		if err != nil {
			return nil, err
		}
		out[f.key] = v
	}
	return out, nil
}

func (t *tarray) eval(input, ctxObj any) (any, error) {
	out := make([]any, 0, len(t.items))
	for _, n := range t.items {
		v, err := n.eval(input, ctxObj)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func (t tpath) eval(input, ctxObj any) (any, error) {
	v, _ := t.p.get(input, ctxObj)
	return v, nil
}

// apply renders the template against the effective input and the context
// object.
func (t *template) apply(input, ctxObj any) (any, error) {
	return t.root.eval(input, ctxObj)
}
