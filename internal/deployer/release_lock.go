package deployer

import (
	"context"
	"errors"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/store/ledger"
	"github.com/ferryhq/ferry/internal/store/lock"
)

// releaseLock is the ReleaseLock task: it records the outcome
// FailureClean with the error the State carries, releases the lock and
// removes the halt marker. It touches the target only to put the
// outcome's deploy events (announceOutcome), once the lock is released:
// a lock it cannot release makes the end FailureDirty, which is then
// the only outcome announced. Idempotent.
func (d *Deployer) releaseLock(ctx context.Context, req execution.Request) (any, error) {
	st, err := d.verify(ctx, req)
	if err != nil {
		return nil, err
	}
	d.arrive(ctx, st, req)
	o := ledger.Outcome{
		ReleaseID: st.ReleaseID, Execution: req.Execution.ID, End: execution.EndFailureClean,
		StartedAt: req.Execution.StartTime, EndedAt: d.now(),
	}
	o.CreatedBy, o.CreatedByID, o.CreatedByName = d.createdBy(ctx, st)
	o.RolledBack = st.RolledBack
	if st.Error != nil {
		o.Error, o.Cause = st.Error.Error, failure.Message(st.Error.Cause)
	}
	err = d.recordOutcome(ctx, st, o)
	if err == nil {
		err = d.finish(ctx, st)
	}
	if err == nil {
		d.announceOutcome(ctx, nil, st, req, o)
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
