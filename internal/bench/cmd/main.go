// Command cmd runs ferry's deploy benchmark (make bench): every cell of the
// grid with ferry's timing and the reference model's, the Lambda binary's
// size and the asset uploads of a repeated deploy. It prints the table and
// the targets, and writes the report as JSON.
//
//	go run ./internal/bench/cmd -out build/bench.json \
//	    [-lambda build/lambda/bootstrap] [-ferry bin/ferry] [-cells 1x1,50x100] \
//	    [-readme FILE] [-check] [-cpuprofile FILE] [-seeds 20] [-call-cost 30ms] [-long=true] [-multi 100x10]
//
// Without -lambda the Lambda is built (as make build does) into a temporary
// directory; without -ferry the asset uploads run in-process. -check exits
// with status 1 when a target fails.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"

	"github.com/ferryhq/ferry/internal/bench"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "build/bench.json", "where to write the JSON report")
	lambda := fs.String("lambda", "", "the Lambda binary to measure (default: build it into a temporary directory)")
	ferry := fs.String("ferry", "", "the ferry binary to deploy with for the asset upload check (default: the upload function in-process)")
	cellsFlag := fs.String("cells", "", "cells to run, SxN comma-separated, e.g. 1x1,50x100 (default: the whole grid)")
	readme := fs.String("readme", "", "also write the README section (markdown) to this file")
	check := fs.Bool("check", false, "exit with status 1 when a target fails")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the grid's runs to this file (go tool pprof)")
	seeds := fs.Int("seeds", 20, "seeds per cell: every figure is a distribution over them")
	callCost := fs.Duration("call-cost", bench.DefaultCallCost, "the modelled time of one AWS or S3 call")
	long := fs.Bool("long", true, "also run a release with the longest timeout (history over 48 h, latency within its first hour)")
	multi := fs.String("multi", "100x10", "also run K deploys of S services at once in one account, KxS (empty: not)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(stderr, "bench: unexpected arguments %q\n", fs.Args())
		return 2
	}
	cells, err := parseCells(*cellsFlag)
	if err != nil {
		fmt.Fprintf(stderr, "bench: -cells: %v\n", err)
		return 2
	}
	if *seeds < 1 || *callCost <= 0 {
		fmt.Fprintln(stderr, "bench: -seeds must be at least 1 and -call-cost positive")
		return 2
	}
	opts := bench.GridOptions{Seeds: *seeds, CallCost: *callCost}

	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintf(stderr, "bench: %v\n", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "bench: %v\n", err)
			return 1
		}
	}
	results, err := bench.RunGrid(ctx, cells, opts, func(c bench.CellResult) {
		fmt.Fprintf(stderr, "bench: S=%d N=%d done (%.1fs)\n", c.Services, c.Instances, c.WallS)
	})
	if err != nil {
		fmt.Fprintf(stderr, "%v\n", err)
		return 1
	}
	if *cpuprofile != "" {
		pprof.StopCPUProfile()
	}
	bin, err := bench.LambdaBinary(ctx, *lambda)
	if err != nil {
		fmt.Fprintf(stderr, "%v\n", err)
		return 1
	}
	up, err := bench.AssetUploads(ctx, *ferry)
	if err != nil {
		fmt.Fprintf(stderr, "%v\n", err)
		return 1
	}
	var longRun *bench.Long
	if *long {
		if longRun, err = bench.RunLong(ctx, opts); err != nil {
			fmt.Fprintf(stderr, "%v\n", err)
			return 1
		}
		fmt.Fprintf(stderr, "bench: 48 h timeout done\n")
	}
	var multiRun *bench.Multi
	if *multi != "" {
		k, s, err := parseKxS(*multi)
		if err != nil {
			fmt.Fprintf(stderr, "bench: -multi: %v\n", err)
			return 2
		}
		if multiRun, err = bench.RunMulti(ctx, k, s, opts); err != nil {
			fmt.Fprintf(stderr, "%v\n", err)
			return 1
		}
		fmt.Fprintf(stderr, "bench: %d deploys of %d services at once done\n", k, s)
	}
	report := bench.NewReport(results, opts, longRun, multiRun, bin, up)

	if err := report.WriteTable(stdout); err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	if err := writeFile(*out, report.JSON); err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "\nwrote %s\n", *out)
	if *readme != "" {
		if err := writeFile(*readme, report.Markdown); err != nil {
			fmt.Fprintf(stderr, "bench: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "wrote %s\n", *readme)
	}
	if *check && !report.Passed() {
		fmt.Fprintln(stderr, "bench: a target failed")
		return 1
	}
	return 0
}

// parseCells reads "1x1,50x100"; empty is the whole grid.
func parseCells(s string) ([]bench.Cell, error) {
	if strings.TrimSpace(s) == "" {
		return bench.Grid(), nil
	}
	var cells []bench.Cell
	for _, part := range strings.Split(s, ",") {
		sv, nv, err := parseKxS(part)
		if err != nil {
			return nil, err
		}
		cells = append(cells, bench.Cell{Services: sv, Instances: nv})
	}
	return cells, nil
}

// parseKxS reads "AxB" with A, B >= 1.
func parseKxS(part string) (a, b int, err error) {
	as, bs, ok := strings.Cut(strings.TrimSpace(part), "x")
	a, aerr := strconv.Atoi(as)
	b, berr := strconv.Atoi(bs)
	if !ok || aerr != nil || berr != nil || a < 1 || b < 1 {
		return 0, 0, fmt.Errorf("%q is not AxB with A, B >= 1", part)
	}
	return a, b, nil
}

// writeFile writes path (creating its directory) with write.
func writeFile(path string, write func(io.Writer) error) (err error) {
	if path == "" {
		return errors.New("no output path")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	return write(f)
}
