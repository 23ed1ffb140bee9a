package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/ledger"
)

// showCommand is ferry show.
type showCommand struct {
	env      Env
	deployer deployerFlags
	asJSON   bool
}

func (c *showCommand) spec() commandSpec {
	return commandSpec{
		name:    "show",
		args:    "[PROJECT CONFIG] RELEASE_ID",
		summary: "Show one release: content, digest, outcome, timeline, groups",
		help: `Show prints one release as the deployer keeps it: its content as it was
uploaded and its digest (the SHA-256 of its canonical encoding, the
release_sha256 status and the records name), who asked for it and when,
how it ended, the timeline of its execution (each state with when it was
first entered and last left, and how many times a loop ran it), and the
groups it created and retired. Without PROJECT CONFIG, every config the
deployer knows is searched for the release id. --json prints the same as
one JSON object, the content as uploaded under "release".

It exits 0, 9 when no config holds the release, 1 when the deployer
cannot be read.`,
		exits: []int{exitFailure},
	}
}

func (c *showCommand) defineFlags(fs *flag.FlagSet) {
	c.deployer.define(fs)
	fs.BoolVar(&c.asJSON, "json", false, "print the release as JSON")
}

// Run prints the release args[len(args)-1], of project args[0] config
// args[1] when given.
func (c *showCommand) Run(ctx context.Context, args []string) error {
	if len(args) != 1 && len(args) != 3 {
		return usageErrorf(c.spec(), "show takes a release id, optionally after its project and config")
	}
	id := args[len(args)-1]
	err := release.ValidateReleaseID(id)
	if len(args) == 3 {
		err = errors.Join(release.ValidateProjectName(args[0]), release.ValidateConfigName(args[1]), err)
	}
	if err != nil {
		return usageErrorf(c.spec(), "%v", err)
	}
	return commandFailure("show", exitFailure, c.show(ctx, args))
}

// releaseDetail is ferry show's account of one release.
type releaseDetail struct {
	Project   string `json:"project"`
	Config    string `json:"config"`
	ReleaseID string `json:"release_id"`
	// Digest is the hex SHA-256 of the release's canonical encoding.
	Digest string `json:"digest"`
	// Deployed says it is what runs now.
	Deployed bool `json:"deployed"`
	// End is how it ended, "running" while it holds the lock, "" when it
	// has no outcome; Outcome is the deployer's record of its end.
	End     string          `json:"end"`
	Outcome *ledger.Outcome `json:"outcome"`
	// Created are the groups its Deploy made; Retired the groups it
	// retired once it was healthy.
	Created []string `json:"created_groups"`
	Retired []string `json:"retired_groups"`
	// Timeline is its execution's states in the order first entered;
	// nil when the execution's history is gone or it never started.
	Timeline []stateSpan `json:"timeline"`
	// Release is the release as uploaded.
	Release json.RawMessage `json:"release"`

	decoded *release.Release
}

// stateSpan is one state of an execution: when it was first entered and
// last left (zero while in it), and how many times it was entered.
type stateSpan struct {
	State     string    `json:"state"`
	EnteredAt time.Time `json:"entered_at"`
	ExitedAt  time.Time `json:"exited_at,omitzero"`
	Times     int       `json:"times"`
}

func (c *showCommand) show(ctx context.Context, args []string) error {
	d, err := connect(ctx, c.env, &c.deployer)
	if err != nil {
		return err
	}
	l := ledger.New(d.s3, d.cfg.Bucket)
	id := args[len(args)-1]
	var project, config string
	if len(args) == 3 {
		project, config = args[0], args[1]
	} else if project, config, err = locateRelease(ctx, l, id); err != nil {
		return err
	}
	rd, err := readReleaseDetail(ctx, d, l, project, config, id)
	if err != nil {
		return err
	}
	if c.asJSON {
		return writeEvent(c.env.Stdout, evShow, *rd, true)
	}
	writeReleaseDetail(c.env.Stdout, rd)
	return nil
}

// locateRelease finds the one project-config holding release id.
func locateRelease(ctx context.Context, l *ledger.Ledger, id string) (project, config string, err error) {
	found, err := l.FindRelease(ctx, id)
	switch {
	case err != nil:
		return "", "", err
	case len(found) == 0:
		return "", "", notFoundf("no config of the deployer holds a release %s (releases expire with their records; see ferry history PROJECT CONFIG)", id)
	case len(found) > 1:
		names := make([]string, len(found))
		for i, pc := range found {
			names[i] = pc.Project + " " + pc.Config
		}
		return "", "", fmt.Errorf("release %s is held by %d configs (%s); name one: ferry show PROJECT CONFIG %s", id, len(found), strings.Join(names, ", "), id)
	}
	return found[0].Project, found[0].Config, nil
}

// readReleaseDetail reads what the deployer keeps of release id of
// project/config. A release it does not hold is an error saying so, as is
// one whose release.json is not what Validate accepted (its hash record).
func readReleaseDetail(ctx context.Context, d *deployer, l *ledger.Ledger, project, config, id string) (*releaseDetail, error) {
	raw, err := l.GetReleaseRaw(ctx, project, config, id)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", project, config, err)
	}
	r, err := release.Decode(raw)
	if err != nil {
		return nil, fmt.Errorf("%s %s release %s as stored: %w", project, config, id, err)
	}
	digest, err := release.Hash(r)
	if err != nil {
		return nil, err
	}
	if err := l.CheckReleaseHash(ctx, project, config, id, digest); err != nil {
		return nil, fmt.Errorf("%s %s: %w", project, config, err)
	}
	rd := &releaseDetail{Project: project, Config: config, ReleaseID: id, Digest: digest,
		Release: raw, decoded: r, Created: []string{}, Retired: []string{}}
	head, err := readHead(ctx, d, l, project, config)
	if err != nil {
		return nil, err
	}
	rd.Deployed = head.deployed(id)
	o, found, err := l.GetOutcome(ctx, project, config, id)
	if err != nil {
		return nil, err
	}
	rd.End = releaseStatusOf(id, o, found, head.holder).End
	if found {
		rd.Outcome = &o
	}
	if rd.Created, rd.Retired, err = releaseGroups(ctx, l, project, config, id); err != nil {
		return nil, err
	}
	arn := asl.ExecutionARN(d.cfg.StateMachineARN, naming.ExecutionName(project, config, id))
	if found && o.Execution != "" {
		arn = o.Execution
	}
	if rd.Timeline, err = readTimeline(ctx, d, arn); err != nil {
		return nil, err
	}
	return rd, nil
}

// releaseGroups are the groups release id's Deploy created (its
// write-ahead record) and those it retired (its deleting record).
func releaseGroups(ctx context.Context, l *ledger.Ledger, project, config, id string) (created, retired []string, err error) {
	created, retired = []string{}, []string{}
	dep, found, err := l.GetDeploying(ctx, project, config, id)
	if err != nil {
		return nil, nil, err
	}
	if found {
		created = nonNil(slices.Clone(dep.Groups))
	}
	del, found, err := l.GetDeleting(ctx, project, config, id)
	if err != nil {
		return nil, nil, err
	}
	if found {
		retired = nonNil(del.AllGroups())
	}
	return created, retired, nil
}

// readTimeline is the timeline of execution arn: nil when Step Functions
// no longer has it (it keeps an execution's history 90 days after it
// ends) or it never started.
func readTimeline(ctx context.Context, d *deployer, arn string) ([]stateSpan, error) {
	events, err := historyPages(ctx, d.sfn, arn, 0, historyPageSize, false)
	var gone *sfntypes.ExecutionDoesNotExist
	if errors.As(err, &gone) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	slices.Reverse(events) // historyPages reads the newest first
	return timelineOf(events), nil
}

// timelineOf folds execution events, oldest first, into states in the
// order first entered.
func timelineOf(events []sfntypes.HistoryEvent) []stateSpan {
	var spans []stateSpan
	at := map[string]int{}
	for _, ev := range events {
		when := time.Time{}
		if ev.Timestamp != nil {
			when = ev.Timestamp.UTC()
		}
		if name := enteredName(ev); name != "" {
			i, seen := at[name]
			if !seen {
				i = len(spans)
				at[name] = i
				spans = append(spans, stateSpan{State: name, EnteredAt: when})
			}
			spans[i].Times++
			spans[i].ExitedAt = time.Time{}
			continue
		}
		if name := exitedName(ev); name != "" {
			if i, seen := at[name]; seen {
				spans[i].ExitedAt = when
			}
		}
	}
	return spans
}

// writeReleaseDetail prints a release for people.
func writeReleaseDetail(w io.Writer, rd *releaseDetail) {
	r := rd.decoded
	title := fmt.Sprintf("%s %s release %s", rd.Project, rd.Config, rd.ReleaseID)
	if rd.Deployed {
		title += " (deployed now)"
	}
	fmt.Fprintln(w, title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row(tw, "  digest", "sha256:"+rd.Digest)
	row(tw, "  created", formatTime(r.CreatedAt), byWhom(r.CreatedBy, ""))
	if r.Version != "" || r.Description != "" {
		row(tw, "  release", firstNonEmpty(oneLine(r.Version), "(no version)"), oneLine(r.Description))
	}
	if r.RollbackOf != "" {
		row(tw, "  rollback", "deploys again the content of release "+r.RollbackOf)
	}
	if len(r.Remove) > 0 {
		row(tw, "  removes", strings.Join(r.Remove, ", "))
	}
	outcomeRows(tw, rd)
	tw.Flush()
	fmt.Fprintln(w, "  services")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, name := range r.ServiceNames() {
		svc := r.Services[name]
		ami := firstNonEmpty(svc.AMI, r.AMI)
		row(tw, "    "+name, ami, svc.Runs(), capacityOf(svc))
	}
	tw.Flush()
	groupRows(w, "created groups", rd.Created)
	groupRows(w, "retired groups", rd.Retired)
	if len(rd.Timeline) == 0 {
		fmt.Fprintln(w, "  timeline: none (the execution never started, or Step Functions no longer keeps it)")
		return
	}
	fmt.Fprintln(w, "  timeline")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, s := range rd.Timeline {
		times := ""
		if s.Times > 1 {
			times = fmt.Sprintf("×%d", s.Times)
		}
		left := "-"
		if !s.ExitedAt.IsZero() {
			left = formatTime(s.ExitedAt)
		}
		row(tw, "    "+s.State, times, formatTime(s.EnteredAt), left)
	}
	tw.Flush()
}

// outcomeRows are show's rows of how the release ended.
func outcomeRows(tw io.Writer, rd *releaseDetail) {
	o := rd.Outcome
	if o == nil {
		row(tw, "  outcome", firstNonEmpty(rd.End, "none recorded"))
		return
	}
	took := ""
	if o.EndedAt.After(o.StartedAt) && !o.StartedAt.IsZero() {
		took = "took " + o.EndedAt.Sub(o.StartedAt).Round(time.Second).String()
	}
	row(tw, "  outcome", o.End, "ended "+formatTime(o.EndedAt), took, byWhom(o.CreatedBy, o.CreatedByName))
	if msg := describeError(o.Error, o.Cause); msg != "" {
		first, _, _ := strings.Cut(msg, "\n")
		row(tw, "  error", first)
	}
	if len(o.RolledBack) > 0 {
		row(tw, "  rolled back", joinLines(o.RolledBack))
	}
	if len(o.Leftovers) > 0 {
		row(tw, "  left behind", joinLines(o.Leftovers))
	}
	if o.Analysis != nil {
		row(tw, "  analysis", analysisHead(o.Analysis))
		for _, l := range metricLines(o.Analysis) {
			row(tw, "", strings.TrimSpace(l))
		}
	}
}

// capacityOf is a service's capacity as show prints it.
func capacityOf(svc *release.Service) string {
	a := svc.Autoscaling
	if a == nil {
		return ""
	}
	if svc.MixedInstances.Weighted() {
		return fmt.Sprintf("min %d max %d units", a.MinSize, a.MaxSize)
	}
	return fmt.Sprintf("min %d max %d", a.MinSize, a.MaxSize)
}

// groupRows prints a titled list of groups, nothing when there is none.
func groupRows(w io.Writer, title string, groups []string) {
	if len(groups) == 0 {
		return
	}
	fmt.Fprintf(w, "  %s\n", title)
	for _, g := range groups {
		fmt.Fprintf(w, "    %s\n", g)
	}
}
