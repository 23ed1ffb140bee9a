// Command codestats prints the share of ferry's functions above a
// cyclomatic complexity and the functions over a length (make codestats).
// With -check it exits 1 when a function is over the length or the share
// is above -percent (make lint).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/ferryhq/ferry/internal/proof/codestats"
)

func main() {
	root := flag.String("root", ".", "the module's root")
	complexity := flag.Int("over", 15, "report functions with a cyclomatic complexity above this")
	lines := flag.Int("lines", 80, "report functions longer than this many lines")
	percent := flag.Float64("percent", 2, "with -check, the largest share (in percent) of functions above -over")
	check := flag.Bool("check", false, "exit 1, listing the offenders, when a function is over -lines or more than -percent are above -over")
	summary := flag.Bool("summary", false, "print the figures only, not the functions")
	flag.Parse()
	if err := run(*root, *complexity, *lines, *percent, *check, *summary); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(root string, complexity, lines int, percent float64, check, summary bool) error {
	funcs, err := codestats.Measure(root)
	if err != nil {
		return err
	}
	r := codestats.Summarize(funcs, complexity, lines)
	var broken error
	if check {
		broken = r.Check(percent)
	}
	// A broken rule lists its offenders, even with -summary.
	if summary && broken == nil {
		return r.WriteSummary(os.Stdout)
	}
	if err := r.Write(os.Stdout); err != nil {
		return err
	}
	return broken
}
