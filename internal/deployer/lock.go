package deployer

import (
	"context"
	"fmt"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/lock"
	"github.com/ferryhq/ferry/internal/naming"
)

// lock is the Lock task: it takes the project-config lock for the release
// (re-entrant, so a retry succeeds) and writes its run-once marker. Another
// holder is a *failure.LockExistsError; a replayed release a
// *failure.BadReleaseError.
func (d *Deployer) lock(ctx context.Context, req execution.Request) (any, error) {
	st, err := d.verify(ctx, req)
	if err != nil {
		return nil, err
	}
	h := lock.Holder{ReleaseID: st.ReleaseID, Execution: req.Execution.ID, Since: d.now()}
	if err := d.locks.Acquire(ctx, st.ProjectName, st.ConfigName, h); err != nil {
		return nil, err
	}
	return st, nil
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
