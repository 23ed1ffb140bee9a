package pipeline

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestHolds: what holds back a promotion into a stage, one hold per gate
// and target: a target of the stage before not running the artifact, the
// soak counted from the stage before's newest swap, a gate alarm in ALARM,
// missing or not read in any of its targets, an approval not given or
// given and refused; nothing on the first stage, nothing once every gate
// holds. A stage before that runs no one artifact is the only hold. A
// target of the stage before whose release does not serve (a service
// without its group, a load balancer without a healthy instance of it),
// or where that could not be read, holds; one whose serving is not
// checked (nil) does not.
func TestHolds(t *testing.T) {
	p := readPipeline(t, "deploy-test.json")
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	const a, b = "aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb"
	alarm := "coinbase-deploy-test-staging-errors"
	staging := func(digest string, swapped time.Duration, state string) []TargetReading {
		var alarms map[string]string
		if state != "" {
			alarms = map[string]string{alarm: state}
		}
		if state == AlarmMissing {
			alarms = map[string]string{}
		}
		return []TargetReading{{Config: "staging", Digest: digest, DeployedAt: now.Add(-swapped), Alarms: alarms}}
	}
	serving := func(before []TargetReading, s *ServingReading) []TargetReading {
		before[0].Serving = s
		return before
	}
	approved := &ApprovalReading{By: "arn:aws:iam::111111111111:user/alice"}
	for _, tt := range []struct {
		name string
		i    int
		r    Readings
		want []Hold
	}{
		{"the first stage", 0, Readings{Now: now}, nil},
		{"staging, development runs it", 1, Readings{Now: now, Artifact: a,
			Before: []TargetReading{{Config: "development", Digest: a}}}, nil},
		{"staging, development runs another", 1, Readings{Now: now, Artifact: a,
			Before: []TargetReading{{Config: "development", Digest: b}}},
			[]Hold{{Gate: GateArtifact, Message: "development does not run artifact aaaaaaaaaaaa (every target of the stage before must run it)"}}},
		{"staging, development runs no one artifact", 1, Readings{Now: now}, []Hold{{Gate: GateArtifact, Message: "the stage before (development) runs no one artifact"}}},
		{"production, every gate holds", 2, Readings{Now: now, Artifact: a, Before: staging(a, 2*time.Hour, "OK"), Approval: approved}, nil},
		{"a stage the pipeline does not have", 3, Readings{Now: now, Artifact: a}, nil},
		{"production, its soak just over", 2, Readings{Now: now, Artifact: a, Before: staging(a, time.Hour, "OK"), Approval: approved}, nil},
		{"production, a second of its soak left", 2, Readings{Now: now, Artifact: a, Before: staging(a, time.Hour-time.Second, "OK"), Approval: approved},
			[]Hold{{Gate: GateSoak, Left: time.Second, Message: "soak 1h: 1s left (counted from the stage before's last swap)"}}},
		{"staging has a soak, production none", 1, Readings{Now: now, Artifact: a, Before: []TargetReading{{Config: "development", Digest: a, DeployedAt: now.Add(-time.Minute)}}},
			[]Hold{{Gate: GateSoak, Left: 29 * time.Minute, Message: "soak 30m: 29m left (counted from the stage before's last swap)"}}},
		{"production, soaking", 2, Readings{Now: now, Artifact: a, Before: staging(a, 20*time.Minute, "INSUFFICIENT_DATA"), Approval: approved},
			[]Hold{{Gate: GateSoak, Left: 40 * time.Minute, Message: "soak 1h: 40m left (counted from the stage before's last swap)"}}},
		{"production, alarm in ALARM, not approved", 2, Readings{Now: now, Artifact: a, Before: staging(a, 2*time.Hour, "ALARM")},
			[]Hold{{Gate: GateAlarm, Message: "alarm coinbase-deploy-test-staging-errors is ALARM in staging"},
				{Gate: GateApproval, Message: "the stage needs a person's approval: ferry pipeline approve"}}},
		{"production, alarm missing", 2, Readings{Now: now, Artifact: a, Before: staging(a, 2*time.Hour, AlarmMissing), Approval: approved},
			[]Hold{{Gate: GateAlarm, Message: "alarm coinbase-deploy-test-staging-errors is missing in staging"}}},
		{"production, alarm not read", 2, Readings{Now: now, Artifact: a, Before: staging(a, 2*time.Hour, ""), Approval: approved},
			[]Hold{{Gate: GateAlarm, Message: "alarm coinbase-deploy-test-staging-errors not read in staging"}}},
		{"production, staging does not serve it", 2, Readings{Now: now, Artifact: a, Before: serving(staging(a, 2*time.Hour, "OK"),
			&ServingReading{Release: "p1", NoGroup: []string{"worker"}, Dark: []string{"cdt-staging-web", "cdt-staging-web-tg"}}), Approval: approved},
			[]Hold{{Gate: GateServing, Message: "staging: service worker has no group of release p1"},
				{Gate: GateServing, Message: "staging: cdt-staging-web has no healthy instance of release p1"},
				{Gate: GateServing, Message: "staging: cdt-staging-web-tg has no healthy instance of release p1"}}},
		{"production, whether staging serves it not read", 2, Readings{Now: now, Artifact: a, Before: serving(staging(a, 2*time.Hour, "OK"),
			&ServingReading{Release: "p1", Unread: "Throttling: Rate exceeded"}), Approval: approved},
			[]Hold{{Gate: GateServing, Message: "staging: whether release p1 serves healthily was not read (held until it is): Throttling: Rate exceeded"}}},
		{"production, staging serves it", 2, Readings{Now: now, Artifact: a, Before: serving(staging(a, 2*time.Hour, "OK"),
			&ServingReading{Release: "p1"}), Approval: approved}, nil},
		{"production, approval refused", 2, Readings{Now: now, Artifact: a, Before: staging(a, 2*time.Hour, "OK"), Approval: &ApprovalReading{Refused: "its proof expired"}},
			[]Hold{{Gate: GateApproval, Message: "the stage needs a person's approval: ferry pipeline approve; the approval given does not count: its proof expired"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, p.Holds(tt.i, tt.r))
		})
	}
}

// TestSoakStart: a soak counts from the newest swap of the stage
// before's targets, the moment the artifact serves on every one.
func TestSoakStart(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name   string
		before []TargetReading
		want   time.Time
	}{
		{"none", nil, time.Time{}},
		{"one", []TargetReading{{DeployedAt: t0}}, t0},
		{"the newest of two", []TargetReading{{DeployedAt: t0.Add(time.Hour)}, {DeployedAt: t0}}, t0.Add(time.Hour)},
	} {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, SoakStart(tt.before)) })
	}
}
