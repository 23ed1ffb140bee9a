package execution

import (
	"encoding/json"
	"time"

	"github.com/ferryhq/ferry/internal/health/analysis"
	"github.com/ferryhq/ferry/internal/pipeline"
	"github.com/ferryhq/ferry/internal/target"
)

// Task names: the deploy state machine's task states, and the names the
// Lambda dispatches on.
const (
	TaskValidate          = "Validate"
	TaskLock              = "Lock"
	TaskValidateResources = "ValidateResources"
	TaskPublish           = "Publish"
	TaskDeploy            = "Deploy"
	TaskCheckHealthy      = "CheckHealthy"
	TaskNextStep          = "NextStep"
	TaskBake              = "Bake"
	TaskCleanUpSuccess    = "CleanUpSuccess"
	TaskCleanUpFailure    = "CleanUpFailure"
	TaskReleaseLock       = "ReleaseLock"
	// TaskPlan answers a plan (PlanInput): what a deploy of a release
	// would do now. It changes nothing.
	TaskPlan = "Plan"
	// TaskDrift answers a drift query (DriftInput): how what runs
	// differs from what ferry deployed.
	TaskDrift = "Drift"
	// TaskReconcile takes a page of a reconcile pass (ReconcileInput):
	// drift recorded for each project-config, the fleets of those that
	// opted in healed.
	TaskReconcile = "Reconcile"
	// TaskVerifyApproval answers an approval query (ApprovalInput): it
	// verifies a person's approval of a promotion's stage as it is given
	// and records it verified (ledger.VerifiedApproval), or refuses it,
	// writing nothing.
	TaskVerifyApproval = "VerifyApproval"
	// TaskPromote starts a promotion (PromotionInput): it checks the
	// request and who made it, and records the promotion.
	TaskPromote = "Promote"
	// TaskGate checks the gates of a promotion's next stage (Promotion):
	// open, waiting for an approval, or how long to wait.
	TaskGate = "Gate"
	// TaskRequestApproval records the task token a person's approval
	// answers (the callback pattern): it runs once per approval wait.
	TaskRequestApproval = "RequestApproval"
	// TaskStartTarget makes the release one target of a stage deploys
	// (a wave's item), for its nested execution.
	TaskStartTarget = "StartTarget"
	// TaskEndStage records how each target of the stage's wave ended and
	// says whether the promotion is done; a failed wave fails it.
	TaskEndStage = "EndStage"
)

// Tasks returns every task name in the order a successful deploy runs them,
// then the failure tasks, then the queries.
func Tasks() []string {
	return []string{
		TaskValidate, TaskLock, TaskValidateResources, TaskPublish, TaskDeploy,
		TaskCheckHealthy, TaskNextStep, TaskBake, TaskCleanUpSuccess, TaskCleanUpFailure, TaskReleaseLock,
		TaskPlan, TaskDrift, TaskReconcile, TaskVerifyApproval,
		TaskPromote, TaskGate, TaskRequestApproval, TaskStartTarget, TaskEndStage,
	}
}

// End states of the deploy state machine.
const (
	EndSuccess      = "Success"
	EndFailureClean = "FailureClean"
	EndFailureDirty = "FailureDirty"
	// EndAnswered ends a query's execution (a plan, a drift query): its
	// output is the answer.
	EndAnswered = "Answered"
)

// PlanInput is the input of a plan's execution: the release to plan, as
// the client would upload it, under "plan". A release never has a
// "plan" key, so the machine's first Choice tells the two apart.
type PlanInput struct {
	Plan json.RawMessage `json:"plan"`
}

// DriftInput is the input of a drift query's execution: the
// project-config to compare with what runs, under "drift".
type DriftInput struct {
	Drift DriftQuery `json:"drift"`
}

// DriftQuery names the project-config a drift query is about and, when
// asked, alarms whose state to read there (a pipeline's alarm gate) and
// whether its current release serves (a pipeline's serving gate).
type DriftQuery struct {
	ProjectName string   `json:"project_name"`
	ConfigName  string   `json:"config_name"`
	Alarms      []string `json:"alarms,omitempty"`
	Serving     bool     `json:"serving,omitempty"`
}

// ApprovalInput is the input of an approval query's execution: the
// approval `ferry pipeline approve` gives, under "approval_query" (a
// promotion's state keeps an approval's answer under "approval").
type ApprovalInput struct {
	Approval ApprovalQuery `json:"approval_query"`
}

// ApprovalQuery names the promotion an approval is of (its project and
// first config; the approval names the promotion and the stage) and
// carries the approval as given (a pipeline.Approval, with its identity
// proof).
type ApprovalQuery struct {
	ProjectName string          `json:"project_name"`
	FirstConfig string          `json:"first_config"`
	Given       json.RawMessage `json:"given"`
}

// Request is what every task invocation of the deployer Lambda carries.
type Request struct {
	Task      string          `json:"task"`
	Input     json.RawMessage `json:"input"`
	Execution Context         `json:"execution"`
	// TaskToken is $$.Task.Token, for a task of the callback pattern
	// (RequestApproval).
	TaskToken string `json:"task_token,omitempty"`
}

// Context is the part of the Step Functions context object the handlers use.
// StartTime is the execution's start, from which the timeout is measured and
// against which halt markers are judged fresh.
type Context struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	StartTime time.Time `json:"start_time"`
	// RetryCount is 0 on a task's first attempt and n on its n-th retry
	// ($$.State.RetryCount): the attempt with tuning.TaskRetryMaxAttempts
	// retries behind it is the last.
	RetryCount int `json:"retry_count"`
}

// State is the state document after Validate. It names the release and
// its target; it never carries the release's body.
type State struct {
	ProjectName string `json:"project_name"`
	ConfigName  string `json:"config_name"`
	ReleaseID   string `json:"release_id"`
	// ReleaseSHA256 is the canonical hash of the release Validate accepted.
	ReleaseSHA256 string        `json:"release_sha256"`
	Target        target.Target `json:"target"`
	// Version is the release's version (release.Release.Version), which
	// its deploy events carry.
	Version string `json:"version,omitempty"`
	// StartUnannounced says Release Started is still to be put. Validate
	// sets it on every release it accepts: ValidateResources puts it once
	// the deploy's turn to start in its target has come (a burst of
	// deploys announces its starts spread as their first calls are),
	// before anything in the target changes, and clears it; an outcome
	// announced while it is set (a lock held by another, resources
	// refused) puts it first, so a deploy's first event is its start.
	StartUnannounced bool `json:"start_unannounced,omitempty"`
	// Timeout in seconds, measured from Context.StartTime.
	Timeout int `json:"timeout"`
	// BakeSeconds is the release's bake (release.Release.BakeSeconds).
	BakeSeconds int `json:"bake_seconds,omitempty"`
	// Services are the names of the release's services, sorted.
	Services []string `json:"services"`
	// Deployed is set by Deploy before it creates anything, so the failure
	// path knows there may be something to clean up.
	Deployed bool `json:"deployed,omitempty"`
	// Previous are the names of the project-config's groups and launch
	// templates of other releases when Deploy ran, sorted: what the swap
	// is to retire, named in a FailureDirty outcome when CleanUpSuccess
	// cannot tell what it retired.
	Previous []string `json:"previous,omitempty"`
	// Images are the AMI ids Deploy resolved, by service name: what the
	// current record names as each service's image.
	Images map[string]string `json:"images,omitempty"`
	// Retired are the groups CleanUpSuccess retired (with their launch
	// templates and alarms), sorted: what the client names at the end.
	Retired []string `json:"retired,omitempty"`

	// Resources is ValidateResources' report, read by the state
	// machine's ResourcesValid? choice; Deploy is Deploy's, read by its
	// Deployed? choice.
	Resources *Progress `json:"resources,omitempty"`
	Deploy    *Progress `json:"deploy,omitempty"`
	Health    *Health   `json:"health,omitempty"`
	// Bake is Bake's report, read by the state machine's Baked? choice.
	Bake *Bake `json:"bake,omitempty"`
	// RolledBack are the previous groups a rollback put back in their
	// load balancers, healthy, before the release's own groups left
	// (CleanUpFailure after a bake): what the outcome names as serving
	// again.
	RolledBack []string `json:"rolled_back,omitempty"`
	// Retire is CleanUpSuccess's report on retiring the previous groups,
	// read by the state machine's Retired? choice.
	Retire *Retire `json:"retire,omitempty"`
	Error  *Error  `json:"error,omitempty"`
}

// Progress is the report of a task that runs once unless AWS throttles
// it (ValidateResources, Deploy): whether it is done, else how long to
// wait before it runs again to do the rest. ValidateResources' first
// round may also ask to wait for the deploy's turn among the deploys
// starting together in its target, before any call to AWS.
type Progress struct {
	Done bool `json:"done"`
	// WaitSeconds is how long the state machine waits before the task
	// runs again (0 once Done).
	WaitSeconds int `json:"wait_seconds"`
	// Throttled counts the rounds AWS throttled so far, ValidateResources'
	// and Deploy's together (at most limits.MaxThrottledSteps).
	Throttled int `json:"throttled,omitempty"`
	// Paced says the round left calls for the next only to pace them to
	// an account's request bucket (Deploy's Auto Scaling calls:
	// tuning.AutoScalingCallsPerRound), AWS throttling none.
	Paced bool `json:"paced,omitempty"`
	// Turn is the turn at the account's Auto Scaling calls Deploy's next
	// round holds (package deployer: a round waits for its turn): it
	// makes its calls then, without taking one again.
	Turn *Turn `json:"turn,omitempty"`
}

// Retire is CleanUpSuccess's result: whether the previous groups are
// retired (and the release recorded and the lock released), else how
// long to wait before the next step, and where each group stands.
type Retire struct {
	Done bool `json:"done"`
	// WaitSeconds is how long the state machine waits before
	// CleanUpSuccess takes the next step (0 once Done).
	WaitSeconds int `json:"wait_seconds"`
	// Groups are the previous groups still standing, in name order.
	Groups []RetiringGroup `json:"groups,omitempty"`
	// ActivitiesRead says the step read the new groups' scaling
	// activities for the gate that follows it at once (package deployer:
	// gateReads): that gate, unless it is a retry, reads them again only
	// where its check sees a change.
	ActivitiesRead bool `json:"activities_read,omitempty"`
	// Throttled counts the steps AWS throttled so far, each taken again
	// after a wait (at most limits.MaxThrottledSteps).
	Throttled int `json:"throttled,omitempty"`
	// From is the group a step AWS throttled part-way stopped at, or the
	// first whose attachments a step did not ask for while one before it
	// drained, or that it did not reach within its share of Auto Scaling
	// calls (fleet.Retirement.Next): the next step starts there
	// (fleet.Retirer.From), so every group is reached however few calls
	// a step gets through, and draining groups are asked in turn.
	From string `json:"from,omitempty"`
	// Settling says the previous groups are gone and the swap announced:
	// the steps left settle the new groups, a step's share of Auto
	// Scaling's bucket at a time, then end the release
	// (CleanUpSuccess).
	Settling bool `json:"settling,omitempty"`
	// Underway is the most deploys to the account and region on their
	// way to a healthy fleet a step of the retirement counted beside it:
	// those deploys, once healthy, retire their previous groups beside
	// it, so its steps keep the share of Auto Scaling calls they took
	// beside them (package deployer, retireCalls) to the end.
	Underway int `json:"underway,omitempty"`
	// Restoring are, during a rollback (CleanUpFailure), the previous
	// groups back in (or still in) their load balancers and not all
	// healthy yet: the release's own groups leave only once they are.
	Restoring []RestoringGroup `json:"restoring,omitempty"`
	// Turn is the turn at the account's Auto Scaling calls the next step
	// holds (package deployer: a step waits for its turn): it makes its
	// calls then, without taking one again.
	Turn *Turn `json:"turn,omitempty"`
}

// Turn is a step's turn at its account and region's Auto Scaling calls:
// when it begins, and the most calls the step makes in it (0: as many as
// it needs, no other turn beside it).
type Turn struct {
	At    time.Time `json:"at"`
	Calls int       `json:"calls,omitempty"`
}

// Bake is Bake's result: whether the bake is over (the previous groups
// may be retired), else how long to wait before the next check.
type Bake struct {
	Done bool `json:"done"`
	// WaitSeconds is how long the state machine waits before Bake checks
	// again (0 once Done).
	WaitSeconds int `json:"wait_seconds"`
	// LeftSeconds is how much of the bake is left.
	LeftSeconds int `json:"left_seconds,omitempty"`
	// Standby are the previous groups standing by, at their capacity and
	// out of their load balancers, in name order.
	Standby []string `json:"standby,omitempty"`
	// Detached says every group of Standby has been detached from its
	// load balancers (they may still be draining it).
	Detached bool `json:"detached,omitempty"`
}

// RestoringGroup is where one previous group stands in a rollback: in
// its load balancers, Healthy of its instances passing every one's
// health checks, of the Want it stood by with (after a bake) or its
// service's healthy target (before one).
type RestoringGroup struct {
	Name    string `json:"name"`
	Healthy int    `json:"healthy"`
	Want    int    `json:"want"`
}

// RetiringGroup is where one previous group stands in its retirement.
type RetiringGroup struct {
	Name string `json:"name"`
	// Phase is the step it waits on (the Phase* constants).
	Phase string `json:"phase"`
	// Instances are its instances left, HooksPending those of them in
	// Terminating:Wait (a termination lifecycle hook not completed yet).
	Instances    int `json:"instances"`
	HooksPending int `json:"hooks_pending,omitempty"`
	// Draining is, in PhaseDraining, the kind of attachment (an
	// Attachment* constant) the step saw draining the group or detached
	// it from: the next step asks for that kind only. Empty in
	// PhaseDraining (a report written before it was kept): every kind.
	Draining string `json:"draining,omitempty"`
}

// The kinds of a group's load balancer attachments, as a retirement
// reports them draining (RetiringGroup.Draining).
const (
	// AttachmentClassic: classic load balancers (Auto Scaling's
	// DescribeLoadBalancers).
	AttachmentClassic = "classic_load_balancers"
	// AttachmentTargetGroups: target groups (Auto Scaling's
	// DescribeLoadBalancerTargetGroups).
	AttachmentTargetGroups = "target_groups"
	// AttachmentAll: both kinds.
	AttachmentAll = "all"
)

// The phases of a group's retirement, in order.
const (
	// PhaseDraining: detached from its load balancers, which are still
	// draining its instances (classic ELB connection draining, target
	// group deregistration delay).
	PhaseDraining = "draining"
	// PhaseScalingIn: out of every load balancer, scaled to zero; its
	// instances are terminating (termination lifecycle hooks running).
	PhaseScalingIn = "scaling_in"
	// PhaseDeleting: empty, or past the retirement's time bound; deleted
	// next.
	PhaseDeleting = "deleting"
)

// Health is CheckHealthy's result.
type Health struct {
	// Healthy says every service is stable at its whole capacity: the
	// release may bake and retire the previous one.
	Healthy bool `json:"healthy"`
	// NextStep says every service is stable at its step and some service
	// of a canary (release.Rollout) has a step left: NextStep takes it.
	NextStep bool `json:"next_step"`
	// WaitSeconds is how long the state machine waits before the next check.
	WaitSeconds int `json:"wait_seconds"`
	// Checks counts the health checks made so far: the pacing's budget
	// (package pacing).
	Checks int `json:"checks,omitempty"`
	// Throttled is the health checks' backoff: one more for each check
	// AWS throttled, one less for each it did not, and each wait is
	// doubled that many times (see CheckHealthy). A throttled check
	// learned nothing, so it is not healthy and its report is the
	// previous check's.
	Throttled int `json:"throttled,omitempty"`
	// ReadsRefill is when the account's load balancer Describe bucket
	// would be full again after the checks' own reads so far (package
	// deployer, readBudget); nil before the first check.
	ReadsRefill *time.Time `json:"reads_refill,omitempty"`
	// Underway is how many other deploys to the account and region were
	// on their way to a healthy fleet at the last check (Deploy's count
	// before the first): the checks' load balancer reads take their share
	// of the account's Describe bucket beside them (package deployer,
	// readBudget). 0 once a check counted none, or when Deploy did: the
	// checks of a deploy that went alone never count again.
	Underway int `json:"underway,omitempty"`
	// Services is the per-service report the client shows, keyed by
	// service name.
	Services map[string]ServiceHealth `json:"services"`
	// Analysis is the canary analysis of this check (release.Analysis);
	// nil without one, or while no service has a previous group to be
	// compared with.
	Analysis *Analysis `json:"analysis,omitempty"`
}

// Analysis is one judgement of a release's canary analysis: the report
// of the service judged worst (lowest score; ties by name), which
// classifies the release, and every judged service's score. The whole
// state stays small whatever the number of services: one service's
// metrics.
type Analysis struct {
	At time.Time `json:"at"`
	// Bake says it was judged during the bake (the previous groups'
	// samples are those of the window before they stood by).
	Bake    bool            `json:"bake,omitempty"`
	Service string          `json:"service"`
	Report  analysis.Report `json:"report"`
	// Scores are each judged service's score; a service without data is
	// left out.
	Scores map[string]float64 `json:"scores,omitempty"`
}

// ServiceHealth is one service's new group at a health check: its
// instance counts, and how long it has held its healthy target.
type ServiceHealth struct {
	Launched    int `json:"launched"`
	Healthy     int `json:"healthy"`
	Terminating int `json:"terminating"`
	// InService counts the launched instances Auto Scaling has put in
	// service, healthy in their load balancers or not yet.
	InService int `json:"in_service,omitempty"`
	// Target is how many healthy instances make the service healthy.
	Target int `json:"target"`
	// Desired is the capacity the service runs once the release is
	// healthy. The new ASG launches more (the spread); CleanUpSuccess
	// scales it back to Desired, so capacity does not creep up from one
	// release to the next.
	Desired int `json:"desired,omitempty"`
	// Launch is the new group's capacity as Deploy created it (ferry's own
	// launch count): CleanUpSuccess scales back from it.
	Launch int `json:"launch,omitempty"`
	// Terminated counts the new group's instances that terminated since
	// it was created, from its scaling activities: max_terms applies to
	// it.
	Terminated int `json:"terminated,omitempty"`
	// ActivitiesAt is when the newest of the new group's scaling
	// activities started at their last read (fleet.Activities.Latest;
	// the zero time when it had none), nil while they were never read:
	// the swap's gate reads them again only when one is in progress or
	// started since (an instance launched or terminated), so Terminated
	// is exact there.
	ActivitiesAt *time.Time `json:"activities_at,omitempty"`
	// Rebalancing counts the instances of Terminating that Capacity
	// Rebalancing is terminating after it launched their replacement (a
	// Spot instance at risk of interruption): the service lost no
	// capacity, so max_terms does not count them; they still restart the
	// stability window, as any change of its instances does.
	Rebalancing int `json:"rebalancing,omitempty"`
	// StableSeconds is the service's stability window: how long it must
	// hold its target, with no instance terminated or replaced, before
	// the previous release is retired.
	StableSeconds int `json:"stable_seconds,omitempty"`
	// HealthySince is when the service last reached its target with
	// nothing terminated or replaced since, as of the end of the reads
	// of the check that saw it (health.Track); nil while below it.
	HealthySince *time.Time `json:"healthy_since,omitempty"`
	// Instances is a digest of the ids of the new group's instances that
	// are not terminating, to notice a change between two checks.
	Instances string `json:"instances,omitempty"`
	// Confirmed says the service is stable on a check that asked its load
	// balancers once its stability window was over (not on a healthy
	// count carried on): later checks carry its count on while its
	// instances stay the same, none terminating. CheckHealthy judges a
	// service stable only once it is.
	Confirmed bool `json:"confirmed,omitempty"`
	// Step is, for a service rolled out in steps (release.Rollout), the
	// step its new group is at, from 1 to Steps (package capacity's
	// Stages); 0 without a rollout. Target is the step's.
	Step  int `json:"step,omitempty"`
	Steps int `json:"steps,omitempty"`
	// StepDesired is the new group's desired capacity at its step (0
	// without a rollout).
	StepDesired int `json:"step_desired,omitempty"`
	// ReadySeconds is the fastest boot seen for the service's image: the
	// time from an execution's start to the first check that saw one of
	// its new group's instances healthy, in whole seconds rounded up; the
	// current record's (same image) from Deploy, lowered by this
	// deploy's. The current record keeps it; it paces the next deploy's
	// first check (0: none seen).
	ReadySeconds int `json:"ready_seconds,omitempty"`
	// Missing says AWS did not show the new group at this check (it is
	// eventually consistent after a create): the counts are unknown, not
	// zero, and the stability window neither advances nor restarts.
	Missing bool `json:"missing,omitempty"`
}

// Error is what a Catch stores at $.error. For a handler's error, Error
// is its registry name and Cause the Lambda function error payload as JSON
// ({"errorMessage": ..., "errorType": ...}), as AWS reports it; read the
// message with failure.Message.
type Error struct {
	Error string `json:"Error"`
	Cause string `json:"Cause"`
}

// Plan is what a deploy of a release would do if it started now: the
// Plan task's answer, a plan execution's output. The handlers compute it
// with the deploy's own code (resolution, capacity, the previous groups)
// and change nothing: no lock, no record, nothing in the target.
type Plan struct {
	ProjectName string        `json:"project_name"`
	ConfigName  string        `json:"config_name"`
	Target      target.Target `json:"target"`
	// Proceed says a deploy started now would go ahead; Refusals are
	// every reason it would be refused otherwise, each "path: message"
	// as a *failure.BadReleaseError says it; while another release holds
	// the lock, its deploy under way is the one refusal.
	Proceed  bool     `json:"proceed"`
	Refusals []string `json:"refusals"`
	// Deployed is the release deployed now, "" when none is.
	Deployed string `json:"deployed,omitempty"`
	// Groups are the groups the deploy would create, in service order.
	Groups []PlannedGroup `json:"groups"`
	// Retire are the groups the swap would retire (every group of the
	// config another release made, not being deleted), those in the
	// release's target sorted, then those of Elsewhere; Remove the
	// services among them the release does not deploy. Retire, Remove,
	// Elsewhere and Detach are empty when the deploy would be refused: it
	// would never reach its swap.
	Retire []string `json:"retire"`
	Remove []string `json:"remove"`
	// Elsewhere are those of Retire in other environments than the
	// release's (a move's old one), by environment.
	Elsewhere []TargetGroups `json:"elsewhere,omitempty"`
	// Detach are the load balancers the swap takes a service it deploys
	// out of ("web leaves classic load balancer b", "web leaves target
	// group tg"): those its serving groups are attached to that the
	// release no longer names for it, named under its detach (one not
	// named there is a refusal).
	Detach []string `json:"detach,omitempty"`
	// Changes are how the release differs from the one deployed now.
	Changes []Change `json:"changes"`
}

// TargetGroups are groups of a project-config (with the launch
// templates named after them) in one target environment.
type TargetGroups struct {
	Target target.Target `json:"target"`
	Groups []string      `json:"groups"`
}

// PlannedGroup is one group a deploy would create: its capacity as
// package capacity computes it from the previous group, and what its
// launch template would hold, resolved in the target.
type PlannedGroup struct {
	Service string `json:"service"`
	Group   string `json:"group"`
	// Launch is the group's first desired capacity (the first canary
	// step's when the service has a rollout), HealthyTarget the healthy
	// instances that step needs, Desired what the service settles to
	// after the swap, within Min and Max.
	Launch        int `json:"launch"`
	HealthyTarget int `json:"healthy_target"`
	Desired       int `json:"desired"`
	Min           int `json:"min"`
	Max           int `json:"max"`
	// Steps is the number of canary steps (0: all at once).
	Steps   int    `json:"steps,omitempty"`
	ImageID string `json:"image_id,omitempty"`
	// InstanceType is what the group runs: its instance type, or its
	// mixed instances policy in one line (release.Service.Runs).
	InstanceType string `json:"instance_type"`
	// Subnets are subnet ids; LoadBalancers classic load balancer names;
	// TargetGroups target group ARNs.
	Subnets       []string `json:"subnets"`
	LoadBalancers []string `json:"load_balancers,omitempty"`
	TargetGroups  []string `json:"target_groups,omitempty"`
	// UserDataSHA256 is the hex SHA-256 of its rendered user data.
	UserDataSHA256 string `json:"user_data_sha256"`
}

// Change is one way a release differs from the one deployed now: Field
// of Service ("" for the release as a whole) goes From one value To
// another ("" for absent).
type Change struct {
	Service string `json:"service,omitempty"`
	Field   string `json:"field"`
	From    string `json:"from"`
	To      string `json:"to"`
}

// Drift kinds: how what runs differs from what ferry deployed.
const (
	// DriftGroupMissing: a group of the current release is gone (or
	// being deleted).
	DriftGroupMissing = "group_missing"
	// DriftExtraGroup: a group tagged with the project-config that the
	// current release did not make, in its environment or in another
	// the config deployed to (DriftItem.Target).
	DriftExtraGroup = "extra_group"
	// DriftCapacity: min or max differ from the release's, or desired is
	// outside them, or (without scaling policies) differs from what the
	// deploy settled.
	DriftCapacity = "capacity"
	// DriftLaunchTemplate: the group launches from another launch
	// template or version than the one ferry made.
	DriftLaunchTemplate = "launch_template"
	// DriftUnhealthy: instances of the group unhealthy or missing from
	// its load balancers for longer than the threshold.
	DriftUnhealthy = "unhealthy"
	// DriftLoadBalancers: the group's classic load balancers or target
	// groups differ from the release's.
	DriftLoadBalancers = "load_balancers"
	// DriftMixedInstances: the group's mixed instances policy (its
	// instance types and weights or instance requirements, its On-Demand
	// and Spot split and strategies, Capacity Rebalancing) differs from
	// the release's, or one has none.
	DriftMixedInstances = "mixed_instances"
)

// Drift is a drift query's answer: how what runs in a project-config
// differs from its current record, each difference with when the
// deployer first saw it.
type Drift struct {
	ProjectName string        `json:"project_name"`
	ConfigName  string        `json:"config_name"`
	Target      target.Target `json:"target"`
	// Deployed is the current release, "" when nothing is deployed
	// (then nothing is compared).
	Deployed  string    `json:"deployed,omitempty"`
	CheckedAt time.Time `json:"checked_at"`
	// Drifts are the differences, by group then kind; Settling are
	// unhealthy instances not yet past the threshold.
	Drifts   []DriftItem `json:"drifts"`
	Settling []DriftItem `json:"settling,omitempty"`
	// Alarms are the states of the alarms the query named, in its
	// order, read as the deployed release's session: a CloudWatch state
	// (OK, ALARM, INSUFFICIENT_DATA) or AlarmMissing.
	Alarms []AlarmState `json:"alarms,omitempty"`
	// Serving is whether the deployed release serves, as the promotion
	// gate reads it, when the query asked (nil otherwise, and when
	// nothing is deployed).
	Serving *pipeline.ServingReading `json:"serving,omitempty"`
	// InFlight is the deploy under way (a release holds the lock), nil
	// when none is: the groups it acts on are reported there, not
	// compared as drift.
	InFlight *InFlight `json:"in_flight,omitempty"`
}

// What a deploy under way does with a group (InFlightGroup.State).
const (
	// InFlightDeploying: a group the release holding the lock made,
	// while it deploys (launching, judged, serving before its swap ends).
	InFlightDeploying = "deploying"
	// InFlightStandingBy: a previous group the lock holder's bake took
	// out of its load balancers on purpose, at its capacity, ready to
	// serve again on a rollback (its standby record).
	InFlightStandingBy = "standing_by"
	// InFlightRetiring: a group the lock holder retires: the previous
	// groups its swap retires (its deleting record), or its own after a
	// failure (its deploying record).
	InFlightRetiring = "retiring"
)

// InFlight is the deploy under way in a project-config as a drift query
// read it: the release holding the lock, since when, and what it does
// with each group of the config it acts on. Unknown says why the lock or
// that release's records could not be read: then no group is taken for
// the deploy's, and every difference is reported as drift (fail closed).
type InFlight struct {
	ReleaseID string          `json:"release_id,omitempty"`
	Since     time.Time       `json:"since,omitzero"`
	Unknown   string          `json:"unknown,omitempty"`
	Groups    []InFlightGroup `json:"groups,omitempty"`
}

// InFlightGroup is one group a deploy under way acts on: what it does
// with it (InFlight*), its service and its name.
type InFlightGroup struct {
	State   string `json:"state"`
	Service string `json:"service,omitempty"`
	Group   string `json:"group"`
}

// AlarmState is an alarm's state as a drift query read it.
type AlarmState struct {
	Name  string `json:"name"`
	State string `json:"state"`
}

// AlarmMissing is the state of an alarm a drift query did not find.
const AlarmMissing = "missing"

// DriftItem is one difference: its kind (Drift*), the service and group
// it is about, what differs in words, and since when the deployer has
// seen it.
type DriftItem struct {
	Kind    string    `json:"kind"`
	Service string    `json:"service,omitempty"`
	Group   string    `json:"group"`
	What    string    `json:"what"`
	Since   time.Time `json:"since"`
	// Target is the environment of Group when it is not the current
	// release's: a group left where the config no longer deploys.
	Target *target.Target `json:"target,omitempty"`
	// Settle is how much longer than tuning.DriftUnhealthyAfter an
	// unhealthy instance settles before it is drift: the time a launching
	// lifecycle hook may hold it in Pending:Wait. Each query works it out
	// again; it is not recorded.
	Settle time.Duration `json:"-"`
}

// Key identifies a drift across checks: the same kind of the same group
// saying the same thing.
func (i DriftItem) Key() string { return i.Kind + "\x00" + i.Group + "\x00" + i.What }

// ReconcileInput is the input of a reconcile pass's execution (what the
// schedule starts: {"reconcile_pass": {}}), and the state between its pages.
type ReconcileInput struct {
	Reconcile Reconcile `json:"reconcile_pass"`
}

// Reconcile is a reconcile pass so far: where it is among the
// project-configs, and what it found and did. Lists are bounded
// (limits.MaxReconcileReport); the counts are not.
type Reconcile struct {
	// After is the last project-config checked ("project config"); the
	// next page starts after it. "" starts the pass.
	After string `json:"after,omitempty"`
	// Done says every project-config was checked; WaitSeconds is the wait
	// before the next page (0: at once).
	Done        bool `json:"done"`
	WaitSeconds int  `json:"wait_seconds"`
	// Checked counts the project-configs checked, Drifted those with
	// drift, Failed those whose check failed.
	Checked int `json:"checked"`
	Drifted int `json:"drifted"`
	Failed  int `json:"failed"`
	// Collected counts the assets deleted from the deployer bucket.
	Collected int `json:"collected"`
	// Healed are the heals started; Errors say why checks failed
	// ("project config: error").
	Healed []Heal   `json:"healed,omitempty"`
	Errors []string `json:"errors,omitempty"`
}

// Heal is a heal a reconcile pass started: a new release deploying the
// content of the current one again.
type Heal struct {
	ProjectName string `json:"project_name"`
	ConfigName  string `json:"config_name"`
	// Of is the current release whose content is deployed again;
	// ReleaseID the heal's own release, Execution its execution.
	Of        string `json:"of"`
	ReleaseID string `json:"release_id"`
	Execution string `json:"execution"`
	// Why is the drift that called for it.
	Why string `json:"why"`
}

// PromotionInput is the input of a promotion's execution: the request as
// the client stored it (pipeline.Request), under "promotion".
type PromotionInput struct {
	Promotion json.RawMessage `json:"promotion"`
}

// Promotion is a promotion's state document after Promote: which
// promotion, the stage it is at, and the reports of its tasks. It never
// carries the pipeline or the release.
type Promotion struct {
	ProjectName string `json:"project_name"`
	// FirstConfig is the config of the pipeline's first stage, under
	// which the request and the record are kept.
	FirstConfig   string `json:"first_config"`
	PromotionID   string `json:"promotion_id"`
	RequestSHA256 string `json:"request_sha256"`
	// Stage is the index of the stage the promotion is at.
	Stage  int `json:"stage"`
	Stages int `json:"stages"`
	// Gate is Gate's report on the stage; Targets the wave's items once
	// it is open (the indexes of the stage's targets).
	Gate    *Gate `json:"gate,omitempty"`
	Targets []int `json:"targets,omitempty"`
	// Wave is the Map's result: each target's nested execution's status.
	Wave []WaveResult `json:"wave,omitempty"`
	// End is EndStage's report.
	End   *StageEnd `json:"end,omitempty"`
	Error *Error    `json:"error,omitempty"`
}

// Gate is Gate's report: the stage may deploy (Open), waits for a
// person's approval (Approval), or waits WaitSeconds and is checked
// again. Done is Open, for the loop's Choice.
type Gate struct {
	Open        bool     `json:"done"`
	Approval    bool     `json:"approval"`
	WaitSeconds int      `json:"wait_seconds"`
	Held        []string `json:"held,omitempty"`
}

// WaveTarget is a wave's item as StartTarget gets it: the promotion and
// the index of the target in the stage.
type WaveTarget struct {
	Promotion Promotion `json:"promotion"`
	Target    int       `json:"target"`
}

// TargetStart is StartTarget's result: the nested execution's name and
// input (the release, as stored).
type TargetStart struct {
	Name    string          `json:"name"`
	Release json.RawMessage `json:"release"`
}

// WaveResult is how one target's nested execution ended, as the wave saw
// it (EndStage reads the deploy's own records).
type WaveResult struct {
	Status string `json:"status,omitempty"`
	Error  string `json:"error,omitempty"`
}

// StageEnd is EndStage's report: Done when the last stage succeeded.
type StageEnd struct {
	Done bool `json:"done"`
}
