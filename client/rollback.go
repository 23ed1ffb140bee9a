package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ferryhq/ferry/client/submit"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/ledger"
	"github.com/ferryhq/ferry/internal/target"
)

const rollbackHelp = `Rollback deploys again the content of a release that succeeded before,
from the deployer's own records: no release file is needed. By default it
is the newest release that succeeded before the one deployed now; --to
names another (it must have succeeded, must not be the one deployed now
and must not be a destroy); with nothing deployed (after ferry destroy)
--to is needed. The content is deployed as a new release, with its own id,
created_at and created_by and rollback_of naming the release it copies,
through the same path as ferry deploy: the lock, the checks, the health
of the new groups, the swap. Every asset must still be in the deployer
bucket (they are kept while a release in each config's recent history
names them); otherwise nothing is started.

A service deployed now that the older release does not deploy is
removed: rollback names it under "remove" and says so before it starts.
Likewise a classic load balancer or target group the release deployed
now names for a service and the older release does not: rollback names it
under the service's "detach" and says so.
An older release that targets another environment (account, region,
qualifier) than the one the config is deployed to now is a move, refused
unless --move-from names where it is deployed now (the release's
move_from): its swap then retires the fleet there.

It follows the execution as deploy does, with the same flags and exit
codes; --json prints the same events.`

// rollbackCommand is ferry rollback: a deploy of a stored release.
type rollbackCommand struct {
	deploy   deployCommand
	to       string
	moveFrom string
}

func (c *rollbackCommand) spec() commandSpec {
	return commandSpec{
		name:    "rollback",
		args:    "PROJECT CONFIG",
		summary: "Deploy again a release that succeeded before, from the records",
		help:    rollbackHelp,
		exits:   deployExits,
	}
}

func (c *rollbackCommand) defineFlags(fs *flag.FlagSet) {
	c.deploy.defineFlags(fs)
	fs.StringVar(&c.to, "to", "", "deploy again release `ID` (default: the release that succeeded before the one deployed now)")
	fs.StringVar(&c.moveFrom, "move-from", "", "the release deployed again targets another environment: move the config from `ACCOUNT_ID/REGION[/QUALIFIER]`, where it is deployed now (its move_from)")
}

// Run rolls project args[0] config args[1] back.
func (c *rollbackCommand) Run(ctx context.Context, args []string) error {
	var to, move error
	if c.to != "" {
		to = release.ValidateReleaseID(c.to)
	}
	if c.moveFrom != "" {
		_, move = parseMoveFrom(c.moveFrom)
	}
	if err := c.deploy.checkProjectConfig(c.spec(), args, to, move); err != nil {
		return err
	}
	return commandFailure("rollback", exitNotStarted, c.rollback(ctx, args[0], args[1]))
}

func (c *rollbackCommand) rollback(ctx context.Context, project, config string) error {
	env := c.deploy.env
	out := newDisplay(env, c.deploy.follow.asJSON)
	d, err := connect(ctx, env, &c.deploy.deployer)
	if err != nil {
		return err
	}
	l := ledger.New(d.s3, d.cfg.Bucket)
	cur, deployed, err := l.GetCurrent(ctx, project, config)
	if err != nil {
		return err
	}
	if !deployed && c.to == "" {
		return fmt.Errorf("nothing is deployed to %s %s: name the release to deploy again with --to (see ferry history %s %s)", project, config, project, config)
	}
	target, err := c.target(ctx, l, project, config, cur.ReleaseID)
	if err != nil {
		return err
	}
	// The content Validate accepted, never release.json alone: the
	// client's prefix is writable by more than the deployer.
	stored, _, err := l.VerifiedRelease(ctx, project, config, target)
	if err != nil {
		return fmt.Errorf("reading release %s: %w", target, err)
	}
	if stored.Destroy {
		return fmt.Errorf("release %s is a destroy: to destroy %s %s again, run ferry destroy", target, project, config)
	}
	stored = c.withMove(stored)
	remove := removals(stored, cur.Services)
	var detach map[string]release.Detach
	if deployed {
		if detach, err = detachesFrom(ctx, l, stored, cur.ReleaseID); err != nil {
			return err
		}
	}
	now, err := d.now(ctx)
	if err != nil {
		return err
	}
	p, err := submit.PrepareAgain(ctx, d.prover, stored, remove, detach, now, displayName(env), submit.NewReleaseID(now, env.Random))
	if err != nil {
		return fmt.Errorf("release %s cannot be deployed again: %w", target, err)
	}
	from := "nothing deployed"
	if deployed {
		from = "release " + cur.ReleaseID
	}
	out.message("ferry rollback: %s %s back from %s to the content of release %s", project, config, from, target)
	if added := slices.DeleteFunc(slices.Clone(remove), func(s string) bool { return slices.Contains(stored.Remove, s) }); len(added) > 0 {
		out.message("it removes %s, deployed now and not deployed by release %s", strings.Join(added, ", "), target)
	}
	for _, svc := range slices.Sorted(maps.Keys(detach)) {
		out.message("it takes %s out of %s, which release %s names and release %s does not", svc, detachedNames(detach[svc]), cur.ReleaseID, target)
	}
	return c.deploy.submit(ctx, d, out, p)
}

// withMove is stored with --move-from as its move_from, when given (a
// copy; stored is not changed).
func (c *rollbackCommand) withMove(stored *release.Release) *release.Release {
	if c.moveFrom == "" {
		return stored
	}
	from, _ := parseMoveFrom(c.moveFrom) // checked by Run
	moved := stored.Clone()
	moved.MoveFrom = &from
	return moved
}

// parseMoveFrom reads --move-from: ACCOUNT_ID/REGION[/QUALIFIER], each
// part checked as a release's move_from is.
func parseMoveFrom(s string) (target.Target, error) {
	var t target.Target
	parts := strings.Split(s, "/")
	switch len(parts) {
	case 3:
		t.Qualifier = parts[2]
		if why := release.CheckQualifier(t.Qualifier); why != "" {
			return t, fmt.Errorf("--move-from %q: the qualifier %s", s, why)
		}
		fallthrough
	case 2:
		t.AccountID, t.Region = parts[0], parts[1]
	default:
		return t, fmt.Errorf("--move-from %q: must be ACCOUNT_ID/REGION or ACCOUNT_ID/REGION/QUALIFIER", s)
	}
	if why := release.CheckAccountID(t.AccountID); why != "" {
		return t, fmt.Errorf("--move-from %q: the account id %s", s, why)
	}
	if why := release.CheckRegion(t.Region); why != "" {
		return t, fmt.Errorf("--move-from %q: the region %s", s, why)
	}
	return t, nil
}

// target is the release to deploy again: --to, which must have
// succeeded and not be current; else the newest release that succeeded
// before current with other content.
func (c *rollbackCommand) target(ctx context.Context, l *ledger.Ledger, project, config, current string) (string, error) {
	if c.to == current {
		return "", fmt.Errorf("release %s is the one deployed to %s %s now: there is nothing to roll back to", c.to, project, config)
	}
	if c.to != "" {
		return c.to, succeeded(ctx, l, project, config, c.to)
	}
	ids, err := l.Releases(ctx, project, config)
	if err != nil {
		return "", err
	}
	at := slices.Index(ids, current)
	if at < 0 {
		return "", fmt.Errorf("release %s, deployed to %s %s now, is no longer among its records; name a release with --to (see ferry history %s %s)", current, project, config, project, config)
	}
	now, err := contentOf(ctx, l, project, config, current)
	if err != nil {
		return "", err
	}
	for _, id := range ids[at+1:] {
		o, found, err := l.GetOutcome(ctx, project, config, id)
		if err != nil {
			return "", err
		}
		if !found || o.End != execution.EndSuccess {
			continue
		}
		then, err := contentOf(ctx, l, project, config, id)
		if err != nil {
			return "", err
		}
		if now == "" || then != now { // the same content again (a heal, a redeploy) rolls nothing back
			return id, nil
		}
	}
	return "", fmt.Errorf("no release of %s %s with other content than %s, the one deployed now, succeeded before it: there is nothing to roll back to", project, config, current)
}

// succeeded is nil when release id of project/config succeeded, else an
// error saying how it ended, or that it did not.
func succeeded(ctx context.Context, l *ledger.Ledger, project, config, id string) error {
	o, found, err := l.GetOutcome(ctx, project, config, id)
	switch {
	case err != nil:
		return err
	case !found:
		return fmt.Errorf("release %s of %s %s has no outcome (it never ran to an end, or is not a release of this config); only a release that succeeded can be deployed again", id, project, config)
	case o.End != execution.EndSuccess:
		return fmt.Errorf("release %s of %s %s ended %s; only a release that succeeded can be deployed again", id, project, config, o.End)
	}
	return nil
}

// contentOf is the content hash of release id (release.ContentHash) as
// the deployer recorded it (ledger.VerifiedRelease), "" when its object
// expired or does not match the record (it is then refused if chosen).
func contentOf(ctx context.Context, l *ledger.Ledger, project, config, id string) (string, error) {
	r, _, err := l.VerifiedRelease(ctx, project, config, id)
	var bad *failure.BadReleaseError
	switch {
	case errors.As(err, &bad):
		return "", nil
	case err != nil:
		return "", err
	}
	return release.ContentHash(r)
}

// detachesFrom is detaches(stored, the release deployed now, current):
// the load balancers it names that stored does not. A release deployed
// now that is no longer kept, or whose release.json is not what Validate
// recorded, names none (ValidateResources then refuses a drop, naming it).
func detachesFrom(ctx context.Context, l *ledger.Ledger, stored *release.Release, current string) (map[string]release.Detach, error) {
	cur, _, err := l.VerifiedRelease(ctx, stored.ProjectName, stored.ConfigName, current)
	var bad *failure.BadReleaseError
	switch {
	case err == nil:
		return detaches(stored, cur), nil
	case errors.As(err, &bad):
		return nil, nil
	}
	return nil, fmt.Errorf("reading release %s, deployed now: %w", current, err)
}

// detaches is what a release deploying stored's services again takes
// them out of, by service: the classic load balancers and target groups
// current (the release deployed now) names for a service stored deploys
// and stored does not name for it, with those stored's own detach names.
// A service with none is left out.
func detaches(stored, current *release.Release) map[string]release.Detach {
	out := map[string]release.Detach{}
	for svc, s := range stored.Services {
		var d release.Detach
		if s.Detach != nil {
			d = release.Detach{ELBs: slices.Clone(s.Detach.ELBs), TargetGroups: slices.Clone(s.Detach.TargetGroups)}
		}
		if c := current.Services[svc]; c != nil && s != nil {
			d.ELBs = leftOut(d.ELBs, c.ELBs, s.ELBs)
			d.TargetGroups = leftOut(d.TargetGroups, c.TargetGroups, s.TargetGroups)
		}
		if len(d.ELBs)+len(d.TargetGroups) > 0 {
			out[svc] = d
		}
	}
	return out
}

// leftOut is to with each of names that keep does not hold added, once.
func leftOut(to, names, keep []string) []string {
	for _, n := range names {
		if !slices.Contains(keep, n) && !slices.Contains(to, n) {
			to = append(to, n)
		}
	}
	return to
}

// detachedNames formats a detach for a message.
func detachedNames(d release.Detach) string {
	var parts []string
	if len(d.ELBs) > 0 {
		parts = append(parts, "classic load balancers "+strings.Join(d.ELBs, ", "))
	}
	if len(d.TargetGroups) > 0 {
		parts = append(parts, "target groups "+strings.Join(d.TargetGroups, ", "))
	}
	return strings.Join(parts, " and ")
}

// removals is what a release deploying stored's services again removes:
// the services deployed now (current) it does not deploy, and those
// stored removed that are still not deployed, sorted.
func removals(stored *release.Release, current []string) []string {
	var out []string
	for _, s := range append(slices.Clone(stored.Remove), current...) {
		if _, deploys := stored.Services[s]; !deploys && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}
