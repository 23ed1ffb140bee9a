package codestats

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMeasure: complexity is gocyclo's (1, plus one per if, for, case,
// && and ||), length runs from "func" to the closing brace, test files,
// testdata and node_modules are never read, and no file is exempt: a long
// CDK stack or schema is reported as long like any function.
func TestMeasure(t *testing.T) {
	root := t.TempDir()
	write := func(path, src string) {
		t.Helper()
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, path)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, path), []byte(src), 0o644))
	}
	write("a/a.go", `package a

func simple() {}

type T struct{}

func (t *T) branchy(x int, ok bool) int {
	if x > 0 && ok {
		return 1
	}
	for i := 0; i < x; i++ {
		switch i {
		case 1:
		case 2:
		default:
		}
	}
	return 0
}
`)
	write("a/a_test.go", "package a\n\nfunc helper() {}\n")
	write("a/testdata/x.go", "package x\n\nfunc hidden() {}\n")
	write("infra/node_modules/n.go", "package n\n\nfunc hidden() {}\n")
	write("infra/stacks/bootstrap.go", "package stacks\n\nfunc stack() {\n\n\n}\n")

	funcs, err := Measure(root)
	require.NoError(t, err)
	byName := map[string]Func{}
	for _, f := range funcs {
		byName[f.Name] = f
	}
	require.Len(t, byName, 3)
	assert.Equal(t, Func{Name: "a.simple", Pos: "a/a.go:3", Complexity: 1, Lines: 1}, byName["a.simple"])
	assert.Equal(t, Func{Name: "a.(*T).branchy", Pos: "a/a.go:7", Complexity: 6, Lines: 13}, byName["a.(*T).branchy"])
	assert.Equal(t, Func{Name: "stacks.stack", Pos: "infra/stacks/bootstrap.go:3", Complexity: 1, Lines: 4}, byName["stacks.stack"])

	r := Summarize(funcs, 5, 3)
	assert.Equal(t, []Func{byName["a.(*T).branchy"]}, r.Complex)
	assert.Equal(t, []Func{byName["a.(*T).branchy"], byName["stacks.stack"]}, r.Long, "longest first; a CDK stack is not exempt")
	assert.InDelta(t, 33.3, r.Percent(), 0.1)
	var out bytes.Buffer
	require.NoError(t, r.Write(&out))
	assert.Contains(t, out.String(), "codestats: 3 functions; complexity > 5: 1 (33.3%); over 3 lines: 2\n")
}

// TestCheck: a function over the length, or a share of complex functions
// above the bound, breaks the rules; each is named.
func TestCheck(t *testing.T) {
	funcs := []Func{{Name: "a", Lines: 10, Complexity: 1}, {Name: "b", Lines: 10, Complexity: 20}, {Name: "c", Lines: 10, Complexity: 1}}
	tests := []struct {
		name       string
		maxLines   int
		maxPercent float64
		want       []string
	}{
		{"within", 10, 34, nil},
		{"a function too long", 9, 34, []string{"3 functions over 9 lines"}},
		{"too many complex", 10, 33, []string{"33.3% of the functions above complexity 15, more than 33.0%"}},
		{"both", 9, 2, []string{"over 9 lines", "more than 2.0%"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Summarize(funcs, 15, tt.maxLines).Check(tt.maxPercent)
			if tt.want == nil {
				assert.NoError(t, err)
				return
			}
			for _, w := range tt.want {
				assert.ErrorContains(t, err, w)
			}
		})
	}
}

func TestMeasureReportsUnparsableFile(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "bad.go"), []byte("package x\nfunc {"), 0o644))
	_, err := Measure(root)
	assert.ErrorContains(t, err, "bad.go")
}
