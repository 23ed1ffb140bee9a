package statemachine

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	sfn "github.com/aws/aws-cdk-go/awscdk/v2/awsstepfunctions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsstepfunctionstasks"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/limits"
)

// State names that are not tasks (the tasks are named by execution.Tasks).
const (
	StateHealthy         = "Healthy?"
	StateWaitForHealthy  = "WaitForHealthy"
	StateBadHealthReport = "BadHealthReport"
)

// Paths of the state document the machine reads and writes (see package
// execution).
const (
	PathHealth      = "$.health"
	PathHealthy     = "$.health.healthy"
	PathWaitSeconds = "$.health.wait_seconds"
	PathError       = "$.error"
)

// Retry policy of every task: transient errors are retried with exponential
// backoff, bounded in attempts and in delay.
const (
	RetryIntervalSeconds = limits.TaskRetryIntervalSeconds
	RetryBackoffRate     = limits.TaskRetryBackoffRate
	RetryMaxAttempts     = limits.TaskRetryMaxAttempts
	RetryMaxDelaySeconds = limits.TaskRetryMaxDelaySeconds
)

// Error names the machine uses besides failure.Names.
const (
	ErrorAll = "States.ALL"
)

// RetriedErrors are the error names every task retries: ferry's retryable
// error and the Lambda service's transient errors, including Lambda.Unknown
// (an invocation that died, e.g. out of memory or time, possibly after its
// work was done: every handler is idempotent, so running it again is safe)
// and Sandbox.Timedout, the deployer function running out of its own
// timeout. AWS's "Handle Lambda service exceptions" (Step Functions
// Developer Guide) reports function timeouts as Lambda.Unknown; Lambda now
// answers a timed-out invocation with the error payload {"errorType":
// "Sandbox.Timedout", "errorMessage": "RequestId: ... Error: Task timed out
// after N seconds"} (Lambda Developer Guide, "Troubleshoot invocation issues
// in Lambda"), and Step Functions names a task's error after the payload's
// errorType, so the same timeout reaches the Retry as Sandbox.Timedout.
func RetriedErrors() []string {
	return []string{
		failure.NameRetryable,
		"Lambda.Unknown",
		"Sandbox.Timedout",
		"Lambda.ServiceException",
		"Lambda.AWSLambdaException",
		"Lambda.SdkClientException",
		"Lambda.TooManyRequestsException",
		"Lambda.ClientExecutionTimeoutException",
	}
}

// Props configures the deploy state machine.
type Props struct {
	// Function is the deployer Lambda every task invokes. Required.
	Function awslambda.IFunction
	// StateMachineName is the machine's physical name; empty lets
	// CloudFormation name it.
	StateMachineName string
	// Logs configures execution logging; nil disables it.
	Logs *sfn.LogOptions
	// Tracing enables X-Ray tracing.
	Tracing bool
	// RemovalPolicy of the state machine; zero keeps the CDK default.
	RemovalPolicy awscdk.RemovalPolicy
}

// Deployer is the deploy state machine construct.
type Deployer struct {
	// Construct is the scope holding every state and the state machine.
	Construct constructs.Construct
	// StateMachine is the Step Functions state machine. Its role may invoke
	// Props.Function and nothing else the machine adds.
	StateMachine sfn.StateMachine
}

// New defines the deploy state machine in scope. It panics (as every CDK
// construct does on a misuse) when props or props.Function is nil.
func New(scope constructs.Construct, id string, props *Props) *Deployer {
	if props == nil || props.Function == nil {
		panic("statemachine.New: Props.Function is required")
	}
	c := constructs.NewConstruct(scope, jsii.String(id))
	start := Chain(c, props.Function)

	smProps := &sfn.StateMachineProps{
		DefinitionBody:   sfn.DefinitionBody_FromChainable(start),
		StateMachineType: sfn.StateMachineType_STANDARD,
		Comment:          jsii.String("ferry: blue/green deploy of a release's Auto Scaling groups"),
		Logs:             props.Logs,
		TracingEnabled:   jsii.Bool(props.Tracing),
	}
	if props.StateMachineName != "" {
		smProps.StateMachineName = jsii.String(props.StateMachineName)
	}
	if props.RemovalPolicy != "" {
		smProps.RemovalPolicy = props.RemovalPolicy
	}
	sm := sfn.NewStateMachine(c, jsii.String("StateMachine"), smProps)
	return &Deployer{Construct: c, StateMachine: sm}
}

// catch is one Catch of a task: the errors it catches and where it goes.
type catch struct {
	errors []string
	next   sfn.IChainable
}

// Chain defines every state of the deploy machine in scope, each task
// invoking fn, and returns the start state (Validate). New uses it; so does
// RenderDefinition.
func Chain(scope constructs.Construct, fn awslambda.IFunction) sfn.IChainable {
	str := jsii.String

	success := sfn.NewSucceed(scope, str(execution.EndSuccess), &sfn.SucceedProps{
		Comment: str("The release is deployed and healthy; the previous groups are deleted."),
	})
	failureClean := sfn.NewFail(scope, str(execution.EndFailureClean), &sfn.FailProps{
		Comment:   str("The release failed; cleaning up succeeded, so AWS is as it was before the release."),
		ErrorPath: str(PathError + ".Error"),
		CausePath: str(PathError + ".Cause"),
	})
	failureDirty := sfn.NewFail(scope, str(execution.EndFailureDirty), &sfn.FailProps{
		Comment:   str("The release failed and cleaning up failed too: resources or the lock are left behind. Alert and file a bug."),
		ErrorPath: str(PathError + ".Error"),
		CausePath: str(PathError + ".Cause"),
	})

	task := func(name, resultPath, comment string) awsstepfunctionstasks.LambdaInvoke {
		props := &awsstepfunctionstasks.LambdaInvokeProps{
			LambdaFunction:           fn,
			PayloadResponseOnly:      jsii.Bool(true),
			RetryOnServiceExceptions: jsii.Bool(false),
			Comment:                  str(comment),
			Payload: sfn.TaskInput_FromObject(&map[string]interface{}{
				"task":  name,
				"input": sfn.JsonPath_EntirePayload(),
				"execution": map[string]interface{}{
					"id":          sfn.JsonPath_StringAt(str("$$.Execution.Id")),
					"name":        sfn.JsonPath_StringAt(str("$$.Execution.Name")),
					"start_time":  sfn.JsonPath_StringAt(str("$$.Execution.StartTime")),
					"retry_count": sfn.JsonPath_NumberAt(str("$$.State.RetryCount")),
				},
			}),
		}
		if resultPath != "" {
			props.ResultPath = str(resultPath)
		}
		t := awsstepfunctionstasks.NewLambdaInvoke(scope, str(name), props)
		t.AddRetry(&sfn.RetryProps{
			Errors:      jsii.Strings(RetriedErrors()...),
			Interval:    awscdk.Duration_Seconds(jsii.Number(RetryIntervalSeconds)),
			BackoffRate: jsii.Number(RetryBackoffRate),
			MaxAttempts: jsii.Number(RetryMaxAttempts),
			MaxDelay:    awscdk.Duration_Seconds(jsii.Number(RetryMaxDelaySeconds)),
		})
		return t
	}
	catches := func(t awsstepfunctionstasks.LambdaInvoke, cs ...catch) {
		for _, c := range cs {
			t.AddCatch(c.next, &sfn.CatchProps{Errors: jsii.Strings(c.errors...), ResultPath: str(PathError)})
		}
	}

	validate := task(execution.TaskValidate, "$",
		"Check the release and its integrity; the result (a compact State) replaces the release.")
	lock := task(execution.TaskLock, "",
		"Take the project-config lock and the release's run-once marker.")
	validateResources := task(execution.TaskValidateResources, "",
		"Resolve and check every resource the release names in the target environment.")
	publish := task(execution.TaskPublish, "",
		"Copy the release's assets into the target's asset bucket and render user data.")
	deploy := task(execution.TaskDeploy, "",
		"Create a launch template and an Auto Scaling group per service; returns the first wait.")
	checkHealthy := task(execution.TaskCheckHealthy, PathHealth,
		"Count healthy instances; halt on terminations, a fresh halt marker or the timeout.")
	cleanUpSuccess := task(execution.TaskCleanUpSuccess, "",
		"Re-check health, delete the previous groups, record the outcome, release the lock.")
	cleanUpFailure := task(execution.TaskCleanUpFailure, "",
		"Delete what this release created and record the outcome.")
	releaseLock := task(execution.TaskReleaseLock, "",
		"Release the lock if this release holds it.")

	wait := sfn.NewWait(scope, str(StateWaitForHealthy), &sfn.WaitProps{
		Comment: str("Wait as long as the last health report asks."),
		Time:    sfn.WaitTime_SecondsPath(str(PathWaitSeconds)),
	})
	badHealth := sfn.NewPass(scope, str(StateBadHealthReport), &sfn.PassProps{
		Comment: str("The state has no usable health report (a handler bug): fail through clean up."),
		Result: sfn.Result_FromObject(&map[string]interface{}{
			"Error": failure.NameInternal,
			"Cause": "the state has no usable health report at " + PathHealth +
				" (healthy must be a boolean, wait_seconds a number >= 0)",
		}),
		ResultPath: str(PathError),
	})
	healthy := sfn.NewChoice(scope, str(StateHealthy), &sfn.ChoiceProps{
		Comment: str("Clean up the previous release when healthy, else wait and check again."),
	})

	// The success path.
	validate.Next(lock)
	lock.Next(validateResources)
	validateResources.Next(publish)
	publish.Next(deploy)
	deploy.Next(healthy)
	healthy.
		When(sfn.Condition_IsNotPresent(str(PathHealthy)), badHealth, nil).
		When(sfn.Condition_IsNotBoolean(str(PathHealthy)), badHealth, nil).
		When(sfn.Condition_BooleanEquals(str(PathHealthy), jsii.Bool(true)), cleanUpSuccess, nil).
		When(sfn.Condition_IsNotPresent(str(PathWaitSeconds)), badHealth, nil).
		When(sfn.Condition_IsNotNumeric(str(PathWaitSeconds)), badHealth, nil).
		When(sfn.Condition_NumberLessThan(str(PathWaitSeconds), jsii.Number(0)), badHealth, nil).
		Otherwise(wait)
	wait.Next(checkHealthy)
	checkHealthy.Next(healthy)
	cleanUpSuccess.Next(success)

	// The failure paths.
	badHealth.Next(cleanUpFailure)
	cleanUpFailure.Next(releaseLock)
	releaseLock.Next(failureClean)

	all := []string{ErrorAll}
	// Nothing is touched before the lock is held: a bad release or a held
	// lock ends clean (Lock releases a lock it took when it refuses a
	// replayed release). Any other failure of Lock may have left the lock
	// written: ReleaseLock releases it if this release holds it.
	catches(validate,
		catch{[]string{failure.NameBadRelease}, failureClean},
		catch{all, failureClean})
	catches(lock,
		catch{[]string{failure.NameLockExists, failure.NameBadRelease}, failureClean},
		catch{all, releaseLock})
	// The lock is held, nothing is created yet.
	catches(validateResources,
		catch{[]string{failure.NameBadRelease}, releaseLock},
		catch{all, releaseLock})
	catches(publish,
		catch{[]string{failure.NameBadRelease, failure.NameDeploy}, releaseLock},
		catch{all, releaseLock})
	// Something may have been created.
	catches(deploy,
		catch{[]string{failure.NameDeploy, failure.NameHalt}, cleanUpFailure},
		catch{all, cleanUpFailure})
	catches(checkHealthy,
		catch{[]string{failure.NameHalt, failure.NameTimeout, failure.NameDeploy}, cleanUpFailure},
		catch{all, cleanUpFailure})
	// CleanUpSuccess re-checks health before deleting anything: a halt or an
	// unhealthy release found then is a failed release, cleaned up as one.
	// Once it has started deleting, a failure leaves AWS dirty.
	catches(cleanUpSuccess,
		catch{[]string{failure.NameHalt, failure.NameDeploy}, cleanUpFailure},
		catch{[]string{failure.NameCleanUp}, failureDirty},
		catch{all, failureDirty})
	catches(cleanUpFailure,
		catch{[]string{failure.NameCleanUp}, failureDirty},
		catch{all, failureDirty})
	catches(releaseLock,
		catch{[]string{failure.NameLock}, failureDirty},
		catch{all, failureDirty})

	return validate
}
