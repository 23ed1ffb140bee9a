package failure

import (
	"bytes"
	"encoding/json"

	"github.com/aws/aws-lambda-go/lambda/messages"
)

// Payload is the function error a handler's error becomes on the wire:
// the Lambda runtime posts it as the invocation's error response, and
// Step Functions reports its errorType as the task's error name and the
// whole payload, as JSON, as the cause. AWS's guide "Handling error
// conditions using a Step Functions state machine" shows the shape:
// Cause {"errorMessage":"This is a custom error!","errorType":"CustomError",...}.
//
// The Lambda (lambdas/) and the local region's Lambda service both build
// the payload here, so what a Catch stores is the same on AWS and locally.
func Payload(err error) messages.InvokeResponse_Error {
	return messages.InvokeResponse_Error{Type: NameOf(err), Message: err.Error()}
}

// Cause is the cause Step Functions records for a function error: the
// JSON of Payload(err).
func Cause(err error) string {
	data, merr := json.Marshal(Payload(err))
	if merr != nil { // two strings always marshal
		return err.Error()
	}
	return string(data)
}

// Message returns the text people read for a cause as Step Functions
// reports it (in a Catch's $.error.Cause, a TaskFailed or
// LambdaFunctionFailed event, a failed execution): the errorMessage of a
// function error payload, or the cause itself when it is not one (a
// States.* error, a Lambda service error, a cause ferry already turned
// into text). It is the one place ferry turns a cause into a message:
// outcomes, ferry status, ferry deploy and history all show its result.
func Message(cause string) string {
	trimmed := bytes.TrimSpace([]byte(cause))
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return cause
	}
	var p struct {
		Message *string `json:"errorMessage"`
	}
	if err := json.Unmarshal(trimmed, &p); err != nil || p.Message == nil {
		return cause
	}
	return *p.Message
}
