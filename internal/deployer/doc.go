// Package deployer owns the deployer's handlers: one per task state of the
// deploy state machine (Validate, Lock, ValidateResources, Publish, Deploy,
// CheckHealthy, NextStep, Bake, CleanUpSuccess, CleanUpFailure,
// ReleaseLock, the queries' Plan, Drift, Reconcile and VerifyApproval, and a promotion's
// Promote, Gate, RequestApproval, StartTarget and EndStage) and the
// dispatch that runs the one a task invocation names (Deployer.Invoke).
// Each task has its file, named after it (validate.go, lock.go,
// validate_resources.go, publish.go, deploy.go with making.go (a round's
// templates, groups and suspends, paced), check_healthy.go,
// canary.go for NextStep and a canary's stages, bake.go,
// cleanup_success.go, cleanup_failure.go with rollback.go,
// release_lock.go, plan.go, drift.go with inflight.go (what a deploy under
// way does with the groups it acts on), reconcile.go with the heals and
// their acceptance at Validate, and a promotion's: promote.go (Promote),
// gate.go (Gate: the pipeline's gates, pipeline.Pipeline.Holds, over
// what it reads), request_approval.go (RequestApproval, and the reading
// and verifying of an approval), verify_approval.go (VerifyApproval: an
// approval verified when it is given), start_target.go (StartTarget),
// end_stage.go (EndStage), with promotion.go for what they share and the
// acceptance of a promoted release at Validate); what several share is in verify.go
// (what a task trusts), resources.go (reaching the target),
// health_report.go (the health of the new groups), records.go (outcomes),
// alarms.go (a release's alarm check; not a pipeline's gate),
// analysis.go (its canary analysis: each service's new group against its
// previous groups, judged by package analysis), targets.go (the
// environments of a config) and events.go (the deploy events each task
// puts, best effort, on its target's default EventBridge bus when the
// fact it finds becomes true: package events).
//
// A release that deploys nothing (destroy) goes the same way: its swap
// retires every group of the config and removes the current record.
//
// A config runs in one target environment (account, region, qualifier),
// the one its current record names. A release that targets another is a
// move: refused at Validate, ValidateResources and Plan unless its
// move_from names the current one exactly. The targets record keeps
// every environment the config has deployed to, each added by Publish or
// Deploy before they make anything there; every swap (a destroy's too)
// retires the groups of the config in each other environment as it
// retires the previous groups in its own (gracefully, with that
// environment's clients, named per environment in the deleting record;
// the load balancers there are left without instances, as a destroy
// leaves them: the move asked for it; the swap's re-check puts them back
// as they served, there, if the new groups fall below target while they
// drain), then leaves its own environment alone in the record. Plan, Drift and the removal check
// look in each, so a move that crashes midway forgets none.
//
// Handlers orchestrate: the deployer bucket's objects are package lock's,
// halt's and ledger's; what a release names in its target is resolved by
// package resources; groups, launch templates and alarms are made,
// settled, retired (drained, a step per invocation: CleanUpSuccess and
// CleanUpFailure report where a retirement stands at $.retire and the
// state machine runs them again after a wait), stood by during a bake and
// put back by a rollback (Bake reports at $.bake; CleanUpFailure reports a
// rollback's progress at $.retire) and removed by package fleet; load
// balancers are read by
// package balancers. The handlers call AWS themselves only to confirm an
// execution (Step Functions), to publish assets (S3) and to put deploy
// events (EventBridge, through package events; a failed put never fails
// or holds up a task).
//
// Contracts every handler keeps:
//
//   - Never sleeping: what takes time (health, draining, termination
//     hooks) is waited for by the state machine between invocations.
//   - Idempotent: run twice with the same input (a Lambda or Step Functions
//     retry) it has the same effect as once. Deploy finds what an earlier
//     attempt made by its deterministic name and tags; clean-ups treat
//     "already gone" as done.
//   - Typed errors: every error returned is a failure.Named error whose name
//     is the one the state machine catches; transient AWS failures are
//     *failure.RetryableError (cloud.Classify); a panic becomes a
//     *failure.InternalError.
//   - Small state: the State passed between states names the release (id
//     and canonical hash); handlers read the release and assets from the
//     deployer bucket.
//   - Release integrity: Validate compares the execution input with the
//     release.json in the bucket (canonical hash) and refuses it when the
//     two differ, when created_at is outside the allowed window (at most
//     10 minutes old, at most 2 minutes ahead), or when the release id
//     already ran. So a person who can start executions but cannot write
//     the project's S3 prefix cannot deploy an old or altered release, and
//     neither can a person who has only the S3 permission. It then records
//     the release's hash under _state/, once; heals, rollbacks and every
//     other reader of a release's content check release.json against it
//     (ledger.VerifiedRelease), and a heal runs only as the deployer's
//     heal record names it, with the current record's content
//     (verifyHeal).
//   - Trust nothing handed over: every task but CheckHealthy confirms that
//     its execution is a RUNNING, never redriven execution of the
//     deployer's state machine whose input is the release the State names
//     (confirmExecution); the target, services, timeout and user data come
//     from the verified release, never from the State or the bucket's
//     records; the first execution that validates a release consumes it.
//   - No sleeping: time comes from the injected clock; waiting is the state
//     machine's (CheckHealthy says how long).
//   - No call waits for another it does not need: a task's reads that
//     need nothing of each other's go side by side (package fanout), the
//     tasks before the launches first: Validate's reads beside its
//     consume, the release and its run-once marker (read once a task)
//     beside ValidateResources' turn, Publish's other reads and Deploy's
//     halt check (loadBeside), a resolution in its longest chain's time
//     (package resources), every user data written at once.
//   - Throttling waits: a call AWS still throttles after the SDK's retries
//     (cloud.Throttled) is no failure of the release in a task the state
//     machine runs again. ValidateResources and Deploy report a wait at
//     $.resources and $.deploy (progress), CheckHealthy learns nothing and
//     backs off (throttled), the swap's gate and the steps of a retirement
//     or clean-up are taken again (throttledStep); each is bounded by
//     limits.MaxThrottledSteps or the release's timeout.
//   - Deploy paces its Auto Scaling calls to the account's one bucket: a
//     round creates groups, then suspends their processes, within
//     tuning.AutoScalingCallsPerRound (a first round alone, the whole
//     bucket: limits.AutoScalingBurst), and reports a wait of the bucket's
//     refill for the rest (making.go: pace, Progress.Paced), at most
//     limits.MaxPacedDeploySteps such rounds. Beside K other deploys
//     on their way to its account and region (their start markers,
//     listed beside its halt check in the first round, while its
//     resources resolve in the others), it takes a (K+1)-th share
//     (making.go: share): its first round, resolving nothing, waits for
//     its place within two periods of the share, each round makes a (K+1)-th of the budget (at least a
//     second's refill of EC2's CreateLaunchTemplate bucket,
//     limits.EC2MutateRefill, shared too), each launch template with its
//     group, and waits, jittered, for a (K+1)-th of the refill.
//   - Deploys starting together take turns: ValidateResources' first
//     round, before any call to AWS, takes the deploy's turn among the
//     deploys to its target account and region that started with it
//     (lock.Starts, one every tuning.StartEvery) and reports the wait
//     for it at $.resources; a lone deploy waits nothing.
//   - Retirements give way: a deploy's start marker says it is on its
//     way to healthy until CheckHealthy's last check (or its failure)
//     clears it (arrive); while markers of its account and region are
//     left, a retirement past its point of no return, or the clean-up of
//     a failed release (beside), spaces its steps
//     (tuning.RetireYieldPer each, at most tuning.RetireYieldMax, for
//     tuning.RetireYieldFor) and makes a (K+1)-th of a round's Auto
//     Scaling calls a step (retireCalls, at least half the burst;
//     fleet.Retirer.Calls), so it does not spend the Auto Scaling bucket
//     the deploys still need; it keeps the share of the most K it
//     counted (crowdOf, Retire.Underway) once they arrived, for their
//     retirements step beside it, its steps spaced by the time that
//     share of the refill takes to bring back a step's calls (for
//     tuning.RetireYieldFor too).
//   - Rounds and steps take turns (turns.go): every step of
//     CleanUpSuccess, and every later round of Deploy beside deploys on
//     their way (once its work is known, for the calls it makes:
//     roundCalls), writes its turn at its account and region's Auto
//     Scaling calls into a calendar in the deployer bucket (lock.Turns,
//     turnAt) before it calls: no whole second overlapped by turns of
//     more than tuning.TurnCalls, and tuning.TurnRefill more for each
//     second in a row after it (up to tuning.TurnSpan), so that turns
//     second after second spend the bucket no faster than it refills.
//     Alone, with room in the calendar, it takes the calls it needs and
//     goes. Beside another's turn, or with the calendar's room spent by
//     the turns before, it makes no call, reports a wait to its own
//     turn (Progress.Turn, Retire.Turn: the next round or step holds it
//     and takes no other), and makes tuning.TurnShare calls at most in
//     it (within: a round's creates, suspends and scaling policies,
//     putPoliciesWithin; a step's retirer and settles), the rest at the
//     next turns. A lone deploy's rounds take no turn, so it never waits
//     behind the last turn of the release before it; a first round
//     beside deploys on their way waits its place in their share
//     instead. A turn that cannot be taken bounds the calls to a share
//     and waits for nothing. A failed release's clean-up takes no turn:
//     its rollback restores the serving fleet and waits for nobody.
//   - Health checks share the Describe bucket: a deploy Deploy saw
//     beside K others counts them again at each check
//     (Health.Underway, underwayOr) and reads at most a (K+1)-th of
//     tuning.BalancerReadBurst of load balancers a check (readBudget, at
//     least tuning.BalancerReadsShared), the next check waiting for its
//     (K+1)-th of the refill to bring them back (readsShareWait, at most
//     tuning.BootCheckInterval); one that went alone never lists.
//   - Batched AWS calls: describes are batched per resource kind, and the
//     calls of a health check grow with services and load balancers, never
//     with instances (a group's scaling activities are read only when its
//     instances changed; for the swap's gate, those no check read, and
//     those of a group with an activity in progress or begun since their
//     last read, asked in a one-record call per group; when many, in an
//     invocation of their own just before it). A step of the swap
//     describes its groups twice at most, never decoding the instances
//     of both fleets (stepSeen): the previous groups without their
//     instances (fleet.DescribeHeads; the gate's listing by tags, without
//     them too), then, while one may serve, the new groups with theirs
//     (the re-check judges them), else the previous groups with theirs
//     (the retirer sees them empty); a Headless retirer never reports a
//     group it did not see empty. Each description is shared by the
//     re-check, the step, the removal and the settling
//     (fleet.DescribeKnown). Resolve lists groups without their instances
//     too: a Deploy round reads none.
//   - Judged where it serves: a release's health, its bake and its swap's
//     gate are judged on the classic load balancers and target groups the
//     release names, by their own view (DescribeInstanceHealth,
//     DescribeTargetHealth), never on what a group is attached to now. A
//     new group taken out of one is attached again by CheckHealthy (Deploy
//     attached it: the attachment is ferry's), halts the bake or the gate
//     (a rollback); the gate never retires the previous groups while a
//     named load balancer would be left with no healthy instance (served.go).
//     A promotion's Gate reads the stage before the same way: it opens the
//     next stage only while each load balancer the stage before's release
//     names has a healthy instance of its groups (servingGaps, as the
//     target's deploy role session); a read that fails holds the stage.
//   - Honest records: a clean-up that cannot finish records a FailureDirty
//     outcome naming every group, launch template and alarm that may be
//     left (fleet.Leftovers), whatever read failed.
//   - Never a forced delete of a serving fleet: a group leaves through the
//     Retirer (detach, drain, scale in, hooks) however late a failure
//     comes; a retirement's time bound (tuning.RetireTimeout, from when it
//     began) ends it FailureDirty naming what stands (fleet.Standing),
//     never in a ForceDelete. Until the previous groups are scaled in, the
//     swap judges the new ones again each step, and puts the previous ones
//     back (FailureDirty) when a new one falls below its target.
//
// What AWS lets a person do to a group, and what ferry does about it:
//
//   - Scale-in protection (ProtectedFromScaleIn): handled. A retiring
//     group's instances lose it before the scale-in (SetInstanceProtection),
//     or the group would never empty.
//   - Standby (EnterStandby): read. A Standby instance is never healthy (it
//     is out of its load balancers) and a scale-in never terminates it:
//     someone put it there on purpose, so the Retirer neither exits nor
//     terminates it; a retiring group left with only Standby instances
//     ends the execution FailureDirty at once, naming them.
//   - Classic ELB connection draining: refused when disabled (the API's and
//     CLI's default): ValidateResources names the load balancer and the
//     command that enables it, for without it every deregistration cuts
//     in-flight requests.
//
// A handler that needs an AWS call ferry does not make yet follows the
// checklist "a new AWS call" in package cloud's documentation: the
// interface, the simulator's operation and its authorization, the IAM
// policy, the IAM proof and the conformance scenario.
package deployer
