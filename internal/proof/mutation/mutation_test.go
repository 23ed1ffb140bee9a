package mutation

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const limitSrc = `package limit

// Over reports whether n is over max; names are exempt.
func Over(n, max int, name string) bool {
	if name != "" && !exempt(name) {
		return n > max
	}
	return n*2 > max+max
}

func exempt(name string) bool { return name == "root" + "" }
`

const limitTest = `package limit

import "testing"

func TestOver(t *testing.T) {
	if !Over(3, 2, "a") || Over(2, 2, "a") || Over(0, 1, "root") {
		t.Fatal("wrong")
	}
}

func TestNoName(t *testing.T) {
	if Over(1, 2, "") {
		t.Fatal("wrong")
	}
}
`

// neverSrc is code no test of limitTest runs.
const neverSrc = `package limit

func never(n int) bool { return n > 1 }
`

func write(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
	return p
}

// TestFind: every comparison, logical operator, ! and arithmetic operator
// is mutated, each named by its function and the expression before and
// after; a + with a string literal is not (it would not compile).
func TestFind(t *testing.T) {
	path := write(t, t.TempDir(), "limit.go", limitSrc)
	ms, err := Find(path)
	require.NoError(t, err)
	var got []string
	for _, m := range ms {
		got = append(got, m.Func+": "+m.Was+" => "+m.Now)
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		mutated := string(Apply(src, m))
		assert.Contains(t, mutated, m.Now, "Apply makes %s", m)
		assert.Equal(t, len(src)-m.Len+len(m.With), len(mutated))
	}
	assert.Equal(t, []string{
		`Over: name != "" => name == ""`,
		`Over: name != "" && !exempt(name) => name != "" || !exempt(name)`,
		`Over: !exempt(name) => exempt(name)`,
		`Over: n > max => n >= max`,
		`Over: n > max => n <= max`,
		`Over: n*2 => n/2`,
		`Over: n*2 > max+max => n*2 >= max+max`,
		`Over: n*2 > max+max => n*2 <= max+max`,
		`Over: max+max => max-max`,
		`exempt: name == "root" + "" => name != "root" + ""`,
	}, got)
	assert.Equal(t, 6, ms[3].Line)
	assert.Equal(t, path+` Over: n > max => n >= max`, ms[3].Key())
}

// TestRun: a mutant the tests fail on is killed, one they pass on
// survived unless listed equivalent; a mutant that does not compile is
// not viable; the checkout is never written (go test -overlay); each
// mutant fares the same built alone or in its target's schema.
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module per mutant")
	}
	for _, tc := range []struct {
		name        string
		sel, schema bool
	}{
		{"every test", false, false},
		{"the tests that run the mutant", true, false},
		{"in one schema", true, true},
		{"in one schema, every test", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, "go.mod", "module example.com/limit\n\ngo 1.26\n")
			path := write(t, dir, "limit.go", limitSrc)
			write(t, dir, "never.go", neverSrc)
			write(t, dir, "limit_test.go", limitTest)
			goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
			var log strings.Builder
			r := &Runner{Dir: dir, Go: goCmd, Workers: 2, Log: &log, Select: tc.sel, Schema: tc.schema,
				Equivalent: map[string]string{`limit.go exempt: name == "root" + "" => name != "root" + ""`: "every name the test gives is exempt or not either way"}}
			results, err := r.Run(t.Context(), []Target{{Files: []string{"limit.go", "never.go"}, Tests: "./", Timeout: time.Minute}})
			require.NoError(t, err)
			status := map[string]Status{}
			for _, res := range results {
				status[res.Was+" => "+res.Now] = res.Status
			}
			assert.Equal(t, Killed, status["n > max => n >= max"])
			assert.Equal(t, Killed, status["n*2 > max+max => n*2 <= max+max"])
			assert.Equal(t, Survived, status["n*2 > max+max => n*2 >= max+max"], "the test never reaches it with n*2 == max+max")
			assert.Equal(t, Equivalent, status[`name == "root" + "" => name != "root" + ""`], "survived, listed")
			assert.Equal(t, Survived, status["n > 1 => n >= 1"], "no test runs it")
			src, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, limitSrc, string(src), "the file is untouched")
			s := Summarize(results)
			assert.Equal(t, len(results), s.Killed+s.Survived+s.Equivalent+s.NotViable)
			assert.Contains(t, log.String(), "killed")
			costs := Costs([]Target{{Tests: "./"}}, results)
			require.Len(t, costs, 1)
			assert.Equal(t, len(results), costs[0].Mutants)
			assert.Positive(t, costs[0].CPU, "the CPU of go test and what it ran")
			assert.NotContains(t, log.String(), "every test runs", "selection applies")
			if tc.schema {
				assert.Contains(t, log.String(), "mutation: ./: 10 of 12 mutants in one test binary", "all but the arithmetic ones")
			}
		})
	}
}

// TestCovering: a mutant is judged by the tests that ran the block it is
// in, in the order go test lists them; one in no block (a switch's case
// expression) by the tests that ran any block of its function; one
// outside every function by all of them; bounded by what those tests
// took alone.
func TestCovering(t *testing.T) {
	profile := write(t, t.TempDir(), "c.out", "mode: set\n"+
		"example.com/limit/limit.go:4.49,5.36 1 1\n"+
		"example.com/limit/limit.go:5.36,7.3 1 0\n"+
		"example.com/limit/never.go:3.40,3.60 1 1\n")
	blocks, err := readProfile(profile)
	require.NoError(t, err)
	require.Len(t, blocks, 3)
	assert.Equal(t, []bool{true, false, true}, []bool{blocks[0].ran, blocks[1].ran, blocks[2].ran})
	c := &coverage{module: "example.com/limit", blocks: blocks, order: []string{"TestB", "TestA"},
		runs: map[string][]block{"TestA": {blocks[0], blocks[2]}, "TestB": {blocks[0]}}}
	for _, tc := range []struct {
		name  string
		m     Mutant
		tests []string
		all   bool
	}{
		{"in a block both ran", Mutant{File: "limit.go", Line: 5, Col: 10}, []string{"TestB", "TestA"}, false},
		{"in a block one ran", Mutant{File: "never.go", Line: 3, Col: 45}, []string{"TestA"}, false},
		{"in a block none ran", Mutant{File: "limit.go", Line: 6, Col: 2}, nil, false},
		{"in no block, in a function", Mutant{File: "limit.go", Line: 8, Col: 5, FuncLine: 3, FuncEnd: 9}, []string{"TestB", "TestA"}, false},
		{"in no block, in a function none ran", Mutant{File: "never.go", Line: 9, Col: 5, FuncLine: 8, FuncEnd: 10}, nil, false},
		{"outside every function", Mutant{File: "limit.go", Line: 12, Col: 9}, nil, true},
	} {
		tests, all := c.covering(tc.m)
		assert.Equal(t, tc.tests, tests, tc.name)
		assert.Equal(t, tc.all, all, tc.name)
	}
	assert.Equal(t, `^(TestA|Test\.B)$`, runPattern([]string{"TestA", "Test.B"}))
	c.took = map[string]time.Duration{"TestA": 2 * time.Second, "TestB": time.Second}
	assert.Equal(t, 60*time.Second, c.timeout([]string{"TestB", "TestA"}, 3*time.Minute), "timeoutFactor times what they took alone")
	assert.Equal(t, minTimeout, c.timeout([]string{"TestB"}, 3*time.Minute), "at least minTimeout")
	assert.Equal(t, 45*time.Second, c.timeout([]string{"TestB", "TestA"}, 45*time.Second), "at most the target's bound")
}

// TestReadEquivalents: a line per mutant, its key and its reason; a line
// without a reason is refused.
func TestReadEquivalents(t *testing.T) {
	got, err := ReadEquivalents(strings.NewReader("# why\n\na.go F: x < y => x <= y\tx never equals y\n"))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"a.go F: x < y => x <= y": "x never equals y"}, got)
	_, err = ReadEquivalents(strings.NewReader("a.go F: x < y => x <= y\n"))
	require.ErrorContains(t, err, "line 1")
	_, err = ReadEquivalents(strings.NewReader("a.go F: x < y => x <= y\t \n"))
	require.Error(t, err)
}

func TestSummaryString(t *testing.T) {
	assert.Equal(t, "mutation: 3/4 killed (75.0%); 0 equivalent (listed), 1 survived, 2 not viable",
		Summary{Killed: 3, Survived: 1, NotViable: 2}.String())
	assert.Equal(t, "mutation: 0/0 killed (0.0%); 0 equivalent (listed), 0 survived, 0 not viable", Summary{}.String())
}

// TestMutantTimeout: a mutant's tests are bounded by timeoutFactor times
// what its target's tests took unmutated, at least minTimeout, at most
// the target's bound; without a reported time, by the bound.
func TestMutantTimeout(t *testing.T) {
	for _, tc := range []struct {
		out  string
		want time.Duration
	}{
		{"ok  \texample.com/limit\t0.054s\n", minTimeout},
		{"ok  \texample.com/limit\t4.000s\n", 80 * time.Second},
		{"ok  \texample.com/limit\t60.5s\n", 3 * time.Minute},
		{"FAIL\texample.com/limit [build failed]\n", 3 * time.Minute},
	} {
		assert.Equal(t, tc.want, mutantTimeout([]byte(tc.out), 3*time.Minute), "%q", tc.out)
	}
}
