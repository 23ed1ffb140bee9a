package mutation

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Target is code to mutate and the tests that judge it.
type Target struct {
	// Files are the Go files to mutate, relative to the module's root.
	Files []string
	// Funcs, when set, limits the mutants to the functions it matches
	// (Mutant.Func).
	Funcs *regexp.Regexp
	// Tests is the package whose tests run against each mutant
	// ("./internal/store/halt"); Run, when set, the -run pattern of the tests
	// that judge it (a package's tests of other code need not run).
	Tests, Run string
	// Timeout bounds one run of the tests (go test -timeout): a mutant
	// that makes them hang is killed when it passes. A mutant's tests are
	// bounded lower when the target's tests are quick (mutantTimeout).
	Timeout time.Duration
}

// Status is how a mutant fared.
type Status string

// The statuses of a mutant.
const (
	// Killed: the tests failed (or timed out) on it.
	Killed Status = "killed"
	// Survived: the tests passed on it, and it is not listed equivalent.
	Survived Status = "survived"
	// Equivalent: the tests passed on it, and the list of equivalents
	// says why nothing can tell it from the original.
	Equivalent Status = "equivalent"
	// NotViable: it does not compile.
	NotViable Status = "not viable"
)

// Result is one mutant's status, and what judging it cost: the wall time
// and the CPU time (user and system, of go test and everything it ran:
// compiling, linking, the tests).
type Result struct {
	Mutant
	Status    Status
	Wall, CPU time.Duration
	// Target is the index of the target it belongs to.
	Target int
}

// Runner runs mutants through go test.
type Runner struct {
	// Dir is the module's root; Go the go command.
	Dir, Go string
	// Workers is how many mutants run at once.
	Workers int
	// Short runs the tests with -short.
	Short bool
	// Select judges each mutant by the tests that run the code it
	// changes (see coverage.go), not by all of its target's.
	Select bool
	// Schema builds the boolean mutants of each target into one test
	// binary (see schema.go), not one binary per mutant.
	Schema bool
	// Equivalent maps the Key of each mutant known equivalent to why.
	Equivalent map[string]string
	// Log receives a line per mutant as it is judged.
	Log io.Writer
}

// Run checks that each target's tests pass unmutated, then judges every
// mutant of every target's files, and returns the results in order.
func (r *Runner) Run(ctx context.Context, targets []Target) ([]Result, error) {
	tmp, err := os.MkdirTemp("", "mutation-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	jobs, err := r.jobs(ctx, targets, tmp)
	if err != nil {
		return nil, err
	}
	results := make([]Result, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for range max(r.Workers, 1) {
		wg.Go(func() {
			for i := range next {
				start := time.Now()
				s, cpu := r.judge(ctx, jobs[i])
				results[i] = Result{Mutant: jobs[i].m, Status: s, Wall: time.Since(start), CPU: cpu, Target: jobs[i].target}
				mu.Lock()
				fmt.Fprintf(r.Log, "%-10s %s\n", s, jobs[i].m)
				mu.Unlock()
			}
		})
	}
	for i := range jobs {
		select {
		case next <- i:
		case <-ctx.Done():
		}
	}
	close(next)
	wg.Wait()
	return results, ctx.Err()
}

// job is one mutant to judge, by its target's tests (those cov selects,
// when set), in schema s when s has its id.
type job struct {
	m      Mutant
	t      Target
	cov    *coverage
	target int
	id     int
	s      *schema
}

// jobs checks that each target's tests pass unmutated, measures their
// coverage when selecting (in tmp), and lists every mutant to judge.
func (r *Runner) jobs(ctx context.Context, targets []Target, tmp string) ([]job, error) {
	var jobs []job
	for i, t := range targets {
		out, _, err := r.test(ctx, t, "", t.Run)
		if err != nil {
			return nil, fmt.Errorf("mutation: the tests of %s fail unmutated: %w\n%s", t.Tests, err, out)
		}
		t.Timeout = mutantTimeout(out, t.Timeout)
		var cov *coverage
		if r.Select {
			dir := filepath.Join(tmp, strconv.Itoa(i))
			if err := os.Mkdir(dir, 0o700); err != nil {
				return nil, err
			}
			var err error
			if cov, err = r.cover(ctx, t, dir); err != nil {
				return nil, err
			}
		}
		first := len(jobs)
		for _, f := range t.Files {
			ms, err := Find(filepath.Join(r.Dir, f))
			if err != nil {
				return nil, err
			}
			for _, m := range ms {
				if t.Funcs == nil || t.Funcs.MatchString(m.Func) {
					m.File = f
					jobs = append(jobs, job{m: m, t: t, cov: cov, target: i, id: len(jobs) + 1})
				}
			}
		}
		if r.Schema && len(jobs) > first {
			if err := r.schemaOf(ctx, t, jobs[first:], tmp, i); err != nil {
				return nil, err
			}
		}
	}
	return jobs, nil
}

// schemaOf builds the schema of target t (number i) and its jobs, in a
// directory of its own under tmp, and gives it to the jobs it has.
func (r *Runner) schemaOf(ctx context.Context, t Target, jobs []job, tmp string, i int) error {
	dir := filepath.Join(tmp, "schema-"+strconv.Itoa(i))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return err
	}
	start := time.Now()
	s, err := r.buildSchema(ctx, t, jobs, dir)
	if err != nil || s == nil {
		return err
	}
	for k := range jobs {
		if s.in[jobs[k].id] {
			jobs[k].s = s
		}
	}
	fmt.Fprintf(r.Log, "mutation: %s: %d of %d mutants in one test binary (built and checked in %s)\n",
		t.Tests, len(s.in), len(jobs), time.Since(start).Round(time.Second))
	return nil
}

// Bounds of a mutant's test time (mutantTimeout).
const (
	timeoutFactor = 20
	minTimeout    = 30 * time.Second
)

// elapsed matches the time go test reports a package's tests took.
var elapsed = regexp.MustCompile(`(?m)^ok\s+\S+\s+([0-9.]+)s`)

// mutantTimeout bounds one run of a mutant's tests by what its target's
// tests took unmutated (out, as go test printed it): timeoutFactor times
// that, at least minTimeout, at most bound. A mutant that makes the tests
// hang (a paging loop whose end test is negated) is killed when they time
// out; at bound (minutes) each such mutant held a worker that long. The
// build is not in the time go test reports, so a loaded machine's slow
// builds do not shorten it.
func mutantTimeout(out []byte, bound time.Duration) time.Duration {
	m := elapsed.FindSubmatch(out)
	if m == nil {
		return bound
	}
	secs, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		return bound
	}
	return min(bound, max(minTimeout, time.Duration(timeoutFactor*secs*float64(time.Second))))
}

// judge runs j's target's tests against its mutant: those its coverage
// says run the code it changes, when known (none: the mutant survives,
// unless it does not compile). It returns the CPU time that took.
func (r *Runner) judge(ctx context.Context, j job) (Status, time.Duration) {
	m, t, run := j.m, j.t, j.t.Run
	if j.cov != nil {
		switch tests, all := j.cov.covering(m); {
		case all:
		case len(tests) == 0:
			if j.s != nil {
				return r.passed(m), 0 // a schema's mutant compiles
			}
			return r.uncovered(ctx, j)
		default:
			run = runPattern(tests)
			t.Timeout = j.cov.timeout(tests, t.Timeout)
		}
	}
	if j.s != nil {
		_, cpu, err := r.runSchema(ctx, j.s, t, j.id, run, t.Timeout)
		var exit *exec.ExitError
		switch {
		case err == nil:
			return r.passed(m), cpu
		case errors.As(err, &exit):
			return Killed, cpu
		}
		// The binary did not run: the mutant is built alone.
	}
	overlay, done, err := r.overlay(m)
	if err != nil {
		return NotViable, 0
	}
	defer done()
	out, cpu, err := r.test(ctx, t, overlay, run)
	switch {
	case err == nil:
		return r.passed(m), cpu
	case bytes.Contains(out, []byte("[build failed]")) || bytes.Contains(out, []byte("[setup failed]")):
		return NotViable, cpu
	}
	return Killed, cpu
}

// uncovered judges j's mutant, which no test reaches: it survives unless
// it does not compile, which building its package says without linking
// a test binary.
func (r *Runner) uncovered(ctx context.Context, j job) (Status, time.Duration) {
	overlay, done, err := r.overlay(j.m)
	if err != nil {
		return NotViable, 0
	}
	defer done()
	cmd, cancel := r.command(ctx, j.t, "build", "-overlay="+overlay, "./"+filepath.ToSlash(filepath.Dir(j.m.File)))
	defer cancel()
	if cmd.Run() != nil {
		return NotViable, cpuOf(cmd)
	}
	return r.passed(j.m), cpuOf(cmd)
}

// overlay writes m's file mutated, and the overlay that puts it in a
// build, in a directory of its own, and returns the overlay's path and
// what removes them.
func (r *Runner) overlay(m Mutant) (string, func(), error) {
	path := filepath.Join(r.Dir, m.File)
	src, err := os.ReadFile(path)
	if err != nil {
		return "", nil, err
	}
	dir, err := os.MkdirTemp("", "mutant-")
	if err != nil {
		return "", nil, err
	}
	done := func() { _ = os.RemoveAll(dir) }
	mutated := filepath.Join(dir, filepath.Base(path))
	overlay := filepath.Join(dir, "overlay.json")
	abs, err := filepath.Abs(path)
	if err != nil {
		done()
		return "", nil, err
	}
	spec, err := json.Marshal(map[string]map[string]string{"Replace": {abs: mutated}})
	if err == nil {
		err = os.WriteFile(mutated, Apply(src, m), 0o600)
	}
	if err == nil {
		err = os.WriteFile(overlay, spec, 0o600)
	}
	if err != nil {
		done()
		return "", nil, err
	}
	return overlay, done, nil
}

// passed is the status of m when the tests pass on it.
func (r *Runner) passed(m Mutant) Status {
	if r.Equivalent[m.Key()] != "" {
		return Equivalent
	}
	return Survived
}

// cpuOf is the CPU time cmd, run, took with everything it waited for.
func cpuOf(cmd *exec.Cmd) time.Duration {
	if cmd.ProcessState == nil {
		return 0
	}
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// test runs t's tests that match run (all, when empty), with the overlay
// file when given, and returns what they printed and the CPU time they
// took.
func (r *Runner) test(ctx context.Context, t Target, overlay, run string) ([]byte, time.Duration, error) {
	args := []string{"test", "-count=1", "-failfast", "-vet=off", "-timeout=" + t.Timeout.String()}
	if overlay != "" {
		args = append(args, "-overlay="+overlay)
	}
	if r.Short {
		args = append(args, "-short")
	}
	if run != "" {
		args = append(args, "-run="+run)
	}
	cmd, cancel := r.command(ctx, t, append(args, t.Tests)...)
	defer cancel()
	out, err := cmd.CombinedOutput()
	return out, cpuOf(cmd), err
}

// goCombined runs the go command with args, bounded as command, and
// returns what it printed.
func (r *Runner) goCombined(ctx context.Context, t Target, args ...string) ([]byte, error) {
	cmd, cancel := r.command(ctx, t, args...)
	defer cancel()
	return cmd.CombinedOutput()
}

// command is the go command with args, in the module's root, bounded by
// t's timeout and two minutes to build; the caller calls cancel once it
// has run.
func (r *Runner) command(ctx context.Context, t Target, args ...string) (*exec.Cmd, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(ctx, t.Timeout+2*time.Minute)
	cmd := exec.CommandContext(ctx, r.Go, args...)
	cmd.Dir = r.Dir
	return cmd, cancel
}

// Summary counts results.
type Summary struct {
	Killed, Survived, Equivalent, NotViable int
}

// Summarize counts rs.
func Summarize(rs []Result) Summary {
	var s Summary
	for _, r := range rs {
		switch r.Status {
		case Killed:
			s.Killed++
		case Survived:
			s.Survived++
		case Equivalent:
			s.Equivalent++
		case NotViable:
			s.NotViable++
		}
	}
	return s
}

// String is the figure make mutate prints: killed of the viable
// mutants, and how the others fared.
func (s Summary) String() string {
	n := s.Killed + s.Survived + s.Equivalent
	pct := 0.0
	if n > 0 {
		pct = 100 * float64(s.Killed) / float64(n)
	}
	return fmt.Sprintf("mutation: %d/%d killed (%.1f%%); %d equivalent (listed), %d survived, %d not viable",
		s.Killed, n, pct, s.Equivalent, s.Survived, s.NotViable)
}

// ReadEquivalents reads a list of equivalent mutants: a line per mutant,
// its Key, a tab and why it is equivalent; blank lines and lines
// starting with # are comments. A line without a reason is an error.
func ReadEquivalents(r io.Reader) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, why, ok := strings.Cut(line, "\t")
		if !ok || strings.TrimSpace(why) == "" {
			return nil, fmt.Errorf("equivalents: line %d: want the mutant's key, a tab and why it is equivalent", n)
		}
		out[strings.TrimSpace(key)] = strings.TrimSpace(why)
	}
	if err := sc.Err(); err != nil {
		return nil, errors.Join(errors.New("equivalents"), err)
	}
	return out, nil
}

// Cost is what judging the mutants of one target took: how many, the
// sum of their wall times (over all workers) and of their CPU times.
// Where the time goes says what to speed up: CPU far below wall is a
// machine shared with other work; CPU per mutant is mostly building it.
type Cost struct {
	Tests     string
	Mutants   int
	Wall, CPU time.Duration
}

// Costs are the costs of rs by target, in the order of targets.
func Costs(targets []Target, rs []Result) []Cost {
	out := make([]Cost, len(targets))
	for i, t := range targets {
		out[i].Tests = t.Tests
	}
	for _, r := range rs {
		if r.Target < 0 || r.Target >= len(out) {
			continue
		}
		c := &out[r.Target]
		c.Mutants++
		c.Wall += r.Wall
		c.CPU += r.CPU
	}
	return out
}

// String is the line make mutate prints of c.
func (c Cost) String() string {
	n := time.Duration(max(c.Mutants, 1))
	return fmt.Sprintf("mutation: %s: %d mutants, wall %s (%s each), cpu %s (%s each)",
		c.Tests, c.Mutants, c.Wall.Round(time.Second), (c.Wall / n).Round(100*time.Millisecond),
		c.CPU.Round(time.Second), (c.CPU / n).Round(100*time.Millisecond))
}
