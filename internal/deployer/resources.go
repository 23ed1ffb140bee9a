package deployer

import (
	"cmp"
	"context"
	"fmt"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/fanout"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/lock"
)

// loadAndConnect is how a task that works in the target starts: the
// release the State names and the session it acts as, read side by side
// (loadBeside), then the clients of its target (connectAs, with
// badRelease), the first error as it is.
func (d *Deployer) loadAndConnect(ctx context.Context, st *execution.State, badRelease bool) (*release.Release, *cloud.Clients, error) {
	l, err := d.loadBeside(ctx, st, nil)
	if err != nil {
		return nil, nil, err
	}
	c, err := d.connectAs(ctx, st, l.session(st), badRelease)
	if err != nil {
		return nil, nil, err
	}
	return l.r, c, nil
}

// loaded is what a task that works in the target reads first
// (loadBeside): the verified release the State names, and its run-once
// marker (found false when there is none), read once for the task.
type loaded struct {
	r     *release.Release
	run   lock.Run
	found bool
}

// session is the session of the State's release (see Deployer.session)
// as the marker names its caller.
func (l *loaded) session(st *execution.State) cloud.Session {
	return sessionOf(st, l.run, l.found)
}

// loadBeside reads the release the State names (fetchRelease) and its
// run-once marker, and runs also (when not nil), side by side: none needs
// anything of the others', and none writes the State. Once all are
// done it sets the State's fields from the verified release (adopt). Its
// error is also's first, then the release's, then the marker's.
func (d *Deployer) loadBeside(ctx context.Context, st *execution.State, also func(ctx context.Context) error) (*loaded, error) {
	if also == nil {
		also = func(context.Context) error { return nil }
	}
	var l loaded
	err := allOf(ctx, also, func(ctx context.Context) (err error) {
		l.r, err = d.fetchRelease(ctx, st)
		return err
	}, func(ctx context.Context) (err error) {
		l.run, l.found, err = d.locks.RunOf(ctx, st.ProjectName, st.ConfigName, st.ReleaseID)
		return err
	})
	if err != nil {
		return nil, err
	}
	d.adopt(st, l.r)
	return &l, nil
}

// allOf runs parts side by side (fanout.Each), every one of them to its
// end whatever the others' failures, and returns the error of the first
// part, in order, that failed (nil when none did).
func allOf(ctx context.Context, parts ...func(ctx context.Context) error) error {
	errs := make([]error, len(parts))
	_ = fanout.Each(ctx, len(parts), len(parts), func(ctx context.Context, i int) error {
		errs[i] = parts[i](ctx)
		return nil
	})
	return cmp.Or(errs...)
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
	run, found, err := d.locks.RunOf(ctx, st.ProjectName, st.ConfigName, st.ReleaseID)
	if err != nil {
		return cloud.Session{Project: st.ProjectName, Config: st.ConfigName, ReleaseID: st.ReleaseID}, err
	}
	return sessionOf(st, run, found), nil
}

// sessionOf is the session of the State's release as its run-once
// marker run (found: there is one) names its caller.
func sessionOf(st *execution.State, run lock.Run, found bool) cloud.Session {
	s := cloud.Session{Project: st.ProjectName, Config: st.ConfigName, ReleaseID: st.ReleaseID}
	if found {
		s.SourceIdentity = naming.SourceIdentity(run.CreatedBy, run.CreatedByID)
	}
	return s
}
