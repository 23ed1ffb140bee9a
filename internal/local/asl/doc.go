// Package asl owns ferry's Amazon States Language interpreter: parsing a
// state machine definition (the subset ferry's generated definition uses,
// validated strictly), running executions of it against an Invoker, and
// recording each execution's history in the shape of Step Functions'
// GetExecutionHistory so the local region can serve it over the Step
// Functions API.
//
// Supported: Task, Pass, Choice, Wait, Succeed, Fail and inline Map states
// (ItemsPath, ItemSelector with $$.Map.Item, ItemProcessor, MaxConcurrency;
// the iterations run concurrently and the first to fail aborts the rest);
// InputPath, Parameters (payload templates with ".$" keys and "$$." context
// paths), ResultSelector, ResultPath and OutputPath; Retry and Catch with
// the States.* error names; Task TimeoutSeconds; the callback pattern
// (".waitForTaskToken": $$.Task.Token, then Execution.SendTaskSuccess or
// SendTaskFailure, or the task's timeout); the machine's TimeoutSeconds; the
// context object ($$.Execution, $$.State, $$.StateMachine, $$.Task,
// $$.Map). A Task's Resource other than a Lambda function is the Invoker's
// to run: the local region runs nested executions
// ("states:startExecution.sync:2") there. Parallel, distributed Map,
// intrinsic functions, JSONata and variables are refused at Parse.
//
// Time is injected: an execution reads the time from a clock.Clock and
// passes time (Wait states, retry intervals) through a Waiter, so tests run
// on a clock.Virtual without sleeping and the local region runs on
// clock.Scaled time. A wait for something outside the state (a task
// token's callback, a Map's iterations, a nested execution) goes through
// the Waiter's Await when it is an Awaiter, so that the region's
// discrete-event time passes only when every participant waits.
package asl
