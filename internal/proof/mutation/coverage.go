package mutation

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// Test selection (Runner.Select): a test that never runs the code a
// mutant changes cannot fail because of it, so each mutant needs only the
// tests that run it. A target's tests are run once each, alone, with
// coverage of the packages of its files; a mutant is then judged by the
// tests whose coverage includes where it is, and one no test reaches is
// only compiled (it survives, unless it does not compile). A target whose
// tests are not one package, or one of whose tests fails alone, is judged
// by all of its tests, as without selection.

// coverage is which lines of the mutated files each test of a target
// runs.
type coverage struct {
	module string                   // the module's path: profiles name files by import path
	blocks []block                  // every block of the mutated packages
	runs   map[string][]block       // the blocks each test ran
	order  []string                 // the tests, in the order go test lists them
	took   map[string]time.Duration // how long each test took alone (with coverage)
}

// block is a span of source a cover profile counts: file (as the
// profile names it), from line.col to line.col, and whether it ran.
type block struct {
	file                   string
	line0, col0, line, col int
	ran                    bool
}

func (b block) contains(file string, line, col int) bool {
	return b.file == file &&
		(line > b.line0 || line == b.line0 && col >= b.col0) &&
		(line < b.line || line == b.line && col <= b.col)
}

// covering are the tests that run the code m changes: those that ran the
// block it is in. A profile's blocks leave out the case expressions of a
// switch; one of those is reached by the tests that ran any block of its
// function. A mutant outside every block and function (a package-level
// variable's initializer) is reached by every test (all is true).
func (c *coverage) covering(m Mutant) (tests []string, all bool) {
	file := path.Join(c.module, filepath.ToSlash(m.File))
	reached := func(b block) bool { return b.contains(file, m.Line, m.Col) }
	if !slices.ContainsFunc(c.blocks, reached) {
		if m.FuncLine == 0 {
			return nil, true
		}
		reached = func(b block) bool { return b.file == file && b.line0 >= m.FuncLine && b.line <= m.FuncEnd }
	}
	for _, test := range c.order {
		if slices.ContainsFunc(c.runs[test], reached) {
			tests = append(tests, test)
		}
	}
	return tests, false
}

// timeout bounds a run of tests: timeoutFactor times what they took
// alone with coverage, at least minTimeout, at most bound. A mutant
// that makes them take that long hangs them.
func (c *coverage) timeout(tests []string, bound time.Duration) time.Duration {
	var sum time.Duration
	for _, t := range tests {
		sum += c.took[t]
	}
	return min(bound, max(minTimeout, timeoutFactor*sum))
}

// runPattern is the -run pattern of exactly tests.
func runPattern(tests []string) string {
	quoted := make([]string, len(tests))
	for i, t := range tests {
		quoted[i] = regexp.QuoteMeta(t)
	}
	return "^(" + strings.Join(quoted, "|") + ")$"
}

// cover runs each of t's tests alone with coverage of t's files'
// packages, in dir (a temporary directory of its own). It returns nil
// when selection cannot apply to t (see above).
func (r *Runner) cover(ctx context.Context, t Target, dir string) (*coverage, error) {
	pkgDir, err := r.goOutput(ctx, "list", "-f", "{{.Dir}}", t.Tests)
	if err != nil || strings.Contains(pkgDir, "\n") {
		return nil, nil // not one package
	}
	module, err := r.goOutput(ctx, "list", "-m")
	if err != nil {
		return nil, err
	}
	var pkgs []string
	for _, f := range t.Files {
		if p := "./" + filepath.ToSlash(filepath.Dir(f)); !slices.Contains(pkgs, p) {
			pkgs = append(pkgs, p)
		}
	}
	bin := filepath.Join(dir, "cover.test")
	if _, err := r.goOutput(ctx, "test", "-c", "-cover", "-covermode=set", "-coverpkg="+strings.Join(pkgs, ","), "-o", bin, t.Tests); err != nil {
		return nil, err
	}
	tests, err := listTests(ctx, bin, pkgDir, t.Run)
	if err != nil {
		return nil, err
	}
	c := &coverage{module: module, runs: map[string][]block{}, order: tests, took: map[string]time.Duration{}}
	record := func(test string, blocks []block) {
		if c.blocks == nil {
			c.blocks = blocks // every profile lists every block
		}
		for _, b := range blocks {
			if b.ran {
				c.runs[test] = append(c.runs[test], b)
			}
		}
	}
	var mu sync.Mutex
	var failed []string
	sem := make(chan struct{}, max(r.Workers, 1))
	var wg sync.WaitGroup
	for i, test := range tests {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			start := time.Now()
			blocks, err := r.coverOne(ctx, t, bin, pkgDir, test, filepath.Join(dir, fmt.Sprintf("%d.cover", i)))
			mu.Lock()
			defer mu.Unlock()
			c.took[test] = time.Since(start)
			if err != nil {
				failed = append(failed, test)
				return
			}
			record(test, blocks)
		})
	}
	wg.Wait()
	if len(failed) > 0 {
		fmt.Fprintf(r.Log, "mutation: %s: every test runs for each mutant (alone, %s fails)\n", t.Tests, strings.Join(failed, ", "))
		return nil, nil
	}
	return c, ctx.Err()
}

// listTests are the tests, examples and fuzz targets of the test binary
// bin that the -run pattern run (all, when empty) selects.
func listTests(ctx context.Context, bin, dir, run string) ([]string, error) {
	cmd := exec.CommandContext(ctx, bin, "-test.list", ".*")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("mutation: list the tests of %s: %w", dir, err)
	}
	var re *regexp.Regexp
	if run != "" {
		if re, err = regexp.Compile(run); err != nil {
			return nil, err
		}
	}
	var tests []string
	for name := range strings.FieldsSeq(string(out)) {
		if strings.HasPrefix(name, "Benchmark") || re != nil && !re.MatchString(name) {
			continue
		}
		tests = append(tests, name)
	}
	return tests, nil
}

// coverOne runs test alone and returns the blocks it ran.
func (r *Runner) coverOne(ctx context.Context, t Target, bin, dir, test, profile string) ([]block, error) {
	args := []string{"-test.run=" + runPattern([]string{test}), "-test.count=1", "-test.coverprofile=" + profile}
	if r.Short {
		args = append(args, "-test.short")
	}
	if t.Timeout > 0 {
		args = append(args, "-test.timeout="+t.Timeout.String())
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%s: %w\n%s", test, err, out)
	}
	return readProfile(profile)
}

// readProfile reads the blocks of a cover profile ("name.go:line.col,
// line.col statements count"), run when their count is not 0.
func readProfile(name string) ([]block, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []block
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		file, rest, ok := strings.Cut(line, ":")
		fields := strings.Fields(rest)
		if !ok || len(fields) != 3 {
			continue
		}
		var b block
		if _, err := fmt.Sscanf(fields[0], "%d.%d,%d.%d", &b.line0, &b.col0, &b.line, &b.col); err != nil {
			continue
		}
		b.file, b.ran = file, fields[2] != "0"
		out = append(out, b)
	}
	return out, sc.Err()
}

// goOutput runs the go command in the module's root and returns what it
// printed, trimmed.
func (r *Runner) goOutput(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, r.Go, args...)
	cmd.Dir = r.Dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("mutation: go %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}
