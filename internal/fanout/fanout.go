package fanout

import (
	"container/heap"
	"context"
	"sync"
	"sync/atomic"
	"time"
)

type (
	laneKey    struct{}
	inOrderKey struct{}
)

// InOrder returns ctx with which Each runs its fns one after the other,
// in order, on the calling goroutine, while its Timeline still counts
// them as side by side: a simulation then sees the same calls in the
// same order at every run.
func InOrder(ctx context.Context) context.Context {
	return context.WithValue(ctx, inOrderKey{}, true)
}

// lane is one sequence of calls: the time from the task's start to the
// end of its last call. One goroutine uses a lane at a time.
type lane struct{ at time.Duration }

// Timeline is the time a task's calls take, calls run side by side
// counted once (see Each).
type Timeline struct{ root *lane }

// WithTimeline returns ctx with a new Timeline, which the calls made
// with the returned context spend on.
func WithTimeline(ctx context.Context) (context.Context, *Timeline) {
	tl := &Timeline{root: &lane{}}
	return context.WithValue(ctx, laneKey{}, tl.root), tl
}

// Elapsed is the time the calls took, once the task returned.
func (tl *Timeline) Elapsed() time.Duration { return tl.root.at }

// Offset is how far into its task a call made with ctx is, on ctx's
// Timeline: the time of the calls before it on its lane (a call of Each's
// counted from the fan-out's start); 0 without a Timeline.
func Offset(ctx context.Context) time.Duration {
	if l, ok := ctx.Value(laneKey{}).(*lane); ok {
		return l.at
	}
	return 0
}

// Spend adds d, a call's time, to ctx's Timeline; without one it does
// nothing.
func Spend(ctx context.Context, d time.Duration) {
	if l, ok := ctx.Value(laneKey{}).(*lane); ok {
		l.at += d
	}
}

// Each calls fn for each i from 0 to n-1, at most limit at a time, and
// returns the error of the lowest i that failed (nil when none did).
// Once one has failed, no fn starts that had not: a throttled or refused
// read fails the whole, and the reads after it would only add load (those
// already running finish). fn must be safe to run concurrently with
// itself. With a Timeline on ctx, the calls of each fn
// are timed on a lane of their own, and the time Each adds to ctx's lane
// is the makespan of limit workers taking the fns in order, each from
// the worker free first.
func Each(ctx context.Context, limit, n int, fn func(ctx context.Context, i int) error) error {
	if n <= 0 {
		return nil
	}
	limit = max(1, min(limit, n))
	parent, timed := ctx.Value(laneKey{}).(*lane)
	lanes := make([]*lane, n)
	errs := make([]error, n)
	var start time.Duration
	if timed {
		start = parent.at
	}
	var failed atomic.Bool
	run := func(i int) {
		jctx := ctx
		if timed {
			lanes[i] = &lane{at: start}
			jctx = context.WithValue(ctx, laneKey{}, lanes[i])
		}
		if failed.Load() {
			return
		}
		if errs[i] = fn(jctx, i); errs[i] != nil {
			failed.Store(true)
		}
	}
	if ctx.Value(inOrderKey{}) != nil {
		for i := range n {
			run(i)
		}
	} else {
		parallel(limit, n, run)
	}
	if timed {
		parent.at = start + makespan(lanes, start, limit)
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// parallel runs run(i) for each i from 0 to n-1 on limit goroutines.
func parallel(limit, n int, run func(i int)) {
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range limit {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				run(i)
			}
		}()
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
}

// makespan is the time workers take for lanes' durations (each from
// start) taken in order, each by the worker free first.
func makespan(lanes []*lane, start time.Duration, workers int) time.Duration {
	free := make(durations, workers)
	var end time.Duration
	for _, l := range lanes {
		free[0] += l.at - start
		end = max(end, free[0])
		heap.Fix(&free, 0)
	}
	return end
}

// durations is a min-heap of the times workers are free.
type durations []time.Duration

func (h durations) Len() int           { return len(h) }
func (h durations) Less(i, j int) bool { return h[i] < h[j] }
func (h durations) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *durations) Push(x any)        { *h = append(*h, x.(time.Duration)) }
func (h *durations) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
