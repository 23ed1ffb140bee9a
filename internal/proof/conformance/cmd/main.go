// Command conformance runs ferry's conformance suite on moto (package
// conformance): a line per scenario, then "conformance: N scenarios on
// moto, P passed". It exits non-zero when a scenario fails, and 0 with a
// note when moto_server is not on PATH.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"

	"github.com/ferryhq/ferry/internal/proof/conformance"
	"github.com/ferryhq/ferry/internal/proof/reliability"
)

func main() {
	verbose := flag.Bool("v", false, "show the deployer's logs (debug)")
	flag.Parse()
	os.Exit(run(*verbose))
}

func run(verbose bool) int {
	root, err := reliability.FindRoot(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		return 1
	}
	opts := conformance.Options{Root: root, Report: func(r conformance.Result) { fmt.Println(conformance.Line(r)) }}
	if verbose {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	fmt.Println(conformance.Preamble)
	results, err := conformance.Run(context.Background(), opts)
	if errors.Is(err, conformance.ErrNoMoto) {
		fmt.Println("conformance: skipped:", err)
		return 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		return 1
	}
	line, ok := conformance.Summary(results)
	fmt.Println(line)
	if !ok {
		return 1
	}
	return 0
}
