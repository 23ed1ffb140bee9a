// Command cmd runs ferry's deploy benchmark (make bench): every cell of the
// grid with ferry's timing and the reference model's, the Lambda binary's
// size and the asset uploads of a repeated deploy. It prints the table and
// the targets, and writes the report as JSON.
//
//	go run ./internal/proof/bench/cmd -out build/bench.json \
//	    [-lambda build/lambda/bootstrap] [-ferry bin/ferry] [-cells 1x1,50x100] \
//	    [-page] [-check] [-cpuprofile FILE] [-seeds 20] [-call-cost 30ms] [-long=true] [-multi 100x10] [-multi-runs 2] [-quota=true]
//
// -cells none -long=false runs only -multi.
//
// Without -lambda the Lambda is built (as make build does) into a temporary
// directory; without -ferry the asset uploads run in-process. -page
// regenerates the performance section of bench.PerformancePage between
// its markers (a page without them is left alone, with a warning). -check
// exits with status 1 when a target fails. With -quota (the default) and
// the S=50, N=100 cell, it runs that cell once more with its measured
// release's tasks in a child of itself (-quota-child URL: the deployer's
// handler alone, calling the region, its simulated AWS and S3 that this
// process serves over HTTP on a loopback port), the child held to the
// deployer's Lambda's CPU share by a control group (bench.RunUnderQuota;
// the previous release it replaces runs before, in-process), and reports
// the handlers' real time there, but for the time they wait for the
// answers;
// where this machine allows no such group it says so and reports their
// CPU time scaled.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ferryhq/ferry/internal/proof/bench"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// config is the command's flags, parsed.
type config struct {
	out, lambda, ferry, cpuprofile, follow string
	cells                                  []bench.Cell
	check, long, page, quota               bool
	quotaChild                             string
	multiK, multiS, multiRuns              int
	opts                                   bench.GridOptions
}

// parseFlags parses args, printing what is wrong on stderr (ok false).
func parseFlags(args []string, stderr io.Writer) (cfg config, ok bool) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.out, "out", "build/bench.json", "where to write the JSON report")
	fs.StringVar(&cfg.lambda, "lambda", "", "the Lambda binary to measure (default: build it into a temporary directory)")
	fs.StringVar(&cfg.ferry, "ferry", "", "the ferry binary to deploy with for the asset upload check (default: the upload function in-process)")
	cellsFlag := fs.String("cells", "", "cells to run, SxN comma-separated, e.g. 1x1,50x100, or none (default: the whole grid)")
	fs.StringVar(&cfg.follow, "follow", "", "the client's follow cost to report (JSON written by go test ./client -run TestFollowCost -args -follow-cost FILE)")
	fs.BoolVar(&cfg.page, "page", false, "also regenerate the performance section of "+bench.PerformancePage+" between its markers")
	fs.BoolVar(&cfg.check, "check", false, "exit with status 1 when a target fails")
	fs.StringVar(&cfg.cpuprofile, "cpuprofile", "", "write a CPU profile of the runs to this file (go tool pprof)")
	fs.IntVar(&cfg.opts.Seeds, "seeds", 20, "seeds per cell: every figure is a distribution over them")
	fs.DurationVar(&cfg.opts.CallCost, "call-cost", bench.DefaultCallCost, "the modelled time of one AWS or S3 call")
	fs.BoolVar(&cfg.long, "long", true, "also run a release with the longest timeout (history over 48 h, latency within its first hour)")
	multi := fs.String("multi", "100x10", "also run K deploys of S services at once in one account, KxS (empty: not)")
	fs.IntVar(&cfg.multiRuns, "multi-runs", 2, "how many times to run -multi: its figures vary from run to run, and the report is of the worst")
	fs.BoolVar(&cfg.quota, "quota", true, "measure the handlers at S=50,N=100 under a CPU quota at the Lambda's share, where this machine allows")
	fs.StringVar(&cfg.quotaChild, "quota-child", "", "serve the deployer's tasks on stdin for the region at this URL (what -quota runs under the quota)")
	if err := fs.Parse(args); err != nil {
		return cfg, false
	}
	var err error
	switch {
	case fs.NArg() != 0:
		err = fmt.Errorf("unexpected arguments %q", fs.Args())
	case cfg.opts.Seeds < 1 || cfg.opts.CallCost <= 0 || cfg.multiRuns < 1:
		err = errors.New("-seeds and -multi-runs must be at least 1 and -call-cost positive")
	}
	if err == nil {
		if cfg.cells, err = parseCells(*cellsFlag); err != nil {
			err = fmt.Errorf("-cells: %w", err)
		}
	}
	if err == nil && *multi != "" {
		if cfg.multiK, cfg.multiS, err = parseKxS(*multi); err != nil {
			err = fmt.Errorf("-multi: %w", err)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return cfg, false
	}
	return cfg, true
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, ok := parseFlags(args, stderr)
	if !ok {
		return 2
	}
	if cfg.quotaChild != "" {
		return quotaChild(ctx, cfg, stdout, stderr)
	}
	report, err := measure(ctx, cfg, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "%v\n", err)
		return 1
	}
	if err := write(report, cfg, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	if cfg.check && !report.Passed() {
		fmt.Fprintln(stderr, "bench: a target failed")
		return 1
	}
	return 0
}

// measure runs what cfg asks, telling its progress on stderr.
func measure(ctx context.Context, cfg config, stderr io.Writer) (*bench.Report, error) {
	if cfg.cpuprofile != "" {
		stop, err := startProfile(cfg.cpuprofile)
		if err != nil {
			return nil, err
		}
		defer stop()
	}
	last := time.Now()
	results, err := bench.RunGrid(ctx, cfg.cells, cfg.opts, func(c bench.CellResult) {
		fmt.Fprintf(stderr, "bench: S=%d N=%d done in %.1fs (%.1fs of runs)\n", c.Services, c.Instances, time.Since(last).Seconds(), c.WallS)
		last = time.Now()
	})
	if err != nil {
		return nil, err
	}
	if err := underQuota(ctx, cfg, results, stderr); err != nil {
		return nil, err
	}
	bin, err := bench.LambdaBinary(ctx, cfg.lambda)
	if err != nil {
		return nil, err
	}
	up, err := bench.AssetUploads(ctx, cfg.ferry)
	if err != nil {
		return nil, err
	}
	var long *bench.Long
	if cfg.long {
		if long, err = bench.RunLong(ctx, cfg.opts); err != nil {
			return nil, err
		}
		fmt.Fprintf(stderr, "bench: 48 h timeout done\n")
	}
	var multi *bench.Multi
	if cfg.multiK > 0 {
		if multi, err = bench.RunMultiTimes(ctx, cfg.multiRuns, cfg.multiK, cfg.multiS, cfg.opts); err != nil {
			return nil, err
		}
		fmt.Fprintf(stderr, "bench: %d deploys of %d services at once done, %d times\n", cfg.multiK, cfg.multiS, cfg.multiRuns)
	}
	var follow *bench.Follow
	if cfg.follow != "" {
		if follow, err = bench.ReadFollow(cfg.follow); err != nil {
			return nil, err
		}
	}
	return bench.NewReport(results, cfg.opts, long, multi, follow, bin, up), nil
}

// underQuota measures the S=50, N=100 cell of results (if there) under a
// CPU quota at the Lambda's share, when cfg asks and this machine allows.
func underQuota(ctx context.Context, cfg config, results []bench.CellResult, stderr io.Writer) error {
	i := slices.IndexFunc(results, func(c bench.CellResult) bool { return c.Services == 50 && c.Instances == 100 })
	if !cfg.quota || i < 0 {
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	command := func(endpoint string) *exec.Cmd {
		args := []string{"-quota-child", endpoint, "-call-cost", cfg.opts.CallCost.String()}
		if cfg.cpuprofile != "" {
			args = append(args, "-cpuprofile", cfg.cpuprofile+".handler")
		}
		cmd := exec.CommandContext(ctx, exe, args...)
		cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
		cmd.Stderr = stderr
		return cmd
	}
	q, err := bench.RunUnderQuota(ctx, bench.Cell{Services: 50, Instances: 100}, cfg.opts, command, bench.LambdaCPUShare)
	if errors.Is(err, bench.ErrNoQuota) {
		fmt.Fprintf(stderr, "%v: the handler time on the Lambda's share is CPU time scaled\n", err)
		return nil
	}
	if err != nil {
		return err
	}
	results[i].UnderQuota(q)
	fmt.Fprintf(stderr, "bench: S=50 N=100 under a CPU quota done (%s)\n", q.Method)
	return nil
}

// quotaChild is -quota-child: the deployer's handler for the region at
// cfg.quotaChild, its tasks on stdin, their results on stdout
// (bench.ServeHandler).
func quotaChild(ctx context.Context, cfg config, stdout, stderr io.Writer) int {
	if cfg.cpuprofile != "" {
		stop, err := startProfile(cfg.cpuprofile)
		if err != nil {
			fmt.Fprintf(stderr, "bench: -quota-child: %v\n", err)
			return 1
		}
		defer stop()
	}
	if err := bench.ServeHandler(ctx, cfg.quotaChild, cfg.opts.CallCost, os.Stdin, stdout); err != nil {
		fmt.Fprintf(stderr, "bench: -quota-child: %v\n", err)
		return 1
	}
	return 0
}

// startProfile writes a CPU profile to path until stop is called.
func startProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); _ = f.Close() }, nil
}

// write prints the report's table and writes its JSON (and, with -page,
// the performance section of bench.PerformancePage).
func write(report *bench.Report, cfg config, stdout, stderr io.Writer) error {
	if err := report.WriteTable(stdout); err != nil {
		return err
	}
	if err := writeFile(cfg.out, report.JSON); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nwrote %s\n", cfg.out)
	if cfg.page {
		switch err := bench.WritePage(bench.PerformancePage, report); {
		case errors.Is(err, bench.ErrNoMarkers):
			fmt.Fprintf(stderr, "%v: the performance section is not written\n", err)
		case err != nil:
			return err
		default:
			fmt.Fprintf(stdout, "wrote %s\n", bench.PerformancePage)
		}
	}
	return nil
}

// parseCells reads "1x1,50x100"; empty is the whole grid, "none" no cell
// (to run only -multi or -long).
func parseCells(s string) ([]bench.Cell, error) {
	switch strings.TrimSpace(s) {
	case "":
		return bench.Grid(), nil
	case "none":
		return nil, nil
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
