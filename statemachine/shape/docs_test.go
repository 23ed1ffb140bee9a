package shape

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the diagram in statemachine/doc.go and the state table in client/help/statemachine.md from the shape")

const (
	docFile  = "../doc.go"
	pageFile = "../../client/help/statemachine.md"
	// diagramIntro starts the line that introduces the diagram in
	// statemachine's package doc; the code block after it is the diagram.
	diagramIntro = "// The machine, as package shape declares it"
	// tableIntro is the help page's line above the state table.
	tableIntro = "<!-- The State and On failure columns are generated from statemachine/shape: go test ./statemachine/shape -update -->"
)

// chain returns from, then the states that follow it on success (Next),
// up to an end, a loop's Choice, or a state already in seen (each
// included); it adds them to seen.
func (m Machine) chain(from string, seen map[string]bool) []string {
	var out []string
	for n := from; n != ""; n = m.Next(n) {
		out = append(out, n)
		if seen[n] {
			break
		}
		seen[n] = true
		if _, ok := m.Loop(n); ok {
			break
		}
	}
	return out
}

// diagram is the machine drawn as text: the success path, each loop
// Choice's rules in the order the path meets them, then where each task's
// errors go.
func (m Machine) diagram() []string {
	seen := map[string]bool{}
	path := m.chain(m.StartAt(), seen)
	lines := []string{strings.Join(path, " -> ")}
	// The entry's rules, then each loop's, in the order the paths meet
	// the loops.
	queue := []string{path[len(path)-1]}
	describe := func(c Choice) {
		lines = append(lines, c.Name+", the first rule that holds:")
		var conds []string
		for _, r := range c.Rules {
			conds = append(conds, r.Variable+" "+r.Test.String())
		}
		conds = append(conds, "otherwise")
		width := len(slices.MaxFunc(conds, func(a, b string) int { return len(a) - len(b) }))
		for i, cond := range conds {
			to := c.Default
			if i < len(c.Rules) {
				to = c.Rules[i].Next
			}
			chain := m.chain(to, seen)
			lines = append(lines, fmt.Sprintf("    %-*s -> %s", width, cond, strings.Join(chain, " -> ")))
			queue = append(queue, chain[len(chain)-1])
		}
	}
	if m.Entry != nil {
		describe(*m.Entry)
	}
	described := map[string]bool{}
	for len(queue) > 0 {
		l, ok := m.Loop(queue[0])
		queue = queue[1:]
		if !ok || described[l.Choice.Name] {
			continue
		}
		described[l.Choice.Name] = true
		describe(l.Choice)
	}
	lines = append(lines, "")
	width := 0
	for _, t := range m.Tasks {
		width = max(width, len(t.Name))
	}
	for _, t := range m.Tasks {
		var routes []string
		for _, g := range groupCatches(t.Catches()) {
			var errs []string
			for _, c := range g {
				errs = append(errs, c.Errors...)
			}
			routes = append(routes, "["+strings.Join(errs, ", ")+"] -> "+g[0].Next)
		}
		lines = append(lines, fmt.Sprintf("%-*s %s", width, t.Name, strings.Join(routes, "; ")))
	}
	return lines
}

// groupCatches splits catches into runs of consecutive ones with the same
// Next.
func groupCatches(cs []Catch) [][]Catch {
	var out [][]Catch
	for _, c := range cs {
		if n := len(out); n > 0 && out[n-1][0].Next == c.Next {
			out[n-1] = append(out[n-1], c)
			continue
		}
		out = append(out, []Catch{c})
	}
	return out
}

// onFailure is a task's On failure cell in the help page's state table: where its errors
// go, and on from there while cleaning up succeeds.
func (m Machine) onFailure(t Task) string {
	groups := groupCatches(t.Catches())
	path := func(next string) string { return strings.Join(m.chain(next, map[string]bool{}), " -> ") }
	if len(groups) == 1 {
		var notes []string
		for _, c := range groups[0] {
			if c.Note != "" {
				notes = append(notes, c.Note)
			}
		}
		if len(notes) == 0 {
			return path(groups[0][0].Next)
		}
		return path(groups[0][0].Next) + " (" + strings.Join(notes, "; ") + ")"
	}
	var routes []string
	for _, g := range groups {
		var labels []string
		for _, c := range g {
			label := strings.Join(c.Errors, ", ")
			if slices.Equal(c.Errors, []string{ErrorAll}) {
				label = "anything else"
			}
			if c.Note != "" {
				label += " (" + c.Note + ")"
			}
			labels = append(labels, label)
		}
		routes = append(routes, strings.Join(labels, ", ")+": "+path(g[0].Next))
	}
	return strings.Join(routes, "; ")
}

// successPath is the help page's one-line summary of a deploy that succeeds,
// from the entry's Default: the states up to each loop, the loop's wait and task repeated, then
// where its True rule leads, up to the end.
func (m Machine) successPath() string {
	seen := map[string]bool{}
	start := m.StartAt()
	if m.Entry != nil {
		start = m.Entry.Default // a deploy's path, past the entry Choice
	}
	path := m.chain(start, seen)
	words := []string{strings.Join(path[:len(path)-1], " -> ")}
	for l, ok := m.Loop(path[len(path)-1]); ok; l, ok = m.Loop(path[len(path)-1]) {
		loop := m.chain(l.Choice.Default, seen)
		if loop[len(loop)-1] == l.Choice.Name {
			loop = loop[:len(loop)-1]
		}
		words = append(words, "("+strings.Join(loop, " -> ")+")*")
		for _, r := range l.Choice.Rules {
			if r.Test == True { // the loop's first true rule is its done
				path = m.chain(r.Next, seen)
				break
			}
		}
		if _, more := m.Loop(path[len(path)-1]); more {
			if len(path) > 1 { // a loop's done may lead straight into the next loop
				words = append(words, strings.Join(path[:len(path)-1], " -> "))
			}
		} else {
			words = append(words, strings.Join(path, " -> "))
		}
	}
	return strings.Join(words, " -> ")
}

// words is the help page's summary of the retry policy.
func (r Retry) words() string {
	return fmt.Sprintf("(%d s, x%g, at most %d s, up to %d retries)", r.IntervalSeconds, r.BackoffRate, r.MaxDelaySeconds, r.MaxAttempts)
}

// replaceDiagram returns doc with the code block after the diagram's
// introduction replaced by diagram.
func replaceDiagram(doc string, diagram []string) (string, error) {
	lines := strings.Split(doc, "\n")
	i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, diagramIntro) })
	if i < 0 {
		return "", fmt.Errorf("no line starting %q", diagramIntro)
	}
	for i < len(lines) && lines[i] != "//" { // the end of the introduction
		i++
	}
	j := i + 1
	for j < len(lines) && (strings.HasPrefix(lines[j], "//\t") || lines[j] == "//") {
		j++
	}
	for j > i+1 && lines[j-1] == "//" {
		j--
	}
	var block []string
	for _, l := range diagram {
		if l == "" {
			block = append(block, "//")
			continue
		}
		block = append(block, "//\t"+l)
	}
	return strings.Join(slices.Concat(lines[:i+1], block, lines[j:]), "\n"), nil
}

// replaceTable returns page with the state table under tableIntro
// rewritten: a row per task, in the shape's order, its What it does cell
// kept (empty for a task the table did not have).
func (m Machine) replaceTable(page string) (string, error) {
	lines := strings.Split(page, "\n")
	i := slices.Index(lines, tableIntro)
	if i < 0 {
		return "", fmt.Errorf("no line %q", tableIntro)
	}
	start := i + 3 // the introduction, the header, the separator
	end := start
	does := map[string]string{}
	for ; end < len(lines) && strings.HasPrefix(lines[end], "|"); end++ {
		cells := strings.Split(strings.TrimSuffix(strings.TrimPrefix(lines[end], "| "), " |"), " | ")
		if len(cells) != 3 {
			return "", fmt.Errorf("page line %d has %d cells, want 3 (State, What it does, On failure): %s", end+1, len(cells), lines[end])
		}
		does[cells[0]] = cells[1]
	}
	var rows []string
	for _, t := range m.Tasks {
		rows = append(rows, "| "+t.Name+" | "+does[t.Name]+" | "+m.onFailure(t)+" |")
	}
	header := []string{tableIntro, "| State | What it does | On failure |", "|---|---|---|"}
	return strings.Join(slices.Concat(lines[:i], header, rows, lines[end:]), "\n"), nil
}

// golden compares file with want, rewriting it first under -update.
func golden(t *testing.T, file, want string) {
	t.Helper()
	if *update {
		require.NoError(t, os.WriteFile(file, []byte(want), 0o644))
	}
	got, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, want, string(got), "%s does not say what the shape says: run `go test ./statemachine/shape -update`", file)
}

func TestDocDiagram(t *testing.T) {
	doc, err := os.ReadFile(docFile)
	require.NoError(t, err)
	want, err := replaceDiagram(string(doc), Deploy().diagram())
	require.NoError(t, err)
	golden(t, docFile, want)
}

func TestHelpPageStateTable(t *testing.T) {
	m := Deploy()
	page, err := os.ReadFile(pageFile)
	require.NoError(t, err)
	want, err := m.replaceTable(string(page))
	require.NoError(t, err)
	golden(t, pageFile, want)

	for _, l := range strings.Split(want, "\n") {
		if strings.HasPrefix(l, "| ") && strings.HasSuffix(l, " |") && strings.Contains(l, " |  | ") {
			t.Errorf("the help page's state table has a row without a What it does: %s", l)
		}
	}
	assert.Contains(t, want, "`"+m.successPath()+"`", "the help page's summary of the state machine")
	assert.Contains(t, want, "exponential backoff "+m.Retry.words(), "the help page's summary of the retry policy")
}

func TestReplaceRefuses(t *testing.T) {
	m := Deploy()
	_, err := replaceDiagram("package x\n", nil)
	assert.ErrorContains(t, err, diagramIntro)
	_, err = m.replaceTable("# x\n")
	assert.ErrorContains(t, err, tableIntro)
	_, err = m.replaceTable(tableIntro + "\n| State | What it does | On failure |\n|---|---|---|\n| a | b |\n")
	assert.ErrorContains(t, err, "2 cells")
}
