// Package statemachine owns the deploy state machine as a CDK construct:
// it builds the states package shape declares, each task invoking the
// deployer function, into a Step Functions state machine.
//
// The machine, as package shape declares it (the arrows are Next, the
// brackets the errors each Catch takes; go test ./statemachine/shape
// -update rewrites this block):
//
//	Query? -> Validate -> Lock -> ValidateResources -> ResourcesValid?
//	Query?, the first rule that holds:
//	    $.plan is present           -> Plan -> Answered
//	    $.drift is present          -> Drift -> Answered
//	    $.reconcile_pass is present -> Reconcile -> Reconciled?
//	    $.approval_query is present -> VerifyApproval -> Answered
//	    $.promotion is present      -> Promote -> Gate -> Gated?
//	    otherwise                   -> Validate
//	ResourcesValid?, the first rule that holds:
//	    $.resources.done is not present          -> BadResourcesReport -> ReleaseLock -> FailureClean
//	    $.resources.done is not a boolean        -> BadResourcesReport
//	    $.resources.done is true                 -> Publish -> Deploy -> Deployed?
//	    $.resources.wait_seconds is not present  -> BadResourcesReport
//	    $.resources.wait_seconds is not a number -> BadResourcesReport
//	    $.resources.wait_seconds is negative     -> BadResourcesReport
//	    otherwise                                -> WaitForResources -> ValidateResources
//	Reconciled?, the first rule that holds:
//	    $.reconcile_pass.done is not present          -> BadReconcileReport -> FailureClean
//	    $.reconcile_pass.done is not a boolean        -> BadReconcileReport
//	    $.reconcile_pass.done is true                 -> Answered
//	    $.reconcile_pass.wait_seconds is not present  -> BadReconcileReport
//	    $.reconcile_pass.wait_seconds is not a number -> BadReconcileReport
//	    $.reconcile_pass.wait_seconds is negative     -> BadReconcileReport
//	    otherwise                                     -> WaitForReconcile -> Reconcile
//	Gated?, the first rule that holds:
//	    $.gate.done is not present          -> BadGateReport -> FailureClean
//	    $.gate.done is not a boolean        -> BadGateReport
//	    $.gate.done is true                 -> Wave -> EndStage -> Promoted? -> Gate
//	    $.gate.approval is not present      -> BadGateReport
//	    $.gate.approval is not a boolean    -> BadGateReport
//	    $.gate.approval is true             -> AwaitApproval -> Gate
//	    $.gate.wait_seconds is not present  -> BadGateReport
//	    $.gate.wait_seconds is not a number -> BadGateReport
//	    $.gate.wait_seconds is negative     -> BadGateReport
//	    otherwise                           -> WaitForGate -> Gate
//	Deployed?, the first rule that holds:
//	    $.deploy.done is not present          -> BadDeployReport -> CleanUpFailure -> CleanedUp?
//	    $.deploy.done is not a boolean        -> BadDeployReport
//	    $.deploy.done is true                 -> Healthy?
//	    $.deploy.wait_seconds is not present  -> BadDeployReport
//	    $.deploy.wait_seconds is not a number -> BadDeployReport
//	    $.deploy.wait_seconds is negative     -> BadDeployReport
//	    otherwise                             -> WaitForDeploy -> Deploy
//	CleanedUp?, the first rule that holds:
//	    $.retire.done is not present          -> BadCleanUpReport -> FailureDirty
//	    $.retire.done is not a boolean        -> BadCleanUpReport
//	    $.retire.done is true                 -> ReleaseLock
//	    $.retire.wait_seconds is not present  -> BadCleanUpReport
//	    $.retire.wait_seconds is not a number -> BadCleanUpReport
//	    $.retire.wait_seconds is negative     -> BadCleanUpReport
//	    otherwise                             -> WaitForCleanUp -> CleanUpFailure
//	Healthy?, the first rule that holds:
//	    $.health.healthy is not present       -> BadHealthReport -> CleanUpFailure
//	    $.health.healthy is not a boolean     -> BadHealthReport
//	    $.health.healthy is true              -> Bake -> Baked?
//	    $.health.next_step is not present     -> BadHealthReport
//	    $.health.next_step is not a boolean   -> BadHealthReport
//	    $.health.next_step is true            -> NextStep -> WaitForHealthy -> CheckHealthy -> Healthy?
//	    $.health.wait_seconds is not present  -> BadHealthReport
//	    $.health.wait_seconds is not a number -> BadHealthReport
//	    $.health.wait_seconds is negative     -> BadHealthReport
//	    otherwise                             -> WaitForHealthy
//	Baked?, the first rule that holds:
//	    $.bake.done is not present          -> BadBakeReport -> CleanUpFailure
//	    $.bake.done is not a boolean        -> BadBakeReport
//	    $.bake.done is true                 -> CleanUpSuccess -> Retired?
//	    $.bake.wait_seconds is not present  -> BadBakeReport
//	    $.bake.wait_seconds is not a number -> BadBakeReport
//	    $.bake.wait_seconds is negative     -> BadBakeReport
//	    otherwise                           -> WaitForBake -> Bake
//	Retired?, the first rule that holds:
//	    $.retire.done is not present          -> BadRetireReport -> FailureDirty
//	    $.retire.done is not a boolean        -> BadRetireReport
//	    $.retire.done is true                 -> Success
//	    $.retire.wait_seconds is not present  -> BadRetireReport
//	    $.retire.wait_seconds is not a number -> BadRetireReport
//	    $.retire.wait_seconds is negative     -> BadRetireReport
//	    otherwise                             -> WaitForRetire -> CleanUpSuccess
//
//	Validate          [BadReleaseError, States.ALL] -> FailureClean
//	Lock              [LockExistsError, BadReleaseError] -> FailureClean; [States.ALL] -> ReleaseLock
//	ValidateResources [BadReleaseError, States.ALL] -> ReleaseLock
//	Publish           [BadReleaseError, DeployError, States.ALL] -> ReleaseLock
//	Deploy            [DeployError, HaltError, States.ALL] -> CleanUpFailure
//	CheckHealthy      [HaltError, TimeoutError, DeployError, States.ALL] -> CleanUpFailure
//	NextStep          [HaltError, DeployError, States.ALL] -> CleanUpFailure
//	Bake              [HaltError, DeployError, States.ALL] -> CleanUpFailure
//	CleanUpSuccess    [HaltError, DeployError] -> CleanUpFailure; [CleanUpError, States.ALL] -> FailureDirty
//	CleanUpFailure    [CleanUpError, States.ALL] -> FailureDirty
//	ReleaseLock       [LockError, States.ALL] -> FailureDirty
//	Plan              [BadReleaseError, States.ALL] -> FailureClean
//	Drift             [BadReleaseError, DeployError, States.ALL] -> FailureClean
//	Reconcile         [DeployError, States.ALL] -> FailureClean
//	VerifyApproval    [BadReleaseError, States.ALL] -> FailureClean
//	Promote           [BadReleaseError, States.ALL] -> FailureClean
//	Gate              [HaltError, States.ALL] -> FailureClean
//	EndStage          [CleanUpError] -> FailureDirty; [States.ALL] -> FailureClean
//
// Every Catch stores the error at $.error. Every task retries the errors
// of shape's Retry (RetryableError, the Lambda service's transient errors
// and the function's own timeout, Sandbox.Timedout) with backoff.
// A bad release or a lock another release holds ends Lock clean, without
// ReleaseLock; any other failure of Lock may have left the lock written,
// so it goes through ReleaseLock, which releases the lock only if this
// release holds it.
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
