package deployer

import (
	"context"
	"fmt"
	"time"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/fanout"
	"github.com/ferryhq/ferry/internal/health"
	"github.com/ferryhq/ferry/internal/health/analysis"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/tuning"
)

// checkHealthy is the CheckHealthy task. In order it fails with:
//   - a *failure.HaltError when a halt marker was written after the
//     execution started;
//   - a *failure.TimeoutError when more than the release's timeout has
//     passed since the execution started;
//   - a *failure.DeployError when a new group can never become healthy:
//     Auto Scaling reports a failed launch that is not a capacity shortage
//     (an image, instance type, security group or instance profile EC2
//     refuses), or a load balancer does not route to an instance's zone
//     (a target unused with Target.NotInUse, a classic load balancer
//     OutOfService for the zone);
//   - a *failure.HaltError when more instances of a service's new group
//     terminated during the deploy than its max_terms tolerates;
//   - a *failure.HaltError when an alarm the release names is in ALARM
//     (checkAlarms: its alarm gate), or a service's load balancers
//     answered more of their requests with a 5xx than its
//     max_error_rate (checkErrorRates);
//   - a *failure.HaltError when the release's canary analysis scores
//     below its marginal_score (analyze: each service's new group
//     against its previous groups, which serve alongside).
//
// Otherwise it returns the Health: whether every service is stable (it has
// held its healthy target for its stability window, with no instance
// terminated or replaced, see package health, on a healthy count read
// once the window was over: Confirmed) at its whole capacity and
// the canary analysis, if any, passes (marginal, or no data at all,
// waits for the next check: the timeout bounds it), or
// stable at a step of its canary with a step left (judge), the
// per-service report (each service's ReadySeconds noted once an
// instance is healthy), the checks made so far and the wait before the
// next one (nextCheck; beside other deploys on their way, at least
// readsShareWait after a check that read load balancers). The AWS calls
// of one check are one
// DescribeAutoScalingGroups per 50 services, one DescribeInstanceHealth
// per classic load balancer and one DescribeTargetHealth per target group
// in use, but for the services holding their target mid-window or
// confirmed stable, and those left out beyond
// its load balancer read budget (balancersUnsettled, readBudget; the
// Health carries when its reads are refilled, ReadsRefill):
// they never grow with instances, and stay within an account's Elastic
// Load Balancing Describe bucket. A group's scaling activities (a
// DescribeScalingActivities page per 100) are read only when its
// instances changed since the previous check, one is terminating, or it
// is short of its launch count (activitiesOnChange). A check AWS throttles
// is no check (throttled): it waits for the next. A service is judged on
// the load balancers its release names (one DescribeTargetGroups resolves
// their target groups), never on those its group is attached to now; the
// one thing it changes is a new group taken out of one of them, which it
// attaches again (attachAgain: the attachment is ferry's, Deploy made it)
// so the group is judged again once its instances pass that load
// balancer's health checks.
func (d *Deployer) checkHealthy(ctx context.Context, req execution.Request) (any, error) {
	st, err := decodeState(req)
	if err != nil {
		return nil, err
	}
	r, c, err := d.beginCheck(ctx, st, req)
	if err != nil {
		return nil, err
	}
	now := d.now()
	j, err := d.healthReport(ctx, c, st, r, now, activitiesOnChange, balancersUnsettled, nil)
	if err != nil {
		return d.throttled(st, req, err)
	}
	report := j.report
	if err := d.attachAgain(ctx, c, st, j); err != nil {
		return d.throttled(st, req, err)
	}
	if err := checkTerminations(r, report); err != nil {
		return nil, err
	}
	if err := checkGates(ctx, c, r, now); err != nil {
		return d.throttled(st, req, err)
	}
	a, err := d.analyze(ctx, c.CloudWatch, st, r, now, now, false)
	if err != nil {
		return d.throttled(st, req, err)
	}
	h := &execution.Health{Checks: 1, Services: report, Analysis: a, ReadsRefill: readsRefill(st, now, j.reads)}
	if st.Health != nil {
		h.Underway = st.Health.Underway
		noteReady(report, st.Health.Services, req, now)
		h.Checks = st.Health.Checks + 1
		h.Throttled = max(0, st.Health.Throttled-1)
	}
	h.Healthy, h.NextStep = judge(report, now)
	if h.Healthy && a != nil && a.Report.Class != analysis.ClassPass {
		h.Healthy = false // the last judgement must pass: see release.Analysis
		d.log.Info("healthy, waiting for the canary analysis to pass", "release_id", st.ReleaseID, "service", a.Service, "class", string(a.Report.Class), "score", a.Report.Score)
	}
	d.healthyReached(ctx, c, st, req, h)
	h.WaitSeconds = backOff(d.nextCheck(st, req, r, h.Checks, 0, report, booting(r, report)), h.Throttled)
	if h.Underway > 0 && j.reads > 0 {
		h.WaitSeconds = max(h.WaitSeconds, readsShareWait(req, h.Checks, j.reads, h.Underway))
	}
	d.log.Info("health checked", "release_id", st.ReleaseID, "stable", h.Healthy, "next_step", h.NextStep, "unstable_services", health.Unstable(report, now))
	return h, nil
}

// healthyReached, after a check found the release healthy (h), puts
// Release Healthy (announceHealthy) and clears the deploy's start marker
// (arrive) side by side: both best effort, neither needs the other, and
// the check that ends the wait takes one call's time for them, not two.
// Nothing, when h is not healthy.
func (d *Deployer) healthyReached(ctx context.Context, c *cloud.Clients, st *execution.State, req execution.Request, h *execution.Health) {
	if !h.Healthy {
		return
	}
	_ = fanout.Each(ctx, 2, 2, func(ctx context.Context, i int) error {
		if i == 0 {
			d.announceHealthy(ctx, c, st, req, h)
		} else {
			d.arrive(ctx, st, req)
		}
		return nil
	})
}

// beginCheck is what a health check starts from: it fails with a halt
// (checkHalt), else with a timeout (checkTimeout), else with what
// loading the verified release or connecting to its target failed with;
// the halt marker, the release and the lock's run (the session's
// identity) are read side by side, a check's three S3 reads taking one
// read's time, with, while the previous check (or Deploy) counted other
// deploys on their way, their count again (underwayOr), which it sets
// in st.Health.
func (d *Deployer) beginCheck(ctx context.Context, st *execution.State, req execution.Request) (*release.Release, *cloud.Clients, error) {
	timedOut := d.checkTimeout(st, req) // the State's timeout, before loadRelease derives it again
	var (
		halted   error
		r        *release.Release
		session  cloud.Session
		underway int
	)
	lanes := 3
	if st.Health != nil && st.Health.Underway > 0 {
		lanes = 4
	}
	err := fanout.Each(ctx, lanes, lanes, func(ctx context.Context, i int) error {
		var err error
		switch i {
		case 0:
			halted = d.checkHalt(ctx, st, req)
			err = halted
		case 1:
			r, err = d.loadRelease(ctx, st)
		case 2:
			session, err = d.session(ctx, st)
		default:
			underway = d.underwayOr(ctx, st, st.Health.Underway)
		}
		return err
	})
	if lanes == 4 {
		st.Health.Underway = underway
	}
	switch {
	case halted != nil:
		return nil, nil, halted
	case timedOut != nil:
		return nil, nil, timedOut
	case err != nil:
		return nil, nil, err
	}
	c, err := d.connectAs(ctx, st, session, false)
	if err != nil {
		return nil, nil, err
	}
	return r, c, nil
}

// backOff is wait (seconds) doubled n times, up to
// tuning.MaxThrottledCheckWait: n is Health.Throttled, one more for each
// check AWS throttled and one less for each it did not, so deploys that
// share a busy account slow down together and speed up again only
// gradually (additive recovery of the exponent), instead of all coming
// back at full pace after one good check.
func backOff(wait, n int) int {
	if n <= 0 {
		return wait
	}
	d := time.Duration(wait) * time.Second
	for range min(n, 8) {
		d *= 2
	}
	return int(min(d, tuning.MaxThrottledCheckWait) / time.Second)
}

// throttled is how a check whose reads AWS throttled ends (err, every
// failure of which is throttling: cloud.Throttled): it learned nothing,
// so it is not healthy and takes no step, keeps the previous check's
// report, counts as a check, and waits for the next one: the schedule's
// pace (not the quick one of an imminent instance), backed off (backOff).
// Throttling is AWS asking the account's callers to slow down, and the
// backoff does (Elastic Load Balancing User Guide, Request throttling:
// "we recommend that you use an exponential backoff and retry"); it is
// not a failure of the release, and the release's timeout still bounds
// the loop. Any other err is returned as it is.
func (d *Deployer) throttled(st *execution.State, req execution.Request, err error) (any, error) {
	if !cloud.Throttled(err) || st.Health == nil {
		return nil, err
	}
	h := &execution.Health{Checks: st.Health.Checks + 1, Throttled: st.Health.Throttled + 1, Services: st.Health.Services, ReadsRefill: st.Health.ReadsRefill,
		Underway: st.Health.Underway}
	h.WaitSeconds = backOff(d.nextCheck(st, req, nil, h.Checks, 0, nil, false), h.Throttled)
	d.log.Warn("health check throttled: checking again after the wait", "release_id", st.ReleaseID, "wait_seconds", h.WaitSeconds, "throttled", h.Throttled, "error", err.Error())
	return h, nil
}

// checkTerminations fails with a *failure.HaltError when a service's new
// group lost more instances during the deploy than its max_terms
// tolerates (see capacity.Bounds.ShouldHalt).
func checkTerminations(r *release.Release, report map[string]execution.ServiceHealth) error {
	for _, svc := range r.ServiceNames() {
		b := bounds(r.Services[svc])
		s := report[svc]
		// A Spot instance Capacity Rebalancing terminates after its
		// replacement is in service took no capacity away.
		if n := max(s.Terminating-s.Rebalancing, s.Terminated); b.ShouldHalt(n) {
			what := "instances of its new group terminated"
			if n == 1 {
				what = "instance of its new group terminated"
			}
			return &failure.HaltError{Reason: fmt.Sprintf("service %s: %d %s during the deploy, more than its max_terms of %d",
				svc, n, what, b.MaxTerms)}
		}
	}
	return nil
}

// checkTimeout fails with a *failure.TimeoutError when the release's
// timeout, measured from the execution's start, has passed.
func (d *Deployer) checkTimeout(st *execution.State, req execution.Request) error {
	if req.Execution.StartTime.IsZero() || st.Timeout <= 0 {
		return nil
	}
	timeout := time.Duration(st.Timeout) * time.Second
	if elapsed := d.now().Sub(req.Execution.StartTime); elapsed > timeout {
		return &failure.TimeoutError{Timeout: timeout, Elapsed: elapsed}
	}
	return nil
}

// checkHalt fails with a *failure.HaltError when a halt marker was written
// after the execution started.
func (d *Deployer) checkHalt(ctx context.Context, st *execution.State, req execution.Request) error {
	m, err := d.halts.Check(ctx, st.ProjectName, st.ConfigName, req.Execution.StartTime)
	if err != nil {
		return err
	}
	if m == nil {
		return nil
	}
	reason := "halt marker"
	if m.By != "" {
		reason += " by " + m.By
	}
	if m.Reason != "" {
		reason += ": " + m.Reason
	}
	return &failure.HaltError{Reason: reason}
}
