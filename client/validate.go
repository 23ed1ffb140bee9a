package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"

	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/pipeline"
	"github.com/ferryhq/ferry/internal/release"
)

// validateCommand is ferry validate.
type validateCommand struct {
	env          Env
	asJSON       bool
	printRelease bool
}

func (c *validateCommand) spec() commandSpec {
	return commandSpec{
		name:    "validate",
		args:    "FILE...",
		summary: "Check release files offline",
		help: `Validate checks each release file the way ferry deploy does, without
touching AWS: strict decoding, every validation rule, the user data file
(<FILE>.userdata, when user_data is {{USER_DATA_FILE}}) and the asset files.
It prints one line per problem, "FILE: path: message", and exits 0 when
every file is valid, 1 otherwise.`,
		exits: []int{exitFailure},
	}
}

func (c *validateCommand) defineFlags(fs *flag.FlagSet) {
	fs.BoolVar(&c.asJSON, "json", false, "print the results as JSON")
	fs.BoolVar(&c.printRelease, "print", false, "print each valid release as ferry will run it (defaults applied, canonical JSON, indented)")
}

// Run validates the release files args and prints the results; its error
// says how many are invalid.
func (c *validateCommand) Run(ctx context.Context, files []string) error {
	if len(files) == 0 {
		return usageErrorf(c.spec(), "no release file given")
	}
	var results []validateResult
	invalid := 0
	for _, file := range files {
		res := validateFile(file, c.printRelease || c.asJSON)
		if !res.Valid {
			invalid++
		}
		results = append(results, res)
	}
	var err error
	if c.asJSON {
		err = c.writeJSON(results, invalid == 0)
	} else {
		err = c.writeText(results)
	}
	if err == nil && invalid > 0 {
		// Under --json, the results say which files are invalid.
		return &ExitError{Code: exitFailure, Err: fmt.Errorf("ferry validate: %d of %d files invalid", invalid, len(files)), Shown: c.asJSON}
	}
	return commandFailure("validate", exitFailure, err)
}

// validateResult is the --json form of one file's result.
type validateResult struct {
	File     string            `json:"file"`
	Valid    bool              `json:"valid"`
	Problems []release.Problem `json:"problems"`
	SHA256   string            `json:"sha256,omitempty"`
	Release  json.RawMessage   `json:"release,omitempty"`
}

// writeJSON prints the results as one JSON object, with the canonical
// releases only under --print.
func (c *validateCommand) writeJSON(results []validateResult, valid bool) error {
	if !c.printRelease {
		for i := range results {
			results[i].Release = nil
		}
	}
	return writeEvent(c.env.Stdout, evValidate, validateDoc{valid, results}, true)
}

// validateDoc is the --json result of ferry validate.
type validateDoc struct {
	Valid bool             `json:"valid"`
	Files []validateResult `json:"files"`
}

// writeText prints the problems of each invalid file, one line each, and
// for each valid file "FILE: ok" or, under --print, its canonical release.
func (c *validateCommand) writeText(results []validateResult) error {
	for _, res := range results {
		switch {
		case !res.Valid:
			for _, p := range res.Problems {
				fmt.Fprintf(c.env.Stdout, "%s: %s\n", res.File, p)
			}
		case c.printRelease:
			var buf bytes.Buffer
			if err := json.Indent(&buf, res.Release, "", "  "); err != nil {
				return err
			}
			buf.WriteByte('\n')
			c.env.Stdout.Write(buf.Bytes())
		default:
			fmt.Fprintf(c.env.Stdout, "%s: ok\n", res.File)
		}
	}
	return nil
}

// validateFile reads and validates one release file. With withRelease, a
// valid result carries the canonical release and its hash.
func validateFile(file string, withRelease bool) validateResult {
	res := validateResult{File: file, Problems: []release.Problem{}}
	r, err := release.ReadFile(file)
	if err == nil && withRelease {
		var canon []byte
		if canon, err = release.Canonical(r); err == nil {
			res.Release = canon
			res.SHA256, err = release.Hash(r)
		}
	}
	if err != nil {
		res.Problems = problemsOfError(err)
	} else {
		res.Valid = true
	}
	return res
}

// problemsOfError lists the problems an invalid pipeline or release
// file's error names, or the error itself as one problem.
func problemsOfError(err error) []release.Problem {
	var lines []string
	var bad *pipeline.InvalidError
	var badRelease *failure.BadReleaseError
	switch {
	case errors.As(err, &bad):
		lines = bad.Problems
	case errors.As(err, &badRelease):
		lines = badRelease.Problems
	default:
		return []release.Problem{{Message: err.Error()}}
	}
	out := make([]release.Problem, len(lines))
	for i, line := range lines {
		out[i] = release.ParseProblem(line)
	}
	return out
}
