package deployer

import (
	"context"
	"time"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/store/lock"
	"github.com/ferryhq/ferry/internal/tuning"
)

// turnQueue is how the rounds of deploys and the steps of retirements
// share an account and region's Auto Scaling calls (lock.Turns).
var turnQueue = lock.StepQueue{Calls: tuning.TurnCalls, Refill: tuning.TurnRefill, Span: tuning.TurnSpan, Share: tuning.TurnShare, Horizon: tuning.TurnHorizon}

// stepTurn is a step's turn at its account and region's Auto Scaling
// calls (turn): now, or after wait seconds.
type stepTurn struct {
	now bool
	// calls is the most Auto Scaling calls the step makes now (0: as
	// many as it needs, no turn beside its own).
	calls int
	// wait is the seconds to the step's turn when it is not now, held
	// the turn it then holds (nil: it takes one again).
	wait int
	held *execution.Turn
}

// turnAt is how a step that calls Auto Scaling in bulk begins (a later
// round of Deploy beside deploys on their way, a step of CleanUpSuccess):
// it takes its turn at its account and region's calls (lock.Turns.Take)
// for the calls it makes (want; 0: alone, as many as it needs, beside
// others tuning.TurnShare), or holds one already (held: the step before
// waited for it, and it is now). Its turn now, it goes, within the turn's calls. Its
// turn later, it makes no call and waits for it. A turn that cannot be
// taken (S3 failing) lets the step go, its calls bounded to
// tuning.TurnShare: a pace, never a check, and an S3 outage stops no
// deploy or retirement.
func (d *Deployer) turnAt(ctx context.Context, st *execution.State, held *execution.Turn, want int) stepTurn {
	if st.Target.AccountID == "" || st.Target.Region == "" {
		return stepTurn{now: true}
	}
	now := d.now()
	if held != nil {
		if t := (stepTurn{held: held}).by(now); t.now || t.held != nil {
			return t // its turn, now or still to come
		}
	}
	t, err := d.turns.Take(ctx, st.Target.AccountID, st.Target.Region, naming.ExecutionName(st.ProjectName, st.ConfigName, st.ReleaseID), want, now, turnQueue)
	if err != nil {
		d.log.Warn("cannot take a turn at the account's Auto Scaling calls: going, within a share of them", "release_id", st.ReleaseID, "calls", tuning.TurnShare, "error", err.Error())
		return stepTurn{now: true, calls: tuning.TurnShare}
	}
	if t.Held && t.Wait == 0 {
		return stepTurn{now: true, calls: t.Calls}
	}
	out := stepTurn{wait: int(t.Wait / time.Second)}
	if t.Held {
		out.held = &execution.Turn{At: now.Add(t.Wait), Calls: t.Calls}
	}
	out = out.by(d.now())
	if !out.now {
		d.log.Info("waiting for a turn at the account's Auto Scaling calls", "release_id", st.ReleaseID, "beside", t.Beside, "held", out.held != nil, "wait_seconds", out.wait)
	}
	return out
}

// by is t as it stands at now, later than when it was taken (the step's
// other work took time): a turn held that has come goes now, within its
// second; one that has passed is lost, and the step takes one again a
// second later (never a wait of 0: a round that waits made nothing); one
// still to come is waited for from now, so that the next step
// begins within its turn's second.
func (t stepTurn) by(now time.Time) stepTurn {
	if t.now || t.held == nil {
		return t
	}
	switch at := t.held.At; {
	case now.Before(at):
		t.wait = int((at.Sub(now) + time.Second - 1) / time.Second)
	case now.Before(at.Add(time.Second)):
		return stepTurn{now: true, calls: t.held.Calls}
	default:
		t.held, t.wait = nil, 1
	}
	return t
}

// awaitTurn is how a step of CleanUpSuccess begins (turnAt): its turn now,
// calls is the most Auto Scaling calls it makes (0: no bound); its turn
// later, later is what it reports: the step before's report, with the
// wait for its turn and the turn it holds.
func (d *Deployer) awaitTurn(ctx context.Context, st *execution.State) (calls int, later *execution.Retire) {
	var held *execution.Turn
	if st.Retire != nil {
		held = st.Retire.Turn
	}
	want := 0 // alone, the whole of the turns' calls; beside others, a share
	if held == nil && st.Retire != nil && st.Retire.Settling {
		want = 1 + 2*len(st.Services) // its describe, each group's scale and resume
	}
	t := d.turnAt(ctx, st, held, want)
	if t.now {
		return t.calls, nil
	}
	later = &execution.Retire{}
	if st.Retire != nil {
		r := *st.Retire
		later = &r
	}
	later.WaitSeconds, later.Turn = t.wait, t.held
	return 0, later
}

// within is the most Auto Scaling calls of a step's work: bound (0: no
// bound) and its turn's calls (0: none) less spent, the calls the step
// made before it, one at least.
func within(bound, turn, spent int) int {
	if turn == 0 {
		return bound
	}
	left := max(turn-spent, 1)
	if bound == 0 {
		return left
	}
	return min(bound, left)
}
