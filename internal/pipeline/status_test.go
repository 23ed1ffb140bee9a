package pipeline

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestStatus: each target's parity with the stage before, each stage's
// artifact, and the gates still holding back a promotion: whether the
// stage before serves (held while not read, as the deployer's gate
// holds), a soak counted from the newest deploy of the stage before,
// alarms, an approval; none once promoted.
func TestStatus(t *testing.T) {
	p := readPipeline(t, "deploy-test.json")
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	at := func(ago time.Duration) time.Time { return now.Add(-ago) }
	const a, b = "aaaa", "bbbb"
	for _, tt := range []struct {
		name     string
		deployed map[[2]int]*Deployed
		read     map[string]TargetRead
		parity   [][]string
		artifact []string
		promoted []bool
		pending  [][]string
	}{
		{
			name:     "nothing deployed",
			deployed: nil,
			parity:   [][]string{{ParityFirst}, {ParityUnknown}, {ParityUnknown, ParityUnknown}},
			artifact: []string{"", "", ""},
			promoted: []bool{false, false, false},
			pending:  [][]string{{}, {"the stage before (development) runs no one artifact"}, {"the stage before (staging) runs no one artifact"}},
		},
		{
			name: "development ahead, staging soaking",
			deployed: map[[2]int]*Deployed{
				{0, 0}: {ReleaseID: "r2", Digest: b, DeployedAt: at(10 * time.Minute)},
				{1, 0}: {ReleaseID: "r1", Digest: a, DeployedAt: at(48 * time.Hour)},
				{2, 0}: {ReleaseID: "r1", Digest: a, DeployedAt: at(47 * time.Hour)},
				{2, 1}: {ReleaseID: "r1", Digest: a, DeployedAt: at(47 * time.Hour), Running: "r3"},
			},
			parity:   [][]string{{ParityFirst}, {ParityDiffers}, {ParitySame, ParitySame}},
			artifact: []string{b, a, a},
			promoted: []bool{false, false, true},
			pending:  [][]string{{}, {unread("development", "r2"), "soak 30m: 20m left (counted from the stage before's last swap)"}, {}},
		},
		{
			name: "staging soaked, production waits for its alarms and an approval",
			deployed: map[[2]int]*Deployed{
				{0, 0}: {ReleaseID: "r2", Digest: b, DeployedAt: at(3 * time.Hour)},
				{1, 0}: {ReleaseID: "r2", Digest: b, DeployedAt: at(2 * time.Hour)},
				{2, 0}: {ReleaseID: "r1", Digest: a, DeployedAt: at(47 * time.Hour)},
			},
			parity:   [][]string{{ParityFirst}, {ParitySame}, {ParityDiffers, ParityUndeploy}},
			artifact: []string{b, b, ""},
			promoted: []bool{false, true, false},
			pending:  [][]string{{}, {}, {unread("staging", "r2"), "alarm coinbase-deploy-test-staging-errors not read in staging", approvalHold}},
		},
		{
			name: "staging soaked, its alarm read OK and serving it: production waits for an approval only",
			deployed: map[[2]int]*Deployed{
				{0, 0}: {ReleaseID: "r2", Digest: b, DeployedAt: at(3 * time.Hour)},
				{1, 0}: {ReleaseID: "r2", Digest: b, DeployedAt: at(2 * time.Hour)},
			},
			read:     map[string]TargetRead{"staging": {Alarms: map[string]string{"coinbase-deploy-test-staging-errors": "OK"}, Serving: &ServingReading{Release: "r2"}}},
			parity:   [][]string{{ParityFirst}, {ParitySame}, {ParityUndeploy, ParityUndeploy}},
			artifact: []string{b, b, ""},
			promoted: []bool{false, true, false},
			pending:  [][]string{{}, {}, {approvalHold}},
		},
		{
			name: "staging's alarm in ALARM, its load balancer dark",
			deployed: map[[2]int]*Deployed{
				{0, 0}: {ReleaseID: "r2", Digest: b, DeployedAt: at(3 * time.Hour)},
				{1, 0}: {ReleaseID: "r2", Digest: b, DeployedAt: at(2 * time.Hour)},
			},
			read: map[string]TargetRead{"staging": {Alarms: map[string]string{"coinbase-deploy-test-staging-errors": "ALARM"},
				Serving: &ServingReading{Release: "r2", Dark: []string{"cdt-staging-web"}}}},
			parity:   [][]string{{ParityFirst}, {ParitySame}, {ParityUndeploy, ParityUndeploy}},
			artifact: []string{b, b, ""},
			promoted: []bool{false, true, false},
			pending: [][]string{{}, {}, {"staging: cdt-staging-web has no healthy instance of release r2",
				"alarm coinbase-deploy-test-staging-errors is ALARM in staging", approvalHold}},
		},
		{
			name: "a release whose objects expired",
			deployed: map[[2]int]*Deployed{
				{0, 0}: {ReleaseID: "r1", DeployedAt: at(400 * 24 * time.Hour)},
				{1, 0}: {ReleaseID: "r1", Digest: a, DeployedAt: at(2 * time.Hour)},
			},
			parity:   [][]string{{ParityFirst}, {ParityUnknown}, {ParityUndeploy, ParityUndeploy}},
			artifact: []string{"", a, ""},
			promoted: []bool{false, false, false},
			pending:  [][]string{{}, {"the stage before (development) runs no one artifact"}, {unread("staging", "r1"), "alarm coinbase-deploy-test-staging-errors not read in staging", approvalHold}},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := p.Status(func(i, j int) *Deployed { return tt.deployed[[2]int{i, j}] }, tt.read, now)
			var parity [][]string
			var artifact []string
			var promoted []bool
			var pending [][]string
			for _, s := range st {
				var ps []string
				for _, tg := range s.Targets {
					ps = append(ps, tg.Parity)
				}
				parity, artifact, promoted, pending = append(parity, ps), append(artifact, s.Artifact), append(promoted, s.Promoted), append(pending, s.Pending)
			}
			assert.Equal(t, tt.parity, parity)
			assert.Equal(t, tt.artifact, artifact)
			assert.Equal(t, tt.promoted, promoted)
			assert.Equal(t, tt.pending, pending)
			assert.Equal(t, "production-euw1", st[2].Targets[1].Config)
		})
	}
}

const approvalHold = "the stage needs a person's approval: ferry pipeline approve"

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		45 * time.Second: "45s", 30 * time.Minute: "30m", time.Hour: "1h", 90 * time.Minute: "1h30m",
		2*time.Hour + 5*time.Second: "2h0m5s", 1500 * time.Millisecond: "2s",
	} {
		assert.Equal(t, want, FormatDuration(d))
	}
}

// unread is the serving gate's hold in config, whose release is id, when
// whether it serves was not read.
func unread(config, id string) string {
	return config + ": whether release " + id + " serves healthily was not read (held until it is): not asked for"
}
