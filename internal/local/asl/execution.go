package asl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/limits"
)

// Invoker runs a Task state's resource. resource is the state's Resource
// as written in the definition (after any Substitute); payload is the
// task's effective input. The result must be JSON (empty means null).
//
// A returned error fails the task: its name is the error's ErrorName()
// when it has one (the interface ferry's failure types implement),
// ErrorLambdaUnknown otherwise, and its cause is err.Error(). When the
// invocation's ctx is done because the execution was stopped, the error is
// ignored.
type Invoker interface {
	Invoke(ctx context.Context, resource string, payload json.RawMessage) (json.RawMessage, error)
}

// TaskInfo tells an Invoker which task it runs: TaskFromContext reads it
// from the ctx of Invoke.
type TaskInfo struct {
	ExecutionARN string
	State        string
	// RetryCount is 0 on the first attempt, n on the n-th retry.
	RetryCount int
}

type taskInfoKey struct{}

// TaskFromContext returns the TaskInfo the interpreter put in the ctx of
// Invoke, and false for any other context.
func TaskFromContext(ctx context.Context) (TaskInfo, bool) {
	ti, ok := ctx.Value(taskInfoKey{}).(TaskInfo)
	return ti, ok
}

// InvokerFunc adapts a function to Invoker.
type InvokerFunc func(ctx context.Context, resource string, payload json.RawMessage) (json.RawMessage, error)

// Invoke calls f.
func (f InvokerFunc) Invoke(ctx context.Context, resource string, payload json.RawMessage) (json.RawMessage, error) {
	return f(ctx, resource, payload)
}

// Status is an execution's status, with Step Functions' names.
type Status string

// Execution statuses.
const (
	StatusRunning   Status = "RUNNING"
	StatusSucceeded Status = "SUCCEEDED"
	StatusFailed    Status = "FAILED"
	StatusAborted   Status = "ABORTED"
	StatusTimedOut  Status = "TIMED_OUT"
)

// DefaultStateMachineARN is the state machine ARN of executions started
// without one.
const DefaultStateMachineARN = "arn:aws:states:us-east-1:123456789012:stateMachine:StateMachine"

// RunOptions configure one execution.
type RunOptions struct {
	// Input is the execution's input JSON; empty means {}.
	Input json.RawMessage
	// Name is the execution's name (1 to 80 characters). Required.
	Name string
	// StateMachineARN identifies the machine in the context object and the
	// execution ARN; DefaultStateMachineARN when empty.
	StateMachineARN string
	// ExecutionARN is the execution's ARN; when empty it is
	// ExecutionARN(StateMachineARN, Name).
	ExecutionARN string
	// RoleARN is reported in $$.Execution.RoleArn and ExecutionStarted.
	RoleARN string
	// Clock tells the time of events and the context object; clock.System
	// when nil.
	Clock clock.Clock
	// Waiter passes time for Wait states and retry intervals. When nil: a
	// VirtualWaiter for a *clock.Virtual, the clock itself when it is a
	// Waiter (clock.Scaled), real sleeps for clock.System; any other clock needs
	// a Waiter.
	Waiter Waiter
	// Invoker runs Task states. Required when the machine has a Task.
	Invoker Invoker
	// Observer, when set, is called with every history event, in order,
	// as it is recorded. It may read the Execution but must not Stop it.
	Observer func(Event)
	// OutsideWaits names the Wait states that wait for people and the
	// world outside the executions (a promotion's held gate). On an
	// Awaiter they wait as an Await limited to the wait's length, not as
	// a wake-up time jumps to: on a region that makes its own clock
	// (discrete-event time following the wall clock while idle), the
	// limit then passes with the wall clock, as a task token's does.
	OutsideWaits []string
}

// ExecutionARN returns the ARN Step Functions gives execution name of the
// state machine stateMachineARN.
func ExecutionARN(stateMachineARN, name string) string {
	return strings.Replace(stateMachineARN, ":stateMachine:", ":execution:", 1) + ":" + name
}

// Description is a snapshot of an execution, as DescribeExecution reports
// it. Input is the execution's input as given to Start (RunOptions.Input,
// or {} when it was empty); Output is set only when Status is SUCCEEDED;
// Error and Cause when it failed, was aborted or timed out; StopDate once
// it is no longer running.
type Description struct {
	ExecutionARN    string
	StateMachineARN string
	Name            string
	Status          Status
	Input           string
	Output          string
	Error           string
	Cause           string
	StartDate       time.Time
	StopDate        time.Time
}

// Execution is one running or finished execution of a Machine. Its methods
// are safe for concurrent use.
type Execution struct {
	m        *Machine
	arn      string
	name     string
	smARN    string
	smName   string
	roleARN  string
	region   string
	input    any
	clock    clock.Clock
	waiter   Waiter
	invoker  Invoker
	observer func(Event)
	// outside are the Wait states of RunOptions.OutsideWaits.
	outside []string
	start   time.Time
	cancel  context.CancelFunc
	done    chan struct{}

	obsMu sync.Mutex // orders observer calls; taken before mu
	mu    sync.Mutex
	desc  Description
	// current is the state being run, for its Aborted event.
	current *state
	events  []Event
	path    []string
	// tokens are the task tokens made, each with its task's callback.
	tokens map[string]*pendingTask
}

// abortedEvents are the events of a state an aborted execution was in.
var abortedEvents = map[StateType]EventType{
	TypeTask: EventTaskStateAborted, TypeMap: EventMapStateAborted, TypeWait: EventWaitStateAborted,
}

// errTimedOut says the machine's TimeoutSeconds passed.
var errTimedOut = errors.New("execution timed out")

// Start validates opts, records ExecutionStarted and runs the execution in
// a new goroutine. ctx is the execution's lifetime, not a request's: when
// it is done the execution is aborted. The error is for bad options or
// input only; how the execution ends is in its Description.
func Start(ctx context.Context, m *Machine, opts RunOptions) (*Execution, error) {
	if m == nil {
		return nil, errors.New("asl: nil machine")
	}
	if opts.Name == "" || len(opts.Name) > 80 {
		return nil, fmt.Errorf("asl: execution name %q must have 1 to 80 characters", opts.Name)
	}
	in := opts.Input
	if len(in) == 0 {
		in = json.RawMessage("{}")
	}
	if len(in) > limits.StepFunctionsPayloadBytes {
		return nil, fmt.Errorf("asl: execution input is %d bytes, over the limit of %d", len(in), limits.StepFunctionsPayloadBytes)
	}
	input, err := decodeJSON(in)
	if err != nil {
		return nil, fmt.Errorf("asl: execution input is not valid JSON: %w", err)
	}
	x := &Execution{
		m: m, name: opts.Name, smARN: opts.StateMachineARN, roleARN: opts.RoleARN,
		input: input, clock: opts.Clock, waiter: opts.Waiter, invoker: opts.Invoker,
		observer: opts.Observer, outside: opts.OutsideWaits, done: make(chan struct{}),
	}
	if x.smARN == "" {
		x.smARN = DefaultStateMachineARN
	}
	x.arn = opts.ExecutionARN
	if x.arn == "" {
		x.arn = ExecutionARN(x.smARN, x.name)
	}
	x.smName = x.smARN[strings.LastIndex(x.smARN, ":")+1:]
	x.region = "us-east-1"
	if parts := strings.Split(x.smARN, ":"); len(parts) > 3 && parts[3] != "" {
		x.region = parts[3]
	}
	if x.clock == nil {
		x.clock = clock.System{}
	}
	if x.waiter == nil {
		switch c := x.clock.(type) {
		case *clock.Virtual:
			x.waiter = VirtualWaiter{Clock: c}
		case Waiter:
			x.waiter = c
		case clock.System:
			x.waiter = wallWaiter{}
		default:
			return nil, fmt.Errorf("asl: RunOptions.Waiter is required with a %T clock", opts.Clock)
		}
	}
	if x.invoker == nil {
		for _, s := range m.all() {
			if s.typ == TypeTask {
				return nil, fmt.Errorf("asl: RunOptions.Invoker is required: state %q is a Task", s.name)
			}
		}
	}
	x.start = x.now()
	// The execution's input is reported as it was given, byte for byte, as
	// DescribeExecution and the ExecutionStarted event report it on AWS.
	x.desc = Description{
		ExecutionARN: x.arn, StateMachineARN: x.smARN, Name: x.name, Status: StatusRunning,
		Input: string(in), StartDate: x.start,
	}
	runCtx, cancel := context.WithCancel(ctx)
	x.cancel = cancel
	x.emit(Event{Type: EventExecutionStarted, ExecutionStarted: &ExecutionStartedDetails{
		Input: x.desc.Input, RoleARN: x.roleARN}})
	go x.run(runCtx)
	return x, nil
}

// Run starts an execution and waits for it to end (or for ctx to be done,
// which aborts it).
func Run(ctx context.Context, m *Machine, opts RunOptions) (*Execution, error) {
	x, err := Start(ctx, m, opts)
	if err != nil {
		return nil, err
	}
	<-x.done
	return x, nil
}

// Done is closed when the execution has ended.
func (x *Execution) Done() <-chan struct{} { return x.done }

// Wait blocks until the execution has ended or ctx is done.
func (x *Execution) Wait(ctx context.Context) error {
	select {
	case <-x.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ARN returns the execution's ARN.
func (x *Execution) ARN() string { return x.arn }

// Describe returns a snapshot of the execution.
func (x *Execution) Describe() Description {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.desc
}

// History returns a copy of the events recorded so far, oldest first.
func (x *Execution) History() []Event {
	x.mu.Lock()
	defer x.mu.Unlock()
	return append([]Event(nil), x.events...)
}

// Path returns the names of the states entered so far, in order (a state
// entered twice appears twice).
func (x *Execution) Path() []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	return append([]string(nil), x.path...)
}

// Stop aborts a running execution, as StopExecution does: its status
// becomes ABORTED with the given error and cause (either may be empty) and
// the running task's context is cancelled. It returns false, changing
// nothing, when the execution had already ended.
func (x *Execution) Stop(errName, cause string) bool {
	ok := x.finish(StatusAborted, errName, cause, "")
	x.cancel()
	return ok
}

func (x *Execution) now() time.Time {
	return x.clock.Now().UTC().Truncate(time.Millisecond)
}

// emit records an event unless the execution has ended.
func (x *Execution) emit(ev Event) {
	x.obsMu.Lock()
	defer x.obsMu.Unlock()
	x.mu.Lock()
	if x.desc.Status != StatusRunning {
		x.mu.Unlock()
		return
	}
	x.appendLocked(&ev)
	x.mu.Unlock()
	if x.observer != nil {
		x.observer(ev)
	}
}

func (x *Execution) appendLocked(ev *Event) {
	ev.ID = int64(len(x.events) + 1)
	ev.PreviousEventID = int64(len(x.events))
	ev.Timestamp = x.now()
	if ev.StateEntered != nil {
		x.path = append(x.path, ev.StateEntered.Name)
	}
	x.events = append(x.events, *ev)
}

// finish ends the execution with status, recording its final event(s).
// It returns false when the execution had already ended.
func (x *Execution) finish(status Status, errName, cause, output string) bool {
	x.obsMu.Lock()
	defer x.obsMu.Unlock()
	x.mu.Lock()
	if x.desc.Status != StatusRunning {
		x.mu.Unlock()
		return false
	}
	var evs []Event
	details := &ErrorDetails{Error: errName, Cause: cause}
	switch status {
	case StatusSucceeded:
		evs = append(evs, Event{Type: EventExecutionSucceeded, ExecutionSucceeded: &ExecutionSucceededDetails{Output: output}})
	case StatusFailed:
		evs = append(evs, Event{Type: EventExecutionFailed, ExecutionFailed: details})
	case StatusTimedOut:
		evs = append(evs, Event{Type: EventExecutionTimedOut, ExecutionTimedOut: details})
	case StatusAborted:
		if s := x.current; s != nil && abortedEvents[s.typ] != "" {
			evs = append(evs, Event{Type: abortedEvents[s.typ]})
		}
		evs = append(evs, Event{Type: EventExecutionAborted, ExecutionAborted: details})
	}
	for i := range evs {
		x.appendLocked(&evs[i])
	}
	x.desc.Status = status
	x.desc.StopDate = x.now()
	x.desc.Error, x.desc.Cause = errName, cause
	if status == StatusSucceeded {
		x.desc.Output = output
	}
	x.mu.Unlock()
	if x.observer != nil {
		for _, ev := range evs {
			x.observer(ev)
		}
	}
	close(x.done)
	return true
}

func (x *Execution) run(ctx context.Context) {
	defer x.cancel()
	output, err := x.runGraph(ctx, x.m, x.input)
	var se *StateError
	switch {
	case ctx.Err() != nil:
		x.finish(StatusAborted, "", "the execution's context ended: "+ctx.Err().Error(), "")
	case errors.Is(err, errTimedOut):
		x.finish(StatusTimedOut, ErrorTimeout, fmt.Sprintf("the execution ran for longer than its TimeoutSeconds (%d)", int64(x.m.timeout/time.Second)), "")
	case errors.As(err, &se):
		x.finish(StatusFailed, se.Name, se.Cause, "")
	case err != nil:
		x.finish(StatusFailed, ErrorRuntime, err.Error(), "")
	default:
		x.finish(StatusSucceeded, "", "", encodeJSON(output))
	}
}

// runGraph runs the states of m (the machine, or a Map's ItemProcessor)
// from its StartAt on input until one ends it, and returns its output.
func (x *Execution) runGraph(ctx context.Context, m *Machine, input any) (any, error) {
	name := m.startAt
	for {
		s := m.states[name]
		x.mu.Lock()
		if m == x.m {
			x.current = s
		}
		n := len(x.events)
		x.mu.Unlock()
		var next string
		var output any
		var err error
		switch {
		case n+10 > limits.StepFunctionsHistoryEvents:
			err = stateErr(ErrorRuntime, "the execution history reached the limit of %d events", limits.StepFunctionsHistoryEvents)
		case x.m.timeout > 0 && !x.now().Before(x.start.Add(x.m.timeout)):
			err = errTimedOut
		default:
			next, output, err = x.runState(ctx, s, input)
		}
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case err != nil:
			return nil, err
		case next == "":
			return output, nil
		}
		name, input = next, output
	}
}

// contextObject builds $$ for a state.
func (x *Execution) contextObject(s *state, entered time.Time, retryCount int) any {
	return map[string]any{
		"Execution": map[string]any{
			"Id":           x.arn,
			"Input":        x.input,
			"Name":         x.name,
			"RoleArn":      x.roleARN,
			"StartTime":    formatTime(x.start),
			"RedriveCount": json.Number("0"),
		},
		"State": map[string]any{
			"Name":        s.name,
			"EnteredTime": formatTime(entered),
			"RetryCount":  json.Number(strconv.Itoa(retryCount)),
		},
		"StateMachine": map[string]any{
			"Id":   x.smARN,
			"Name": x.smName,
		},
	}
}

// formatTime renders a time as Step Functions renders context times:
// RFC 3339 in UTC with milliseconds.
func formatTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

func (x *Execution) exit(s *state, output any) {
	x.emit(Event{Type: EventType(string(s.typ) + "StateExited"),
		StateExited: &StateExitedDetails{Name: s.name, Output: encodeJSON(output)}})
}

// runState runs one state from entering it to leaving it. next is "" when
// the execution ends successfully with output.
func (x *Execution) runState(ctx context.Context, s *state, raw any) (next string, output any, err error) {
	entered := x.now()
	x.emit(Event{Type: EventType(string(s.typ) + "StateEntered"),
		StateEntered: &StateEnteredDetails{Name: s.name, Input: encodeJSON(raw)}})
	if s.typ == TypeTask || s.typ == TypeMap {
		return x.runTask(ctx, s, raw, entered)
	}
	ctxObj := x.contextObject(s, entered, 0)
	if s.typ == TypeFail {
		return "", nil, x.failError(s, raw, ctxObj)
	}
	eff, err := applyInputPath(s.inputPath, raw, ctxObj)
	if err != nil {
		return "", nil, err
	}
	out := eff
	switch s.typ {
	case TypePass:
		if s.parameters != nil {
			if eff, err = s.parameters.apply(eff, ctxObj); err != nil {
				return "", nil, err
			}
		}
		result := eff
		if s.hasResult {
			result = deepCopy(s.result)
		}
		if out, err = applyResultPath(s.resultPath, raw, result); err != nil {
			return "", nil, err
		}
	case TypeChoice:
		for _, r := range s.choices {
			ok, err := r.eval(eff, ctxObj)
			if err != nil {
				return "", nil, err
			}
			if ok {
				next = r.next
				break
			}
		}
		if next == "" {
			next = s.defaultNext
		}
		if next == "" {
			return "", nil, stateErr(ErrorNoChoiceMatched, "No Choice Rules matched and no Default was specified in state '%s'", s.name)
		}
	case TypeWait:
		d, err := x.waitDuration(s, eff, ctxObj)
		if err != nil {
			return "", nil, err
		}
		if err := x.waitState(ctx, s.name, d); err != nil {
			return "", nil, err
		}
	}
	if out, err = applyOutputPath(s.outputPath, out, ctxObj); err != nil {
		return "", nil, err
	}
	x.exit(s, out)
	if s.typ != TypeChoice {
		next = s.next
	}
	return next, out, nil
}

// wait passes d of execution time, cut short (with errTimedOut) at the
// machine's TimeoutSeconds.
func (x *Execution) wait(ctx context.Context, d time.Duration) error {
	if x.m.timeout > 0 {
		left := x.start.Add(x.m.timeout).Sub(x.now())
		if left < d {
			if err := x.waiter.Wait(ctx, max(left, 0)); err != nil {
				return err
			}
			return errTimedOut
		}
	}
	return x.waiter.Wait(ctx, d)
}

// waitState passes d of execution time for the Wait state name: as a
// wait for the world outside when it is one (RunOptions.OutsideWaits).
func (x *Execution) waitState(ctx context.Context, name string, d time.Duration) error {
	if slices.Contains(x.outside, name) {
		return x.waitOutside(ctx, d)
	}
	return x.wait(ctx, d)
}

// waitOutside passes d of execution time as a wait for the world outside
// (RunOptions.OutsideWaits): an Await limited to d on an Awaiter, else as
// wait does. The machine's TimeoutSeconds cuts it short as wait does.
func (x *Execution) waitOutside(ctx context.Context, d time.Duration) error {
	a, ok := x.waiter.(Awaiter)
	if !ok || d <= 0 || (x.m.timeout > 0 && x.start.Add(x.m.timeout).Sub(x.now()) < d) {
		return x.wait(ctx, d)
	}
	if err := a.Await(d).Wait(ctx); !errors.Is(err, ErrAwaitTimedOut) {
		return err
	}
	return nil
}

func (x *Execution) waitDuration(s *state, eff, ctxObj any) (time.Duration, error) {
	switch {
	case s.seconds != nil:
		return time.Duration(*s.seconds) * time.Second, nil
	case s.timestamp != nil:
		return max(s.timestamp.Sub(x.clock.Now()), 0), nil
	case s.secondsPath != nil:
		v, ok := s.secondsPath.get(eff, ctxObj)
		n, isNum := v.(json.Number)
		secs, err := n.Int64()
		if !ok || !isNum || err != nil || secs < 0 || secs > maxSeconds {
			return 0, stateErr(ErrorRuntime, "Wait state '%s': SecondsPath '%s' must point to a non-negative integer, found %s", s.name, s.secondsPath.raw, found(v, ok))
		}
		return time.Duration(secs) * time.Second, nil
	default:
		v, ok := s.timestampPath.get(eff, ctxObj)
		str, isStr := v.(string)
		t, err := parseTimestamp(str)
		if !ok || !isStr || err != nil {
			return 0, stateErr(ErrorRuntime, "Wait state '%s': TimestampPath '%s' must point to an RFC 3339 timestamp, found %s", s.name, s.timestampPath.raw, found(v, ok))
		}
		return max(t.Sub(x.clock.Now()), 0), nil
	}
}

func found(v any, ok bool) string {
	if !ok {
		return "nothing"
	}
	return encodeJSON(v)
}

func (x *Execution) failError(s *state, raw, ctxObj any) error {
	e := &StateError{Name: s.errorName, Cause: s.cause}
	for _, f := range []struct {
		p    *path
		dst  *string
		name string
	}{{s.errorPath, &e.Name, "ErrorPath"}, {s.causePath, &e.Cause, "CausePath"}} {
		if f.p == nil {
			continue
		}
		v, ok := f.p.get(raw, ctxObj)
		str, isStr := v.(string)
		if !ok || !isStr {
			return stateErr(ErrorRuntime, "Fail state '%s': %s '%s' must point to a string, found %s", s.name, f.name, f.p.raw, found(v, ok))
		}
		*f.dst = str
	}
	return e
}

func applyInputPath(ip ioPath, raw, ctxObj any) (any, error) {
	if ip.null {
		return map[string]any{}, nil
	}
	v, ok := ip.p.get(raw, ctxObj)
	if !ok {
		return nil, stateErr(ErrorRuntime, "Invalid path '%s' : No results for path: %s in input '%s'", ip.p.raw, ip.p.raw, encodeJSON(raw))
	}
	return v, nil
}

func applyOutputPath(op ioPath, out, ctxObj any) (any, error) {
	if op.null {
		return map[string]any{}, nil
	}
	v, ok := op.p.get(out, ctxObj)
	if !ok {
		return nil, stateErr(ErrorRuntime, "Invalid path '%s' : No results for path: %s in output '%s'", op.p.raw, op.p.raw, encodeJSON(out))
	}
	return v, nil
}

func applyResultPath(rp ioPath, raw, result any) (any, error) {
	if rp.null {
		return raw, nil
	}
	out, err := rp.p.set(raw, result)
	if err != nil {
		return nil, stateErr(ErrorResultPathMatch, "Unable to apply ResultPath: %v; input '%s'", err, encodeJSON(raw))
	}
	return out, nil
}

func (x *Execution) runTask(ctx context.Context, s *state, raw any, entered time.Time) (string, any, error) {
	attempts := make([]int, len(s.retry))
	retryCount := 0
	for {
		attempt := x.attemptTask
		if s.typ == TypeMap {
			attempt = x.attemptMap
		}
		out, err := attempt(ctx, s, raw, retryCount, x.contextObject(s, entered, retryCount))
		if ctx.Err() != nil {
			return "", nil, ctx.Err()
		}
		if err == nil {
			x.exit(s, out)
			return s.next, out, nil
		}
		se := taskError(err)
		if i := findRetrier(s.retry, se.Name); i >= 0 && attempts[i] < s.retry[i].maxAttempts {
			r := s.retry[i]
			secs := r.interval * math.Pow(r.backoff, float64(attempts[i]))
			if r.maxDelay > 0 && secs > r.maxDelay {
				secs = r.maxDelay
			}
			attempts[i]++
			retryCount++
			if err := x.wait(ctx, time.Duration(secs*float64(time.Second))); err != nil {
				return "", nil, err
			}
			continue
		}
		for _, c := range s.catch {
			if !matchesError(c.errorEquals, se.Name) {
				continue
			}
			out, err := applyResultPath(c.resultPath, raw, map[string]any{"Error": se.Name, "Cause": se.Cause})
			if err != nil {
				return "", nil, err
			}
			x.exit(s, out)
			return c.next, out, nil
		}
		return "", nil, se
	}
}

// findRetrier returns the first retrier whose ErrorEquals matches name, or
// -1.
func findRetrier(rs []retrier, name string) int {
	for i, r := range rs {
		if matchesError(r.errorEquals, name) {
			return i
		}
	}
	return -1
}

// attemptTask runs one attempt of a Task state: input processing, the
// invocation and its events, and result processing.
func (x *Execution) attemptTask(ctx context.Context, s *state, raw any, retryCount int, ctxObj any) (any, error) {
	resource, callback := callbackOf(s.resource)
	var pending *pendingTask
	if callback {
		var token string
		token, pending = x.register(time.Duration(s.timeoutSeconds) * time.Second)
		defer x.endPending(pending)
		ctxObj = withTaskToken(ctxObj, token)
	}
	payload, err := taskPayload(s, raw, ctxObj)
	if err != nil {
		return nil, err
	}
	events := taskEventsOf(s.resource, x.region)
	var timeout *int64
	if s.timeoutSeconds > 0 {
		timeout = &s.timeoutSeconds
	}
	x.emit(events.scheduled(payload, timeout))
	x.emit(events.started())
	result, fail, timedOut := x.invoke(ctx, s, resource, payload, retryCount)
	if ctx.Err() == nil && fail == nil && callback {
		x.emit(events.(integrationEvents).submitted(encodeJSON(result)))
		result, fail, timedOut, err = x.awaitCallback(ctx, s, pending)
		if err != nil {
			return nil, err
		}
	}
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case timedOut:
		x.emit(events.timedOut(fail))
		return nil, fail
	case fail != nil:
		x.emit(events.failed(fail))
		return nil, fail
	}
	output := encodeJSON(result)
	x.emit(events.succeeded(output))
	if len(output) > limits.StepFunctionsPayloadBytes {
		return nil, stateErr(ErrorDataLimitExceeded, "the result of task '%s' is %d bytes, over the limit of %d", s.name, len(output), limits.StepFunctionsPayloadBytes)
	}
	return taskOutput(s, raw, result, ctxObj)
}

// awaitCallback waits for the callback of a task that waits for its token
// and returns its result, as invoke does.
func (x *Execution) awaitCallback(ctx context.Context, s *state, p *pendingTask) (result any, fail *StateError, timedOut bool, err error) {
	out, fail, timedOut, err := x.awaitToken(ctx, p)
	if err != nil || fail != nil {
		return nil, fail, timedOut, err
	}
	if result, err = decodeJSON([]byte(out)); err != nil {
		return nil, stateErr(ErrorRuntime, "the callback of task '%s' is not valid JSON: %v", s.name, err), false, nil
	}
	return result, nil, false, nil
}

// endPending ends a callback wait however its task ended: a callback that
// comes later is refused as TaskDoesNotExist.
func (x *Execution) endPending(p *pendingTask) {
	x.mu.Lock()
	p.ended = true
	x.mu.Unlock()
}

// taskPayload is a Task's effective input, its InputPath and Parameters
// applied, as the JSON text the resource is invoked with.
func taskPayload(s *state, raw, ctxObj any) (string, error) {
	eff, err := applyInputPath(s.inputPath, raw, ctxObj)
	if err != nil {
		return "", err
	}
	if s.parameters != nil {
		if eff, err = s.parameters.apply(eff, ctxObj); err != nil {
			return "", err
		}
	}
	payload := encodeJSON(eff)
	if len(payload) > limits.StepFunctionsPayloadBytes {
		return "", stateErr(ErrorDataLimitExceeded, "the input of task '%s' is %d bytes, over the limit of %d", s.name, len(payload), limits.StepFunctionsPayloadBytes)
	}
	return payload, nil
}

// invoke invokes s's resource with payload and returns the result,
// decoded, or what fails the attempt: the task's own TimeoutSeconds passed
// (timedOut), the Invoker's error, or a result that is not JSON. When ctx
// is done the caller ignores what it returns.
func (x *Execution) invoke(ctx context.Context, s *state, resource, payload string, retryCount int) (result any, fail *StateError, timedOut bool) {
	limit := time.Duration(s.timeoutSeconds) * time.Second
	callCtx, cancel := ctx, context.CancelFunc(func() {})
	if s.timeoutSeconds > 0 {
		callCtx, cancel = x.waiter.Bound(ctx, limit)
	}
	defer cancel()
	began := x.clock.Now()
	info := TaskInfo{ExecutionARN: x.arn, State: s.name, RetryCount: retryCount}
	res, err := x.invoker.Invoke(context.WithValue(callCtx, taskInfoKey{}, info), resource, json.RawMessage(payload))
	if s.timeoutSeconds > 0 && ctx.Err() == nil &&
		(errors.Is(callCtx.Err(), context.DeadlineExceeded) || x.clock.Now().Sub(began) > limit) {
		// Step Functions records a task's own timeout with no cause.
		return nil, &StateError{Name: ErrorTimeout}, true
	}
	if err != nil {
		return nil, taskError(err), false
	}
	if len(res) == 0 {
		res = json.RawMessage("null")
	}
	if result, err = decodeJSON(res); err != nil {
		return nil, stateErr(ErrorRuntime, "the result of task '%s' is not valid JSON: %v", s.name, err), false
	}
	return result, nil, false
}

// taskOutput applies a Task's ResultSelector, ResultPath and OutputPath to
// its result.
func taskOutput(s *state, raw, result, ctxObj any) (any, error) {
	var err error
	if s.resultSelector != nil {
		if result, err = s.resultSelector.apply(result, ctxObj); err != nil {
			return nil, err
		}
	}
	out, err := applyResultPath(s.resultPath, raw, result)
	if err != nil {
		return nil, err
	}
	return applyOutputPath(s.outputPath, out, ctxObj)
}
