package region

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ferryhq/ferry/internal/local/asl"
)

// The service integrations the region runs besides its Lambda function
// (Step Functions Developer Guide, "Start a new AWS Step Functions state
// machine from a running execution" and "Invoke an AWS Lambda function
// with Step Functions").
const (
	// ResourceStartExecutionSync starts an execution of a state machine
	// and waits for it to end; its result is the execution's description
	// with Input and Output as JSON (":2").
	ResourceStartExecutionSync = "arn:aws:states:::states:startExecution.sync:2"
	// ResourceLambdaInvoke invokes a function with Parameters
	// {"FunctionName", "Payload"}; the callback pattern uses it as
	// "lambda:invoke.waitForTaskToken", which the interpreter strips.
	ResourceLambdaInvoke = "arn:aws:states:::lambda:invoke"
)

// startExecutionParams are the Parameters of startExecution.sync:2.
type startExecutionParams struct {
	StateMachineArn string          `json:"StateMachineArn"`
	Name            string          `json:"Name"`
	Input           json.RawMessage `json:"Input"`
}

// nestedOutput is the result of startExecution.sync:2, and, as JSON, the
// cause of its States.TaskFailed: DescribeExecution's fields with Input
// and Output as JSON.
type nestedOutput struct {
	ExecutionArn    string          `json:"ExecutionArn"`
	StateMachineArn string          `json:"StateMachineArn"`
	Name            string          `json:"Name"`
	Status          string          `json:"Status"`
	StartDate       int64           `json:"StartDate"`
	StopDate        int64           `json:"StopDate"`
	Input           json.RawMessage `json:"Input"`
	Output          json.RawMessage `json:"Output,omitempty"`
	Error           string          `json:"Error,omitempty"`
	Cause           string          `json:"Cause,omitempty"`
}

// taskFailed is how a nested execution that did not succeed fails the
// task that waited for it.
type taskFailed struct{ cause string }

func (e *taskFailed) Error() string     { return e.cause }
func (e *taskFailed) ErrorName() string { return asl.ErrorTaskFailed }

// integrationError is an error of a service API a task called, named as
// Step Functions names it: the service, a dot, the API's exception.
type integrationError struct{ name, msg string }

func (e *integrationError) Error() string     { return e.msg }
func (e *integrationError) ErrorName() string { return e.name }

// integrationErrorOf is the Step Functions API's error e as the task that
// called the API sees it: StepFunctions.<Code>Exception.
func integrationErrorOf(e *APIError) error {
	return &integrationError{"StepFunctions." + strings.TrimSuffix(e.Code, "Exception") + "Exception", e.Message}
}

// runNested runs a startExecution.sync:2 task: it starts the execution
// (StartExecution's semantics: idempotent for the same name and input
// while it runs), waits for it to end, and returns its description. A
// nested execution that fails, times out or is aborted fails the task
// with States.TaskFailed, the description as its cause. When the task is
// cancelled (its own execution stopped, or a Map iteration aborted), the
// nested execution is stopped, as Step Functions stops the job of a
// cancelled Run a Job (.sync) task (the reason its IAM policy needs
// states:StopExecution, Step Functions Developer Guide, "IAM policies for
// AWS Step Functions").
func (r *Region) runNested(ctx context.Context, payload json.RawMessage) (json.RawMessage, error) {
	var p startExecutionParams
	if err := json.Unmarshal(payload, &p); err != nil {
		return nil, &integrationError{"States.Runtime", fmt.Sprintf("the Parameters of startExecution.sync:2 do not decode: %v", err)}
	}
	if e := r.checkStateMachine(p.StateMachineArn); e != nil {
		return nil, integrationErrorOf(e)
	}
	input := p.Input
	var s string
	if json.Unmarshal(input, &s) == nil { // Input given as a string of JSON
		input = json.RawMessage(s)
	}
	done := r.awaitEnd(p.Name) // before the start: its end cannot be missed
	x, _, err := r.Start(p.Name, input)
	if err != nil {
		done.Wake()
		return nil, integrationErrorOf(asAPIError(err))
	}
	if err := done.Wait(ctx); err != nil {
		if x.Stop("States.TaskFailed", "the task that started it was cancelled") {
			r.logger.Info("nested execution stopped", "execution", x.ARN())
		}
		return nil, err
	}
	<-x.Done()
	out := nestedDescription(x.Describe())
	b, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	if out.Status != string(asl.StatusSucceeded) {
		return nil, &taskFailed{cause: string(b)}
	}
	return b, nil
}

// awaitEnd begins a wait for the end of the execution named name, which
// logEnd wakes (before the execution leaves the scheduler).
func (r *Region) awaitEnd(name string) asl.Await {
	aw := asl.NewAwait(r.waiter, 0)
	r.mu.Lock()
	if r.endWaiters == nil {
		r.endWaiters = map[string][]asl.Await{}
	}
	r.endWaiters[name] = append(r.endWaiters[name], aw)
	r.mu.Unlock()
	return aw
}

// wakeEnd wakes whoever awaits the end of the execution named name.
func (r *Region) wakeEnd(name string) {
	r.mu.Lock()
	waiters := r.endWaiters[name]
	delete(r.endWaiters, name)
	r.mu.Unlock()
	for _, aw := range waiters {
		aw.Wake()
	}
}

func nestedDescription(d asl.Description) nestedOutput {
	out := nestedOutput{
		ExecutionArn: d.ExecutionARN, StateMachineArn: d.StateMachineARN, Name: d.Name,
		Status: string(d.Status), StartDate: d.StartDate.UnixMilli(), StopDate: d.StopDate.UnixMilli(),
		Input: json.RawMessage(d.Input), Error: d.Error, Cause: d.Cause,
	}
	if d.Output != "" {
		out.Output = json.RawMessage(d.Output)
	}
	return out
}

// SendTaskSuccess answers the task waiting with token, as the Step
// Functions API does; errors are *APIError (TaskDoesNotExist,
// TaskTimedOut, InvalidToken, InvalidOutput).
func (r *Region) SendTaskSuccess(token string, output json.RawMessage) error {
	return r.answer(token, func(x *asl.Execution) error { return x.SendTaskSuccess(token, output) })
}

// SendTaskFailure fails the task waiting with token, as the Step Functions
// API does.
func (r *Region) SendTaskFailure(token, errName, cause string) error {
	return r.answer(token, func(x *asl.Execution) error { return x.SendTaskFailure(token, errName, cause) })
}

func (r *Region) answer(token string, send func(*asl.Execution) error) error {
	release := r.Hold() // the callback is a participant until the task is busy again
	defer release()
	arn, ok := asl.TokenExecution(token)
	if !ok {
		return apiErrorf(CodeInvalidToken, "Invalid Token: the task token is malformed")
	}
	x, err := r.Execution(arn)
	if err != nil {
		return apiErrorf(CodeTaskDoesNotExist, "Task Does Not Exist")
	}
	if err := send(x); err != nil {
		var te *asl.TaskTokenError
		if errors.As(err, &te) {
			return apiErrorf(te.Code, "%s", te.Message)
		}
		return asAPIError(err)
	}
	return nil
}
