package events

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"
)

// Source is the source of every event ferry puts; the deploy role may put
// no other (the events:source condition).
const Source = "ferry"

// Version is the schema_version of every detail. It goes up when a key is
// removed or renamed or changes meaning; a new kind or a new key keeps it.
const Version = 1

// Kind is one kind of deploy event.
type Kind struct {
	// DetailType is the event's detail-type, what EventBridge rules
	// match ("Release Succeeded").
	DetailType string
	// Name is the detail's "event" ("release_succeeded").
	Name string
	// About says when the event is put.
	About string
	// Body is the Go type of the detail's keys after schema_version and
	// event: Head and the kind's own.
	Body reflect.Type
}

func kind[T any](detailType, about string) Kind {
	return Kind{DetailType: detailType, Name: strings.ToLower(strings.ReplaceAll(detailType, " ", "_")), About: about, Body: reflect.TypeFor[T]()}
}

// The kinds of deploy event, each put by the task that makes its fact true.
var (
	Started          = kind[StartedDetail]("Release Started", "Validate accepted the release: its deploy starts.")
	Refused          = kind[RefusedDetail]("Release Refused", "Validate refused the release: nothing was changed.")
	Healthy          = kind[HealthyDetail]("Release Healthy", "CheckHealthy found every service of the new groups at its target, the last canary step's included.")
	CanaryStep       = kind[CanaryStepDetail]("Canary Step", "NextStep took a service's canary to its next step.")
	Baked            = kind[BakedDetail]("Release Baked", "Bake's window passed with the new groups healthy.")
	Swapped          = kind[SwappedDetail]("Release Swapped", "CleanUpSuccess retired the previous groups: the new groups alone serve.")
	RolledBack       = kind[RolledBackDetail]("Release Rolled Back", "CleanUpFailure removed what the release made and left (or put back) the previous groups serving.")
	Succeeded        = kind[SucceededDetail]("Release Succeeded", "The release's outcome is a success: the deploy ends at Success.")
	Failed           = kind[FailedDetail]("Release Failed", "The release's outcome is a failure: the deploy ends at FailureClean or FailureDirty.")
	Halted           = kind[HaltedDetail]("Release Halted", "A halt marker stopped the deploy; Release Failed follows.")
	DriftFound       = kind[DriftDetail]("Drift Found", "A drift query found the config's groups other than its current record says.")
	Healed           = kind[HealDetail]("Heal Started", "A reconcile pass started an execution to heal a config.")
	StageReached     = kind[StageDetail]("Stage Reached", "A promotion's stage's gates held: its deploys start (the release's and account's of its first target).")
	ApprovalWaiting  = kind[ApprovalDetail]("Approval Requested", "A promotion waits for a person to approve its next stage.")
	ApprovalReceived = kind[ApprovalDetail]("Stage Approved", "A promotion's stage was approved by a person its pipeline names.")
)

// Kinds are every kind of deploy event, in the order ferry schema events
// lists them.
var Kinds = []Kind{Started, Refused, Healthy, CanaryStep, Baked, Swapped, RolledBack, Succeeded, Failed, Halted,
	DriftFound, Healed, StageReached, ApprovalWaiting, ApprovalReceived}

// Head is what every detail says: which fact, of which release, found by
// which task of which execution, in which environment.
type Head struct {
	// ID is the event's deterministic id (NewID): the same on every
	// retry of the task that puts it.
	ID           string    `json:"id"`
	Project      string    `json:"project"`
	Config       string    `json:"config"`
	ReleaseID    string    `json:"release_id"`
	Version      string    `json:"version"`
	ExecutionARN string    `json:"execution_arn"`
	Task         string    `json:"task"`
	Account      string    `json:"account"`
	Region       string    `json:"region"`
	At           time.Time `json:"at"`
}

// KeyDocs say what the keys of a detail mean, by name (ferry schema
// events).
var KeyDocs = map[string]string{
	"id": "The event's id, the same each time the deployer puts this event (a task retried puts it again): " +
		"a consumer that has seen an id drops the event. A digest of the execution, the kind and what it is about.",
	"project":        "The project (ORG/NAME).",
	"config":         "The config.",
	"release_id":     "The release's id (empty for an event of no release).",
	"version":        "The release's version, as its file says (empty when it says none): a build number, or the id of the deployment a CI system made for it.",
	"execution_arn":  "The Step Functions execution that found the fact.",
	"task":           "The task of the state machine that found the fact (Validate, CheckHealthy, CleanUpSuccess, ...).",
	"account":        "The account the release deploys to, whose default bus has the event.",
	"region":         "The region the release deploys to.",
	"at":             "When the task found the fact (a retry's time when it was put again).",
	"services":       "The release's services.",
	"error":          "The deployer's name of the error (BadReleaseError, HaltError, ...).",
	"cause":          "What the error says.",
	"end":            "The end state: FailureClean or FailureDirty.",
	"retired":        "The previous groups the swap retired.",
	"removed":        "The release's groups and launch templates the rollback removed.",
	"restored":       "The previous groups the rollback put back in their load balancers.",
	"images":         "The image each service runs, by service.",
	"problems":       "The differences no check saw before: each group, and what differs.",
	"heal_execution": "The execution that heals the config.",
	"reason":         "Why the config is healed: the group, and what differs.",
	"promotion_id":   "The promotion's id.",
	"stage":          "The stage, by its config.",
	"approved_by":    "Who approved the stage (the principal its identity proof names).",
	"service":        "The service whose canary stepped.",
	"step":           "The step it took, from 1.",
	"steps":          "Its canary's steps.",
	"desired":        "The desired capacity of its new group at this step.",
	"checks":         "The health checks it took.",
	"bake_seconds":   "The bake's length.",
	"created_by":     "Who started the release, as Validate verified it (or as the release says, unverified).",
}

// NewID is the id of the event of kind k about facts of the execution
// executionARN: a digest of the three, 32 hexadecimal characters.
func NewID(executionARN string, k Kind, facts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(append([]string{executionARN, k.Name}, facts...), "\x00")))
	return hex.EncodeToString(h[:16])
}

// StartedDetail is Release Started's.
type StartedDetail struct {
	Head
	Services  []string `json:"services"`
	CreatedBy string   `json:"created_by"`
}

// RefusedDetail is Release Refused's.
type RefusedDetail struct {
	Head
	Error string `json:"error"`
	Cause string `json:"cause"`
}

// HealthyDetail is Release Healthy's.
type HealthyDetail struct {
	Head
	Services []string `json:"services"`
	Checks   int      `json:"checks"`
}

// CanaryStepDetail is Canary Step's.
type CanaryStepDetail struct {
	Head
	Service string `json:"service"`
	Step    int    `json:"step"`
	Steps   int    `json:"steps"`
	Desired int    `json:"desired"`
}

// BakedDetail is Release Baked's.
type BakedDetail struct {
	Head
	BakeSeconds int `json:"bake_seconds"`
}

// SwappedDetail is Release Swapped's.
type SwappedDetail struct {
	Head
	Retired []string `json:"retired"`
}

// RolledBackDetail is Release Rolled Back's.
type RolledBackDetail struct {
	Head
	// Removed are the release's groups and launch templates removed;
	// Restored the previous groups put back in their load balancers
	// (none when the release failed before they left).
	Removed  []string `json:"removed"`
	Restored []string `json:"restored"`
}

// SucceededDetail is Release Succeeded's.
type SucceededDetail struct {
	Head
	Images map[string]string `json:"images"`
}

// FailedDetail is Release Failed's.
type FailedDetail struct {
	Head
	End   string `json:"end"`
	Error string `json:"error"`
	Cause string `json:"cause"`
}

// HaltedDetail is Release Halted's.
type HaltedDetail struct {
	Head
	Cause string `json:"cause"`
}

// DriftDetail is Drift Found's.
type DriftDetail struct {
	Head
	Problems []string `json:"problems"`
}

// HealDetail is Heal Started's.
type HealDetail struct {
	Head
	HealExecution string `json:"heal_execution"`
	Reason        string `json:"reason"`
}

// StageDetail is Stage Reached's.
type StageDetail struct {
	Head
	PromotionID string `json:"promotion_id"`
	Stage       string `json:"stage"`
}

// ApprovalDetail is Approval Requested's and Stage Approved's.
type ApprovalDetail struct {
	Head
	PromotionID string `json:"promotion_id"`
	Stage       string `json:"stage"`
	ApprovedBy  string `json:"approved_by,omitempty"`
}

// Event is one deploy event to put: its kind and its detail's body, a
// value of the kind's Body type.
type Event struct {
	Kind Kind
	Body any
}

// Detail is e's detail as EventBridge carries it: schema_version and event,
// then the body's keys. A body of another type than its kind's is an
// error.
func (e Event) Detail() (string, error) {
	if t := reflect.TypeOf(e.Body); t != e.Kind.Body {
		return "", fmt.Errorf("events: %s written from a %v, not a %v", e.Kind.Name, t, e.Kind.Body)
	}
	raw, err := json.Marshal(e.Body)
	if err != nil {
		return "", fmt.Errorf("events: %s: %w", e.Kind.Name, err)
	}
	head := fmt.Sprintf(`{"schema_version":%d,"event":%q`, Version, e.Kind.Name)
	if rest := strings.TrimPrefix(string(raw), "{"); rest != "}" {
		return head + "," + rest, nil
	}
	return head + "}", nil
}
