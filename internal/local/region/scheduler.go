package region

import (
	"container/heap"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/local/asl"
)

// scheduler is discrete-event time on a virtual clock: an asl.Waiter shared
// by every execution of a region. It counts the participants that are busy
// (running executions not waiting, holds); when none is, it moves the clock
// to the earliest wake-up and wakes every sleeper due then. A participant
// is counted busy from join until it leaves, except while it sleeps in
// Wait.
//
// With a wall clock, the scheduler is also a clock.Clock whose time follows
// the wall clock while it is idle (no participant and no sleeper: no
// execution runs and no one holds the region): each reading of Now, and
// each join, first moves the virtual clock on by the wall time passed
// since the scheduler last followed it, or since it became idle. Between
// deploys, time so passes as it does for the people who write halt markers
// and start deploys; while executions run, it is discrete-event time from
// there. The virtual clock never goes back: a wall clock that does is
// followed again only once it is past where it was.
type scheduler struct {
	clk *clock.Virtual
	// wall is the clock followed while idle (nil: time stands still then);
	// wallAt is its reading up to which it has been followed.
	wall   clock.Clock
	wallAt time.Time

	mu       sync.Mutex
	busy     int
	sleepers sleeperHeap
	seq      uint64
	// wallWaits are the waits whose limit passes with the wall clock.
	wallWaits []*await
}

var (
	_ asl.Awaiter = (*scheduler)(nil)
	_ clock.Clock = (*scheduler)(nil)
)

type sleeper struct {
	at    time.Time
	seq   uint64 // ties broken by arrival, so wake order is deterministic
	woken chan struct{}
	index int
	// await is the Await the sleeper is the limit of, if any: woken by
	// time, it has timed out.
	await *await
}

// newScheduler returns discrete-event time on clk, following wall while
// idle when wall is not nil.
func newScheduler(clk *clock.Virtual, wall clock.Clock) *scheduler {
	s := &scheduler{clk: clk, wall: wall}
	if wall != nil {
		s.wallAt = wall.Now()
	}
	return s
}

// Now returns the virtual time, having first followed the wall clock if
// the scheduler is idle.
func (s *scheduler) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.followWallLocked()
	return s.clk.Now()
}

// idleLocked reports whether no participant is busy or asleep.
func (s *scheduler) idleLocked() bool { return s.busy == 0 && len(s.sleepers) == 0 }

// followWallLocked moves the clock on by the wall time passed since wallAt,
// when the scheduler is idle and has a wall clock.
func (s *scheduler) followWallLocked() {
	if s.wall == nil || !s.idleLocked() {
		return
	}
	if w := s.wall.Now(); w.After(s.wallAt) {
		s.clk.Advance(w.Sub(s.wallAt))
		s.wallAt = w
	}
	s.expireWallWaitsLocked()
}

// join adds a busy participant (an execution about to start, a hold); the
// time it joins at includes the wall time passed while idle.
func (s *scheduler) join() {
	s.mu.Lock()
	s.followWallLocked()
	s.busy++
	s.mu.Unlock()
}

// leave removes a busy participant and lets time pass if no one else is
// busy. The last one to leave makes the scheduler idle: from then on the
// wall clock's time passes.
func (s *scheduler) leave() {
	s.mu.Lock()
	s.busy--
	s.advanceLocked()
	if s.wall != nil && s.idleLocked() {
		if w := s.wall.Now(); w.After(s.wallAt) {
			s.wallAt = w
		}
	}
	s.mu.Unlock()
}

// Wait sleeps until the clock reaches now+d: the caller stops being busy,
// and time jumps once every participant sleeps. It returns ctx's error when
// ctx is done first; the caller is then busy again.
func (s *scheduler) Wait(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	s.mu.Lock()
	s.seq++
	sl := &sleeper{at: s.clk.Now().Add(d), seq: s.seq, woken: make(chan struct{})}
	heap.Push(&s.sleepers, sl)
	s.busy--
	s.advanceLocked()
	s.mu.Unlock()
	select {
	case <-sl.woken:
		return nil
	case <-ctx.Done():
		s.mu.Lock()
		defer s.mu.Unlock()
		select {
		case <-sl.woken: // woken meanwhile: already counted busy
		default:
			heap.Remove(&s.sleepers, sl.index)
			s.busy++
		}
		return ctx.Err()
	}
}

// Bound returns a cancellable copy of ctx: virtual time does not pass
// during a task (its participant is busy), and the interpreter checks task
// timeouts on the clock when the task returns.
func (s *scheduler) Bound(ctx context.Context, _ time.Duration) (context.Context, context.CancelFunc) {
	return context.WithCancel(ctx)
}

// Fork counts one more busy participant until leave is called.
func (s *scheduler) Fork() (leave func()) {
	s.mu.Lock()
	s.busy++
	s.mu.Unlock()
	var once sync.Once
	return func() { once.Do(s.leave) }
}

// Await begins a wait for an event (a task token's callback, a nested
// execution's end, a Map's iterations): the caller stays busy until it
// calls Wait, and is busy again from the moment Wake is called or the
// limit passes.
//
// With a wall clock (a region that makes its own clock, whose time
// follows the wall clock while idle), a wait's limit is not a wake-up the
// clock jumps to, as a Wait state's is: a wait for a person (an
// approval's task token) would otherwise time out at once. It passes as
// the clock follows the wall clock while idle.
func (s *scheduler) Await(limit time.Duration) asl.Await {
	a := &await{s: s, limit: limit, woken: make(chan struct{})}
	if limit > 0 && s.wall != nil {
		s.mu.Lock()
		a.limit, a.wallAt = 0, s.clk.Now().Add(limit)
		s.wallWaits = append(s.wallWaits, a)
		s.mu.Unlock()
	}
	return a
}

// expireWallWaitsLocked times out the waits whose wall limit the clock
// has reached.
func (s *scheduler) expireWallWaitsLocked() {
	now := s.clk.Now()
	s.wallWaits = slices.DeleteFunc(s.wallWaits, func(a *await) bool {
		switch {
		case a.ended:
			return true
		case now.Before(a.wallAt):
			return false
		}
		a.ended, a.timedOut = true, true
		if a.waiting {
			s.busy++
		}
		close(a.woken)
		return true
	})
}

// await is the scheduler's asl.Await.
type await struct {
	s     *scheduler
	limit time.Duration
	woken chan struct{}
	// Guarded by s.mu.
	waiting, ended, timedOut bool
	sl                       *sleeper
	// wallAt is the limit of a wait whose limit passes with the wall
	// clock (Await).
	wallAt time.Time
}

func (a *await) Wake() bool {
	s := a.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if a.ended {
		return false
	}
	a.ended = true
	if a.waiting {
		if a.sl != nil {
			heap.Remove(&s.sleepers, a.sl.index)
		}
		s.busy++
	}
	close(a.woken)
	return true
}

func (a *await) Wait(ctx context.Context) error {
	s := a.s
	s.mu.Lock()
	if a.ended {
		s.mu.Unlock()
		return a.result()
	}
	a.waiting = true
	if a.limit > 0 {
		s.seq++
		a.sl = &sleeper{at: s.clk.Now().Add(a.limit), seq: s.seq, woken: a.woken, await: a}
		heap.Push(&s.sleepers, a.sl)
	}
	s.busy--
	s.advanceLocked()
	s.followWallLocked()
	s.mu.Unlock()
	select {
	case <-a.woken:
		s.mu.Lock()
		defer s.mu.Unlock()
		return a.result()
	case <-ctx.Done():
		s.mu.Lock()
		defer s.mu.Unlock()
		if !a.ended {
			a.ended = true
			if a.sl != nil {
				heap.Remove(&s.sleepers, a.sl.index)
			}
			s.busy++
			close(a.woken)
		}
		return ctx.Err()
	}
}

// result is how the ended wait ended; s.mu is held.
func (a *await) result() error {
	if a.timedOut {
		return asl.ErrAwaitTimedOut
	}
	return nil
}

// advanceLocked moves the clock to the earliest wake-up and wakes the
// sleepers due, when no participant is busy.
func (s *scheduler) advanceLocked() {
	if s.busy > 0 || len(s.sleepers) == 0 {
		return
	}
	s.clk.Set(s.sleepers[0].at)
	now := s.clk.Now()
	for len(s.sleepers) > 0 && !s.sleepers[0].at.After(now) {
		sl := heap.Pop(&s.sleepers).(*sleeper)
		s.busy++
		if a := sl.await; a != nil {
			a.ended, a.timedOut = true, true
		}
		close(sl.woken)
	}
}

// sleeperHeap orders sleepers by wake-up time, then arrival.
type sleeperHeap []*sleeper

func (h sleeperHeap) Len() int { return len(h) }
func (h sleeperHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h sleeperHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *sleeperHeap) Push(x any) {
	sl := x.(*sleeper)
	sl.index = len(*h)
	*h = append(*h, sl)
}
func (h *sleeperHeap) Pop() any {
	old := *h
	n := len(old)
	sl := old[n-1]
	old[n-1] = nil
	*h = old[:n-1]
	sl.index = -1
	return sl
}
