package tuning

import (
	"time"

	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/tuning/pacing"
)

// HealthChecks is the health checks' schedule (package pacing): every
// HealthCheckInterval for the first ten minutes of an execution, every 10
// s to the hour, every minute to the sixth, then every five minutes; each
// wait jittered by up to a fifth either way; every ImminentCheckInterval
// while a target is imminent (FewImminentCheckInterval while the services
// below theirs are few); at least BootCheckInterval apart while
// instances a target behind load balancers needs are not in service yet; at least StableCheckInterval apart while
// every service holds its target. A release healthy within
// the hour so waits at most 12 s for its check, and the longest timeout
// (48 h) takes at most 1,531 checks, about 13,800 history events.
var HealthChecks = pacing.Schedule{
	Paces: []pacing.Pace{
		{Until: 10 * time.Minute, Every: HealthCheckInterval},
		{Until: time.Hour, Every: 10 * time.Second},
		{Until: 6 * time.Hour, Every: time.Minute},
		{Every: 5 * time.Minute},
	},
	Jitter: 0.2,
	Stable: StableCheckInterval,
	Soon:   ImminentCheckInterval,
	Sooner: FewImminentCheckInterval,
	Boot:   BootCheckInterval,
}

// RetireChecks is the schedule of the steps retiring the previous groups
// after the swap (CleanUpSuccess's wait_seconds, by time since the point
// of no return): every RetireCheckInterval for two minutes (a drain, a
// quick scale-in), then every 30 s while termination hooks run; each wait
// jittered by a fifth. RetireTimeout takes at most 306 steps.
var RetireChecks = pacing.Schedule{
	Paces: []pacing.Pace{
		{Until: 2 * time.Minute, Every: RetireCheckInterval},
		{Every: 30 * time.Second},
	},
	Jitter: 0.2,
}

// StartEvery is the time between the starts of deploys to one account
// and region that start together (ValidateResources' first round takes
// its turn, lock.Starts): a start's ValidateResources makes about four
// calls to Auto Scaling's one shared bucket (40 tokens refilled at 10 a
// second, sim.AutoScalingShared) and a handful to each EC2 and Elastic
// Load Balancing Describe bucket, so one start every StartEvery asks the
// shared bucket for about what it refills, and a burst of deploys is
// spread instead of throttled. A deploy that finds no other starting
// waits nothing.
const StartEvery = 400 * time.Millisecond

// AutoScalingCallsPerRound is how many groups one round of Deploy
// creates, and how many of its groups' processes it suspends, at most
// (creates first, then suspends, within the one budget; a deploy's first
// round alone makes the whole bucket's, limits.AutoScalingBurst, the
// bucket refilled during the release's checks): the account's
// one Auto Scaling bucket (limits.AutoScalingBurst, 40 tokens) less the
// round's own listing of the project-config's groups and one to spare.
// A release of more groups than that creates the rest in the next round,
// after the wait the bucket takes to refill what that round makes
// (limits.AutoScalingRefill a second), rather than have AWS throttle the
// creates and the SDK's backoff scatter their launches.
const AutoScalingCallsPerRound = 38

// SettleCallsPerStep is how many Auto Scaling calls a step of
// CleanUpSuccess spends at most settling the new groups (scaling each
// down to its desired capacity, resuming its processes: two calls a
// group), the step's other work estimated in: the account's one bucket
// (limits.AutoScalingBurst), the next step after the wait the bucket
// takes to refill them; SettleLastCalls, the most the step that settles
// the last groups and ends the release makes, a quarter of it. A swap
// of more groups settles them over several steps rather than in one
// burst that AWS throttles, and a release ends with three quarters of
// the bucket at least, refilled within the second a next deploy takes to
// reach its creates, for the deploy that comes next (a user's next
// release, another project's, the user's own tools), instead of drained.
// The steps are SettleStepWait apart at least: a follower polling every
// 10 s reads the rounds of two steps at most.
const (
	SettleCallsPerStep = limits.AutoScalingBurst
	SettleLastCalls    = limits.AutoScalingBurst / 4
	SettleStepWait     = 5 * time.Second
)

// ShareJitter is the share by which the wait of a round of Deploy beside
// other deploys to its account and region (a (K+1)-th of Auto Scaling's
// refill each) is shortened or lengthened: deploys that started together
// spread their rounds over the whole wait instead of making them in
// step.
const ShareJitter = 0.5

// MakeParallel is how many services' launch templates and groups a round
// of Deploy makes at a time, and how many groups' processes it suspends
// at a time: a round's whole budget of Auto Scaling calls side by side
// (a first round's, alone, is the whole bucket: limits.AutoScalingBurst).
// A create AWS throttles waits its SDK backoff in its own lane and holds
// back no other service's create: with fewer lanes, the services queued
// behind a throttled one waited its backoff too, and the bucket refilled
// meanwhile unused.
const MakeParallel = limits.AutoScalingBurst

// StartHorizon is how far back a start looks for the deploys to its
// target that started before it: longer than the queue of any burst
// whose wait fits a release's timeout is not needed, and 256 deploys'
// turns fit in it.
const StartHorizon = 2 * time.Minute

// RetireYield is how a retirement past its point of no return
// (CleanUpSuccess), or the clean-up of a failed release's groups, gives
// way to the deploys to its account and region still on their way to a
// healthy fleet (their start markers, lock.Starts.Underway): while K are, the wait between two of its steps
// is at least K times RetireYieldPer, at most RetireYieldMax, jittered
// by a fifth. A retirement has no release timeout to race; the deploys
// on their way each race theirs, and the account's one Auto Scaling
// bucket (40 tokens refilled at 10 a second) is what both spend: a
// hundred retirements stepping every 30 s take most of it. Steps keep
// their work and their checks; only the polls between them thin out.
const (
	RetireYieldPer = 5 * time.Second
	RetireYieldMax = 3 * time.Minute
	// RetireYieldFor is how long from its point of no return a
	// retirement gives way at all: well within RetireTimeout, its
	// give-up bound, which a retirement that yielded still meets: a
	// yielding step still does its work, so the yield delays each phase
	// (detach, drain, scale-in, delete) by at most RetireYieldMax, and
	// the steps from RetireYieldFor on are at the retirement's own pace.
	RetireYieldFor = 45 * time.Minute
	// UnderwayHorizon is how long after its start a deploy's marker
	// counts as on its way: a marker older is a deploy that has ended
	// without clearing it (its execution aborted, its clear lost), which
	// then slows no retirement for longer than this.
	UnderwayHorizon = 45 * time.Minute
)

// The turns the retirements' steps, and Deploy's later rounds beside
// deploys on their way, take at their account and region's one Auto
// Scaling bucket (package lock, Turns):
// each writes its turn into a calendar in the deployer bucket before it
// calls, so that the deploys and retirements of many releases, each its
// own execution and none aware of the others' waits, never ask the
// bucket together for more than it holds and refills.
const (
	// TurnCalls is the most Auto Scaling calls the turns overlapping a
	// second may make (TurnRefill more for each second in a row after
	// it): the account's burst (limits.AutoScalingBurst),
	// less a tenth for the callers that take no turn (health checks'
	// describes, resolutions' listings, the user's own tools). A round or
	// step alone, the turns before it refilled, takes what it needs of it.
	TurnCalls = limits.AutoScalingBurst - limits.AutoScalingBurst/10
	// TurnRefill is what the turns add for each whole second in a row
	// they overlap past the first: the bucket's refill
	// (limits.AutoScalingRefill a second) less a tenth, as TurnCalls is
	// its burst's, so that turns second after second spend it no faster
	// than it refills.
	TurnRefill = limits.AutoScalingRefill - limits.AutoScalingRefill/10
	// TurnSpan is the most seconds in a row the turns' calls are counted
	// over: over any longer time they make TurnRefill + (TurnCalls -
	// TurnRefill) / TurnSpan calls a second at most, 9.45, the rest of
	// the refill left to the callers that take no turn.
	TurnSpan = 60
	// TurnShare is the most Auto Scaling calls a round or step makes
	// when another's turn overlaps its own: half the bucket, so no two
	// such turns overlap one second (2 x TurnShare > TurnCalls).
	TurnShare = limits.AutoScalingBurst / 2
	// TurnHorizon is how far ahead a round or step looks for its turn:
	// a hundred turns of TurnShare calls each, at TurnRefill a second,
	// fit in it.
	TurnHorizon = 5 * time.Minute
)

// ThrottledSteps is the wait before a loop's task runs again after AWS
// throttled its calls (limits.MaxThrottledSteps such rounds at most): 20
// s, jittered by a fifth, so the account's callers that were throttled
// together do not come back together.
var ThrottledSteps = pacing.Schedule{Paces: []pacing.Pace{{Every: 20 * time.Second}}, Jitter: 0.2}

// ThrottledRetireSteps is the wait before a step of a retirement or a
// clean-up runs again after AWS throttled it: a minute, jittered by half
// either way. Three times ThrottledSteps' on average, and spread wider:
// no release timeout bounds a retirement, while the deploys and health
// checks sharing the account's buckets (Auto Scaling's one bucket above
// all) each race their own; throttling says the account's callers ask
// too much, and the ones with time to spare step back the furthest.
var ThrottledRetireSteps = pacing.Schedule{Paces: []pacing.Pace{{Every: time.Minute}}, Jitter: 0.5}

// MaxThrottledCheckWait bounds the wait after health checks AWS
// throttled, which doubles with each in a row (jittered already by the
// schedule's pace it doubles).
const MaxThrottledCheckWait = 2 * time.Minute

// The deployer's health-check pacing and the ASG settings it derives.
const (
	// HealthCheckInterval is the wait between two health checks in the
	// first ten minutes of an execution (HealthChecks), and after Deploy
	// before the first when no boot was seen before. It bounds the latency
	// ferry adds once the last needed instance is healthy.
	HealthCheckInterval = 5 * time.Second
	// ConfirmPerCheck is about how many services a check at a stability
	// window's end confirms stable: with more windows ending, checks at
	// earlier ends confirm them in turn, so no check's load balancer
	// reads overflow an account's Describe burst, with room for other
	// deploys' (Elastic Load Balancing: 40 tokens, refilled at 10 a
	// second).
	ConfirmPerCheck = 20
	// BalancerReadsPerCheck is how many load balancer health reads
	// (DescribeInstanceHealth and DescribeTargetHealth calls, one per
	// classic load balancer or target group a service names) a health
	// check makes at most (package deployer: the services at their target
	// first, then those nearest it; the others' counts are carried on). It
	// is counted in calls, not services, so a check's cost grows neither
	// with instances nor with how many services reach their target or end
	// their window at once. At the checks' quickest pace
	// (ImminentCheckInterval) it stays within an account's Elastic Load
	// Balancing Describe refill (10 a second). A check makes more, up to
	// BalancerReadBurst, while the checks' own reads before left the
	// account's bucket that full.
	BalancerReadsPerCheck = 20
	// BalancerReadBurst is the most load balancer reads one health check
	// makes once a service has reached its target (the others are near
	// theirs) and while the checks before left the account's Describe
	// bucket (Elastic Load Balancing: 40 tokens) that full by their own
	// reads (refilled at BalancerReadRate): three quarters of it, the
	// rest left to other callers. Services that reach their targets
	// together are seen together, in one check rather than two.
	BalancerReadBurst = 30
	// BalancerReadRate is the account's Elastic Load Balancing Describe
	// refill: tokens a second.
	BalancerReadRate = 10
	// BalancerReadsShared is the fewest load balancer reads a health
	// check makes beside other deploys on their way to the account and
	// region (each check then reads its share of BalancerReadBurst, no
	// fewer than this): half a second's refill of the account's Describe
	// bucket, so a check still confirms services a few at a time, and
	// eight checks must meet in one second to empty the bucket.
	BalancerReadsShared = 5
	// StableCheckInterval is the shortest wait between two health checks
	// while every service holds its target and its stability window runs:
	// a termination or a replacement during the window is still seen (in
	// the group's scaling activities) at the next check, the window's end
	// is checked on time, and the swap's gate looks again before the point
	// of no return. A halt marker waits at most this long (or the
	// interval, jittered) to be acted on.
	StableCheckInterval = 30 * time.Second
	// ImminentCheckInterval is the wait between two health checks while
	// every service below its target has enough instances in service and
	// waits only for its load balancers' health checks: the moment it is
	// reached is near, and every second until it is seen is latency the
	// deploy adds. Within the schedule's budget (package pacing).
	ImminentCheckInterval = 2 * time.Second
	// FewImminentCheckInterval is ImminentCheckInterval while at most
	// FewImminent services are below their targets, or the tail of
	// services reaching theirs together is (a check saw at least as many
	// reach theirs as are still below, and their load balancers' reads
	// fit this long's BalancerReadRate refill): the last ones, each
	// second until a check sees them is latency, and a check reads few
	// load balancers, so one a second stays within an account's Describe
	// refill. Within the schedule's budget likewise.
	FewImminentCheckInterval = time.Second
	// FewArrivingReads is the most load balancer reads the services
	// still below their targets may make for the tail of services
	// reaching theirs together to be few (FewImminentCheckInterval): one
	// such interval's BalancerReadRate refill, so a check each interval
	// reads them all within it.
	FewArrivingReads = BalancerReadRate * int(FewImminentCheckInterval/time.Second)
	// FewImminent is how many services below their targets are few
	// (FewImminentCheckInterval) at the most, when no more than have
	// reached theirs: the last of many, not one service's whole ramp; and
	// no more than a FewImminentShare-th of the release's services, but
	// always the last one. Only the check that sees every service at its
	// target ends the wait: a check a second pays once the next to turn
	// healthy may well be the last (a release's last tenth of many arrive
	// together; of ten, the last one), not while they still arrive one by
	// one.
	FewImminent = 5
	// FewImminentShare: a FewImminentShare-th of a release's services
	// (a tenth) are few at most, but for the last one (FewImminent).
	FewImminentShare = 10
	// BootCheckInterval is the shortest wait between two health checks
	// while a service below its target still lacks instances in service
	// and every such service is judged on load balancers: its target
	// comes only after its instances are in service and pass their load
	// balancers' health checks (an Elastic Load Balancing health check
	// takes at least HealthyThresholdCount checks of
	// HealthCheckIntervalSeconds, 2 of 5 s at the least), so a check
	// that sees them in service (ImminentCheckInterval from then on) is
	// soon enough, and checks more often only cost state transitions.
	BootCheckInterval = 10 * time.Second
	// ReadyShare is the share of the fastest boot seen before (a group's
	// ready_seconds in the current record, for the same image) that the
	// first health check waits for after Deploy: no check while no
	// instance can yet be healthy. A half: an observed boot is one sample,
	// and boots of one image vary (the simulation's by up to two times).
	ReadyShare = 0.5
	// HealthCheckGracePeriod is the new ASGs' health check grace period: how
	// long after launch an instance failing its load balancer's health
	// check is left alone.
	HealthCheckGracePeriod = 300 * time.Second
	// RetireCheckInterval is how long the state machine waits between two
	// steps of retiring the previous groups in their first two minutes
	// (RetireChecks), and between two steps of a clean-up after a failure
	// (CleanUpFailure's wait_seconds): detach, draining, scale-in, hooks,
	// delete.
	RetireCheckInterval = 15 * time.Second
	// RetireTimeout bounds a retirement, from when it began (the point of
	// no return; CleanUpFailure's first retirement step, recorded): AWS
	// ends a hook at its heartbeat timeout (at most 7200 s) and a drain at
	// its delay (at most 3600 s), so a group still standing past it is
	// stuck. It is never deleted then: the execution ends FailureDirty
	// naming what stands and why (fleet.Standing). With RetireChecks (or
	// RetireCheckInterval, a clean-up's) it keeps an execution's
	// retirement within limits.MaxRetireSteps.
	RetireTimeout = 2 * time.Hour
	// RollbackCheckInterval is how long the state machine waits between
	// two checks of a rollback (CleanUpFailure after a bake): whether the
	// previous groups, back in their load balancers, pass their health
	// checks. It bounds the time the new groups serve alone after a
	// rollback could have finished.
	RollbackCheckInterval = 5 * time.Second
	// RollbackTimeout bounds a rollback: previous groups not healthy in
	// their load balancers this long after they were put back will not
	// be, and the release ends FailureDirty with its own groups left
	// serving beside them (never none). With RollbackCheckInterval it
	// keeps a rollback within limits.MaxRollbackChecks.
	RollbackTimeout = 15 * time.Minute
	// ErrorRateWindow is how far back a service's error rate looks: its
	// load balancers' requests and 5xx in the whole minutes CloudWatch
	// published over the last two.
	ErrorRateWindow = 2 * time.Minute
	// DescribeParallel is how many reads of one kind a task makes at a
	// time (instance profiles, batches of load balancers): fifty take
	// five calls' time, not fifty.
	DescribeParallel = 10
	// BalancerReadsAtOnce is how many load balancers and target groups a
	// task asks for their instances' states at a time (package
	// balancers, after a first read alone): a health check's reads, at
	// most BalancerReadBurst, all at once, in one call's time rather
	// than three. The deployer's HTTP client keeps as many connections
	// to a host (lambdas: its transport's MaxIdleConnsPerHost), so one
	// check's connections serve the next.
	BalancerReadsAtOnce = BalancerReadBurst
	// ProfileParallel is how many instance profiles a resolution reads at
	// a time (IAM's GetInstanceProfile, one per distinct profile; IAM
	// publishes no figures for its request bucket): a release's most
	// services' profiles in two reads' time, the resolution's longest
	// chain (package resources), so no launch waits for them.
	ProfileParallel = (limits.MaxServices + 1) / 2
	// StoreParallel is how many objects a task writes to the deployer
	// bucket at a time (Publish's user data, one per service): a
	// release's most services, far below S3's 3,500 writes a second per
	// prefix, so 50 services' writes take one write's time, not fifty:
	// no launch waits for them.
	StoreParallel = limits.MaxServices
	// DescribeBatch is how many names ferry passes to one describe call
	// that takes a list of names (Auto Scaling groups, load balancer tags).
	DescribeBatch = 20
)

// The retry policy of every task of the deploy state machine, for
// transient errors. The state machine is generated from these, and the
// clean-up handlers read from the retry count when an attempt is the last.
const (
	TaskRetryIntervalSeconds = 2
	TaskRetryBackoffRate     = 2.0
	TaskRetryMaxAttempts     = 6
	TaskRetryMaxDelaySeconds = 30
)

// Defaults of a release and of the deployer's checks of it.
const (
	// DefaultTimeout is a release's timeout when it names none (at most
	// limits.MaxTimeout).
	DefaultTimeout = 600 * time.Second
	// CreatedAtMaxAge and CreatedAtMaxSkew are the default window of a
	// release's created_at at Validate: at most this old, at most this far
	// in the future.
	CreatedAtMaxAge  = 10 * time.Minute
	CreatedAtMaxSkew = 2 * time.Minute
)

// Promotion pacing: how often a promotion's held gate is checked again,
// and how long it waits for an approval's callback before it checks its
// gates (and halt markers) again and asks anew.
const (
	// GateRecheckSeconds is the wait before a gate held by an alarm or
	// by a config without the pipeline registered is checked again. Each
	// check costs about 9 history events of the promotion's execution, so
	// at 5 minutes a stage may be held about 9 days before the
	// execution's 25,000 events run out (limits.StepFunctionsHistoryEvents).
	GateRecheckSeconds = 300
	// ApprovalWaitSeconds is the approval callback's TimeoutSeconds.
	ApprovalWaitSeconds = 3600
)
