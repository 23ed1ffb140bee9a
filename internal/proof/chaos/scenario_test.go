package chaos

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGenerateIsDeterministic: the same seed makes the same scenario,
// another seed another one; every scenario deploys. Launching hooks are
// drawn on a stream of their own: a seed's other steps are the ones it
// draws without them.
func TestGenerateIsDeterministic(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		a, b := Generate(seed, Options{}), Generate(seed, Options{})
		require.Equal(t, a, b)
		assert.Contains(t, kindsOf(a), KindDeploy, "seed %d", seed)
		assert.True(t, isSortedByAt(a.Steps), "seed %d", seed)
		h := Generate(seed, Options{LaunchHooks: true})
		require.Equal(t, h, Generate(seed, Options{LaunchHooks: true}))
		assert.True(t, isSortedByAt(h.Steps), "seed %d", seed)
		var without []Step
		for _, s := range h.Steps {
			if s.Kind != KindLaunchAction {
				if s.R != nil {
					r := *s.R
					r.Hook, r.Heartbeat = "", 0
					s.R = &r
				}
				without = append(without, s)
			}
		}
		assert.Equal(t, a.Steps, without, "seed %d", seed)
	}
	assert.NotEqual(t, Generate(1, Options{}), Generate(2, Options{}))
}

// TestGenerateCoversEveryKind: over a few hundred seeds, every kind of
// step is drawn, drops of load balancers only with Options.Moves and
// promotions (and their approvals, halts and gate alarm) only with
// Options.Promotions, launching hooks (and operators acting on them) only
// with Options.LaunchHooks, each way its instances treat it.
func TestGenerateCoversEveryKind(t *testing.T) {
	seen, drops, promotions, hooks := map[string]bool{}, map[bool]int{}, map[bool]int{}, map[bool]int{}
	for seed := uint64(1); seed <= 400; seed++ {
		for _, opts := range []Options{{}, {Moves: true}, {Promotions: true}, {LaunchHooks: true}} {
			for _, s := range Generate(seed, opts).Steps {
				seen[s.Kind] = true
				if s.R != nil && s.R.Drop {
					drops[opts.Moves]++
				}
				if s.Kind == KindLaunchAction {
					hooks[opts.LaunchHooks]++
				}
				if s.R != nil && s.R.Hook != "" {
					seen["hook "+s.R.Hook] = true
					hooks[opts.LaunchHooks]++
				}
				if slices.Contains([]string{KindPromote, KindApprove, KindHaltPromote, KindAlarm}, s.Kind) {
					promotions[opts.Promotions]++
				}
			}
		}
	}
	for _, k := range append(slices.Clone(kinds), "hook "+HookComplete, "hook "+HookAbandon, "hook "+HookWait) {
		assert.True(t, seen[k], k)
	}
	assert.Zero(t, hooks[false])
	assert.Positive(t, hooks[true])
	assert.Zero(t, drops[false])
	assert.Positive(t, drops[true])
	assert.Zero(t, promotions[false])
	assert.Positive(t, promotions[true])
}

// TestEncodeDecode: a scenario survives its replay argument, and JSON is
// accepted as well; anything else is refused with what is wrong.
func TestEncodeDecode(t *testing.T) {
	sc := Generate(42, Options{})
	got, err := Decode(sc.Encode())
	require.NoError(t, err)
	assert.Equal(t, sc, got)
	got, err = Decode(`{"seed": 7, "world": {"drain": 20}, "steps": [{"at": 3, "k": "halt"}]}`)
	require.NoError(t, err)
	assert.Equal(t, Scenario{Seed: 7, World: World{Drain: 20}, Steps: []Step{{At: 3, Kind: KindHalt}}}, got)
	for _, bad := range []string{"not base64!", "AAAA", `{"seed": 1, "nope": true}`,
		`{"steps": [{"at": 1, "k": "meteor"}]}`, `{"steps": [{"at": 5, "k": "halt"}, {"at": 1, "k": "halt"}]}`,
		`{"steps": [{"at": 1, "k": "deploy", "r": {"hook": "forget", "hb": 60}}]}`} {
		_, err := Decode(bad)
		assert.ErrorContains(t, err, "chaos: the scenario", bad)
	}
}

func kindsOf(sc Scenario) []string {
	var out []string
	for _, s := range sc.Steps {
		out = append(out, s.Kind)
	}
	return out
}

func isSortedByAt(steps []Step) bool {
	for i := 1; i < len(steps); i++ {
		if steps[i].At < steps[i-1].At {
			return false
		}
	}
	return true
}
