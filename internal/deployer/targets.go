package deployer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/fleet"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/naming/tags"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/ledger"
	"github.com/ferryhq/ferry/internal/target"
)

// The environments of a project-config. A config runs in one target
// environment, the one its current record names; a release that targets
// another is a move, refused unless it says where it moves from
// (release.Release.MoveFrom, checkMove). The targets record
// (ledger.Targets) keeps every environment the config has deployed to:
// Publish and Deploy add their release's before they make anything in it
// (recordTarget), the swap retires the fleet left in every other one
// (previousElsewhere, stepElsewhere, removeElsewhere) and only then
// leaves the release's alone in the record (pruneTargets). Plan, Drift
// and a destroy (a release like any other at its swap) so cover each of
// them, and a move that crashes midway forgets none.

// knownTargets is every environment project/config has deployed to and
// may have groups in: its targets record's, which always holds the
// current record's environment (recordTarget adds it with the first
// other, and the swap records the current release before it prunes);
// without one (a config deployed before the record was kept, or never),
// the current record's alone, or none. A record that cannot be read is
// an error.
func (d *Deployer) knownTargets(ctx context.Context, project, config string) ([]target.Target, error) {
	rec, found, err := d.ledger.GetTargets(ctx, project, config)
	if err != nil || found {
		return rec.Targets, err
	}
	cur, found, err := d.ledger.GetCurrent(ctx, project, config)
	if err != nil || !found {
		return nil, err
	}
	return []target.Target{d.currentTarget(cur, nil)}, nil
}

// elsewhere is every environment of st's project-config (knownTargets)
// but st's target.
func (d *Deployer) elsewhere(ctx context.Context, st *execution.State) ([]target.Target, error) {
	known, err := d.knownTargets(ctx, st.ProjectName, st.ConfigName)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(known, func(t target.Target) bool { return t == st.Target }), nil
}

// recordTarget adds st's target to the project-config's targets record
// unless it is among the environments known already (knownTargets, read
// by the caller beside its other reads): before Publish or Deploy makes
// anything in it. Idempotent; only the lock holder's task calls it, so
// only that holder writes the record.
func (d *Deployer) recordTarget(ctx context.Context, st *execution.State, known []target.Target) error {
	if slices.Contains(known, st.Target) {
		return nil
	}
	d.log.Info("recording a new environment of the config", "release_id", st.ReleaseID, "account_id", st.Target.AccountID, "region", st.Target.Region)
	return d.ledger.PutTargets(ctx, st.ProjectName, st.ConfigName, ledger.Targets{
		Targets: append(known, st.Target), ReleaseID: st.ReleaseID, UpdatedAt: d.now(),
	})
}

// pruneTargets leaves the release's target alone in the targets record
// (none for a destroy), once the swap retired the fleet of every other
// environment. Best effort: a record left longer names environments
// with nothing left, which only costs a look.
func (d *Deployer) pruneTargets(ctx context.Context, st *execution.State, r *release.Release) {
	keep := []target.Target{st.Target}
	if r.Destroy {
		keep = []target.Target{}
	}
	rec, found, err := d.ledger.GetTargets(ctx, st.ProjectName, st.ConfigName)
	if err == nil && found && slices.Equal(rec.Targets, keep) {
		return
	}
	if err == nil {
		err = d.ledger.PutTargets(ctx, st.ProjectName, st.ConfigName, ledger.Targets{Targets: keep, ReleaseID: st.ReleaseID, UpdatedAt: d.now()})
	}
	if err != nil {
		d.log.Warn("cannot prune the config's environments", "release_id", st.ReleaseID, "error", err.Error())
	}
}

// connectTo returns the clients of environment t, acting for st's
// release as session (connectAs, badRelease as there).
func (d *Deployer) connectTo(ctx context.Context, st *execution.State, t target.Target, session cloud.Session, badRelease bool) (*cloud.Clients, error) {
	in := *st
	in.Target = t
	return d.connectAs(ctx, &in, session, badRelease)
}

// checkMove is the problem with where release r deploys, "" for none: a
// release whose environment (target) is not the one its config's current
// record names is refused unless its move_from names that one exactly.
// A destroy, or a config with nothing deployed, moves nothing.
func (d *Deployer) checkMove(ctx context.Context, r *release.Release, to target.Target) (string, error) {
	if r.Destroy {
		return "", nil
	}
	cur, found, err := d.ledger.GetCurrent(ctx, r.ProjectName, r.ConfigName)
	if err != nil || !found {
		return "", err
	}
	from := d.currentTarget(cur, nil)
	if from == to {
		return "", nil
	}
	ask, err := json.Marshal(from)
	if err != nil {
		return "", err
	}
	flag := from.AccountID + "/" + from.Region
	if from.Qualifier != "" {
		flag += "/" + from.Qualifier
	}
	how := fmt.Sprintf(`to move it there and retire the fleet left behind, set "move_from": %s (ferry rollback --move-from %s)`, ask, flag)
	if r.MoveFrom == nil {
		return fmt.Sprintf("move_from: %s %s is deployed to %s, this release to %s: %s",
			r.ProjectName, r.ConfigName, from.Describe(), to.Describe(), how), nil
	}
	if *r.MoveFrom != from {
		return fmt.Sprintf("move_from: names %s, but %s %s is deployed to %s: %s",
			r.MoveFrom.Describe(), r.ProjectName, r.ConfigName, from.Describe(), how), nil
	}
	return "", nil
}

// previousElsewhere is what the swap retires in each environment of
// targets (previousNames there, connected as session), each group with
// how it serves (servedBefore); an environment with nothing is left out.
func (d *Deployer) previousElsewhere(ctx context.Context, st *execution.State, session cloud.Session, targets []target.Target) ([]ledger.ElsewhereGroups, error) {
	var out []ledger.ElsewhereGroups
	err := d.eachTarget(ctx, st, session, false, targets, func(i int, c *cloud.Clients) error {
		names, err := d.previousNames(ctx, c, st)
		if err != nil || len(names) == 0 {
			return err
		}
		attached, err := d.servedBefore(ctx, c, st, names, nil)
		out = append(out, ledger.ElsewhereGroups{Target: targets[i], Groups: names, Attached: attached})
		return err
	})
	return out, err
}

// eachTarget connects to each environment of targets in turn, as session
// (connectTo, badRelease as there), and runs f with its index and
// clients; it stops at the first error.
func (d *Deployer) eachTarget(ctx context.Context, st *execution.State, session cloud.Session, badRelease bool, targets []target.Target, f func(i int, c *cloud.Clients) error) error {
	for i, t := range targets {
		c, err := d.connectTo(ctx, st, t, session, badRelease)
		if err != nil {
			return err
		}
		if err := f(i, c); err != nil {
			return err
		}
	}
	return nil
}

// eachElsewhere runs f with the clients of each environment of the
// deleting record's Elsewhere, as st's release's session (eachTarget).
func (d *Deployer) eachElsewhere(ctx context.Context, st *execution.State, plan ledger.Intent, f func(tg ledger.ElsewhereGroups, c *cloud.Clients) error) error {
	if len(plan.Elsewhere) == 0 {
		return nil
	}
	session, err := d.session(ctx, st)
	if err != nil {
		return err
	}
	targets := make([]target.Target, len(plan.Elsewhere))
	for i, tg := range plan.Elsewhere {
		targets[i] = tg.Target
	}
	return d.eachTarget(ctx, st, session, false, targets, func(i int, c *cloud.Clients) error { return f(plan.Elsewhere[i], c) })
}

// stepEverywhere takes the next step of retiring the groups the deleting
// record names in every environment: with retirer in the release's (its
// groups as described moments before), and stepElsewhere in the others.
// Ready says every one can be removed.
func (d *Deployer) stepEverywhere(ctx context.Context, st *execution.State, req execution.Request, plan ledger.Intent, retirer *fleet.Retirer, described map[string]asgtypes.AutoScalingGroup, log *slog.Logger) (fleet.Retirement, error) {
	ret, err := retirer.StepDescribed(ctx, plan.Groups, described)
	if err != nil {
		return ret, err
	}
	other, err := d.stepElsewhere(ctx, st, req, plan, log)
	ret.Ready, ret.Groups = ret.Ready && other.Ready, append(ret.Groups, other.Groups...)
	return ret, err
}

// removeEverywhere removes the groups the deleting record names in every
// environment: with remover in the release's, and removeElsewhere in the
// others. The removal is the release environment's.
func (d *Deployer) removeEverywhere(ctx context.Context, st *execution.State, plan ledger.Intent, remover *fleet.Remover, log *slog.Logger) (fleet.Removal, error) {
	removal, err := remover.Remove(ctx, plan.Groups)
	if err != nil {
		return removal, err
	}
	return removal, d.removeElsewhere(ctx, st, plan, log)
}

// stepElsewhere takes the next step of retiring the groups the deleting
// record names in other environments (fleet.Retirer, each environment
// with its own clients), as retire does in the release's. Ready says
// every one of them can be removed.
func (d *Deployer) stepElsewhere(ctx context.Context, st *execution.State, req execution.Request, plan ledger.Intent, log *slog.Logger) (fleet.Retirement, error) {
	out := fleet.Retirement{Ready: true}
	err := d.eachElsewhere(ctx, st, plan, func(tg ledger.ElsewhereGroups, c *cloud.Clients) error {
		ret, err := retirerIn(c, st, req, tg, log).Step(ctx, tg.Groups)
		out.Ready = out.Ready && ret.Ready
		out.Groups = append(out.Groups, ret.Groups...)
		return err
	})
	return out, err
}

// retirerIn is the fleet.Retirer of the groups the swap of st's release
// retires in tg's environment (c its clients), as retire makes its own.
func retirerIn(c *cloud.Clients, st *execution.State, req execution.Request, tg ledger.ElsewhereGroups, log *slog.Logger) *fleet.Retirer {
	return &fleet.Retirer{API: c.AutoScaling, Owner: ownerOf(st), Owns: notRelease(st.ReleaseID), LastAttempt: lastAttempt(req),
		Log: log.With("account_id", tg.Target.AccountID, "region", tg.Target.Region)}
}

// removeElsewhere deletes the groups the deleting record names in other
// environments, with their alarms and launch templates (fleet.Remover,
// each environment with its own clients), as retire does in the
// release's. What a failed removal leaves is named with its environment.
func (d *Deployer) removeElsewhere(ctx context.Context, st *execution.State, plan ledger.Intent, log *slog.Logger) error {
	return d.eachElsewhere(ctx, st, plan, func(tg ledger.ElsewhereGroups, c *cloud.Clients) error {
		remover := &fleet.Remover{Clients: c, Owner: ownerOf(st), Owns: notRelease(st.ReleaseID),
			Log: log.With("account_id", tg.Target.AccountID, "region", tg.Target.Region)}
		_, err := remover.Remove(ctx, tg.Groups)
		var ce *failure.CleanUpError
		if errors.As(err, &ce) {
			for i := range ce.Leftovers {
				ce.Leftovers[i] += " in " + tg.Target.Describe()
			}
		}
		return err
	})
}

// leftElsewhere names, for a FailureDirty outcome, the groups of the
// deleting record in other environments that may remain, but those left
// names already (a removal's leftovers).
func leftElsewhere(plan ledger.Intent, left []string) []string {
	var out []string
	for _, tg := range plan.Elsewhere {
		for _, name := range tg.Groups {
			where := " in " + tg.Target.Describe()
			if !slices.Contains(left, "auto scaling group "+name+where) {
				out = append(out, "previous group and launch template "+name+where+" (may remain)")
			}
		}
	}
	return out
}

// previousEverywhere is what the swap of st's release retires: the
// previous groups in its environment (previousOf the project-config's
// listing there, with c, its clients) and in the config's others
// (gateElsewhere).
func (d *Deployer) previousEverywhere(ctx context.Context, c *cloud.Clients, st *execution.State, listing []fleet.Summary) ([]string, []ledger.ElsewhereGroups, error) {
	previous, err := d.previousOf(ctx, c, st, listing)
	if err != nil {
		return nil, nil, err
	}
	elsewhere, err := d.gateElsewhere(ctx, st)
	return previous, elsewhere, err
}

// gateElsewhere is what the swap of st's release retires in the other
// environments of its config (previousElsewhere), as the release's
// session.
func (d *Deployer) gateElsewhere(ctx context.Context, st *execution.State) ([]ledger.ElsewhereGroups, error) {
	targets, err := d.elsewhere(ctx, st)
	if err != nil || len(targets) == 0 {
		return nil, err
	}
	session, err := d.session(ctx, st)
	if err != nil {
		return nil, err
	}
	return d.previousElsewhere(ctx, st, session, targets)
}

// mayBeElsewhere is, for a FailureDirty outcome that cannot tell how far
// the swap got, what AWS shows of the config in its other environments;
// what it cannot read is left unnamed here (the targets record keeps the
// environment, so a destroy or the next swap still finds it).
func (d *Deployer) mayBeElsewhere(ctx context.Context, st *execution.State) []ledger.ElsewhereGroups {
	out, err := d.gateElsewhere(ctx, st)
	if err != nil {
		d.log.Warn("cannot list what is left in the config's other environments", "release_id", st.ReleaseID, "error", err.Error())
	}
	return out
}

// targetFleet is the groups of a project-config in one environment.
type targetFleet struct {
	target target.Target
	groups []asgtypes.AutoScalingGroup
}

// fleetElsewhere lists the groups of st's project-config (fleet.Groups)
// in each of its other environments (elsewhere), connected as session
// (connectTo, badRelease as there).
func (d *Deployer) fleetElsewhere(ctx context.Context, st *execution.State, session cloud.Session, badRelease bool) ([]targetFleet, error) {
	targets, err := d.elsewhere(ctx, st)
	if err != nil {
		return nil, err
	}
	var out []targetFleet
	err = d.eachTarget(ctx, st, session, badRelease, targets, func(i int, c *cloud.Clients) error {
		groups, err := fleet.Groups(ctx, c.AutoScaling, ownerOf(st))
		out = append(out, targetFleet{target: targets[i], groups: groups})
		return err
	})
	return out, err
}

// liveGroup is a previous group the swap has not scaled in yet: as AWS
// shows it, as the deleting record says it served, where it is (" in
// account A region R" in another environment than the release's) and
// the Retirer that can put it back there.
type liveGroup struct {
	group   asgtypes.AutoScalingGroup
	served  ledger.StandbyGroup
	where   string
	retirer *fleet.Retirer
}

// notScaledIn are the previous groups of plan, in the release's
// environment (c, retirer: as seen shows them, the step's describe) and
// in every other (each with its own clients), that are not being deleted
// and not scaled in yet.
func (d *Deployer) notScaledIn(ctx context.Context, c *cloud.Clients, st *execution.State, req execution.Request, plan ledger.Intent, retirer *fleet.Retirer, seen map[string]asgtypes.AutoScalingGroup) ([]liveGroup, error) {
	log := d.log.With("release_id", st.ReleaseID, "task", execution.TaskCleanUpSuccess)
	var out []liveGroup
	add := func(api cloud.AutoScaling, names []string, attached []ledger.StandbyGroup, where string, rt *fleet.Retirer, known map[string]asgtypes.AutoScalingGroup) error {
		groups, err := fleet.DescribeKnown(ctx, api, names, known)
		for _, sg := range attached {
			if g, ok := groups[sg.Name]; ok && notScaled(g) {
				out = append(out, liveGroup{group: g, served: sg, where: where, retirer: rt})
			}
		}
		return err
	}
	if err := add(c.AutoScaling, plan.Groups, plan.Attached, "", retirer, seen); err != nil {
		return nil, err
	}
	err := d.eachElsewhere(ctx, st, plan, func(tg ledger.ElsewhereGroups, ec *cloud.Clients) error {
		return add(ec.AutoScaling, tg.Groups, tg.Attached, " in "+tg.Target.Describe(), retirerIn(ec, st, req, tg, log), nil)
	})
	return out, err
}

// previousAnywhere completes previous (each service's previous group in
// the release's environment, resources.Previous) with the serving groups
// the config has in its other environments (fleetElsewhere, then
// withElsewhere). A config with every service's previous group here
// costs no call.
func (d *Deployer) previousAnywhere(ctx context.Context, st *execution.State, r *release.Release, previous map[string]asgtypes.AutoScalingGroup) (map[string]asgtypes.AutoScalingGroup, error) {
	if !slices.ContainsFunc(r.ServiceNames(), func(svc string) bool { _, ok := previous[svc]; return !ok }) {
		return previous, nil
	}
	session, err := d.session(ctx, st)
	if err != nil {
		return nil, err
	}
	others, err := d.fleetElsewhere(ctx, st, session, false)
	if err != nil {
		return nil, err
	}
	return withElsewhere(r, previous, others), nil
}

// withElsewhere is previous with, for each service of r that has no
// previous group in the release's environment, its serving group in
// another environment of the config (others: a move's old one), so a
// move's new fleet starts at the capacity the old environment serves
// with, as a deploy in place starts at its previous group's, never at
// min_size while the fleet it replaces runs larger. Among several groups
// of one service elsewhere, the largest desired capacity. Deploy and
// plan both size the new groups from it.
func withElsewhere(r *release.Release, previous map[string]asgtypes.AutoScalingGroup, others []targetFleet) map[string]asgtypes.AutoScalingGroup {
	out := maps.Clone(previous)
	if out == nil {
		out = map[string]asgtypes.AutoScalingGroup{}
	}
	for _, o := range others {
		for _, g := range o.groups {
			t := tags.FromASG(g.Tags)
			svc := t[naming.TagServiceName]
			if _, here := previous[svc]; here || r.Services[svc] == nil || fleet.Deleting(g) || t[naming.TagReleaseID] == r.ReleaseID {
				continue
			}
			if cur, ok := out[svc]; !ok || aws.ToInt32(g.DesiredCapacity) > aws.ToInt32(cur.DesiredCapacity) {
				out[svc] = g
			}
		}
	}
	return out
}
