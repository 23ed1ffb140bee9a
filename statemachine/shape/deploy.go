package shape

import (
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/tuning"
)

// Names of the states that are not tasks or ends (the tasks and the ends
// are named by package execution).
const (
	StateQuery              = "Query?"
	StateResourcesValid     = "ResourcesValid?"
	StateWaitForResources   = "WaitForResources"
	StateBadResources       = "BadResourcesReport"
	StateDeployed           = "Deployed?"
	StateWaitForDeploy      = "WaitForDeploy"
	StateBadDeployReport    = "BadDeployReport"
	StateHealthy            = "Healthy?"
	StateWaitForHealthy     = "WaitForHealthy"
	StateBadHealthReport    = "BadHealthReport"
	StateBaked              = "Baked?"
	StateWaitForBake        = "WaitForBake"
	StateBadBakeReport      = "BadBakeReport"
	StateRetired            = "Retired?"
	StateWaitForRetire      = "WaitForRetire"
	StateBadRetireReport    = "BadRetireReport"
	StateCleanedUp          = "CleanedUp?"
	StateWaitForCleanUp     = "WaitForCleanUp"
	StateBadCleanUpReport   = "BadCleanUpReport"
	StateReconciled         = "Reconciled?"
	StateWaitForReconcile   = "WaitForReconcile"
	StateBadReconcileReport = "BadReconcileReport"
)

// Deploy returns the shape of ferry's deploy state machine. Each call
// returns a new value, which the caller may change.
func Deploy() Machine {
	return Machine{
		Comment: "ferry: blue/green deploy of a release's Auto Scaling groups",
		Entry: &Choice{
			Name:    StateQuery,
			Comment: "A query is answered by its task: a plan ({\"plan\": release}) by Plan, a drift query ({\"drift\": {...}}) by Drift, a reconcile pass ({\"reconcile_pass\": {}}) by Reconcile, an approval query ({\"approval_query\": {...}}) by VerifyApproval; a promotion ({\"promotion\": request}) starts at Promote; any other input is a release to deploy.",
			Rules:   []Rule{{PathPlan, Present, execution.TaskPlan}, {PathDrift, Present, execution.TaskDrift}, {PathReconcile, Present, execution.TaskReconcile}, {PathApprovalQuery, Present, execution.TaskVerifyApproval}, promotionEntry()},
			Default: execution.TaskValidate,
		},
		Retry:     retry(),
		Tasks:     append(tasks(), promotionTasks()...),
		Loops:     []Loop{resourcesLoop(), deployLoop(), healthLoop(), bakeLoop(), retireLoop(), cleanUpLoop(), reconcileLoop(), gateLoop()},
		Choices:   promotionChoices(),
		Callbacks: promotionCallbacks(),
		Waves:     promotionWaves(),
		Ends: []End{
			{Name: execution.EndSuccess,
				Comment: "The release is deployed and healthy; the previous groups are deleted. A promotion: every stage's deploys succeeded."},
			{Name: execution.EndFailureClean, Fail: true,
				Comment: "The release failed; cleaning up succeeded, so AWS is as it was before the release."},
			{Name: execution.EndFailureDirty, Fail: true,
				Comment: "The release failed and cleaning up failed too: resources or the lock are left behind. Alert and file a bug."},
			{Name: execution.EndAnswered,
				Comment: "A query is answered: the output is the answer (a plan, a drift report); nothing in AWS was changed."},
		},
	}
}

// resourcesLoop is ValidateResources': when AWS throttled it, it reports
// how long to wait and runs again after the wait; once every resource is
// checked, Publish. A state without a usable report releases the lock:
// nothing is created yet.
func resourcesLoop() Loop {
	return throttledLoop(execution.TaskValidateResources, StateResourcesValid, StateWaitForResources, StateBadResources,
		PathResources, PathResourcesValid, PathResourcesWaitSeconds, execution.TaskPublish, execution.TaskReleaseLock,
		"Publish once every resource is checked, else wait and let ValidateResources check again.")
}

// reconcileLoop is a reconcile pass's: Reconcile checks a page of
// project-configs and reports whether the pass is done; until then the
// next page after the wait it asks for. A state without a usable report
// ends clean: a pass changes nothing but by starting heals, which are
// deploys of their own.
func reconcileLoop() Loop {
	return throttledLoop(execution.TaskReconcile, StateReconciled, StateWaitForReconcile, StateBadReconcileReport,
		PathReconcile, PathReconciled, PathReconcileWaitSeconds, execution.EndAnswered, execution.EndFailureClean,
		"Answer once every project-config is checked, else check the next page.")
}

// deployLoop is Deploy's: when AWS throttled it, or when it paced its
// Auto Scaling calls (more groups than a round's budget:
// tuning.AutoScalingCallsPerRound), Deploy reports how long to wait, and
// runs again after the wait to make what is left (it skips what it
// made); once everything is made, the health checks. A state
// without a usable report fails through clean up.
func deployLoop() Loop {
	return throttledLoop(execution.TaskDeploy, StateDeployed, StateWaitForDeploy, StateBadDeployReport,
		PathDeploy, PathDeployed, PathDeployWaitSeconds, StateHealthy, execution.TaskCleanUpFailure,
		"Check health once the release's groups are made, else wait and let Deploy make the rest.")
}

// throttledLoop is the loop of a task that runs once unless AWS
// throttles it: its report at path (execution.Progress) done goes to
// next, else a wait and the task again; a state without a usable report
// records an error and goes to bad.
func throttledLoop(task, choice, wait, badName, path, donePath, waitPath, next, bad, comment string) Loop {
	return Loop{
		Choice: Choice{
			Name:    choice,
			Comment: comment,
			Rules:   reportRules(donePath, waitPath, next, badName),
			Default: wait,
		},
		Wait: Wait{
			Name:        wait,
			Comment:     "Wait as long as " + task + " asks: AWS throttled it, or it paces its calls.",
			SecondsPath: waitPath,
			Next:        task,
		},
		Bad: Pass{
			Name:    badName,
			Comment: "The state has no usable report of " + task + " (a handler bug): fail through " + bad + ".",
			Error:   failure.NameInternal,
			Cause: "the state has no usable report at " + path +
				" (done must be a boolean, wait_seconds a number >= 0)",
			ResultPath: PathError,
			Next:       bad,
		},
	}
}

// healthLoop is the health checks: after Deploy, NextStep and every
// CheckHealthy, the bake (then the swap) when healthy, a canary's next
// step when its step is stable, else another wait.
func healthLoop() Loop {
	rules := reportRules(PathHealthy, PathWaitSeconds, execution.TaskBake, StateBadHealthReport)
	next := []Rule{
		{PathNextStep, Absent, StateBadHealthReport},
		{PathNextStep, NotBoolean, StateBadHealthReport},
		{PathNextStep, True, execution.TaskNextStep},
	}
	rules = append(rules[:3:3], append(next, rules[3:]...)...)
	return Loop{
		Choice: Choice{
			Name:    StateHealthy,
			Comment: "Bake when healthy, take a canary's next step when its step is stable, else wait and check again.",
			Rules:   rules,
			Default: StateWaitForHealthy,
		},
		Wait: Wait{
			Name:        StateWaitForHealthy,
			Comment:     "Wait as long as the last health report asks.",
			SecondsPath: PathWaitSeconds,
			Next:        execution.TaskCheckHealthy,
		},
		// A state without a usable health report (a handler bug) is not
		// left to a States.Runtime failure of the Choice or the Wait: it
		// fails through clean up.
		Bad: Pass{
			Name:    StateBadHealthReport,
			Comment: "The state has no usable health report (a handler bug): fail through clean up.",
			Error:   failure.NameInternal,
			Cause: "the state has no usable health report at " + PathHealth +
				" (healthy and next_step must be booleans, wait_seconds a number >= 0)",
			ResultPath: PathError,
			Next:       execution.TaskCleanUpFailure,
		},
	}
}

// bakeLoop is the bake: the new groups serve alone while the previous
// ones stand by, out of their load balancers; Bake checks health, alarms
// and halts and reports, until the release's bake_seconds have passed
// (at once without a bake). A state without a usable report fails
// through clean up, which rolls back.
func bakeLoop() Loop {
	return Loop{
		Choice: Choice{
			Name:    StateBaked,
			Comment: "Retire the previous release once the bake is over, else wait and check again.",
			Rules:   reportRules(PathBaked, PathBakeWaitSeconds, execution.TaskCleanUpSuccess, StateBadBakeReport),
			Default: StateWaitForBake,
		},
		Wait: Wait{
			Name:        StateWaitForBake,
			Comment:     "Wait as long as the last bake report asks.",
			SecondsPath: PathBakeWaitSeconds,
			Next:        execution.TaskBake,
		},
		Bad: Pass{
			Name:    StateBadBakeReport,
			Comment: "The state has no usable report of Bake (a handler bug): fail through clean up, which rolls back.",
			Error:   failure.NameInternal,
			Cause: "the state has no usable report at " + PathBake +
				" (done must be a boolean, wait_seconds a number >= 0)",
			ResultPath: PathError,
			Next:       execution.TaskCleanUpFailure,
		},
	}
}

// retireLoop is the retirement of the previous groups, past the point of
// no return: CleanUpSuccess takes one step of it (detach from the load
// balancers, wait for the draining, scale to zero so termination hooks
// run, wait until empty, delete) and reports; it runs again after each
// wait until every previous group is gone. A state without a usable
// report fails dirty: the previous groups may stand.
func retireLoop() Loop {
	return drainLoop(StateRetired, StateWaitForRetire, StateBadRetireReport, execution.TaskCleanUpSuccess, execution.EndSuccess,
		"Succeed once the previous groups are retired, else wait and take the next step.",
		"past the point of no return, fail dirty.", execution.EndFailureDirty)
}

// cleanUpLoop is the clean-up of a failed release's own groups, drained
// the same way before they are deleted (their instances may serve beside
// the previous release's): CleanUpFailure takes a step and reports, until
// they are gone; then ReleaseLock. A state without a usable report fails
// dirty: the release's groups may stand.
func cleanUpLoop() Loop {
	return drainLoop(StateCleanedUp, StateWaitForCleanUp, StateBadCleanUpReport, execution.TaskCleanUpFailure, execution.TaskReleaseLock,
		"Release the lock once the release's groups are gone, else wait and take the next step.",
		"its groups may stand, fail dirty.", execution.EndFailureDirty)
}

// drainLoop is a loop over task's report at PathRetire: done goes to
// next, else a wait and task again; a state without a usable report
// records an error and goes to bad.
func drainLoop(choice, wait, badName, task, next, comment, badWhy, bad string) Loop {
	return Loop{
		Choice: Choice{
			Name:    choice,
			Comment: comment,
			Rules:   reportRules(PathRetired, PathRetireWaitSeconds, next, badName),
			Default: wait,
		},
		Wait: Wait{
			Name:        wait,
			Comment:     "Wait as long as the last report asks (draining, termination hooks).",
			SecondsPath: PathRetireWaitSeconds,
			Next:        task,
		},
		Bad: Pass{
			Name:    badName,
			Comment: "The state has no usable report of " + task + " (a handler bug): " + badWhy,
			Error:   failure.NameInternal,
			Cause: "the state has no usable report at " + PathRetire +
				" (done must be a boolean, wait_seconds a number >= 0)",
			ResultPath: PathError,
			Next:       bad,
		},
	}
}

// reportRules are a loop Choice's rules over a task's report: done (a
// boolean at donePath) goes to next; a report without a boolean done, or
// without a whole wait_seconds >= 0 at waitPath, goes to bad. Otherwise
// (the Choice's Default) the loop waits.
func reportRules(donePath, waitPath, next, bad string) []Rule {
	return []Rule{
		{donePath, Absent, bad},
		{donePath, NotBoolean, bad},
		{donePath, True, next},
		{waitPath, Absent, bad},
		{waitPath, NotNumeric, bad},
		{waitPath, Negative, bad},
	}
}

// retry is every task's retry policy. It retries ferry's retryable error
// and the Lambda service's transient errors, including Lambda.Unknown (an
// invocation that died, e.g. out of memory or time, possibly after its
// work was done: every handler is idempotent, so running it again is safe)
// and Sandbox.Timedout, the deployer function running out of its own
// timeout. AWS's "Handle Lambda service exceptions" (Step Functions
// Developer Guide) reports function timeouts as Lambda.Unknown; Lambda now
// answers a timed-out invocation with the error payload {"errorType":
// "Sandbox.Timedout", "errorMessage": "RequestId: ... Error: Task timed out
// after N seconds"} (Lambda Developer Guide, "Troubleshoot invocation issues
// in Lambda"), and Step Functions names a task's error after the payload's
// errorType, so the same timeout reaches the Retry as Sandbox.Timedout.
func retry() Retry {
	return Retry{
		Errors: []string{
			failure.NameRetryable,
			"Lambda.Unknown",
			"Sandbox.Timedout",
			"Lambda.ServiceException",
			"Lambda.AWSLambdaException",
			"Lambda.SdkClientException",
			"Lambda.TooManyRequestsException",
			"Lambda.ClientExecutionTimeoutException",
		},
		IntervalSeconds: tuning.TaskRetryIntervalSeconds,
		BackoffRate:     tuning.TaskRetryBackoffRate,
		MaxAttempts:     tuning.TaskRetryMaxAttempts,
		MaxDelaySeconds: tuning.TaskRetryMaxDelaySeconds,
	}
}

// tasks are the deploy machine's tasks, in the order the help page lists
// them. Every task catches the errors it names, then everything else.
func tasks() []Task {
	return append(append(deployTasks(), swapTasks()...), queryTasks()...)
}

// queryTasks answer the queries: a plan, which changes nothing; a drift
// query, which writes only its drift record; a reconcile pass, which
// writes drift and heal records and starts heals (deploys of their own).
// Every failure ends clean: nothing in AWS was changed.
func queryTasks() []Task {
	return []Task{
		{
			Name: execution.TaskPlan, Next: execution.EndAnswered,
			Comment:   "Say what a deploy of the release would do now (groups, capacity, retirements, removals, changes, every refusal), changing nothing.",
			Catch:     []Catch{catch(execution.EndFailureClean, failure.NameBadRelease)},
			Otherwise: Catch{Next: execution.EndFailureClean, Note: "a plan changes nothing"},
		},
		{
			Name: execution.TaskDrift, Next: execution.EndAnswered,
			Comment:   "Compare what runs in the project-config with its current record and record since when each difference is seen.",
			Catch:     []Catch{catch(execution.EndFailureClean, failure.NameBadRelease, failure.NameDeploy)},
			Otherwise: Catch{Next: execution.EndFailureClean, Note: "a drift query changes nothing in AWS"},
		},
		{
			Name: execution.TaskReconcile, Next: StateReconciled,
			Comment:   "Check a page of project-configs: record each one's drift, start a heal for those that opted in and whose fleet is gone or unhealthy.",
			Catch:     []Catch{catch(execution.EndFailureClean, failure.NameDeploy)},
			Otherwise: Catch{Next: execution.EndFailureClean, Note: "a pass changes nothing in AWS; heals are deploys of their own"},
		},
		{
			Name: execution.TaskVerifyApproval, Next: execution.EndAnswered,
			Comment:   "Verify a person's approval of a promotion's stage as it is given (who, by the identity proof) and record it verified, once; refuse it, writing nothing.",
			Catch:     []Catch{catch(execution.EndFailureClean, failure.NameBadRelease)},
			Otherwise: Catch{Next: execution.EndFailureClean, Note: "an approval query changes nothing in AWS"},
		},
	}
}

// deployTasks are the tasks up to the judging of the new groups: before
// anything is created, then while the previous groups serve untouched.
func deployTasks() []Task {
	clean := execution.EndFailureClean
	releaseLock, cleanUpFailure := execution.TaskReleaseLock, execution.TaskCleanUpFailure
	return []Task{
		// Nothing is touched before the lock is held.
		{
			Name: execution.TaskValidate, ResultPath: "$", Next: execution.TaskLock,
			Comment: "Check the release and its integrity; the result (a compact State) replaces the release.",
			Catch:   []Catch{catch(clean, failure.NameBadRelease)}, Otherwise: Catch{Next: clean},
		},
		// A bad release or a held lock ends clean (Lock releases a lock it
		// took when it refuses a replayed release). Any other failure of
		// Lock may have left the lock written: ReleaseLock releases it if
		// this release holds it.
		{
			Name: execution.TaskLock, Next: execution.TaskValidateResources,
			Comment: "Take the project-config lock and the release's run-once marker.",
			Catch: []Catch{{Errors: []string{failure.NameLockExists, failure.NameBadRelease}, Next: clean,
				Note: "another release holds the lock, or the release is replayed"}},
			Otherwise: Catch{Next: releaseLock, Note: "the lock may be written"},
		},
		// The lock is held, nothing is created yet.
		{
			Name: execution.TaskValidateResources, Next: StateResourcesValid,
			Comment: "Resolve and check every resource the release names in the target environment, or, throttled, ask for a wait.",
			Catch:   []Catch{catch(releaseLock, failure.NameBadRelease)}, Otherwise: Catch{Next: releaseLock},
		},
		{
			Name: execution.TaskPublish, Next: execution.TaskDeploy,
			Comment: "Copy the release's assets into the target's asset bucket and render user data.",
			Catch:   []Catch{catch(releaseLock, failure.NameBadRelease, failure.NameDeploy)}, Otherwise: Catch{Next: releaseLock},
		},
		// Something may have been created.
		{
			Name: execution.TaskDeploy, Next: StateDeployed,
			Comment: "Create a launch template and an Auto Scaling group per service; returns the first wait, or, throttled, the wait before it makes the rest.",
			Catch:   []Catch{catch(cleanUpFailure, failure.NameDeploy, failure.NameHalt)}, Otherwise: Catch{Next: cleanUpFailure},
		},
		{
			Name: execution.TaskCheckHealthy, ResultPath: PathHealth, Next: StateHealthy,
			Comment:   "Count healthy instances; halt on terminations, a fresh halt marker or the timeout.",
			Catch:     []Catch{catch(cleanUpFailure, failure.NameHalt, failure.NameTimeout, failure.NameDeploy)},
			Otherwise: Catch{Next: cleanUpFailure},
		},
		{
			Name: execution.TaskNextStep, ResultPath: PathHealth, Next: StateWaitForHealthy,
			Comment:   "Take each canary's next step: its new group to the step's capacity; the previous groups serve alongside.",
			Catch:     []Catch{catch(cleanUpFailure, failure.NameHalt, failure.NameDeploy)},
			Otherwise: Catch{Next: cleanUpFailure},
		},
	}
}

// swapTasks are the tasks from the bake on: the previous groups may stand
// by, then are retired; a failed release is cleaned up and the lock
// released.
func swapTasks() []Task {
	clean, dirty := execution.EndFailureClean, execution.EndFailureDirty
	cleanUpFailure := execution.TaskCleanUpFailure
	return []Task{
		// The previous groups may stand by, out of their load balancers:
		// every failure goes to CleanUpFailure, which puts them back.
		{
			Name: execution.TaskBake, Next: StateBaked,
			Comment: "Let the new groups serve alone for the bake, the previous ones standing by; halt, unhealthy or alarm rolls back.",
			Catch: []Catch{{Errors: []string{failure.NameHalt, failure.NameDeploy}, Next: cleanUpFailure,
				Note: "rolls back: the previous groups serve again before the new ones leave"}},
			Otherwise: Catch{Next: cleanUpFailure},
		},
		// CleanUpSuccess re-checks health before retiring anything: a halt
		// or an unhealthy release found then is a failed release, cleaned up
		// as one. Once it has started retiring, a failure leaves AWS dirty.
		{
			Name: execution.TaskCleanUpSuccess, Next: StateRetired,
			Comment: "Re-check health; retire the previous groups a step at a time (detach, drain, scale to zero, delete); then record the outcome and release the lock.",
			Catch: []Catch{
				{Errors: []string{failure.NameHalt, failure.NameDeploy}, Next: cleanUpFailure,
					Note: "the gate fails, nothing is deleted"},
				{Errors: []string{failure.NameCleanUp}, Next: dirty,
					Note: "past the point of no return, with an outcome naming what is left"},
			},
			Otherwise: Catch{Next: dirty, Note: "it may have deleted something"},
		},
		{
			Name: execution.TaskCleanUpFailure, Next: StateCleanedUp,
			Comment:   "Roll back after a bake (the previous groups back in their load balancers, healthy); then retire what this release created a step at a time (detach, drain, scale to zero, delete); record the outcome of a failure.",
			Catch:     []Catch{{Errors: []string{failure.NameCleanUp}, Next: dirty, Note: "leftovers named, lock kept"}},
			Otherwise: Catch{Next: dirty},
		},
		{
			Name: execution.TaskReleaseLock, Next: clean,
			Comment: "Release the lock if this release holds it.",
			Catch:   []Catch{catch(dirty, failure.NameLock)}, Otherwise: Catch{Next: dirty},
		},
	}
}

// catch is a Catch of errs to next, without a Note.
func catch(next string, errs ...string) Catch { return Catch{Errors: errs, Next: next} }
