package asl

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPathGet(t *testing.T) {
	doc := `{"foo": 123, "bar": ["a", "b", "c"], "car": {"cdr": true}, "a b": {"c": 1}, "vals": [0, 10, 20, 30, 40, 50]}`
	ctxObj := map[string]any{"Execution": map[string]any{"Id": "arn:x"}}
	tests := []struct {
		path  string
		want  string // JSON; "" means not found
		isRef bool
	}{
		{"$", "", true}, // checked separately below
		{"$.foo", `123`, true},
		{"$.bar", `["a","b","c"]`, true},
		{"$.car.cdr", `true`, true},
		{"$['car']['cdr']", `true`, true},
		{`$["a b"].c`, `1`, true},
		{"$.bar[1]", `"b"`, true},
		{"$.bar[3]", "", true},
		{"$.nope", "", true},
		{"$.foo.x", "", true},
		{"$$.Execution.Id", `"arn:x"`, true},
		{"$.vals[3:]", `[30,40,50]`, false},
		{"$.vals[:2]", `[0,10]`, false},
		{"$.vals[-2:]", `[40,50]`, false},
		{"$.bar[*]", `["a","b","c"]`, false},
		{"$.car.*", `[true]`, false},
		{"$.nope[*]", `[]`, false},
	}
	data, err := decodeJSON([]byte(doc))
	require.NoError(t, err)
	for _, tt := range tests[1:] {
		t.Run(tt.path, func(t *testing.T) {
			p, err := parsePath(tt.path, false)
			require.NoError(t, err)
			assert.Equal(t, tt.isRef, p.definite())
			v, ok := p.get(data, ctxObj)
			if tt.want == "" {
				assert.False(t, ok)
				return
			}
			require.True(t, ok)
			assert.JSONEq(t, tt.want, encodeJSON(v))
		})
	}
	root, ok := rootPath.get(data, nil)
	require.True(t, ok)
	assert.JSONEq(t, doc, encodeJSON(root))
}

func TestPathParseErrors(t *testing.T) {
	tests := []struct {
		path      string
		reference bool
		want      string
	}{
		{"foo", false, "must start with $"},
		{"$..foo", false, "recursive descent"},
		{"$.", false, "empty field name"},
		{"$.a[", false, "missing ]"},
		{"$.a[x]", false, "not a non-negative array index"},
		{"$.a[-1]", false, "not a non-negative array index"},
		{"$.a[?(@.b)]", false, "filter"},
		{"$.a[1:2:3]", false, "steps"},
		{"$.a['b", false, "unterminated"},
		{"$.a[*]", true, "reference path"},
		{"$.a[1:]", true, "reference path"},
		{"$x", false, "unexpected"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			_, err := parsePath(tt.path, tt.reference)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestPathSet(t *testing.T) {
	tests := []struct {
		name, input, path, value, want string
	}{
		{"replace root", `{"a":1}`, "$", `6`, `6`},
		{"overwrite", `{"master":{"detail":[1,2,3]}}`, "$.master.detail", `6`, `{"master":{"detail":6}}`},
		{"create chain", `{"master":{"detail":[1,2,3]}}`, "$.master.result.sum", `6`, `{"master":{"detail":[1,2,3],"result":{"sum":6}}}`},
		{"array element", `{"a":[1,2]}`, "$.a[1]", `"x"`, `{"a":[1,"x"]}`},
		{"not an object", `{"a":1}`, "$.a.b", `1`, ""},
		{"input not an object", `"text"`, "$.a", `1`, ""},
		{"index out of range", `{"a":[1]}`, "$.a[4]", `1`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := decodeJSON([]byte(tt.input))
			require.NoError(t, err)
			v, err := decodeJSON([]byte(tt.value))
			require.NoError(t, err)
			p, err := parsePath(tt.path, true)
			require.NoError(t, err)
			out, err := p.set(in, v)
			if tt.want == "" {
				assert.ErrorIs(t, err, errResultPath)
				return
			}
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, encodeJSON(out))
			assert.JSONEq(t, tt.input, encodeJSON(in), "set must not change its input")
		})
	}
}

func TestWildcardMatch(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"log-*.txt", "log-2026.txt", true},
		{"log-*.txt", "log-2026.csv", false},
		{"*", "", true},
		{"a*b*c", "aXXbYYc", true},
		{"a*b*c", "acb", false},
		{"*ab*ab", "abab", true},
		{"*a*a", "a", false},
		{`literal\*star`, "literal*star", true},
		{`literal\*star`, "literalXstar", false},
		{"exact", "exact", true},
		{"exact", "exactly", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, wildcardMatch(tt.pattern, tt.s), "%q ~ %q", tt.pattern, tt.s)
	}
}

func FuzzParsePath(f *testing.F) {
	for _, s := range []string{"$", "$.a.b", "$['a']", "$.a[0]", "$$.Execution.Id", "$.v[1:3]", "$.*", "$.a['b"} {
		f.Add(s)
	}
	doc, _ := decodeJSON([]byte(`{"a":{"b":[1,{"c":2}]},"v":[1,2,3]}`))
	f.Fuzz(func(t *testing.T, s string) {
		p, err := parsePath(s, false)
		if err != nil {
			return
		}
		p.get(doc, doc)
		if p.definite() {
			_, _ = p.set(doc, "x")
		}
	})
}
