package region

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/clock"
)

// TestSchedulerWakesInOrder: time moves only when every participant
// sleeps, to the earliest wake-up, and sleepers wake in deadline order.
func TestSchedulerWakesInOrder(t *testing.T) {
	clk := clock.NewVirtual(epoch0)
	s := newScheduler(clk)
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
	s := newScheduler(clk)
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
