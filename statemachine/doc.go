// Package statemachine owns the deploy state machine as a CDK construct: the
// states, the order they run in, what each catches and retries, and where
// every failure path ends.
//
// The machine (the arrows are Next, the brackets are Catch targets):
//
//	Validate -> Lock -> ValidateResources -> Publish -> Deploy -> Healthy?
//	Healthy? -> CleanUpSuccess -> Success        (health.healthy is true)
//	Healthy? -> WaitForHealthy -> CheckHealthy -> Healthy?
//	Healthy? -> BadHealthReport -> CleanUpFailure (no usable health report)
//
//	Validate                       [BadReleaseError, States.ALL] -> FailureClean
//	Lock                           [LockExistsError, LockError, BadReleaseError, States.ALL] -> FailureClean
//	ValidateResources              [BadReleaseError, States.ALL] -> ReleaseLock
//	Publish                        [BadReleaseError, DeployError, States.ALL] -> ReleaseLock
//	Deploy                         [DeployError, HaltError, States.ALL] -> CleanUpFailure
//	CheckHealthy                   [HaltError, TimeoutError, DeployError, States.ALL] -> CleanUpFailure
//	CleanUpSuccess                 [HaltError, DeployError] -> CleanUpFailure; [CleanUpError, States.ALL] -> FailureDirty
//	CleanUpFailure -> ReleaseLock -> FailureClean; [CleanUpError, States.ALL] -> FailureDirty
//	ReleaseLock                    [LockError, States.ALL] -> FailureDirty
//
// Every Catch stores the error at $.error. Every task retries RetriedErrors
// (RetryableError, the Lambda service's transient errors and the function's
// own timeout, Sandbox.Timedout) with backoff.
// Lock's handler releases a lock it took when it fails itself, so a Lock
// failure ends clean without ReleaseLock (which could otherwise release the
// lock of an earlier execution of the same release).
//
// Deploy returns the state with health set to {healthy: false, wait_seconds:
// N}, so the first wait comes from Deploy and every later one from
// CheckHealthy. A state without a usable health report (a handler bug) is
// not left to a States.Runtime failure of the Choice or Wait state: it goes
// through BadHealthReport, which records an InternalError at $.error, to
// CleanUpFailure. The machine sets no total timeout: the release timeout is
// enforced by CheckHealthy from $$.Execution.StartTime, and a machine timeout
// would end an execution outside Success, FailureClean and FailureDirty.
//
// The Amazon States Language the construct synthesizes is committed as
// statemachine/definition/definition.asl.json (RenderDefinition, make synth);
// the package definition serves it to binaries that must not link the CDK.
package statemachine
