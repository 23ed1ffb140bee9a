package deployer

import (
	"context"
	"time"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/store/lock"
	"github.com/ferryhq/ferry/internal/tuning"
)

// retireTurns is how the steps of retirements share an account and
// region's Auto Scaling calls (lock.Turns).
var retireTurns = lock.StepQueue{Calls: tuning.TurnCalls, Share: tuning.TurnShare, Horizon: tuning.TurnHorizon}

// awaitTurn is how a step of CleanUpSuccess that calls Auto Scaling
// begins: it takes its turn at its account and region's calls
// (lock.Turns.Take), or holds one already (Retire.Turn: the step before
// waited for it, and it is now). Its turn now, it goes: calls is the most
// Auto Scaling calls it makes (0: as many as it needs, no turn beside its
// own). Its turn later, it makes no call: later is what it reports, the
// step before's report with the wait for its turn (and the turn, when it
// holds one). A turn that cannot be taken (S3 failing) lets the step go,
// its calls bounded to tuning.TurnShare: a pace, never a check, and an
// S3 outage does not stop every retirement.
func (d *Deployer) awaitTurn(ctx context.Context, st *execution.State) (calls int, later *execution.Retire) {
	if st.Target.AccountID == "" || st.Target.Region == "" {
		return 0, nil
	}
	now := d.now()
	if st.Retire != nil && st.Retire.Turn != nil && !now.Before(st.Retire.Turn.At) && now.Before(st.Retire.Turn.At.Add(time.Second)) {
		return st.Retire.Turn.Calls, nil
	}
	turn, err := d.turns.Take(ctx, st.Target.AccountID, st.Target.Region, naming.ExecutionName(st.ProjectName, st.ConfigName, st.ReleaseID), now, retireTurns)
	if err != nil {
		d.log.Warn("cannot take a turn at the account's Auto Scaling calls: going, within a share of them", "release_id", st.ReleaseID, "calls", tuning.TurnShare, "error", err.Error())
		return tuning.TurnShare, nil
	}
	if turn.Held && turn.Wait == 0 {
		return turn.Calls, nil
	}
	later = &execution.Retire{}
	if st.Retire != nil {
		r := *st.Retire
		later = &r
	}
	later.WaitSeconds, later.Turn = int(turn.Wait/time.Second), nil
	if turn.Held {
		later.Turn = &execution.Turn{At: now.Add(turn.Wait), Calls: turn.Calls}
	}
	d.log.Info("waiting for a turn at the account's Auto Scaling calls", "release_id", st.ReleaseID, "beside", turn.Beside, "held", turn.Held, "wait_seconds", later.WaitSeconds)
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
