package deployer

import (
	"context"
	"math"
	"slices"
	"time"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/health"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/tuning"
	"github.com/ferryhq/ferry/internal/tuning/pacing"
)

// nextCheck is the wait before the next health check (the wait_seconds of
// Deploy's, CheckHealthy's and NextStep's Health): the schedule (package
// pacing, tuning.HealthChecks) for the time since the execution started
// and the checks made so far, jittered by the execution's id; no sooner
// than ready, when an instance launching now cannot be healthy before;
// and shaped by the report: its stability windows (window), a target
// about to be reached (health.Imminent; by few services, few), or not yet within reach
// (booting, see pacing.Situation.Booting). Never past the
// release's timeout (one second once it has passed), at least a second.
// r is the release the report is of (nil only with no report).
func (d *Deployer) nextCheck(st *execution.State, req execution.Request, r *release.Release, checks int, ready time.Duration, report map[string]execution.ServiceHealth, booting bool) int {
	now := d.now()
	timeout := time.Duration(st.Timeout) * time.Second
	x := pacing.Situation{Checks: checks, Ready: ready, Window: window(report, now), Imminent: health.Imminent(report), Few: few(r, report, prevReport(st)), Booting: booting, Seed: req.Execution.ID}
	if !req.Execution.StartTime.IsZero() {
		x.Elapsed = now.Sub(req.Execution.StartTime)
		if st.Timeout > 0 {
			x.Left = max(req.Execution.StartTime.Add(timeout).Sub(now), time.Nanosecond)
		}
	}
	return d.schedule(timeout).Next(x)
}

// schedule is tuning.HealthChecks with the configured first interval (no
// later interval below it), stretched when a quicker one would not fit a
// timeout this long in limits.MaxHealthChecks.
func (d *Deployer) schedule(timeout time.Duration) pacing.Schedule {
	s := tuning.HealthChecks
	if every := d.cfg.HealthCheckInterval; every != s.Paces[0].Every {
		paces := make([]pacing.Pace, len(s.Paces))
		for i, p := range s.Paces {
			paces[i] = pacing.Pace{Until: p.Until, Every: max(p.Every, every)}
		}
		paces[0].Every = every
		s.Paces = paces
	}
	if timeout <= 0 {
		timeout = limits.MaxTimeout
	}
	return s.Fit(timeout, limits.MaxHealthChecks)
}

// few is pacing.Situation.Few of report for r, prev the report of the
// check before (none: Deploy's): the services below their targets are
// few, and a check a second reads them all. Either at most
// tuning.FewImminent of them and at most a tuning.FewImminentShare-th
// of the release's services, or just one; or the tail of services that
// arrive together: this check saw at least as many reach their targets
// as are still below theirs (the next to arrive may well be the last),
// and the load balancer reads of those below (a DescribeInstanceHealth
// or DescribeTargetHealth per load balancer or target group r names for
// them) fit one second of an account's Describe refill
// (tuning.FewArrivingReads). Both ways, no more are below than have
// reached theirs: one service's whole ramp is not paced so.
func few(r *release.Release, report, prev map[string]execution.ServiceHealth) bool {
	below, reached, reads := 0, 0, 0
	for svc, s := range report {
		p, seen := prev[svc]
		switch {
		case !health.Healthy(s):
			below++
			if named := r.Services[svc]; named != nil {
				reads += len(named.ELBs) + len(named.TargetGroups)
			}
		case seen && !health.Healthy(p):
			reached++
		}
	}
	most := min(tuning.FewImminent, max(1, len(report)/tuning.FewImminentShare))
	arriving := reached >= below && reads <= tuning.FewArrivingReads
	return (below <= most || arriving) && 2*below <= len(report)
}

// prevReport is the previous check's report in st: none before the
// first (Deploy's own).
func prevReport(st *execution.State) map[string]execution.ServiceHealth {
	if st.Health == nil {
		return nil
	}
	return st.Health.Services
}

// booting is pacing.Situation.Booting of report for r: a service below
// its target has fewer instances in service than it, and every service
// below its target is judged on load balancers r names for it.
func booting(r *release.Release, report map[string]execution.ServiceHealth) bool {
	short := false
	for svc, s := range report {
		named := r.Services[svc]
		switch {
		case health.Healthy(s):
		case s.Missing, named == nil, len(named.ELBs)+len(named.TargetGroups) == 0:
			return false
		case s.InService < s.Target:
			short = true
		}
	}
	return short
}

// window is, when every service of report holds its target, how long
// until the next check that must ask load balancers at a window's end:
// the end of the last window, or, while more than
// tuning.ConfirmPerCheck services are still to be confirmed stable
// (Confirmed), the end of the ConfirmPerCheck-th earliest, so that no
// check at a window's end asks more than about that many services' load
// balancers (on an account's shared Describe bucket, Elastic Load
// Balancing's 40, a burst of them is throttled and retried, late). When
// that many are due already (a check's load balancer reads left some
// out, tuning.BalancerReadsPerCheck), tuning.ImminentCheckInterval: the
// next confirms them as soon as the Describe refill allows. 0 otherwise
// (or when every one is stable already).
func window(report map[string]execution.ServiceHealth, now time.Time) time.Duration {
	var ends []time.Duration
	for _, s := range report {
		if !health.Healthy(s) || s.HealthySince == nil {
			return 0
		}
		if in := health.StableIn(s, now); in > 0 || !s.Confirmed {
			ends = append(ends, in)
		}
	}
	if len(ends) == 0 {
		return 0
	}
	slices.Sort(ends)
	if end := ends[min(len(ends), tuning.ConfirmPerCheck)-1]; end > 0 {
		return end
	}
	return tuning.ImminentCheckInterval
}

// noteReady lowers each service's ReadySeconds (the fastest boot seen for
// its image) to this check's time since the execution started, rounded
// up, when the check is the first to see one of its instances healthy
// (none was at the previous one, prev).
func noteReady(report, prev map[string]execution.ServiceHealth, req execution.Request, now time.Time) {
	if req.Execution.StartTime.IsZero() {
		return
	}
	for svc, s := range report {
		if s.Missing || s.Healthy == 0 || prev[svc].Healthy > 0 {
			continue
		}
		seen := max(1, int(math.Ceil(now.Sub(req.Execution.StartTime).Seconds())))
		if s.ReadySeconds == 0 || seen < s.ReadySeconds {
			s.ReadySeconds = seen
			report[svc] = s
		}
	}
}

// recordedReady sets each service's ReadySeconds in report to the
// fastest boot the current record saw for the image it now runs (see
// readyAfter). A record that cannot be read leaves them unknown: the
// pacing's loss, never the deploy's.
func (d *Deployer) recordedReady(ctx context.Context, st *execution.State, report map[string]execution.ServiceHealth) {
	cur, found, err := d.ledger.GetCurrent(ctx, st.ProjectName, st.ConfigName)
	if err != nil {
		d.log.Warn("the current record could not be read to pace the first health check", "release_id", st.ReleaseID, "error", err)
		return
	}
	if !found {
		return
	}
	for _, g := range cur.Groups {
		s, ok := report[g.Service]
		if ok && g.ImageID != "" && g.ImageID == st.Images[g.Service] && g.ReadySeconds > 0 {
			s.ReadySeconds = g.ReadySeconds
			report[g.Service] = s
		}
	}
}

// readyAfter is how long after Deploy no check is useful: ReadyShare of
// the fastest boot seen (report's ReadySeconds, from the current record)
// of any service, less what the execution spent before Deploy; 0 when a
// service has none (its image never ran here: it may be healthy at any
// time).
func (d *Deployer) readyAfter(report map[string]execution.ServiceHealth, req execution.Request) time.Duration {
	if req.Execution.StartTime.IsZero() {
		return 0
	}
	fastest := 0
	for _, s := range report {
		if s.ReadySeconds == 0 {
			return 0
		}
		if fastest == 0 || s.ReadySeconds < fastest {
			fastest = s.ReadySeconds
		}
	}
	ready := time.Duration(float64(fastest) * tuning.ReadyShare * float64(time.Second))
	return ready - d.now().Sub(req.Execution.StartTime)
}

// retireWait is the wait before the next step of retiring the previous
// groups, elapsed after the point of no return (tuning.RetireChecks,
// jittered by the execution's id).
func retireWait(elapsed time.Duration, req execution.Request) int {
	return tuning.RetireChecks.Next(pacing.Situation{
		Elapsed: elapsed, Checks: int(elapsed / time.Second), Seed: req.Execution.ID + "/retire",
		Left: max(tuning.RetireTimeout-elapsed, time.Nanosecond),
	})
}

// throttledWait is the wait before a loop's task runs again after its
// n-th round AWS throttled (tuning.ThrottledSteps), jittered by the
// execution and the round.
func throttledWait(req execution.Request, n int) int {
	return tuning.ThrottledSteps.Next(pacing.Situation{Checks: n, Seed: req.Execution.ID + "/throttled"})
}

// throttledRetireWait is the wait before a step of a retirement or a
// clean-up runs again after its n-th step AWS throttled
// (tuning.ThrottledRetireSteps), jittered by the execution and the step.
func throttledRetireWait(req execution.Request, n int) int {
	return tuning.ThrottledRetireSteps.Next(pacing.Situation{Checks: n, Seed: req.Execution.ID + "/throttled"})
}
