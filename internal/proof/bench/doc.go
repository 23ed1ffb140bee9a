// Package bench owns ferry's deploy benchmark (issues 10 and 19): what a
// deploy costs on top of the instances' own boot and health checks, in
// time, calls and dollars, and how that grows with services and
// instances, with long timeouts and with many deploys in one account.
//
// For every cell of a grid (services S x instances per service N) it
// builds a simulated world and two releases programmatically (World,
// ReleaseFile), and runs, on a local region (package region) on
// discrete-event virtual time, the real state machine definition with the
// real deployer handlers: first a previous release, so there is something
// to replace, then the measured release. Every world throttles as AWS
// documents (sim.ThrottleModel, "aws-documented" in bench.json: the
// account's token bucket per API, the SDK's retries modelled), in every
// cell as in RunMulti. Every AWS and S3 call takes
// Options.CallCost of virtual time (a task returns once its calls' time
// has passed, calls made side by side counted once: package fanout), and
// instances boot and pass their health checks at times drawn to the
// millisecond from a seed; every cell runs GridOptions.Seeds seeds. It
// does so for two models of the deployer's timing (Ferry, and Reference:
// the design's reference deployer, a fixed 30 s wait after Deploy, a
// poll every 15 s in every loop and its calls one after the other) and
// records for the measured release (Measurement):
//
//   - AWS API calls (the simulated AWS's counters) and S3 calls (counted by
//     wrapping the deployer's S3 clients), in total, per health check (its
//     reads, without the event announcing a healthy release, which one
//     check a deploy makes) and by operation;
//   - Step Functions state transitions and history events;
//   - Lambda invocations, each handler's real run time, its time on the
//     deployer Lambda's CPU share (its CPU time scaled: OnLambda; at S=50,
//     N=100 its real time under a CPU quota at that share where the
//     machine allows one: CPUQuota, RunUnderQuota, the measured release's
//     tasks run by the deployer alone in a child process (ServeHandler),
//     the region, its simulated AWS and S3 answering it over loopback
//     HTTP from outside the quota, as AWS answers a Lambda (S3, Step
//     Functions, Auto Scaling and Elastic Load Balancing in AWS's wire
//     format to the SDK's own clients, the query protocol's by reflection
//     over the SDK's types: query.go, wire.go; the other services' input
//     and output as JSON: QuotaMeasures says which), the time it
//     waits for their answers left out (their latency is the modelled
//     call cost); elsewhere the target is skipped), its billed time and
//     the bytes it allocated (the bound of its peak heap);
//   - the calls AWS throttled, and their retries' backoffs;
//   - the largest payload passed between states;
//   - the deploy-added latency: virtual time from the moment the last
//     instance the release needed became healthy (sim.World.InstanceTimes,
//     with each service's healthy target from the health report) to the
//     start of CleanUpSuccess, beyond the release's stability window; and
//     the deploy's physical floor (its slowest needed instance's launch to
//     healthy, plus the window) against its whole time to CleanUpSuccess,
//     and when the needed instances launched (the simulation launches
//     them when the Auto Scaling call got through, after a throttled
//     attempt's backoff: time over the floor, not in it);
//   - its cost on AWS in dollars (Cost, prices as of PricesAt).
//
// RunLong runs a release with the longest timeout (its history when never
// healthy, its latency when healthy within the hour); RunMulti runs K
// deploys of S services at once in one account (the busiest second of
// each request bucket), and RunMultiTimes runs it several times and
// keeps the worst run (its figures vary with the order the deploys reach
// the region in; a target holds on the worst). Report gathers them with the Lambda binary's size
// (LambdaBinary) and the bytes a second ferry deploy of unchanged assets
// uploads (AssetUploads), checks the targets (Targets) and renders
// the table (WriteTable), build/bench.json (JSON) and the performance
// section of PerformancePage between its markers (Markdown, WritePage):
// every figure of it from the report or the code's constants (each
// column saying what it is and whether counted, timed on the model or
// real time here; the throttle model's buckets from package sim; ferry's
// pacing from package tuning; what AWS documents of instance refresh and
// CodeDeploy blue/green at N=100, cited), none copied by hand.
// cmd is `make bench`.
package bench
