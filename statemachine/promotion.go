package statemachine

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	sfn "github.com/aws/aws-cdk-go/awscdk/v2/awsstepfunctions"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/ferryhq/ferry/statemachine/shape"
)

// Resources of the service integrations a promotion uses (Step Functions
// Developer Guide, "Start a new AWS Step Functions state machine from a
// running execution" and "Wait for a Callback with Task Token").
const (
	resourceStartExecutionSync = "arn:aws:states:::states:startExecution.sync:2"
	resourceInvokeCallback     = "arn:aws:states:::lambda:invoke.waitForTaskToken"
)

// request is the deployer's execution.Request of task, with the state as
// its input, as every task sends it (see newTask).
func request(task string) map[string]interface{} {
	return map[string]interface{}{
		"task":    task,
		"input.$": "$",
		"execution": map[string]interface{}{
			"id.$":          "$$.Execution.Id",
			"name.$":        "$$.Execution.Name",
			"start_time.$":  "$$.Execution.StartTime",
			"retry_count.$": "$$.State.RetryCount",
		},
	}
}

// retryProps is the retry policy r as the CDK takes it, for a
// CustomState.
func retryProps(r shape.Retry) *sfn.RetryProps {
	return &sfn.RetryProps{
		Errors:      jsii.Strings(r.Errors...),
		Interval:    awscdk.Duration_Seconds(jsii.Number(r.IntervalSeconds)),
		BackoffRate: jsii.Number(r.BackoffRate),
		MaxAttempts: jsii.Number(r.MaxAttempts),
		MaxDelay:    awscdk.Duration_Seconds(jsii.Number(r.MaxDelaySeconds)),
	}
}

// newCallback defines a callback task: the deployer's task c.Task,
// invoked with the task token, waiting for its answer at most
// c.TimeoutSeconds; its answer goes to c.ResultPath. Chain wires its Next and
// Catch.
func newCallback(scope constructs.Construct, fn awslambda.IFunction, c shape.Callback, r shape.Retry) sfn.CustomState {
	payload := request(c.Task)
	payload["task_token.$"] = "$$.Task.Token"
	state := sfn.NewCustomState(scope, jsii.String(c.Name), &sfn.CustomStateProps{StateJson: &map[string]interface{}{
		"Type":           "Task",
		"Comment":        c.Comment,
		"Resource":       resourceInvokeCallback,
		"TimeoutSeconds": c.TimeoutSeconds,
		"Parameters":     map[string]interface{}{"FunctionName": fn.FunctionArn(), "Payload": payload},
		"ResultPath":     c.ResultPath,
	}})
	state.AddRetry(retryProps(r))
	return state
}

// newWave defines wave w: its Map over the stage's targets, and in its
// processor Start (a task of fn), Deploy (a nested execution of this
// machine, $$.StateMachine.Id, named and fed as Start says) and Failed.
// Chain wires the Map's Next and Catch.
func newWave(scope constructs.Construct, fn awslambda.IFunction, w shape.Wave, r shape.Retry) sfn.Map {
	start := newTask(scope, fn, w.Start, r)
	deploy := sfn.NewCustomState(scope, jsii.String(w.Deploy), &sfn.CustomStateProps{StateJson: &map[string]interface{}{
		"Type":     "Task",
		"Comment":  "Deploy the target: a nested execution of this machine, waited for to its end.",
		"Resource": resourceStartExecutionSync,
		"Parameters": map[string]interface{}{
			"StateMachineArn.$": "$$.StateMachine.Id",
			"Name.$":            "$.name",
			"Input.$":           "$.release",
		},
		"ResultSelector": map[string]interface{}{"status.$": "$.Status"},
	}})
	failed := sfn.NewPass(scope, jsii.String(w.Failed), &sfn.PassProps{
		Comment: jsii.String("The target's start or deploy did not succeed: its result says so; EndStage reads its record."),
		Parameters: &map[string]interface{}{
			"status": "FAILED",
			"error":  sfn.JsonPath_StringAt(jsii.String(shape.PathError + ".Error")),
		},
	})
	start.Next(deploy)
	for _, c := range w.Start.Catches() {
		start.AddCatch(failed, &sfn.CatchProps{Errors: jsii.Strings(c.Errors...), ResultPath: jsii.String(shape.PathError)})
	}
	deploy.AddCatch(failed, catchAll())
	m := sfn.NewMap(scope, jsii.String(w.Name), &sfn.MapProps{
		Comment:   jsii.String(w.Comment),
		ItemsPath: jsii.String(shape.PathTargets),
		ItemSelector: &map[string]interface{}{
			"promotion": sfn.JsonPath_EntirePayload(),
			"target":    sfn.JsonPath_NumberAt(jsii.String("$$.Map.Item.Value")),
		},
		ResultPath: jsii.String(w.ResultPath),
	})
	m.ItemProcessor(start, &sfn.ProcessorConfig{Mode: sfn.ProcessorMode_INLINE})
	return m
}
