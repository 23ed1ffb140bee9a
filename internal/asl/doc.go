// Package asl owns ferry's Amazon States Language interpreter: parsing a
// state machine definition (the subset ferry's generated definition uses,
// validated strictly), running executions of it against an Invoker, and
// recording each execution's history in the shape of Step Functions'
// GetExecutionHistory so the local region can serve it over the Step
// Functions API.
//
// Supported: Task, Pass, Choice, Wait, Succeed and Fail states; InputPath,
// Parameters (payload templates with ".$" keys and "$$." context paths),
// ResultSelector, ResultPath and OutputPath; Retry and Catch with the
// States.* error names; Task TimeoutSeconds; the machine's TimeoutSeconds;
// the context object ($$.Execution, $$.State, $$.StateMachine). Parallel,
// Map, intrinsic functions, JSONata and variables are refused at Parse.
//
// Time is injected: an execution reads the time from a clock.Clock and
// passes time (Wait states, retry intervals) through a Waiter, so tests run
// on a clock.Virtual without sleeping and the local region runs on
// clock.Scaled time.
package asl
