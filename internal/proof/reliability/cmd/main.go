// Command reliability runs the fault-injection matrix of the reference
// deploy (make reliability): every schedule of every family (Families)
// over the two base runs, and prints the outcomes, every violated
// invariant and the summary line. It exits 1 when there is a violation, 2
// when the matrix could not run.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/ferryhq/ferry/internal/proof/reliability"
)

func main() {
	root := flag.String("root", ".", "a directory inside the ferry repository")
	every := flag.Int("every", 1, "run every N-th schedule of each family and kind")
	workers := flag.Int("workers", 2, "runs in parallel")
	families := flag.String("families", "", "comma-separated families to run (default: all of single, pair, consistency, race)")
	calls := flag.Bool("calls", false, "also print the base runs' calls")
	timeout := flag.Duration("timeout", 60*time.Minute, "bound on the whole matrix")
	destroy := flag.Bool("destroy", false, "inject into a destroy of the reference's config instead of its next release")
	promotion := flag.Bool("promotion", false, "run the promotion matrix (faults in a promotion's own tasks) instead")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()

	dir, err := reliability.FindRoot(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if *promotion {
		m, err := reliability.RunPromotionMatrix(ctx, dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "reliability:", err)
			os.Exit(2)
		}
		m.Report(os.Stdout)
		if len(m.Violations()) > 0 {
			os.Exit(1)
		}
		return
	}
	reference, what := reliability.Reference, "reference deploy: "+reliability.ReferenceNext
	if *destroy {
		reference, what = reliability.ReferenceDestroy, "reference destroy"
	}
	sc, err := reference(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	opts := reliability.MatrixOptions{Every: *every, Workers: *workers}
	for _, f := range strings.Split(*families, ",") {
		if f = strings.TrimSpace(f); f != "" {
			opts.Families = append(opts.Families, reliability.Family(f))
		}
	}
	last := time.Now()
	opts.Progress = func(done, total int) {
		if time.Since(last) > 10*time.Second || done == total {
			last = time.Now()
			fmt.Fprintf(os.Stderr, "reliability: %d/%d runs\n", done, total)
		}
	}
	m, err := sc.RunMatrix(ctx, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "reliability:", err)
		if m == nil {
			os.Exit(2)
		}
	}
	if *calls {
		fmt.Println("base success:")
		reliability.CallTable(os.Stdout, m.Bases.Success)
		fmt.Println("base failure:")
		reliability.CallTable(os.Stdout, m.Bases.Failure)
	}
	fmt.Printf("%s over %s; %d runs in %s on %d workers\n", what, reliability.ReferencePrevious,
		len(m.Entries)+2, m.Elapsed.Round(time.Second), *workers)
	m.Report(os.Stdout)
	if len(m.Violations()) > 0 || err != nil {
		os.Exit(1)
	}
}
