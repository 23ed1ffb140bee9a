package asl

import (
	"context"
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
