package deployer

import (
	"context"
	"errors"
	"fmt"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/ledger"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/lock"
	"github.com/ferryhq/ferry/internal/naming"
)

// releaseLock is the ReleaseLock task: it records the outcome
// FailureClean with the error the State carries, releases the lock and
// removes the halt marker. It never touches the target. Idempotent.
func (d *Deployer) releaseLock(ctx context.Context, req execution.Request) (any, error) {
	st, err := d.verify(ctx, req)
	if err != nil {
		return nil, err
	}
	o := ledger.Outcome{
		ReleaseID: st.ReleaseID, Execution: req.Execution.ID, End: execution.EndFailureClean,
		StartedAt: req.Execution.StartTime, EndedAt: d.now(),
	}
	o.CreatedBy, o.CreatedByName = d.createdBy(ctx, st)
	if st.Error != nil {
		o.Error, o.Cause = st.Error.Error, failure.Message(st.Error.Cause)
	}
	err = d.ledger.PutOutcome(ctx, st.ProjectName, st.ConfigName, o)
	if err == nil {
		err = d.finish(ctx, st)
	}
	if err == nil {
		return st, nil
	}
	// On the last attempt, say in the outcome (if S3 takes it) that the
	// lock is kept: the execution ends FailureDirty.
	if err = exhausted(req, err); !failure.IsRetryable(err) {
		err = &failure.LockError{Op: "release", Err: err}
		d.recordDirty(ctx, st, req, &failure.CleanUpError{
			Leftovers: []string{"the lock " + naming.LockKey(st.ProjectName, st.ConfigName) + " (kept)"}, Err: err,
		})
	}
	return nil, err
}

// finish removes the halt marker, then releases the lock, last, so a
// failure anywhere before keeps the lock. A lock held by another release is
// not this release's to release: it is left alone, and so is the halt
// marker, which then belongs to that release's execution (this happens when
// Lock itself failed, for example a Lambda that died before or after
// writing the lock). A halt marker that cannot be removed for a reason other
// than a transient one is left, with a warning: it is harmless, since an
// execution only heeds markers written after it started.
func (d *Deployer) finish(ctx context.Context, st *execution.State) error {
	h, held, err := d.locks.Get(ctx, st.ProjectName, st.ConfigName)
	if err != nil {
		return err
	}
	if held && h.ReleaseID != st.ReleaseID {
		d.log.Warn("lock held by another release: left alone", "release_id", st.ReleaseID, "holder", h.ReleaseID)
		return nil
	}
	if err := d.halts.Clear(ctx, st.ProjectName, st.ConfigName); err != nil {
		if failure.IsRetryable(err) {
			return err
		}
		d.log.Warn("halt marker left behind (harmless: later executions ignore it)", "release_id", st.ReleaseID, "error", err.Error())
	}
	if !held {
		return nil
	}
	err = d.locks.Release(ctx, st.ProjectName, st.ConfigName, st.ReleaseID)
	if errors.Is(err, lock.ErrNotHolder) {
		d.log.Warn("lock taken by another release meanwhile: left alone", "release_id", st.ReleaseID, "error", err.Error())
		return nil
	}
	return err
}

// createdBy is who asked for the release, for the outcome record
// (author); the name it claims is "" when the release cannot be read (the
// outcome is still written).
func (d *Deployer) createdBy(ctx context.Context, st *execution.State) (by, name string) {
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
// retries). A failure to record it is logged: the error itself is what
// the state machine acts on.
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
	o.CreatedBy, o.CreatedByName = d.createdBy(ctx, st)
	if st.Error != nil {
		o.Error, o.Cause = st.Error.Error, failure.Message(st.Error.Cause)+"; then "+err.Error()
	}
	if perr := d.ledger.PutOutcome(ctx, st.ProjectName, st.ConfigName, o); perr != nil {
		d.log.Error("cannot record the outcome", "release_id", st.ReleaseID, "error", perr.Error())
	}
}

// exhausted turns a transient error of the last attempt the state machine
// allows a task (limits.TaskRetryMaxAttempts retries behind it) into a
// *failure.CleanUpError, keeping the leftovers it names, so the clean-up
// records the FailureDirty outcome it is heading for. Earlier attempts,
// and errors that are not transient, are returned as they are.
func exhausted(req execution.Request, err error) error {
	if req.Execution.RetryCount < limits.TaskRetryMaxAttempts || !failure.IsRetryable(err) {
		return err
	}
	cause := fmt.Errorf("still failing after %d retries: %w", limits.TaskRetryMaxAttempts, err)
	var ce *failure.CleanUpError
	if errors.As(err, &ce) {
		return &failure.CleanUpError{Leftovers: ce.Leftovers, Err: cause}
	}
	return &failure.CleanUpError{Err: cause}
}
