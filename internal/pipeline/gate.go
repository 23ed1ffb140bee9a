package pipeline

import (
	"cmp"
	"fmt"
	"time"
)

// Names of a stage's gates, as a Hold names the one holding.
const (
	// GateArtifact: the stage before runs the artifact on every target
	// (it succeeded with it). Every stage after the first has it.
	GateArtifact = "artifact"
	// GateSoak: the artifact has served in the stage before for
	// Gates.SoakSeconds.
	GateSoak = "soak"
	// GateServing: the stage before still serves the artifact: in every
	// target, each load balancer and target group its release names has
	// a healthy instance of the release's groups. Every stage after the
	// first has it, wherever the caller reads it (TargetReading.Serving).
	GateServing = "serving"
	// GateAlarm: none of Gates.Alarms is in ALARM, or missing, in a
	// target of the stage before.
	GateAlarm = "alarm"
	// GateApproval: a person approved the stage (Gates.Approval).
	GateApproval = "approval"
)

// Readings are what the gates of a stage are checked against: what the
// caller read of the stage before and of the stage's approval, at Now.
// The checks do no I/O; `ferry promote`, `ferry pipeline status` and the
// deployer each read these their own way (the records, a drift query or
// the deployer's own session, an approval's proof) and share the rules.
type Readings struct {
	// Now is the deployer's time (the records' times are on its clock).
	Now time.Time
	// Artifact is the digest promoted; "" when the stage before runs no
	// one artifact.
	Artifact string
	// Before are the targets of the stage before, as read.
	Before []TargetReading
	// Approval is the stage's approval as read; nil for none given (or
	// not read).
	Approval *ApprovalReading
}

// TargetReading is one target of the stage before, as read.
type TargetReading struct {
	Config string
	// Digest is the artifact it runs; "" for none, or unknown.
	Digest string
	// DeployedAt is when its release began to serve (its swap, the
	// current record's deployed_at).
	DeployedAt time.Time
	// Alarms are the states of the stage's gate alarms there, by name (a
	// CloudWatch state; an alarm absent is missing); nil when not read.
	Alarms map[string]string
	// Serving is whether its release serves there, as read; nil: not
	// checked (StageStatus.Readings says a serving not read as Unread).
	Serving *ServingReading
}

// ServingReading is whether a target's release serves healthily, as the
// load balancers and target groups it names say.
// The deployer reads it (its Gate task, and a drift query that asks for
// it, which is how the client reads it) and the JSON is a drift query's.
type ServingReading struct {
	// Release is the release read (the promotion's id).
	Release string `json:"release"`
	// NoGroup are the release's services without a group of it.
	NoGroup []string `json:"no_group,omitempty"`
	// Dark are the load balancers and target groups the release names
	// in which no instance of its groups is healthy, by name, in order.
	Dark []string `json:"dark,omitempty"`
	// Unread is why it could not be read ("" when it was): a read that
	// failed holds the gate, as an alarm not read does.
	Unread string `json:"unread,omitempty"`
}

// ApprovalReading is an approval of a stage, as read.
type ApprovalReading struct {
	// By is who approved, verified; "" when the approval given does not
	// count.
	By string
	// Refused is why the approval given does not count.
	Refused string
}

// Hold is one gate holding a promotion back: the gate (Gate*) and one
// message saying what holds, as people and the records read it.
type Hold struct {
	Gate    string
	Message string
	// Left is how long until the gate passes by itself (a soak's end);
	// 0 when it cannot tell.
	Left time.Duration
}

// gate is one of a stage's gates: a check of the readings against the
// stage's gates g (nil: the stage has none but GateArtifact) after the
// stage before, named prev. It returns what holds; nil when it passes.
type gate func(prev string, g *Gates, r *Readings) []Hold

// gates are a stage's gates, in the order their holds are listed. A new
// gate is one function here and its reading (see the package doc).
var gateChecks = []gate{artifactGate, servingGate, soakGate, alarmGate, approvalGate}

// Holds lists what holds back promoting r.Artifact into stage i, one Hold
// per gate and target that holds; none: the promotion may go. The first
// stage has no gate. When the stage before runs no one artifact, that is
// the only hold: the other gates are about the artifact it runs.
func (p *Pipeline) Holds(i int, r Readings) []Hold {
	if i <= 0 || i >= len(p.Stages) {
		return nil
	}
	prev, g := p.Stages[i-1].ConfigName, p.Stages[i].Gates
	if r.Artifact == "" {
		return artifactGate(prev, g, &r)
	}
	var out []Hold
	for _, check := range gateChecks {
		out = append(out, check(prev, g, &r)...)
	}
	return out
}

// Messages are the messages of holds, in order.
func Messages(holds []Hold) []string {
	out := make([]string, len(holds))
	for i, h := range holds {
		out[i] = h.Message
	}
	return out
}

// artifactGate holds while a target of the stage before does not run
// the artifact (or the stage before runs no one artifact).
func artifactGate(prev string, _ *Gates, r *Readings) []Hold {
	if r.Artifact == "" {
		return []Hold{{Gate: GateArtifact, Message: "the stage before (" + prev + ") runs no one artifact"}}
	}
	var out []Hold
	for _, t := range r.Before {
		if t.Digest != r.Artifact {
			out = append(out, Hold{Gate: GateArtifact, Message: fmt.Sprintf(
				"%s does not run artifact %s (every target of the stage before must run it)", t.Config, ShortDigest(r.Artifact))})
		}
	}
	return out
}

// soakGate holds until the artifact has served in the stage before for
// the soak, counted from the newest swap of its targets (SoakStart).
func soakGate(_ string, g *Gates, r *Readings) []Hold {
	if g == nil {
		return nil
	}
	soak := time.Duration(g.SoakSeconds) * time.Second
	left := SoakStart(r.Before).Add(soak).Sub(r.Now)
	if left <= 0 {
		return nil
	}
	return []Hold{{Gate: GateSoak, Left: left, Message: fmt.Sprintf(
		"soak %s: %s left (counted from the stage before's last swap)", FormatDuration(soak), FormatDuration(left))}}
}

// SoakStart is when a soak after the stage before, of targets before,
// starts: the newest of their swaps, from which the artifact serves on
// every one of them.
func SoakStart(before []TargetReading) time.Time {
	var since time.Time
	for _, t := range before {
		if t.DeployedAt.After(since) {
			since = t.DeployedAt
		}
	}
	return since
}

// servingGate holds for each load balancer and target group of a target
// of the stage before in which no instance of its release's groups is
// healthy, and for each target where that could not be read (a health
// read fails closed). A target whose serving was not read (nil) is not
// checked: its caller does not read it.
func servingGate(_ string, _ *Gates, r *Readings) []Hold {
	var out []Hold
	for _, t := range r.Before {
		s := t.Serving
		switch {
		case s == nil:
		case s.Unread != "":
			out = append(out, Hold{Gate: GateServing, Message: fmt.Sprintf(
				"%s: whether release %s serves healthily was not read (held until it is): %s", t.Config, s.Release, s.Unread)})
		default:
			for _, svc := range s.NoGroup {
				out = append(out, Hold{Gate: GateServing, Message: fmt.Sprintf("%s: service %s has no group of release %s", t.Config, svc, s.Release)})
			}
			for _, lb := range s.Dark {
				out = append(out, Hold{Gate: GateServing, Message: fmt.Sprintf("%s: %s has no healthy instance of release %s", t.Config, lb, s.Release)})
			}
		}
	}
	return out
}

// alarmGate holds for each gate alarm in ALARM or missing in a target of
// the stage before, and for each target whose alarms were not read (an
// alarm that cannot be read never passes).
func alarmGate(_ string, g *Gates, r *Readings) []Hold {
	if g == nil {
		return nil
	}
	var out []Hold
	for _, t := range r.Before {
		for _, a := range g.Alarms {
			state := cmp.Or(t.Alarms[a], AlarmMissing)
			switch {
			case t.Alarms == nil:
				out = append(out, Hold{Gate: GateAlarm, Message: fmt.Sprintf("alarm %s not read in %s", a, t.Config)})
			case state == "ALARM" || state == AlarmMissing:
				out = append(out, Hold{Gate: GateAlarm, Message: fmt.Sprintf("alarm %s is %s in %s", a, state, t.Config)})
			}
		}
	}
	return out
}

// AlarmMissing is the state of a gate alarm CloudWatch does not have.
const AlarmMissing = "missing"

// ApprovalNeeded begins the message of the hold of a stage that needs an
// approval none counts for yet (approvalGate).
const ApprovalNeeded = "the stage needs a person's approval: ferry pipeline approve"

// approvalGate holds a stage that needs an approval until one counts.
func approvalGate(_ string, g *Gates, r *Readings) []Hold {
	if g == nil || !g.Approval || (r.Approval != nil && r.Approval.By != "") {
		return nil
	}
	msg := ApprovalNeeded
	if r.Approval != nil && r.Approval.Refused != "" {
		msg += "; the approval given does not count: " + r.Approval.Refused
	}
	return []Hold{{Gate: GateApproval, Message: msg}}
}
