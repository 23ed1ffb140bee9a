package pacing

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var schedule = Schedule{
	Paces: []Pace{
		{Until: 10 * time.Minute, Every: 5 * time.Second},
		{Until: time.Hour, Every: 10 * time.Second},
		{Until: 6 * time.Hour, Every: time.Minute},
		{Every: 5 * time.Minute},
	},
	Jitter: 0.2,
	Stable: 15 * time.Second,
	Soon:   2 * time.Second,
	Sooner: time.Second,
	Boot:   10 * time.Second,
}

func TestEveryAndChecks(t *testing.T) {
	tests := []struct {
		elapsed time.Duration
		every   time.Duration
		checks  float64
	}{
		{0, 5 * time.Second, 0},
		{time.Minute, 5 * time.Second, 12},
		{10 * time.Minute, 10 * time.Second, 120},
		{time.Hour, time.Minute, 420},
		{6 * time.Hour, 5 * time.Minute, 720},
		{48 * time.Hour, 5 * time.Minute, 1224},
	}
	for _, tt := range tests {
		t.Run(tt.elapsed.String(), func(t *testing.T) {
			assert.Equal(t, tt.every, schedule.Every(tt.elapsed))
			assert.InDelta(t, tt.checks, schedule.Checks(tt.elapsed), 1e-9)
		})
	}
	assert.Equal(t, 1531, schedule.MaxChecks(48*time.Hour))
}

func TestNext(t *testing.T) {
	still := Schedule{Paces: schedule.Paces, Stable: schedule.Stable, Soon: schedule.Soon, Sooner: schedule.Sooner, Boot: schedule.Boot} // no jitter
	tests := []struct {
		name string
		x    Situation
		want int
	}{
		{"first ten minutes", Situation{Elapsed: time.Minute, Checks: 12}, 5},
		{"within the hour", Situation{Elapsed: 30 * time.Minute, Checks: 240}, 10},
		{"late", Situation{Elapsed: 30 * time.Hour, Checks: 900}, 300},
		{"no check before an instance can be ready", Situation{Elapsed: 5 * time.Second, Ready: 72 * time.Second}, 72},
		{"holding its target: no quicker than Stable", Situation{Elapsed: 2 * time.Minute, Checks: 20, Window: 50 * time.Second}, 15},
		{"a target imminent", Situation{Elapsed: 2 * time.Minute, Checks: 20, Imminent: true}, 2},
		{"a target imminent, few below theirs: Sooner", Situation{Elapsed: 2 * time.Minute, Checks: 20, Imminent: true, Few: true}, 1},
		{"few, not imminent: the schedule's pace", Situation{Elapsed: 2 * time.Minute, Checks: 20, Few: true}, 5},
		{"few below theirs for too long", Situation{Elapsed: 9 * time.Minute, Checks: 200, Imminent: true, Few: true}, 5},
		{"instances still booting behind load balancers: no quicker than Boot", Situation{Elapsed: time.Minute, Checks: 10, Booting: true}, 10},
		{"booting, late: the schedule's slower pace", Situation{Elapsed: 30 * time.Minute, Checks: 240, Booting: true}, 10},
		{"booting, no later than the timeout", Situation{Elapsed: time.Minute, Checks: 10, Booting: true, Left: 3 * time.Second}, 3},
		{"a target imminent for too long", Situation{Elapsed: 9 * time.Minute, Checks: 200, Imminent: true}, 5},
		{"the window's end, on time", Situation{Elapsed: 3 * time.Minute, Checks: 22, Window: 12 * time.Second}, 12},
		{"the window's end in the late schedule", Situation{Elapsed: 7 * time.Hour, Checks: 700, Window: 20 * time.Second}, 20},
		{"no room left for the window's end", Situation{Elapsed: 7 * time.Hour, Checks: 930, Window: 20 * time.Second}, 300},
		{"never past the timeout", Situation{Elapsed: 9 * time.Minute, Left: 2 * time.Second, Ready: time.Minute}, 2},
		{"a fraction of a second left", Situation{Elapsed: 9 * time.Minute, Left: 300 * time.Millisecond}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, still.Next(tt.x))
		})
	}
}

// The jitter spreads waits over 80% to 120% of the interval, differently
// for different executions, the same for a replay.
func TestJitter(t *testing.T) {
	seen := map[int]int{}
	for i := range 2000 {
		w := schedule.Next(Situation{Elapsed: 30 * time.Minute, Checks: 7, Seed: fmt.Sprintf("exec-%d", i)})
		require.GreaterOrEqual(t, w, 8)
		require.LessOrEqual(t, w, 12)
		seen[w]++
	}
	assert.Len(t, seen, 5, "every whole second from 8 to 12: %v", seen)
	for w, n := range seen {
		assert.Greater(t, n, 150, "wait %d s", w)
	}
	x := Situation{Elapsed: 30 * time.Minute, Checks: 7, Seed: "exec-1"}
	assert.Equal(t, schedule.Next(x), schedule.Next(x))
}

// TestBudget drives executions through whole timeouts with adversarial
// services: windows that start and end at random, predictions, every
// jitter. None takes more checks than MaxChecks, which stays within the
// history's limit for every timeout up to the longest.
func TestBudget(t *testing.T) {
	const limit = 1700 // limits.MaxHealthChecks
	rng := rand.New(rand.NewPCG(1, 2))
	for _, timeout := range []time.Duration{10 * time.Minute, time.Hour, 3 * time.Hour, 6 * time.Hour, 24 * time.Hour, 48 * time.Hour} {
		require.LessOrEqual(t, schedule.MaxChecks(timeout), limit, "timeout %v", timeout)
		for run := range 20 {
			checks := 0
			elapsed := time.Duration(0)
			for elapsed < timeout {
				x := Situation{Elapsed: elapsed, Left: timeout - elapsed, Checks: checks, Seed: fmt.Sprintf("run-%d", run)}
				switch rng.IntN(4) {
				case 0: // every service holds its target, a window ending soon
					x.Window = time.Duration(rng.IntN(30_000)+1) * time.Millisecond
				case 1:
					x.Ready = time.Duration(rng.IntN(5)) * time.Second
				case 2: // a target imminent, sometimes for few services
					x.Imminent, x.Few = true, rng.IntN(2) == 0
				}
				elapsed += time.Duration(schedule.Next(x)) * time.Second
				checks++
			}
			assert.LessOrEqual(t, checks, schedule.MaxChecks(timeout), "timeout %v, run %d", timeout, run)
		}
	}
}

// Fit stretches a schedule quicker than the history allows.
func TestFit(t *testing.T) {
	quick := Schedule{Paces: []Pace{{Every: time.Second}}, Jitter: 0.2, Stable: time.Second}
	for _, timeout := range []time.Duration{time.Minute, time.Hour, 48 * time.Hour} {
		fit := quick.Fit(timeout, 1700)
		assert.LessOrEqual(t, fit.MaxChecks(timeout), 1700, "timeout %v", timeout)
	}
	assert.Equal(t, quick, quick.Fit(time.Minute, 1700), "a schedule that fits is left as it is")
	assert.Equal(t, schedule.Paces, schedule.Fit(48*time.Hour, 1700).Paces)
}
