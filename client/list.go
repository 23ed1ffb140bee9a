package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/store/ledger"
	"github.com/ferryhq/ferry/internal/store/lock"
)

// listCommand is ferry list.
type listCommand struct {
	env      Env
	deployer deployerFlags
	asJSON   bool
}

func (c *listCommand) spec() commandSpec {
	return commandSpec{
		name:    "list",
		summary: "List the projects and configs the deployer knows",
		help: `List shows every project-config the deployer keeps records of: the release
deployed now, the latest release and how it ended, and whether a deploy
runs (the release holding the lock). --json prints the same as a JSON
array. ferry status PROJECT shows one project in detail.`,
		exits: []int{exitFailure},
	}
}

func (c *listCommand) defineFlags(fs *flag.FlagSet) {
	c.deployer.define(fs)
	fs.BoolVar(&c.asJSON, "json", false, "print the list as JSON")
}

// listDoc is the --json result of ferry list.
type listDoc struct {
	Configs []listEntry `json:"configs"`
}

// listEntry is one project-config of ferry list.
type listEntry struct {
	Project string `json:"project"`
	Config  string `json:"config"`
	// Deployed is the release deployed now, "" when none ever succeeded.
	Deployed string `json:"deployed"`
	// Latest is the newest release and End how it ended ("running" for
	// the lock holder without an outcome, "" when no outcome is recorded).
	Latest string `json:"latest"`
	End    string `json:"end"`
	// Running says a deploy holds the lock; LockedBy is its release.
	Running  bool   `json:"running"`
	LockedBy string `json:"locked_by,omitempty"`
}

func (c *listCommand) Run(ctx context.Context, args []string) error {
	if len(args) > 0 {
		return usageErrorf(c.spec(), "takes no arguments")
	}
	entries, err := c.list(ctx)
	if err != nil {
		return commandFailure("list", exitFailure, err)
	}
	if c.asJSON {
		return writeEvent(c.env.Stdout, evList, listDoc{Configs: entries}, true)
	}
	if len(entries) == 0 {
		fmt.Fprintln(c.env.Stdout, "the deployer knows no project yet")
		return nil
	}
	writeList(c.env.Stdout, terminalWidth(c.env.Stdout), entries)
	return nil
}

// writeList prints the list for people, a row per project-config, laid
// out for width columns: on a narrow terminal the running release's id
// goes first, then the latest release, then the release deployed (the
// outcome stays, and whether a deploy runs).
func writeList(w io.Writer, width int, entries []listEntry) {
	t := table{header: []string{"PROJECT", "CONFIG", "DEPLOYED", "LATEST", "OUTCOME", "RUNNING"}, shrink: []shrinkStep{
		{col: "RUNNING", abbrev: func(s string) string { yes, _, _ := strings.Cut(s, " "); return yes }},
		{col: "LATEST"},
		{col: "DEPLOYED"},
	}}
	for _, e := range entries {
		running := "no"
		if e.Running {
			running = "yes (" + e.LockedBy + ")"
		}
		t.add(e.Project, e.Config, firstNonEmpty(e.Deployed, "-"), firstNonEmpty(e.Latest, "-"), firstNonEmpty(e.End, "-"), running)
	}
	t.write(w, width)
}

// list reads what the deployer knows of every project-config.
func (c *listCommand) list(ctx context.Context) ([]listEntry, error) {
	d, err := connect(ctx, c.env, &c.deployer)
	if err != nil {
		return nil, err
	}
	l := ledger.New(d.s3, d.cfg.Bucket)
	pcs, err := l.ProjectConfigs(ctx)
	if err != nil {
		return nil, err
	}
	locks := lock.New(d.s3, d.cfg.Bucket, clock.System{})
	entries := make([]listEntry, 0, len(pcs))
	for _, pc := range pcs {
		e, err := listOne(ctx, l, locks, pc)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", pc.Project, pc.Config, err)
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// listOne reads one project-config's entry: its current record, its
// newest release's outcome and its lock.
func listOne(ctx context.Context, l *ledger.Ledger, locks *lock.Locks, pc ledger.ProjectConfig) (listEntry, error) {
	e := listEntry{Project: pc.Project, Config: pc.Config}
	cur, found, err := l.GetCurrent(ctx, pc.Project, pc.Config)
	if err != nil {
		return e, err
	}
	if found {
		e.Deployed = cur.ReleaseID
	}
	h, held, err := locks.Get(ctx, pc.Project, pc.Config)
	if err != nil {
		return e, err
	}
	e.Running, e.LockedBy = held, h.ReleaseID
	ids, err := l.Releases(ctx, pc.Project, pc.Config)
	if err != nil || len(ids) == 0 {
		return e, err
	}
	e.Latest = ids[0]
	o, found, err := l.GetOutcome(ctx, pc.Project, pc.Config, e.Latest)
	switch {
	case err != nil:
		return e, err
	case found:
		e.End = o.End
	case held && h.ReleaseID == e.Latest:
		e.End = "running"
	}
	return e, nil
}
