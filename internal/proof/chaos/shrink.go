package chaos

import (
	"context"
	"fmt"
	"slices"
	"time"
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
	if c, ok := before(sc, res, pred); ok {
		// Nothing after the first violation made it: drop it in one go.
		r, err := fails(c)
		if err != nil {
			return sc, res, fmt.Errorf("chaos: shrinking seed %d: %w", sc.Seed, err)
		}
		if r != nil {
			sc, res = c, r
		}
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

// before is sc without the steps due after the first violation of pred
// (false when there are none): a step cannot cause what happened before
// it.
func before(sc Scenario, res *Result, pred string) (Scenario, bool) {
	i := slices.IndexFunc(res.Violations, func(v Violation) bool { return v.Pred == pred })
	if i < 0 || res.Start.IsZero() {
		return sc, false
	}
	at := res.Violations[i].At
	c := sc
	c.Steps = slices.DeleteFunc(slices.Clone(sc.Steps), func(s Step) bool {
		return res.Start.Add(time.Duration(s.At)*time.Second + phase).After(at)
	})
	return c, len(c.Steps) < len(sc.Steps)
}

// has says whether a violation of pred is among r's.
func (r *Result) has(pred string) bool {
	return slices.ContainsFunc(r.Violations, func(v Violation) bool { return v.Pred == pred })
}

// Replay is the command that replays sc.
func Replay(sc Scenario) string {
	return fmt.Sprintf("go run ./internal/proof/chaos/cmd -seed %d -scenario '%s'", sc.Seed, sc.Encode())
}
