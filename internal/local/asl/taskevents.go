package asl

import "strings"

// taskEvents make the history events of a Task's invocation. Their names
// and details depend on how the Task names its Resource: a service
// integration ("arn:aws:states:::lambda:invoke") gets Task* events, a
// Lambda function named by its ARN gets LambdaFunction* events.
type taskEvents interface {
	scheduled(payload string, timeoutSeconds *int64) Event
	started() Event
	succeeded(output string) Event
	failed(se *StateError) Event
	timedOut(se *StateError) Event
}

// taskEventsOf returns the events of a Task whose Resource is resource,
// run in region.
func taskEventsOf(resource, region string) taskEvents {
	if typ, name, ok := integrationOf(resource); ok {
		return integrationEvents{TaskResource{ResourceType: typ, Resource: name}, region}
	}
	return lambdaEvents{resource}
}

// integrationOf splits a service integration's Resource,
// "arn:aws:states:::SERVICE:ACTION", into its service and action; ok is
// false for any other resource.
func integrationOf(resource string) (service, action string, ok bool) {
	parts := strings.SplitN(resource, ":", 7)
	if len(parts) == 7 && parts[0] == "arn" && parts[2] == "states" && parts[3] == "" && parts[4] == "" {
		return parts[5], parts[6], true
	}
	return "", "", false
}

// integrationEvents are the Task* events of a service integration.
type integrationEvents struct {
	r      TaskResource
	region string
}

func (e integrationEvents) scheduled(payload string, timeoutSeconds *int64) Event {
	return Event{Type: EventTaskScheduled, TaskScheduled: &TaskScheduledDetails{
		ResourceType: e.r.ResourceType, Resource: e.r.Resource, Region: e.region,
		Parameters: payload, TimeoutInSeconds: timeoutSeconds}}
}

// submitted is TaskSubmitted: the task's API call was made, and it waits
// for its token's callback.
func (e integrationEvents) submitted(output string) Event {
	return Event{Type: EventTaskSubmitted, TaskSubmitted: &TaskSucceededDetails{
		ResourceType: e.r.ResourceType, Resource: e.r.Resource, Output: output}}
}

func (e integrationEvents) started() Event {
	r := e.r
	return Event{Type: EventTaskStarted, TaskStarted: &r}
}

func (e integrationEvents) succeeded(output string) Event {
	return Event{Type: EventTaskSucceeded, TaskSucceeded: &TaskSucceededDetails{
		ResourceType: e.r.ResourceType, Resource: e.r.Resource, Output: output}}
}

func (e integrationEvents) failed(se *StateError) Event {
	return Event{Type: EventTaskFailed, TaskFailed: e.errorDetails(se)}
}

func (e integrationEvents) timedOut(se *StateError) Event {
	return Event{Type: EventTaskTimedOut, TaskTimedOut: e.errorDetails(se)}
}

func (e integrationEvents) errorDetails(se *StateError) *TaskErrorDetails {
	return &TaskErrorDetails{ResourceType: e.r.ResourceType, Resource: e.r.Resource, Error: se.Name, Cause: se.Cause}
}

// lambdaEvents are the LambdaFunction* events of a Lambda function named by
// its ARN.
type lambdaEvents struct {
	resource string
}

func (e lambdaEvents) scheduled(payload string, timeoutSeconds *int64) Event {
	return Event{Type: EventLambdaFunctionScheduled, LambdaFunctionScheduled: &LambdaScheduledDetails{
		Resource: e.resource, Input: payload, TimeoutInSeconds: timeoutSeconds}}
}

func (lambdaEvents) started() Event { return Event{Type: EventLambdaFunctionStarted} }

func (lambdaEvents) succeeded(output string) Event {
	return Event{Type: EventLambdaFunctionSucceeded, LambdaFunctionSucceeded: &ExecutionSucceededDetails{Output: output}}
}

func (lambdaEvents) failed(se *StateError) Event {
	return Event{Type: EventLambdaFunctionFailed, LambdaFunctionFailed: &ErrorDetails{Error: se.Name, Cause: se.Cause}}
}

func (lambdaEvents) timedOut(se *StateError) Event {
	return Event{Type: EventLambdaFunctionTimedOut, LambdaFunctionTimedOut: &ErrorDetails{Error: se.Name, Cause: se.Cause}}
}
