package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/aws/smithy-go"
)

// The exit codes: one table for every command (exitCodes says what each
// means; ferry help exit-codes prints its help page, which holds it).
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
	// exitNotStarted: nothing was started (an invalid release, no deployer
	// found, no credentials, the lock held by another release).
	exitNotStarted = 3
	// exitDirty: the deploy ended FailureDirty, or without reaching an end
	// state.
	exitDirty = 4
	// exitDetached: the client lost contact while following; the execution
	// goes on.
	exitDetached = 5
	// exitTooLate: ferry halt saw the deploy succeed before the deployer
	// saw the halt.
	exitTooLate = 6
	// exitNoDeployer: no deployer answers where the command looked (the
	// local region's endpoint, the account and region's conventional
	// names, or those given).
	exitNoDeployer = 7
	// exitNoCredentials: no AWS credentials to call the deployer with.
	exitNoCredentials = 8
	// exitNotFound: the deployer answers but holds no such thing as the
	// command names (a release, a deploy, a project-config).
	exitNotFound = 9
	// exitInternal: ferry itself failed (a bug). Never a stack trace.
	exitInternal = 70
	// exitInterrupted: Ctrl-C (SIGINT) or SIGTERM, at any moment: 128 + 2,
	// as a shell reports a process its interrupt ended.
	exitInterrupted = 130
)

// exitCode is one row of the exit-code table.
type exitCode struct {
	code int
	// name is the code's stable name: the "exit" field of a --json
	// failure (see jsonFailure).
	name    string
	meaning string
}

// exitCodes is the table of every exit code, in order.
var exitCodes = []exitCode{
	{exitOK, "ok", "success: the command did what was asked (a deploy: Success, the old instances are gone)"},
	{exitFailure, "failure", "failure: the command could not do what was asked (a deploy: FailureClean, everything it made was removed)"},
	{exitUsage, "usage", "wrong use: an unknown command or flag, a missing or extra argument"},
	{exitNotStarted, "not_started", "nothing was started: an invalid release, the lock held by another release (halt: the marker was not written)"},
	{exitDirty, "dirty", "FailureDirty, or an execution that ended without reaching an end state: AWS may need a person; the lock is kept"},
	{exitDetached, "detached", "lost contact while following: the deploy goes on"},
	{exitTooLate, "too_late", "the halt came too late: the deploy succeeded before the deployer saw it"},
	{exitNoDeployer, "no_deployer", "no deployer answers where ferry looked (the message names the endpoint or account): nothing was done"},
	{exitNoCredentials, "no_credentials", "no AWS credentials to reach the deployer with: nothing was done"},
	{exitNotFound, "not_found", "the deployer holds no such release, deploy or project-config as the command names"},
	{exitInternal, "internal", "an internal error in ferry (a bug, reported in one line)"},
	{exitInterrupted, "interrupted", "interrupted (Ctrl-C): ferry stopped; a deploy it followed goes on"},
}

// deployExits are the codes a command that deploys and follows a release
// (deploy, rollback, destroy, promote) may exit with besides commonExits.
var deployExits = []int{exitFailure, exitNotStarted, exitDirty, exitDetached}

// commonExits are the codes every command may exit with.
var commonExits = []int{exitOK, exitUsage, exitInternal, exitInterrupted}

// deployerExits are the codes every command that reaches a deployer may
// exit with, whatever the command (exitOf decides them).
var deployerExits = []int{exitNoDeployer, exitNoCredentials, exitNotFound}

// errNoDeployer is in the chain of every error that says no deployer
// answers where the client looked; errNoCredentials of every error that
// says there are no AWS credentials to reach it with.
var (
	errNoDeployer    = errors.New("no deployer found")
	errNoCredentials = errors.New("no AWS credentials found")
)

// notFoundError says the deployer holds no such thing as the command
// names; its message is err's.
type notFoundError struct{ err error }

func (e *notFoundError) Error() string { return e.err.Error() }
func (e *notFoundError) Unwrap() error { return e.err }

// notFoundf is a notFoundError with the message fmt.Errorf makes.
func notFoundf(format string, args ...any) error {
	return &notFoundError{err: fmt.Errorf(format, args...)}
}

// deployerMissing are the error codes AWS answers a call to a deployer
// that is not there with (API Reference, DescribeExecution and
// ListExecutions: StateMachineDoesNotExist; Amazon S3 error responses:
// NoSuchBucket).
var deployerMissing = []string{"StateMachineDoesNotExist", "NoSuchBucket"}

// exitOf is the code the failure err exits with, the same for every
// command: no deployer, no credentials and not found have codes of their
// own (deployerExits), whatever code the command gave its failure (a
// deployer's absence found by a later call included); an interruption,
// a bug or a usage error keeps its own.
func exitOf(err error) int {
	code := exitFailure
	var e *ExitError
	if errors.As(err, &e) {
		code = e.Code
	}
	if code != exitFailure && code != exitNotStarted {
		return code
	}
	var nf *notFoundError
	var apiErr smithy.APIError
	switch {
	case errors.Is(err, errNoCredentials):
		return exitNoCredentials
	case errors.Is(err, errNoDeployer):
		return exitNoDeployer
	case errors.As(err, &apiErr) && slices.Contains(deployerMissing, apiErr.ErrorCode()):
		return exitNoDeployer
	case errors.As(err, &nf):
		return exitNotFound
	}
	return code
}

// exitRow is code's row of exitCodes; the zero row when there is none.
func exitRow(code int) exitCode {
	for _, c := range exitCodes {
		if c.code == code {
			return c
		}
	}
	return exitCode{}
}

// writeExitCodes writes the rows of codes as "  CODE  MEANING" lines, in
// the table's order.
func writeExitCodes(w io.Writer, codes []int) {
	for _, c := range exitCodes {
		if slices.Contains(codes, c.code) {
			fmt.Fprintf(w, "  %3d  %s\n", c.code, c.meaning)
		}
	}
}

// exitCodesMarkdown is the table of every exit code as a Markdown table,
// as the exit-codes help page (client/help/exit-codes.md) shows it.
func exitCodesMarkdown() string {
	var b strings.Builder
	b.WriteString("| code | name | meaning |\n|------|------|---------|\n")
	for _, c := range exitCodes {
		fmt.Fprintf(&b, "| %d | `%s` | %s |\n", c.code, c.name, c.meaning)
	}
	return b.String()
}

// ExitError is an error that decides ferry's exit status: Code, with Err
// the message main prints on stderr. An ExitError without Err is silent:
// the command has already shown all there is to say (an execution's
// outcome, the command list) and only the code remains.
type ExitError struct {
	Code int
	Err  error
	// Shown says the command has printed its outcome as JSON on stdout
	// (--json), exit code included: Err goes to stderr only.
	Shown bool
}

// Error is Err's message, or "exit status N" for a silent ExitError.
func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

// Unwrap returns Err.
func (e *ExitError) Unwrap() error { return e.Err }

// exitf returns an ExitError with code and the message fmt.Errorf makes of
// format and args (%w wraps).
func exitf(code int, format string, args ...any) *ExitError {
	return &ExitError{Code: code, Err: fmt.Errorf(format, args...)}
}

// exitSilently returns the silent ExitError of code, or nil for exitOK.
func exitSilently(code int) error {
	if code == exitOK {
		return nil
	}
	return &ExitError{Code: code}
}

// commandFailure is how command name fails with err: nil when err is nil,
// err itself when it already carries an exit code, otherwise an ExitError
// with code and the message "ferry NAME: " followed by err's.
func commandFailure(name string, code int, err error) error {
	if err == nil {
		return nil
	}
	var e *ExitError
	if errors.As(err, &e) {
		return err
	}
	return exitf(code, "ferry %s: %w", name, err)
}

// exitStatus prints err's message on w, one line ended by a newline,
// unless err is nil or a silent ExitError, and returns the process status
// for err: exitOK for nil, the Code of the first ExitError in its chain,
// exitFailure for any other error. Only main (and the tests, which run
// ferry in-process as main does) turns errors into a status.
func exitStatus(w io.Writer, err error) int {
	if err == nil {
		return exitOK
	}
	var e *ExitError
	if errors.As(err, &e) && e.Err == nil {
		return e.Code
	}
	fmt.Fprintln(w, err)
	return exitOf(err)
}
