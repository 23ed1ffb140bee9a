package deployer

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/tuning"
)

// The wait between health checks: the interval, stretched for long
// timeouts so a whole timeout fits Step Functions' history limit, never
// past the timeout, at least a second.
func TestWaitSeconds(t *testing.T) {
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		timeout int
		elapsed time.Duration
		want    int
	}{
		{"default timeout", 600, time.Minute, 5},
		{"maximum timeout", 172800, time.Minute, 102},
		{"one hour", 3600, time.Minute, 5},
		{"three hours", 3 * 3600, time.Minute, 7},
		{"near the deadline", 600, 598 * time.Second, 2},
		{"past the deadline", 600, 700 * time.Second, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &Deployer{cfg: Config{HealthCheckInterval: tuning.HealthCheckInterval}, clock: clock.NewVirtual(start.Add(tt.elapsed))}
			st := &execution.State{Timeout: tt.timeout}
			req := execution.Request{Execution: execution.Context{StartTime: start}}
			got := d.waitSeconds(st, req)
			assert.Equal(t, tt.want, got)
			assert.LessOrEqual(t, tt.timeout/got, limits.MaxHealthChecks, "checks over the whole timeout")
		})
	}
}

// The wait between bake checks: the interval, stretched for long bakes so
// a whole bake fits its share of Step Functions' history, never past the
// bake's end, at least a second.
func TestBakeWait(t *testing.T) {
	tests := []struct {
		name string
		bake int
		left time.Duration
		want int
	}{
		{"ten minutes", 600, 5 * time.Minute, 5},
		{"the longest", limits.MaxBakeSeconds, time.Hour, 346},
		{"near the end", 600, 2 * time.Second, 2},
		{"a fraction left", 600, 1500 * time.Millisecond, 2},
		{"nothing left", 600, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := bakeWait(tuning.HealthCheckInterval, tt.bake, tt.left)
			assert.Equal(t, tt.want, got)
			whole := bakeWait(tuning.HealthCheckInterval, tt.bake, time.Duration(tt.bake)*time.Second)
			assert.LessOrEqual(t, tt.bake, whole*limits.MaxBakeChecks, "checks over the whole bake")
		})
	}
}

// TestHistoryBudget: the longest execution ferry can run stays within
// Step Functions' history (limits.StepFunctionsHistoryEvents): every
// health check of the longest timeout, every check of the longest bake,
// and then either the longest retirement (a success) or the longest
// rollback and clean-up (a failure), each round of a wait loop recording
// limits.HistoryEventsPerRound events, with room for the tasks that run
// once and their retries.
func TestHistoryBudget(t *testing.T) {
	const once = 200 // the tasks that run once, each retried a few times
	rounds := func(bound, interval time.Duration) int { return int(bound / interval) }
	assert.LessOrEqual(t, rounds(tuning.RetireTimeout, tuning.RetireCheckInterval), limits.MaxRetireSteps)
	assert.LessOrEqual(t, rounds(tuning.RollbackTimeout, tuning.RollbackCheckInterval), limits.MaxRollbackChecks)
	// A canary's steps each add a NextStep round to the health checks.
	checks := limits.MaxHealthChecks + limits.MaxRolloutSteps
	success := checks + limits.MaxBakeChecks + limits.MaxRetireSteps
	failure := checks + limits.MaxBakeChecks + limits.MaxRollbackChecks + rounds(tuning.RetireTimeout, tuning.RetireCheckInterval)
	for name, n := range map[string]int{"success": success, "failure": failure} {
		assert.LessOrEqual(t, n*limits.HistoryEventsPerRound+once, limits.StepFunctionsHistoryEvents, name)
	}
}
