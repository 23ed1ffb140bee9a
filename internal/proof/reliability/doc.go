// Package reliability owns ferry's fault-injection matrix and the checks
// that prove a deploy never loses the serving fleet, never leaves a
// half-deployed project, a stuck lock or an orphaned fleet without saying
// so, and never writes a record that is not true.
//
// A Scenario is the reference deploy: a world (testdata/worlds/
// reliability.json) with resources that are not ferry's, a previous release
// already deployed, and the next release to deploy over it (two services,
// a classic ELB and target groups, an asset, scaling alarms, a lifecycle
// hook). Scenario.Run deploys the next release on a fresh local region
// (package region, discrete-event virtual time) from the same starting
// state every time, with one Schedule injected, and returns a Result: the
// end state, the AWS (simulated) and S3 calls the execution made, its
// task invocations, and every invariant it broke, during and after the
// run.
//
// A Schedule is what one run injects; Bases.Schedules derives every
// schedule of the matrix from four base runs (the deploy succeeding; the
// same deploy halted at its first health check so it fails through
// CleanUpFailure; halted at its first wait in the bake, so
// CleanUpFailure rolls back, the previous groups serving again before the
// new ones leave; and AnalysedNext, a build 60% slower under a canary
// analysis, which the analysis rolls back), in four families:
//
//   - single: each call fault (throttling, a 5xx, access denied, a
//     timeout) at each call; each invocation's response lost after its
//     work (Lambda.Unknown); each invocation dying right after each of its
//     calls; each invocation that assumes the deploy role doing so from a
//     cold Lambda whose assumption is refused or whose own credentials
//     expired; each GetMetricData call of the analysis base with each
//     call fault and death, and each of its invocations that read
//     metrics with its response lost; and each behaviour of the target
//     (instances that crash after passing their checks, an idle fleet
//     whose scale-in alarm fires, a zone that recovers mid-deploy);
//   - pair: two faults of one kind in one task (the first invocation of
//     Deploy, and the clean-up of each base);
//   - consistency: each new group and launch template hidden from a
//     window of its lookups (AWS's eventual consistency after a create);
//   - race: a second release of the project-config started at each state,
//     and while each invocation's response is lost.
//
// The invariants:
//
//   - the execution ends in Success, FailureClean or FailureDirty; a run
//     of the analysis base never in Success (a metric read that fails is
//     no data, and no data is not a pass);
//   - at every instant the fleet changed, from the release's start to its
//     end, one release served in full: every service of the previous
//     release, of the release, or of the race's second release, with its
//     healthy target of healthy instances;
//   - Success: the new release serves, the previous groups are gone, the
//     lock is released, the outcome says Success;
//   - FailureClean: nothing tagged with the release id is left (ASG,
//     launch template, alarm), the lock is released and the previous
//     release (or a race's second release that succeeded) serves;
//   - FailureDirty: only when a fault hit a clean-up past its point of no
//     return (CleanUpSuccess with its deleting record, CleanUpFailure,
//     ReleaseLock), with every leftover named in the outcome (unless S3
//     refused the outcome's own write) and the lock kept;
//   - no load balancer or target group counts a cut connection: every
//     group that left service was drained first;
//   - once Lock succeeded, the lock names the release and no one else;
//   - each task touches only resources tagged DeployWith=ferry with the
//     release's project and config, and of those only the release's own,
//     but for the previous release's, which only CleanUpSuccess retires,
//     and only while every new group has its healthy target;
//   - the deploy events the default bus received (CheckEvents, judged
//     from the bus and the end Step Functions reports): Release Started
//     first, a retry repeating an event only with its id, one terminal
//     event (Release Succeeded only for Success, Release Failed with the
//     end reached) and nothing after it; a fault that only fails
//     PutEvents calls ends the deploy as its base ended.
//
// ReferenceDestroy is the same scenario with a destroy of the
// project-config (ferry destroy) as the next release: its matrix has no
// rollback base (a destroy has no bake), no behaviours and no
// consistency schedules (it creates no group), and its serving invariant
// holds up to its point of no return (its deleting record), after which
// the fleet is meant to go; Success also means the current record is
// gone.
//
// RunMatrix runs every schedule (or every Nth) on a bounded pool of
// workers; Report prints the table `make reliability` shows.
package reliability
