package main

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/statemachine/shape"
)

// loopHistory writes the history of a deploy's health checks as Step
// Functions records it (API Reference, GetExecutionHistory; HistoryEvent:
// each state entered and exited, each Lambda attempt scheduled, started
// and succeeded or failed), two seconds a round.
type loopHistory struct {
	events []sfntypes.HistoryEvent
	at     time.Time
	checks int
}

func (h *loopHistory) add(typ sfntypes.HistoryEventType, name, data string) {
	ev := sfntypes.HistoryEvent{Id: int64(len(h.events) + 1), Type: typ, Timestamp: aws.Time(h.at)}
	ev.PreviousEventId = ev.Id - 1
	switch typ {
	case sfntypes.HistoryEventTypeTaskStateEntered, sfntypes.HistoryEventTypeChoiceStateEntered, sfntypes.HistoryEventTypeWaitStateEntered:
		ev.StateEnteredEventDetails = &sfntypes.StateEnteredEventDetails{Name: aws.String(name), Input: aws.String(data)}
	case sfntypes.HistoryEventTypeTaskStateExited, sfntypes.HistoryEventTypeChoiceStateExited, sfntypes.HistoryEventTypeWaitStateExited:
		ev.StateExitedEventDetails = &sfntypes.StateExitedEventDetails{Name: aws.String(name), Output: aws.String(data)}
	case sfntypes.HistoryEventTypeLambdaFunctionFailed:
		ev.LambdaFunctionFailedEventDetails = &sfntypes.LambdaFunctionFailedEventDetails{Error: aws.String("ThrottlingError"), Cause: aws.String(`{"errorMessage":"rate exceeded"}`)}
	case sfntypes.HistoryEventTypeExecutionStarted:
		ev.ExecutionStartedEventDetails = &sfntypes.ExecutionStartedEventDetails{Input: aws.String("{}")}
	}
	h.events = append(h.events, ev)
}

// state is the state document after the health check made so far, web
// healthy of its target of 2 (and at step of 3 when step > 0).
func (h *loopHistory) state(healthy, step int) string {
	s := execution.ServiceHealth{Launched: 2, Healthy: healthy, Target: 2}
	if step > 0 {
		s.Step, s.Steps = step, 3
	}
	raw, err := json.Marshal(execution.State{ReleaseID: "r1", Services: []string{"web"},
		Health: &execution.Health{WaitSeconds: 2, Checks: h.checks, Services: map[string]execution.ServiceHealth{"web": s}}})
	if err != nil {
		panic(err)
	}
	return string(raw)
}

// task records a task's attempts: failed ones first, then one that
// succeeds, leaving the state out.
func (h *loopHistory) task(name, in, out string, failed int) {
	h.add(sfntypes.HistoryEventTypeTaskStateEntered, name, in)
	for range failed {
		h.add(sfntypes.HistoryEventTypeLambdaFunctionScheduled, "", "")
		h.add(sfntypes.HistoryEventTypeLambdaFunctionStarted, "", "")
		h.add(sfntypes.HistoryEventTypeLambdaFunctionFailed, "", "")
	}
	h.add(sfntypes.HistoryEventTypeLambdaFunctionScheduled, "", "")
	h.add(sfntypes.HistoryEventTypeLambdaFunctionStarted, "", "")
	h.add(sfntypes.HistoryEventTypeLambdaFunctionSucceeded, "", "")
	h.add(sfntypes.HistoryEventTypeTaskStateExited, name, out)
}

// round records a round of the loop: the wait left, a health check (its
// failed attempts first), the Healthy? choice, NextStep when step > 0,
// and the wait entered.
func (h *loopHistory) round(healthy, failed, step int) {
	in := h.state(healthy, 0)
	h.at = h.at.Add(2 * time.Second)
	h.add(sfntypes.HistoryEventTypeWaitStateExited, shape.StateWaitForHealthy, in)
	h.checks++
	out := h.state(healthy, 0)
	h.task(execution.TaskCheckHealthy, in, out, failed)
	h.add(sfntypes.HistoryEventTypeChoiceStateEntered, shape.StateHealthy, out)
	h.add(sfntypes.HistoryEventTypeChoiceStateExited, shape.StateHealthy, out)
	if step > 0 {
		stepped := h.state(healthy, step)
		h.task(execution.TaskNextStep, out, stepped, 0)
		out = stepped
	}
	h.add(sfntypes.HistoryEventTypeWaitStateEntered, shape.StateWaitForHealthy, out)
}

// newLoopHistory is a deploy up to its first wait for a health check.
func newLoopHistory() *loopHistory {
	h := &loopHistory{at: time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC)}
	h.add(sfntypes.HistoryEventTypeExecutionStarted, "", "")
	st := h.state(0, 0)
	h.task(execution.TaskDeploy, st, st, 0)
	h.add(sfntypes.HistoryEventTypeChoiceStateEntered, shape.StateHealthy, st)
	h.add(sfntypes.HistoryEventTypeChoiceStateExited, shape.StateHealthy, st)
	h.add(sfntypes.HistoryEventTypeWaitStateEntered, shape.StateWaitForHealthy, st)
	return h
}

// pagesRead counts the events each GetExecutionHistory call without
// execution data answered.
type pagesRead struct {
	*timedHistory
	headers []int
}

func (p *pagesRead) GetExecutionHistory(ctx context.Context, in *sfn.GetExecutionHistoryInput, opts ...func(*sfn.Options)) (*sfn.GetExecutionHistoryOutput, error) {
	out, err := p.timedHistory.GetExecutionHistory(ctx, in, opts...)
	if err == nil && !aws.ToBool(in.IncludeExecutionData) {
		p.headers = append(p.headers, len(out.Events))
	}
	return out, err
}

// A follower polling a deploy whose health checks come every 2 s reads,
// after plain rounds, the newest round only (a page of roundPageSize
// events and the newest report), and shows what a reader of every event
// shows: the newest health, and every failed attempt and canary step,
// which make a round other than plain and so are never skipped.
func TestFollowReadsTheNewestRound(t *testing.T) {
	h := newLoopHistory()
	var polls []time.Time
	poll := func() { polls = append(polls, h.at) }
	h.round(0, 0, 0)
	poll()
	for i := range 6 { // plain rounds, web's health changing
		h.round(min(i/2, 2), 0, 0)
	}
	poll()
	for range 3 {
		h.round(2, 0, 0)
	}
	h.round(2, 1, 0) // an attempt failed and was retried
	h.round(2, 0, 0)
	poll()
	h.round(2, 0, 0)
	h.round(2, 0, 2) // a canary's step
	for range 3 {
		h.round(2, 0, 0)
	}
	poll()
	for range 5 {
		h.round(1, 0, 0)
	}
	poll()

	api := &pagesRead{timedHistory: &timedHistory{events: h.events}}
	var r historyReader
	var got []progress
	var headers [][]int
	for _, at := range polls {
		api.now, api.headers = at, nil
		events, err := historySince(context.Background(), api, "arn", r.mark(), newEventsPageSize)
		require.NoError(t, err)
		got = append(got, r.read(events)...)
		headers = append(headers, api.headers)
	}

	want := renderHistory(h.events)
	assert.Equal(t, withoutHealth(want), withoutHealth(got), "every state, failed attempt and step shown")
	assert.Equal(t, lastHealth(want).Services, lastHealth(got).Services, "the newest health shown")
	assert.Equal(t, []int{roundPageSize}, headers[1], "after plain rounds, a page of the newest round")
	assert.Equal(t, []int{roundPageSize}, headers[4], "after plain rounds, a page of the newest round")
	for _, i := range []int{2, 3} {
		n := 0
		for _, c := range headers[i] {
			n += c
		}
		assert.Greater(t, n, 4*limits.HistoryEventsPerRound, "poll %d: a failed attempt or a step among the rounds: every event read", i)
	}
}

func withoutHealth(us []progress) []progress {
	var out []progress
	for _, u := range us {
		if u.Event != updateHealth {
			out = append(out, u)
		}
	}
	return out
}

func lastHealth(us []progress) progress {
	for i := len(us) - 1; i >= 0; i-- {
		if us[i].Event == updateHealth {
			return us[i]
		}
	}
	return progress{}
}

// roundOf finds a health check's report and the start of its round only
// in a page all of the loop's plain events.
func TestRoundOf(t *testing.T) {
	newest := func(build func(h *loopHistory), size int) []sfntypes.HistoryEvent {
		h := newLoopHistory()
		build(h)
		page := h.events[max(0, len(h.events)-size):]
		out := make([]sfntypes.HistoryEvent, len(page))
		for i, ev := range page {
			out[len(page)-1-i] = withoutExecutionData(ev)
		}
		return out
	}
	tests := []struct {
		name          string
		build         func(h *loopHistory)
		size          int
		report, start int64
		ok            bool
	}{
		{name: "plain rounds", build: func(h *loopHistory) { h.round(0, 0, 0); h.round(1, 0, 0); h.round(1, 0, 0) }, report: 36, start: 28, ok: true},
		{name: "a round under way", build: func(h *loopHistory) {
			h.round(0, 0, 0)
			h.round(1, 0, 0)
			h.add(sfntypes.HistoryEventTypeWaitStateExited, shape.StateWaitForHealthy, "")
			h.add(sfntypes.HistoryEventTypeTaskStateEntered, execution.TaskCheckHealthy, "")
			h.add(sfntypes.HistoryEventTypeLambdaFunctionScheduled, "", "")
			h.add(sfntypes.HistoryEventTypeLambdaFunctionStarted, "", "")
		}, report: 27, start: 19, ok: true},
		{name: "a failed attempt", build: func(h *loopHistory) { h.round(0, 0, 0); h.round(1, 1, 0) }},
		{name: "a canary step", build: func(h *loopHistory) { h.round(0, 0, 0); h.round(1, 0, 2) }},
		{name: "no round's start", build: func(h *loopHistory) { h.round(0, 0, 0); h.round(1, 0, 0) }, size: limits.HistoryEventsPerRound - 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.size == 0 {
				tt.size = roundPageSize
			}
			report, start, ok := roundOf(newest(tt.build, tt.size))
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.report, report)
			assert.Equal(t, tt.start, start)
		})
	}
}
