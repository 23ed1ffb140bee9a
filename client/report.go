package main

import (
	"errors"
	"flag"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/release"
)

// jsonFailure is how a command run with --json reports a failure on
// stdout: one object on one line, after whatever the command printed
// before (deploy, follow and halt print one object per line, so it is
// their last line; the others print nothing else). Its fields are stable:
// a program reads exit_code and exit, and shows message.
type jsonFailure struct {
	Command string `json:"command"`
	// ExitCode is the status ferry exits with; Exit its name in the
	// exit-code table (usage, not_started, interrupted, ...).
	ExitCode int    `json:"exit_code"`
	Exit     string `json:"exit"`
	// Error is the deployer's name of the failure, when it is one of them
	// (failure.Names): BadReleaseError for an invalid release.
	Error string `json:"error,omitempty"`
	// Message is what ferry prints on stderr.
	Message string `json:"message"`
	// Problems are an invalid release's problems, one each.
	Problems []release.Problem `json:"problems,omitempty"`
	// Holder is, for a refusal because another release holds the lock
	// (Error LockExistsError), who holds it.
	Holder *lockHolder `json:"holder,omitempty"`
}

// lockHolder is the release holding a lock, its execution and since when.
type lockHolder struct {
	ReleaseID string    `json:"release_id"`
	Execution string    `json:"execution_arn"`
	Since     time.Time `json:"since"`
}

// reportJSONFailure writes the jsonFailure of command's err on w, unless
// err is silent or Shown: its command has already printed its outcome,
// with its exit code.
func reportJSONFailure(w io.Writer, command string, err error) {
	var e *ExitError
	if errors.As(err, &e) && (e.Err == nil || e.Shown) {
		return
	}
	code := exitStatus(io.Discard, err)
	f := jsonFailure{Command: command, ExitCode: code, Exit: exitRow(code).name, Message: err.Error()}
	var named failure.Named
	if errors.As(err, &named) {
		f.Error = named.ErrorName()
	}
	var bad *failure.BadReleaseError
	if errors.As(err, &bad) {
		for _, line := range bad.Problems {
			f.Problems = append(f.Problems, release.ParseProblem(line))
		}
	}
	var held *failure.LockExistsError
	if errors.As(err, &held) {
		f.Holder = &lockHolder{ReleaseID: held.Holder, Execution: held.Execution, Since: held.Since}
	}
	_ = writeEvent(w, evError, f, false) // plain strings and numbers: it cannot fail
}

// jsonAsked reports whether the command line asked for --json: the flag
// as fs parsed it or, when parsing stopped before it (a usage error), as
// args spell it before "--".
func jsonAsked(fs *flag.FlagSet, args []string) bool {
	f := fs.Lookup("json")
	if f == nil {
		return false
	}
	if f.Value.String() == "true" {
		return true
	}
	for _, arg := range args {
		if arg == "--" {
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		if !strings.HasPrefix(arg, "-") || name != "json" {
			continue
		}
		if !hasValue {
			return true
		}
		if b, err := strconv.ParseBool(value); err == nil && b {
			return true
		}
	}
	return false
}
