package failure

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// The state machine's error names. These strings are the contract between
// the handlers and the definition: a Catch or Retry that names an error uses
// one of these constants.
const (
	NameBadRelease  = "BadReleaseError"
	NameLockExists  = "LockExistsError"
	NameLock        = "LockError"
	NameDeploy      = "DeployError"
	NameHalt        = "HaltError"
	NameTimeout     = "TimeoutError"
	NameCleanUp     = "CleanUpError"
	NameRetryable   = "RetryableError"
	NameInternal    = "InternalError"
	NameUnknownTask = "UnknownTaskError"
)

// Named is an error that carries its state machine error name.
type Named interface {
	error
	ErrorName() string
}

// Names returns every error name a handler can return, in a fixed order.
// The state machine definition is generated from this list.
func Names() []string {
	return []string{
		NameBadRelease, NameLockExists, NameLock, NameDeploy, NameHalt,
		NameTimeout, NameCleanUp, NameRetryable, NameInternal, NameUnknownTask,
	}
}

// NameOf returns the state machine error name of err: the name of the first
// Named error in its chain, or InternalError for an error ferry did not
// classify. NameOf(nil) is "".
func NameOf(err error) string {
	if err == nil {
		return ""
	}
	var n Named
	if errors.As(err, &n) {
		return n.ErrorName()
	}
	return NameInternal
}

// IsRetryable reports whether err's state machine error name is
// RetryableError (NameOf): the first Named error in its chain is a
// *RetryableError, so the state machine retries the task. An error that
// wraps a RetryableError inside another Named error (a CleanUpError
// naming leftovers) is not retryable: the outer name is the one caught.
func IsRetryable(err error) bool {
	var n Named
	return errors.As(err, &n) && n.ErrorName() == NameRetryable
}

// AsDeploy returns a *DeployError for op failing with err. Its signature
// is the one cloud.ClassifyAs takes for the errors that are not transient.
func AsDeploy(op string, err error) error { return &DeployError{Op: op, Err: err} }

// AsLock returns a *LockError for op failing with err (see AsDeploy).
func AsLock(op string, err error) error { return &LockError{Op: op, Err: err} }

// BadReleaseError says the release cannot be deployed as written: its
// structure, its values or the resources it names are wrong. Problems holds
// every problem found, each as "path: message"; its message has one
// problem a line, as ferry validate prints them.
type BadReleaseError struct {
	Problems []string
}

// BadRelease returns a BadReleaseError for the given problems.
func BadRelease(problems ...string) *BadReleaseError {
	return &BadReleaseError{Problems: problems}
}

func (e *BadReleaseError) ErrorName() string { return NameBadRelease }
func (e *BadReleaseError) Error() string {
	switch len(e.Problems) {
	case 0:
		return "bad release"
	case 1:
		return "bad release: " + e.Problems[0]
	}
	return fmt.Sprintf("bad release: %d problems:\n  %s", len(e.Problems), strings.Join(e.Problems, "\n  "))
}

// LockExistsError says another release holds the project-config lock.
type LockExistsError struct {
	Project, Config string
	// Holder is the release id that holds the lock, Execution the execution
	// that took it, Since when it was taken.
	Holder    string
	Execution string
	Since     time.Time
}

func (e *LockExistsError) ErrorName() string { return NameLockExists }
func (e *LockExistsError) Error() string {
	return fmt.Sprintf("lock on %s/%s is held by release %s (execution %s) since %s",
		e.Project, e.Config, e.Holder, e.Execution, e.Since.UTC().Format(time.RFC3339))
}

// LockError says the lock could not be taken, read or released for a reason
// other than another holder (an unreadable lock object, a refused write).
type LockError struct {
	Op  string
	Err error
}

func (e *LockError) ErrorName() string { return NameLock }
func (e *LockError) Error() string     { return "lock: " + e.Op + ": " + errString(e.Err) }
func (e *LockError) Unwrap() error     { return e.Err }

// DeployError says a resource of the release could not be created.
type DeployError struct {
	Op  string
	Err error
}

func (e *DeployError) ErrorName() string { return NameDeploy }
func (e *DeployError) Error() string     { return "deploy: " + e.Op + ": " + errString(e.Err) }
func (e *DeployError) Unwrap() error     { return e.Err }

// HaltError says the deploy was stopped on purpose: a halt marker, or too
// many terminating instances.
type HaltError struct {
	Reason string
}

func (e *HaltError) ErrorName() string { return NameHalt }
func (e *HaltError) Error() string     { return "halted: " + e.Reason }

// TimeoutError says the release did not become healthy within its timeout,
// measured from the execution's start.
type TimeoutError struct {
	Timeout time.Duration
	Elapsed time.Duration
}

func (e *TimeoutError) ErrorName() string { return NameTimeout }
func (e *TimeoutError) Error() string {
	return fmt.Sprintf("timed out: not healthy %s after the execution started (timeout %s)",
		e.Elapsed.Round(time.Second), e.Timeout)
}

// CleanUpError says cleaning up failed. Leftovers names everything that
// could not be deleted; the lock is kept.
type CleanUpError struct {
	Leftovers []string
	Err       error
}

func (e *CleanUpError) ErrorName() string { return NameCleanUp }
func (e *CleanUpError) Error() string {
	msg := "clean up: " + errString(e.Err)
	if len(e.Leftovers) > 0 {
		msg += "; left behind: " + strings.Join(e.Leftovers, ", ")
	}
	return msg
}
func (e *CleanUpError) Unwrap() error { return e.Err }

// RetryableError says a call failed transiently (throttling, a 5xx, a
// timeout) and the same task may succeed if it runs again. The state machine
// retries it with backoff.
type RetryableError struct {
	Op  string
	Err error
}

func (e *RetryableError) ErrorName() string { return NameRetryable }
func (e *RetryableError) Error() string     { return "transient: " + e.Op + ": " + errString(e.Err) }
func (e *RetryableError) Unwrap() error     { return e.Err }

// InternalError says a handler failed in a way ferry did not expect,
// including a panic. It is a bug.
type InternalError struct {
	Msg string
}

func (e *InternalError) ErrorName() string { return NameInternal }
func (e *InternalError) Error() string     { return "internal error: " + e.Msg }

// UnknownTaskError says the Lambda was invoked with a task it does not have.
type UnknownTaskError struct {
	Task string
}

func (e *UnknownTaskError) ErrorName() string { return NameUnknownTask }
func (e *UnknownTaskError) Error() string     { return fmt.Sprintf("unknown task %q", e.Task) }

func errString(err error) string {
	if err == nil {
		return "unknown cause"
	}
	return err.Error()
}

// Compile-time checks: every error type is Named.
var (
	_ Named = (*BadReleaseError)(nil)
	_ Named = (*LockExistsError)(nil)
	_ Named = (*LockError)(nil)
	_ Named = (*DeployError)(nil)
	_ Named = (*HaltError)(nil)
	_ Named = (*TimeoutError)(nil)
	_ Named = (*CleanUpError)(nil)
	_ Named = (*RetryableError)(nil)
	_ Named = (*InternalError)(nil)
	_ Named = (*UnknownTaskError)(nil)
)
