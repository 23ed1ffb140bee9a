package deployer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ferryhq/ferry/internal/events"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/fleet"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/store/ledger"
	"github.com/ferryhq/ferry/internal/tuning"
)

// cleanUpFailure is the CleanUpFailure task. It first rolls back
// (rollBack): after a bake the previous groups go back into their load
// balancers; before one, a previous group out of a load balancer the
// release shares with it goes back in; either way nothing of the release
// leaves until the previous groups are at their target there, passing
// their health checks. Then it removes what this release created, in the verified release's
// target, and only while the release holds the lock. What it removes: the
// groups Deploy recorded before it created anything (ledger.GetDeploying),
// and every group and launch template AWS shows tagged with the release
// id. Without that record and without Deployed (Deploy failed before it
// wrote it, or the record is gone) it asks AWS: nothing tagged with the
// release is nothing to clean up. Each is removed by name (fleet.Remover:
// its alarms, the group with its instances, its launch template), a
// visible one only when its tags are this release's. A recorded group
// AWS does not show is retryable, never taken for gone, until the last
// attempt: AWS is eventually consistent after a create, so FailureClean
// never leaves the release's fleet running. What it removed is added to Deploy's record,
// so a retry knows it gone rather than not visible yet.
//
// Its groups leave gracefully (removeRelease), however late the failure
// came (a rollback hours into a bake): a group that serves, drains or runs
// a termination hook is never deleted. Its steps are
// tuning.RetireCheckInterval apart, longer while deploys to its account
// and region are on their way to a healthy fleet (beside: a failed
// release's clean-up gives way to them as a retirement does). Anything it could not remove is a
// *failure.CleanUpError listing the leftovers, recorded in the outcome as
// FailureDirty (the lock is kept); when every failure was transient it is a *failure.RetryableError
// instead. A step AWS throttled (finding what the release made, the
// rollback, the removal) is taken again after a wait (throttledStep), up
// to limits.MaxThrottledSteps: an account's shared request buckets are
// busiest when many deploys fail at once. On success it writes nothing: ReleaseLock records the outcome.
// Idempotent.
func (d *Deployer) cleanUpFailure(ctx context.Context, req execution.Request) (any, error) {
	st, err := d.verify(ctx, req)
	if err != nil {
		return nil, err
	}
	// failed ends the step: a step AWS throttled (err) is taken again
	// after a wait (throttledStep), any other failure is classified
	// (what, err itself when nil).
	failed := func(err, what error) (any, error) {
		if w, ok := d.throttledStep(st, req, err); ok {
			st.Retire = w
			return st, nil
		}
		if what == nil {
			what = err
		}
		return nil, d.cleanUpFailed(ctx, st, req, what)
	}
	if st.Retire == nil {
		d.arrive(ctx, st, req) // the deploy failed: on its way no longer
	}
	intent, found, err := d.ledger.GetDeploying(ctx, st.ProjectName, st.ConfigName, st.ReleaseID)
	switch {
	case err != nil:
		return nil, d.cleanUpFailed(ctx, st, req, err)
	case !found && !st.Deployed:
		// Deploy failed before it recorded anything, or its record is
		// gone: AWS says whether it made something.
		made, err := d.madeInAWS(ctx, st)
		if err != nil {
			return failed(err, nil)
		}
		if len(made) == 0 {
			d.log.Info("nothing to clean up: Deploy created nothing", "release_id", st.ReleaseID)
			st.Retire = &execution.Retire{Done: true}
			return st, nil
		}
		d.log.Warn("no deploying record, but the release made groups or launch templates: removing them", "release_id", st.ReleaseID, "names", made)
	case !found:
		// Deploy finished without its record (someone removed it): its
		// groups have their deterministic names all the same.
		intent.Groups = groupNames(st)
	}
	restored, waiting, err := d.rollBack(ctx, st, req, &intent)
	switch {
	case err != nil:
		return failed(err, leftServing(st, err))
	case waiting != nil:
		st.Retire = waiting
		return st, nil
	}
	st.RolledBack = restored
	removed, draining, err := d.removeRelease(ctx, st, req, &intent)
	if err != nil {
		return failed(err, nil)
	}
	if draining != nil {
		st.Retire = keepThrottled(st, draining)
		return st, nil
	}
	// Remember what is gone (removeRelease wrote the record, if Deploy
	// did not), so a retry does not take it for a group AWS does not
	// show yet.
	intent.Removed = append(intent.Removed, removed...)
	slices.Sort(intent.Removed)
	intent.Removed = slices.Compact(intent.Removed)
	if err := d.ledger.PutDeploying(ctx, st.ProjectName, st.ConfigName, intent); err != nil {
		return nil, d.cleanUpFailed(ctx, st, req, err)
	}
	d.log.Info("release cleaned up", "release_id", st.ReleaseID, "removed_groups", removed)
	d.announce(ctx, nil, st, events.Event{Kind: events.RolledBack, Body: events.RolledBackDetail{
		Head: d.head(st, req, events.RolledBack), Removed: strs(intent.Removed), Restored: strs(st.RolledBack)}})
	st.Retire = &execution.Retire{Done: true}
	return st, nil
}

// madeInAWS are the groups and launch templates AWS shows tagged with
// the release (fleet.Of), in its target.
func (d *Deployer) madeInAWS(ctx context.Context, st *execution.State) ([]string, error) {
	c, err := d.connect(ctx, st, false)
	if err != nil {
		return nil, err
	}
	groups, err := fleet.Groups(ctx, c.AutoScaling, ownerOf(st))
	if err != nil {
		return nil, err
	}
	templates, err := fleet.Templates(ctx, c.EC2, ownerOf(st))
	if err != nil {
		return nil, err
	}
	return fleet.Of(st.ReleaseID, groups, templates), nil
}

// removeRelease removes what the release made (see cleanUpFailure): the
// groups intent names, and every group and template AWS shows tagged with
// the release, for the verified release only, in its target, and only
// while it holds the lock. Its groups are retired first, a step per
// invocation (fleet.Retirer: out of their load balancers, drained, scaled
// to zero so their termination hooks run), as the previous release's are
// at a swap: their instances may serve beside the previous release's.
// While that is under way it returns where it stands (draining, not nil)
// and removes nothing. The first step records when the retirement began
// (intent.RetiringSince, in the deploying record); past
// tuning.RetireTimeout from then it fails with a *failure.CleanUpError
// naming each group still standing and why (fleet.Standing), and every
// group, launch template and alarm of the release, none removed
// (nothingRemoved): a group that serves, drains or runs a hook is never
// deleted, whatever the time. It returns the names it removed.
func (d *Deployer) removeRelease(ctx context.Context, st *execution.State, req execution.Request, intent *ledger.Intent) (removed []string, draining *execution.Retire, err error) {
	if _, err := d.loadRelease(ctx, st); err != nil {
		return nil, nil, err
	}
	if err := d.holdsLock(ctx, st); err != nil {
		return nil, nil, err
	}
	c, err := d.connect(ctx, st, false)
	if err != nil {
		return nil, nil, err
	}
	groups, err := fleet.Groups(ctx, c.AutoScaling, ownerOf(st))
	if err != nil {
		return nil, nil, err
	}
	templates, err := fleet.Templates(ctx, c.EC2, ownerOf(st))
	if err != nil {
		return nil, nil, err
	}
	created := map[string]bool{}
	for _, n := range intent.Groups {
		created[n] = !slices.Contains(intent.Removed, n)
	}
	owns := func(tags map[string]string) bool { return tags[naming.TagReleaseID] == st.ReleaseID }
	log := d.log.With("release_id", st.ReleaseID, "task", execution.TaskCleanUpFailure)
	names := append(slices.Clone(intent.Groups), fleet.Of(st.ReleaseID, groups, templates)...)
	since, err := d.retiringSince(ctx, st, req, intent)
	if err != nil {
		return nil, nil, err
	}
	b := d.besideOf(ctx, st, len(names), d.now().Sub(since))
	retirer := &fleet.Retirer{API: c.AutoScaling, Owner: ownerOf(st), Owns: owns, LastAttempt: lastAttempt(req), Calls: b.calls(), Log: log}
	resumeRetirer(retirer, st)
	ret, err := retirer.Step(ctx, names)
	if w, ok := d.throttledPart(st, req, ret, err, d.now().Sub(since)); ok {
		return nil, w, nil
	}
	if err != nil {
		return nil, nil, nothingRemoved(names, err)
	}
	if !ret.Ready {
		elapsed := d.now().Sub(since)
		draining, err := notReady(ret, elapsed, d.yielding(st, b, b.wait(req, elapsed, int(tuning.RetireCheckInterval/time.Second))))
		if draining != nil {
			draining.Underway = b.crowd
		}
		return nil, draining, nothingRemoved(names, err)
	}
	remover := &fleet.Remover{
		Clients: c, Owner: ownerOf(st), Created: created, Owns: owns,
		LastAttempt: lastAttempt(req),
		Log:         log,
	}
	removal, err := remover.Remove(ctx, names)
	return removal.Removed, nil, err
}

// retiringSince is when CleanUpFailure began retiring the release's
// groups: intent's record of it, else now, recorded first (in the
// deploying record, written with the groups the retirement acts on).
func (d *Deployer) retiringSince(ctx context.Context, st *execution.State, req execution.Request, intent *ledger.Intent) (time.Time, error) {
	if intent.RetiringSince != nil {
		return *intent.RetiringSince, nil
	}
	now := d.now()
	intent.RetiringSince = &now
	return now, d.putIntent(ctx, st, req, intent)
}

// putIntent writes intent as the release's deploying record, made
// anew (its release, execution and start now) when Deploy wrote none.
func (d *Deployer) putIntent(ctx context.Context, st *execution.State, req execution.Request, intent *ledger.Intent) error {
	if intent.ReleaseID == "" {
		intent.ReleaseID, intent.Execution, intent.Since = st.ReleaseID, req.Execution.ID, d.now()
	}
	return d.ledger.PutDeploying(ctx, st.ProjectName, st.ConfigName, *intent)
}

// notReady is where a retirement step that left groups standing leads,
// elapsed since the retirement began: wait seconds before the next step;
// or, when a group can no longer empty (fleet.Retirement.Stuck) or the
// retirement has run tuning.RetireTimeout, a *failure.CleanUpError naming
// each group standing and what keeps it (fleet.Standing), none of them
// deleted: a group that serves, drains or runs a termination hook is
// never deleted, whatever the time.
func notReady(ret fleet.Retirement, elapsed time.Duration, wait int) (*execution.Retire, error) {
	stuck := ret.Stuck()
	if len(stuck) == 0 && elapsed < tuning.RetireTimeout {
		return &execution.Retire{WaitSeconds: wait, Groups: ret.State(), From: ret.Next}, nil
	}
	why := fmt.Sprintf("still standing %s after their retirement began", elapsed.Round(time.Second))
	if len(stuck) == 0 {
		for _, g := range ret.Groups {
			if g.Phase != execution.PhaseDeleting {
				stuck = append(stuck, g)
			}
		}
	} else {
		why = "left with only instances in Standby, which no scale-in terminates"
	}
	var left []string
	for _, g := range stuck {
		left = append(left, fleet.Standing(g))
	}
	return nil, &failure.CleanUpError{Leftovers: left,
		Err: fmt.Errorf("retiring: groups %s; none was deleted with instances in service, in Standby, in a load balancer or running a termination hook", why)}
}

// nothingRemoved is how removeRelease fails before its removal ran: a
// *failure.CleanUpError names every group, launch template and alarm of
// names (nothing is removed yet: all of it may be left) as well as what
// err names; any other error (nil too) is returned as it is.
func nothingRemoved(names []string, err error) error {
	var ce *failure.CleanUpError
	if !errors.As(err, &ce) {
		return err
	}
	names = slices.Compact(slices.Sorted(slices.Values(names)))
	return &failure.CleanUpError{Leftovers: append(fleet.Leftovers(names...), ce.Leftovers...), Err: ce.Err}
}

// leftServing is how a rollback that cannot finish fails: nothing of the
// release has been removed yet (its groups are left serving, beside
// whatever of the previous ones stands), so a *failure.CleanUpError names
// every group, launch template and alarm of the release as well as what
// the rollback left. Any other error is returned as it is.
func leftServing(st *execution.State, err error) error {
	var ce *failure.CleanUpError
	if !errors.As(err, &ce) {
		return err
	}
	return &failure.CleanUpError{Leftovers: append(slices.Clone(ce.Leftovers), fleet.Leftovers(groupNames(st)...)...), Err: ce.Err}
}

// lastAttempt reports whether req is its task's last attempt: the state
// machine retries no more after it.
func lastAttempt(req execution.Request) bool {
	return req.Execution.RetryCount >= tuning.TaskRetryMaxAttempts
}

// cleanUpFailed is how CleanUpFailure fails: retryable while retries
// remain and the failure is transient; else a *failure.CleanUpError
// naming what may be left, recorded in a FailureDirty outcome.
func (d *Deployer) cleanUpFailed(ctx context.Context, st *execution.State, req execution.Request, err error) error {
	ce, retry := asCleanUp(req, err)
	if retry != nil {
		return retry
	}
	if len(ce.Leftovers) == 0 {
		// Failed before it knew what Deploy made: whatever of the
		// release's deterministic names may be left.
		ce = &failure.CleanUpError{Leftovers: fleet.Leftovers(groupNames(st)...), Err: ce.Err}
	}
	d.recordDirty(ctx, st, req, ce)
	return ce
}
