// Command chaos runs the chaos harness (make chaos): N seeds' scenarios,
// each judged from outside ferry, and prints
//
//	chaos: N seeds, E world events, V violations
//
// then, for each failing seed, its violations and the command that
// replays its shrunk scenario. With -scenario (or -seed alone) it replays
// one scenario and prints what happened. It exits 1 when a predicate
// broke, 2 when a run could not be made.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"time"

	"github.com/ferryhq/ferry/internal/proof/chaos"
	"github.com/ferryhq/ferry/internal/proof/reliability"
)

func main() {
	root := flag.String("root", ".", "a directory inside the ferry repository")
	n := flag.Uint64("n", 0, "how many seeds to run (from -from)")
	from := flag.Uint64("from", 1, "the first seed of -n")
	seed := flag.Uint64("seed", 0, "replay this one seed's scenario")
	scenario := flag.String("scenario", "", "replay this scenario (as a failing seed's replay command gives it)")
	workers := flag.Int("workers", 2, "seeds run in parallel")
	moves := flag.Bool("moves", true, "also generate releases that drop load balancers and that move the config to another region")
	promotions := flag.Bool("promotions", true, "also generate promotions through qa then production, with approvals, halts and the gate alarm flipping")
	hooks := flag.Bool("launch-hooks", true, "also give some seeds' releases a launching lifecycle hook, with operators completing or heartbeating its actions")
	shrink := flag.Bool("shrink", true, "shrink each failing seed to a minimal scenario")
	verbose := flag.Bool("v", false, "with a replay, print the states each execution entered and when")
	timeout := flag.Duration("timeout", 60*time.Minute, "bound on the whole run")
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
	gen := chaos.Options{Moves: *moves, Promotions: *promotions, LaunchHooks: *hooks}
	if *n == 0 {
		os.Exit(replay(ctx, os.Stdout, dir, *seed, *scenario, gen, *verbose))
	}
	last := time.Now()
	sum := chaos.RunSeeds(ctx, dir, chaos.SeedsOptions{From: *from, N: *n, Workers: *workers, Generator: gen, Shrink: *shrink,
		Progress: func(done uint64) {
			if time.Since(last) > 30*time.Second {
				last = time.Now()
				fmt.Fprintf(os.Stderr, "chaos: %d/%d seeds\n", done, *n)
			}
		}})
	os.Exit(report(os.Stdout, sum))
}

// report prints the summary line and each failing seed, and returns the
// exit code.
func report(w io.Writer, sum *chaos.Summary) int {
	fmt.Fprintf(w, "chaos: %d seeds, %d world events, %d violations\n", sum.Seeds, sum.WorldEvents, sum.Violations())
	fmt.Fprintf(w, "chaos: %d seeds drew a promotion, %d a launching hook\n", sum.Promotions, sum.LaunchHooks)
	fmt.Fprintf(w, "chaos: %d releases clearly worse under a canary analysis, %d deploy events judged, %d swaps judged against their stability window\n", sum.Worse, sum.Events, sum.Swaps)
	for _, r := range sum.Failed {
		m, how := r.Minimal(), "not shrunk"
		if r.Shrunk != nil {
			how = fmt.Sprintf("shrunk from %d to %d steps", len(r.Scenario.Steps), len(m.Scenario.Steps))
		}
		fmt.Fprintf(w, "seed %d: %d violations (%s):\n", r.Scenario.Seed, len(r.Violations), how)
		for _, v := range m.Violations {
			fmt.Fprintf(w, "  %s\n", v)
		}
		fmt.Fprintf(w, "  replay: %s\n", chaos.Replay(m.Scenario))
	}
	seeds := make([]uint64, 0, len(sum.Errors))
	for s := range sum.Errors {
		seeds = append(seeds, s)
	}
	slices.Sort(seeds)
	for _, s := range seeds {
		fmt.Fprintf(w, "seed %d could not run: %v\n", s, sum.Errors[s])
	}
	switch {
	case len(sum.Errors) > 0:
		return 2
	case len(sum.Failed) > 0:
		return 1
	}
	return 0
}

// replay runs one scenario and prints its steps, ends and violations.
func replay(ctx context.Context, w io.Writer, root string, seed uint64, encoded string, gen chaos.Options, verbose bool) int {
	sc := chaos.Generate(seed, gen)
	if encoded != "" {
		var err error
		if sc, err = chaos.Decode(encoded); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
	}
	fmt.Fprintf(w, "seed %d, world %+v\n", sc.Seed, sc.World)
	for _, s := range sc.Steps {
		fmt.Fprintf(w, "  step %s\n", s)
	}
	res, err := chaos.Run(ctx, root, sc)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	names := make([]string, 0, len(res.Ends))
	for name := range res.Ends {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		fmt.Fprintf(w, "  execution %s: %s\n", name, res.Ends[name])
		if verbose {
			for _, st := range res.Trace[name] {
				fmt.Fprintf(w, "    %s\n", st)
			}
		}
	}
	fmt.Fprintf(w, "chaos: 1 seeds, %d world events, %d violations\n", res.WorldEvents, len(res.Violations))
	for _, v := range res.Violations {
		fmt.Fprintf(w, "  %s\n", v)
	}
	if res.Failed() {
		return 1
	}
	return 0
}
