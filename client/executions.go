package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/smithy-go"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/release"
)

// historyPageSize is how many events one GetExecutionHistory call asks for
// (Step Functions' maximum).
const historyPageSize = 1000

// newEventsPageSize bounds how many events a follower asks for in a page
// once it has read the history: a poll reads the newest events back to
// the last one it read, without data (about 200 bytes each), a page
// sized from how many came in the previous poll (pageSizeAfter).
const newEventsPageSize = 100

// pageSizeAfter is the page size of the poll after one that read n new
// events, interval before it, while the execution's loop waits loopWait
// between its rounds (0: unknown): as many as the rounds of the interval
// record (limits.HistoryEventsPerRound each, and two more), or else as
// many as the last poll read; at least 10, at most newEventsPageSize. A
// page is answered whole, so a page too large is bytes read for nothing;
// one too small, a call more (a next page keeps the size: Step Functions
// asks for every argument unchanged with a nextToken).
func pageSizeAfter(n int, interval, loopWait time.Duration) int32 {
	if loopWait > 0 {
		rounds := int((interval + loopWait - 1) / loopWait)
		n = rounds*limits.HistoryEventsPerRound + 2
	}
	return int32(min(max(n, 10), newEventsPageSize))
}

// waitingFollowInterval is how long a follower polling at the default
// interval waits between two reads while the execution waits between
// checks: a check's report is shown at most this late, and a follower
// reads at most 0.2 times a second then (two reads a poll, the second
// for the reports it shows; GetExecutionHistory's budget, 20 a second,
// is the account's). A follower given --poll reads at that interval
// throughout.
const waitingFollowInterval = 10 * time.Second

// maxFollowInterval bounds how far a follower slows down while Step
// Functions throttles it.
const maxFollowInterval = 30 * time.Second

// runningExecution is a running execution of the deployer and the release
// it deploys.
type runningExecution struct {
	ARN     string
	Name    string
	Started time.Time
	Release *release.Release
}

// findRunning lists the running executions of the deployer that deploy
// project/config, oldest first. It reads every running execution's input;
// an input that is not a release is skipped (it is not a deploy ferry can
// follow).
func findRunning(ctx context.Context, d *deployer, project, config string) ([]runningExecution, error) {
	var found []runningExecution
	err := eachRunning(ctx, d, func(item sfntypes.ExecutionListItem) (bool, error) {
		x, ok, err := describeRunning(ctx, d, item)
		if ok && x.Release.ProjectName == project && x.Release.ConfigName == config {
			found = append(found, x)
		}
		return false, err
	})
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(found, func(a, b runningExecution) int { return a.Started.Compare(b.Started) })
	return found, nil
}

// eachRunning calls visit with each running execution of the deployer,
// following every page of the listing, until visit says stop or fails.
func eachRunning(ctx context.Context, d *deployer, visit func(sfntypes.ExecutionListItem) (stop bool, err error)) error {
	return eachExecution(ctx, d, sfntypes.ExecutionStatusRunning, visit)
}

// eachExecution is eachRunning for the executions of status ("": every
// execution Step Functions keeps, newest first).
func eachExecution(ctx context.Context, d *deployer, status sfntypes.ExecutionStatus, visit func(sfntypes.ExecutionListItem) (stop bool, err error)) error {
	p := sfn.NewListExecutionsPaginator(d.sfn, &sfn.ListExecutionsInput{
		StateMachineArn: aws.String(d.cfg.StateMachineARN),
		StatusFilter:    status,
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("listing the executions: %w", err)
		}
		for _, item := range page.Executions {
			if stop, err := visit(item); stop || err != nil {
				return err
			}
		}
	}
	return nil
}

// followOptions say how often to read the history and how to wait.
type followOptions struct {
	// Interval is the wait between two reads; Waiting, when longer, the
	// wait while the execution waits between checks.
	Interval time.Duration
	Waiting  time.Duration
	Sleep    func(ctx context.Context, d time.Duration) error
	// Now is the deployer's clock, read between polls for the ticking
	// clock a terminal shows; nil shows none.
	Now func(ctx context.Context) (time.Time, error)
}

// followFlags are the flags of the commands that follow an execution
// (deploy, halt).
type followFlags struct {
	noWait  bool
	asJSON  bool
	poll    time.Duration
	pollSet bool
}

// define declares --no-wait (noWait says when the command then returns),
// --json and --poll on fs, bound to f.
func (f *followFlags) define(fs *flag.FlagSet, noWait string) {
	fs.BoolVar(&f.noWait, "no-wait", false, noWait)
	fs.BoolVar(&f.asJSON, "json", false, "print one JSON object per event and the outcome")
	f.poll = defaultPollInterval
	fs.Var(pollFlag{f}, "poll", "how often to read the execution's history while following it, a `duration` (default 1s; while it waits between checks, until its next one, every 10s to 30s)")
}

// check says what is wrong with the flags' values, nil when nothing is.
func (f *followFlags) check() error {
	if f.poll <= 0 {
		return errors.New("--poll must be positive")
	}
	return nil
}

// options are how to follow with these flags, env's sleep and d's
// clock: at the interval --poll gives throughout, or else at the default
// one, and waitingFollowInterval while the execution waits.
func (f *followFlags) options(env Env, d *deployer) followOptions {
	o := followOptions{Interval: f.poll, Sleep: env.Sleep, Now: d.now}
	if !f.pollSet {
		o.Waiting = waitingFollowInterval
	}
	return o
}

// pollFlag is --poll: a duration that says it was given.
type pollFlag struct{ f *followFlags }

func (p pollFlag) String() string {
	if p.f == nil {
		return defaultPollInterval.String()
	}
	return p.f.poll.String()
}

// Get is the duration (flag.Getter).
func (p pollFlag) Get() any { return p.f.poll }

func (p pollFlag) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	p.f.poll, p.f.pollSet = d, true
	return nil
}

// followExecution reads the history of the execution arn until it ends,
// showing every update on out, and returns the outcome. Each poll reads
// only the events after the last one read (historySince), at the
// interval (pages sized from the previous poll's new events), and while
// the execution waits between checks just after its next one
// (waitingInterval: every waitingFollowInterval to maxFollowInterval);
// meanwhile the display ticks (pause). Throttled by
// Step Functions (GetExecutionHistory's budget is shared by the
// account), it polls half as often each time, up to maxFollowInterval,
// and back at the interval once a read succeeds. It returns an error
// only when it cannot go on reading (ctx done, the history unreadable);
// the execution is not affected either way.
func followExecution(ctx context.Context, api stepFunctions, arn string, out *display, opts followOptions) (progress, error) {
	var r historyReader
	interval := opts.Interval
	size := pageSizeAfter(0, 0, 0)
	for {
		events, err := historySince(ctx, api, arn, r.mark(), size)
		switch {
		case err != nil && ctx.Err() != nil:
			return progress{}, ctx.Err()
		case err != nil && throttled(err):
			interval = min(2*interval, max(maxFollowInterval, opts.Interval))
		case err != nil:
			return progress{}, err
		default:
			interval = opts.Interval
		}
		before := r.lastID
		updates := r.read(events)
		if err == nil {
			interval = max(interval, waitingInterval(ctx, &r, opts))
			size = pageSizeAfter(int(r.lastID-before), interval, r.loopWait)
		}
		for _, u := range updates {
			out.show(u)
			if u.Event == updateOutcome {
				return u, nil
			}
		}
		if err := pause(ctx, out, opts, interval); err != nil {
			return progress{}, err
		}
	}
}

// pause waits interval before the next poll, the display ticking
// meanwhile (every second on a terminal, at keepAlive elsewhere): the
// deployer's clock is read once, and advanced by what was slept.
func pause(ctx context.Context, out *display, opts followOptions, interval time.Duration) error {
	var now time.Time
	ticking := opts.Now != nil && out.ticks()
	if ticking {
		var err error
		if now, err = opts.Now(ctx); err != nil {
			ticking = false
		} else {
			out.tick(now)
		}
	}
	for left := interval; left > 0; {
		step := left
		if ticking {
			step = min(step, out.nextTick())
		}
		if err := opts.Sleep(ctx, step); err != nil {
			return err
		}
		if left -= step; ticking && left > 0 {
			now = now.Add(step)
			out.tick(now)
		}
	}
	return nil
}

// waitingInterval is how long to wait before the next poll while the
// execution waits between two rounds of a loop (0 when it does not, or
// the follower polls at --poll throughout): until just after the wait
// ends, when the next report comes, as the deployer's clock says, but
// never sooner than opts.Waiting (the API budget) nor later than
// maxFollowInterval (an execution stopped meanwhile is seen soon).
func waitingInterval(ctx context.Context, r *historyReader, opts followOptions) time.Duration {
	if !r.waiting || opts.Waiting <= 0 {
		return 0
	}
	if opts.Now == nil || r.loopWait <= 0 || r.waitingSince.IsZero() {
		return opts.Waiting
	}
	now, err := opts.Now(ctx)
	if err != nil {
		return opts.Waiting
	}
	const margin = time.Second // the task runs, and reports, just after the wait
	left := r.waitingSince.Add(r.loopWait).Sub(now) + margin
	return min(max(left, opts.Waiting), max(maxFollowInterval, opts.Waiting))
}

// throttled reports whether err is Step Functions refusing a call for its
// rate (ThrottlingException), after the SDK's own retries.
func throttled(err error) bool {
	var apiErr smithy.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode() == "ThrottlingException" || apiErr.ErrorCode() == "Throttling")
}

// historySince reads the events of the execution arn after the event
// at.after (0: all of them), newest first, back to that event: a poll
// costs the new events, not the whole history again, in pages of size
// (the whole history's first, in pages of historyPageSize). It reads
// them without execution data (inputs and outputs), then reads again,
// with data, the reports a follower shows among them (withReports).
// While the execution checks its health, it reads a page of a round
// (roundPageSize) first: when that page shows the rounds before it are
// plain rounds of the loop (newestRound), it reads no further.
func historySince(ctx context.Context, api stepFunctions, arn string, at mark, size int32) ([]sfntypes.HistoryEvent, error) {
	switch {
	case at.after == 0:
		size = historyPageSize
	case at.checks > 0:
		size = roundPageSize
	}
	p := newHistoryPager(api, arn, at.after, size, false)
	events, err := p.next(ctx)
	if err != nil {
		return nil, err
	}
	if !p.done && at.checks > 0 {
		newest, ok, err := newestRound(ctx, api, arn, at, events)
		if err != nil || ok {
			return newest, err
		}
	}
	rest, err := p.rest(ctx)
	if err != nil {
		return nil, err
	}
	return withReports(ctx, api, arn, append(events, rest...))
}

// withReports is events (newest first, without execution data) with
// those that carry a report a follower shows (reportOf) read again with
// data: the newest of them back to the oldest it shows, the newest
// report of each loop (the health checks', the bake's, a clean-up's,
// which the Wait state after it carries in its input too) and every
// one-off report (a canary's step). An older report of a loop among the
// events is not shown: the newest says where that loop stands.
func withReports(ctx context.Context, api stepFunctions, arn string, events []sfntypes.HistoryEvent) ([]sfntypes.HistoryEvent, error) {
	oldest, n, looped := int64(0), 0, map[string]bool{}
	for i, ev := range events {
		kind, task := reportOf(ev)
		switch kind {
		case reportNone:
			continue
		case reportLoop:
			if looped[task] {
				continue
			}
			looped[task] = true
		}
		oldest, n = ev.Id, i+1
	}
	if n == 0 {
		return events, nil
	}
	withData, err := historyPages(ctx, api, arn, oldest-1, int32(min(n, historyPageSize)), true)
	if err != nil {
		return nil, err
	}
	for _, ev := range events {
		if ev.Id < oldest {
			withData = append(withData, ev)
		}
	}
	return withData, nil
}

// A report is what a follower shows of an event's execution data.
type report int

const (
	reportNone report = iota
	// reportLoop is a report of a loop (a health check's, a bake's, a
	// clean-up's step): the newest of them says it all.
	reportLoop
	// reportOnce is a report shown for itself: a canary's step.
	reportOnce
)

// reportOf says whether, and how, a follower shows something of ev's
// execution data, and of which task's report.
func reportOf(ev sfntypes.HistoryEvent) (report, string) {
	switch ev.Type {
	case sfntypes.HistoryEventTypeTaskStateExited:
		switch task := exitedName(ev); task {
		case execution.TaskNextStep:
			return reportOnce, task
		case execution.TaskValidateResources, execution.TaskDeploy, execution.TaskCheckHealthy, execution.TaskBake, execution.TaskCleanUpSuccess, execution.TaskCleanUpFailure:
			return reportLoop, task
		}
	case sfntypes.HistoryEventTypeWaitStateEntered:
		if task, ok := waitReports[enteredName(ev)]; ok {
			return reportLoop, task
		}
	}
	return reportNone, ""
}

// exitedName is the name of the state ev exited ("" for another event).
func exitedName(ev sfntypes.HistoryEvent) string {
	if d := ev.StateExitedEventDetails; d != nil {
		return aws.ToString(d.Name)
	}
	return ""
}

// historyPages reads the events after the event after, newest first, size
// a page, with or without execution data.
func historyPages(ctx context.Context, api stepFunctions, arn string, after int64, size int32, data bool) ([]sfntypes.HistoryEvent, error) {
	return newHistoryPager(api, arn, after, size, data).rest(ctx)
}

// A historyPager reads the events of an execution after an event,
// newest first, a page at a time.
type historyPager struct {
	api   stepFunctions
	in    *sfn.GetExecutionHistoryInput
	after int64
	// done says every event after after was read.
	done bool
}

// newHistoryPager reads the events of arn after the event after, size a
// page, with or without execution data.
func newHistoryPager(api stepFunctions, arn string, after int64, size int32, data bool) *historyPager {
	return &historyPager{api: api, after: after, in: &sfn.GetExecutionHistoryInput{
		ExecutionArn: aws.String(arn), MaxResults: size, ReverseOrder: true,
		IncludeExecutionData: aws.Bool(data),
	}}
}

// next reads the next page: its events after p.after (none once done).
func (p *historyPager) next(ctx context.Context) ([]sfntypes.HistoryEvent, error) {
	if p.done {
		return nil, nil
	}
	out, err := p.api.GetExecutionHistory(ctx, p.in)
	if err != nil {
		return nil, fmt.Errorf("reading the history of %s: %w", aws.ToString(p.in.ExecutionArn), err)
	}
	var events []sfntypes.HistoryEvent
	for _, ev := range out.Events {
		if ev.Id <= p.after {
			p.done = true
			return events, nil
		}
		events = append(events, ev)
	}
	switch n := len(out.Events); {
	case n > 0 && out.Events[n-1].Id <= p.after+1: // the page ends at the first event wanted
		p.done = true
	case out.NextToken == nil || aws.ToString(out.NextToken) == aws.ToString(p.in.NextToken):
		p.done = true
	}
	p.in.NextToken = out.NextToken
	return events, nil
}

// rest reads every page left.
func (p *historyPager) rest(ctx context.Context) ([]sfntypes.HistoryEvent, error) {
	var events []sfntypes.HistoryEvent
	for !p.done {
		page, err := p.next(ctx)
		if err != nil {
			return nil, err
		}
		events = append(events, page...)
	}
	return events, nil
}
