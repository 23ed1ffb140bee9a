package chaos

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSpotInterruptions: EC2 interrupting the Spot instances of a mixed
// Spot fleet while ferry deploys it, and after, is the world taking
// instances away: the checker judges only what ferry's calls do after
// it. With capacity rebalance and without, during CheckHealthy and the
// bake, ferry makes it no worse: no predicate breaks, and the world took
// the interruptions.
func TestSpotInterruptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    Variant
	}{
		{"rebalance, bake", Variant{Spot: true, Bake: 120}},
		{"no rebalance, bake", Variant{Spot: true, NoRebalance: true, Bake: 120}},
		{"rebalance, canary", Variant{Spot: true, Canary: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := tc.v
			sc := Scenario{Seed: 1, Steps: []Step{
				{At: 0, Kind: KindDeploy, R: &v},
				{At: 60, Kind: KindSpot, D: 1},
				{At: 150, Kind: KindSpot, D: 2},
				{At: 400, Kind: KindSpot, D: 1},
				{At: 500, Kind: KindDeploy, R: &Variant{Spot: true, Version: 1}},
				{At: 560, Kind: KindSpot, N: 1, D: 1},
			}}
			res, err := Run(context.Background(), "../../..", sc)
			require.NoError(t, err)
			assertPasses(t, res)
			assert.GreaterOrEqual(t, res.WorldEvents, 2, "the world interrupted Spot instances: %v", res.Ends)
		})
	}
	// The sample draws Spot fleets and interruptions too.
	fleets, events := 0, 0
	for seed := uint64(1); seed <= sampleSeeds; seed++ {
		for _, s := range Generate(seed, Options{Moves: seed%2 == 0}).Steps {
			if s.R != nil && s.R.Spot {
				fleets++
			}
			if s.Kind == KindSpot {
				events++
			}
		}
	}
	assert.Positive(t, fleets)
	assert.Positive(t, events)
	t.Logf("the sample of %d seeds deploys %d Spot fleets and draws %d interruptions", sampleSeeds, fleets, events)
}
