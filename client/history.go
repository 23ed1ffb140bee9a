package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/fanout"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/ledger"
	"github.com/ferryhq/ferry/internal/store/lock"
)

// defaultHistoryLimit is how many releases ferry history shows without
// --limit.
const defaultHistoryLimit = 20

// recordReads is how many records of a config a command reads at once.
const recordReads = 8

// historyCommand is ferry history.
type historyCommand struct {
	env      Env
	deployer deployerFlags
	limit    int
	asJSON   bool
}

func (c *historyCommand) spec() commandSpec {
	return commandSpec{
		name:    "history",
		args:    "PROJECT CONFIG",
		summary: "List a config's releases: outcome, who, when, how long",
		help: fmt.Sprintf(`History lists the releases of PROJECT CONFIG the deployer keeps, newest
first: how each ended (Success, FailureClean, FailureDirty, running, or
no outcome for one that never ran to an end), who asked for it, when it
started, how long it took, its version, the release it rolled back to,
and its error. The release deployed now is marked. --limit N shows the
newest N (default %d; 0 shows every one); --json prints the same as a
JSON array. ferry show RELEASE_ID shows one release in detail.

It exits 0, 9 when the deployer knows nothing of the config, 1 when it
cannot be read.`, defaultHistoryLimit),
		exits: []int{exitFailure},
	}
}

func (c *historyCommand) defineFlags(fs *flag.FlagSet) {
	c.deployer.define(fs)
	fs.IntVar(&c.limit, "limit", defaultHistoryLimit, "show the newest `N` releases (0: every one)")
	fs.BoolVar(&c.asJSON, "json", false, "print the history as JSON")
}

// Run prints the history of project args[0] config args[1].
func (c *historyCommand) Run(ctx context.Context, args []string) error {
	if len(args) != 2 {
		return usageErrorf(c.spec(), "history takes a project and a config")
	}
	if err := errors.Join(release.ValidateProjectName(args[0]), release.ValidateConfigName(args[1])); err != nil {
		return usageErrorf(c.spec(), "%v", err)
	}
	if c.limit < 0 {
		return usageErrorf(c.spec(), "--limit must be 0 (every release) or more")
	}
	return commandFailure("history", exitFailure, c.history(ctx, args[0], args[1]))
}

// historyDoc is the --json result of ferry history.
type historyDoc struct {
	Releases []historyEntry `json:"releases"`
}

// historyEntry is one release of ferry history: how it ended (as status
// shows it) and what it was.
type historyEntry struct {
	releaseStatus
	// Deployed says the release is what runs now (the current record).
	Deployed bool `json:"deployed"`
	// StartedAt is when its execution started; DurationSeconds how long
	// it ran to its end (0 while it runs).
	StartedAt       time.Time `json:"started_at,omitzero"`
	DurationSeconds float64   `json:"duration_seconds,omitempty"`
	Version         string    `json:"version,omitempty"`
	Description     string    `json:"description,omitempty"`
	// RollbackOf is the release whose content it deployed again.
	RollbackOf string `json:"rollback_of,omitempty"`
	// HealOf is the release whose content the reconciler deployed again.
	HealOf string `json:"heal_of,omitempty"`
	// PromotionOf is, for a stage's deploy of a promotion (whose id is
	// the release id), the config of the promotion's first stage.
	PromotionOf string `json:"promotion_of,omitempty"`
	// Destroy says it was a destroy (ferry destroy).
	Destroy bool `json:"destroy,omitempty"`
}

func (c *historyCommand) history(ctx context.Context, project, config string) error {
	d, err := connect(ctx, c.env, &c.deployer)
	if err != nil {
		return err
	}
	entries, err := readHistory(ctx, d, project, config, c.limit)
	if err != nil {
		return err
	}
	if c.asJSON {
		return writeEvent(c.env.Stdout, evHistory, historyDoc{Releases: entries}, true)
	}
	writeHistory(c.env.Stdout, terminalWidth(c.env.Stdout), entries)
	return nil
}

// readHistory reads the newest limit (0: every) releases of
// project/config with their outcome. A config the deployer knows nothing
// of is an error saying so.
func readHistory(ctx context.Context, d *deployer, project, config string, limit int) ([]historyEntry, error) {
	l := ledger.New(d.s3, d.cfg.Bucket)
	ids, err := l.Releases(ctx, project, config)
	if err != nil {
		return nil, err
	}
	head, err := readHead(ctx, d, l, project, config)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 && head.current == nil && head.holder == nil {
		return nil, notFoundf("the deployer knows nothing of %s %s", project, config)
	}
	if limit > 0 && len(ids) > limit {
		ids = ids[:limit]
	}
	entries := make([]historyEntry, len(ids))
	err = fanout.Each(ctx, recordReads, len(ids), func(ctx context.Context, i int) error {
		e, err := readHistoryEntry(ctx, l, project, config, ids[i], head.holder)
		e.Deployed = head.deployed(ids[i])
		entries[i] = e
		return err
	})
	return entries, err
}

// configHead is what a project-config's records say at a glance: the
// release deployed now (nil: none) and who holds the lock (nil: no one).
type configHead struct {
	current *ledger.Current
	holder  *lock.Holder
}

// readHead reads the current record and the lock of project/config.
func readHead(ctx context.Context, d *deployer, l *ledger.Ledger, project, config string) (configHead, error) {
	var head configHead
	cur, deployed, err := l.GetCurrent(ctx, project, config)
	if err != nil {
		return head, err
	}
	if deployed {
		head.current = &cur
	}
	h, locked, err := lock.New(d.s3, d.cfg.Bucket, clock.System{}).Get(ctx, project, config)
	if err != nil {
		return head, err
	}
	if locked {
		head.holder = &h
	}
	return head, nil
}

// deployed says whether release id is the one deployed now.
func (h configHead) deployed(id string) bool { return h.current != nil && h.current.ReleaseID == id }

// readHistoryEntry reads release id's outcome and what the release says
// of itself. A release whose object expired or does not decode keeps its
// outcome and says nothing more.
func readHistoryEntry(ctx context.Context, l *ledger.Ledger, project, config, id string, running *lock.Holder) (historyEntry, error) {
	o, found, err := l.GetOutcome(ctx, project, config, id)
	if err != nil {
		return historyEntry{}, fmt.Errorf("release %s: %w", id, err)
	}
	e := historyEntry{releaseStatus: releaseStatusOf(id, o, found, running)}
	if found {
		e.StartedAt = o.StartedAt
		if !o.StartedAt.IsZero() && o.EndedAt.After(o.StartedAt) {
			e.DurationSeconds = o.EndedAt.Sub(o.StartedAt).Seconds()
		}
	}
	r, err := l.GetRelease(ctx, project, config, id)
	if err != nil {
		var bad *failure.BadReleaseError
		if errors.As(err, &bad) {
			return e, nil
		}
		return e, fmt.Errorf("release %s: %w", id, err)
	}
	e.Version, e.Description, e.RollbackOf, e.HealOf, e.Destroy = r.Version, r.Description, r.RollbackOf, r.HealOf, r.Destroy
	e.PromotionOf = r.PromotionOf
	if e.CreatedBy == "" {
		e.CreatedBy = r.CreatedBy
	}
	if e.StartedAt.IsZero() {
		e.StartedAt = r.CreatedAt
	}
	return e, nil
}

// releaseStatusOf is how release id ended as its outcome o (found) says,
// or "running" when it holds the lock without one.
func releaseStatusOf(id string, o ledger.Outcome, found bool, running *lock.Holder) releaseStatus {
	rs := releaseStatus{ReleaseID: id}
	switch {
	case found:
		rs.End, rs.Error, rs.Cause, rs.Leftovers, rs.EndedAt = o.End, o.Error, o.Cause, o.Leftovers, o.EndedAt
		rs.RolledBack = o.RolledBack
		rs.CreatedBy, rs.CreatedByName, rs.DeployerVersion = o.CreatedBy, o.CreatedByName, o.DeployerVersion
	case running != nil && running.ReleaseID == id:
		rs.End = "running"
	}
	return rs
}

// writeHistory prints the history for people: a row per release, laid
// out for width columns: on a narrow terminal the version goes first,
// then who asked is shortened to what follows the account in their IAM
// ARN (user/NAME), then how long it took, who and when it
// started go, and the detail is cut last (the release and its outcome
// stay).
func writeHistory(w io.Writer, width int, entries []historyEntry) {
	t := table{header: []string{"RELEASE", "OUTCOME", "STARTED", "TOOK", "BY", "VERSION", "DETAIL"},
		shrink: []shrinkStep{{col: "VERSION"}, {col: "BY", abbrev: lastSegment}, {col: "TOOK"}, {col: "BY"}, {col: "STARTED"}}}
	for _, e := range entries {
		id := e.ReleaseID
		if e.Deployed {
			id += " *"
		}
		started, took := "-", "-"
		if !e.StartedAt.IsZero() {
			started = formatTime(e.StartedAt)
		}
		if e.DurationSeconds > 0 {
			took = (time.Duration(e.DurationSeconds) * time.Second).String()
		}
		var detail []string
		if e.Destroy {
			detail = append(detail, "destroy")
		}
		if e.RollbackOf != "" {
			detail = append(detail, "rollback to "+e.RollbackOf)
		}
		if e.HealOf != "" {
			detail = append(detail, "heal of "+e.HealOf)
		}
		if e.PromotionOf != "" {
			detail = append(detail, "promoted from "+e.PromotionOf)
		}
		if msg := describeError(e.Error, e.Cause); msg != "" {
			first, _, _ := strings.Cut(msg, "\n")
			detail = append(detail, first)
		}
		if len(e.Leftovers) > 0 {
			detail = append(detail, "left behind: "+joinLines(e.Leftovers))
		}
		t.add(id, firstNonEmpty(e.End, "no outcome"), started, took, firstNonEmpty(oneLine(e.CreatedBy), "-"),
			firstNonEmpty(oneLine(e.Version), "-"), strings.Join(detail, "; "))
	}
	t.write(w, width)
	if len(entries) > 0 {
		fmt.Fprintln(w, "* deployed now")
	}
}
