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
