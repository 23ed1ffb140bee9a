package fanout

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const call = 30 * time.Millisecond

// Calls in sequence add up; calls side by side count once per worker's
// turn; nested fan-outs compose; the result does not depend on which
// goroutine ran first.
func TestTimeline(t *testing.T) {
	tests := []struct {
		name string
		task func(ctx context.Context) error
		want time.Duration
	}{
		{"three calls in sequence", func(ctx context.Context) error {
			for range 3 {
				Spend(ctx, call)
			}
			return nil
		}, 3 * call},
		{"50 calls, 10 at a time", func(ctx context.Context) error {
			return Each(ctx, 10, 50, func(ctx context.Context, _ int) error { Spend(ctx, call); return nil })
		}, 5 * call},
		{"a call, then 3 side by side, then a call", func(ctx context.Context) error {
			Spend(ctx, call)
			err := Each(ctx, 8, 3, func(ctx context.Context, _ int) error { Spend(ctx, call); return nil })
			Spend(ctx, call)
			return err
		}, 3 * call},
		{"uneven work: the longest worker", func(ctx context.Context) error {
			return Each(ctx, 2, 3, func(ctx context.Context, i int) error {
				for range []int{4, 1, 1}[i] {
					Spend(ctx, call)
				}
				return nil
			})
		}, 4 * call},
		{"nested", func(ctx context.Context) error {
			return Each(ctx, 4, 4, func(ctx context.Context, _ int) error {
				return Each(ctx, 2, 4, func(ctx context.Context, _ int) error { Spend(ctx, call); return nil })
			})
		}, 2 * call},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for run := range 20 {
				ctx, tl := WithTimeline(context.Background())
				if run%2 == 1 {
					ctx = InOrder(ctx)
				}
				require.NoError(t, tt.task(ctx))
				assert.Equal(t, tt.want, tl.Elapsed())
			}
		})
	}
}

// Each runs the fns at most limit at a time, starts none once one has
// failed, and returns the error of the lowest index; without a Timeline
// Spend does nothing.
func TestEach(t *testing.T) {
	var running, most atomic.Int32
	err := Each(context.Background(), 3, 20, func(ctx context.Context, i int) error {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		Spend(ctx, call)
		if i%7 == 5 {
			return fmt.Errorf("job %d", i)
		}
		return nil
	})
	// Which jobs a failure keeps from starting depends on the workers'
	// timing; a failure is returned, and the lowest-numbered that ran.
	assert.ErrorContains(t, err, "job ")
	assert.LessOrEqual(t, most.Load(), int32(3))

	// In order, the first failure ends it.
	var order []int
	err = Each(InOrder(context.Background()), 3, 20, func(_ context.Context, i int) error {
		order = append(order, i)
		if i == 2 {
			return fmt.Errorf("job %d", i)
		}
		return nil
	})
	assert.EqualError(t, err, "job 2")
	assert.Equal(t, []int{0, 1, 2}, order)
	assert.NoError(t, Each(context.Background(), 3, 0, func(context.Context, int) error { return errors.New("never") }))
}

// InOrder runs the fns one after the other, in order.
func TestInOrder(t *testing.T) {
	var order []int
	require.NoError(t, Each(InOrder(context.Background()), 4, 6, func(_ context.Context, i int) error {
		order = append(order, i)
		return nil
	}))
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5}, order)
}

// Offset is where a call is in its task: after the calls before it, a
// fan-out's calls counted from the fan-out's start.
func TestOffset(t *testing.T) {
	assert.Zero(t, Offset(context.Background()))
	ctx, _ := WithTimeline(context.Background())
	Spend(ctx, call)
	assert.Equal(t, call, Offset(ctx))
	var seen [3]time.Duration
	require.NoError(t, Each(InOrder(ctx), 3, 3, func(ctx context.Context, i int) error {
		seen[i] = Offset(ctx)
		Spend(ctx, time.Duration(i+1)*call)
		return nil
	}))
	assert.Equal(t, [3]time.Duration{call, call, call}, seen)
	assert.Equal(t, 4*call, Offset(ctx), "the fan-out took its longest lane")
}
