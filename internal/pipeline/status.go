package pipeline

import (
	"strings"
	"time"
)

// Deployed is what one target of a pipeline runs now, as the deployer's
// records say: the current release and its artifact's digest, and the
// release holding the lock (a deploy under way).
type Deployed struct {
	ReleaseID string `json:"release_id,omitempty"`
	// Digest is the release's artifact's; "" with a ReleaseID when the
	// release can no longer be read (its objects expired).
	Digest     string    `json:"digest,omitempty"`
	DeployedAt time.Time `json:"deployed_at,omitzero"`
	// Running is the release holding the target config's lock, "" for
	// none.
	Running string `json:"running,omitempty"`
	// Latest is the target config's newest release when it is not the
	// one deployed (a deploy that failed, or runs), and LatestEnd how it
	// ended ("running", or "" when it has no outcome).
	Latest    string `json:"latest,omitempty"`
	LatestEnd string `json:"latest_end,omitempty"`
}

// Parity of a target with the stage before it.
const (
	ParityFirst    = "first stage"  // the first stage has no stage before it
	ParitySame     = "same"         // runs the artifact the stage before runs
	ParityDiffers  = "differs"      // runs another artifact, or none
	ParityUnknown  = "unknown"      // the stage before runs no one artifact, or the target's is unknown
	ParityUndeploy = "not deployed" // runs nothing, the stage before runs an artifact
)

// TargetStatus is one target of a stage in a pipeline's status.
type TargetStatus struct {
	Name      string `json:"name,omitempty"`
	Config    string `json:"config"`
	AccountID string `json:"account_id"`
	Region    string `json:"region"`
	Qualifier string `json:"qualifier,omitempty"`
	Deployed
	// AgeSeconds is how long ago the release was deployed.
	AgeSeconds float64 `json:"age_seconds,omitempty"`
	// Parity compares what it runs with the stage before (Parity*).
	Parity string `json:"parity,omitempty"`
}

// StageStatus is one stage in a pipeline's status.
type StageStatus struct {
	Config  string         `json:"config"`
	Targets []TargetStatus `json:"targets"`
	// Artifact is the digest every target of the stage runs; "" when
	// they run different artifacts or one runs nothing.
	Artifact string `json:"artifact,omitempty"`
	// Promoted says every target runs the artifact of the stage before.
	Promoted bool `json:"promoted"`
	// Pending are the gates that still hold back the promotion of the
	// stage before's artifact into this stage (empty on the first stage
	// and once promoted).
	Pending []string `json:"pending"`
}

// TargetRead is what a caller read of a target of a stage before
// another (a drift query asking for the stage's gate alarms and whether
// the target's release serves, which the deployer answers with the same
// reading as its Gate task): the gate alarms' states by name (nil: not
// read) and whether its release serves (nil: not read).
type TargetRead struct {
	Alarms  map[string]string
	Serving *ServingReading
}

// notRead is a ServingReading's Unread when the caller did not read it.
const notRead = "not asked for"

// Status is the matrix of the pipeline's stages and targets at now:
// what each target runs (deployed(i, j), for target j of stage i; nil:
// nothing), its parity with the stage before, and the gates still
// pending before the stage before's artifact may be promoted into each
// stage (Holds), with what was read of the targets of the stages before
// (read, by config): a gate alarm is pending in a target where it is in
// ALARM or missing, or not read; the serving gate where the release does
// not serve, or that was not read; an approval is always pending (status
// reads none).
func (p *Pipeline) Status(deployed func(i, j int) *Deployed, read map[string]TargetRead, now time.Time) []StageStatus {
	out := make([]StageStatus, len(p.Stages))
	for i, s := range p.Stages {
		st := StageStatus{Config: s.ConfigName, Targets: make([]TargetStatus, len(s.Targets)), Pending: []string{}}
		for j, t := range s.Targets {
			ts := TargetStatus{Name: t.Name, Config: TargetConfig(s, t), AccountID: t.AccountID, Region: t.Region, Qualifier: t.Qualifier}
			if d := deployed(i, j); d != nil {
				ts.Deployed = *d
				if !d.DeployedAt.IsZero() {
					ts.AgeSeconds = now.Sub(d.DeployedAt).Seconds()
				}
			}
			st.Targets[j] = ts
		}
		st.Artifact = common(st.Targets)
		if i > 0 {
			p.compare(&st, out[i-1], i, read, now)
		} else {
			for j := range st.Targets {
				st.Targets[j].Parity = ParityFirst
			}
		}
		out[i] = st
	}
	return out
}

// compare sets the parity of st's targets with the stage before, prev,
// and what still holds back prev's artifact from stage i (Holds, with
// no approval read).
func (p *Pipeline) compare(st *StageStatus, prev StageStatus, i int, read map[string]TargetRead, now time.Time) {
	for j := range st.Targets {
		t := &st.Targets[j]
		switch {
		case prev.Artifact == "" || (t.ReleaseID != "" && t.Digest == ""):
			t.Parity = ParityUnknown
		case t.Digest == prev.Artifact:
			t.Parity = ParitySame
		case t.Digest == "":
			t.Parity = ParityUndeploy
		default:
			t.Parity = ParityDiffers
		}
	}
	if st.Promoted = prev.Artifact != "" && st.Artifact == prev.Artifact; st.Promoted {
		return
	}
	st.Pending = append(st.Pending, Messages(p.Holds(i, prev.Readings(read, now)))...)
}

// Readings are the readings of the stage s, as the stage before another,
// at now, with what was read of its targets (read, by config): the
// artifact s runs, each target's and its swap, its gate alarms, whether
// its release serves (when s runs one artifact; not read, which holds,
// where read does not say), no approval.
func (s StageStatus) Readings(read map[string]TargetRead, now time.Time) Readings {
	r := Readings{Now: now, Artifact: s.Artifact}
	for _, t := range s.Targets {
		tr := TargetReading{Config: t.Config, Digest: t.Digest, DeployedAt: t.DeployedAt, Alarms: read[t.Config].Alarms, Serving: read[t.Config].Serving}
		if tr.Serving == nil && s.Artifact != "" {
			tr.Serving = &ServingReading{Release: t.ReleaseID, Unread: notRead}
		}
		r.Before = append(r.Before, tr)
	}
	return r
}

// ShortDigest is a digest's first 12 hex digits, as people compare them.
func ShortDigest(d string) string { return d[:min(len(d), 12)] }

// common is the digest every target runs, "" when they differ or one
// runs nothing.
func common(ts []TargetStatus) string {
	d := ""
	for i, t := range ts {
		if t.Digest == "" || (i > 0 && t.Digest != d) {
			return ""
		}
		d = t.Digest
	}
	return d
}

// FormatDuration is d as people write it, to the second: "45s", "30m",
// "1h", "1h30m", "2h0m5s".
func FormatDuration(d time.Duration) string {
	s := d.Round(time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
