package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"

	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/release"
)

func init() {
	register(&command{
		name:    "validate",
		args:    "FILE...",
		summary: "Check release files offline",
		help: `Validate checks each release file the way ferry deploy does, without
touching AWS: strict decoding, every validation rule, the user data file
(<FILE>.userdata, when user_data is {{USER_DATA_FILE}}) and the asset files.
It prints one line per problem, "FILE: path: message", and exits 0 when
every file is valid, 1 otherwise.`,
		flags: func(fs *flag.FlagSet) func(context.Context, Env, []string) int {
			asJSON := fs.Bool("json", false, "print the results as JSON")
			printRelease := fs.Bool("print", false, "print each valid release as ferry will run it (defaults applied, canonical JSON, indented)")
			return func(ctx context.Context, env Env, files []string) int {
				if len(files) == 0 {
					return commands["validate"].usageError(env, "no release file given")
				}
				return validate(env, files, *asJSON, *printRelease)
			}
		},
	})
}

// validateResult is the --json form of one file's result.
type validateResult struct {
	File     string          `json:"file"`
	Valid    bool            `json:"valid"`
	Problems []problem       `json:"problems"`
	SHA256   string          `json:"sha256,omitempty"`
	Release  json.RawMessage `json:"release,omitempty"`
}

type problem struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

func validate(env Env, files []string, asJSON, printRelease bool) int {
	var results []validateResult
	invalid := 0
	for _, file := range files {
		res := validateFile(file, printRelease || asJSON)
		if !res.Valid {
			invalid++
		}
		results = append(results, res)
	}
	if asJSON {
		out := struct {
			Valid bool             `json:"valid"`
			Files []validateResult `json:"files"`
		}{invalid == 0, results}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if !printRelease {
			for i := range out.Files {
				out.Files[i].Release = nil
			}
		}
		if err := enc.Encode(out); err != nil {
			fmt.Fprintf(env.Stderr, "ferry validate: %v\n", err)
			return exitFailure
		}
		env.Stdout.Write(buf.Bytes())
	} else {
		for _, res := range results {
			switch {
			case !res.Valid:
				for _, p := range res.Problems {
					if p.Path == "" {
						fmt.Fprintf(env.Stdout, "%s: %s\n", res.File, p.Message)
					} else {
						fmt.Fprintf(env.Stdout, "%s: %s: %s\n", res.File, p.Path, p.Message)
					}
				}
			case printRelease:
				var buf bytes.Buffer
				if err := json.Indent(&buf, res.Release, "", "  "); err != nil {
					fmt.Fprintf(env.Stderr, "ferry validate: %v\n", err)
					return exitFailure
				}
				buf.WriteByte('\n')
				env.Stdout.Write(buf.Bytes())
			default:
				fmt.Fprintf(env.Stdout, "%s: ok\n", res.File)
			}
		}
	}
	if invalid > 0 {
		fmt.Fprintf(env.Stderr, "ferry validate: %d of %d files invalid\n", invalid, len(files))
		return exitFailure
	}
	return exitOK
}

// validateFile reads and validates one release file. With withRelease, a
// valid result carries the canonical release and its hash.
func validateFile(file string, withRelease bool) validateResult {
	res := validateResult{File: file, Problems: []problem{}}
	r, err := release.ReadFile(file)
	if err == nil && withRelease {
		var canon []byte
		if canon, err = release.Canonical(r); err == nil {
			res.Release = canon
			res.SHA256, err = release.Hash(r)
		}
	}
	var bad *failure.BadReleaseError
	switch {
	case err == nil:
		res.Valid = true
	case errors.As(err, &bad):
		for _, line := range bad.Problems {
			path, msg := release.SplitProblem(line)
			res.Problems = append(res.Problems, problem{Path: path, Message: msg})
		}
	default:
		res.Problems = append(res.Problems, problem{Message: err.Error()})
	}
	return res
}
