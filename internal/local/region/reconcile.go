package region

import (
	"context"
	"encoding/json"
	"time"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/local/asl"
)

// reconcileTick is how often, in wall time, a region with its own clock
// looks whether a reconcile pass is due (ReconcileIfDue).
const reconcileTick = time.Second

// ReconcileIfDue starts a reconcile pass ({"reconcile_pass": {}}, as the
// DeployerStack's schedule does in AWS) when Options.ReconcileEvery has
// passed on the region's clock since the region started or the last
// pass was due, and returns it; nil when none is due, or the region
// schedules none. A region with its own clock calls it every wall
// second; one on a test's clock, when the test says.
func (r *Region) ReconcileIfDue() (*asl.Execution, error) {
	every := r.opts.ReconcileEvery
	if every <= 0 {
		return nil, nil
	}
	now := r.clk.Now()
	r.reconcileMu.Lock()
	if r.nextReconcile.IsZero() {
		r.nextReconcile = r.created.Add(every)
	}
	if now.Before(r.nextReconcile) {
		r.reconcileMu.Unlock()
		return nil, nil
	}
	due := r.nextReconcile
	for !r.nextReconcile.After(now) {
		r.nextReconcile = r.nextReconcile.Add(every)
	}
	r.reconcileMu.Unlock()
	input, _ := json.Marshal(execution.ReconcileInput{})
	x, _, err := r.Start("reconcile-"+due.UTC().Format("20060102T150405Z"), input)
	return x, err
}

// scheduleReconcile calls ReconcileIfDue every reconcileTick of wall time
// until ctx is done: the schedule of a region with its own clock.
func (r *Region) scheduleReconcile(ctx context.Context) {
	t := time.NewTicker(reconcileTick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := r.ReconcileIfDue(); err != nil {
				r.logger.Warn("the reconcile schedule could not start a pass", "error", err.Error())
			}
		}
	}
}
