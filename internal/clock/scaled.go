package clock

import (
	"context"
	"errors"
	"time"
)

// Scaled is a clock whose time runs Speed times faster than the wall
// clock, starting at Origin: with Speed 60 a ten-minute wait takes ten
// seconds. It also passes its time (Wait, Bound), so the States Language
// interpreter can run executions on it. It is safe for concurrent use; the
// local region gives one Scaled to the simulated AWS (as its clock) and to
// every execution.
type Scaled struct {
	origin    time.Time
	realStart time.Time
	speed     float64
}

// NewScaled returns Scaled time that reads origin now and runs speed times
// faster than the wall clock. speed must be positive.
func NewScaled(origin time.Time, speed float64) (*Scaled, error) {
	if !(speed > 0) {
		return nil, errors.New("scaled time: speed must be positive")
	}
	return &Scaled{origin: origin, realStart: time.Now(), speed: speed}, nil
}

// Now returns the scaled time.
func (s *Scaled) Now() time.Time {
	return s.origin.Add(time.Duration(float64(time.Since(s.realStart)) * s.speed))
}

func (s *Scaled) real(d time.Duration) time.Duration {
	return time.Duration(float64(d) / s.speed)
}

// Wait sleeps d/Speed of wall time, or until ctx is done.
func (s *Scaled) Wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	return Sleep(ctx, s.real(d))
}

// Bound returns ctx with a deadline d/Speed of wall time away.
func (s *Scaled) Bound(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.real(d))
}

// Sleep waits d of wall time, or until ctx is done, and then returns ctx's
// error. It is how time passes on the wall clock for what waits on
// purpose (Scaled time, the interpreter's Wait states and retries), never
// a way to wait for AWS.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

var _ Clock = (*Scaled)(nil)
