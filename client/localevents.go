package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ferryhq/ferry/internal/events"
	"github.com/ferryhq/ferry/internal/local/region"
	"github.com/ferryhq/ferry/internal/local/sim"
)

// localEventsPoll is how often ferry local events -f asks the region
// again.
const localEventsPoll = time.Second

// eventFilter is what ferry local events keeps: ferry's deploy events,
// of one project when project is set, at or after since when it is set.
type eventFilter struct {
	project string
	since   time.Time
}

// keep reports whether ev passes the filter; head is its detail's head.
func (f eventFilter) keep(ev sim.BusEvent, head events.Head) bool {
	return ev.Source == events.Source && (f.project == "" || head.Project == f.project) &&
		(f.since.IsZero() || !ev.Time.Before(f.since))
}

// parseSince is --since: an RFC 3339 time, or a duration before the
// region's now (now).
func parseSince(s string, now func() (time.Time, error)) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return time.Time{}, fmt.Errorf("--since %q is neither an RFC 3339 time nor a positive duration", s)
	}
	n, err := now()
	if err != nil {
		return time.Time{}, err
	}
	return n.Add(-d), nil
}

// showEvents prints the deploy events of the region at endpoint that f
// keeps, oldest first; with follow, then every new one as it comes, until
// ctx is done.
func (c *localCommand) showEvents(ctx context.Context, endpoint string, f eventFilter, follow bool) error {
	base := strings.TrimSuffix(endpoint, "/")
	shown := 0
	tw := tabwriter.NewWriter(c.env.Stdout, 0, 4, 2, ' ', 0)
	if !c.asJSON {
		fmt.Fprintln(tw, "TIME\tDETAIL-TYPE\tPROJECT/CONFIG\tRELEASE\tTASK")
	}
	for {
		body, err := fetchWorld(ctx, base+region.EventsPath)
		if err != nil {
			return fmt.Errorf("%w (is ferry local running?)", err)
		}
		var all []sim.BusEvent
		if err := json.Unmarshal(body, &all); err != nil {
			return fmt.Errorf("the region's events do not decode: %w", err)
		}
		for _, ev := range all[min(shown, len(all)):] {
			if err := c.printEvent(tw, ev, f); err != nil {
				return err
			}
		}
		shown = len(all)
		_ = tw.Flush() // a failed write on stdout has nowhere better to go
		if !follow {
			return nil
		}
		if err := c.env.Sleep(ctx, localEventsPoll); err != nil {
			return nil // Ctrl-C ends a follow
		}
	}
}

// printEvent prints one bus event f keeps: its detail, one line, under
// --json (an object of ferry schema events), else a row.
func (c *localCommand) printEvent(w io.Writer, ev sim.BusEvent, f eventFilter) error {
	var head events.Head
	if err := json.Unmarshal(ev.Detail, &head); err != nil {
		return fmt.Errorf("event %s: its detail does not decode: %w", ev.ID, err)
	}
	if !f.keep(ev, head) {
		return nil
	}
	if c.asJSON {
		_, err := fmt.Fprintf(w, "%s\n", compactJSON(ev.Detail))
		return err
	}
	_, err := fmt.Fprintf(w, "%s\t%s\t%s/%s\t%s\t%s\n", ev.Time.UTC().Format(time.RFC3339), ev.DetailType, head.Project, head.Config, head.ReleaseID, head.Task)
	return err
}

// compactJSON is raw on one line.
func compactJSON(raw json.RawMessage) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return b.Bytes()
}

// regionNow is the region's time, from its info view.
func regionNow(ctx context.Context, endpoint string) (time.Time, error) {
	body, err := fetchWorld(ctx, strings.TrimSuffix(endpoint, "/")+region.InfoPath)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w (is ferry local running?)", err)
	}
	var info region.Info
	if err := json.Unmarshal(body, &info); err != nil {
		return time.Time{}, errors.New("the region's info does not decode: " + err.Error())
	}
	return info.Now, nil
}

// runEvents is ferry local events.
func (c *localCommand) runEvents(ctx context.Context, args []string) error {
	if f := c.misplaced(localServeFlags); f != "" {
		return usageErrorf(c.spec(), "--%s is for serving a region (ferry local), not for ferry local events", f)
	}
	if len(args) > 0 {
		return usageErrorf(c.spec(), "ferry local events takes no argument (got %q)", strings.Join(args, " "))
	}
	url := firstNonEmpty(c.endpoint, c.env.Getenv(envLocalEndpoint), c.env.Getenv("AWS_ENDPOINT_URL"), "http://"+localAddr)
	since, err := parseSince(c.since, func() (time.Time, error) { return regionNow(ctx, url) })
	if err != nil {
		return usageErrorf(c.spec(), "%v", err)
	}
	return commandFailure("local events", exitFailure, c.showEvents(ctx, url, eventFilter{project: c.project, since: since}, c.follow))
}
