// Command reliability runs the fault-injection matrix of the reference
// deploy (make reliability): every call index of a clean run times every
// fault kind, and prints the outcomes and every violated invariant. It
// exits 1 when there is a violation, 2 when the matrix could not run.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/ferryhq/ferry/internal/reliability"
)

func main() {
	root := flag.String("root", ".", "a directory inside the ferry repository")
	every := flag.Int("every", 1, "run every N-th call index")
	workers := flag.Int("workers", 2, "runs in parallel")
	calls := flag.Bool("calls", false, "also print the clean run's calls")
	timeout := flag.Duration("timeout", 30*time.Minute, "bound on the whole matrix")
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
	sc, err := reliability.Reference(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	started := time.Now()
	last := time.Now()
	m, err := sc.RunMatrix(ctx, reliability.MatrixOptions{Every: *every, Workers: *workers,
		Progress: func(done, total int) {
			if time.Since(last) > 10*time.Second || done == total {
				last = time.Now()
				fmt.Fprintf(os.Stderr, "reliability: %d/%d runs\n", done, total)
			}
		}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "reliability:", err)
		if m == nil {
			os.Exit(2)
		}
	}
	if *calls {
		m.CallTable(os.Stdout)
	}
	fmt.Printf("reference deploy: %s over %s; %d runs in %s\n", reliability.ReferenceNext, reliability.ReferencePrevious,
		m.Runs, time.Since(started).Round(time.Second))
	m.Report(os.Stdout)
	if len(m.Violations()) > 0 || err != nil {
		os.Exit(1)
	}
}
