// Package execution owns the contract between the deploy state machine and
// the deployer's handlers: the task names, the request each task invocation
// carries, and the state document that flows from state to state.
//
// The execution's input is the release as the client uploaded it. Validate
// replaces it with a compact State that names the release (by id and
// canonical hash) instead of carrying it, so every later payload stays small
// whatever the release holds (no user data or asset bodies). Later handlers
// read the release from the deployer bucket and check its hash against the
// State.
//
// Every task state invokes the one deployer Lambda with a Request:
//
//	{"task": "<Task>", "input.$": "$", "execution": {"id.$": "$$.Execution.Id",
//	 "name.$": "$$.Execution.Name", "start_time.$": "$$.Execution.StartTime",
//	 "retry_count.$": "$$.State.RetryCount"}}
//
// The parts of the State that grow with a deploy's services are written
// packed (packed.go): Health's services (services_z), Retire's groups
// (groups_z), the State's previous groups and images (previous_z), each
// its JSON compressed with zlib in base64. Step Functions records the
// whole document in each state's events, and a follower reads it at each
// poll: packed, a deploy of 50 services carries about 3 KB, not 22. What
// a Choice state reads stays plain; a document written plain (an older
// execution's history) reads the same.
//
// Validate's result replaces the state (ResultPath "$"). CheckHealthy's
// result is stored at $.health (Health), which the Healthy? choice reads at
// $.health.healthy and the wait reads at $.health.wait_seconds. Lock,
// ValidateResources, Publish, Deploy, CleanUp* and ReleaseLock return the
// State they were given, updated. A Catch stores the error at $.error
// ({"Error": name, "Cause": the function error payload}) so CleanUpFailure
// and ReleaseLock can record why the release failed.
//
// The machine starts at a Choice that tells a query from a release by a
// top-level key no release has: a plan ({"plan": release}, PlanInput)
// goes to Plan, a drift query ({"drift": ...}, DriftInput) to Drift, a
// reconcile pass ({"reconcile_pass": ...}, ReconcileInput) to Reconcile,
// page after page. Each answers with its output (Plan, Drift, Reconcile)
// and ends in Answered. A promotion ({"promotion": request},
// PromotionInput) goes to Promote, whose result, a compact Promotion,
// replaces the request; Gate reports at $.gate (Gate), the Wave's items
// are at $.targets (each StartTarget is given a WaveTarget and returns a
// TargetStart: the nested execution's name and input) and its results at
// $.wave, and EndStage reports at $.end (StageEnd). RequestApproval, the
// callback task, is the one task whose Request carries a task token.
package execution
