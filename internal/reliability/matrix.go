package reliability

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/sim"
)

// Target returns the fault of kind k at index i of the clean run's calls:
// for an AWS call the Nth call of the same service, operation and account;
// for an S3 call the Nth call of the deployer's store; for LambdaDied the
// invocation that made the call.
func Target(clean *Result, i int, k Kind) (Fault, error) {
	if i < 0 || i >= len(clean.Calls) {
		return Fault{}, fmt.Errorf("reliability: call index %d outside the clean run's %d calls", i, len(clean.Calls))
	}
	c := clean.Calls[i]
	f := Fault{Kind: k, Index: i, Call: c}
	switch {
	case k == LambdaDied:
		if c.Invocation == 0 {
			return Fault{}, fmt.Errorf("reliability: call %d (%s) belongs to no invocation", i, c)
		}
		f.invocation = c.Invocation
	case c.S3:
		for _, d := range clean.Calls[:i+1] {
			if d.S3 {
				f.s3Nth++
			}
		}
	default:
		n := 0
		for _, d := range clean.Calls[:i+1] {
			if !d.S3 && d.Service == c.Service && d.Op == c.Op && d.Account == c.Account {
				n++
			}
		}
		f.rule = &sim.Rule{Op: c.Op, Service: c.Service, Account: c.Account, Nth: n}
	}
	return f, nil
}

// Entry is one cell of the matrix: a fault and what its run did.
type Entry struct {
	Fault  Fault
	Result *Result
	// Err is set when the run could not be made.
	Err error
}

// Matrix is the fault-injection matrix of a scenario.
type Matrix struct {
	Clean   *Result
	Entries []Entry
	// Runs is how many deploys ran (LambdaDied faults of one invocation
	// share a run).
	Runs int
}

// MatrixOptions select the cells of a matrix.
type MatrixOptions struct {
	// Every runs every Every-th call index (1 or 0: all), starting at
	// Offset.
	Every, Offset int
	// Kinds are the fault kinds (default Kinds()).
	Kinds []Kind
	// Workers bound the runs in parallel (default 2).
	Workers int
	// Progress, when set, is called after each run.
	Progress func(done, total int)
}

// RunMatrix runs the scenario clean, then once per selected call index and
// fault kind with that fault injected. A clean run with violations or
// without Success is an error: there is nothing to compare with.
func (sc *Scenario) RunMatrix(ctx context.Context, opts MatrixOptions) (*Matrix, error) {
	if opts.Every < 1 {
		opts.Every = 1
	}
	if len(opts.Kinds) == 0 {
		opts.Kinds = Kinds()
	}
	if opts.Workers < 1 {
		opts.Workers = 2
	}
	clean, err := sc.Run(ctx, RunOptions{})
	if err != nil {
		return nil, err
	}
	if clean.End != execution.EndSuccess || len(clean.Violations) > 0 {
		return nil, fmt.Errorf("reliability: the clean run ended %q (%s: %s) with violations %q", clean.End, clean.Error, clean.Cause, clean.Violations)
	}
	m := &Matrix{Clean: clean}
	type job struct {
		key     string
		fault   Fault
		entries []int
	}
	var jobs []*job
	byKey := map[string]*job{}
	for i := opts.Offset; i < len(clean.Calls); i += opts.Every {
		for _, k := range opts.Kinds {
			f, err := Target(clean, i, k)
			if err != nil {
				return nil, err
			}
			key := fmt.Sprintf("%s@%d", k, i)
			if k == LambdaDied {
				key = fmt.Sprintf("%s#%d", k, f.invocation)
			}
			m.Entries = append(m.Entries, Entry{Fault: f})
			j := byKey[key]
			if j == nil {
				j = &job{key: key, fault: f}
				byKey[key] = j
				jobs = append(jobs, j)
			}
			j.entries = append(j.entries, len(m.Entries)-1)
		}
	}
	m.Runs = len(jobs)

	work := make(chan *job)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for range opts.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				res, err := sc.Run(ctx, RunOptions{Fault: j.fault})
				mu.Lock()
				for _, e := range j.entries {
					m.Entries[e].Result, m.Entries[e].Err = res, err
				}
				done++
				if opts.Progress != nil {
					opts.Progress(done, len(jobs))
				}
				mu.Unlock()
			}
		}()
	}
	for _, j := range jobs {
		select {
		case work <- j:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(work)
	wg.Wait()
	return m, ctx.Err()
}

// Violation is one broken invariant of one cell.
type Violation struct {
	Fault   Fault
	Message string
}

// Violations lists every broken invariant of the matrix (a run that could
// not be made counts as one).
func (m *Matrix) Violations() []Violation {
	var out []Violation
	for _, e := range m.Entries {
		switch {
		case e.Err != nil:
			out = append(out, Violation{e.Fault, "the run failed: " + e.Err.Error()})
		case e.Result == nil:
			out = append(out, Violation{e.Fault, "the run did not happen"})
		default:
			for _, v := range e.Result.Violations {
				out = append(out, Violation{e.Fault, v})
			}
		}
	}
	return out
}

// Report writes the matrix's table: the clean run's calls per task, the
// outcomes per fault kind, and every violation; then the summary line
// "reliability: F faults injected, V violations".
func (m *Matrix) Report(w io.Writer) {
	fmt.Fprintf(w, "clean run: %d calls (%d AWS, %d S3) in %d task invocations, ended %s\n",
		len(m.Clean.Calls), countAWS(m.Clean.Calls), len(m.Clean.Calls)-countAWS(m.Clean.Calls), len(m.Clean.Invocations), m.Clean.End)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "kind\tinjected\tSuccess\tFailureClean\tFailureDirty\tother\tviolations\t")
	kinds := []Kind{}
	for _, e := range m.Entries {
		if !slices.Contains(kinds, e.Fault.Kind) {
			kinds = append(kinds, e.Fault.Kind)
		}
	}
	total := map[string]int{}
	for _, k := range kinds {
		row := map[string]int{}
		for _, e := range m.Entries {
			if e.Fault.Kind != k {
				continue
			}
			row["injected"]++
			switch {
			case e.Result == nil:
				row["other"]++
			case e.Result.End == "":
				row["other"]++
			default:
				row[e.Result.End]++
			}
			if e.Err != nil {
				row["violations"]++
			} else if e.Result != nil {
				row["violations"] += len(e.Result.Violations)
			}
		}
		for key, v := range row {
			total[key] += v
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t\n", k, row["injected"], row[execution.EndSuccess],
			row[execution.EndFailureClean], row[execution.EndFailureDirty], row["other"], row["violations"])
	}
	fmt.Fprintf(tw, "total\t%d\t%d\t%d\t%d\t%d\t%d\t\n", total["injected"], total[execution.EndSuccess],
		total[execution.EndFailureClean], total[execution.EndFailureDirty], total["other"], total["violations"])
	tw.Flush()

	dirty := map[string]int{}
	for _, e := range m.Entries {
		if e.Result != nil && e.Result.End == execution.EndFailureDirty {
			dirty[string(e.Fault.Kind)+" in "+e.Result.FiredIn]++
		}
	}
	if len(dirty) > 0 {
		keys := make([]string, 0, len(dirty))
		for k := range dirty {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fmt.Fprintln(w, "FailureDirty (a fault in a clean-up):")
		for _, k := range keys {
			fmt.Fprintf(w, "  %-40s %d\n", k, dirty[k])
		}
	}
	vs := m.Violations()
	if len(vs) > 0 {
		fmt.Fprintln(w, "violations:")
		for _, v := range vs {
			fmt.Fprintf(w, "  %s: %s\n", v.Fault, v.Message)
		}
	}
	fmt.Fprintf(w, "reliability: %d faults injected, %d violations\n", len(m.Entries), len(vs))
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

// CallTable writes the clean run's calls, one a line, with their index and
// task (for -calls).
func (m *Matrix) CallTable(w io.Writer) {
	for i, c := range m.Clean.Calls {
		fmt.Fprintf(w, "%4d  %-18s %s\n", i, c.Task, strings.TrimSpace(c.String()))
	}
}
