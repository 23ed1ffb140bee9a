// Package region owns ferry's local region: everything the client talks to
// in AWS, composed in one process so a deploy runs end to end on one
// machine. A Region holds
//
//   - the simulated AWS (package sim) seeded from a world spec;
//   - an S3-compatible store (package s3server) with the deployer bucket
//     (versioned, as in AWS) and every bootstrapped environment's asset
//     bucket already created;
//   - the deployer (package deployer), reaching the simulated accounts
//     through a cloud.Connector, so role assumption takes the real path;
//   - the deploy state machine (the generated definition, package
//     definition) run by the States Language interpreter (package asl),
//     whose Task states invoke the deployer in-process;
//   - the executions, with Step Functions' semantics (a name is unique per
//     state machine; StartExecution is idempotent for the same name and
//     input while the execution runs), and the service integrations a
//     promotion uses: nested executions (states:startExecution.sync:2,
//     stopped when their task is cancelled), lambda:invoke and its
//     callback pattern, answered with SendTaskSuccess or SendTaskFailure.
//
// Handler serves it all on one port: the Step Functions JSON 1.0 API
// (requests carrying X-Amz-Target: AWSStepFunctions.<Op>), a read-only view
// of the simulated world at GET /_ferry/world, the events put on its default
// event buses (ferry's deploy events) at GET /_ferry/events, the region's
// coordinates at GET /_ferry/info, a release's last canary analysis (the
// ledger's record, which the console shows) at GET /_ferry/analysis, an
// execution's history with its state documents' packed parts unpacked
// (which the console shows) at GET /_ferry/history, the reference's pages at GET /_ferry/help/ when
// Options.Help serves them (ferry local's do; the console links them), and
// the S3 API (path-style) for everything else. No
// web page its user opens may drive it (package sameorigin): a request
// that could change state from another origin is refused, no CORS is
// answered, its JSON endpoints take only JSON, and S3 objects are served
// as sandboxed attachments. The same things are available in-process (Start, Wait, World, S3, ...) for
// tests, the reliability matrix and the benchmarks. Options.Intercept sees
// every task invocation (to fail it, or lose its response); ColdStart
// makes the next invocations run in a new Lambda container, with no role
// credentials cached.
//
// # Time
//
// One clock drives the simulated AWS, the S3 server's LastModified, the
// deployer and every execution. It is one of:
//
//   - Options.Clock (a *clock.Virtual): discrete-event time, for
//     deterministic tests. Virtual time moves only when every execution of
//     the region is waiting (in a Wait state or between retries) and no one
//     holds the region (Hold): it then jumps to the earliest wake-up and
//     wakes the executions due. A running task, an Observer call and a Hold
//     all keep time still, so what a test sees does not depend on
//     scheduling, and a ten-minute deploy takes milliseconds. A task
//     waiting for something outside its execution (a nested execution,
//     a task token's answer, a Map's iterations) keeps no time still; what
//     wakes it makes it busy before time can pass.
//   - Options.Speed > 0: scaled real time (clock.Scaled) starting at the wall
//     clock's now; with Speed 60 a ten-minute deploy takes ten seconds.
//   - neither: discrete-event time on a virtual clock the region makes,
//     starting at the wall clock's now (as fast as possible). While no
//     execution runs and no one holds the region, this clock follows the
//     wall clock (Options.WallClock), so it never stands still between
//     deploys: a halt marker written then is older than a deploy started
//     later, as it would be on AWS, and does not halt it. Once executions
//     run, discrete-event time goes on from there.
//
// With Options.ReconcileEvery the region starts a reconcile pass every so
// long on its clock, as the DeployerStack's schedule does in AWS: a region
// that makes its own clock itself, one on Options.Clock when a test calls
// ReconcileIfDue. Meddle (POST /_ferry/world) changes the world from
// outside ferry, as a person at the console would, to make drift.
//
// A promotion's gate wait (WaitForGate: a soak, an alarm, a config
// without the pipeline registered) waits for the world outside, as an
// approval's task token does (asl.RunOptions.OutsideWaits): on a region
// that makes its own clock it passes with the wall clock, so a held
// promotion lasts as long as the people it waits for take.
//
// A region that makes its own clock (the last two) runs ahead of the wall
// clock the client stamps a release's created_at with, so unless Options
// set them, its deployer accepts created_at within OwnClockCreatedAtWindow.
package region
