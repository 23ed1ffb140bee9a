package main

import (
	"errors"
	"fmt"
	"io"
)

// Exit codes of every command, except where the commands that follow an
// execution (below) give a number another meaning.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
	// exitInternal: ferry itself failed (a bug). Never a stack trace.
	exitInternal = 70
)

// Exit codes of the commands that follow an execution (deploy, halt): the
// outcome of the execution, or why there is none. They share 1 and 2 with
// the codes above, so a wrong use of these commands exits exitNotStarted,
// never exitUsage.
const (
	exitFailureClean = 1
	exitFailureDirty = 2
	// exitNotStarted: nothing was started (an invalid release, no deployer
	// found, no credentials, a wrong use of the command).
	exitNotStarted = 3
	// exitDetached: the client stopped following (Ctrl-C, lost contact);
	// the execution goes on.
	exitDetached = 4
	// exitTooLate: ferry halt saw the deploy succeed before the deployer
	// saw the halt.
	exitTooLate = 1
)

// ExitError is an error that decides ferry's exit status: Code, with Err
// the message main prints on stderr. An ExitError without Err is silent:
// the command has already shown all there is to say (an execution's
// outcome, the command list) and only the code remains.
type ExitError struct {
	Code int
	Err  error
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
	code := exitFailure
	var e *ExitError
	if errors.As(err, &e) {
		if e.Err == nil {
			return e.Code
		}
		code = e.Code
	}
	fmt.Fprintln(w, err)
	return code
}
