package chaos

import (
	"context"
	"fmt"
	"slices"
)

// Shrink reduces a failing scenario to a minimal one: it drops one step
// at a time, and then the world's changes, keeping each drop after which
// the scenario still breaks a predicate of the same kind as the first
// violation of res, until no single drop keeps it failing. It returns the
// smallest failing scenario and its result (sc and res when nothing can
// be dropped). Every run is Run's: deterministic, so the result replays.
func Shrink(ctx context.Context, root string, sc Scenario, res *Result) (Scenario, *Result, error) {
	if !res.Failed() {
		return sc, res, nil
	}
	pred := res.Violations[0].Pred
	fails := func(c Scenario) (*Result, error) {
		r, err := Run(ctx, root, c)
		if err != nil || !r.has(pred) {
			return nil, err
		}
		return r, nil
	}
	for changed := true; changed; {
		changed = false
		for i := len(sc.Steps) - 1; i >= 0; i-- {
			c := sc
			c.Steps = slices.Delete(slices.Clone(sc.Steps), i, i+1)
			r, err := fails(c)
			if err != nil {
				return sc, res, fmt.Errorf("chaos: shrinking seed %d: %w", sc.Seed, err)
			}
			if r != nil {
				sc, res, changed = c, r, true
			}
		}
	}
	for _, w := range []World{{CPU: 0, Drain: sc.World.Drain}, {CPU: sc.World.CPU}} {
		if w == sc.World {
			continue
		}
		c := sc
		c.World = w
		if r, err := fails(c); err == nil && r != nil {
			sc, res = c, r
		}
	}
	return sc, res, nil
}

// has says whether a violation of pred is among r's.
func (r *Result) has(pred string) bool {
	return slices.ContainsFunc(r.Violations, func(v Violation) bool { return v.Pred == pred })
}

// Replay is the command that replays sc.
func Replay(sc Scenario) string {
	return fmt.Sprintf("go run ./internal/chaos/cmd -seed %d -scenario '%s'", sc.Seed, sc.Encode())
}
