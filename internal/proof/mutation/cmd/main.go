// Command mutation runs ferry's mutation testing (make mutate) and prints
// mutation: K/N killed (P%). It fails when a mutant survived that the
// list of equivalents does not name.
//
//	go run ./internal/proof/mutation/cmd -short -equivalent testdata/mutation/equivalent.txt \
//	    -target 'internal/store/halt/*.go=./internal/store/halt' \
//	    -target 'internal/deployer/gate.go=./internal/deployer@^TestGate'
//
// A target is comma-separated file globs (test files left out),
// optionally # and a pattern of the functions to mutate, =, the package
// whose tests judge them, and optionally @ and a -run pattern.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/ferryhq/ferry/internal/proof/mutation"
)

type targets []string

func (t *targets) String() string     { return strings.Join(*t, " ") }
func (t *targets) Set(s string) error { *t = append(*t, s); return nil }

func main() {
	var ts targets
	flag.Var(&ts, "target", "GLOBS[#FUNCS]=PACKAGE[@RUN]: files (functions) to mutate and the tests that judge them (repeatable)")
	equivalent := flag.String("equivalent", "", "the list of equivalent mutants")
	workers := flag.Int("workers", 2, "mutants run at once")
	short := flag.Bool("short", false, "run the tests with -short")
	sel := flag.Bool("select", true, "judge each mutant by the tests that run its code (per-test coverage), not all of its target's")
	schema := flag.Bool("schema", true, "build each target's boolean mutants into one test binary (a mutant schema), not one binary per mutant")
	timeout := flag.Duration("timeout", 5*time.Minute, "bound on one run of a target's tests")
	list := flag.Bool("list", false, "list the mutants of each target and run nothing")
	flag.Parse()
	var err error
	if *list {
		err = listMutants(ts)
	} else {
		err = run(ts, *equivalent, *workers, *short, *sel, *schema, *timeout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(ts targets, equivalentPath string, workers int, short, sel, schema bool, timeout time.Duration) error {
	parsed, err := parseTargets(ts, timeout)
	if err != nil {
		return err
	}
	r := &mutation.Runner{Dir: ".", Go: "go", Workers: workers, Short: short, Select: sel, Schema: schema, Log: os.Stdout, Equivalent: map[string]string{}}
	if equivalentPath != "" {
		f, err := os.Open(equivalentPath)
		if err != nil {
			return err
		}
		r.Equivalent, err = mutation.ReadEquivalents(f)
		_ = f.Close()
		if err != nil {
			return err
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	start := time.Now()
	results, err := r.Run(ctx, parsed)
	if err != nil {
		return err
	}
	for _, c := range mutation.Costs(parsed, results) {
		fmt.Println(c)
	}
	fmt.Printf("mutation: %s in all\n", time.Since(start).Round(time.Second))
	s := mutation.Summarize(results)
	for _, res := range results {
		if res.Status == mutation.Survived {
			fmt.Printf("survived: %s\t(key: %s)\n", res.Mutant, res.Key())
		}
	}
	fmt.Println(s)
	if s.Survived > 0 {
		return fmt.Errorf("mutation: %d mutants survived: kill each with a test, or list it as equivalent in %s with the reason", s.Survived, equivalentPath)
	}
	return nil
}

// listMutants prints every mutant of the targets and their number.
func listMutants(ts targets) error {
	parsed, err := parseTargets(ts, 0)
	if err != nil {
		return err
	}
	n := 0
	for _, t := range parsed {
		for _, f := range t.Files {
			ms, err := mutation.Find(f)
			if err != nil {
				return err
			}
			for _, m := range ms {
				if t.Funcs == nil || t.Funcs.MatchString(m.Func) {
					fmt.Println(m)
					n++
				}
			}
		}
	}
	fmt.Printf("mutation: %d mutants\n", n)
	return nil
}

// parseTargets reads GLOBS[#FUNCS]=PACKAGE[@RUN] targets.
func parseTargets(ts targets, timeout time.Duration) ([]mutation.Target, error) {
	var out []mutation.Target
	for _, s := range ts {
		globs, tests, ok := strings.Cut(s, "=")
		if !ok || tests == "" {
			return nil, fmt.Errorf("target %q: want GLOBS[#FUNCS]=PACKAGE[@RUN]", s)
		}
		t := mutation.Target{Timeout: timeout}
		if g, funcs, ok := strings.Cut(globs, "#"); ok {
			re, err := regexp.Compile("^(" + funcs + ")$")
			if err != nil {
				return nil, fmt.Errorf("target %q: %w", s, err)
			}
			globs, t.Funcs = g, re
		}
		t.Tests, t.Run, _ = strings.Cut(tests, "@")
		for _, g := range strings.Split(globs, ",") {
			files, err := filepath.Glob(g)
			if err != nil {
				return nil, fmt.Errorf("target %q: %w", s, err)
			}
			for _, f := range files {
				if !strings.HasSuffix(f, "_test.go") {
					t.Files = append(t.Files, f)
				}
			}
		}
		if len(t.Files) == 0 {
			return nil, fmt.Errorf("target %q: no Go file matches %s", s, globs)
		}
		out = append(out, t)
	}
	return out, nil
}
