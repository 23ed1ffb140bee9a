package asl

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/ferryhq/ferry/internal/clock"
)

// Waiter lets execution time pass: Wait states and the intervals between
// retries go through it, so an execution never sleeps on the wall clock
// unless its Waiter does.
type Waiter interface {
	// Wait returns once d of execution time has passed, or with ctx's error
	// when ctx is done first.
	Wait(ctx context.Context, d time.Duration) error
	// Bound returns a context that is also done once d of execution time
	// has passed, for Task TimeoutSeconds. A waiter whose time does not
	// pass on its own may return ctx unchanged: the interpreter also
	// checks the elapsed time on its clock when a task returns.
	Bound(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc)
}

// VirtualWaiter passes time on a virtual clock: Wait moves the clock to the
// waiter's deadline at once (the clock never goes back) and never blocks.
// Executions sharing one clock each jump it to their own deadline, so every
// wait lasts at least as long as asked.
type VirtualWaiter struct {
	Clock *clock.Virtual
}

// Wait moves the clock forward by d and returns; it fails only when ctx is
// already done.
func (w VirtualWaiter) Wait(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	w.Clock.Set(w.Clock.Now().Add(d))
	return nil
}

// Bound returns a cancellable copy of ctx: virtual time passes only
// through Wait, and the interpreter checks task timeouts on the clock.
func (w VirtualWaiter) Bound(ctx context.Context, _ time.Duration) (context.Context, context.CancelFunc) {
	return context.WithCancel(ctx)
}

// wallWaiter is the default for the system clock: real sleeps.
type wallWaiter struct{}

func (wallWaiter) Wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	return clock.Sleep(ctx, d)
}

func (wallWaiter) Bound(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, d)
}

var (
	_ Waiter = VirtualWaiter{}
	_ Waiter = (*clock.Scaled)(nil)
	_ Waiter = wallWaiter{}
)

// ErrAwaitTimedOut is what Await.Wait returns when its limit passed before
// it was woken.
var ErrAwaitTimedOut = errors.New("asl: the wait's limit passed before it was woken")

// An Await is one wait for something outside the state being run: a task
// token's answer, a nested execution's end, the iterations of a Map. Begin
// it (Awaiter.Await) before whatever will wake it can happen, then Wait.
type Await interface {
	// Wake ends the wait as woken, whether or not Wait has begun. Whoever
	// calls it must itself be busy (a running task, a hold, an execution
	// that has not yet left), so that on discrete-event time no time passes
	// between the event and the waiter resuming. It reports false, and
	// changes nothing, when the wait had already ended.
	Wake() bool
	// Wait blocks until the wait is woken (nil), until its limit has
	// passed in execution time (ErrAwaitTimedOut), or until ctx is done
	// (ctx's error). While it blocks the caller does not keep time still.
	Wait(ctx context.Context) error
}

// An Awaiter is a Waiter that counts who keeps time still (the region's
// discrete-event scheduler). The interpreter uses its Await and Fork when
// the Waiter has them, and otherwise waits on channels, passing time for a
// limit through Wait.
type Awaiter interface {
	Waiter
	// Await begins a wait for an event, ended by its Wake or once limit
	// (> 0; 0 means none) of execution time has passed.
	Await(limit time.Duration) Await
	// Fork counts one more busy participant (a Map iteration) until leave
	// is called; leave is idempotent.
	Fork() (leave func())
}

// NewAwait begins a wait for an event on w, limited to limit (0: none):
// w's own when w is an Awaiter, else one on channels, whose limit passes
// through w's Wait.
func NewAwait(w Waiter, limit time.Duration) Await {
	if a, ok := w.(Awaiter); ok {
		return a.Await(limit)
	}
	return &chanAwait{w: w, limit: limit, woken: make(chan struct{})}
}

// forkOf counts a new participant on w when it counts them.
func forkOf(w Waiter) (leave func()) {
	if a, ok := w.(Awaiter); ok {
		return a.Fork()
	}
	return func() {}
}

// chanAwait is an Await for a Waiter that counts no participants: woken
// through a channel, timed out through the Waiter's Wait. On a
// VirtualWaiter, whose Wait passes time at once, a wait with a limit that
// is not woken when Wait begins times out at once: there is no one else
// whose time it could wait for.
type chanAwait struct {
	w     Waiter
	limit time.Duration

	mu    sync.Mutex
	ended bool
	woken chan struct{}
}

func (a *chanAwait) Wake() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ended {
		return false
	}
	a.ended = true
	close(a.woken)
	return true
}

func (a *chanAwait) Wait(ctx context.Context) error {
	select {
	case <-a.woken:
		return nil
	default:
	}
	if a.limit <= 0 {
		select {
		case <-a.woken:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	timerCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	timer := make(chan error, 1)
	go func() { timer <- a.w.Wait(timerCtx, a.limit) }()
	select {
	case <-a.woken:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case err := <-timer:
		if err != nil {
			return err
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.ended { // woken as the limit passed
			return nil
		}
		a.ended = true
		return ErrAwaitTimedOut
	}
}
