package asl

import (
	"encoding/json"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"
)

// EventType is the type of a history event, with Step Functions' names.
type EventType string

// The history event types the interpreter records.
const (
	EventExecutionStarted   EventType = "ExecutionStarted"
	EventExecutionSucceeded EventType = "ExecutionSucceeded"
	EventExecutionFailed    EventType = "ExecutionFailed"
	EventExecutionAborted   EventType = "ExecutionAborted"
	EventExecutionTimedOut  EventType = "ExecutionTimedOut"

	EventTaskStateEntered    EventType = "TaskStateEntered"
	EventTaskStateExited     EventType = "TaskStateExited"
	EventTaskStateAborted    EventType = "TaskStateAborted"
	EventPassStateEntered    EventType = "PassStateEntered"
	EventPassStateExited     EventType = "PassStateExited"
	EventChoiceStateEntered  EventType = "ChoiceStateEntered"
	EventChoiceStateExited   EventType = "ChoiceStateExited"
	EventWaitStateEntered    EventType = "WaitStateEntered"
	EventWaitStateExited     EventType = "WaitStateExited"
	EventWaitStateAborted    EventType = "WaitStateAborted"
	EventSucceedStateEntered EventType = "SucceedStateEntered"
	EventSucceedStateExited  EventType = "SucceedStateExited"
	EventFailStateEntered    EventType = "FailStateEntered"

	// Service integrations (Resource "arn:aws:states:::service:action").
	EventTaskScheduled EventType = "TaskScheduled"
	EventTaskStarted   EventType = "TaskStarted"
	EventTaskSucceeded EventType = "TaskSucceeded"
	EventTaskFailed    EventType = "TaskFailed"
	EventTaskTimedOut  EventType = "TaskTimedOut"
	EventTaskSubmitted EventType = "TaskSubmitted"

	// Lambda functions named by ARN in Resource.
	EventLambdaFunctionScheduled EventType = "LambdaFunctionScheduled"
	EventLambdaFunctionStarted   EventType = "LambdaFunctionStarted"
	EventLambdaFunctionSucceeded EventType = "LambdaFunctionSucceeded"
	EventLambdaFunctionFailed    EventType = "LambdaFunctionFailed"
	EventLambdaFunctionTimedOut  EventType = "LambdaFunctionTimedOut"
)

// Event is one history event, field for field Step Functions'
// HistoryEvent. Exactly the details field that belongs to Type is set. A
// payload (input, output, parameters) is JSON text, never empty: an empty
// one is left out of the JSON and of ToSFN's event, as GetExecutionHistory
// leaves out the data when asked to exclude it.
// MarshalJSON renders it as the Step Functions JSON API does, and ToSFN
// converts it to the SDK's type.
type Event struct {
	ID              int64     `json:"id"`
	PreviousEventID int64     `json:"previousEventId"`
	Timestamp       time.Time `json:"-"`
	Type            EventType `json:"type"`

	ExecutionStarted   *ExecutionStartedDetails   `json:"executionStartedEventDetails,omitempty"`
	ExecutionSucceeded *ExecutionSucceededDetails `json:"executionSucceededEventDetails,omitempty"`
	ExecutionFailed    *ErrorDetails              `json:"executionFailedEventDetails,omitempty"`
	ExecutionAborted   *ErrorDetails              `json:"executionAbortedEventDetails,omitempty"`
	ExecutionTimedOut  *ErrorDetails              `json:"executionTimedOutEventDetails,omitempty"`

	StateEntered *StateEnteredDetails `json:"stateEnteredEventDetails,omitempty"`
	StateExited  *StateExitedDetails  `json:"stateExitedEventDetails,omitempty"`

	TaskScheduled *TaskScheduledDetails `json:"taskScheduledEventDetails,omitempty"`
	TaskStarted   *TaskResource         `json:"taskStartedEventDetails,omitempty"`
	TaskSucceeded *TaskSucceededDetails `json:"taskSucceededEventDetails,omitempty"`
	TaskFailed    *TaskErrorDetails     `json:"taskFailedEventDetails,omitempty"`
	TaskTimedOut  *TaskErrorDetails     `json:"taskTimedOutEventDetails,omitempty"`
	TaskSubmitted *TaskSucceededDetails `json:"taskSubmittedEventDetails,omitempty"`

	MapStateStarted       *MapStateStartedDetails `json:"mapStateStartedEventDetails,omitempty"`
	MapIterationStarted   *MapIterationDetails    `json:"mapIterationStartedEventDetails,omitempty"`
	MapIterationSucceeded *MapIterationDetails    `json:"mapIterationSucceededEventDetails,omitempty"`
	MapIterationFailed    *MapIterationDetails    `json:"mapIterationFailedEventDetails,omitempty"`
	MapIterationAborted   *MapIterationDetails    `json:"mapIterationAbortedEventDetails,omitempty"`

	LambdaFunctionScheduled *LambdaScheduledDetails    `json:"lambdaFunctionScheduledEventDetails,omitempty"`
	LambdaFunctionSucceeded *ExecutionSucceededDetails `json:"lambdaFunctionSucceededEventDetails,omitempty"`
	LambdaFunctionFailed    *ErrorDetails              `json:"lambdaFunctionFailedEventDetails,omitempty"`
	LambdaFunctionTimedOut  *ErrorDetails              `json:"lambdaFunctionTimedOutEventDetails,omitempty"`
}

// DataDetails says whether a payload in an event was truncated; the
// interpreter never truncates.
type DataDetails struct {
	Truncated bool `json:"truncated"`
}

// ExecutionStartedDetails are the details of ExecutionStarted.
type ExecutionStartedDetails struct {
	Input        string      `json:"input,omitempty"`
	InputDetails DataDetails `json:"inputDetails"`
	RoleARN      string      `json:"roleArn,omitempty"`
}

// ExecutionSucceededDetails carry an output: ExecutionSucceeded and
// LambdaFunctionSucceeded.
type ExecutionSucceededDetails struct {
	Output        string      `json:"output,omitempty"`
	OutputDetails DataDetails `json:"outputDetails"`
}

// ErrorDetails are an error name and cause (either may be empty).
type ErrorDetails struct {
	Error string `json:"error,omitempty"`
	Cause string `json:"cause,omitempty"`
}

// StateEnteredDetails are the details of every *StateEntered event: the
// state's raw input.
type StateEnteredDetails struct {
	Name         string      `json:"name"`
	Input        string      `json:"input,omitempty"`
	InputDetails DataDetails `json:"inputDetails"`
}

// StateExitedDetails are the details of every *StateExited event: the
// state's output.
type StateExitedDetails struct {
	Name          string      `json:"name"`
	Output        string      `json:"output,omitempty"`
	OutputDetails DataDetails `json:"outputDetails"`
}

// TaskResource names a service integration: ResourceType "lambda",
// Resource "invoke" for "arn:aws:states:::lambda:invoke".
type TaskResource struct {
	ResourceType string `json:"resourceType"`
	Resource     string `json:"resource"`
}

// TaskScheduledDetails are the details of TaskScheduled.
type TaskScheduledDetails struct {
	ResourceType     string `json:"resourceType"`
	Resource         string `json:"resource"`
	Region           string `json:"region"`
	Parameters       string `json:"parameters,omitempty"`
	TimeoutInSeconds *int64 `json:"timeoutInSeconds,omitempty"`
}

// TaskSucceededDetails are the details of TaskSucceeded.
type TaskSucceededDetails struct {
	ResourceType  string      `json:"resourceType"`
	Resource      string      `json:"resource"`
	Output        string      `json:"output,omitempty"`
	OutputDetails DataDetails `json:"outputDetails"`
}

// TaskErrorDetails are the details of TaskFailed and TaskTimedOut.
type TaskErrorDetails struct {
	ResourceType string `json:"resourceType"`
	Resource     string `json:"resource"`
	Error        string `json:"error,omitempty"`
	Cause        string `json:"cause,omitempty"`
}

// LambdaScheduledDetails are the details of LambdaFunctionScheduled.
type LambdaScheduledDetails struct {
	Resource         string      `json:"resource"`
	Input            string      `json:"input,omitempty"`
	InputDetails     DataDetails `json:"inputDetails"`
	TimeoutInSeconds *int64      `json:"timeoutInSeconds,omitempty"`
}

// MarshalJSON renders the event as the Step Functions JSON API does
// (timestamp in epoch seconds with milliseconds).
func (e Event) MarshalJSON() ([]byte, error) {
	type plain Event
	return json.Marshal(struct {
		Timestamp float64 `json:"timestamp"`
		plain
	}{
		Timestamp: float64(e.Timestamp.UnixMilli()) / 1000,
		plain:     plain(e),
	})
}

func str(s string) *string {
	if s == "" {
		return nil
	}
	return aws.String(s)
}

func data() *sfntypes.HistoryEventExecutionDataDetails {
	return &sfntypes.HistoryEventExecutionDataDetails{Truncated: false}
}

func sfnError(d *ErrorDetails) (errName, cause *string) {
	return str(d.Error), str(d.Cause)
}

// ToSFN converts the event to the SDK's HistoryEvent.
func (e Event) ToSFN() sfntypes.HistoryEvent {
	ts := e.Timestamp
	h := sfntypes.HistoryEvent{
		Id:              e.ID,
		PreviousEventId: e.PreviousEventID,
		Timestamp:       &ts,
		Type:            sfntypes.HistoryEventType(e.Type),
	}
	e.executionDetails(&h)
	e.stateDetails(&h)
	e.taskDetails(&h)
	e.lambdaDetails(&h)
	e.mapDetails(&h)
	return h
}

// executionDetails sets h's details of an execution's events.
func (e Event) executionDetails(h *sfntypes.HistoryEvent) {
	if d := e.ExecutionStarted; d != nil {
		h.ExecutionStartedEventDetails = &sfntypes.ExecutionStartedEventDetails{
			Input: str(d.Input), InputDetails: data(), RoleArn: str(d.RoleARN)}
	}
	if d := e.ExecutionSucceeded; d != nil {
		h.ExecutionSucceededEventDetails = &sfntypes.ExecutionSucceededEventDetails{
			Output: str(d.Output), OutputDetails: data()}
	}
	if d := e.ExecutionFailed; d != nil {
		x := &sfntypes.ExecutionFailedEventDetails{}
		x.Error, x.Cause = sfnError(d)
		h.ExecutionFailedEventDetails = x
	}
	if d := e.ExecutionAborted; d != nil {
		x := &sfntypes.ExecutionAbortedEventDetails{}
		x.Error, x.Cause = sfnError(d)
		h.ExecutionAbortedEventDetails = x
	}
	if d := e.ExecutionTimedOut; d != nil {
		x := &sfntypes.ExecutionTimedOutEventDetails{}
		x.Error, x.Cause = sfnError(d)
		h.ExecutionTimedOutEventDetails = x
	}
}

// stateDetails sets h's details of a state's events.
func (e Event) stateDetails(h *sfntypes.HistoryEvent) {
	if d := e.StateEntered; d != nil {
		h.StateEnteredEventDetails = &sfntypes.StateEnteredEventDetails{
			Name: aws.String(d.Name), Input: str(d.Input), InputDetails: data()}
	}
	if d := e.StateExited; d != nil {
		h.StateExitedEventDetails = &sfntypes.StateExitedEventDetails{
			Name: aws.String(d.Name), Output: str(d.Output), OutputDetails: data()}
	}
}

// taskDetails sets h's details of a service integration's task events.
func (e Event) taskDetails(h *sfntypes.HistoryEvent) {
	if d := e.TaskScheduled; d != nil {
		h.TaskScheduledEventDetails = &sfntypes.TaskScheduledEventDetails{
			ResourceType: aws.String(d.ResourceType), Resource: aws.String(d.Resource),
			Region: aws.String(d.Region), Parameters: str(d.Parameters),
			TimeoutInSeconds: d.TimeoutInSeconds}
	}
	if d := e.TaskStarted; d != nil {
		h.TaskStartedEventDetails = &sfntypes.TaskStartedEventDetails{
			ResourceType: aws.String(d.ResourceType), Resource: aws.String(d.Resource)}
	}
	if d := e.TaskSucceeded; d != nil {
		h.TaskSucceededEventDetails = &sfntypes.TaskSucceededEventDetails{
			ResourceType: aws.String(d.ResourceType), Resource: aws.String(d.Resource),
			Output: str(d.Output), OutputDetails: data()}
	}
	if d := e.TaskFailed; d != nil {
		h.TaskFailedEventDetails = &sfntypes.TaskFailedEventDetails{
			ResourceType: aws.String(d.ResourceType), Resource: aws.String(d.Resource),
			Error: str(d.Error), Cause: str(d.Cause)}
	}
	if d := e.TaskSubmitted; d != nil {
		h.TaskSubmittedEventDetails = &sfntypes.TaskSubmittedEventDetails{
			ResourceType: aws.String(d.ResourceType), Resource: aws.String(d.Resource),
			Output: str(d.Output), OutputDetails: data()}
	}
	if d := e.TaskTimedOut; d != nil {
		h.TaskTimedOutEventDetails = &sfntypes.TaskTimedOutEventDetails{
			ResourceType: aws.String(d.ResourceType), Resource: aws.String(d.Resource),
			Error: str(d.Error), Cause: str(d.Cause)}
	}
}

// lambdaDetails sets h's details of a Lambda function's task events.
func (e Event) lambdaDetails(h *sfntypes.HistoryEvent) {
	if d := e.LambdaFunctionScheduled; d != nil {
		h.LambdaFunctionScheduledEventDetails = &sfntypes.LambdaFunctionScheduledEventDetails{
			Resource: aws.String(d.Resource), Input: str(d.Input), InputDetails: data(),
			TimeoutInSeconds: d.TimeoutInSeconds}
	}
	if d := e.LambdaFunctionSucceeded; d != nil {
		h.LambdaFunctionSucceededEventDetails = &sfntypes.LambdaFunctionSucceededEventDetails{
			Output: str(d.Output), OutputDetails: data()}
	}
	if d := e.LambdaFunctionFailed; d != nil {
		x := &sfntypes.LambdaFunctionFailedEventDetails{}
		x.Error, x.Cause = sfnError(d)
		h.LambdaFunctionFailedEventDetails = x
	}
	if d := e.LambdaFunctionTimedOut; d != nil {
		x := &sfntypes.LambdaFunctionTimedOutEventDetails{}
		x.Error, x.Cause = sfnError(d)
		h.LambdaFunctionTimedOutEventDetails = x
	}
}

// mapDetails sets h's details of a Map state's events.
func (e Event) mapDetails(h *sfntypes.HistoryEvent) {
	if d := e.MapStateStarted; d != nil {
		h.MapStateStartedEventDetails = &sfntypes.MapStateStartedEventDetails{Length: int32(d.Length)}
	}
	iteration := func(d *MapIterationDetails) *sfntypes.MapIterationEventDetails {
		if d == nil {
			return nil
		}
		return &sfntypes.MapIterationEventDetails{Name: aws.String(d.Name), Index: int32(d.Index)}
	}
	h.MapIterationStartedEventDetails = iteration(e.MapIterationStarted)
	h.MapIterationSucceededEventDetails = iteration(e.MapIterationSucceeded)
	h.MapIterationFailedEventDetails = iteration(e.MapIterationFailed)
	h.MapIterationAbortedEventDetails = iteration(e.MapIterationAborted)
}

// ToSFNHistory converts a history to the SDK's events.
func ToSFNHistory(events []Event) []sfntypes.HistoryEvent {
	out := make([]sfntypes.HistoryEvent, len(events))
	for i, e := range events {
		out[i] = e.ToSFN()
	}
	return out
}
