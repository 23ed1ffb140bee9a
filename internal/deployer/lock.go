package deployer

import (
	"context"
	"errors"
	"fmt"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/store/ledger"
	"github.com/ferryhq/ferry/internal/store/lock"
)

// lock is the Lock task: it takes the project-config lock for the release
// (re-entrant, so a retry succeeds) and writes its run-once marker. Another
// holder is a *failure.LockExistsError, after the release's FailureClean
// outcome is recorded (the state machine then ends FailureClean with no
// other task, and every release that ran has an outcome); a replayed
// release a *failure.BadReleaseError (its outcome is the first run's).
func (d *Deployer) lock(ctx context.Context, req execution.Request) (any, error) {
	st, err := d.verify(ctx, req)
	if err != nil {
		return nil, err
	}
	h := lock.Holder{ReleaseID: st.ReleaseID, Execution: req.Execution.ID, Since: d.now()}
	if err := d.locks.Acquire(ctx, st.ProjectName, st.ConfigName, h); err != nil {
		var held *failure.LockExistsError
		if errors.As(err, &held) {
			if rerr := d.recordLockHeld(ctx, st, req, held); rerr != nil {
				return nil, rerr
			}
		}
		return nil, err
	}
	return st, nil
}

// recordLockHeld records the FailureClean outcome of a release that found
// the lock held by another. Validate consumed the release id, so the
// outcome is this execution's to write. A failed write is returned: Lock
// is retried, or ReleaseLock records the outcome.
func (d *Deployer) recordLockHeld(ctx context.Context, st *execution.State, req execution.Request, held *failure.LockExistsError) error {
	o := ledger.Outcome{
		ReleaseID: st.ReleaseID, Execution: req.Execution.ID, End: execution.EndFailureClean,
		StartedAt: req.Execution.StartTime, EndedAt: d.now(),
		Error: failure.NameLockExists, Cause: failure.Message(held.Error()),
	}
	o.CreatedBy, o.CreatedByID, o.CreatedByName = d.createdBy(ctx, st)
	return d.putOutcome(ctx, st, req, o)
}

// holdsLock fails unless the project-config's lock is held by this
// release.
func (d *Deployer) holdsLock(ctx context.Context, st *execution.State) error {
	h, held, err := d.locks.Get(ctx, st.ProjectName, st.ConfigName)
	switch {
	case err != nil:
		return err
	case !held:
		return &failure.LockError{Op: "check", Err: fmt.Errorf("release %s no longer holds the lock %s", st.ReleaseID, naming.LockKey(st.ProjectName, st.ConfigName))}
	case h.ReleaseID != st.ReleaseID:
		return &failure.LockError{Op: "check", Err: fmt.Errorf("the lock %s is held by release %s (execution %s), not %s",
			naming.LockKey(st.ProjectName, st.ConfigName), h.ReleaseID, h.Execution, st.ReleaseID)}
	}
	return nil
}
