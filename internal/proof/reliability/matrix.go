package reliability

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/local/sim"
)

// Target returns the fault of kind k at index i of a base run's calls: for
// an AWS call the Nth call of the same service, operation and account; for
// an S3 call the Nth call of the deployer's store; for the invocation
// kinds (LambdaDied, DiedMidway, RoleDenied, RoleExpired) the invocation
// that made the call (and, for DiedMidway, the call's place in it).
func Target(base *Result, i int, k Kind) (Fault, error) {
	if i < 0 || i >= len(base.Calls) {
		return Fault{}, fmt.Errorf("reliability: call index %d outside the base run's %d calls", i, len(base.Calls))
	}
	c := base.Calls[i]
	f := Fault{Kind: k, Index: i, Call: c}
	switch {
	case k.invocationLevel():
		if c.Invocation == 0 {
			return Fault{}, fmt.Errorf("reliability: call %d (%s) belongs to no invocation", i, c)
		}
		f.invocation = c.Invocation
		f.position = i - base.Invocations[c.Invocation-1].First
	case c.S3:
		for _, d := range base.Calls[:i+1] {
			if d.S3 {
				f.s3Nth++
			}
		}
	default:
		n := 0
		for _, d := range base.Calls[:i+1] {
			if !d.S3 && d.Service == c.Service && d.Op == c.Op && d.Account == c.Account {
				n++
			}
		}
		f.rule = &sim.Rule{Op: c.Op, Service: c.Service, Account: c.Account, Nth: n}
	}
	return f, nil
}

// Entry is one cell of the matrix: a schedule and what its run did.
type Entry struct {
	Schedule Schedule
	Result   *Result
	// Err is set when the run could not be made.
	Err error
}

// Matrix is the fault-injection matrix of a scenario.
type Matrix struct {
	Bases   Bases
	Entries []Entry
	Elapsed time.Duration
}

// MatrixOptions select the schedules of a matrix.
type MatrixOptions struct {
	// Families are the families run (default Families()).
	Families []Family
	// Every runs every Every-th schedule of each family and kind (1 or
	// 0: all), starting at Offset: a deterministic sample with every kind
	// in it.
	Every, Offset int
	// Workers bound the runs in parallel (default 2).
	Workers int
	// Progress, when set, is called after each run.
	Progress func(done, total int)
}

// Bases runs the scenario's base runs: the clean deploy, the same deploy
// halted at its first health check, and halted during its bake (rolled
// back; not for a destroy, which has no bake). Each must keep every invariant: there is nothing to compare with
// otherwise.
func (sc *Scenario) Bases(ctx context.Context) (Bases, error) {
	var b Bases
	var err error
	if b.Success, err = sc.Run(ctx, RunOptions{}); err != nil {
		return Bases{}, err
	}
	if b.Success.End != execution.EndSuccess || len(b.Success.Violations) > 0 {
		return Bases{}, fmt.Errorf("reliability: the clean run ended %q (%s: %s) with violations %q", b.Success.End, b.Success.Error, b.Success.Cause, b.Success.Violations)
	}
	if b.Failure, err = sc.Run(ctx, RunOptions{Schedule: Schedule{Base: BaseFailure}}); err != nil {
		return Bases{}, err
	}
	if b.Failure.End != execution.EndFailureClean || len(b.Failure.Violations) > 0 {
		return Bases{}, fmt.Errorf("reliability: the halted run ended %q (%s: %s) with violations %q", b.Failure.End, b.Failure.Error, b.Failure.Cause, b.Failure.Violations)
	}
	if b.Destroy = sc.Destroy; sc.Destroy {
		return b, nil // a destroy has no bake to roll back from
	}
	if b.Rollback, err = sc.Run(ctx, RunOptions{Schedule: Schedule{Base: BaseRollback}}); err != nil {
		return Bases{}, err
	}
	if b.Rollback.End != execution.EndFailureClean || len(b.Rollback.Violations) > 0 {
		return Bases{}, fmt.Errorf("reliability: the run halted during the bake ended %q (%s: %s) with violations %q", b.Rollback.End, b.Rollback.Error, b.Rollback.Cause, b.Rollback.Violations)
	}
	if b.Analysis, err = sc.Run(ctx, RunOptions{Schedule: Schedule{Base: BaseAnalysis}}); err != nil {
		return Bases{}, err
	}
	if a := b.Analysis; a.End != execution.EndFailureClean || len(a.Violations) > 0 || !rolledBackByAnalysis(a) {
		return Bases{}, fmt.Errorf("reliability: the analysed run ended %q (%s: %s) with violations %q, not rolled back by its canary analysis", a.End, a.Error, a.Cause, a.Violations)
	}
	return b, nil
}

// rolledBackByAnalysis reports whether a run failed on its canary
// analysis (the halt it raises names it).
func rolledBackByAnalysis(res *Result) bool {
	return res.Error == failure.NameHalt && strings.Contains(res.Cause, "canary analysis")
}

// RunMatrix runs the bases, then every selected schedule (Bases.Schedules)
// on a bounded pool of workers.
func (sc *Scenario) RunMatrix(ctx context.Context, opts MatrixOptions) (*Matrix, error) {
	if opts.Every < 1 {
		opts.Every = 1
	}
	if len(opts.Families) == 0 {
		opts.Families = Families()
	}
	if opts.Workers < 1 {
		opts.Workers = 2
	}
	started := time.Now()
	bases, err := sc.Bases(ctx)
	if err != nil {
		return nil, err
	}
	m := &Matrix{Bases: bases}
	// The sample is taken per row of the report (family and kind), so
	// every kind is in it: a kind with fewer than Offset+1 schedules
	// contributes its last.
	type row struct {
		family Family
		kind   string
	}
	var rows []row
	byRow := map[row][]Schedule{}
	for _, s := range bases.Schedules() {
		if !slices.Contains(opts.Families, s.Family) {
			continue
		}
		r := row{s.Family, scheduleKind(s)}
		if byRow[r] == nil {
			rows = append(rows, r)
		}
		byRow[r] = append(byRow[r], s)
	}
	for _, r := range rows {
		ss := byRow[r]
		for i := min(opts.Offset, len(ss)-1); i < len(ss); i += opts.Every {
			m.Entries = append(m.Entries, Entry{Schedule: ss[i]})
		}
	}

	work := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for range opts.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				res, err := sc.Run(ctx, RunOptions{Schedule: m.Entries[i].Schedule})
				mu.Lock()
				m.Entries[i].Result, m.Entries[i].Err = res, err
				done++
				if opts.Progress != nil {
					opts.Progress(done, len(m.Entries))
				}
				mu.Unlock()
			}
		}()
	}
	for i := range m.Entries {
		select {
		case work <- i:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(work)
	wg.Wait()
	m.Elapsed = time.Since(started)
	return m, ctx.Err()
}

// Violation is one broken invariant of one cell.
type Violation struct {
	Schedule Schedule
	Message  string
}

// Violations lists every broken invariant of the matrix (a run that could
// not be made counts as one).
func (m *Matrix) Violations() []Violation {
	var out []Violation
	for _, e := range m.Entries {
		switch {
		case e.Err != nil:
			out = append(out, Violation{e.Schedule, "the run failed: " + e.Err.Error()})
		case e.Result == nil:
			out = append(out, Violation{e.Schedule, "the run did not happen"})
		default:
			for _, v := range e.Result.Violations {
				out = append(out, Violation{e.Schedule, v})
			}
			if v := m.Bases.eventsOnly(e); v != "" {
				out = append(out, Violation{e.Schedule, v})
			}
		}
	}
	return out
}

// eventsOnly says how a run whose every fault failed a PutEvents call
// ended otherwise than its base: deploy events are best effort, and
// losing them must never change a deploy's end.
func (b Bases) eventsOnly(e Entry) string {
	base := b.of(e.Schedule.Base)
	if base == nil || len(e.Schedule.Faults) == 0 || e.Schedule.RaceAt != "" || e.Schedule.RaceAfterLost {
		return ""
	}
	for _, f := range e.Schedule.Faults {
		if f.Call.Op != "PutEvents" || f.Kind.invocationLevel() {
			return ""
		}
	}
	if e.Result.End != base.End {
		return fmt.Sprintf("a fault on PutEvents changed the end: %s, not the base's %s", e.Result.End, base.End)
	}
	return ""
}

// of is the base run named base (nil: none).
func (b Bases) of(base Base) *Result {
	switch base {
	case BaseSuccess:
		return b.Success
	case BaseFailure:
		return b.Failure
	case BaseRollback:
		return b.Rollback
	case BaseAnalysis:
		return b.Analysis
	}
	return nil
}

// Counts are the schedules of a matrix per family.
func (m *Matrix) Counts() map[Family]int {
	out := map[Family]int{}
	for _, e := range m.Entries {
		out[e.Schedule.Family]++
	}
	return out
}

// Summary is the matrix's line: "reliability: F schedules injected (S
// single, P pairs, C consistency, R races), V violations".
func (m *Matrix) Summary() string {
	c := m.Counts()
	return fmt.Sprintf("reliability: %d schedules injected (%d single, %d pairs, %d consistency, %d races), %d violations",
		len(m.Entries), c[Single], c[Pair], c[Consistency], c[Race], len(m.Violations()))
}

// Report writes the matrix's table: the base runs, then per family and
// kind the schedules and how they ended, then every violation, then the
// summary line.
func (m *Matrix) Report(w io.Writer) {
	for _, b := range []struct {
		name string
		res  *Result
	}{{"success", m.Bases.Success}, {"failure (" + baseNotes[BaseFailure] + ")", m.Bases.Failure},
		{"rollback (" + baseNotes[BaseRollback] + ")", m.Bases.Rollback}, {"analysis (" + baseNotes[BaseAnalysis] + ")", m.Bases.Analysis}} {
		if b.res == nil {
			continue // a destroy has no rollback base
		}
		fmt.Fprintf(w, "base %s: %d calls (%d AWS, %d S3) in %d task invocations, ended %s\n",
			b.name, len(b.res.Calls), countAWS(b.res.Calls), len(b.res.Calls)-countAWS(b.res.Calls), len(b.res.Invocations), b.res.End)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "family\tkind\tschedules\tSuccess\tFailureClean\tFailureDirty\tother\tviolations\t")
	type row struct{ family, kind string }
	var order []row
	rows := map[row]map[string]int{}
	total := map[string]int{}
	for _, e := range m.Entries {
		k := row{string(e.Schedule.Family), scheduleKind(e.Schedule)}
		if rows[k] == nil {
			rows[k] = map[string]int{}
			order = append(order, k)
		}
		cell := rows[k]
		cell["schedules"]++
		switch {
		case e.Result == nil || e.Result.End == "":
			cell["other"]++
		default:
			cell[e.Result.End]++
		}
		if e.Err != nil {
			cell["violations"]++
		} else if e.Result != nil {
			cell["violations"] += len(e.Result.Violations)
		}
	}
	for _, k := range order {
		cell := rows[k]
		for key, v := range cell {
			total[key] += v
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t\n", k.family, k.kind, cell["schedules"], cell[execution.EndSuccess],
			cell[execution.EndFailureClean], cell[execution.EndFailureDirty], cell["other"], cell["violations"])
	}
	fmt.Fprintf(tw, "total\t\t%d\t%d\t%d\t%d\t%d\t%d\t\n", total["schedules"], total[execution.EndSuccess],
		total[execution.EndFailureClean], total[execution.EndFailureDirty], total["other"], total["violations"])
	tw.Flush()

	dirty := map[string]int{}
	for _, e := range m.Entries {
		if e.Result != nil && e.Result.End == execution.EndFailureDirty {
			dirty[scheduleKind(e.Schedule)+" in "+strings.Join(slices.Compact(slices.Clone(e.Result.FiredTasks)), "+")]++
		}
	}
	if len(dirty) > 0 {
		fmt.Fprintln(w, "FailureDirty (faults in a clean-up past its point of no return):")
		for _, k := range slices.Sorted(maps.Keys(dirty)) {
			fmt.Fprintf(w, "  %-50s %d\n", k, dirty[k])
		}
	}
	vs := m.Violations()
	if len(vs) > 0 {
		fmt.Fprintln(w, "violations:")
		for _, v := range vs {
			fmt.Fprintf(w, "  %s: %s\n", v.Schedule, v.Message)
		}
	}
	fmt.Fprintln(w, m.Summary())
}

// scheduleKind names a schedule's kind for the report's rows.
func scheduleKind(s Schedule) string {
	var k string
	switch {
	case s.Behaviour != "":
		k = "behaviour " + string(s.Behaviour)
	case s.Hide != nil:
		k = string(s.Hide.Kind)
	case s.RaceAfterLost:
		k = "after a lost response"
	case s.RaceAt != "":
		k = "at a state"
	case len(s.Faults) > 0:
		k = string(s.Faults[0].Kind)
	default:
		k = "none"
	}
	if s.Base != BaseSuccess {
		k += " (" + string(s.Base) + " base)"
	}
	return k
}

func countAWS(calls []Call) int {
	n := 0
	for _, c := range calls {
		if !c.S3 {
			n++
		}
	}
	return n
}

// CallTable writes a base run's calls, one a line, with their index and
// task (for -calls).
func CallTable(w io.Writer, base *Result) {
	for i, c := range base.Calls {
		fmt.Fprintf(w, "%4d  %-18s %s\n", i, c.Task, strings.TrimSpace(c.String()))
	}
}
