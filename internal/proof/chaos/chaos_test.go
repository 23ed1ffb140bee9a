package chaos

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The defect classes of issue #35 being fixed on their own branches: a
// scenario that fails today because of one of them is recorded here and
// skipped, naming it, until the fix lands. Nothing else may be skipped.
const (
	// defectRetire: a late rollback force-deletes attached groups, a
	// standby group's capacity is not restored before the release's
	// groups leave, the new fleet is not checked again after the point of
	// no return.
	defectRetire = "issue #35 retire: late rollback / standby capacity not restored / no re-check after the point of no return"
	// defectBalancers: health is judged on the load balancers a group is
	// attached to, not those its release names (a group the world
	// detached looks healthy; the previous group then leaves a load
	// balancer with no one in it); dropped load balancers.
	defectBalancers = "issue #35 balancers: health judged on attached, not release-named, load balancers"
	// defectMove: a region or account move orphans fleets (the generator
	// makes no moves yet: no scenario is skipped for it).
	defectMove = "issue #35 move: region/account moves orphan fleets"
)

// regression is a scenario that once failed: its seed, its shrunk
// scenario (Encode), and what broke it: a known defect of issue #35
// (skipped until its branch lands), a ferry bug found here (bug: the
// test asserts it still breaks the predicate, and fails once it no longer
// does, so the entry is cleared with the fix), or neither (a harness bug,
// fixed: the scenario must pass).
type regression struct {
	name     string
	seed     uint64
	scenario string
	defect   string
	bug      string
}

// sampleSeeds are the seeds make test runs (TestSample).
const sampleSeeds = 60

// TestSample runs a fixed sample of seeds, each of which must break no
// predicate (the even ones generated with moves, the odd ones with
// promotions, all with launching hooks; make chaos generates all); a
// failure prints the shrunk scenario's replay command. A seed
// of the sample whose scenario is a regression of a known defect or bug is
// skipped with it (TestRegressions holds it to account).
func TestSample(t *testing.T) {
	known := map[uint64]string{}
	for _, r := range regressions {
		if r.defect != "" || r.bug != "" {
			known[r.seed] = r.defect + r.bug
		}
	}
	for seed := uint64(1); seed <= sampleSeeds; seed++ {
		t.Run(seedName(seed), func(t *testing.T) {
			t.Parallel()
			if d := known[seed]; d != "" {
				t.Skip(d)
			}
			res, err := Run(context.Background(), "../../..", Generate(seed, Options{Moves: seed%2 == 0, Promotions: seed%2 == 1, LaunchHooks: true}))
			require.NoError(t, err)
			assertPasses(t, res)
		})
	}
}

// TestRegressions replays every scenario that ever failed.
func TestRegressions(t *testing.T) {
	for _, r := range regressions {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			if r.defect != "" {
				t.Skip(r.defect)
			}
			sc, err := Decode(r.scenario)
			require.NoError(t, err)
			require.Equal(t, r.seed, sc.Seed)
			res, err := Run(context.Background(), "../../..", sc)
			require.NoError(t, err)
			if r.bug != "" {
				require.True(t, res.Failed(), "no longer breaks a predicate (%s): fixed? clear this entry's bug", r.bug)
				return
			}
			assertPasses(t, res)
		})
	}
}

// assertPasses fails the test when res broke a predicate, with the
// command that replays its shrunk scenario.
func assertPasses(t *testing.T, res *Result) {
	t.Helper()
	if !res.Failed() {
		return
	}
	sc, shrunk, err := Shrink(context.Background(), "../../..", res.Scenario, res)
	require.NoError(t, err)
	for _, v := range shrunk.Violations {
		t.Errorf("%s", v)
	}
	t.Errorf("replay: %s", Replay(sc))
}

func seedName(seed uint64) string { return "seed_" + strconv.FormatUint(seed, 10) }

// TestRunIsDeterministic: the same scenario, run twice, makes the same
// executions end the same way, the checker judge the same number of
// changes and the same violations.
func TestRunIsDeterministic(t *testing.T) {
	for _, seed := range []uint64{3, 9, 76} {
		sc := Generate(seed, Options{})
		a, err := Run(context.Background(), "../../..", sc)
		require.NoError(t, err)
		b, err := Run(context.Background(), "../../..", sc)
		require.NoError(t, err)
		assert.Equal(t, a.Ends, b.Ends, "seed %d", seed)
		assert.Equal(t, a.Changes, b.Changes, "seed %d", seed)
		assert.Equal(t, a.Violations, b.Violations, "seed %d", seed)
		assert.Equal(t, a.WorldEvents, b.WorldEvents, "seed %d", seed)
	}
}

// TestShrinkFindsTheMinimalScenario: a seed failing because of a known
// defect shrinks to fewer steps that still break the same predicate, and
// its replay command decodes to that scenario. (It stops proving anything
// once the defect is fixed: it then skips, saying so.)
func TestShrinkFindsTheMinimalScenario(t *testing.T) {
	sc := Generate(9, Options{})
	res, err := Run(context.Background(), "../../..", sc)
	require.NoError(t, err)
	if !res.Failed() {
		t.Skip("seed 9 no longer fails: the defect it found is fixed; pick another failing seed")
	}
	min, shrunk, err := Shrink(context.Background(), "../../..", sc, res)
	require.NoError(t, err)
	assert.Less(t, len(min.Steps), len(sc.Steps))
	assert.True(t, shrunk.has(res.Violations[0].Pred))
	got, err := Decode(Replay(min)[len("go run ./internal/proof/chaos/cmd -seed 9 -scenario '") : len(Replay(min))-1])
	require.NoError(t, err)
	assert.Equal(t, min, got)
}

// TestOperationEndsAreChecked: (c) and (d) are checked at the end of
// each operation the scenario makes when nothing else runs (each of two
// releases apart, and the reconcile pass), not only once the run is over;
// and PredStable judges each release's swap (a harness that told the
// checker no window would judge none).
func TestOperationEndsAreChecked(t *testing.T) {
	sc := Scenario{Seed: 1, Steps: []Step{{At: 0, Kind: KindDeploy, R: &Variant{}}, {At: 900, Kind: KindDeploy, R: &Variant{Version: 1}}, {At: 1800, Kind: KindReconcile}}}
	res, err := Run(context.Background(), "../../..", sc)
	require.NoError(t, err)
	assertPasses(t, res)
	assert.Equal(t, 3, res.EndChecks)
	assert.Equal(t, 2, res.Swaps, "each release's swap judged against its stability window")
}

// TestPromotionIsFollowed: a promotion through qa then production, its
// approval given, deploys both stages through the real promotion branch
// and passes every predicate, the checker following each stage's deploy
// as its config's release (else (d) would find production's current
// record naming a release the model never saw serve); without the
// approval the operator halts it after giveUp, and it ends FailureClean
// with production never deployed.
func TestPromotionIsFollowed(t *testing.T) {
	promote := Step{At: 0, Kind: KindPromote, D: 60, P: GateApproval, R: &Variant{Version: 1}}
	for _, tc := range []struct {
		name       string
		steps      []Step
		end        string
		production bool
		// swaps are the stage deploys' swaps PredStable judged:
		// production's (qa serves nothing before its first release).
		swaps int
	}{
		{"approved", []Step{promote, {At: 400, Kind: KindApprove}}, "Success", true, 1},
		{"never approved", []Step{promote}, "FailureClean", false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Run(context.Background(), "../../..", Scenario{Seed: 1, Steps: tc.steps})
			require.NoError(t, err)
			assertPasses(t, res)
			var promotion, qa, production string
			for name, end := range res.Ends {
				switch {
				case strings.HasSuffix(name, "-promotion"):
					promotion = end
				case strings.HasPrefix(name, "acme_shop_qa_"):
					qa = end
				case strings.HasPrefix(name, "acme_shop_production_"):
					production = end
				}
			}
			assert.Equal(t, tc.end, promotion)
			assert.Equal(t, "Success", qa)
			assert.Equal(t, tc.swaps, res.Swaps, "each stage's swap judged against its stability window")
			if tc.production {
				assert.Equal(t, "Success", production)
			} else {
				assert.Empty(t, production)
			}
		})
	}
}
