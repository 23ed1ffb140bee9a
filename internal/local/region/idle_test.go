package region

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/store/halt"
)

// newIdleRegion is a region of the deploy-test world on its own
// discrete-event clock (Speed 0, no Clock), as `ferry local --speed 0`
// runs it, following wall while idle; closed when the test ends.
func newIdleRegion(t *testing.T, wall clock.Clock, opts Options) *Region {
	t.Helper()
	opts.World, opts.WallClock = testWorld(t), wall
	r, err := New(context.Background(), opts)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, r.Close()) })
	return r
}

// TestIdleRegionClockFollowsWall: the clock of a region on its own
// discrete-event time starts at the wall clock's now (to the second),
// moves with the wall clock while no execution runs, and stands still
// while someone holds the region.
func TestIdleRegionClockFollowsWall(t *testing.T) {
	wall := clock.NewVirtual(epoch0.Add(400 * time.Millisecond))
	r := newIdleRegion(t, wall, Options{})
	start := r.Clock().Now()
	assert.Equal(t, epoch0, start, "starts at the wall clock's now, to the second")

	wall.Advance(90 * time.Second)
	assert.Equal(t, start.Add(90*time.Second), r.Clock().Now(), "idle: moved with the wall clock")
	assert.Equal(t, start.Add(90*time.Second), r.Info().Now)

	hold := r.Hold()
	wall.Advance(time.Hour)
	assert.Equal(t, start.Add(90*time.Second), r.Clock().Now(), "held: discrete-event time stands still")
	hold()
	wall.Advance(time.Second)
	assert.Equal(t, start.Add(91*time.Second), r.Clock().Now(), "idle again: moves from where it stood")

	_, err := New(context.Background(), Options{World: testWorld(t), Clock: clock.NewVirtual(epoch0), WallClock: wall})
	assert.ErrorContains(t, err, "set Clock or WallClock, not both")
}

// TestHaltMarkerOnIdleRegion is issue #14's idle clock: on `ferry local
// --speed 0` time moved only while executions waited, so a halt marker
// written between deploys had the same LastModified second as a deploy
// started later and halted it, though a marker left over must never stop
// a later deploy (the statemachine help page, "Halting"). Now the idle region follows the wall
// clock: a marker written, then the wall clock on by 5 s, then a deploy:
// the deploy succeeds. A marker in the deploy's own second still halts it
// (fail closed: S3's LastModified has one-second granularity, and halt
// compares it to the execution's start truncated to the second), and so
// does a marker written while the deploy runs.
func TestHaltMarkerOnIdleRegion(t *testing.T) {
	tests := []struct {
		name        string
		before      bool          // write the marker before the deploy
		wallPasses  time.Duration // then move the wall clock on
		during      bool          // write the marker at the deploy's first wait
		wantEnd     string
		wantError   string
		wantStarted time.Duration // the execution's start, from the region's start
	}{
		{"marker left over, deploy 5s later", true, 5 * time.Second, false, execution.EndSuccess, "", 5 * time.Second},
		{"marker left over, deploy an hour later", true, time.Hour, false, execution.EndSuccess, "", time.Hour},
		{"marker in the deploy's second", true, 0, false, execution.EndFailureClean, "HaltError", 0},
		{"marker written during the deploy", false, 5 * time.Second, true, execution.EndFailureClean, "HaltError", 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			wall := clock.NewVirtual(epoch0)
			var r *Region
			var once sync.Once
			putMarker := func() {
				require.NoError(t, halt.New(r.S3(), r.Bucket()).Put(ctx, testProject, testConfig,
					halt.Marker{By: "test", Reason: tt.name, At: r.Clock().Now()}))
			}
			r = newIdleRegion(t, wall, Options{Observer: func(_ string, ev asl.Event) {
				if tt.during && ev.Type == asl.EventWaitStateEntered {
					once.Do(putMarker)
				}
			}})
			start := r.Clock().Now()
			if tt.before {
				putMarker()
			}
			wall.Advance(tt.wallPasses)
			x, err := r.StartRelease(ctx, releaseJSON(t, r.Clock(), "r1"))
			require.NoError(t, err)
			require.NoError(t, x.Wait(ctx))
			d := x.Describe()
			assert.Equal(t, start.Add(tt.wantStarted), d.StartDate)
			assert.Equal(t, tt.wantEnd, last(x.Path()), "%s: %s", d.Error, d.Cause)
			assert.Equal(t, tt.wantError, d.Error)
		})
	}
}
