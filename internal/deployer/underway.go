package deployer

import (
	"context"
	"time"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/tuning"
	"github.com/ferryhq/ferry/internal/tuning/pacing"
)

// arrive clears the deploy's start marker (lock.Starts.Arrive): it is no
// longer on its way to a healthy fleet, and the retirements in its
// account and region stop giving way to it (beside). CheckHealthy
// calls it at its last check (healthy, no canary step left), CleanUpFailure
// and ReleaseLock when the deploy failed. Best effort: a marker left
// counts as on its way only until tuning.UnderwayHorizon after its start,
// so a failure costs pacing, never the deploy. A deploy whose execution
// has no start time stamped its marker with when its turn was taken,
// which is not known here: that marker is left to the horizon.
func (d *Deployer) arrive(ctx context.Context, st *execution.State, req execution.Request) {
	at := req.Execution.StartTime
	if at.IsZero() || st.Target.AccountID == "" || st.Target.Region == "" {
		return
	}
	if err := d.starts.Arrive(ctx, st.Target.AccountID, st.Target.Region, naming.ExecutionName(st.ProjectName, st.ConfigName, st.ReleaseID), at); err != nil {
		d.log.Warn("the deploy's start marker could not be cleared: it counts as on its way until its horizon", "release_id", st.ReleaseID, "error", err.Error())
	}
}

// beside is who a step of a retirement (CleanUpSuccess's, or
// CleanUpFailure's of a failed release's groups) shares the account's
// one Auto Scaling bucket with: k deploys on their way to a healthy
// fleet now (underway), and crowd others in all (crowdOf).
type beside struct{ k, crowd int }

// besideOf is who a step of a retirement of groups (how many it has)
// elapsed since it began shares the account's Auto Scaling bucket with
// (beside); with none to retire, or from tuning.RetireYieldFor on,
// nobody: nothing is listed, and the retirement goes at its own pace.
// The deploys on their way (underway) are listed once a step, before its
// work: they cap the step's Auto Scaling calls (retireCalls) and space
// the steps (beside.wait), and never skip one. A listing that fails
// counts none: the retirement then goes at the pace its crowd alone
// sets, which is safe, and an S3 outage does not slow every retirement
// to its longest wait.
func (d *Deployer) besideOf(ctx context.Context, st *execution.State, groups int, elapsed time.Duration) beside {
	if groups == 0 || elapsed >= tuning.RetireYieldFor {
		return beside{}
	}
	k := d.underway(ctx, st)
	return beside{k: k, crowd: crowdOf(st, k)}
}

// crowdOf is how many others a step of a retirement shares the
// account's Auto Scaling bucket with: the k deploys on their way beside
// it now, or the most a step of it counted before (Retire.Underway),
// if more: those have arrived since, or will, and each then retires its
// previous groups beside it. Retirements that gave way together do not
// all step at their whole budget, and at their own pace, at once when
// the last deploy arrives.
func crowdOf(st *execution.State, k int) int {
	if st.Retire != nil {
		return max(k, st.Retire.Underway)
	}
	return k
}

// retireCalls is the most Auto Scaling calls a step of a retirement
// makes beside k others (crowdOf; fleet.Retirer.Calls): no bound alone
// (0); else its (k+1)-th of tuning.AutoScalingCallsPerRound, as a round
// of Deploy's, never less than half the account's bucket
// (limits.AutoScalingBurst): two steps of retirements that meet in a
// second stay within it, and a step of many groups' scale-ins goes on at
// the next step, where it stopped. Fewer a step would take more steps,
// each judging the new groups again on their load balancers (recheck),
// while a previous group is not scaled in: more reads of Elastic Load
// Balancing's Describe bucket, whose retirements' bursts then meet.
func retireCalls(k int) int {
	if k == 0 {
		return 0
	}
	return max(limits.AutoScalingBurst/2, tuning.AutoScalingCallsPerRound/(k+1))
}

// calls is the most Auto Scaling calls the step makes (retireCalls).
func (b beside) calls() int { return retireCalls(b.crowd) }

// wait is the seconds before the next step of a retirement elapsed since
// it began whose own pace is own: the longest of it, the wait that
// gives way to the b.k deploys on their way (retireYield), and the time
// its (crowd+1)-th of the account's refill (limits.AutoScalingRefill a
// second) takes to bring back a step's calls, jittered by
// tuning.ShareJitter and at most tuning.RetireYieldMax, so that the
// steps of the retirements beside it spread rather than meet.
func (b beside) wait(req execution.Request, elapsed time.Duration, own int) int {
	wait := own
	if b.k > 0 {
		wait = max(wait, retireYield(req, elapsed, b.k))
	}
	if b.crowd > 0 {
		every := min(time.Duration(b.calls()*(b.crowd+1))*time.Second/limits.AutoScalingRefill, tuning.RetireYieldMax)
		s := pacing.Schedule{Paces: []pacing.Pace{{Every: every}}, Jitter: tuning.ShareJitter}
		wait = max(wait, s.Next(pacing.Situation{Checks: int(elapsed / time.Second), Seed: req.Execution.ID + "/share"}))
	}
	return wait
}

// underway is how many other deploys to st's account and region are on
// their way to a healthy fleet (lock.Starts.Underway). A listing that
// fails counts none, with a warning: the caller then goes at the pace it
// would alone, which is safe (a pace, never a check), and an S3 outage
// does not slow every deploy and retirement to its longest wait.
func (d *Deployer) underway(ctx context.Context, st *execution.State) int {
	return d.underwayOr(ctx, st, 0)
}

// underwayOr is underway, or known when the listing fails (a health
// check keeps the count of the one before: its pace never gets quicker
// for not knowing).
func (d *Deployer) underwayOr(ctx context.Context, st *execution.State, known int) int {
	k, err := d.starts.Underway(ctx, st.Target.AccountID, st.Target.Region, naming.ExecutionName(st.ProjectName, st.ConfigName, st.ReleaseID), d.now(), tuning.UnderwayHorizon)
	if err != nil {
		d.log.Warn("cannot list the deploys on their way: going by the count known", "release_id", st.ReleaseID, "underway", known, "error", err.Error())
		return known
	}
	return k
}

// retireYield is the wait in seconds of a retirement's step (elapsed
// since its point of no return) giving way to k deploys on their way:
// k times tuning.RetireYieldPer, at most tuning.RetireYieldMax,
// jittered by a fifth by the execution and the step, so retirements
// that began together do not step together.
func retireYield(req execution.Request, elapsed time.Duration, k int) int {
	pace := min(time.Duration(k)*tuning.RetireYieldPer, tuning.RetireYieldMax)
	s := pacing.Schedule{Paces: []pacing.Pace{{Every: pace}}, Jitter: 0.2}
	return s.Next(pacing.Situation{Checks: int(elapsed / time.Second), Seed: req.Execution.ID + "/yield"})
}

// yielding is wait, logged when the step gave way to the deploys on
// their way, or shared the bucket with retirements, b.
func (d *Deployer) yielding(st *execution.State, b beside, wait int) int {
	if b.crowd > 0 {
		d.log.Info("giving way to the deploys on their way", "release_id", st.ReleaseID, "underway", b.k, "beside", b.crowd, "wait_seconds", wait)
	}
	return wait
}
