// Command codestats prints the share of ferry's functions above a
// cyclomatic complexity and the functions over a length (make lint).
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
	summary := flag.Bool("summary", false, "print the figures only, not the functions")
	flag.Parse()
	funcs, err := codestats.Measure(*root)
	if err == nil {
		r := codestats.Summarize(funcs, *complexity, *lines)
		if *summary {
			err = r.WriteSummary(os.Stdout)
		} else {
			err = r.Write(os.Stdout)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
