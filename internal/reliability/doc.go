// Package reliability owns ferry's fault-injection matrix and the checks
// that prove a deploy never leaves a half-deployed project, a stuck lock or
// an orphaned fleet without saying so.
//
// A Scenario is the reference deploy: a world (testdata/worlds/
// reliability.json) with resources that are not ferry's, a previous release
// already deployed, and the next release to deploy over it (two services,
// a classic ELB and target groups, an asset, scaling alarms, a lifecycle
// hook). Scenario.Run deploys the next release on a fresh local region
// (package region, discrete-event virtual time) from the same starting
// state every time, optionally with one Fault injected, and returns a
// Result: the end state, the sequence of AWS (simulated) and S3 calls the
// execution made, the task invocations, and every violation of the
// invariants found during and after the run:
//
//   - the execution ends in Success, FailureClean or FailureDirty;
//   - Success: the new release serves, the previous groups are gone, the
//     lock is released;
//   - FailureClean: nothing tagged with the release id is left (ASG, launch
//     template, alarm), the lock is released and the previous release
//     still serves (its ASGs live, with their healthy instances);
//   - FailureDirty: only when the fault hit a clean-up task (CleanUpSuccess,
//     CleanUpFailure, ReleaseLock), with every leftover named in the
//     outcome and the lock kept;
//   - the previous release's ASG is deleted only while every new ASG has
//     its healthy target of healthy instances (checked around each task:
//     virtual time stands still while a task runs);
//   - between Lock and the end the lock names the release, and no one else;
//   - every resource a task creates, changes or deletes is tagged
//     DeployWith=ferry with the release's project and config.
//
// Matrix records the calls of a clean run and runs the deploy once per
// call index and fault kind (Kinds: throttling, a 5xx, access denied,
// a timeout, and a Lambda invocation that dies after its work is done),
// on a bounded pool of workers. Report prints the table `make reliability`
// shows.
package reliability
