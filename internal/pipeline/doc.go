// Package pipeline owns pipelines: one project's release promoted through
// ordered stages (design document 002's environments), each a config
// deployed to one or more targets together, as a wave.
//
// It decodes a pipeline file strictly (the release decoder's rules),
// validates it (every problem at once, each "path: message"), describes
// it as a JSON Schema, and derives what each target of each stage deploys
// from one release: the artifact, what must not vary between stages
// (services, AMI, user data, assets by hash, and everything else that is
// not an environment fact), plus the stage's environment facts (the
// target, the config name, capacity, instance types, and the names of
// subnets, security groups, load balancers, instance profiles, lifecycle
// hooks' roles and topics and alarms, which may use {{CONFIG_NAME}}). Digest names an artifact: every stage of a promotion
// deploys releases with the same digest, so parity holds by
// construction, and a stage's override can change nothing else (the
// decoder refuses any other field).
//
// A promotion's documents are here too: the Request `ferry pipeline
// start` stores and starts (the pipeline, the release and the promotion
// id, bound together by one identity proof; DecodeRequest checks it as the
// deployer does), an Approval (a promotion, a stage and an artifact, with
// the approver's proof), and the hashes that name a pipeline and a
// request. An approval is authorization only as a stage's gates say:
// Gates.MayApprove matches the verified approver against the stage's
// approvers (IAM principal ARN patterns, validated with the path of a bad
// one), and separate_approver keeps the promotion's starter from
// approving it; the deployer checks both when the approval is given (its
// VerifyApproval query, while the proof is valid; it records the approval
// verified, by Approval.Hash) and again when the gate counts it, and
// records its verdict (who, verified, or why not) in the promotion's
// record.
//
// A stage's gates are one list of checks (gate.go: artifact, serving,
// soak, alarm, approval), in the manner of a scheduler's feasibility
// checkers: each takes the Readings the caller supplies (the stage
// before's targets as read: the artifact each runs, whether its release
// still serves there, its swap, its gate alarms' states; the stage's
// approval as verified; now) and returns what holds, one Hold and one
// message per gate and target. Pipeline.Holds runs them; `ferry
// promote`, `ferry pipeline status` and the deployer's Gate task all call
// it, each reading its own way (the records and drift queries in the
// client; the records, the deploy role sessions and the approval's
// identity proof in the deployer), so the rules and their messages are
// one. Whether the stage before still serves (a healthy instance of its
// release's groups in each load balancer and target group it names, or
// why that was not read, which holds) the deployer reads, for its Gate
// task and for a drift query that asks (which is how the client reads
// it): StageStatus.Readings says a target whose serving was not read as
// not read, which holds; a TargetReading.Serving left nil is not checked.
//
// A soak counts from the newest swap of the stage before's targets (their
// current records' deployed_at, SoakStart): the moment from which the
// artifact serves on every one of them. Both callers read it from the
// records, with or without a promotion (`ferry promote` has no promotion
// record), and it is what a soak is for: time serving the artifact. The
// stage's end (after the bake) would add the bake to every soak.
//
// These gates are a pipeline's, between stages. They are not a release's
// alarm and error-rate checks during a deploy, nor the swap's check before
// the point of no return (package deployer calls those its checks and
// the swap's gate).
//
// A new gate, in order:
//
//  1. the gate: a func in gate.go, its Gate* name, added to gateChecks,
//     its field in Gates (validated in gates) and, if it needs one, its
//     reading in Readings or TargetReading;
//  2. its reading in the deployer: gateReadings and targetReading in
//     internal/deployer/gate.go (and in the client, StageStatus.Readings
//     and client/promote.go, if people read it there);
//  3. IAM, if it reads AWS: the call in the deploy role's policy
//     (infra) and its case in the IAM proof (package cloud's checklist
//     "a new AWS call");
//  4. the simulator, if it reads AWS: the operation in internal/local/sim,
//     modelled from AWS's documentation;
//  5. a test: its cases in TestHolds, and a Gate case in
//     internal/deployer/gate_test.go that fails without its reading.
//
// Functions here do no I/O.
package pipeline
