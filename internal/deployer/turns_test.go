package deployer

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/fleet"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/local/s3server/s3test"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/tuning"
)

// TestRetirementTakesTurns: every step of CleanUpSuccess takes its turn
// at the account's Auto Scaling calls (lock.Turns) before it calls.
// Beside another retirement's step at the same moment (its turn written
// now), a step makes no Auto Scaling call and waits for its turn, the
// report of the step before carried on; at its turn it goes without
// taking another, and makes tuning.TurnShare calls at most. Alone, no
// step waits for a turn and a step makes as many calls as it needs.
// Either way the release succeeds.
func TestRetirementTakesTurns(t *testing.T) {
	require.Greater(t, 2*tuning.TurnShare, tuning.TurnCalls, "no two shares overlap one second")
	retire := func(t *testing.T, beside, outage bool) (most, waited int) {
		h, r1 := manyServices(t, 12)
		r2 := h.baseRelease()
		r2.Services = r1.Services
		x := h.atSwap(r1, r2)
		turns := naming.TurnsPrefix(account, region)
		if outage {
			h.store.Deny = func(_, key string) bool { return strings.HasPrefix(key, naming.TurnsRoot) }
		}
		for steps := 1; ; steps++ {
			require.LessOrEqual(t, steps, 2*limits.MaxRetireSteps)
			held := x.state.Retire != nil && x.state.Retire.Turn != nil
			if beside && !held {
				h.besideTurn()
			}
			before, keys := len(h.world.CallLog()), len(h.keys(turns))
			prev := x.state.Retire
			require.NoError(t, x.once(execution.TaskCleanUpSuccess))
			n := 0
			for _, c := range h.world.CallLog()[before:] {
				if c.Service == "Auto Scaling" {
					n++
				}
			}
			if held {
				assert.Equal(t, keys, len(h.keys(turns)), "step %d: at its turn, it takes no other", steps)
			}
			if r := x.state.Retire; r.Turn != nil {
				waited++
				assert.Zero(t, n, "step %d: waiting for its turn, no call", steps)
				assert.Equal(t, h.clk.Now().Add(time.Duration(r.WaitSeconds)*time.Second), r.Turn.At, "step %d: its turn comes after its wait", steps)
				assert.GreaterOrEqual(t, r.WaitSeconds, 1)
				if prev != nil {
					assert.Equal(t, prev.Groups, r.Groups, "step %d: the report before carried on", steps)
					assert.Equal(t, prev.Settling, r.Settling)
				}
			}
			most = max(most, n)
			if x.state.Retire.Done {
				break
			}
			h.clk.Advance(time.Duration(x.state.Retire.WaitSeconds) * time.Second)
		}
		o, found, err := h.ledger.GetOutcome(t.Context(), project, config, r2.ReleaseID)
		require.NoError(t, err)
		require.True(t, found)
		assert.Equal(t, execution.EndSuccess, o.End)
		return most, waited
	}
	takesTurns(t, func(t *testing.T, beside bool) (int, int) { return retire(t, beside, false) })

	t.Run("a calendar S3 refuses", func(t *testing.T) {
		most, waited := retire(t, false, true)
		assert.Zero(t, waited, "no turn to wait for: every step goes")
		assert.LessOrEqual(t, most, tuning.TurnShare, "not knowing who else calls, a step makes a share of the calls")
	})
}

// TestRetirementWaitsForTheRefill: a step of CleanUpSuccess with no turn
// overlapping its own seconds still waits when the turns of the seconds
// before spent the account's bucket faster than it refills (turnQueue
// counts runs of seconds, tuning.TurnRefill and tuning.TurnSpan): two
// other turns of tuning.TurnCalls, 6 s and 2 s before, leave no room for
// a third now (108 calls over seven seconds or more, more than 36 + 6 x
// 9). It
// makes no Auto Scaling call and waits for its turn.
func TestRetirementWaitsForTheRefill(t *testing.T) {
	h, r1 := manyServices(t, 12)
	r2 := h.baseRelease()
	r2.Services = r1.Services
	x := h.atSwap(r1, r2)
	now := h.clk.Now().Truncate(time.Second)
	for i, ago := range []time.Duration{6 * time.Second, 2 * time.Second} {
		s3test.Put(t, h.s3, bucket, naming.TurnKey(account, region, naming.StartStamp(now.Add(-ago)), tuning.TurnCalls, fmt.Sprintf("other%d", i)), "")
	}
	before := len(h.world.CallLog())
	require.NoError(t, x.once(execution.TaskCleanUpSuccess))
	for _, c := range h.world.CallLog()[before:] {
		assert.NotEqual(t, "Auto Scaling", c.Service, "waiting for its turn, no call: %s", c.Op)
	}
	r := x.state.Retire
	require.NotNil(t, r)
	require.NotNil(t, r.Turn, "a turn held after the refill")
	assert.Positive(t, r.WaitSeconds)
}

// takesTurns checks what run reports of the most Auto Scaling calls a
// round or step of its task made and of how many waited for their turn,
// alone and beside another's turn at each: alone, none waits and one
// makes more than a share; beside, some wait and none makes more.
func takesTurns(t *testing.T, run func(t *testing.T, beside bool) (most, waited int)) {
	t.Helper()
	most, waited := run(t, false)
	assert.Zero(t, waited, "alone: nothing waits for a turn")
	assert.Greater(t, most, tuning.TurnShare, "alone: the calls it needs")
	most, waited = run(t, true)
	assert.Positive(t, waited)
	assert.LessOrEqual(t, most, tuning.TurnShare, "beside another's turn: a share of the calls")
}

// besideTurn writes another execution's turn of a share at now.
func (h *harness) besideTurn() {
	h.t.Helper()
	s3test.Put(h.t, h.s3, bucket, naming.TurnKey(account, region, naming.StartStamp(h.clk.Now()), tuning.TurnShare, "other"), "")
}

// keys are the keys under prefix in the deployer bucket.
func (h *harness) keys(prefix string) []string {
	h.t.Helper()
	out, err := h.s3.ListObjectsV2(h.t.Context(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	require.NoError(h.t, err)
	var keys []string
	for _, o := range out.Contents {
		keys = append(keys, aws.ToString(o.Key))
	}
	return keys
}

// TestDeployTakesTurns: a later round of Deploy beside deploys on their
// way takes its turn at the account's Auto Scaling calls (lock.Turns).
// Beside another's turn at the same moment, it creates nothing and waits
// for its turn; at its turn it goes without taking another, and makes
// tuning.TurnShare Auto Scaling calls at most, its resolution's listing
// counted in; the rest go in the next rounds, each at its own turn. A
// lone deploy takes no turn: it makes as many calls as the bucket holds
// and waits behind no other's turn (the previous release's last step).
// A first round beside deploys on their way waits its place in their
// share, holding no turn.
func TestDeployTakesTurns(t *testing.T) {
	turns := naming.TurnsPrefix(account, region)
	deploy := func(t *testing.T, beside bool) (most, waited int) {
		h, r := manyServices(t, 30)
		x := h.start(r)
		require.NoError(t, x.steps(upToDeploy[:4]...))
		if beside {
			h.onTheirWay(account, 1, h.clk.Now())
		}
		for rounds := 1; ; rounds++ {
			require.LessOrEqual(t, rounds, 60)
			held := x.state.Deploy != nil && x.state.Deploy.Turn != nil
			if beside && !held {
				h.besideTurn()
			}
			before, keys := len(h.world.CallLog()), len(h.keys(turns))
			require.NoError(t, x.once(execution.TaskDeploy))
			n, made := 0, 0
			for _, c := range h.world.CallLog()[before:] {
				if c.Service == "Auto Scaling" {
					n++
					if c.Op != "DescribeAutoScalingGroups" {
						made++
					}
				}
			}
			if held || !beside {
				assert.Equal(t, keys, len(h.keys(turns)), "round %d: alone or at its turn, it takes no other", rounds)
			}
			p := x.state.Deploy
			if p.Turn != nil {
				waited++
				assert.Zero(t, made, "round %d: waiting for its turn, it makes nothing", rounds)
				assert.Equal(t, h.clk.Now().Add(time.Duration(p.WaitSeconds)*time.Second), p.Turn.At)
				assert.True(t, p.Paced, "a wait for a turn is pace, not throttling")
			}
			most = max(most, n)
			if p.Done {
				break
			}
			h.clk.Advance(time.Duration(p.WaitSeconds) * time.Second)
		}
		_, err := x.untilHealthy(200)
		require.NoError(t, err)
		return most, waited
	}
	takesTurns(t, deploy)

	t.Run("a lone deploy goes beside another's turn", func(t *testing.T) {
		h, r := manyServices(t, 3)
		x := h.start(r)
		require.NoError(t, x.steps(upToDeploy[:4]...))
		h.besideTurn()
		require.NoError(t, x.once(execution.TaskDeploy))
		assert.True(t, x.state.Deploy.Done, "its one round made everything")
		assert.Len(t, h.keys(turns), 1, "it took no turn")
	})
	t.Run("a first round waiting its place holds no turn", func(t *testing.T) {
		h, r := manyServices(t, 3)
		x := h.start(r)
		require.NoError(t, x.steps(upToDeploy[:4]...))
		h.onTheirWay(account, 3, h.clk.Now())
		require.NoError(t, x.once(execution.TaskDeploy))
		require.False(t, x.state.Deploy.Done)
		assert.Nil(t, x.state.Deploy.Turn)
		assert.Empty(t, h.keys(turns))
	})
}

// A turn held is gone for at its moment, within its second: a step whose
// other work took it past its turn's moment goes at once; one past its
// second has lost it and takes one again a second later, never with a
// wait of 0 (a round of Deploy that waits made nothing, and a wait of 0
// would read as done); one still to come is waited for from now.
func TestStepTurnBy(t *testing.T) {
	at := time.Date(2030, 1, 1, 0, 0, 10, 300_000_000, time.UTC)
	held := stepTurn{wait: 3, held: &execution.Turn{At: at, Calls: 20}}
	tests := []struct {
		name string
		now  time.Time
		want stepTurn
	}{
		{"still to come", at.Add(-2100 * time.Millisecond), stepTurn{wait: 3, held: held.held}},
		{"a moment to come", at.Add(-time.Millisecond), stepTurn{wait: 1, held: held.held}},
		{"come", at, stepTurn{now: true, calls: 20}},
		{"within its second", at.Add(999 * time.Millisecond), stepTurn{now: true, calls: 20}},
		{"passed", at.Add(time.Second), stepTurn{wait: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, held.by(tt.now))
		})
	}
	assert.Equal(t, stepTurn{now: true, calls: 5}, stepTurn{now: true, calls: 5}.by(at), "a turn now stays now")
}

// A round's turn is for the calls it makes: its creates and suspends
// within its budget, and the release's scaling policies only when it
// makes and suspends every group.
func TestRoundCalls(t *testing.T) {
	r := &release.Release{ProjectName: project, ConfigName: config, ReleaseID: "r1", Services: map[string]*release.Service{
		"web": {Autoscaling: &release.Autoscaling{Policies: []release.Policy{{Type: policyCPUScaleUp}, {Type: policyCPUScaleDown}}}},
		"api": {},
	}}
	var suspended asgtypes.AutoScalingGroup
	for _, p := range fleet.DeployProcesses {
		suspended.SuspendedProcesses = append(suspended.SuspendedProcesses, asgtypes.SuspendedProcess{ProcessName: aws.String(p)})
	}
	create := making{group: &fleet.Group{}}
	suspend := making{listed: &asgtypes.AutoScalingGroup{}}
	done := making{listed: &suspended}
	tests := []struct {
		name   string
		work   []making
		budget int
		want   int
	}{
		{"creates past the budget", []making{create, create, create}, 2, 2},
		{"creates and suspends past it", []making{create, suspend}, 2, 2},
		{"the last round: its policies too", []making{create, done}, 2, 1 + 1 + 2},
		{"nothing left but the policies", []making{done, done}, 5, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, roundCalls(tt.work, tt.budget, r))
		})
	}
}
