// Package bench owns ferry's deploy benchmark (issue 10): what a deploy
// costs on top of the instances' own boot and health checks, and how that
// grows with services and instances.
//
// For every cell of a grid (services S x instances per service N) it
// builds a simulated world and two releases programmatically (World,
// Release), and runs, on a local region (package region) on discrete-event
// virtual time, the real state machine definition with the real deployer
// handlers: first a previous release, so there is something to replace,
// then the measured release. It does so for two models of the deployer's
// timing (Ferry, and Reference: the design's reference deployer, a fixed
// 30 s wait after Deploy and a 15 s health-check interval) and records
// for the measured release (Measurement):
//
//   - AWS API calls (the simulated AWS's counters) and S3 calls (counted by
//     wrapping the deployer's S3 clients), in total, per health check and by
//     operation;
//   - Step Functions state transitions (StateEntered history events);
//   - Lambda invocations, each handler's real run time and the bytes it
//     allocated (the bound of its peak heap, see Measurement);
//   - the largest payload passed between states;
//   - the deploy-added latency: simulated time from the moment the last
//     instance the release needed became healthy (sim.World.InstanceTimes,
//     with each service's healthy target from the health report) to the
//     start of CleanUpSuccess.
//
// Report gathers the cells, the Lambda binary's size (LambdaBinary) and the
// bytes a second ferry deploy of unchanged assets uploads (AssetUploads),
// checks the targets (Targets) and renders the table (WriteTable)
// and build/bench.json (JSON). cmd is `make bench`.
package bench
