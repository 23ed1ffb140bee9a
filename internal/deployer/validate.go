package deployer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ferryhq/ferry/internal/events"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/identity"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/ledger"
)

// validate is the Validate task. Its input is the release as the client
// uploaded it (the execution's input). It refuses, with a
// *failure.BadReleaseError:
//   - a release that does not decode or validate (release.Validate with
//     uploaded=true);
//   - a release whose canonical hash differs from the copy in the deployer
//     bucket (or that has no copy there);
//   - a created_at older than CreatedAtMaxAge or further than
//     CreatedAtMaxSkew in the future, measured against the deployer's
//     clock, or later than the execution's start plus CreatedAtMaxSkew (a
//     release cannot be created after the execution that runs it started);
//   - a release id another execution consumed (its run-once marker names
//     that execution);
//   - a release whose hash another Validate recorded otherwise.
//   - with Config.Identities, a release whose identity proof is missing or
//     does not verify (identity.Verifier);
//   - a release whose target is not the environment its config is
//     deployed to, unless its move_from names that one (checkMove).
//
// Before those checks, once the release decodes and validates, it
// confirms its execution (confirmExecution) and consumes the release id
// for it (lock.Consume): whatever the outcome, no other execution runs
// this release. Once the copy in the bucket is the execution's input, it
// records the release's canonical hash, once (ledger.RecordReleaseHash):
// what every later reader of release.json checks it against. It returns
// the State that every later task gets. The marker and that record are
// its only writes, and a retry of the same execution accepts them. A
// release of a confirmed execution it refuses (a
// *failure.BadReleaseError) is announced Release Refused; one it accepts
// is left to ValidateResources to announce Release Started, in the
// deploy's turn to start in its target (State.StartUnannounced).
func (d *Deployer) validate(ctx context.Context, req execution.Request) (any, error) {
	r, sum, err := checkedRelease(req.Input)
	if err != nil {
		return nil, err
	}
	if err := d.confirmExecution(ctx, req, r.ProjectName, r.ConfigName, r.ReleaseID, sum); err != nil {
		return nil, err
	}
	st, err := d.accept(ctx, req, r, sum)
	if err != nil {
		var bad *failure.BadReleaseError
		if errors.As(err, &bad) {
			refused := &execution.State{ProjectName: r.ProjectName, ConfigName: r.ConfigName, ReleaseID: r.ReleaseID, Target: d.target(r), Version: r.Version}
			d.announce(ctx, nil, refused, events.Event{Kind: events.Refused, Body: events.RefusedDetail{
				Head: d.head(refused, req, events.Refused), Error: failure.NameBadRelease, Cause: failure.Message(err.Error())}})
		}
		return nil, err
	}
	st.StartUnannounced = true
	return st, nil
}

// accept is Validate's checks of a decoded release of a confirmed
// execution, and its writes (see validate). The consume and the reads of
// the stored copy and of the config's current record need nothing of
// each other's: they go side by side (allOf), the consume whatever the
// reads find (its failure returned first), and the checks read what
// they found once the release is consumed. The release's hash is
// recorded after, once the copy matches.
func (d *Deployer) accept(ctx context.Context, req execution.Request, r *release.Release, sum string) (*execution.State, error) {
	var copySum, move string
	err := allOf(ctx, func(ctx context.Context) error { return d.consume(ctx, req, r) },
		func(ctx context.Context) (err error) {
			copySum, err = d.storedHash(ctx, r)
			return err
		}, func(ctx context.Context) (err error) {
			move, err = d.checkMove(ctx, r, d.target(r))
			return err
		})
	if err != nil {
		return nil, err
	}
	var problems []string
	if copySum != sum {
		problems = append(problems, "release differs from the copy in the deployer bucket")
	} else if err := d.ledger.RecordReleaseHash(ctx, r.ProjectName, r.ConfigName, ledger.ReleaseHash{ReleaseID: r.ReleaseID, ReleaseSHA256: sum, Execution: req.Execution.ID}); err != nil {
		return nil, err
	}
	if p := d.checkCreatedAt(r, req); p != "" {
		problems = append(problems, p)
	}
	if move != "" {
		problems = append(problems, move)
	}
	if len(problems) > 0 {
		return nil, failure.BadRelease(problems...)
	}
	return &execution.State{
		ProjectName:   r.ProjectName,
		ConfigName:    r.ConfigName,
		ReleaseID:     r.ReleaseID,
		ReleaseSHA256: sum,
		Target:        d.target(r),
		Version:       r.Version,
		Timeout:       r.Timeout,
		BakeSeconds:   r.BakeSeconds,
		Services:      r.ServiceNames(),
	}, nil
}

// checkedRelease decodes raw, a release as the client uploaded it,
// applies its defaults and checks it (Validate(true)), and returns it
// with its canonical hash: how Validate and Plan read a release. A bad
// one is a *failure.BadReleaseError.
func checkedRelease(raw []byte) (*release.Release, string, error) {
	r, err := release.Decode(raw)
	if err != nil {
		return nil, "", err
	}
	r.ApplyDefaults()
	if err := r.Validate(true); err != nil {
		return nil, "", err
	}
	sum, err := release.Hash(r)
	if err != nil {
		return nil, "", failure.BadRelease(fmt.Sprintf("release: %v", err))
	}
	return r, sum, nil
}

// consume verifies r's identity proof (verifyIdentity) and consumes its
// release id for req's execution (lock.Consume). The first execution that
// sees a valid release consumes its id, whatever happens next: a release
// refused after, or failing later, is never run again under another
// execution name. The marker names the verified caller, for the records.
// An identity proof that does not verify is refused after the release is
// consumed; a transient failure to verify it, before.
func (d *Deployer) consume(ctx context.Context, req execution.Request, r *release.Release) error {
	var caller identity.Caller
	var idErr error
	switch {
	case r.HealOf != "": // the reconciler's: no proof, its content checked instead
		idErr = d.verifyHeal(ctx, r)
	case r.PromotionOf != "": // a promotion's: its record and content checked instead
		caller, idErr = d.verifyPromotion(ctx, r)
	default:
		caller, idErr = d.verifyIdentity(ctx, r)
	}
	if failure.IsRetryable(idErr) {
		return idErr
	}
	if err := d.locks.Consume(ctx, r.ProjectName, r.ConfigName, r.ReleaseID, req.Execution.ID, caller.ARN, caller.UserID); err != nil {
		return err
	}
	return idErr
}

// storedHash is the canonical hash of the copy of r the client stored in
// the deployer bucket.
func (d *Deployer) storedHash(ctx context.Context, r *release.Release) (string, error) {
	copyOf, err := d.ledger.GetRelease(ctx, r.ProjectName, r.ConfigName, r.ReleaseID)
	if err != nil {
		return "", err
	}
	sum, err := release.Hash(copyOf)
	if err != nil {
		return "", failure.BadRelease(fmt.Sprintf("release copy in the deployer bucket: %v", err))
	}
	return sum, nil
}

// checkCreatedAt is the problem with r's created_at ("" for none): older
// than CreatedAtMaxAge or further than CreatedAtMaxSkew in the future, by
// the deployer's clock, or later than the execution's start plus
// CreatedAtMaxSkew.
func (d *Deployer) checkCreatedAt(r *release.Release, req execution.Request) string {
	now := d.now()
	created := r.CreatedAt.UTC()
	switch {
	case now.Sub(created) > d.cfg.CreatedAtMaxAge:
		return fmt.Sprintf("created_at: %s is %s old, older than the %s the deployer accepts",
			created.Format(time.RFC3339), now.Sub(created).Round(time.Second), d.cfg.CreatedAtMaxAge)
	case created.Sub(now) > d.cfg.CreatedAtMaxSkew:
		return fmt.Sprintf("created_at: %s is %s in the future, more than the %s the deployer accepts",
			created.Format(time.RFC3339), created.Sub(now).Round(time.Second), d.cfg.CreatedAtMaxSkew)
	case !req.Execution.StartTime.IsZero() && created.Sub(req.Execution.StartTime) > d.cfg.CreatedAtMaxSkew:
		return fmt.Sprintf("created_at: %s is after the execution started (%s)",
			created.Format(time.RFC3339), req.Execution.StartTime.UTC().Format(time.RFC3339))
	}
	return ""
}
