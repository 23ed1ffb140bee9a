package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/health/analysis"
	"github.com/ferryhq/ferry/internal/local/asl"
)

// historyBuilder writes execution histories the way Step Functions records
// a run of ferry's definition (a Lambda function ARN as Resource).
type historyBuilder struct {
	t      time.Time
	events []sfntypes.HistoryEvent
}

var historyStart = time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC)

func newHistory() *historyBuilder { return &historyBuilder{t: historyStart} }

func (h *historyBuilder) add(after time.Duration, ev sfntypes.HistoryEvent) *historyBuilder {
	h.t = h.t.Add(after)
	ts := h.t
	ev.Id = int64(len(h.events) + 1)
	ev.PreviousEventId = int64(len(h.events))
	ev.Timestamp = &ts
	h.events = append(h.events, ev)
	return h
}

func (h *historyBuilder) started() *historyBuilder {
	return h.add(0, sfntypes.HistoryEvent{Type: sfntypes.HistoryEventTypeExecutionStarted,
		ExecutionStartedEventDetails: &sfntypes.ExecutionStartedEventDetails{Input: aws.String(`{"project_name":"coinbase/deploy-test"}`)}})
}

func (h *historyBuilder) entered(after time.Duration, typ sfntypes.HistoryEventType, name string) *historyBuilder {
	return h.add(after, sfntypes.HistoryEvent{Type: typ, StateEnteredEventDetails: &sfntypes.StateEnteredEventDetails{Name: aws.String(name), Input: aws.String("{}")}})
}

// task runs a task state that succeeds with output.
func (h *historyBuilder) task(after time.Duration, name, output string) *historyBuilder {
	h.entered(after, sfntypes.HistoryEventTypeTaskStateEntered, name)
	h.add(0, sfntypes.HistoryEvent{Type: sfntypes.HistoryEventTypeLambdaFunctionScheduled})
	h.add(0, sfntypes.HistoryEvent{Type: sfntypes.HistoryEventTypeLambdaFunctionStarted})
	h.add(time.Second, sfntypes.HistoryEvent{Type: sfntypes.HistoryEventTypeLambdaFunctionSucceeded,
		LambdaFunctionSucceededEventDetails: &sfntypes.LambdaFunctionSucceededEventDetails{Output: aws.String(output)}})
	return h.add(0, sfntypes.HistoryEvent{Type: sfntypes.HistoryEventTypeTaskStateExited,
		StateExitedEventDetails: &sfntypes.StateExitedEventDetails{Name: aws.String(name), Output: aws.String(output)}})
}

// functionCause is the cause AWS records for a Lambda function error: the
// function's error payload as JSON ("Handling error conditions using a
// Step Functions state machine", AWS Step Functions Developer Guide). The
// histories carry it, so the goldens show that ferry prints the message.
func functionCause(errName, msg string) string {
	data, _ := json.Marshal(map[string]string{"errorMessage": msg, "errorType": errName})
	return string(data)
}

// failedTask runs a task state whose Lambda fails with errName and message
// msg; a Catch then exits the state with its input (here carrying a stale
// health report) and the error.
func (h *historyBuilder) failedTask(after time.Duration, name, errName, msg string) *historyBuilder {
	cause := functionCause(errName, msg)
	h.entered(after, sfntypes.HistoryEventTypeTaskStateEntered, name)
	h.add(0, sfntypes.HistoryEvent{Type: sfntypes.HistoryEventTypeLambdaFunctionScheduled})
	h.add(time.Second, sfntypes.HistoryEvent{Type: sfntypes.HistoryEventTypeLambdaFunctionFailed,
		LambdaFunctionFailedEventDetails: &sfntypes.LambdaFunctionFailedEventDetails{Error: aws.String(errName), Cause: aws.String(cause)}})
	caught, _ := json.Marshal(execution.State{
		Health: &execution.Health{Services: map[string]execution.ServiceHealth{"web": counts(0, 0, 0, 1)}},
		Error:  &execution.Error{Error: errName, Cause: cause},
	})
	return h.add(0, sfntypes.HistoryEvent{Type: sfntypes.HistoryEventTypeTaskStateExited,
		StateExitedEventDetails: &sfntypes.StateExitedEventDetails{Name: aws.String(name), Output: aws.String(string(caught))}})
}

// health runs one CheckHealthy round, then the Choice and (unless healthy)
// the Wait state.
func (h *historyBuilder) health(after time.Duration, healthy bool, services map[string]execution.ServiceHealth) *historyBuilder {
	return h.analyzed(after, healthy, services, nil)
}

// analyzed is health with a canary analysis in the report.
func (h *historyBuilder) analyzed(after time.Duration, healthy bool, services map[string]execution.ServiceHealth, a *execution.Analysis) *historyBuilder {
	out, _ := json.Marshal(execution.State{ProjectName: "coinbase/deploy-test", Health: &execution.Health{Healthy: healthy, WaitSeconds: 15, Services: services, Analysis: a}})
	h.task(after, execution.TaskCheckHealthy, string(out))
	h.entered(0, sfntypes.HistoryEventTypeChoiceStateEntered, "Healthy?")
	if !healthy {
		h.entered(0, sfntypes.HistoryEventTypeWaitStateEntered, "WaitForHealthy")
	}
	return h
}

func (h *historyBuilder) succeeded(after time.Duration) *historyBuilder {
	h.entered(after, sfntypes.HistoryEventTypeSucceedStateEntered, execution.EndSuccess)
	return h.add(0, sfntypes.HistoryEvent{Type: sfntypes.HistoryEventTypeExecutionSucceeded,
		ExecutionSucceededEventDetails: &sfntypes.ExecutionSucceededEventDetails{Output: aws.String("{}")}})
}

// failed ends the execution in the Fail state end, whose CausePath is the
// caught error's cause: a function error payload.
func (h *historyBuilder) failed(after time.Duration, end, errName, msg string) *historyBuilder {
	cause := functionCause(errName, msg)
	h.entered(after, sfntypes.HistoryEventTypeFailStateEntered, end)
	return h.add(0, sfntypes.HistoryEvent{Type: sfntypes.HistoryEventTypeExecutionFailed,
		ExecutionFailedEventDetails: &sfntypes.ExecutionFailedEventDetails{Error: aws.String(errName), Cause: aws.String(cause)}})
}

// analysisOf is a canary analysis of service web.
func analysisOf(class analysis.Class, score float64, metrics ...analysis.Result) *execution.Analysis {
	a := &execution.Analysis{At: historyStart, Service: "web", Report: analysis.Report{Score: score, Class: class, Metrics: metrics}}
	if class != analysis.ClassNoData {
		a.Scores = map[string]float64{"web": score, "worker": 100}
	}
	return a
}

func counts(launched, healthy, terminating, target int) execution.ServiceHealth {
	return execution.ServiceHealth{Launched: launched, Healthy: healthy, Terminating: terminating, Target: target}
}

// goldenHistories are the histories of the follow golden tests.
func goldenHistories() map[string][]sfntypes.HistoryEvent {
	state := `{"project_name":"coinbase/deploy-test","config_name":"development","release_id":"r1"}`
	begin := func() *historyBuilder {
		return newHistory().started().
			task(0, "Validate", state).task(0, "Lock", state).task(0, "ValidateResources", state).
			task(0, "Publish", state).task(time.Second, "Deploy", state)
	}
	return map[string][]sfntypes.HistoryEvent{
		"success": begin().
			health(time.Second, false, map[string]execution.ServiceHealth{"web": counts(3, 0, 0, 2), "worker": counts(2, 0, 0, 1)}).
			health(15*time.Second, false, map[string]execution.ServiceHealth{"web": counts(3, 0, 0, 2), "worker": counts(2, 0, 0, 1)}).
			health(15*time.Second, false, map[string]execution.ServiceHealth{"web": counts(3, 1, 0, 2), "worker": counts(2, 1, 0, 1)}).
			health(15*time.Second, true, map[string]execution.ServiceHealth{"web": counts(3, 3, 0, 2), "worker": counts(2, 2, 0, 1)}).
			task(0, "CleanUpSuccess", state).succeeded(0).events,
		"halted": begin().
			health(time.Second, false, map[string]execution.ServiceHealth{"web": counts(1, 0, 0, 1)}).
			failedTask(15*time.Second, "CheckHealthy", "HaltError", "halted: by alice: bad build").
			task(0, "CleanUpFailure", state).task(0, "ReleaseLock", state).
			failed(0, execution.EndFailureClean, "HaltError", "halted: by alice: bad build").events,
		"analysis": begin().
			analyzed(time.Second, false, map[string]execution.ServiceHealth{"web": counts(1, 0, 0, 1)}, analysisOf(analysis.ClassNoData, 0,
				analysis.Result{Name: "App/Latency", Direction: analysis.DirectionHigher, PreviousSamples: 10, PreviousMean: 100, PValue: 1, Verdict: analysis.VerdictNoData})).
			analyzed(time.Minute, false, map[string]execution.ServiceHealth{"web": counts(1, 1, 0, 1)}, analysisOf(analysis.ClassNoData, 0,
				analysis.Result{Name: "App/Latency", Direction: analysis.DirectionHigher, PreviousSamples: 10, PreviousMean: 100, PValue: 1, Verdict: analysis.VerdictNoData})).
			analyzed(time.Minute, false, map[string]execution.ServiceHealth{"web": counts(1, 1, 0, 1)}, analysisOf(analysis.ClassPass, 100,
				analysis.Result{Name: "App/Latency", Direction: analysis.DirectionHigher, NewSamples: 1, PreviousSamples: 10, NewMean: 131, PreviousMean: 100, U: 10, PValue: 0.091, Verdict: analysis.VerdictPass})).
			failedTask(2*time.Minute, "CheckHealthy", "HaltError", "service web: canary analysis scored 0, below its marginal_score of 75: App/Latency high (mean 130.4 over 3 samples against 100.1 over 10 samples, p=0.0035)").
			task(0, "CleanUpFailure", state).task(0, "ReleaseLock", state).
			failed(0, execution.EndFailureClean, "HaltError", "service web: canary analysis scored 0, below its marginal_score of 75: App/Latency high (mean 130.4 over 3 samples against 100.1 over 10 samples, p=0.0035)").events,
		"lock-exists": newHistory().started().task(0, "Validate", state).
			failedTask(0, "Lock", "LockExistsError", "lock on coinbase/deploy-test/development is held by release r0 (execution x) since 2025-03-04T09:59:00Z").
			failed(0, execution.EndFailureClean, "LockExistsError", "lock on coinbase/deploy-test/development is held by release r0 (execution x) since 2025-03-04T09:59:00Z").events,
		"retried-then-dirty": begin().
			failedTask(time.Second, "CheckHealthy", "RetryableError", "throttled\nby\tthe\x1b[31m API").
			task(2*time.Second, "CheckHealthy", `not json`).
			failedTask(time.Hour, "CheckHealthy", "TimeoutError", "timed out").
			failedTask(0, "CleanUpFailure", "CleanUpError", "clean up: left behind: asg x").
			failed(0, execution.EndFailureDirty, "CleanUpError", "clean up: left behind: asg x").events,
		"aborted": begin().
			add(time.Minute, sfntypes.HistoryEvent{Type: sfntypes.HistoryEventTypeExecutionAborted,
				ExecutionAbortedEventDetails: &sfntypes.ExecutionAbortedEventDetails{Error: aws.String("Stopped"), Cause: aws.String("someone stopped it")}}).events,
		"invalid": newHistory().started().
			failedTask(0, "Validate", "BadReleaseError", "bad release: release differs from the copy in the deployer bucket").
			failed(0, execution.EndFailureClean, "BadReleaseError", "bad release: release differs from the copy in the deployer bucket").events,
	}
}

// TestFollowGolden renders each history in the plain, live and JSON modes
// and compares with testdata/golden/follow-<name>-<mode>.golden.
func TestFollowGolden(t *testing.T) {
	for name, events := range goldenHistories() {
		for _, mode := range []struct {
			name  string
			mode  displayMode
			color bool
		}{{"plain", modePlain, false}, {"live", modeLive, true}, {"json", modeJSON, false}} {
			t.Run(name+"-"+mode.name, func(t *testing.T) {
				var buf bytes.Buffer
				d := &display{w: &buf, mode: mode.mode, color: mode.color}
				for _, u := range renderHistory(events) {
					d.show(u)
				}
				checkGolden(t, "follow-"+name+"-"+mode.name, buf.String())
			})
		}
	}
}

// checkGolden compares got with testdata/golden/<name>.golden, rewriting
// it under -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden := filepath.Join("testdata", "golden", name+".golden")
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o755))
		require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "missing %s (run go test -update)", golden)
	assert.Equal(t, string(want), got)
}

func TestRenderHistoryOutcome(t *testing.T) {
	cases := []struct {
		name              string
		end, status, errN string
		code              int
	}{
		{"success", execution.EndSuccess, statusSucceeded, "", exitOK},
		{"halted", execution.EndFailureClean, statusFailed, "HaltError", exitFailure},
		{"lock-exists", execution.EndFailureClean, statusFailed, "LockExistsError", exitFailure},
		{"retried-then-dirty", execution.EndFailureDirty, statusFailed, "CleanUpError", exitDirty},
		{"aborted", "", statusAborted, "Stopped", exitDirty},
		{"invalid", execution.EndFailureClean, statusFailed, "BadReleaseError", exitFailure},
	}
	histories := goldenHistories()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			us := renderHistory(histories[tc.name])
			require.NotEmpty(t, us)
			last := us[len(us)-1]
			assert.Equal(t, updateOutcome, last.Event)
			assert.Equal(t, tc.end, last.End)
			assert.Equal(t, tc.status, last.Status)
			assert.Equal(t, tc.errN, last.Error)
			assert.Equal(t, tc.code, exitCodeOf(last))
		})
	}
}

// TestHistoryReaderIncremental: feeding the history in pieces, or whole
// again and again (as polling does), gives the same updates as reading it
// once.
func TestHistoryReaderIncremental(t *testing.T) {
	for name, events := range goldenHistories() {
		t.Run(name, func(t *testing.T) {
			want := renderHistory(events)
			var r historyReader
			var got []progress
			for i := 1; i <= len(events); i++ {
				got = append(got, r.read(events[:i])...)
			}
			assert.Equal(t, want, got)
			assert.True(t, r.finished())

			var rev historyReader
			reversed := make([]sfntypes.HistoryEvent, len(events))
			for i, ev := range events {
				reversed[len(events)-1-i] = ev
			}
			assert.Equal(t, want, rev.read(reversed), "events out of order are read in id order")
		})
	}
}

func TestExecutionARN(t *testing.T) {
	assert.Equal(t, "arn:aws:states:us-east-1:111111111111:execution:ferry-deployer:x",
		asl.ExecutionARN("arn:aws:states:us-east-1:111111111111:stateMachine:ferry-deployer", "x"))
}

func TestFormatElapsed(t *testing.T) {
	assert.Equal(t, "0:00", formatElapsed(-time.Second))
	assert.Equal(t, "0:59", formatElapsed(59*time.Second+900*time.Millisecond))
	assert.Equal(t, "12:05", formatElapsed(12*time.Minute+5*time.Second))
	assert.Equal(t, "1:02:03", formatElapsed(time.Hour+2*time.Minute+3*time.Second))
}

// pagedHistory serves a fixed history through GetExecutionHistory in
// pages of two, growing by one event per poll (a first page), oldest or
// newest first as asked, to test the poll loop; it counts the calls and
// the events it returned.
// pagedHistory shows one more event of events at each poll (a first page
// read without data), two events a page; it counts the events returned
// without data, and the reads with data.
type pagedHistory struct {
	stepFunctions
	events    []sfntypes.HistoryEvent
	shown     int
	calls     int
	returned  int
	dataReads int
}

func (p *pagedHistory) GetExecutionHistory(_ context.Context, in *sfn.GetExecutionHistoryInput, _ ...func(*sfn.Options)) (*sfn.GetExecutionHistoryOutput, error) {
	p.calls++
	data := aws.ToBool(in.IncludeExecutionData)
	if in.NextToken == nil && p.shown < len(p.events) && !data {
		p.shown++
	}
	if in.NextToken == nil && data {
		p.dataReads++
	}
	visible := slices.Clone(p.events[:p.shown])
	if in.ReverseOrder {
		slices.Reverse(visible)
	}
	from := 0
	if in.NextToken != nil {
		from, _ = strconv.Atoi(aws.ToString(in.NextToken))
	}
	to := min(from+2, len(visible))
	out := &sfn.GetExecutionHistoryOutput{Events: visible[from:to]}
	if to < len(visible) {
		out.NextToken = aws.String(strconv.Itoa(to))
	}
	if !data {
		p.returned += to - from
	}
	return out, nil
}

func TestFollowExecutionPolls(t *testing.T) {
	events := goldenHistories()["halted"]
	api := &pagedHistory{events: events}
	var buf bytes.Buffer
	sleeps := 0
	u, err := followExecution(context.Background(), api, "arn", &display{w: &buf, mode: modePlain},
		followOptions{Interval: time.Second, Waiting: waitingFollowInterval, Sleep: func(ctx context.Context, d time.Duration) error {
			// The interval, or longer while the execution waits between
			// checks.
			wait := events[sleeps].Type == sfntypes.HistoryEventTypeWaitStateEntered
			assert.Equal(t, map[bool]time.Duration{false: time.Second, true: waitingFollowInterval}[wait], d, "after event %d", sleeps)
			sleeps++
			return nil
		}})
	require.NoError(t, err)
	assert.Equal(t, execution.EndFailureClean, u.End)
	assert.Equal(t, len(events)-1, sleeps, "one poll per new event, no sleep after the end")
	assert.LessOrEqual(t, api.returned, 2*len(events), "each poll reads the new events and one it had, not the whole history again")
	need := 0
	for _, ev := range events {
		if kind, _ := reportOf(ev); kind != reportNone {
			need++
		}
	}
	assert.Positive(t, need)
	assert.Equal(t, need, api.dataReads, "data is read again only for the events that carry a report")

	var want bytes.Buffer
	d := &display{w: &want, mode: modePlain}
	for _, u := range renderHistory(events) {
		d.show(u)
	}
	assert.Equal(t, want.String(), buf.String())
}

// throttledHistory throttles its first calls, as Step Functions does when
// an account's GetExecutionHistory budget is spent.
type throttledHistory struct {
	*pagedHistory
	throttle int
}

func (h *throttledHistory) GetExecutionHistory(ctx context.Context, in *sfn.GetExecutionHistoryInput, opts ...func(*sfn.Options)) (*sfn.GetExecutionHistoryOutput, error) {
	if h.throttle > 0 {
		h.throttle--
		return nil, &smithy.GenericAPIError{Code: "ThrottlingException", Message: "Rate exceeded"}
	}
	return h.pagedHistory.GetExecutionHistory(ctx, in, opts...)
}

// TestFollowExecutionBacksOffWhenThrottled: a throttled follower polls
// half as often each time, up to 30 s, then at its interval again once a
// read succeeds, and follows to the end: throttling never ends it.
func TestFollowExecutionBacksOffWhenThrottled(t *testing.T) {
	events := goldenHistories()["halted"]
	api := &throttledHistory{pagedHistory: &pagedHistory{events: events}, throttle: 7}
	var sleeps []time.Duration
	u, err := followExecution(context.Background(), api, "arn", &display{w: &bytes.Buffer{}, mode: modePlain},
		followOptions{Interval: time.Second, Waiting: waitingFollowInterval, Sleep: func(ctx context.Context, d time.Duration) error {
			sleeps = append(sleeps, d)
			return nil
		}})
	require.NoError(t, err)
	assert.Equal(t, execution.EndFailureClean, u.End)
	s := func(n int) time.Duration { return time.Duration(n) * time.Second }
	assert.Equal(t, []time.Duration{s(2), s(4), s(8), s(16), s(30), s(30), s(30), s(1)}, sleeps[:8])
}

func TestFollowExecutionStopsOnContext(t *testing.T) {
	api := &pagedHistory{events: goldenHistories()["success"][:5]}
	ctx, cancel := context.WithCancel(context.Background())
	_, err := followExecution(ctx, api, "arn", &display{w: &bytes.Buffer{}, mode: modePlain},
		followOptions{Interval: time.Second, Waiting: waitingFollowInterval, Sleep: func(ctx context.Context, d time.Duration) error {
			cancel()
			return ctx.Err()
		}})
	assert.True(t, errors.Is(err, context.Canceled))
}

// FuzzFollowHistory: any sequence of history events with any names and
// outputs is read and displayed in every mode without panicking, and the
// reader's updates keep their invariants.
func FuzzFollowHistory(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6}, "CheckHealthy", `{"health":{"healthy":false,"services":{"web":{"launched":3,"healthy":1,"terminating":0,"target":2}}}}`, "HaltError", "x")
	f.Add([]byte{9, 9, 9, 200, 7}, "", `{"health":null}`, "", "")
	f.Add([]byte{3, 3, 3, 3}, "Healthy?", `{"health":{"services":{"":{"launched":-1}}}}`, "States.ALL", "\x1b[2J")
	f.Add([]byte{8, 1, 8, 1}, "FailureDirty", `[]`, "CleanUpError", strings.Repeat("é", 500))
	types := []sfntypes.HistoryEventType{
		sfntypes.HistoryEventTypeExecutionStarted, sfntypes.HistoryEventTypeTaskStateEntered,
		sfntypes.HistoryEventTypeTaskStateExited, sfntypes.HistoryEventTypeLambdaFunctionFailed,
		sfntypes.HistoryEventTypeChoiceStateEntered, sfntypes.HistoryEventTypeWaitStateEntered,
		sfntypes.HistoryEventTypePassStateEntered, sfntypes.HistoryEventTypeFailStateEntered,
		sfntypes.HistoryEventTypeExecutionFailed, sfntypes.HistoryEventTypeExecutionSucceeded,
		sfntypes.HistoryEventTypeSucceedStateEntered, sfntypes.HistoryEventTypeExecutionAborted,
		sfntypes.HistoryEventTypeExecutionTimedOut, sfntypes.HistoryEventTypeTaskFailed,
		sfntypes.HistoryEventTypeTaskTimedOut, sfntypes.HistoryEventTypeLambdaFunctionTimedOut,
		sfntypes.HistoryEventTypeLambdaFunctionStartFailed, sfntypes.HistoryEventTypeLambdaFunctionScheduleFailed,
		sfntypes.HistoryEventTypeMapStateEntered, "Bogus",
	}
	f.Fuzz(func(t *testing.T, plan []byte, name, output, errName, cause string) {
		var events []sfntypes.HistoryEvent
		for i, b := range plan {
			ev := sfntypes.HistoryEvent{Type: types[int(b)%len(types)], Id: int64(b>>3) - 3 + int64(i)}
			if b%5 != 0 {
				ts := historyStart.Add(time.Duration(int8(b)) * time.Second)
				ev.Timestamp = &ts
			}
			if b%7 != 0 {
				ev.StateEnteredEventDetails = &sfntypes.StateEnteredEventDetails{Name: aws.String(name)}
				ev.StateExitedEventDetails = &sfntypes.StateExitedEventDetails{Name: aws.String(name), Output: aws.String(output)}
				ev.LambdaFunctionFailedEventDetails = &sfntypes.LambdaFunctionFailedEventDetails{Error: aws.String(errName), Cause: aws.String(cause)}
				ev.TaskFailedEventDetails = &sfntypes.TaskFailedEventDetails{Error: aws.String(errName), Cause: aws.String(cause)}
				ev.ExecutionFailedEventDetails = &sfntypes.ExecutionFailedEventDetails{Error: aws.String(errName), Cause: aws.String(cause)}
				ev.ExecutionAbortedEventDetails = &sfntypes.ExecutionAbortedEventDetails{Error: aws.String(errName)}
			}
			events = append(events, ev)
		}
		us := renderHistory(events)
		for i, u := range us {
			if u.Event == updateOutcome {
				assert.Equal(t, len(us)-1, i, "the outcome is the last update")
			}
			assert.GreaterOrEqual(t, u.Elapsed, time.Duration(0))
		}
		for _, mode := range []displayMode{modePlain, modeLive, modeJSON} {
			var buf bytes.Buffer
			d := &display{w: &buf, mode: mode, color: mode == modeLive}
			for _, u := range us {
				d.show(u)
			}
			if mode != modeLive {
				assert.NotContains(t, buf.String(), "\x1b", "no escape sequence from the history reaches the output")
			}
		}
	})
}

// TestEveryProblemShown: a bad release's cause keeps every problem, one a
// line, however long the list: none is cut (issue #17, item 3), and each
// line still shows control characters escaped, never raw.
func TestEveryProblemShown(t *testing.T) {
	var problems []string
	for i := range 6 {
		problems = append(problems, fmt.Sprintf("services.web.target_groups[%d]: target group %s does not exist", i, strings.Repeat("x", 80)))
	}
	problems[5] += "\x1b[2J"
	cause := failure.BadRelease(problems...).Error()
	got := describeError(failure.NameBadRelease, cause)
	lines := strings.Split(got, "\n")
	require.Len(t, lines, 7, got)
	assert.Equal(t, "BadReleaseError: bad release: 6 problems:", lines[0])
	for i, p := range problems {
		assert.Equal(t, "    "+strings.ReplaceAll(p, "\x1b", `\x1b`), lines[i+1])
	}

	var out bytes.Buffer
	d := &display{w: &out, mode: modePlain}
	d.show(progress{Event: updateOutcome, Status: statusFailed, End: execution.EndFailureClean, Error: failure.NameBadRelease, Cause: cause})
	for _, p := range problems[:5] {
		assert.Contains(t, out.String(), "\n            "+p+"\n")
	}
}

// TestLiveLinesFitTheTerminal: on a terminal of 40 or 80 columns, a live
// health line (a 32-character service name here) is cut to fit, so each
// takes one row and the redraw, one row up a line, clears exactly the
// block it wrote: no fragments (issue #17, item 6). Plain output (logs)
// keeps lines whole.
func TestLiveLinesFitTheTerminal(t *testing.T) {
	long := strings.Repeat("s", 32)
	u := progress{Event: updateHealth, Elapsed: 65 * time.Second, Services: []serviceCounts{
		{Name: long, ServiceHealth: counts(12, 3, 1, 10)},
		{Name: "web", ServiceHealth: counts(3, 3, 0, 2)},
	}}
	for _, width := range []int{40, 80} {
		t.Run(strconv.Itoa(width), func(t *testing.T) {
			var buf bytes.Buffer
			d := &display{w: &buf, mode: modeLive, width: width}
			d.show(u)
			d.show(u)
			_, redraw, ok := strings.Cut(buf.String(), "\x1b[2A\x1b[J")
			require.True(t, ok, "the second block moves up exactly its 2 rows: %q", buf.String())
			lines := strings.Split(strings.TrimSuffix(redraw, "\n"), "\n")
			require.Len(t, lines, 2)
			for _, l := range lines {
				assert.Less(t, utf8.RuneCountInString(l), width, "%q wraps at %d columns", l, width)
			}
			if width == 40 {
				assert.Equal(t, "  1:05    ssssssssssssss…  3/10 healthy", lines[0], "the name is cut, and says so; the counts stay")
				assert.Equal(t, "  1:05    web              3/2 healthy", lines[1])
			}
		})
	}
	var plain bytes.Buffer
	(&display{w: &plain, mode: modePlain}).show(u)
	assert.Contains(t, plain.String(), long+"  launched 12", "plain output keeps lines whole")
}

// TestTickingClock: on a terminal, while nothing changes, a clock line
// says how long the execution has run, the state it waits in and the time
// left to its timeout; whatever comes next replaces it. Elsewhere nothing
// ticks.
func TestTickingClock(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	var buf bytes.Buffer
	d := &display{w: &buf, mode: modeLive, timeout: 10 * time.Minute}
	d.tick(t0) // the start not seen yet: nothing to count from
	d.show(progress{Event: updateStarted, At: t0})
	d.tick(t0.Add(5 * time.Second))
	d.show(progress{Event: updateState, State: "Deploy", At: t0.Add(6 * time.Second), Elapsed: 6 * time.Second})
	d.tick(t0.Add(7 * time.Second))
	d.tick(t0.Add(8 * time.Second))
	d.message("a message")
	d.tick(t0.Add(11 * time.Minute))
	want := "" +
		"  0:05  waiting; timeout in 9:55" + ansiClearLn +
		"  0:06  Deploy\n" +
		"  0:07  waiting in Deploy; timeout in 9:53" + ansiClearLn +
		"  0:08  waiting in Deploy; timeout in 9:52" + ansiClearLn +
		"a message\n" +
		" 11:00  waiting in Deploy; timeout passed"
	assert.Equal(t, want, buf.String())

	for _, mode := range []displayMode{modePlain, modeJSON} {
		var out bytes.Buffer
		d := &display{w: &out, mode: mode, timeout: time.Minute}
		d.show(progress{Event: updateStarted, At: t0})
		out.Reset()
		assert.False(t, d.ticks())
		d.tick(t0.Add(time.Second))
		assert.Empty(t, out.String(), "mode %d", mode)
	}
}

// TestFollowExecutionTicks: following on a terminal reads the deployer's
// clock once per poll that shows nothing new, and ends with the outcome
// on a line of its own, the clock line cleared.
func TestFollowExecutionTicks(t *testing.T) {
	events := goldenHistories()["success"]
	api := &pagedHistory{events: events}
	var buf bytes.Buffer
	reads := 0
	start := aws.ToTime(events[0].Timestamp)
	_, err := followExecution(t.Context(), api, "arn", &display{w: &buf, mode: modeLive, timeout: time.Hour},
		followOptions{
			Interval: time.Second,
			Sleep:    func(context.Context, time.Duration) error { return nil },
			Now: func(context.Context) (time.Time, error) {
				reads++
				return start.Add(time.Duration(reads) * time.Second), nil
			},
		})
	require.NoError(t, err)
	assert.Equal(t, len(events)-1, reads, "one clock read per poll, none after the end")
	assert.Equal(t, reads, strings.Count(buf.String(), ansiClearLn), "every clock line is replaced")
	assert.True(t, strings.HasSuffix(buf.String(), "\n"), "the outcome ends the output on a line of its own")
}

// TestPlainShowsOnlyServicesThatChanged: in a log, a health report shows
// the services whose line changed (counts, or becoming stable), not the
// whole block again; a terminal redraws the whole block.
func TestPlainShowsOnlyServicesThatChanged(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	since := t0.Add(10 * time.Second)
	svc := func(name string, healthy int, since *time.Time) serviceCounts {
		return serviceCounts{Name: name, ServiceHealth: execution.ServiceHealth{Launched: 2, Healthy: healthy, Target: 2, StableSeconds: 30, HealthySince: since}}
	}
	reports := []progress{
		{Event: updateHealth, At: t0, Services: []serviceCounts{svc("api", 0, nil), svc("web", 0, nil)}},
		{Event: updateHealth, At: t0.Add(10 * time.Second), Elapsed: 10 * time.Second, Services: []serviceCounts{svc("api", 0, nil), svc("web", 2, &since)}},
		{Event: updateHealth, At: t0.Add(40 * time.Second), Elapsed: 40 * time.Second, Services: []serviceCounts{svc("api", 1, nil), svc("web", 2, &since)}},
		{Event: updateHealth, At: t0.Add(45 * time.Second), Elapsed: 45 * time.Second, Services: []serviceCounts{svc("api", 1, nil), svc("web", 2, &since)}},
	}
	var plain, live bytes.Buffer
	p, l := &display{w: &plain, mode: modePlain}, &display{w: &live, mode: modeLive}
	for _, u := range reports {
		p.show(u)
		l.show(u)
	}
	assert.Equal(t, ""+
		"  0:00    api  launched 2  healthy 0  terminating 0  target 2\n"+
		"  0:00    web  launched 2  healthy 0  terminating 0  target 2\n"+
		"  0:10    web  launched 2  healthy 2  terminating 0  target 2  stable in 30s\n"+
		"  0:40    api  launched 2  healthy 1  terminating 0  target 2\n"+
		"  0:40    web  launched 2  healthy 2  terminating 0  target 2  stable\n",
		plain.String())
	assert.Equal(t, 4*2, strings.Count(live.String(), "launched"), "a terminal redraws every service")
}

// TestOneLine: text from AWS or S3 (a cause, a halt marker's author) is
// shown whole on one line, with what a terminal would not show as itself
// escaped rather than dropped or obeyed.
func TestOneLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Jane Doe", "Jane Doe"},
		{"José  Álvarez\n", "José Álvarez"},
		{"山田 太郎", "山田 太郎"},
		{"red\x1b[31m", `red\x1b[31m`},
		{"evil\u202etxt.exe", `evil\u202etxt.exe`},
		{"zero\u200bwidth", `zero\u200bwidth`},
		{"bad\xffbyte", `bad\ufffdbyte`},
	} {
		assert.Equal(t, tc.want, oneLine(tc.in), "%q", tc.in)
	}
	assert.Equal(t, strings.Repeat("é", 400)+"...", oneLine(strings.Repeat("é", 401)), "cut by characters")
}

// TestRetireReport: CleanUpSuccess's reports on retiring the previous
// groups are shown when they change, one line per group and phase, and
// not once the retirement is done.
func TestRetireReport(t *testing.T) {
	at := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	exited := func(id int64, output string) sfntypes.HistoryEvent {
		return sfntypes.HistoryEvent{Id: id, Timestamp: aws.Time(at.Add(time.Duration(id) * time.Second)), Type: sfntypes.HistoryEventTypeTaskStateExited,
			StateExitedEventDetails: &sfntypes.StateExitedEventDetails{Name: aws.String(execution.TaskCleanUpSuccess), Output: aws.String(output)}}
	}
	draining := `{"retire":{"done":false,"wait_seconds":15,"groups":[{"name":"old-web","phase":"draining","instances":2}]}}`
	scaling := `{"retire":{"done":false,"wait_seconds":15,"groups":[{"name":"old-web","phase":"scaling_in","instances":2,"hooks_pending":1}]}}`
	var r historyReader
	got := r.read([]sfntypes.HistoryEvent{exited(1, draining), exited(2, draining), exited(3, scaling), exited(4, `{"retire":{"done":true,"wait_seconds":0}}`)})
	require.Len(t, got, 2, "a report that did not change, and the last, show nothing")
	assert.Equal(t, updateRetire, got[0].Event)
	assert.Equal(t, []execution.RetiringGroup{{Name: "old-web", Phase: execution.PhaseDraining, Instances: 2}}, got[0].Retiring)

	var buf bytes.Buffer
	d := &display{w: &buf, mode: modePlain}
	for _, u := range got {
		d.show(u)
	}
	assert.Equal(t, "  0:00  retiring old-web: draining from its load balancers\n"+
		"  0:02  retiring old-web: scaling in: 2 instances, 1 termination hook pending\n", buf.String())
	assert.Equal(t, []string{"retiring g: empty, deleting"}, retireLines([]execution.RetiringGroup{{Name: "g", Phase: execution.PhaseDeleting}}))
}

// taskEventAt is the time of a task event of the reports' tests: event id
// five seconds after 10:00.
func taskEventAt(id int64) *time.Time {
	return aws.Time(time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC).Add(time.Duration(id) * 5 * time.Second))
}

// entered is the history event of task name entered with input.
func entered(id int64, name, input string) sfntypes.HistoryEvent {
	return sfntypes.HistoryEvent{Id: id, Timestamp: taskEventAt(id), Type: sfntypes.HistoryEventTypeTaskStateEntered,
		StateEnteredEventDetails: &sfntypes.StateEnteredEventDetails{Name: aws.String(name), Input: aws.String(input)}}
}

// exited is the history event of task name exited with output.
func exited(id int64, name, output string) sfntypes.HistoryEvent {
	return sfntypes.HistoryEvent{Id: id, Timestamp: taskEventAt(id), Type: sfntypes.HistoryEventTypeTaskStateExited,
		StateExitedEventDetails: &sfntypes.StateExitedEventDetails{Name: aws.String(name), Output: aws.String(output)}}
}

// TestBakeAndRollbackReports: Bake's reports are shown once, then each
// time the minutes left change; a rollback's (CleanUpFailure's restoring
// groups) once per change, before the retirement of the release's own
// groups; and Bake's state line only for a release with a bake.
func TestBakeAndRollbackReports(t *testing.T) {
	bake := func(left int) string {
		return fmt.Sprintf(`{"bake":{"done":false,"wait_seconds":5,"left_seconds":%d,"standby":["old-web"],"detached":true}}`, left)
	}
	restoring := func(healthy int) string {
		return fmt.Sprintf(`{"retire":{"done":false,"wait_seconds":5,"restoring":[{"name":"old-web","healthy":%d,"want":2}]}}`, healthy)
	}
	var r historyReader
	got := r.read([]sfntypes.HistoryEvent{
		entered(1, execution.TaskBake, `{"bake_seconds":600}`),
		exited(2, execution.TaskBake, bake(600)), exited(3, execution.TaskBake, bake(595)), exited(4, execution.TaskBake, bake(540)),
		entered(5, execution.TaskCleanUpFailure, `{}`),
		exited(6, execution.TaskCleanUpFailure, restoring(0)), exited(7, execution.TaskCleanUpFailure, restoring(0)),
		exited(8, execution.TaskCleanUpFailure, restoring(1)),
	})
	var buf bytes.Buffer
	d := &display{w: &buf, mode: modePlain}
	for _, u := range got {
		d.show(u)
	}
	assert.Equal(t, "  0:00  Bake\n"+
		"  0:05  baking: 10m left; standing by, ready to serve again: old-web\n"+
		"  0:15  baking: 9m left; standing by, ready to serve again: old-web\n"+
		"  0:20  CleanUpFailure\n"+
		"  0:25  rolling back: old-web back in its load balancers, 0 of 2 instances healthy\n"+
		"  0:35  rolling back: old-web back in its load balancers, 1 of 2 instances healthy\n", buf.String())

	var none historyReader
	assert.Empty(t, none.read([]sfntypes.HistoryEvent{entered(1, execution.TaskBake, `{"bake_seconds":0}`)}), "no bake, no line")
	assert.Equal(t, "baking: 45s left; no previous group to stand by", bakeLine(&execution.Bake{LeftSeconds: 45}))
}

// TestThrottledReports: a round of ValidateResources or Deploy that AWS
// throttled is shown with its wait; a round Deploy only paced (its Auto
// Scaling calls within the account's bucket) is no throttle and shows
// nothing; a done report shows nothing more.
func TestThrottledReports(t *testing.T) {
	var r historyReader
	got := r.read([]sfntypes.HistoryEvent{
		entered(1, execution.TaskValidateResources, `{}`),
		exited(2, execution.TaskValidateResources, `{"resources":{"done":false,"wait_seconds":18,"throttled":1}}`),
		exited(3, execution.TaskValidateResources, `{"resources":{"done":true,"wait_seconds":0,"throttled":1}}`),
		entered(4, execution.TaskDeploy, `{}`),
		exited(5, execution.TaskDeploy, `{"deploy":{"done":false,"wait_seconds":2,"throttled":1,"paced":true}}`),
		exited(6, execution.TaskDeploy, `{"deploy":{"done":false,"wait_seconds":23,"throttled":2}}`),
		exited(7, execution.TaskDeploy, `{"deploy":{"done":true,"wait_seconds":0,"throttled":2},"health":{"healthy":false,"next_step":false,"wait_seconds":30,"services":{}}}`),
	})
	var buf bytes.Buffer
	d := &display{w: &buf, mode: modePlain}
	for _, u := range got {
		d.show(u)
	}
	assert.Equal(t, "  0:00  ValidateResources\n"+
		"  0:05  ValidateResources: AWS throttled its calls; it goes on in 18s\n"+
		"  0:15  Deploy\n"+
		"  0:25  Deploy: AWS throttled its calls; it goes on in 23s\n", buf.String())
	assert.Equal(t, 30*time.Second, r.loopWait, "after Deploy, the health checks' wait")
}

// TestCanaryReports: a canary's health lines name its step, NextStep
// says the step it took (the last as the whole group), and --json has a
// step event with the services' steps.
func TestCanaryReports(t *testing.T) {
	report := func(healthy, target, step, desired int) string {
		return fmt.Sprintf(`{"health":{"healthy":false,"next_step":false,"wait_seconds":5,"services":{"web":{"launched":%d,"healthy":%d,"terminating":0,"target":%d,"step":%d,"steps":3,"step_desired":%d}}}}`,
			desired, healthy, target, step, desired)
	}
	events := []sfntypes.HistoryEvent{
		exited(1, execution.TaskCheckHealthy, report(1, 1, 1, 1)),
		exited(2, execution.TaskNextStep, report(1, 1, 2, 2)),
		exited(3, execution.TaskCheckHealthy, report(1, 1, 2, 2)),
		exited(4, execution.TaskNextStep, report(2, 2, 3, 3)),
	}
	var r historyReader
	var buf bytes.Buffer
	d := &display{w: &buf, mode: modePlain}
	for _, u := range r.read(events) {
		d.show(u)
	}
	assert.Equal(t, "  0:00    web  launched 1  healthy 1  terminating 0  target 1  canary step 1 of 3\n"+
		"  0:05  canary: web at step 2 of 3, 2 instances (1 healthy needed)\n"+
		"  0:10    web  launched 2  healthy 1  terminating 0  target 1  canary step 2 of 3\n"+
		"  0:15  canary: web at step 3 of 3, the whole group, 3 instances (2 healthy needed)\n", buf.String())

	var j historyReader
	buf.Reset()
	d = &display{w: &buf, mode: modeJSON}
	for _, u := range j.read(events) {
		d.show(u)
	}
	var steps []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var ev map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &ev))
		if ev["event"] == "step" {
			steps = append(steps, ev)
		}
	}
	require.Len(t, steps, 2)
	svc := steps[1]["services"].([]any)[0].(map[string]any)
	assert.Equal(t, map[string]any{"name": "web", "step": 3.0, "steps": 3.0, "step_desired": 3.0, "target": 2.0}, map[string]any{
		"name": svc["name"], "step": svc["step"], "steps": svc["steps"], "step_desired": svc["step_desired"], "target": svc["target"]})
}

// TestWaitTextSaysWhatItWaitsFor: the clock line counts down the release's
// timeout only until the release is healthy (the timeout covers nothing
// else); during a bake it says when the bake ends, during a retirement
// the phases its groups are in and the retirement's time bound.
func TestWaitTextSaysWhatItWaitsFor(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	var buf bytes.Buffer
	d := &display{w: &buf, mode: modeLive, timeout: 5 * time.Minute}
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	d.show(progress{Event: updateStarted, At: t0})
	d.show(progress{Event: updateHealth, State: execution.TaskCheckHealthy, At: at(30), Elapsed: 30 * time.Second})
	assert.Equal(t, "waiting to be healthy; timeout in 4:20", d.waitText(at(40)))
	d.show(progress{Event: updateState, State: execution.TaskBake, At: at(100), Elapsed: 100 * time.Second})
	assert.Equal(t, "baking", d.waitText(at(100)), "no report yet")
	d.show(progress{Event: updateBake, State: execution.TaskBake, At: at(101), Elapsed: 101 * time.Second, Bake: &execution.Bake{LeftSeconds: 600}})
	assert.Equal(t, "baking; bake ends in 9:50", d.waitText(at(111)))
	assert.Equal(t, "baking; bake ending", d.waitText(at(800)))
	d.show(progress{Event: updateState, State: execution.TaskCleanUpSuccess, At: at(702), Elapsed: 702 * time.Second})
	d.show(progress{Event: updateRetire, State: execution.TaskCleanUpSuccess, At: at(703), Elapsed: 703 * time.Second,
		Retiring: []execution.RetiringGroup{{Name: "a", Phase: execution.PhaseDraining}, {Name: "b", Phase: execution.PhaseScalingIn, Instances: 2}}})
	assert.Equal(t, "retiring: draining, scaling in; bound in 1:59:50", d.waitText(at(712)), "entered at 11:42, bound two hours later")
	d.tick(at(712))
	assert.NotContains(t, buf.String(), "timeout passed", "past the timeout, a bake or a retirement is not late")
}

// TestClockTicksEverySecond: on a terminal, between two polls 10 s apart
// (the execution waits between checks), the clock line ticks every
// second, the deployer's clock read once a poll and advanced by each
// second slept.
func TestClockTicksEverySecond(t *testing.T) {
	events := goldenHistories()["success"]
	api := &pagedHistory{events: events}
	var buf bytes.Buffer
	start := aws.ToTime(events[0].Timestamp)
	reads, sleeps := 0, []time.Duration{}
	_, err := followExecution(t.Context(), api, "arn", &display{w: &buf, mode: modeLive, timeout: time.Hour},
		followOptions{
			Interval: 10 * time.Second,
			Sleep:    func(_ context.Context, d time.Duration) error { sleeps = append(sleeps, d); return nil },
			Now: func(context.Context) (time.Time, error) {
				reads++
				return start.Add(time.Duration(reads) * time.Minute), nil
			},
		})
	require.NoError(t, err)
	polls := len(events) - 1
	assert.Equal(t, polls, reads, "one clock read a poll")
	require.Len(t, sleeps, 10*polls, "ten sleeps of a second between two polls")
	for _, s := range sleeps {
		assert.Equal(t, time.Second, s)
	}
	assert.True(t, strings.Contains(buf.String(), "  2:00  waiting in Validate; timeout in 58:00"+ansiClearLn+"  2:01  waiting in Validate; timeout in 57:59"+ansiClearLn),
		"the clock ticks a second at a time between polls")
	assert.Equal(t, 10*polls, strings.Count(buf.String(), ansiClearLn), "every clock line is replaced")
}

// stampedWriter records when (on its clock) each line was written.
type stampedWriter struct {
	now   func() time.Time
	times []time.Time
	buf   bytes.Buffer
}

func (w *stampedWriter) Write(p []byte) (int, error) {
	for range bytes.Count(p, []byte("\n")) {
		w.times = append(w.times, w.now())
	}
	return w.buf.Write(p)
}

// TestLogNeverSilentFor30s: piped into a CI log, a follower waiting an
// hour for a check writes a line at least every 30 s of the client's
// clock, saying it waits and for what; a CI system that ends a job
// silent for ten minutes keeps it. Under --json, each is an object.
func TestLogNeverSilentFor30s(t *testing.T) {
	for _, mode := range []displayMode{modePlain, modeJSON} {
		w := followWaiting(t, mode)
		require.Greater(t, len(w.times), 100, "an hour of waiting: a line every 30 s")
		for i := 1; i < len(w.times); i++ {
			assert.LessOrEqual(t, w.times[i].Sub(w.times[i-1]), keepAlive, "line %d", i)
		}
		assert.NotContains(t, w.buf.String(), ansiClearLn, "a log has no terminal sequences")
		if mode == modeJSON {
			assert.True(t, strings.Contains(w.buf.String(), `{"schema_version":1,"event":"waiting","elapsed_seconds":38,"waiting":"waiting to be healthy; timeout in 1:59:22"}`+"\n"),
				"the object says what it waits for")
			continue
		}
		assert.True(t, strings.Contains(w.buf.String(), "  0:38  waiting to be healthy; timeout in 1:59:22\n"), "the line says what it waits for")
	}
}

// followWaiting follows, in mode, a recorded execution that waits an hour
// for a check, and returns what it wrote, with when.
func followWaiting(t *testing.T, mode displayMode) *stampedWriter {
	events := goldenHistories()["retried-then-dirty"]
	h := &timedHistory{events: events, now: aws.ToTime(events[0].Timestamp)}
	w := &stampedWriter{now: func() time.Time { return h.now }}
	d := &display{w: w, mode: mode, clock: w.now, timeout: 2 * time.Hour}
	_, err := followExecution(t.Context(), h, "arn", d, followOptions{
		Interval: time.Second, Waiting: waitingFollowInterval,
		Sleep: func(_ context.Context, d time.Duration) error { h.now = h.now.Add(d); return nil },
		Now:   func(context.Context) (time.Time, error) { return h.now, nil },
	})
	require.NoError(t, err)
	return w
}

// TestWaitingIntervalFollowsTheLoop: while the execution waits between two
// rounds of a loop, the next poll comes just after the wait ends (its
// report is read a second after it is made, not up to 10 s later), never
// sooner than the waiting interval (the API budget) nor later than
// maxFollowInterval; without the deployer's clock, or at --poll, as before.
func TestWaitingIntervalFollowsTheLoop(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	clock := func(now time.Time) func(context.Context) (time.Time, error) {
		return func(context.Context) (time.Time, error) { return now, nil }
	}
	waiting := historyReader{waiting: true, waitingSince: t0, loopWait: 30 * time.Second}
	for _, tc := range []struct {
		name string
		r    historyReader
		opts followOptions
		want time.Duration
	}{
		{"not waiting", historyReader{loopWait: 30 * time.Second}, followOptions{Waiting: 10 * time.Second, Now: clock(t0)}, 0},
		{"--poll", waiting, followOptions{Now: clock(t0)}, 0},
		{"no clock", waiting, followOptions{Waiting: 10 * time.Second}, 10 * time.Second},
		{"until the wait ends", waiting, followOptions{Waiting: 10 * time.Second, Now: clock(t0.Add(5 * time.Second))}, 26 * time.Second},
		{"no sooner than the budget allows", waiting, followOptions{Waiting: 10 * time.Second, Now: clock(t0.Add(28 * time.Second))}, 10 * time.Second},
		{"a long wait", historyReader{waiting: true, waitingSince: t0, loopWait: 10 * time.Minute}, followOptions{Waiting: 10 * time.Second, Now: clock(t0)}, maxFollowInterval},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, waitingInterval(t.Context(), &tc.r, tc.opts))
		})
	}
}
