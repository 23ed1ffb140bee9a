package asl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/clock"
)

// t0 is the start of every test execution's virtual clock.
var t0 = time.Date(2026, 3, 14, 1, 0, 0, 0, time.UTC)

// namedErr is an Invoker error with a States Language error name.
type namedErr struct{ name, cause string }

func (e namedErr) Error() string     { return e.cause }
func (e namedErr) ErrorName() string { return e.name }

// outcome is one scripted result of a task invocation; the same format
// testdata/crosscheck.mjs reads.
type outcome struct {
	Result json.RawMessage            `json:"result,omitempty"`
	Echo   *string                    `json:"echo,omitempty"`
	Merge  map[string]json.RawMessage `json:"merge,omitempty"`
	Error  string                     `json:"error,omitempty"`
	Cause  string                     `json:"cause,omitempty"`
	// Hang never returns: the state's TimeoutSeconds ends the attempt. On
	// the virtual clock the task runs for hangFor.
	Hang bool `json:"hang,omitempty"`
	// Advance moves the virtual clock while the task runs (Go only).
	Advance time.Duration `json:"-"`
}

// hangFor is how long a hanging task runs on the virtual clock: longer than
// any TimeoutSeconds a test sets.
const hangFor = 24 * time.Hour

// scenario scripts every Task state's outcomes by state name; the last
// outcome of a list repeats.
type scenario struct {
	Name     string               `json:"name"`
	Input    json.RawMessage      `json:"input"`
	Outcomes map[string][]outcome `json:"outcomes"`
}

// invocation is one recorded call of a scripted invoker.
type invocation struct {
	State   string
	Retry   int
	At      time.Time
	Payload string
}

type scripted struct {
	sc    scenario
	clock *clock.Virtual
	mu    sync.Mutex
	calls map[string]int
	log   []invocation
	// x is the execution, for the callbacks of tasks that wait for their
	// token (set by started before any task runs).
	x     *Execution
	ready chan struct{}
}

func newScripted(sc scenario, c *clock.Virtual) *scripted {
	return &scripted{sc: sc, clock: c, calls: map[string]int{}, ready: make(chan struct{})}
}

// started gives the scripted invoker its execution, for callbacks.
func (s *scripted) started(x *Execution) {
	s.x = x
	close(s.ready)
}

// callbackToken is the task token in a callback task's payload (ferry's
// AwaitApproval sends it as Payload.task_token), "" for any other task.
func callbackToken(payload json.RawMessage) string {
	var p struct {
		Payload struct {
			TaskToken string `json:"task_token"`
		}
	}
	_ = json.Unmarshal(payload, &p)
	return p.Payload.TaskToken
}

// Invoke answers a task with its next outcome. A callback task (its
// payload carries a task token) is answered through the token, as a
// callback's worker does: its invocation returns at once and the outcome
// goes to SendTaskSuccess or SendTaskFailure.
func (s *scripted) Invoke(ctx context.Context, resource string, payload json.RawMessage) (json.RawMessage, error) {
	out, err := s.outcome(ctx, payload)
	token := callbackToken(payload)
	if token == "" {
		return out, err
	}
	<-s.ready
	if err != nil {
		var named namedErr
		if !errors.As(err, &named) {
			return nil, err
		}
		return json.RawMessage(`{"StatusCode": 200}`), s.x.SendTaskFailure(token, named.name, named.cause)
	}
	return json.RawMessage(`{"StatusCode": 200}`), s.x.SendTaskSuccess(token, out)
}

func (s *scripted) outcome(ctx context.Context, payload json.RawMessage) (json.RawMessage, error) {
	info, ok := TaskFromContext(ctx)
	if !ok {
		return nil, fmt.Errorf("no task info in context")
	}
	s.mu.Lock()
	n := s.calls[info.State]
	s.calls[info.State] = n + 1
	s.log = append(s.log, invocation{State: info.State, Retry: info.RetryCount, At: s.clock.Now(), Payload: string(payload)})
	s.mu.Unlock()
	list := s.sc.Outcomes[info.State]
	if len(list) == 0 {
		return nil, fmt.Errorf("scenario has no outcome for task state %s", info.State)
	}
	o := list[min(n, len(list)-1)]
	if o.Advance > 0 {
		s.clock.Advance(o.Advance)
	}
	switch {
	case o.Hang:
		s.clock.Advance(hangFor)
		return json.RawMessage(`null`), nil
	case o.Error != "":
		return nil, namedErr{o.Error, o.Cause}
	case o.Echo != nil:
		var p map[string]json.RawMessage
		if err := json.Unmarshal(payload, &p); err != nil {
			return nil, err
		}
		base := json.RawMessage(payload)
		if *o.Echo != "" {
			base = p[*o.Echo]
		}
		if o.Merge == nil {
			return base, nil
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(base, &m); err != nil {
			return nil, err
		}
		for k, v := range o.Merge {
			m[k] = v
		}
		return json.Marshal(m)
	}
	return o.Result, nil
}

func (s *scripted) invocations() []invocation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]invocation(nil), s.log...)
}

// runDef parses def and runs it to the end on a virtual clock starting at
// t0.
func runDef(t *testing.T, def, input string, inv Invoker, c *clock.Virtual) *Execution {
	t.Helper()
	m, err := Parse([]byte(def))
	require.NoError(t, err)
	if c == nil {
		c = clock.NewVirtual(t0)
	}
	x, err := Run(context.Background(), m, RunOptions{Input: json.RawMessage(input), Name: "test", Clock: c, Invoker: inv})
	require.NoError(t, err)
	return x
}
