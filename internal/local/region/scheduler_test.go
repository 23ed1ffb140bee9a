package region

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/local/asl"
)

// TestSchedulerWakesInOrder: time moves only when every participant
// sleeps, to the earliest wake-up, and sleepers wake in deadline order.
func TestSchedulerWakesInOrder(t *testing.T) {
	clk := clock.NewVirtual(epoch0)
	s := newScheduler(clk, nil)
	var mu sync.Mutex
	var woke []time.Duration
	var wg sync.WaitGroup
	s.join() // the test holds time still while the sleepers start
	for _, d := range []time.Duration{30 * time.Second, 10 * time.Second, 20 * time.Second} {
		s.join()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer s.leave()
			require.NoError(t, s.Wait(context.Background(), d))
			mu.Lock()
			woke = append(woke, clk.Now().Sub(epoch0))
			mu.Unlock()
		}()
	}
	assert.Equal(t, epoch0, clk.Now(), "held: no time passes")
	s.leave()
	wg.Wait()
	assert.Equal(t, []time.Duration{10 * time.Second, 20 * time.Second, 30 * time.Second}, woke)
	assert.Equal(t, epoch0.Add(30*time.Second), clk.Now())
}

// TestSchedulerCancel: a sleeper whose ctx ends is busy again, so time does
// not move for the others until it leaves.
func TestSchedulerCancel(t *testing.T) {
	clk := clock.NewVirtual(epoch0)
	s := newScheduler(clk, nil)
	ctx, cancel := context.WithCancel(context.Background())
	s.join() // the canceller
	s.join() // the sleeper
	errc := make(chan error, 1)
	go func() { errc <- s.Wait(ctx, time.Hour) }()
	cancel()
	assert.ErrorIs(t, <-errc, context.Canceled)
	s.join() // a second sleeper
	done := make(chan struct{})
	go func() {
		assert.NoError(t, s.Wait(context.Background(), time.Minute))
		close(done)
	}()
	s.leave() // the canceller goes; the cancelled sleeper is still busy
	select {
	case <-done:
		t.Fatal("time moved while a participant was busy")
	default:
	}
	s.leave() // the cancelled sleeper goes
	<-done
	assert.Equal(t, epoch0.Add(time.Minute), clk.Now())
	assert.NoError(t, s.Wait(context.Background(), 0), "a zero wait returns at once")
}

// fakeWall is a wall clock a test sets, backwards too.
type fakeWall struct {
	mu sync.Mutex
	t  time.Time
}

func (w *fakeWall) Now() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.t
}

func (w *fakeWall) add(d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.t = w.t.Add(d)
}

// TestSchedulerFollowsWallWhileIdle: with a wall clock, the scheduler's
// time follows it while no participant is busy or asleep, stands still
// while one is (discrete-event time), goes on from where it was, and never
// goes back.
func TestSchedulerFollowsWallWhileIdle(t *testing.T) {
	wallStart := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) // unrelated to the virtual clock's start
	tests := []struct {
		name  string
		steps func(s *scheduler, w *fakeWall)
		want  time.Duration // the virtual time passed
	}{
		{"idle, no wall time", func(*scheduler, *fakeWall) {}, 0},
		{"idle: follows the wall", func(_ *scheduler, w *fakeWall) { w.add(90 * time.Second) }, 90 * time.Second},
		{"reading again counts nothing twice", func(s *scheduler, w *fakeWall) {
			w.add(90 * time.Second)
			s.Now()
			s.Now()
			w.add(10 * time.Second)
			s.Now()
		}, 100 * time.Second},
		{"busy: stands still", func(s *scheduler, w *fakeWall) {
			s.join()
			w.add(time.Hour)
		}, 0},
		{"the wall time before a join counts", func(s *scheduler, w *fakeWall) {
			w.add(time.Minute)
			s.join()
			w.add(time.Hour)
		}, time.Minute},
		{"after the last leave, counts from the leave", func(s *scheduler, w *fakeWall) {
			s.join()
			s.join()
			w.add(time.Hour)
			s.leave()
			w.add(time.Hour)
			s.leave()
			w.add(10 * time.Second)
		}, 10 * time.Second},
		{"a wall going back is not followed until it is past where it was", func(s *scheduler, w *fakeWall) {
			w.add(time.Minute)
			s.Now()
			w.add(-time.Hour)
			s.Now()
			w.add(time.Hour + 30*time.Second)
		}, time.Minute + 30*time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clock.NewVirtual(epoch0)
			w := &fakeWall{t: wallStart}
			s := newScheduler(clk, w)
			tt.steps(s, w)
			assert.Equal(t, epoch0.Add(tt.want), s.Now())
			assert.Equal(t, clk.Now(), s.Now(), "one time")
		})
	}

	// Without a wall clock, time stands still while idle.
	s := newScheduler(clock.NewVirtual(epoch0), nil)
	assert.Equal(t, epoch0, s.Now())
}

// TestSchedulerWallThenWaits: wall time passed while idle moves the clock,
// then waits jump from there as discrete-event time.
func TestSchedulerWallThenWaits(t *testing.T) {
	clk := clock.NewVirtual(epoch0)
	w := &fakeWall{t: epoch0}
	s := newScheduler(clk, w)
	w.add(5 * time.Second)
	s.join() // an execution starts
	require.NoError(t, s.Wait(context.Background(), time.Minute))
	assert.Equal(t, epoch0.Add(5*time.Second+time.Minute), s.Now(), "the wait ended a minute after the start")
	w.add(time.Hour) // wall time while it runs does not count
	s.leave()
	assert.Equal(t, epoch0.Add(5*time.Second+time.Minute), s.Now())
	w.add(2 * time.Second)
	assert.Equal(t, epoch0.Add(7*time.Second+time.Minute), s.Now())
}

// TestSchedulerAwait: a participant awaiting an event keeps no time still;
// a wait with a limit times out once everyone else waits too, at the
// limit; a Wake by a busy participant makes the awaiter busy at once, so
// no time passes between the event and the awaiter resuming.
func TestSchedulerAwait(t *testing.T) {
	clk := clock.NewVirtual(epoch0)
	s := newScheduler(clk, nil)

	s.join() // the awaiter
	timed := s.Await(time.Hour)
	assert.ErrorIs(t, timed.Wait(context.Background()), asl.ErrAwaitTimedOut)
	assert.Equal(t, epoch0.Add(time.Hour), clk.Now(), "timed out at its limit")
	assert.False(t, timed.Wake(), "a wait that timed out cannot be woken")

	woken := s.Await(time.Hour)
	leave := s.Fork() // the waker, busy
	errc := make(chan error, 1)
	go func() { errc <- woken.Wait(context.Background()) }()
	s.join() // a sleeper that must not wake before the awaiter resumes and leaves
	slept := make(chan time.Time, 1)
	go func() {
		defer s.leave()
		assert.NoError(t, s.Wait(context.Background(), time.Minute))
		slept <- clk.Now()
	}()
	assert.True(t, woken.Wake())
	leave()
	require.NoError(t, <-errc)
	assert.Equal(t, epoch0.Add(time.Hour), clk.Now(), "woken: the awaiter is busy, no time passed")
	s.leave() // the awaiter leaves: the sleeper's minute passes
	assert.Equal(t, epoch0.Add(time.Hour+time.Minute), <-slept)

	early := s.Await(0)
	assert.True(t, early.Wake(), "woken before it waits")
	s.join()
	require.NoError(t, early.Wait(context.Background()))
	s.leave()
}

// TestSchedulerAwaitFollowsTheWall: with a wall clock, a wait's limit is
// no wake-up the clock jumps to (a Wait state's is): while others sleep,
// the clock jumps to their wake-ups, not to the limit; the limit passes
// as the clock follows the wall clock while idle.
func TestSchedulerAwaitFollowsTheWall(t *testing.T) {
	clk := clock.NewVirtual(epoch0)
	wall := clock.NewVirtual(epoch0)
	s := newScheduler(clk, wall)

	s.join() // the awaiter
	s.join() // another participant, which sleeps a minute
	aw := s.Await(time.Hour)
	errc := make(chan error, 1)
	go func() { errc <- aw.Wait(context.Background()) }()
	require.NoError(t, s.Wait(context.Background(), time.Minute))
	assert.Equal(t, epoch0.Add(time.Minute), clk.Now(), "the clock jumped to the sleeper, not to the wait's limit")
	s.leave() // the other participant leaves; the awaiter still waits

	wall.Advance(2 * time.Hour)
	_ = s.Now() // idle: the clock follows the wall, past the wait's limit
	assert.ErrorIs(t, <-errc, asl.ErrAwaitTimedOut)
	s.leave()
}
