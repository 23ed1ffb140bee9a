package limits

import "time"

const (
	// MaxReleaseBytes is the largest release ferry reads, as a file or as
	// uploaded. The uploaded release is the execution's input, and Step
	// Functions refuses any state over 256 KiB with States.DataLimitExceeded,
	// which no Catch (not even States.ALL) handles: when Validate refuses a
	// release, its Catch adds the error (at most 32 KiB of cause) to the
	// release, so the release stays well below 256 KiB.
	MaxReleaseBytes = 200 << 10
	// MaxJSONDepth is the deepest nesting a release may have.
	MaxJSONDepth = 16
	// MaxServices is the most services one release may have.
	MaxServices = 50
	// MaxTags is the most tags a service may set (AWS allows 50 per
	// resource; ferry reserves 6).
	MaxTags = 40
	// MaxListLen bounds subnets, security groups, ELBs and target groups.
	MaxListLen = 16
	// MaxPolicies is the most scaling policies a service may have.
	MaxPolicies = 4
	// MaxLifecycleHooks is the most lifecycle hooks a release may have.
	MaxLifecycleHooks = 4
	// MaxAssets is the most assets a release may have.
	MaxAssets = 20
	// MaxAssetBytes is the largest asset ferry publishes.
	MaxAssetBytes = 64 << 20
	// MaxUserDataBytes is EC2's limit on user data (before base64).
	MaxUserDataBytes = 16 << 10
	// MaxInstances is the largest max_size of a service.
	MaxInstances = 1000
	// MaxStateObjectBytes is the largest small state object ferry reads
	// from the deployer bucket: a lock, a halt marker, a run-once marker, an
	// outcome or the current record. Anything larger is garbage and is
	// refused without being read in full.
	MaxStateObjectBytes = 64 << 10
	// MaxStatePayloadBytes is the largest state document ferry passes
	// between states (Step Functions allows 256 KiB; ferry keeps 32 KiB).
	MaxStatePayloadBytes = 32 << 10

	// MaxLocalSpeed is the fastest a local region's scaled time may run,
	// in simulated seconds per wall second (ferry local --speed): a
	// two-hour deploy in under a second, and simulated time stays within
	// time.Duration's range for days of wall time.
	MaxLocalSpeed = 10000

	// MaxStableSeconds bounds a stability window (stable_seconds).
	MaxStableSeconds = 3600

	// MaxRolloutSteps bounds a service's canary steps (rollout.steps).
	MaxRolloutSteps = 10

	// MaxBakeSeconds bounds a release's bake (bake_seconds): a day.
	MaxBakeSeconds = 86400

	// MaxAnalysisMetrics bounds the metrics of a release's canary analysis
	// (analysis.metrics). A check reads each for each service's new group
	// and previous groups: with MaxServices and a previous group each,
	// 2,000 queries, four GetMetricData calls of 500.
	MaxAnalysisMetrics = 20
	// MaxAnalysisWindow bounds an analysis's window (window_seconds), in
	// seconds: an hour, 60 one-minute samples a group.
	MaxAnalysisWindow = 3600

	// MaxPipelineBytes is the largest pipeline file ferry reads.
	MaxPipelineBytes = 64 << 10
	// MaxStages is the most stages a pipeline may have.
	MaxStages = 10
	// MaxWaveTargets is the most targets one stage deploys together.
	MaxWaveTargets = 10
	// MaxSoakSeconds bounds a stage's soak gate (gates.soak_seconds): a
	// week.
	MaxSoakSeconds = 7 * 86400
	// MaxApprovers bounds a stage's approvers (gates.approvers), and
	// MaxApproverLen each pattern (IAM's own limit on an ARN is 2048).
	MaxApprovers   = 20
	MaxApproverLen = 2048

	// MaxTimeout bounds a release's timeout.
	MaxTimeout = 172800 * time.Second

	// Name lengths.
	MaxProjectLen   = 64
	MaxConfigLen    = 32
	MaxServiceLen   = 32
	MaxReleaseIDLen = 64
	MaxQualifierLen = 10
	MaxTagKeyLen    = 128
	MaxTagValueLen  = 256
	MaxResourceRef  = 255

	// MaxDescriptionLen bounds a release's description, in characters.
	MaxDescriptionLen = 1024
	// MaxVersionLen bounds a release's version (a build number, a git
	// commit or describe).
	MaxVersionLen = 128
)

// The Step Functions quotas the local interpreter enforces as AWS does.
const (
	// StepFunctionsPayloadBytes is the largest execution input, task input
	// or task result Step Functions accepts.
	StepFunctionsPayloadBytes = 256 << 10
	// StepFunctionsHistoryEvents is the most events one execution's history
	// may hold; an execution that would exceed it fails.
	StepFunctionsHistoryEvents = 25000
)

// GetMetricDataQueries is how many queries one CloudWatch GetMetricData
// call may make (CloudWatch API Reference, GetMetricData: "as many as 500
// MetricDataQuery structures"): the error rate's and the canary
// analysis's batches.
const GetMetricDataQueries = 500

// GeneratedReleaseIDLen is the length of the release ids the client
// generates (UTC time to the second and 6 hex digits,
// 20060102T150405Z-3f9a1c). A release file has no release id yet, so its
// validation assumes one of this length where the id's length matters (the
// ASG and launch template name); the deployer checks the real one.
const GeneratedReleaseIDLen = len("20060102T150405Z-000000")

// Bounds of a release's identity proof (a pre-signed sts:GetCallerIdentity
// request): a SigV4 query-signed URL with a session token is about 1.5 KB.
const (
	MaxIdentityURLLen    = 4096
	MaxIdentityHeaders   = 8
	MaxIdentityHeaderLen = 1024
)
