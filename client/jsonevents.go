package main

import (
	"slices"
	"time"

	"github.com/ferryhq/ferry/internal/events"

	"github.com/ferryhq/ferry/internal/buildinfo"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/local/sim"
)

// The kinds of object ferry prints under --json. Every one is in
// eventKinds, and so in ferry schema events; its body type is the
// definition.
var (
	evMessage = kindOf[messageEvent]("message", "A line for people: what the command is doing, as text mode says it.")
	evWaiting = kindOf[waitingEvent]("waiting", "Nothing changed: printed at least every 30 seconds while ferry waits (for the deploy, or for a lock).")
	evError   = kindOf[jsonFailure]("error", "The command failed: its exit code and why. The last object it prints.")
	evRelease = kindOf[releaseEvent]("release", "Which release and execution a deploy, rollback, destroy or promote is about: the first event of its stream.")

	evStarted   = kindOf[eventHead]("started", "The execution started.")
	evState     = kindOf[stateEvent]("state", "The execution entered a state.")
	evHealth    = kindOf[healthEvent]("health", "A health check whose counts differ from the last: every service's counts, each key always present.")
	evStep      = kindOf[stepEvent]("step", "A canary took its next step: the services' steps, targets and desired capacities.")
	evRetire    = kindOf[retireEvent]("retire", "Where the retirement of the previous groups (or a rollback's restoring of them) stands.")
	evBake      = kindOf[bakeEvent]("bake", "The bake under way: the previous groups standing by and the seconds left.")
	evThrottled = kindOf[throttledEvent]("throttled", "AWS throttled a task's calls: it goes on after wait_seconds.")
	evTaskError = kindOf[taskErrorEvent]("task_error", "A task failed with an error (it may be retried or caught).")
	evOutcome   = kindOf[outcomeEvent]("outcome", "The execution ended: how, the exit code the command exits with, and the groups a success created and retired. The last event of a deploy's stream.")

	evHalted         = kindOf[haltEvent]("halted", "ferry halt wrote the halt marker and halts the running deploy named; its outcome follows unless --no-wait.")
	evNothingRunning = kindOf[haltEvent]("nothing_running", "ferry halt wrote the halt marker and no deploy runs: it stops none (exit code 0).")

	evPipelineRegistered = kindOf[pipelineEvent]("pipeline_registered", "ferry pipeline register registered the pipeline in its configs.")
	evPromotionStarted   = kindOf[pipelineEvent]("promotion_started", "ferry pipeline start started a promotion.")
	evPromotionApproved  = kindOf[pipelineEvent]("promotion_approved", "ferry pipeline approve approved a stage of a promotion.")
	evPromotionHalted    = kindOf[pipelineEvent]("promotion_halted", "ferry pipeline halt halted a promotion.")

	evPromotion      = kindOf[pipelineEvent]("promotion", "Which promotion ferry follow PROMOTION_ID follows: the first event of its stream; each stage's deploys follow as a deploy's stream (release ... outcome).")
	evPromotionStage = kindOf[promotionStageEvent]("promotion_stage", "A stage of the promotion followed changed: waiting at its gates (held: what holds it, a soak's time left among them), waiting for an approval, approved, deploying, succeeded, failed or halted.")
	evPromotionEnd   = kindOf[promotionEndEvent]("promotion_end", "The promotion followed ended: its status, why, and the exit code ferry follow exits with. The last event of a promotion's stream.")

	evValidate         = kindOf[validateDoc]("validate", "The result of ferry validate: each file's problems.")
	evPlan             = kindOf[execution.Plan]("plan", "The result of ferry plan: what a deploy of the release would do.")
	evStatus           = kindOf[projectStatus]("status", "The result of ferry status: what is deployed of a project and how it drifted.")
	evHistory          = kindOf[historyDoc]("history", "The result of ferry history: a config's releases, newest first.")
	evShow             = kindOf[releaseDetail]("show", "The result of ferry show: one release, its outcome and its groups.")
	evList             = kindOf[listDoc]("list", "The result of ferry list: every project-config the deployer knows.")
	evVersion          = kindOf[buildinfo.Info]("version", "The result of ferry version.")
	evPipelineValidate = kindOf[pipelineValidation]("pipeline_validate", "The result of ferry pipeline validate.")
	evPipelineStatus   = kindOf[pipelineStatus]("pipeline_status", "The result of ferry pipeline status: its stages and promotions.")
	evWorld            = kindOf[sim.Snapshot]("world", "The result of ferry local world: the local region's simulated world.")
)

// eventKinds is every kind of object ferry prints under --json, then
// every deploy event's detail (deployEventKinds), in the order ferry
// schema events lists them.
var eventKinds = slices.Concat([]eventKind{
	evMessage, evWaiting, evError, evRelease,
	evStarted, evState, evHealth, evStep, evRetire, evBake, evThrottled, evTaskError, evOutcome,
	evHalted, evNothingRunning,
	evPipelineRegistered, evPromotionStarted, evPromotionApproved, evPromotionHalted,
	evPromotion, evPromotionStage, evPromotionEnd,
	evValidate, evPlan, evStatus, evHistory, evShow, evList, evVersion, evPipelineValidate, evPipelineStatus, evWorld,
}, deployEventKinds())

// deployEventKinds are the details of the deploy events the deployer
// puts on EventBridge (package events, whose types are their
// definitions): each detail is an object of ferry schema events, its
// "event" the kind's name, and ferry local events --json prints them.
func deployEventKinds() []eventKind {
	var kinds []eventKind
	for _, k := range events.Kinds {
		kinds = append(kinds, eventKind{name: k.Name, about: "Deploy event, detail-type \"" + k.DetailType + "\" (source \"ferry\"): " + k.About, body: k.Body, keys: events.KeyDocs})
	}
	return kinds
}

// eventKeyDocs say what the keys of ferry's --json objects mean, by
// name (ferry schema events): the keys of the objects themselves, not of
// those within them.
var eventKeyDocs = map[string]string{
	"id":              "The id of the execution history event the event comes from.",
	"at":              "When it happened (the history event's time).",
	"elapsed_seconds": "Seconds since the execution started.",
	"state":           "The state of the state machine the execution is in.",
	"exit_code":       "The exit code the command exits with (ferry help exit-codes).",
	"exit":            "The exit code's name in the exit-code table.",
	"error":           "The deployer's name of the error (BadReleaseError, LockExistsError, HaltError, ...).",
	"cause":           "What the error says.",
	"message":         "What ferry says, for people.",
	"project":         "The project (ORG/NAME).",
	"config":          "The config.",
	"release_id":      "The release's id.",
	"execution_arn":   "The Step Functions execution's ARN.",
	"status":          "The execution's status as Step Functions reports it (SUCCEEDED, FAILED, ...), or a promotion's.",
	"end":             "The end state the deploy reached: Success, FailureClean or FailureDirty; empty when none.",
	"healthy":         "Whether every service reached its target.",
	"services":        "Each service's counts, by name: every key present, zero or not.",
	"analysis":        "The canary analysis of a health or bake check, when it changed: the service judged worst, its score and class, each metric's verdict, p-value, means and samples, and every service's score.",
	"holder":          "The release holding the lock, its execution and since when.",
	"created_groups":  "The Auto Scaling groups the deploy created.",
	"retired_groups":  "The Auto Scaling groups the deploy retired.",
	"problems":        "An invalid release's problems: where, and what is wrong.",
}

// messageEvent is a line for people.
type messageEvent struct {
	Message string `json:"message"`
}

// waitingEvent says ferry waits, and for what.
type waitingEvent struct {
	ElapsedSeconds float64 `json:"elapsed_seconds"`
	Waiting        string  `json:"waiting"`
}

// releaseEvent names the release a deploying command is about.
type releaseEvent struct {
	Project   string `json:"project"`
	Config    string `json:"config"`
	ReleaseID string `json:"release_id"`
	Execution string `json:"execution_arn"`
}

// eventHead is what every event of a followed execution carries: the id
// of the history event it comes from, when it happened and how long after
// the execution started.
type eventHead struct {
	ID             int64     `json:"id"`
	At             time.Time `json:"at"`
	ElapsedSeconds float64   `json:"elapsed_seconds"`
}

type stateEvent struct {
	eventHead
	State string `json:"state"`
}

// healthEvent is a health report: Healthy says every service reached its
// target.
type healthEvent struct {
	eventHead
	State    string         `json:"state"`
	Healthy  bool           `json:"healthy"`
	Services []serviceEvent `json:"services"`
	// Analysis is the check's canary analysis when it differs from the
	// last shown.
	Analysis *execution.Analysis `json:"analysis,omitempty"`
}

type stepEvent struct {
	eventHead
	State    string         `json:"state"`
	Services []serviceEvent `json:"services"`
}

// serviceEvent is one service's counts in a health or step event, every
// key present, zero or not.
type serviceEvent struct {
	Name        string `json:"name"`
	Launched    int    `json:"launched"`
	Healthy     int    `json:"healthy"`
	InService   int    `json:"in_service"`
	Terminating int    `json:"terminating"`
	Target      int    `json:"target"`
	Desired     int    `json:"desired"`
	Terminated  int    `json:"terminated"`
	// StableSeconds is the service's stability window; HealthySince when
	// it last reached its target (null while below it).
	StableSeconds int        `json:"stable_seconds"`
	HealthySince  *time.Time `json:"healthy_since"`
	// Step and Steps are a canary's step (0 of 0 without one),
	// StepDesired its group's desired capacity at the step.
	Step        int `json:"step"`
	Steps       int `json:"steps"`
	StepDesired int `json:"step_desired"`
	// Missing says AWS did not show the new group: the counts are unknown.
	Missing bool `json:"missing"`
}

type retireEvent struct {
	eventHead
	State     string                     `json:"state"`
	Retiring  []retiringGroup            `json:"retiring"`
	Restoring []execution.RestoringGroup `json:"restoring"`
}

// retiringGroup is a previous group still standing and its phase.
type retiringGroup struct {
	Name         string `json:"name"`
	Phase        string `json:"phase"`
	Instances    int    `json:"instances"`
	HooksPending int    `json:"hooks_pending"`
}

type bakeEvent struct {
	eventHead
	State       string   `json:"state"`
	LeftSeconds int      `json:"left_seconds"`
	Standby     []string `json:"standby"`
	// Analysis is the bake check's canary analysis when it differs from
	// the last shown.
	Analysis *execution.Analysis `json:"analysis,omitempty"`
}

type throttledEvent struct {
	eventHead
	State       string `json:"state"`
	WaitSeconds int    `json:"wait_seconds"`
}

type taskErrorEvent struct {
	eventHead
	State string `json:"state"`
	Error string `json:"error"`
	Cause string `json:"cause"`
}

// outcomeEvent is how the execution ended: Status is Step Functions',
// End the end state reached ("" when none was), Error and Cause why it
// failed; CreatedGroups and RetiredGroups the groups a success created
// and retired (empty otherwise).
type outcomeEvent struct {
	eventHead
	Status        string   `json:"status"`
	End           string   `json:"end"`
	Error         string   `json:"error"`
	Cause         string   `json:"cause"`
	ExitCode      int      `json:"exit_code"`
	CreatedGroups []string `json:"created_groups"`
	RetiredGroups []string `json:"retired_groups"`
}

// progressEvent is the --json event of u: its kind and body. groups are
// the groups a success created and retired (outcome only).
func progressEvent(u progress, exitCode int, created, retired []string) (eventKind, any) {
	head := eventHead{ID: u.ID, At: u.At, ElapsedSeconds: u.Elapsed.Seconds()}
	switch u.Event {
	case updateStarted:
		return evStarted, head
	case updateHealth:
		return evHealth, healthEvent{eventHead: head, State: u.State, Healthy: u.Healthy, Services: serviceEvents(u.Services), Analysis: u.Analysis}
	case updateStep:
		return evStep, stepEvent{eventHead: head, State: u.State, Services: serviceEvents(u.Services)}
	case updateRetire:
		ev := retireEvent{eventHead: head, State: u.State, Retiring: []retiringGroup{}, Restoring: nonNil(u.Restoring)}
		for _, g := range u.Retiring {
			ev.Retiring = append(ev.Retiring, retiringGroup{Name: g.Name, Phase: g.Phase, Instances: g.Instances, HooksPending: g.HooksPending})
		}
		return evRetire, ev
	case updateBake:
		ev := bakeEvent{eventHead: head, State: u.State, Standby: []string{}, Analysis: u.Analysis}
		if u.Bake != nil {
			ev.LeftSeconds, ev.Standby = u.Bake.LeftSeconds, nonNil(u.Bake.Standby)
		}
		return evBake, ev
	case updateThrottled:
		return evThrottled, throttledEvent{eventHead: head, State: u.State, WaitSeconds: u.WaitSeconds}
	case updateError:
		return evTaskError, taskErrorEvent{eventHead: head, State: u.State, Error: u.Error, Cause: u.Cause}
	case updateOutcome:
		return evOutcome, outcomeEvent{eventHead: head, Status: u.Status, End: u.End, Error: u.Error, Cause: u.Cause,
			ExitCode: exitCode, CreatedGroups: nonNil(created), RetiredGroups: nonNil(retired)}
	}
	return evState, stateEvent{eventHead: head, State: u.State}
}

// serviceEvents are the service lines of a health or step event.
func serviceEvents(services []serviceCounts) []serviceEvent {
	out := make([]serviceEvent, 0, len(services))
	for _, s := range services {
		out = append(out, serviceEvent{Name: s.Name, Launched: s.Launched, Healthy: s.Healthy, InService: s.InService,
			Terminating: s.Terminating, Target: s.Target, Desired: s.Desired, Terminated: s.Terminated,
			StableSeconds: s.StableSeconds, HealthySince: s.HealthySince, Step: s.Step, Steps: s.Steps,
			StepDesired: s.StepDesired, Missing: s.Missing})
	}
	return out
}

// nonNil is s, or an empty slice for nil: a JSON array, never null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// haltEvent is what ferry halt did: the marker it wrote (by whom, why)
// and the deploy it halts (halted), or exit code 0 when none runs
// (nothing_running).
type haltEvent struct {
	Project   string `json:"project"`
	Config    string `json:"config"`
	By        string `json:"by"`
	Reason    string `json:"reason"`
	ReleaseID string `json:"release_id,omitempty"`
	Execution string `json:"execution_arn,omitempty"`
	ExitCode  *int   `json:"exit_code,omitempty"`
}
