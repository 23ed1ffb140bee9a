package tuning

import "time"

const (
	// ReleaseObjectRetention is how long the deployer bucket keeps the
	// objects of one release (tagged naming.ObjectTagExpire) before its
	// lifecycle rule expires them.
	ReleaseObjectRetention = 365 * 24 * time.Hour
	// NoncurrentVersionRetention is how long the deployer bucket keeps an
	// overwritten or deleted object version.
	NoncurrentVersionRetention = 30 * 24 * time.Hour
	// DeployerLambdaTimeout bounds one invocation of the deployer Lambda
	// (Publish copies up to MaxAssets assets of MaxAssetBytes).
	DeployerLambdaTimeout = 10 * time.Minute
	// DeployerLambdaMemoryMB is the deployer Lambda's memory size: the
	// largest invocation's heap is under 30 MB at 50 services of 100
	// instances (make bench's handler_memory, an upper bound), and Publish
	// holds one asset of at most limits.MaxAssetBytes (64 MiB) at a time;
	// 512 MB leaves the Go runtime's collector twice that with room to
	// spare. It was 1024 MB: make bench's cost_usd shows the difference.
	DeployerLambdaMemoryMB = 512
	// LogRetention is how long the deployer's logs (Lambda and state
	// machine) are kept, for audit.
	LogRetention = 365 * 24 * time.Hour
)

// The deploy state machine's logging and tracing, as the DeployerStack
// configures it and as the local region's DescribeStateMachine reports it.
const (
	// StateMachineLogLevel is the state machine's log level (Step
	// Functions' LogLevel: ALL, ERROR, FATAL or OFF): every history event
	// is logged, for audit.
	StateMachineLogLevel = "ALL"
	// StateMachineLogExecutionData says whether the logs carry execution
	// data (inputs and outputs: releases and state documents).
	StateMachineLogExecutionData = true
	// StateMachineTracing says whether X-Ray tracing is enabled.
	StateMachineTracing = false
)

// DriftUnhealthyAfter is how long an instance of a deployed group may be
// unhealthy (or missing from its load balancers) before a drift query
// calls it drift: an instance Auto Scaling is replacing, or one booting
// after a scale-out, is settling until then.
const DriftUnhealthyAfter = 10 * time.Minute

// HealRetry is the wait before the reconciler heals a difference again
// after a heal of it (the same kind of drift of the same service came
// back, or never left): doubled for each heal of it in a row, from
// HealRetry up to MaxHealRetry, so a fleet that cannot be healed, or
// that someone breaks again after every heal, is not redeployed every
// pass. A row ends at another difference, or once HealRowEnds has passed
// since its last heal.
const (
	HealRetry    = 15 * time.Minute
	MaxHealRetry = 6 * time.Hour
	HealRowEnds  = 24 * time.Hour
)

// HealAfter is how long a group must have been seen missing before a
// reconcile pass heals it: Auto Scaling's reads are eventually
// consistent (a group just created can be missing from them for a while,
// DescribeAutoScalingGroups, Amazon EC2 Auto Scaling API Reference), and
// one read is no proof a fleet is gone. At the default rate the heal is
// the next pass's.
const HealAfter = 10 * time.Minute

// ReconcileEvery is how often the deployer's schedule starts a reconcile
// pass (the DeployerStack's ReconcileRate parameter; ferry local's
// --reconcile).
const ReconcileEvery = 15 * time.Minute

// AssetKeepReleases is how many of a project-config's newest releases
// keep their assets in the deployer bucket (the DeployerStack's
// AssetKeepReleases parameter): a reconcile pass deletes the assets none
// of them, nor the release holding the lock, names. AssetGrace is how long
// an asset stays whatever names it: a client uploads assets before the
// release that names them.
const (
	AssetKeepReleases = 10
	AssetGrace        = 24 * time.Hour
)

// GateReadsInline is how many pages of scaling activities (one
// DescribeScalingActivities call each, 100 activities a page) the swap's
// gate reads itself, for the new groups whose activities no health check
// read; more take an invocation of their own before it (package deployer:
// gateReads). Each page's parsing is a millisecond or more of a 512 MB
// Lambda's CPU share: the 100 pages of 50 groups of 100 instances, added
// to the gate's listing and load balancer reads, would take its
// invocation past a second.
const GateReadsInline = 10
