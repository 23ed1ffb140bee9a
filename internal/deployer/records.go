package deployer

import (
	"context"
	"errors"
	"fmt"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/store/ledger"
	"github.com/ferryhq/ferry/internal/store/lock"
	"github.com/ferryhq/ferry/internal/tuning"
)

// createdBy is who asked for the release, for the outcome record
// (author); the name it claims is "" when the release cannot be read (the
// outcome is still written).
func (d *Deployer) createdBy(ctx context.Context, st *execution.State) (by, id, name string) {
	r, err := d.ledger.GetRelease(ctx, st.ProjectName, st.ConfigName, st.ReleaseID)
	claimed := ""
	if err != nil {
		d.log.Warn("cannot read the release for its outcome", "release_id", st.ReleaseID, "error", err.Error())
	} else {
		claimed = r.CreatedBy
	}
	return d.author(ctx, st, claimed)
}

// recordDirty records the outcome FailureDirty for a clean up that left
// resources behind (not for a transient failure, which the state machine
// retries), and puts its deploy events. A failure to record it is
// logged: the error itself is what the state machine acts on, and the
// events say the end it reaches all the same.
func (d *Deployer) recordDirty(ctx context.Context, st *execution.State, req execution.Request, err error) {
	var ce *failure.CleanUpError
	if failure.NameOf(err) != failure.NameCleanUp || !errors.As(err, &ce) {
		return
	}
	o := ledger.Outcome{
		ReleaseID: st.ReleaseID, Execution: req.Execution.ID, End: execution.EndFailureDirty,
		Error: failure.NameCleanUp, Cause: err.Error(), Leftovers: ce.Leftovers,
		StartedAt: req.Execution.StartTime, EndedAt: d.now(),
	}
	o.CreatedBy, o.CreatedByID, o.CreatedByName = d.createdBy(ctx, st)
	if st.Error != nil {
		o.Error, o.Cause = st.Error.Error, failure.Message(st.Error.Cause)+"; then "+err.Error()
	}
	if perr := d.recordOutcome(ctx, st, o); perr != nil {
		d.log.Error("cannot record the outcome", "release_id", st.ReleaseID, "error", perr.Error())
	}
	d.announceOutcome(ctx, nil, st, req, o)
}

// exhausted turns a transient error of the last attempt the state machine
// allows a task (tuning.TaskRetryMaxAttempts retries behind it) into a
// *failure.CleanUpError, keeping the leftovers it names, so the clean-up
// records the FailureDirty outcome it is heading for. Earlier attempts,
// and errors that are not transient, are returned as they are.
func exhausted(req execution.Request, err error) error {
	if !lastAttempt(req) || !failure.IsRetryable(err) {
		return err
	}
	cause := fmt.Errorf("still failing after %d retries: %w", tuning.TaskRetryMaxAttempts, err)
	var ce *failure.CleanUpError
	if errors.As(err, &ce) {
		return &failure.CleanUpError{Leftovers: ce.Leftovers, Err: cause}
	}
	return &failure.CleanUpError{Err: cause}
}

// author is who asked for the release, for the records: the caller its
// identity proof names (its full ARN, and its unique id), as Validate
// verified it and wrote it in the run-once marker, with the name the
// client gave itself (created_by); without a verified caller, that name
// alone. A marker that cannot be read leaves the name alone, with a
// warning: the record is still written.
func (d *Deployer) author(ctx context.Context, st *execution.State, claimed string) (createdBy, id, name string) {
	run, found, err := d.locks.RunOf(ctx, st.ProjectName, st.ConfigName, st.ReleaseID)
	if err != nil {
		d.log.Warn("cannot read the run-once marker for the record", "release_id", st.ReleaseID, "error", err.Error())
	}
	return authorOf(run, found, claimed)
}

// authorOf is author as the run-once marker run (found: there is one)
// names the caller.
func authorOf(run lock.Run, found bool, claimed string) (createdBy, id, name string) {
	if !found || run.CreatedBy == "" {
		return claimed, "", ""
	}
	return run.CreatedBy, run.CreatedByID, claimed
}

// asCleanUp is where a clean-up's failure is headed: a transient one,
// while retries remain, is returned as retry, to be retried; any other
// (exhausted) becomes ce, a *failure.CleanUpError that keeps the
// leftovers err names.
func asCleanUp(req execution.Request, err error) (ce *failure.CleanUpError, retry error) {
	err = exhausted(req, err)
	if failure.IsRetryable(err) {
		return nil, err
	}
	if !errors.As(err, &ce) {
		ce = &failure.CleanUpError{Err: err}
	}
	return ce, nil
}

// putOutcome records o for st's project-config (recordOutcome), then
// puts its deploy events (announceOutcome), as the task req: for an
// outcome that is final once written (a lock another release holds). An
// outcome the lock's release may still overwrite (Success, FailureClean)
// is recorded with recordOutcome and announced once the lock is
// released, so the events say the end the state machine reports; a
// dirty end is announced whether or not S3 took its record (recordDirty).
func (d *Deployer) putOutcome(ctx context.Context, st *execution.State, req execution.Request, o ledger.Outcome) error {
	if err := d.recordOutcome(ctx, st, o); err != nil {
		return err
	}
	d.announceOutcome(ctx, nil, st, req, o)
	return nil
}

// recordOutcome records o for st's project-config, stamped with the
// deployer's version, with the release's last canary analysis when it
// has one (ledger.GetAnalysis). The record is read when the state
// carries a judgement, and for every halt: an analysis that fails at its
// very first check halts the release before the state carries any.
func (d *Deployer) recordOutcome(ctx context.Context, st *execution.State, o ledger.Outcome) error {
	o.DeployerVersion = d.cfg.Version
	judged := st.Health != nil && st.Health.Analysis != nil
	if judged || o.Error == failure.NameHalt {
		// The record has the last judgement, the one a failure rolled
		// back on too (the state keeps the check before it).
		a, found, err := d.ledger.GetAnalysis(ctx, st.ProjectName, st.ConfigName, st.ReleaseID)
		switch {
		case err != nil:
			d.log.Warn("cannot read the canary analysis for the outcome", "release_id", st.ReleaseID, "error", err.Error())
			if judged {
				o.Analysis = st.Health.Analysis
			}
		case found:
			o.Analysis = &a
		}
	}
	return d.ledger.PutOutcome(ctx, st.ProjectName, st.ConfigName, o)
}
