package main

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/statemachine/shape"
)

// The kinds of update a follower shows.
const (
	// updateStarted: the execution started.
	updateStarted = "started"
	// updateState: the execution entered a state (Choice and Wait states,
	// and re-entering the state last shown, are not updates).
	updateState = "state"
	// updateHealth: a health check reported counts that differ from the
	// last report.
	updateHealth = "health"
	// updateRetire: CleanUpSuccess (or CleanUpFailure) reported where the
	// retirement of the previous groups (or the release's own) stands, and
	// it differs from its last report.
	updateRetire = "retire"
	// updateStep: NextStep took a canary's next step: the services'
	// steps, targets and desired capacities.
	updateStep = "step"
	// updateBake: Bake reported the bake under way: the previous groups
	// standing by, and how long is left (shown when a minute passes).
	updateBake = "bake"
	// updateThrottled: AWS throttled the calls of ValidateResources or
	// Deploy (State): it does the rest after a wait (WaitSeconds).
	updateThrottled = "throttled"
	// updateError: a task failed with an error (it may be retried or
	// caught).
	updateError = "error"
	// updateOutcome: the execution ended; always the last update.
	updateOutcome = "outcome"
)

// Execution statuses as Step Functions reports them.
const (
	statusSucceeded = "SUCCEEDED"
	statusFailed    = "FAILED"
	statusAborted   = "ABORTED"
	statusTimedOut  = "TIMED_OUT"
)

// update is one thing worth showing about a followed execution. It is also
// the --json form of an event: one object per line.
type progress struct {
	Event string `json:"event"`
	// ID is the id of the history event that caused the update.
	ID int64 `json:"id"`
	// At is when it happened (the history event's timestamp) and Elapsed
	// how long after the execution started.
	At      time.Time     `json:"at,omitzero"`
	Elapsed time.Duration `json:"-"`

	// State is the state entered (updateState) or the state whose task
	// failed (updateError).
	State string `json:"state,omitempty"`
	// Services are the health counts per service (updateHealth), sorted by
	// name; Healthy says whether every service reached its target.
	Services []serviceCounts `json:"services,omitempty"`
	Healthy  bool            `json:"healthy,omitempty"`
	// Retiring are the previous groups still standing and the phase each
	// is in (updateRetire), by name.
	Retiring []execution.RetiringGroup `json:"retiring,omitempty"`
	// Restoring are, during a rollback (updateRetire of CleanUpFailure),
	// the previous groups back in their load balancers and not healthy
	// yet.
	Restoring []execution.RestoringGroup `json:"restoring,omitempty"`
	// Bake is Bake's report (updateBake): the groups standing by and the
	// seconds left.
	Bake *execution.Bake `json:"bake,omitempty"`
	// Analysis is the canary analysis of a health or bake check
	// (updateHealth, updateBake) when it differs from the last shown
	// (service, class or score).
	Analysis *execution.Analysis `json:"analysis,omitempty"`
	// WaitSeconds is how long until the throttled task runs again
	// (updateThrottled).
	WaitSeconds int `json:"wait_seconds,omitempty"`

	// Status (updateOutcome) is the execution's final status; End the end
	// state it reached (Success, FailureClean, FailureDirty), "" when it
	// ended without reaching one.
	Status string `json:"status,omitempty"`
	End    string `json:"end,omitempty"`
	// Error and Cause are the error of a failed task or execution; Cause
	// is the message (failure.Message), not the JSON payload AWS reports.
	Error string `json:"error,omitempty"`
	Cause string `json:"cause,omitempty"`
}

// serviceCounts is one service's line of a health report.
type serviceCounts struct {
	Name string `json:"name"`
	execution.ServiceHealth
}

// sameCounts reports whether two lines of a health report show the same:
// the counts, the canary step, and the stability window (when it started, not how much of
// it is left).
func sameCounts(a, b serviceCounts) bool {
	since := func(s serviceCounts) time.Time {
		if s.HealthySince == nil {
			return time.Time{}
		}
		return *s.HealthySince
	}
	return a.Name == b.Name && a.Launched == b.Launched && a.Healthy == b.Healthy && a.Terminating == b.Terminating &&
		a.Target == b.Target && a.Terminated == b.Terminated && a.Missing == b.Missing && a.Step == b.Step && since(a).Equal(since(b))
}

// historyReader turns Step Functions execution history events into
// updates. It remembers what it has seen, so it can be fed the history in
// pieces (or whole, again and again: events it has seen are skipped by
// id). It never fails: events it does not understand are skipped, and
// outputs that do not parse show nothing.
type historyReader struct {
	lastID    int64
	started   time.Time
	shown     string // the last state shown
	failState string // the last Fail or Succeed state entered
	health    []serviceCounts
	healthy   bool
	retiring  []execution.RetiringGroup
	restoring []execution.RestoringGroup
	// bakeMinutes is the minutes left of the bake when it was last shown.
	bakeMinutes int
	// analysis is the key (analysisKey) of the canary analysis last
	// shown.
	analysis string
	done     bool
	// taskFailed says the last task attempt failed: a state that exits
	// after that was caught, and its output's $.health is stale.
	taskFailed bool
	// waiting says the last event read entered a Wait state: the
	// execution waits for its next check, since waitingSince.
	waiting      bool
	waitingSince time.Time
	// bakeSeconds is the release's bake_seconds, from the last report's
	// state: whether Bake bakes when its input was not read. loopWait is
	// the wait before the last report's loop runs its task again.
	bakeSeconds int
	loopWait    time.Duration
	// lastTask is the last task state entered.
	lastTask string
	// roundWait and roundChecks are the newest wait for a health check
	// read with its report, and the checks made by then (noteRound).
	roundWait   int64
	roundChecks int
}

// renderHistory is the updates a whole history gives. It is pure: the same
// events always give the same updates.
func renderHistory(events []sfntypes.HistoryEvent) []progress {
	var r historyReader
	return r.read(events)
}

// finished reports whether the reader has seen the execution end.
func (r *historyReader) finished() bool { return r.done }

// read returns the updates of the events not seen before, in id order.
func (r *historyReader) read(events []sfntypes.HistoryEvent) []progress {
	sorted := slices.Clone(events)
	slices.SortStableFunc(sorted, func(a, b sfntypes.HistoryEvent) int {
		switch {
		case a.Id < b.Id:
			return -1
		case a.Id > b.Id:
			return 1
		}
		return 0
	})
	var out []progress
	for _, ev := range sorted {
		if ev.Id <= r.lastID || r.done {
			continue
		}
		r.lastID = ev.Id
		r.waiting = ev.Type == sfntypes.HistoryEventTypeWaitStateEntered
		if r.waiting {
			r.waitingSince = aws.ToTime(ev.Timestamp)
		}
		r.noteRound(ev)
		if u, ok := r.event(ev); ok {
			out = append(out, u)
		}
	}
	return out
}

// event interprets one event: a task's failure, the execution's end, or
// a step of its progress.
func (r *historyReader) event(ev sfntypes.HistoryEvent) (progress, bool) {
	u := r.stamp(ev)
	if errName, cause, ok := taskFailure(ev); ok {
		return r.taskError(u, errName, cause)
	}
	if status, errName, cause, ok := executionFailure(ev); ok {
		end := ""
		if status == statusFailed {
			end = r.failState
		}
		return r.outcome(u, status, end, errName, cause)
	}
	return r.step(ev, u)
}

// stamp is the update of ev without its news: its id, time and time since
// the execution started (the first timestamp seen, until ExecutionStarted
// says).
func (r *historyReader) stamp(ev sfntypes.HistoryEvent) progress {
	at := aws.ToTime(ev.Timestamp)
	if r.started.IsZero() && !at.IsZero() {
		r.started = at
	}
	u := progress{ID: ev.Id, At: at}
	if !at.IsZero() && !r.started.IsZero() && at.After(r.started) {
		u.Elapsed = at.Sub(r.started)
	}
	return u
}

// step interprets an event of the execution's progress: its start, a
// state entered, a task that succeeded, a task's or a loop's report,
// success.
func (r *historyReader) step(ev sfntypes.HistoryEvent, u progress) (progress, bool) {
	switch ev.Type {
	case sfntypes.HistoryEventTypeExecutionStarted:
		return r.executionStarted(u)
	case sfntypes.HistoryEventTypeTaskStateEntered, sfntypes.HistoryEventTypePassStateEntered,
		sfntypes.HistoryEventTypeParallelStateEntered, sfntypes.HistoryEventTypeMapStateEntered:
		return r.stateEntered(ev, u)
	case sfntypes.HistoryEventTypeSucceedStateEntered, sfntypes.HistoryEventTypeFailStateEntered:
		r.failState = enteredName(ev)
	case sfntypes.HistoryEventTypeLambdaFunctionSucceeded, sfntypes.HistoryEventTypeTaskSucceeded:
		r.taskFailed = false
	case sfntypes.HistoryEventTypeTaskStateExited:
		return r.taskExited(ev, u)
	case sfntypes.HistoryEventTypeWaitStateEntered:
		return r.loopWaits(ev, u)
	case sfntypes.HistoryEventTypeExecutionSucceeded:
		return r.outcome(u, statusSucceeded, firstNonEmpty(r.failState, execution.EndSuccess), "", "")
	}
	return u, false
}

// executionStarted is the update of the execution's start, from which
// every update's elapsed time counts.
func (r *historyReader) executionStarted(u progress) (progress, bool) {
	if !u.At.IsZero() {
		r.started = u.At
	}
	u.Event = updateStarted
	return u, true
}

// stateEntered is the update of a task (or Pass, Parallel, Map) state
// entered: none for one shown last, nor for Bake when the release does
// not bake.
func (r *historyReader) stateEntered(ev sfntypes.HistoryEvent, u progress) (progress, bool) {
	r.taskFailed = false
	name := enteredName(ev)
	r.lastTask = name
	if name == "" || name == r.shown || name == execution.TaskBake && !r.bakes(ev) {
		return u, false
	}
	r.shown = name
	u.Event, u.State = updateState, name
	return u, true
}

// taskExited reads the report of a task state left without its task
// failing: its output.
func (r *historyReader) taskExited(ev sfntypes.HistoryEvent, u progress) (progress, bool) {
	d := ev.StateExitedEventDetails
	if d == nil || r.taskFailed {
		return u, false
	}
	return r.taskReport(u, aws.ToString(d.Name), aws.ToString(d.Output))
}

// loopWaits reads the report a loop's Wait state carries in its input:
// that of the task before it (a follower reads only the newest events,
// historySince, so the Wait may be all it sees of the task). After
// another task (Deploy, NextStep), it carries that one's, not read here.
func (r *historyReader) loopWaits(ev sfntypes.HistoryEvent, u progress) (progress, bool) {
	task, ok := waitReports[enteredName(ev)]
	if !ok || task != r.lastTask || r.taskFailed || ev.StateEnteredEventDetails == nil {
		return u, false
	}
	return r.taskReport(u, task, aws.ToString(ev.StateEnteredEventDetails.Input))
}

// waitReports are the Wait states of the deploy's loops, each with the
// task whose report its input carries.
var waitReports = map[string]string{
	shape.StateWaitForResources: execution.TaskValidateResources,
	shape.StateWaitForDeploy:    execution.TaskDeploy,
	shape.StateWaitForHealthy:   execution.TaskCheckHealthy,
	shape.StateWaitForBake:      execution.TaskBake,
	shape.StateWaitForRetire:    execution.TaskCleanUpSuccess,
	shape.StateWaitForCleanUp:   execution.TaskCleanUpFailure,
}

// taskReport reads the report of a task that succeeded (its output):
// CheckHealthy's and NextStep's health, Bake's bake, a clean-up's
// retirement; the other tasks report nothing.
func (r *historyReader) taskReport(u progress, task, output string) (progress, bool) {
	r.noteState(task, output)
	switch task {
	case execution.TaskValidateResources, execution.TaskDeploy:
		return r.progressReport(u, task, output)
	case execution.TaskCheckHealthy:
		return r.healthReport(u, output)
	case execution.TaskNextStep:
		return r.stepReport(u, output)
	case execution.TaskBake:
		return r.bakeReport(u, output)
	case execution.TaskCleanUpSuccess, execution.TaskCleanUpFailure:
		return r.retireReport(u, output, task)
	}
	return u, false
}

// taskFailure returns the error and cause of an event of a task attempt
// that failed (a Lambda or an integration that failed, timed out or could
// not start), and whether ev is one with its details.
func taskFailure(ev sfntypes.HistoryEvent) (errName, cause string, ok bool) {
	switch ev.Type {
	case sfntypes.HistoryEventTypeLambdaFunctionFailed:
		if d := ev.LambdaFunctionFailedEventDetails; d != nil {
			return aws.ToString(d.Error), aws.ToString(d.Cause), true
		}
	case sfntypes.HistoryEventTypeLambdaFunctionTimedOut:
		if d := ev.LambdaFunctionTimedOutEventDetails; d != nil {
			return aws.ToString(d.Error), aws.ToString(d.Cause), true
		}
	case sfntypes.HistoryEventTypeLambdaFunctionStartFailed:
		if d := ev.LambdaFunctionStartFailedEventDetails; d != nil {
			return aws.ToString(d.Error), aws.ToString(d.Cause), true
		}
	case sfntypes.HistoryEventTypeLambdaFunctionScheduleFailed:
		if d := ev.LambdaFunctionScheduleFailedEventDetails; d != nil {
			return aws.ToString(d.Error), aws.ToString(d.Cause), true
		}
	case sfntypes.HistoryEventTypeTaskFailed:
		if d := ev.TaskFailedEventDetails; d != nil {
			return aws.ToString(d.Error), aws.ToString(d.Cause), true
		}
	case sfntypes.HistoryEventTypeTaskTimedOut:
		if d := ev.TaskTimedOutEventDetails; d != nil {
			return aws.ToString(d.Error), aws.ToString(d.Cause), true
		}
	}
	return "", "", false
}

// executionFailure returns the status, error and cause of an event that
// ends the execution without success (failed, aborted, timed out), and
// whether ev is one.
func executionFailure(ev sfntypes.HistoryEvent) (status, errName, cause string, ok bool) {
	switch ev.Type {
	case sfntypes.HistoryEventTypeExecutionFailed:
		if d := ev.ExecutionFailedEventDetails; d != nil {
			errName, cause = aws.ToString(d.Error), aws.ToString(d.Cause)
		}
		return statusFailed, errName, cause, true
	case sfntypes.HistoryEventTypeExecutionAborted:
		if d := ev.ExecutionAbortedEventDetails; d != nil {
			errName, cause = aws.ToString(d.Error), aws.ToString(d.Cause)
		}
		return statusAborted, errName, cause, true
	case sfntypes.HistoryEventTypeExecutionTimedOut:
		if d := ev.ExecutionTimedOutEventDetails; d != nil {
			errName, cause = aws.ToString(d.Error), aws.ToString(d.Cause)
		}
		return statusTimedOut, errName, cause, true
	}
	return "", "", "", false
}

func enteredName(ev sfntypes.HistoryEvent) string {
	if ev.StateEnteredEventDetails == nil {
		return ""
	}
	return aws.ToString(ev.StateEnteredEventDetails.Name)
}

// reportAt reads the health report at $.health of a task's output, with
// its services sorted by name; nil when there is none.
func reportAt(output string) (*execution.Health, []serviceCounts) {
	var st struct {
		Health *execution.Health `json:"health"`
	}
	if err := json.Unmarshal([]byte(output), &st); err != nil || st.Health == nil {
		return nil, nil
	}
	counts := make([]serviceCounts, 0, len(st.Health.Services))
	for _, name := range slices.Sorted(maps.Keys(st.Health.Services)) {
		counts = append(counts, serviceCounts{Name: name, ServiceHealth: st.Health.Services[name]})
	}
	return st.Health, counts
}

// stepReport reads NextStep's report at $.health of its output: an
// update naming the services of a canary and the step each is at.
func (r *historyReader) stepReport(u progress, output string) (progress, bool) {
	h, counts := reportAt(output)
	if h == nil {
		return u, false
	}
	var stepping []serviceCounts
	for _, s := range counts {
		if s.Steps > 0 {
			stepping = append(stepping, s)
		}
	}
	if len(stepping) == 0 {
		return u, false
	}
	u.Event, u.State, u.Services = updateStep, execution.TaskNextStep, stepping
	return u, true
}

// healthReport reads CheckHealthy's result at $.health of its output and
// returns an update when the counts changed.
func (r *historyReader) healthReport(u progress, output string) (progress, bool) {
	h, counts := reportAt(output)
	if h == nil {
		return u, false
	}
	a := r.newAnalysis(h.Analysis)
	if slices.EqualFunc(counts, r.health, sameCounts) && h.Healthy == r.healthy && a == nil {
		return u, false
	}
	r.health, r.healthy, u.Analysis = counts, h.Healthy, a
	u.Event, u.State = updateHealth, execution.TaskCheckHealthy
	u.Services, u.Healthy = slices.Clone(counts), h.Healthy
	return u, true
}

// retireReport reads the report at $.retire of the output of task
// (CleanUpSuccess retiring the previous groups, CleanUpFailure the
// release's own) and returns an update when the groups still retiring, or
// their phases, changed.
func (r *historyReader) retireReport(u progress, output, task string) (progress, bool) {
	var st struct {
		Retire *execution.Retire `json:"retire"`
	}
	if err := json.Unmarshal([]byte(output), &st); err != nil || st.Retire == nil || st.Retire.Done {
		return u, false
	}
	if slices.Equal(st.Retire.Groups, r.retiring) && slices.Equal(st.Retire.Restoring, r.restoring) {
		return u, false
	}
	r.retiring, r.restoring = slices.Clone(st.Retire.Groups), slices.Clone(st.Retire.Restoring)
	u.Event, u.State = updateRetire, task
	u.Retiring, u.Restoring = slices.Clone(st.Retire.Groups), slices.Clone(st.Retire.Restoring)
	return u, true
}

// bakes reports whether the state Bake enters with (ev's input) has a
// bake to run: without one, Bake is done at once and not worth a line.
// bakes says whether the release bakes, from Bake's input, or, read
// without data, from the last report's state (noteBake).
func (r *historyReader) bakes(ev sfntypes.HistoryEvent) bool {
	input := aws.ToString(ev.StateEnteredEventDetails.Input)
	if input == "" {
		return r.bakeSeconds > 0
	}
	var st struct {
		BakeSeconds int `json:"bake_seconds"`
	}
	return json.Unmarshal([]byte(input), &st) == nil && st.BakeSeconds > 0
}

// noteState remembers, from the state a task's report is in, the
// release's bake_seconds and the wait before the task's loop runs it
// again (0 when it does not).
func (r *historyReader) noteState(task, state string) {
	type wait struct {
		WaitSeconds int `json:"wait_seconds"`
	}
	var st struct {
		BakeSeconds *int  `json:"bake_seconds"`
		Resources   *wait `json:"resources"`
		Deploy      *wait `json:"deploy"`
		Health      *wait `json:"health"`
		Bake        *wait `json:"bake"`
		Retire      *wait `json:"retire"`
	}
	if json.Unmarshal([]byte(state), &st) != nil {
		return
	}
	if st.BakeSeconds != nil {
		r.bakeSeconds = *st.BakeSeconds
	}
	var w *wait
	switch task {
	case execution.TaskValidateResources:
		w = st.Resources
	case execution.TaskDeploy:
		if w = st.Health; w == nil {
			w = st.Deploy // throttled: it runs again after its wait
		}
	case execution.TaskCheckHealthy, execution.TaskNextStep:
		w = st.Health
	case execution.TaskBake:
		w = st.Bake
	case execution.TaskCleanUpSuccess, execution.TaskCleanUpFailure:
		w = st.Retire
	}
	r.loopWait = 0
	if w != nil {
		r.loopWait = time.Duration(w.WaitSeconds) * time.Second
	}
}

// bakeReport reads Bake's report at $.bake of its output and returns an
// update for the first, and then each time the minutes left change.
// progressReport reads the report of ValidateResources or Deploy: an
// update when AWS throttled it and it does the rest after a wait (none
// for a round Deploy only paced: execution.Progress.Paced).
func (r *historyReader) progressReport(u progress, task, output string) (progress, bool) {
	var st struct {
		Resources *execution.Progress `json:"resources"`
		Deploy    *execution.Progress `json:"deploy"`
	}
	if err := json.Unmarshal([]byte(output), &st); err != nil {
		return u, false
	}
	p := st.Deploy
	if task == execution.TaskValidateResources {
		p = st.Resources
	}
	if p == nil || p.Done || p.Paced {
		return u, false
	}
	u.Event, u.State, u.WaitSeconds = updateThrottled, task, p.WaitSeconds
	return u, true
}

func (r *historyReader) bakeReport(u progress, output string) (progress, bool) {
	var st struct {
		Bake   *execution.Bake   `json:"bake"`
		Health *execution.Health `json:"health"`
	}
	if err := json.Unmarshal([]byte(output), &st); err != nil || st.Bake == nil || st.Bake.Done {
		return u, false
	}
	var a *execution.Analysis
	if st.Health != nil {
		a = r.newAnalysis(st.Health.Analysis)
	}
	minutes := (st.Bake.LeftSeconds + 59) / 60
	if minutes == r.bakeMinutes && a == nil {
		return u, false
	}
	r.bakeMinutes = minutes
	u.Event, u.State, u.Bake, u.Analysis = updateBake, execution.TaskBake, st.Bake, a
	return u, true
}

// newAnalysis is a when it differs from the analysis last shown (its
// service, class or score), remembered as shown; else nil.
func (r *historyReader) newAnalysis(a *execution.Analysis) *execution.Analysis {
	key := analysisKey(a)
	if key == r.analysis {
		return nil
	}
	r.analysis = key
	return a
}

func (r *historyReader) taskError(u progress, errName, cause string) (progress, bool) {
	r.taskFailed = true
	u.Event, u.State, u.Error, u.Cause = updateError, r.shown, errName, failure.Message(cause)
	return u, true
}

func (r *historyReader) outcome(u progress, status, end, errName, cause string) (progress, bool) {
	switch end {
	case execution.EndSuccess, execution.EndFailureClean, execution.EndFailureDirty:
	default:
		end = ""
	}
	if status == statusSucceeded && end != execution.EndSuccess {
		end = ""
	}
	r.done = true
	u.Event, u.Status, u.End, u.Error, u.Cause = updateOutcome, status, end, errName, failure.Message(cause)
	return u, true
}

// exitCodeOf is the exit code of ferry deploy (and of the executions ferry
// follows) for an outcome: 0 Success, 1 FailureClean, 2 FailureDirty or an
// execution that ended without reaching an end state (stopped, timed out:
// AWS may be left in a bad state).
func exitCodeOf(u progress) int {
	switch u.End {
	case execution.EndSuccess:
		return exitOK
	case execution.EndFailureClean:
		return exitFailure
	}
	return exitDirty
}

// describeOutcome is the one-line description of an outcome for people.
func describeOutcome(u progress) string {
	var b strings.Builder
	switch {
	case u.End != "":
		b.WriteString(u.End)
	case u.Status != "":
		b.WriteString("execution " + strings.ToLower(strings.ReplaceAll(u.Status, "_", " ")) + " without reaching an end state")
	default:
		b.WriteString("unknown")
	}
	if msg := describeError(u.Error, u.Cause); msg != "" {
		b.WriteString(": " + msg)
	}
	return b.String()
}

// describeError joins an error name and its cause, dropping a cause that
// only repeats the name. A cause of several lines (a bad release's
// problems, one a line) keeps every line, each indented on its own: none
// is cut. Both come from the execution's history, so each line is cleaned
// of control characters.
func describeError(errName, cause string) string {
	errName = oneLine(errName)
	var lines []string
	for l := range strings.Lines(cause) {
		if l = oneLine(l); l != "" {
			lines = append(lines, l)
		}
	}
	cause = strings.Join(lines, "\n    ")
	switch {
	case errName == "" && cause == "":
		return ""
	case errName == "":
		return cause
	case cause == "" || cause == errName:
		return errName
	}
	return errName + ": " + cause
}

// oneLine collapses whitespace runs (newlines included) to one space,
// escapes the characters a terminal would not show as themselves (control
// characters, which could carry terminal escapes, and format characters
// such as bidirectional overrides) as Go writes them ("\x1b", "\u202e"),
// so text from AWS or S3 is shown whole but cannot drive the terminal, and
// cuts very long text.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	var b strings.Builder
	for _, r := range s {
		if r == ' ' || (unicode.IsGraphic(r) && !unicode.Is(unicode.Cf, r) && r != utf8.RuneError) {
			b.WriteRune(r)
			continue
		}
		q := strconv.QuoteRuneToASCII(r)
		b.WriteString(q[1 : len(q)-1])
	}
	s = b.String()
	const max = 400
	if runes := []rune(s); len(runes) > max {
		s = string(runes[:max]) + "..."
	}
	return s
}
