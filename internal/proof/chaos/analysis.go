package chaos

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/proof/reliability"
	"github.com/ferryhq/ferry/internal/release"
)

// PredAnalysis: a release under canary analysis whose build is clearly
// worse than every build its config's groups run when it starts (by the
// world's images: a metric it judges beyond the previous build's by more
// than three times its tolerance) never ends Success.
const PredAnalysis = "analysis"

// PredEvents: the deploy events each execution the scenario started
// put on the bus keep reliability.CheckEvents' rules (judged from the
// bus and the ends Step Functions reports).
const PredEvents = "events"

// Builds a release may run (Variant.Build): the reference's image, one
// whose latency is 60% higher and one that errs three times as often
// (testdata/worlds/reliability.json, the Shop namespace).
const (
	BuildSlower = "slower"
	BuildErrs   = "errs"
)

var builds = []string{"", "", BuildSlower, BuildErrs}

// image is the image a build runs.
func image(build string) string {
	if build == "" {
		return "ubuntu"
	}
	return "ubuntu-" + build
}

// analysed is the canary analysis a Variant with Analysis gets (on:
// else none): each build's latency and errors, higher worse, within
// 10%, over five one-minute periods.
func analysed(on bool) *release.Analysis {
	if !on {
		return nil
	}
	tol := 0.1
	return &release.Analysis{WindowSeconds: 300, Metrics: []release.AnalysisMetric{
		{Namespace: "Shop", Name: "Latency", Direction: "higher", Tolerance: &tol},
		{Namespace: "Shop", Name: "Errors", Direction: "higher", Tolerance: &tol},
	}}
}

// wideMargin is how many tolerances past the previous build's value a
// metric of the new build must be for the build to be clearly worse.
const wideMargin = 3

// clearlyWorse says why rel's build is clearly worse than every build
// the config's groups run in snap (images: the world's, by id and by
// name), "" when it is not, or cannot be told: no analysis, a move, no
// group of one of its services, a group (not being deleted) whose image
// is not known or that has no instance.
func clearlyWorse(rel *release.Release, snap sim.Snapshot, images map[string]sim.AMISpec) string {
	next, ok := images[rel.AMI]
	if rel.Analysis == nil || rel.MoveFrom != nil || rel.Destroy || !ok {
		return ""
	}
	old, ok := serving(rel, snap)
	if !ok {
		return ""
	}
	var why []string
	for id := range old {
		w := worseOn(rel.Analysis, next, images[id])
		if w == "" {
			return ""
		}
		why = append(why, w)
	}
	return strings.Join(why, "; ")
}

// serving are the images the groups of rel's config (not being deleted)
// in its region run in snap, by id; ok is false when one of them has no
// instance or an unknown launch template, or none is of a service of
// rel (nothing to compare it with).
func serving(rel *release.Release, snap sim.Snapshot) (images map[string]bool, ok bool) {
	images = map[string]bool{}
	for _, a := range snap.Accounts {
		lts := map[string]string{}
		for _, lt := range a.LaunchTemplates {
			lts[lt.Name] = lt.ImageID
		}
		for _, g := range a.Groups {
			if !ours(g.Tags, project, rel.ConfigName) || a.Region != regionOf(rel) || g.Status != "" {
				continue
			}
			img, known := lts[g.LaunchTemplate]
			if !known || len(g.Instances) == 0 {
				return nil, false
			}
			images[img] = true
			ok = ok || rel.Services[g.Tags[naming.TagServiceName]] != nil
		}
	}
	return images, ok
}

// worseOn names a metric of a on which next's value passes prev's by
// more than wideMargin tolerances, "" when none does.
func worseOn(a *release.Analysis, next, prev sim.AMISpec) string {
	for _, m := range a.Metrics {
		n, okN := metricOf(next, m)
		p, okP := metricOf(prev, m)
		if okN && okP && m.Direction == "higher" && n > p*(1+wideMargin**m.Tolerance) {
			return fmt.Sprintf("%s %s %g against %s's %g (tolerance %g)", next.Name, m.Label(), n, prev.Name, p, *m.Tolerance)
		}
	}
	return ""
}

// metricOf is the value img's instances publish of m.
func metricOf(img sim.AMISpec, m release.AnalysisMetric) (float64, bool) {
	for _, s := range img.Metrics {
		if s.Namespace == m.Namespace && s.Name == m.Name {
			return s.Value, true
		}
	}
	return 0, false
}

// imagesOf are the images of spec, by id and by name.
func imagesOf(spec sim.WorldSpec) map[string]sim.AMISpec {
	out := map[string]sim.AMISpec{}
	for _, a := range spec.Accounts {
		for _, r := range a.Regions {
			for _, img := range r.AMIs {
				out[img.ID], out[img.Name] = img, img
			}
		}
	}
	return out
}

// judgeAnalysis is told that execution name ended: a release clearly
// worse than what served when it started (p.worse) must not succeed.
func (p *player) judgeAnalysis(name string, succeeded bool, at time.Time) {
	p.mu.Lock()
	why := p.worse[name]
	p.mu.Unlock()
	if succeeded && why != "" {
		p.chk.Add(Violation{Pred: PredAnalysis, At: at, What: "execution " + name + " succeeded with a build its canary analysis must fail: " + why})
	}
}

// judgeEvents judges the deploy events of every deploy the scenario
// started (reliability.CheckEvents), by the ends Step Functions reports;
// a scenario that fails a PutEvents call may have lost some.
func (p *player) judgeEvents(arns []string, ends map[string]string, at time.Time) []Violation {
	lossy := slices.ContainsFunc(p.sc.Steps, func(s Step) bool { return s.Kind == KindFault && s.P == "PutEvents" })
	var runs []reliability.EventRun
	p.mu.Lock()
	for _, arn := range arns {
		name := arn[strings.LastIndex(arn, ":")+1:]
		if p.subs[name] != nil {
			runs = append(runs, reliability.EventRun{ARN: arn, End: ends[name], Lossy: lossy})
		}
	}
	p.mu.Unlock()
	var out []Violation
	for _, v := range reliability.CheckEvents(p.reg.World().BusEvents(), runs) {
		out = append(out, Violation{Pred: PredEvents, At: at, What: v})
	}
	return out
}
