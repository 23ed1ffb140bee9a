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
// account and region stop giving way to it (retireStepWait). CheckHealthy
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

// retireStepWait is the wait in seconds before the next step of a
// retirement past its point of no return (elapsed since it), beside k
// deploys to its account and region on their way to a healthy fleet
// (givingWay: yielding to them): its own pace (retireWait), or the
// longer wait that gives way to them.
func retireStepWait(req execution.Request, elapsed time.Duration, k int) int {
	return givingWay(req, elapsed, retireWait(elapsed, req), k)
}

// yieldingTo is how many deploys to st's account and region on their way
// to a healthy fleet a step of a retirement (CleanUpSuccess's, or
// CleanUpFailure's of a failed release's groups; elapsed since it began)
// gives way to (underway): none from tuning.RetireYieldFor on. They are
// listed once a step, before its work: the yield caps the step's Auto
// Scaling calls (retireCalls) and spaces the steps (givingWay), and
// never skips one. A listing that fails means no yield, with a warning:
// the retirement then goes at the pace it would without deploys beside
// it, which is safe, and an S3 outage does not slow every retirement to
// its longest wait.
func (d *Deployer) yieldingTo(ctx context.Context, st *execution.State, elapsed time.Duration) int {
	if elapsed >= tuning.RetireYieldFor {
		return 0
	}
	return d.underway(ctx, st)
}

// crowdOf is how many others a step of a retirement shares the
// account's Auto Scaling bucket with: the k deploys on their way beside
// it now, or the most a step of it counted before (Retire.Underway),
// if more: those have arrived since, or will, and each then retires its
// previous groups beside it. Retirements that gave way together do not
// all step at their whole budget at once when the last deploy arrives.
func crowdOf(st *execution.State, k int) int {
	if st.Retire != nil {
		return max(k, st.Retire.Underway)
	}
	return k
}

// retireCalls is the most Auto Scaling calls a step of a retirement
// makes beside k others (crowdOf; fleet.Retirer.Calls): no bound alone
// (0); else its (k+1)-th of tuning.AutoScalingCallsPerRound, as a round
// of Deploy's, never less than a second's refill of the account's
// bucket (limits.AutoScalingRefill): the steps of retirements that meet
// a deploy's round, or each other, in a second stay within the bucket,
// and a step of many groups' scale-ins goes on at the next step, where
// it stopped.
func retireCalls(k int) int {
	if k == 0 {
		return 0
	}
	return max(limits.AutoScalingRefill, tuning.AutoScalingCallsPerRound/(k+1))
}

// givingWay is wait, the seconds before the next step of a retirement
// (elapsed since it began), or, beside k deploys on their way to a
// healthy fleet (yieldingTo), the longer wait that gives way to them
// (retireYield).
func givingWay(req execution.Request, elapsed time.Duration, wait, k int) int {
	if k == 0 {
		return wait
	}
	return max(wait, retireYield(req, elapsed, k))
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

// yielding is wait, logged when the step gave way to k deploys on their
// way.
func (d *Deployer) yielding(st *execution.State, k, wait int) int {
	if k > 0 {
		d.log.Info("giving way to the deploys on their way", "release_id", st.ReleaseID, "underway", k, "wait_seconds", wait)
	}
	return wait
}
