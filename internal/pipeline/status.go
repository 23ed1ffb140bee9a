package pipeline

import (
	"cmp"
	"fmt"
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

// Status is the matrix of the pipeline's stages and targets at now:
// what each target runs (deployed(i, j), for target j of stage i; nil:
// nothing), its parity with the stage before, and the gates still
// pending before the stage before's artifact may be promoted into each
// stage. A soak counts from the newest deploy of the stage before; a gate
// alarm is pending in a target of the stage before where alarms (as
// Readings.Alarms: by config, then alarm name) has it in ALARM or
// missing, and unread where alarms has no entry for the target.
func (p *Pipeline) Status(deployed func(i, j int) *Deployed, alarms map[string]map[string]string, now time.Time) []StageStatus {
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
			p.compare(&st, out[i-1], s, alarms, now)
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
// and what still holds back prev's artifact from s.
func (p *Pipeline) compare(st *StageStatus, prev StageStatus, s *Stage, alarms map[string]map[string]string, now time.Time) {
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
	if prev.Artifact == "" {
		st.Pending = append(st.Pending, "the stage before ("+prev.Config+") runs no one artifact")
		return
	}
	if st.Promoted = st.Artifact == prev.Artifact; !st.Promoted {
		st.Pending = append(st.Pending, pending(s.Gates, prev, alarms, now)...)
	}
}

// pending are the gates g that still hold back the promotion of the
// artifact of prev, the stage before, at now, given the alarm states
// read.
func pending(g *Gates, prev StageStatus, alarms map[string]map[string]string, now time.Time) []string {
	var out []string
	if g == nil {
		return out
	}
	if left := soakLeft(g, prev, now); left > 0 {
		out = append(out, fmt.Sprintf("soak %s (%s left)", FormatDuration(time.Duration(g.SoakSeconds)*time.Second), FormatDuration(left)))
	}
	for _, t := range prev.Targets {
		states, read := alarms[t.Config]
		for _, a := range g.Alarms {
			switch state := cmp.Or(states[a], "missing"); {
			case !read:
				out = append(out, fmt.Sprintf("alarm %s not read in %s", a, t.Config))
			case state == "ALARM" || state == "missing":
				out = append(out, fmt.Sprintf("alarm %s is %s in %s", a, state, t.Config))
			}
		}
	}
	if g.Approval {
		out = append(out, "approval")
	}
	return out
}

// soakLeft is how long the soak of gates g still runs at now, counted
// from the newest deploy of prev, the stage before; 0 when over or none.
func soakLeft(g *Gates, prev StageStatus, now time.Time) time.Duration {
	if g == nil || g.SoakSeconds <= 0 {
		return 0
	}
	var since time.Time
	for _, t := range prev.Targets {
		if t.DeployedAt.After(since) {
			since = t.DeployedAt
		}
	}
	return max(0, since.Add(time.Duration(g.SoakSeconds)*time.Second).Sub(now))
}

// Readings are what a promotion into a stage read of its gates beyond
// the deployer's records.
type Readings struct {
	// Alarms are the states of the stage's gate alarms in each target of
	// the stage before, by that target's config name, then alarm name
	// (a CloudWatch state, or "missing").
	Alarms map[string]map[string]string
	// Approved says a person approved the promotion.
	Approved bool
}

// Holds lists what holds back promoting the artifact digest into stage
// i at now, given the pipeline's status st and what was read of its
// gates: the stage before not running that artifact on every target (it
// must have succeeded with it), a soak not over, a gate alarm in ALARM
// or missing (an alarm that cannot be read never passes) in a target of
// the stage before, an approval not given. None: the promotion may go.
// The first stage has no gate.
func (p *Pipeline) Holds(st []StageStatus, i int, digest string, r Readings, now time.Time) []string {
	if i <= 0 || i >= len(p.Stages) || i >= len(st) {
		return nil
	}
	var out []string
	prev, g := st[i-1], p.Stages[i].Gates
	if prev.Artifact != digest {
		out = append(out, fmt.Sprintf("the stage before (%s) does not run artifact %s on every target: promote it there first", prev.Config, ShortDigest(digest)))
	}
	if left := soakLeft(g, prev, now); left > 0 {
		out = append(out, fmt.Sprintf("soak: %s after the stage before's last deploy, %s left", FormatDuration(time.Duration(g.SoakSeconds)*time.Second), FormatDuration(left)))
	}
	if g == nil {
		return out
	}
	for _, t := range prev.Targets {
		for _, a := range g.Alarms {
			if state := cmp.Or(r.Alarms[t.Config][a], "missing"); state == "ALARM" || state == "missing" {
				out = append(out, fmt.Sprintf("alarm %s is %s in %s", a, state, t.Config))
			}
		}
	}
	if g.Approval && !r.Approved {
		out = append(out, "the stage needs a person's approval")
	}
	return out
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
