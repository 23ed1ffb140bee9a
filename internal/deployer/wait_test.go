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
		{"maximum timeout", 172800, time.Minute, 87},
		{"one hour", 3600, time.Minute, 5},
		{"three hours", 3 * 3600, time.Minute, 6},
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
