package clock

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVirtualNeverGoesBack(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		step func(*Virtual)
		want time.Time
	}{
		{"advance", func(v *Virtual) { v.Advance(time.Minute) }, start.Add(time.Minute)},
		{"negative advance ignored", func(v *Virtual) { v.Advance(-time.Minute) }, start},
		{"set forward", func(v *Virtual) { v.Set(start.Add(time.Hour)) }, start.Add(time.Hour)},
		{"set backward ignored", func(v *Virtual) { v.Set(start.Add(-time.Hour)) }, start},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := NewVirtual(start)
			tt.step(v)
			assert.Equal(t, tt.want, v.Now())
		})
	}
}

func TestScaled(t *testing.T) {
	t0 := time.Date(2026, 3, 14, 1, 0, 0, 0, time.UTC)
	_, err := NewScaled(t0, 0)
	require.Error(t, err)
	s, err := NewScaled(t0, 1e6)
	require.NoError(t, err)
	require.NoError(t, s.Wait(context.Background(), time.Hour)) // 3.6 ms of wall time
	assert.False(t, s.Now().Before(t0.Add(time.Hour)))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, s.Wait(ctx, time.Hour), context.Canceled)
	assert.ErrorIs(t, s.Wait(ctx, 0), context.Canceled)
	assert.NoError(t, s.Wait(context.Background(), -time.Second))
	bctx, bcancel := s.Bound(context.Background(), time.Second)
	defer bcancel()
	<-bctx.Done()
	assert.ErrorIs(t, bctx.Err(), context.DeadlineExceeded)
}

func TestSleep(t *testing.T) {
	require.NoError(t, Sleep(context.Background(), time.Microsecond))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, Sleep(ctx, time.Hour), context.Canceled)
}
