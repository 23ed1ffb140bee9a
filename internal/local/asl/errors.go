package asl

import (
	"errors"
	"fmt"
	"maps"
	"slices"
)

// The predefined error names of the States Language.
const (
	ErrorAll                  = "States.ALL"
	ErrorTaskFailed           = "States.TaskFailed"
	ErrorTimeout              = "States.Timeout"
	ErrorRuntime              = "States.Runtime"
	ErrorParameterPathFailure = "States.ParameterPathFailure"
	ErrorResultPathMatch      = "States.ResultPathMatchFailure"
	ErrorNoChoiceMatched      = "States.NoChoiceMatched"
	ErrorDataLimitExceeded    = "States.DataLimitExceeded"
	ErrorHeartbeatTimeout     = "States.HeartbeatTimeout"
	ErrorPermissions          = "States.Permissions"
	ErrorBranchFailed         = "States.BranchFailed"
	ErrorIntrinsicFailure     = "States.IntrinsicFailure"
)

// ErrorLambdaUnknown is the error name of a task error that does not name
// itself (has no ErrorName method). It is the name Lambda gives a failed
// invocation whose error response it could not read; an Invoker that knows
// better names its errors.
const ErrorLambdaUnknown = "Lambda.Unknown"

// knownStatesErrors are the States.* names a Retry or Catch may list.
var knownStatesErrors = map[string]bool{
	ErrorAll: true, ErrorTaskFailed: true, ErrorTimeout: true, ErrorRuntime: true,
	ErrorParameterPathFailure: true, ErrorResultPathMatch: true, ErrorNoChoiceMatched: true,
	ErrorDataLimitExceeded: true, ErrorHeartbeatTimeout: true, ErrorPermissions: true,
	ErrorBranchFailed: true, ErrorIntrinsicFailure: true,
}

// StateError is an error raised while running a state: its Name is the
// States Language error name that Retry and Catch match, Cause the
// human-readable cause recorded in the history.
type StateError struct {
	Name  string
	Cause string
}

// ErrorName returns the error name.
func (e *StateError) ErrorName() string { return e.Name }

func (e *StateError) Error() string {
	if e.Cause == "" {
		return e.Name
	}
	return e.Name + ": " + e.Cause
}

func stateErr(name, format string, args ...any) *StateError {
	return &StateError{Name: name, Cause: fmt.Sprintf(format, args...)}
}

// taskError turns an Invoker's error into a StateError: the name from the
// error's ErrorName method (ErrorLambdaUnknown without one), the cause its
// message.
func taskError(err error) *StateError {
	var se *StateError
	if errors.As(err, &se) {
		return se
	}
	name := ErrorLambdaUnknown
	var named interface{ ErrorName() string }
	if errors.As(err, &named) && named.ErrorName() != "" {
		name = named.ErrorName()
	}
	return &StateError{Name: name, Cause: err.Error()}
}

// matchesError reports whether an ErrorEquals list matches the error name,
// following the specification and AWS: States.Runtime is never retried or
// caught; States.ALL matches every other name except
// States.DataLimitExceeded (which only its own name matches);
// States.TaskFailed matches every task error except States.Timeout.
func matchesError(list []string, name string) bool {
	if name == ErrorRuntime {
		return false
	}
	for _, e := range list {
		switch {
		case e == name:
			return true
		case e == ErrorAll && name != ErrorDataLimitExceeded:
			return true
		case e == ErrorTaskFailed && name != ErrorTimeout && name != ErrorDataLimitExceeded:
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
