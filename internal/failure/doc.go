// Package failure owns ferry's error names: the typed errors the deployer's
// handlers return and the names the state machine catches.
//
// Every error type here is named after the error it is in Step Functions
// (BadReleaseError, LockExistsError, ...). The registry (Names) is the one
// list both sides are built from: the state machine definition catches these
// names, and the Lambda runtime reports the name of the error a handler
// returned. A test fails when the two drift apart. NameOf tells an error's
// name, IsRetryable whether the state machine retries it.
//
// A handler's error reaches Step Functions as a Lambda function error
// payload (Payload): its errorType is the error name, and the cause Step
// Functions records is the whole payload as JSON. Message turns such a
// cause back into the text people read; it is the one place ferry does.
//
// Messages are shown in execution history. They name what went wrong and
// where, and never carry credentials, user data or asset bodies.
package failure
