package main

import (
	"context"
	"encoding/json"

	"github.com/aws/aws-sdk-go-v2/aws"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/statemachine/shape"
)

// A mark is where a follower's reading of a history stands: the last
// event it read (after) and, since the last task other than the health
// check entered, the newest health check's wait it read with its report
// (wait) and the checks made by then (checks; 0: none).
type mark struct {
	after  int64
	wait   int64
	checks int
}

// roundPageSize is the first page a follower reads while the execution
// checks its health: a round of the loop and the next round's events up
// to its task's end (the wait left, the task entered, scheduled, started
// and succeeded), enough to hold the newest report and the start of its
// round whenever a poll comes.
const roundPageSize = 2*limits.HistoryEventsPerRound - 4

// newestRound is a poll of a follower whose last read ended in the
// health checks' loop (at): when page, the newest events without data
// (newest first, not reaching back to at.after), ends in the loop's
// plain events (a check, the Healthy? choice, the wait; no failure), it
// reads the newest report among them with data (withReports) and
// returns the page so, ok, if that report's count of checks proves every
// event between at's wait and the page to be plain rounds of the loop:
// each check adds one to the count and records at least
// limits.HistoryEventsPerRound events (the wait left, the task entered,
// scheduled, started, succeeded and left, the choice entered and left,
// the wait entered), exactly that many only when nothing else happened
// (a retry, a canary's step). Those rounds show nothing the newest
// report does not (historySince shows a loop's newest report only), so
// they are not read. ok is false when the page proves nothing: every
// event must be read.
func newestRound(ctx context.Context, api stepFunctions, arn string, at mark, page []sfntypes.HistoryEvent) ([]sfntypes.HistoryEvent, bool, error) {
	report, start, ok := roundOf(page)
	if !ok {
		return nil, false, nil
	}
	withData, err := withReports(ctx, api, arn, page)
	if err != nil {
		return nil, false, err
	}
	for _, ev := range withData {
		if ev.Id != report {
			continue
		}
		rounds := int64(checksIn(ev) - at.checks)
		return withData, rounds >= 1 && start-at.wait-1 == (rounds-1)*limits.HistoryEventsPerRound, nil
	}
	return nil, false, nil
}

// roundOf finds, in page (newest first), the newest health check's
// report (its task's exit or the wait after it) and the start of its
// round (the health check's wait left before it); ok only when page
// holds both and, from its newest event back to that start, is all of
// the health checks' loop with no attempt failed. The events before the
// start are the count's to prove (newestRound).
func roundOf(page []sfntypes.HistoryEvent) (report, start int64, ok bool) {
	for _, ev := range page {
		if !inHealthLoop(ev) {
			return 0, 0, false
		}
		kind, task := reportOf(ev)
		switch {
		case report == 0 && kind == reportLoop && task == execution.TaskCheckHealthy:
			report = ev.Id
		case report != 0 && ev.Type == sfntypes.HistoryEventTypeWaitStateExited:
			return report, ev.Id, true
		}
	}
	return 0, 0, false
}

// inHealthLoop reports whether ev is one a plain round of the health
// checks records: a state of the loop entered or left, or the task's
// attempt scheduled, started or succeeded.
func inHealthLoop(ev sfntypes.HistoryEvent) bool {
	switch ev.Type {
	case sfntypes.HistoryEventTypeLambdaFunctionScheduled, sfntypes.HistoryEventTypeLambdaFunctionStarted,
		sfntypes.HistoryEventTypeLambdaFunctionSucceeded,
		sfntypes.HistoryEventTypeTaskScheduled, sfntypes.HistoryEventTypeTaskStarted, sfntypes.HistoryEventTypeTaskSucceeded:
		return true
	case sfntypes.HistoryEventTypeTaskStateEntered, sfntypes.HistoryEventTypeChoiceStateEntered, sfntypes.HistoryEventTypeWaitStateEntered:
		return healthLoopStates[enteredName(ev)]
	case sfntypes.HistoryEventTypeTaskStateExited, sfntypes.HistoryEventTypeChoiceStateExited, sfntypes.HistoryEventTypeWaitStateExited:
		return healthLoopStates[exitedName(ev)]
	}
	return false
}

// healthLoopStates are the states of a plain round of the health checks.
var healthLoopStates = map[string]bool{
	execution.TaskCheckHealthy: true, shape.StateHealthy: true, shape.StateWaitForHealthy: true,
}

// checksIn is the count of health checks in the state ev entered or
// left with (execution.Health's Checks), 0 when it carries none (read
// without data).
func checksIn(ev sfntypes.HistoryEvent) int {
	text := ""
	switch {
	case ev.StateEnteredEventDetails != nil:
		text = aws.ToString(ev.StateEnteredEventDetails.Input)
	case ev.StateExitedEventDetails != nil:
		text = aws.ToString(ev.StateExitedEventDetails.Output)
	}
	var st struct {
		Health struct {
			Checks int `json:"checks"`
		} `json:"health"`
	}
	if text == "" || json.Unmarshal([]byte(text), &st) != nil {
		return 0
	}
	return st.Health.Checks
}

// noteRound keeps the reader's mark of the health checks' loop (mark)
// as it reads ev: the newest wait for a health check read with its
// report, forgotten once another task is entered.
func (r *historyReader) noteRound(ev sfntypes.HistoryEvent) {
	switch ev.Type {
	case sfntypes.HistoryEventTypeTaskStateEntered:
		if enteredName(ev) != execution.TaskCheckHealthy {
			r.roundWait, r.roundChecks = 0, 0
		}
	case sfntypes.HistoryEventTypeWaitStateEntered:
		if c := checksIn(ev); c > 0 && enteredName(ev) == shape.StateWaitForHealthy {
			r.roundWait, r.roundChecks = ev.Id, c
		}
	}
}

// mark is where the reader stands.
func (r *historyReader) mark() mark {
	return mark{after: r.lastID, wait: r.roundWait, checks: r.roundChecks}
}
