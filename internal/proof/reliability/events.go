package reliability

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ferryhq/ferry/internal/events"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/local/sim"
)

// EventRun is one deploy execution whose deploy events CheckEvents
// judges: its ARN, its end as Step Functions reports it ("" while it
// runs, or when it ended elsewhere), and whether its events may have been
// lost (Lossy: a PutEvents the run failed, or an invocation that could not
// reach the target to put them; events are best effort).
type EventRun struct {
	ARN   string
	End   string
	Lossy bool
}

// busDetail is what CheckEvents reads of a deploy event's detail.
type busDetail struct {
	ID           string `json:"id"`
	Event        string `json:"event"`
	ExecutionARN string `json:"execution_arn"`
	End          string `json:"end"`
	Service      string `json:"service"`
	Step         int    `json:"step"`
}

// terminal are the kinds that say how a deploy ended.
var terminal = []string{events.Refused.DetailType, events.Succeeded.DetailType, events.Failed.DetailType}

// CheckEvents judges the deploy events the default buses received (bus,
// in the order they were put: sim.World.BusEvents) of each of runs,
// from the bus alone, and returns what is wrong:
//
//   - a retry repeats an event with its id: one id is one event (its
//     detail-type, canary step and end), and one fact (a kind, a canary
//     step) has one id;
//   - the first event is Release Started (or Release Refused);
//   - at most one terminal event (Release Refused, Succeeded, Failed),
//     and nothing new after it; exactly one once an execution that put
//     any event ended Success or FailureClean, unless the run is Lossy
//     (an execution that failed before Validate accepted or refused its
//     release puts none; a FailureDirty end is reached when S3 or AWS
//     refuse the deployer, and the same refusals may keep it from the
//     target's bus);
//   - the terminal event says the end Step Functions reports: Release
//     Succeeded only for Success, Release Failed with its end.
func CheckEvents(bus []sim.BusEvent, runs []EventRun) []string {
	byARN := map[string][]busEvent{}
	var out []string
	for _, ev := range bus {
		if ev.Source != events.Source {
			continue
		}
		var d busDetail
		if err := json.Unmarshal(ev.Detail, &d); err != nil {
			out = append(out, fmt.Sprintf("events: %s %s has a detail that is not JSON: %v", ev.DetailType, ev.ID, err))
			continue
		}
		byARN[d.ExecutionARN] = append(byARN[d.ExecutionARN], busEvent{ev.DetailType, d})
	}
	for _, run := range runs {
		for _, msg := range checkRunEvents(byARN[run.ARN], run) {
			out = append(out, fmt.Sprintf("events of %s: %s", run.ARN, msg))
		}
	}
	return out
}

// busEvent is a deploy event as CheckEvents reads it.
type busEvent struct {
	detailType string
	d          busDetail
}

// fact is what an event is about: its kind, and for a canary step the
// service and step, for a failure its end.
func (e busEvent) fact() string {
	return strings.Join(strings.Fields(fmt.Sprintf("%s %s %d %s", e.detailType, e.d.Service, e.d.Step, e.d.End)), " ")
}

// checkRunEvents judges one execution's events (see CheckEvents).
func checkRunEvents(evs []busEvent, run EventRun) []string {
	distinct, out := distinctEvents(evs)
	if len(distinct) > 0 && !run.Lossy && !slices.Contains([]string{events.Started.DetailType, events.Refused.DetailType}, distinct[0].detailType) {
		out = append(out, fmt.Sprintf("the first event is %q, not %q", distinct[0].detailType, events.Started.DetailType))
	}
	ends, bad := terminals(distinct)
	out = append(out, bad...)
	switch {
	case len(ends) == 0 && run.End != "" && run.End != execution.EndFailureDirty && !run.Lossy && len(distinct) > 0:
		out = append(out, fmt.Sprintf("no terminal event though the execution ended %s", run.End))
	case len(ends) > 0 && run.End != "":
		out = append(out, endMismatch(ends[0], run.End)...)
	}
	return out
}

// distinctEvents are evs without a retry's repeats (an id seen before),
// in order, and what is wrong with the ids: one id for two facts, or
// one fact under two ids.
func distinctEvents(evs []busEvent) (distinct []busEvent, out []string) {
	seen := map[string]busEvent{}
	ids := map[string]string{}
	for _, e := range evs {
		if first, ok := seen[e.d.ID]; ok {
			if first.fact() != e.fact() {
				out = append(out, fmt.Sprintf("id %s is both %q and %q", e.d.ID, first.fact(), e.fact()))
			}
			continue
		}
		if id, ok := ids[e.fact()]; ok {
			out = append(out, fmt.Sprintf("%q put twice with ids %s and %s", e.fact(), id, e.d.ID))
		}
		seen[e.d.ID], ids[e.fact()] = e, e.d.ID
		distinct = append(distinct, e)
	}
	return distinct, out
}

// terminals are the terminal events of distinct, in order, and what is
// wrong with them: a second one, or an event after the first.
func terminals(distinct []busEvent) (ends []busEvent, out []string) {
	for i, e := range distinct {
		if !slices.Contains(terminal, e.detailType) {
			if len(ends) > 0 {
				out = append(out, fmt.Sprintf("%q after %q", e.detailType, ends[0].detailType))
			}
			continue
		}
		ends = append(ends, e)
		if len(ends) == 2 {
			out = append(out, fmt.Sprintf("two terminal events: %q then %q (event %d)", ends[0].detailType+" "+ends[0].d.End, e.detailType+" "+e.d.End, i+1))
		}
	}
	return ends, out
}

// endMismatch says how a terminal event disagrees with the end Step
// Functions reports.
func endMismatch(e busEvent, end string) []string {
	switch {
	case e.detailType == events.Succeeded.DetailType && end != execution.EndSuccess:
		return []string{fmt.Sprintf("%q though the execution ended %s", e.detailType, end)}
	case e.detailType == events.Failed.DetailType && e.d.End != end:
		return []string{fmt.Sprintf("%q says %s though the execution ended %s", e.detailType, e.d.End, end)}
	case e.detailType == events.Refused.DetailType && end == execution.EndSuccess:
		return []string{fmt.Sprintf("%q though the execution ended %s", e.detailType, end)}
	}
	return nil
}

// checkEvents judges the deploy events of the run's executions, the next
// release's and a race's second (CheckEvents). A run whose schedule
// failed a PutEvents call, or kept the deployer from the target (a cold
// Lambda's role, or a read of the run-once marker it acts for the
// release by: naming.StartedKey), may have lost some: best effort, they
// are not retried.
func (r *run) checkEvents(res *Result) {
	lossy := slices.ContainsFunc(r.opts.Schedule.Faults, func(f Fault) bool {
		return f.Call.Op == "PutEvents" || f.Kind == RoleDenied || f.Kind == RoleExpired ||
			f.Call.S3 && f.Call.Op == "GetObject" && strings.HasSuffix(f.Call.Key, "/started")
	})
	runs := []EventRun{{ARN: r.arn, End: res.End, Lossy: lossy}}
	r.mu.Lock()
	if r.secondARN != "" && res.Second != nil {
		runs = append(runs, EventRun{ARN: r.secondARN, End: res.Second.End, Lossy: lossy})
	}
	r.mu.Unlock()
	for _, v := range CheckEvents(r.reg.World().BusEvents(), runs) {
		r.violate("%s", v)
	}
}
