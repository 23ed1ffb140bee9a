package deployer

import (
	"context"
	"fmt"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
)

// loadAndConnect is how a task that works in the target starts: the
// release the State names (loadRelease) and the clients of its target
// (connect, with badRelease), the first error as it is.
func (d *Deployer) loadAndConnect(ctx context.Context, st *execution.State, badRelease bool) (*release.Release, *cloud.Clients, error) {
	r, err := d.loadRelease(ctx, st)
	if err != nil {
		return nil, nil, err
	}
	c, err := d.connect(ctx, st, badRelease)
	if err != nil {
		return nil, nil, err
	}
	return r, c, nil
}

// connect returns the clients of the State's target. A target that cannot
// be reached because its roles are missing is a bad release when
// badRelease is set (the release names the target), else a deploy error.
func (d *Deployer) connect(ctx context.Context, st *execution.State, badRelease bool) (*cloud.Clients, error) {
	session, err := d.session(ctx, st)
	if err != nil {
		return nil, err
	}
	return d.connectAs(ctx, st, session, badRelease)
}

// connectAs returns the clients of the State's target, acting as session
// (see connect).
func (d *Deployer) connectAs(ctx context.Context, st *execution.State, session cloud.Session, badRelease bool) (*cloud.Clients, error) {
	clients, err := d.connector.Connect(ctx, st.Target, session)
	if err == nil {
		return clients, nil
	}
	err = cloud.Classify("connect", err)
	if failure.IsRetryable(err) {
		return nil, err
	}
	if badRelease {
		return nil, failure.BadRelease(fmt.Sprintf("target %s/%s: %v", st.Target.AccountID, st.Target.Region, err))
	}
	return nil, &failure.DeployError{Op: "connect to " + st.Target.AccountID + "/" + st.Target.Region, Err: err}
}

// session is the release the State names, as the deployer acts for it in
// the target: with the source identity of the caller Validate verified and
// wrote in the run-once marker (naming.SourceIdentity), read from the
// marker, never from the State, which a forged invocation could fill. A
// release without a verified caller (a deployer that verifies no proofs)
// has none; an unreadable marker is its read's error.
func (d *Deployer) session(ctx context.Context, st *execution.State) (cloud.Session, error) {
	s := cloud.Session{Project: st.ProjectName, Config: st.ConfigName, ReleaseID: st.ReleaseID}
	run, found, err := d.locks.RunOf(ctx, st.ProjectName, st.ConfigName, st.ReleaseID)
	if err != nil {
		return s, err
	}
	if found {
		s.SourceIdentity = naming.SourceIdentity(run.CreatedBy, run.CreatedByID)
	}
	return s, nil
}
