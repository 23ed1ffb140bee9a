package region

import (
	"fmt"
	"net/http"

	"github.com/aws/smithy-go"
)

// Error codes of the Step Functions API the region returns, as the SDK's
// typed errors name them (types.ExecutionDoesNotExist, ...).
const (
	CodeExecutionDoesNotExist    = "ExecutionDoesNotExist"
	CodeExecutionAlreadyExists   = "ExecutionAlreadyExists"
	CodeStateMachineDoesNotExist = "StateMachineDoesNotExist"
	CodeInvalidName              = "InvalidName"
	CodeInvalidArn               = "InvalidArn"
	CodeInvalidExecutionInput    = "InvalidExecutionInput"
	CodeInvalidToken             = "InvalidToken"
	CodeTaskDoesNotExist         = "TaskDoesNotExist"
	CodeTaskTimedOut             = "TaskTimedOut"
	CodeInvalidOutput            = "InvalidOutput"
	CodeValidation               = "ValidationException"
	CodeUnknownOperation         = "UnknownOperationException"
	CodeSerialization            = "SerializationException"
	CodeInternal                 = "InternalFailure"
)

// APIError is an error of the region's Step Functions API: an AWS error
// code (one of the Code constants) and a message. It implements
// smithy.APIError, so cloud.ErrorCode and errors.As(err, &smithy.APIError)
// work on it as on the SDK's errors.
type APIError struct {
	Code    string
	Message string
}

var _ smithy.APIError = (*APIError)(nil)

func apiErrorf(code, format string, args ...any) *APIError {
	return &APIError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Error returns "Code: Message".
func (e *APIError) Error() string { return e.Code + ": " + e.Message }

// ErrorCode returns the AWS error code.
func (e *APIError) ErrorCode() string { return e.Code }

// ErrorMessage returns the message.
func (e *APIError) ErrorMessage() string { return e.Message }

// ErrorFault says whose fault the error is: the server's for
// InternalFailure, the client's otherwise.
func (e *APIError) ErrorFault() smithy.ErrorFault {
	if e.Code == CodeInternal {
		return smithy.FaultServer
	}
	return smithy.FaultClient
}

// status is the HTTP status the error is served with.
func (e *APIError) status() int {
	if e.Code == CodeInternal {
		return http.StatusInternalServerError
	}
	return http.StatusBadRequest
}
