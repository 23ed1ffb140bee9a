// Package deployer owns the deployer's handlers: one per task state of the
// deploy state machine (Validate, Lock, ValidateResources, Publish, Deploy,
// CheckHealthy, CleanUpSuccess, CleanUpFailure, ReleaseLock) and the
// dispatch that runs the one a task invocation names (Deployer.Invoke).
//
// Contracts every handler keeps:
//
//   - Idempotent: run twice with the same input (a Lambda or Step Functions
//     retry) it has the same effect as once. Deploy finds what an earlier
//     attempt made by its deterministic name and tags; clean-ups treat
//     "already gone" as done.
//   - Typed errors: every error returned is a failure.Named error whose name
//     is the one the state machine catches; transient AWS failures are
//     *failure.RetryableError (cloud.Classify); a panic becomes a
//     *failure.InternalError.
//   - Small state: the State passed between states names the release (id
//     and canonical hash); handlers read the release, rendered user data and
//     assets from the deployer bucket.
//   - No sleeping: time comes from the injected clock; waiting is the state
//     machine's (CheckHealthy says how long).
//   - Batched AWS calls: describes are batched per resource kind, and the
//     calls of a health check grow with services and load balancers, never
//     with instances (a group's scaling activities are read only when its
//     instances changed, and by the swap's gate).
//   - Honest records: a clean-up that cannot finish records a FailureDirty
//     outcome naming every group, launch template and alarm that may be
//     left (fleet.Leftovers), whatever read failed.
package deployer
