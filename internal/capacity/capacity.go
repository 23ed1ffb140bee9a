package capacity

import (
	"fmt"
	"math"
)

// epsilon absorbs float64 representation error before rounding, so that
// 5*(1-0.2) = 3.9999999999999996 rounds up to 4, not to 5, and
// 3*(1+0.2) = 3.6000000000000005 still rounds up to 4.
const epsilon = 1e-9

// Bounds are a service's autoscaling settings as the release states them
// (after defaults).
type Bounds struct {
	MinSize int
	MaxSize int
	// Spread is the fraction of extra instances launched and of missing
	// healthy instances tolerated, 0 <= Spread < 1.
	Spread float64
	// MaxTerms is how many terminating instances the deploy tolerates.
	MaxTerms int
}

// Plan is the capacity of one service's new ASG.
type Plan struct {
	// Desired is what the service should run: the previous ASG's desired
	// capacity bounded by MinSize..MaxSize, or MinSize for a new service.
	Desired int
	// Launch is how many instances the new ASG starts with:
	// ceil(Desired*(1+Spread)) capped at MaxSize. It is the new ASG's
	// desired capacity.
	Launch int
	// Healthy is how many healthy instances make the service healthy:
	// ceil(Desired*(1-Spread)), never below MinSize. Rounding up makes a
	// spread of 0 require every desired instance, and makes any spread
	// tolerate only whole missing instances.
	Healthy int
}

// Validate reports whether b is usable: 0 <= MinSize <= MaxSize,
// 0 <= Spread < 1, MaxTerms >= 0.
func (b Bounds) Validate() error {
	switch {
	case b.MinSize < 0:
		return fmt.Errorf("min_size %d is negative", b.MinSize)
	case b.MaxSize < b.MinSize:
		return fmt.Errorf("max_size %d is below min_size %d", b.MaxSize, b.MinSize)
	case math.IsNaN(b.Spread) || b.Spread < 0 || b.Spread >= 1:
		return fmt.Errorf("spread %v is outside [0, 1)", b.Spread)
	case b.MaxTerms < 0:
		return fmt.Errorf("max_terms %d is negative", b.MaxTerms)
	}
	return nil
}

// Compute returns the plan of a service with bounds b. previous is the
// desired capacity of the service's previous ASG; nil means the service is
// new. Compute returns an error only when b is invalid.
func Compute(b Bounds, previous *int) (Plan, error) {
	if err := b.Validate(); err != nil {
		return Plan{}, err
	}
	desired := b.MinSize
	if previous != nil {
		desired = clamp(*previous, b.MinSize, b.MaxSize)
	}
	launch := min(b.MaxSize, roundUp(float64(desired)*(1+b.Spread)))
	healthy := max(b.MinSize, roundUp(float64(desired)*(1-b.Spread)))
	// healthy <= desired <= launch always holds: desired >= MinSize and
	// desired*(1-Spread) <= desired; launch >= desired because desired <=
	// MaxSize. The min guards the invariant against any rounding surprise.
	healthy = min(healthy, launch)
	return Plan{Desired: desired, Launch: launch, Healthy: healthy}, nil
}

// ShouldHalt reports whether terminating instances mean the deploy must
// stop. max_terms is the number of terminations the deploy tolerates, so
// it halts when terminating > MaxTerms. (The design's wording, "greater
// than or equal to max_terms (default 0)", would halt every deploy with the
// default of 0 even with no terminating instance; ferry reads max_terms as
// a tolerance: with the default of 0 the first terminating instance halts.)
func (b Bounds) ShouldHalt(terminating int) bool {
	return terminating > b.MaxTerms
}

func roundUp(x float64) int {
	return int(math.Ceil(x - epsilon))
}

func clamp(v, lo, hi int) int {
	return max(lo, min(v, hi))
}

// Step is one canary step as a release states it: N instances, or N
// percent of the plan's launch count when Percent.
type Step struct {
	N       int
	Percent bool
}

// Stage is the new group at one step of a canary.
type Stage struct {
	// Launch is the group's desired capacity at the step.
	Launch int
	// Healthy is how many healthy instances complete the step:
	// ceil(Launch*(1-Spread)), at least 1, never more than the plan's (the
	// last stage's is the plan's).
	Healthy int
	// MinSize is the group's minimum at the step: the service's, or
	// Launch when lower.
	MinSize int
}

// Stages are the stages of a canary of plan p with bounds b: one per
// step, each step's launch count N (or N% of p.Launch, rounded up) capped
// at p.Launch, and a step that launches no more than the one before it
// left out. The last stage is always the whole plan (p.Launch, p.Healthy,
// b.MinSize), so a rollout without steps is one stage: all at once.
func (p Plan) Stages(b Bounds, steps []Step) []Stage {
	var out []Stage
	for _, s := range steps {
		n := s.N
		if s.Percent {
			n = roundUp(float64(p.Launch) * float64(s.N) / 100)
		}
		n = max(1, min(n, p.Launch))
		if n >= p.Launch || (len(out) > 0 && n <= out[len(out)-1].Launch) {
			continue
		}
		healthy := min(n, p.Healthy, max(1, roundUp(float64(n)*(1-b.Spread))))
		out = append(out, Stage{Launch: n, Healthy: healthy, MinSize: min(b.MinSize, n)})
	}
	return append(out, Stage{Launch: p.Launch, Healthy: p.Healthy, MinSize: b.MinSize})
}
