package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ferryhq/ferry/client/submit"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/ledger"
	"github.com/ferryhq/ferry/internal/store/lock"
	"github.com/ferryhq/ferry/internal/target"
	"github.com/ferryhq/ferry/internal/tuning"
)

// statusRecent is how many of the latest releases of a config status shows.
const statusRecent = 5

// statusCommand is ferry status.
type statusCommand struct {
	env      Env
	deployer deployerFlags
	asJSON   bool
	drift    bool
}

func (c *statusCommand) spec() commandSpec {
	return commandSpec{
		name:    "status",
		args:    "PROJECT [CONFIG]",
		summary: "Show what is deployed, what is running and the last outcomes",
		help: `Status shows, for each config of PROJECT (or just CONFIG): the release
deployed now (when, by whom), the release holding the lock (a deploy
running, or a lock left behind by a failed clean up), and the latest
releases with their outcome and error, newest first; "also in" names
each other environment (account, region) the config has deployed to and
may have groups left in (a move under way or one that failed). --json
prints the same as one JSON object.

--drift also asks the deployer (a drift query of its state machine,
which changes nothing in AWS) how what runs differs from what ferry
deployed: a group missing or extra (extra in another environment the
config deployed to: what a move left there), min, max or desired
changed by hand, a group launching from another launch template,
instances unhealthy past ` + tuning.DriftUnhealthyAfter.String() + ` (younger ones are settling),
load balancers attached or detached; each says since when the deployer
has seen it. The groups a deploy under way acts on are no drift: they
are listed as deploying, standing_by (out of their load balancers
during its bake) or retiring, with the release holding the lock; a lock
that cannot be read leaves that deploy unknown, and every group
compared.

It exits 0, 9 when the deployer knows nothing of the project or config,
1 when it cannot be read.`,
		exits: []int{exitFailure},
	}
}

func (c *statusCommand) defineFlags(fs *flag.FlagSet) {
	c.deployer.define(fs)
	fs.BoolVar(&c.asJSON, "json", false, "print the status as JSON")
	fs.BoolVar(&c.drift, "drift", false, "also compare what runs with what ferry deployed")
}

// Run prints the status of project args[0], or of its config args[1].
func (c *statusCommand) Run(ctx context.Context, args []string) error {
	if len(args) < 1 || len(args) > 2 {
		return usageErrorf(c.spec(), "status takes a project and optionally a config")
	}
	if err := release.ValidateProjectName(args[0]); err != nil {
		return usageErrorf(c.spec(), "%v", err)
	}
	if len(args) == 2 {
		if err := release.ValidateConfigName(args[1]); err != nil {
			return usageErrorf(c.spec(), "%v", err)
		}
	}
	return commandFailure("status", exitFailure, c.status(ctx, args))
}

// projectStatus is the --json form of ferry status.
type projectStatus struct {
	Project string         `json:"project"`
	Configs []configStatus `json:"configs"`
}

// configStatus is one config's status.
type configStatus struct {
	Config string `json:"config"`
	// Current is what is deployed now; nil when nothing ever succeeded.
	Current *ledger.Current `json:"current"`
	// Lock is who holds the lock: a running deploy, or one left behind.
	Lock *lock.Holder `json:"lock"`
	// Releases are the latest releases, newest first.
	Releases []releaseStatus `json:"releases"`
	// Drift is how what runs differs from Current (with --drift).
	Drift *execution.Drift `json:"drift,omitempty"`
	// Destroyed is the destroy that left nothing deployed (Current nil),
	// when it is among the latest releases.
	Destroyed *releaseStatus `json:"destroyed,omitempty"`
	// Healing is the reconciler's heal record while it heals the release
	// deployed now and the fleet has not been found well since.
	Healing *ledger.HealRecord `json:"healing,omitempty"`
	// Elsewhere are the environments the config has deployed to, other
	// than the current record's, where groups of it may be left (a move
	// under way, or one that failed): --drift looks in each.
	Elsewhere []target.Target `json:"elsewhere,omitempty"`
}

// releaseStatus is one release and how it ended.
type releaseStatus struct {
	ReleaseID string `json:"release_id"`
	// End is the end state, "running" for the lock holder without an
	// outcome, "" when no outcome was recorded.
	End       string   `json:"end"`
	Error     string   `json:"error,omitempty"`
	Cause     string   `json:"cause,omitempty"`
	Leftovers []string `json:"leftovers,omitempty"`
	// RolledBack are the previous groups a rollback put back in service
	// before the release's own left.
	RolledBack []string  `json:"rolled_back,omitempty"`
	EndedAt    time.Time `json:"ended_at,omitzero"`
	// CreatedBy is who asked for the release as the deployer verified it
	// (an IAM ARN), CreatedByName the name the client gave itself.
	CreatedBy     string `json:"created_by,omitempty"`
	CreatedByName string `json:"created_by_name,omitempty"`
	// DeployerVersion is the build of the deployer that recorded the
	// outcome.
	DeployerVersion string `json:"deployer_version,omitempty"`
}

// status reads and prints the status of project args[0] (of its config
// args[1] only, when given).
func (c *statusCommand) status(ctx context.Context, args []string) error {
	d, err := connect(ctx, c.env, &c.deployer)
	if err != nil {
		return err
	}
	project := args[0]
	l := ledger.New(d.s3, d.cfg.Bucket)
	var configs []string
	if len(args) == 2 {
		configs = []string{args[1]}
	} else if configs, err = l.Configs(ctx, project); err != nil {
		return err
	}
	ps := projectStatus{Project: project, Configs: []configStatus{}}
	for _, config := range configs {
		cs, err := readConfigStatus(ctx, d, l, project, config)
		if err != nil {
			return fmt.Errorf("%s %s: %w", project, config, err)
		}
		if len(args) == 2 && cs.Current == nil && cs.Lock == nil && len(cs.Releases) == 0 {
			return notFoundf("the deployer knows nothing of %s %s", project, config)
		}
		if c.drift {
			if cs.Drift, err = askDrift(ctx, c.env, d, execution.DriftQuery{ProjectName: project, ConfigName: config}); err != nil {
				return fmt.Errorf("%s %s: %w", project, config, err)
			}
		}
		ps.Configs = append(ps.Configs, cs)
	}
	if len(ps.Configs) == 0 {
		return notFoundf("the deployer knows nothing of %s", project)
	}
	if c.asJSON {
		return writeEvent(c.env.Stdout, evStatus, ps, true)
	}
	writeStatus(c.env.Stdout, ps)
	return nil
}

func readConfigStatus(ctx context.Context, d *deployer, l *ledger.Ledger, project, config string) (configStatus, error) {
	cs := configStatus{Config: config, Releases: []releaseStatus{}}
	head, err := readHead(ctx, d, l, project, config)
	if err != nil {
		return cs, err
	}
	cs.Current, cs.Lock = head.current, head.holder
	ids, err := l.Releases(ctx, project, config)
	if err != nil {
		return cs, err
	}
	if len(ids) > statusRecent {
		ids = ids[:statusRecent]
	}
	for _, id := range ids {
		o, found, err := l.GetOutcome(ctx, project, config, id)
		if err != nil {
			return cs, err
		}
		rs := releaseStatusOf(id, o, found, cs.Lock)
		cs.Releases = append(cs.Releases, rs)
	}
	if err := healing(ctx, l, project, config, &cs); err != nil {
		return cs, err
	}
	if err := elsewhere(ctx, l, project, config, &cs); err != nil {
		return cs, err
	}
	return cs, destroyedBy(ctx, l, project, config, &cs)
}

// healing sets cs.Healing when the reconciler's last heals are of the
// release deployed now and it has not found the fleet well since (a heal
// that made it well deployed a release of its own).
func healing(ctx context.Context, l *ledger.Ledger, project, config string, cs *configStatus) error {
	if cs.Current == nil {
		return nil
	}
	h, found, err := l.GetHeal(ctx, project, config)
	if err != nil || !found || h.InARow == 0 || h.Of != cs.Current.ReleaseID || h.WellAt != nil {
		return err
	}
	cs.Healing = &h
	return nil
}

// elsewhere sets cs.Elsewhere from the config's targets record: every
// environment it names but the current record's.
func elsewhere(ctx context.Context, l *ledger.Ledger, project, config string, cs *configStatus) error {
	rec, _, err := l.GetTargets(ctx, project, config)
	if err != nil {
		return err
	}
	for _, t := range rec.Targets {
		if c := cs.Current; c == nil || t != (target.Target{AccountID: c.AccountID, Region: c.Region, Qualifier: c.Qualifier}) {
			cs.Elsewhere = append(cs.Elsewhere, t)
		}
	}
	return nil
}

// destroyedBy sets cs.Destroyed when nothing is deployed and the newest of
// its latest releases that succeeded is a destroy. A release that cannot
// be read says nothing (its expiry is no error of the status).
func destroyedBy(ctx context.Context, l *ledger.Ledger, project, config string, cs *configStatus) error {
	if cs.Current != nil {
		return nil
	}
	for i, rs := range cs.Releases {
		if rs.End != execution.EndSuccess {
			continue
		}
		r, err := l.GetRelease(ctx, project, config, rs.ReleaseID)
		var bad *failure.BadReleaseError
		switch {
		case errors.As(err, &bad):
			return nil
		case err != nil:
			return err
		case r.Destroy:
			cs.Destroyed = &cs.Releases[i]
		}
		return nil
	}
	return nil
}

// writeStatus prints the status for people: a block per config, aligned.
func writeStatus(w io.Writer, ps projectStatus) {
	for i, cs := range ps.Configs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s %s\n", ps.Project, cs.Config)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		currentRows(tw, cs.Current, cs.Destroyed)
		if h := cs.Healing; h != nil {
			row(tw, "  healing", fmt.Sprintf("%d %s in a row of %s, the last %s", h.InARow, plural(h.InARow, "heal", "heals"), firstNonEmpty(h.Difference, "this release"), h.LastHeal),
				"at "+formatTime(h.LastAt))
		}
		if h := cs.Lock; h != nil {
			row(tw, "  locked by", h.ReleaseID, "since "+formatTime(h.Since), lastSegment(h.Execution))
		}
		for _, t := range cs.Elsewhere {
			row(tw, "  also in", t.Describe(), "groups of the config may be left there (see --drift)")
		}
		tw.Flush()
		writeGroups(w, cs.Current)
		writeDrift(w, cs.Drift)
		if len(cs.Releases) == 0 {
			continue
		}
		fmt.Fprintf(w, "  latest releases\n")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, rs := range cs.Releases {
			end := firstNonEmpty(rs.End, "no outcome")
			when := ""
			if !rs.EndedAt.IsZero() {
				when = formatTime(rs.EndedAt)
			}
			detail := describeError(rs.Error, rs.Cause)
			if len(rs.RolledBack) > 0 {
				detail = strings.TrimPrefix(detail+"; rolled back: "+joinLines(rs.RolledBack)+" "+plural(len(rs.RolledBack), "serves", "serve")+" again", "; ")
			}
			if len(rs.Leftovers) > 0 {
				detail = strings.TrimPrefix(detail+"; left behind: "+joinLines(rs.Leftovers), "; ")
			}
			first, more, _ := strings.Cut(detail, "\n")
			row(tw, "    "+rs.ReleaseID, end, when, first)
			for l := range strings.Lines(more) {
				row(tw, "", "", "", strings.TrimRight(l, "\n"))
			}
		}
		tw.Flush()
	}
}

// formatTime is a UTC time to the second: 2025-01-02 15:04:05Z.
func formatTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") }

func byWhom(who, name string) string {
	switch {
	case who == "":
		return ""
	case name == "" || name == who:
		return "by " + oneLine(who)
	}
	return "by " + oneLine(who) + " (" + oneLine(name) + ")"
}

// lastSegment is the part of an ARN after its last ':' (an execution's
// name).
func lastSegment(arn string) string {
	if i := strings.LastIndexByte(arn, ':'); i >= 0 {
		return arn[i+1:]
	}
	return arn
}

// row writes one tabwriter row, leaving out empty trailing cells so no
// line ends in padding.
// joinLines joins texts from the deployer's records for one line, each
// cleaned as oneLine does.
func joinLines(texts []string) string {
	out := make([]string, len(texts))
	for i, t := range texts {
		out[i] = oneLine(t)
	}
	return strings.Join(out, ", ")
}

func row(w io.Writer, cells ...string) {
	fmt.Fprintln(w, strings.Join(trimCells(cells), "\t"))
}

// askDrift asks the deployer how what runs in q's project-config
// differs from what it deployed (a drift query's execution) and what q
// asks besides: the state of alarms there, whether its release serves.
func askDrift(ctx context.Context, env Env, d *deployer, q execution.DriftQuery) (*execution.Drift, error) {
	now, err := d.now(ctx)
	if err != nil {
		return nil, err
	}
	var drift execution.Drift
	if err := askQuery(ctx, env, d, "drift-"+submit.NewReleaseID(now, env.Random), execution.DriftInput{Drift: q}, &drift); err != nil {
		return nil, err
	}
	return &drift, nil
}

// writeDrift prints a drift report under a config's status, nothing
// without one.
func writeDrift(w io.Writer, d *execution.Drift) {
	if d != nil && d.Deployed != "" {
		writeInFlight(w, d.InFlight)
	}
	switch {
	case d == nil:
		return
	case d.Deployed == "":
		fmt.Fprintf(w, "  drift: nothing deployed to compare (checked %s)\n", formatTime(d.CheckedAt))
		return
	case len(d.Drifts) == 0 && d.InFlight != nil && d.InFlight.Unknown != "":
		fmt.Fprintf(w, "  drift: none found, but the deploy under way is unknown (checked %s)\n", formatTime(d.CheckedAt))
	case len(d.Drifts) == 0 && d.InFlight != nil:
		fmt.Fprintf(w, "  drift: none, what runs is what ferry deployed and is deploying (checked %s)\n", formatTime(d.CheckedAt))
	case len(d.Drifts) == 0:
		fmt.Fprintf(w, "  drift: none, what runs is what ferry deployed (checked %s)\n", formatTime(d.CheckedAt))
	default:
		fmt.Fprintf(w, "  drift (checked %s)\n", formatTime(d.CheckedAt))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, it := range d.Drifts {
			row(tw, "    "+firstNonEmpty(it.Service, "-"), it.Kind, oneLine(it.What), "since "+formatTime(it.Since), it.Group)
		}
		tw.Flush()
	}
	for _, it := range d.Settling {
		fmt.Fprintf(w, "  settling: %s %s since %s (drift after %s)\n", firstNonEmpty(it.Service, "-"), oneLine(it.What), formatTime(it.Since), tuning.DriftUnhealthyAfter)
	}
}

// writeInFlight prints the deploy under way a drift query found, and the
// groups it acts on, nothing without one.
func writeInFlight(w io.Writer, fl *execution.InFlight) {
	switch {
	case fl == nil:
		return
	case fl.Unknown != "":
		fmt.Fprintf(w, "  deploy under way: unknown (%s); every group is compared\n", oneLine(fl.Unknown))
		return
	}
	fmt.Fprintf(w, "  deploy under way: release %s (locked since %s)\n", fl.ReleaseID, formatTime(fl.Since))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, g := range fl.Groups {
		row(tw, "    "+firstNonEmpty(g.Service, "-"), g.State, g.Group)
	}
	tw.Flush()
}
