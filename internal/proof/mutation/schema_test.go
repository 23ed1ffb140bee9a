package mutation

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSchemaFile: each boolean mutant is rewritten into a call of its
// helper, nested ones inside the others, the right operand of && and ||
// in a function literal (evaluated only when it decides), lines kept; one
// whose text regroups under Go's precedence (the first && of a && b && !c
// made || is a || (b && !c), not (a || b) && !c) picks its chain's text as
// the mutant makes it; an arithmetic mutant is not in the schema.
func TestSchemaFile(t *testing.T) {
	const src = `package p

func f(a, b, c bool, n int) bool {
	return a && b && !c ||
		n*2 >= 3 && n != 1
}
`
	path := write(t, t.TempDir(), "p.go", src)
	ms, err := Find(path)
	require.NoError(t, err)
	ids := make([]int, len(ms))
	for i := range ms {
		ids[i] = i + 1
	}
	out, took, err := schemaFile([]byte(src), ms, ids)
	require.NoError(t, err)
	assert.Contains(t, string(out), "mutationSchemaPick(func() bool { return a || b && !c || \t\tn*2 >= 3 && n != 1 }, 1, ",
		"a && b made || regroups the chain: its text, on one line, when active")
	assert.Contains(t, string(out), "mutationSchemaLogic(a && b , func() bool { return mutationSchemaNot(c, 3) }, true, 2) ||\n")
	var in []string
	for i, m := range ms {
		if _, ok := took[ids[i]]; ok {
			in = append(in, m.Was+" => "+m.Now)
		}
	}
	assert.Len(t, in, len(ms)-1, "all but n*2 made n/2: arithmetic")
	assert.Equal(t, strings.Count(src, "\n"), strings.Count(string(out), "\n"), "lines kept")
}

// TestSchemaMatchesText: for every input, the schema's binary run with a
// mutant's id computes what that mutant built alone (its text) computes,
// and without one what the original does.
func TestSchemaMatchesText(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program per mutant")
	}
	const src = `package main

import "fmt"

func f(a, b, c bool, n int) bool {
	return a && b && !c ||
		n*2 >= 3 && n != 1 || !(a || c) && n < 2
}

func main() {
	for _, a := range []bool{false, true} {
		for _, b := range []bool{false, true} {
			for _, c := range []bool{false, true} {
				for n := range 4 {
					fmt.Print(f(a, b, c, n), " ")
				}
			}
		}
	}
}
`
	dir := t.TempDir()
	write(t, dir, "go.mod", "module example.com/p\n\ngo 1.26\n")
	path := write(t, dir, "p.go", src)
	goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	run := func(t *testing.T, overlay map[string][]byte, env string) string {
		t.Helper()
		o := t.TempDir()
		replace := map[string]string{}
		for name, body := range overlay {
			p := filepath.Join(o, filepath.Base(name))
			require.NoError(t, os.WriteFile(p, body, 0o600))
			replace[filepath.Join(dir, name)] = p
		}
		spec, err := json.Marshal(map[string]map[string]string{"Replace": replace})
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(o, "overlay.json"), spec, 0o600))
		cmd := exec.Command(goCmd, "run", "-overlay="+filepath.Join(o, "overlay.json"), ".")
		cmd.Dir, cmd.Env = dir, append(os.Environ(), env)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return string(out)
	}
	ms, err := Find(path)
	require.NoError(t, err)
	ids := make([]int, len(ms))
	for i := range ms {
		ids[i] = i + 1
	}
	schemaSrc, took, err := schemaFile([]byte(src), ms, ids)
	require.NoError(t, err)
	schema := map[string][]byte{"p.go": schemaSrc, schemaHelperFile: schemaHelpers("main")}
	assert.Equal(t, run(t, nil, ""), run(t, schema, ""), "unmutated")
	for i, m := range ms {
		if _, ok := took[ids[i]]; !ok {
			continue
		}
		want := run(t, map[string][]byte{"p.go": Apply([]byte(src), m)}, "")
		assert.Equal(t, want, run(t, schema, schemaEnv+"="+strconv.Itoa(ids[i])), "%s", m)
	}
	assert.Len(t, took, len(ms)-1, "all but n*2 made n/2")
}
