package deployer

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/fanout"
	"github.com/ferryhq/ferry/internal/fleet"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/tuning"
	"github.com/ferryhq/ferry/internal/tuning/pacing"
)

// making is what a round of Deploy makes for one service.
type making struct {
	// name names the service's group and launch template.
	name string
	// template is its launch template, nil when AWS shows it made.
	template *fleet.Template
	// group is its group, nil when listed as this release's (listed).
	group  *fleet.Group
	listed *asgtypes.AutoScalingGroup
	// create says this round creates group (makeGroups' budget).
	create bool
	// logArgs say what the group is sized for, for the log.
	logArgs []any
}

// makeGroups makes what work lacks, in the order that launches instances
// first: tuning.MakeParallel services at a time (a round's budget side by
// side), each service's launch template, then its group
// (CreateAutoScalingGroup launches its instances, with its lifecycle
// hooks, tags, load balancers and target groups given in the same call); then, once every group is created,
// suspends the fleet.DeployProcesses of those not listed with them
// suspended, as many at a time. It makes at most budget Auto Scaling
// calls, creates first; a create or a suspend AWS throttled through the
// SDK's retries, in a round that made something, is left like the rest
// for the next round. When anything is left it returns the round's
// wait in seconds before the next round (pacedWait), which makes it,
// and the throttling error of the calls it left so (the round counts
// as throttled); a zero round once everything is made. A round that made
// nothing because AWS throttled it returns the throttling error as its
// error (a throttled round, deploy's progress).
func makeGroups(ctx context.Context, rel *fleet.Release, work []making, budget int, s share, log *slog.Logger) (paced, error) {
	creates := 0
	for i := range work {
		if work[i].group != nil {
			creates++
			work[i].create = creates <= budget
			if !work[i].create && s.k > 0 {
				work[i].template = nil // made with its group: EC2's bucket is shared too
			}
		}
	}
	var throttled throttles
	err := fanout.Each(ctx, tuning.MakeParallel, len(work), func(ctx context.Context, i int) error {
		return throttled.keep(work[i].make(ctx, rel, log))
	})
	if err != nil {
		return paced{}, err
	}
	left := max(0, creates-budget) + throttled.n()
	if left > 0 {
		return throttled.wait(left, min(creates, budget), s.creating())
	}
	var suspend []making
	for _, m := range work {
		if m.listed == nil || !fleet.DeploySuspended(*m.listed) {
			suspend = append(suspend, m)
		}
	}
	n := min(len(suspend), budget-creates)
	err = fanout.Each(ctx, tuning.MakeParallel, n, func(ctx context.Context, i int) error {
		return throttled.keep(rel.Suspend(ctx, suspend[i].name, suspend[i].listed))
	})
	if err != nil {
		return paced{}, err
	}
	if left = len(suspend) - n + throttled.n(); left > 0 {
		return throttled.wait(left, creates+n, s)
	}
	return paced{calls: min(creates, budget) + n}, nil
}

// paced is a round of Deploy that left Auto Scaling calls for the next:
// the wait before it in seconds (0: none left), and the error of the
// calls AWS throttled (nil when the budget alone left them).
type paced struct {
	wait      int
	throttled error
	// turn is the turn at the account's Auto Scaling calls the next
	// round holds (the round waited for it, making nothing).
	turn *execution.Turn
	// calls are the Auto Scaling calls a round that made everything
	// made: creates and suspends.
	calls int
}

// throttles are the calls of a round's fan-out AWS throttled through the
// SDK's retries (cloud.Throttled), kept aside so the others go on.
type throttles struct {
	mu   sync.Mutex
	errs []error
}

// keep returns err, or nil when AWS throttled it (kept).
func (t *throttles) keep(err error) error {
	if !cloud.Throttled(err) {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.errs = append(t.errs, err)
	return nil
}

func (t *throttles) n() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.errs)
}

// wait is the round that leaves left calls for the next after trying
// tried (those AWS throttled included): the throttling error when every
// one it tried was throttled (nothing made), else paced after
// s.wait.
func (t *throttles) wait(left, tried int, s share) (paced, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var err error
	if len(t.errs) > 0 {
		err = errors.Join(t.errs...)
	}
	if len(t.errs) > 0 && len(t.errs) >= tried {
		return paced{}, err
	}
	return paced{wait: s.wait(left), throttled: err}, nil
}

// make creates m's launch template and, when this round creates it, its
// group.
func (m making) make(ctx context.Context, rel *fleet.Release, log *slog.Logger) error {
	if m.template != nil {
		if err := rel.CreateTemplate(ctx, *m.template); err != nil {
			return err
		}
		log.Info("launch template created", "asg", m.name)
	}
	if m.group == nil || !m.create {
		return nil
	}
	if err := rel.CreateGroup(ctx, *m.group); err != nil {
		return err
	}
	log.Info("auto scaling group created", append([]any{"asg", m.name}, m.logArgs...)...)
	return nil
}

// share is a round of Deploy's part of its account's one Auto Scaling
// bucket (limits.AutoScalingBurst refilled at limits.AutoScalingRefill a
// second), which every deploy to the account and region spends: k other
// deploys are on their way beside it (Deployer.underway), and each takes
// a (k+1)-th of the refill.
type share struct {
	k int
	// seed and checks jitter the wait: deploys that started together do
	// not make their rounds together.
	seed   string
	checks int
	// refill is the slowest refill of the buckets the next round spends
	// beside Auto Scaling's (0: none slower).
	refill int
}

// shareOf is the share of a deploy's round with k others on their way,
// its wait jittered by seed and checks.
func shareOf(k int, seed string, checks int) share {
	return share{k: k, seed: seed, checks: checks}
}

// perRound is how many Auto Scaling calls a round makes to create groups
// and suspend their processes: tuning.AutoScalingCallsPerRound alone,
// its (k+1)-th beside k others, never less than a second's refill of
// the slower bucket a round spends (EC2's CreateLaunchTemplate,
// limits.EC2MutateRefill): a round's own listing costs calls too, and
// fewer a round would spend more of the buckets on listings than on
// groups.
func (s share) perRound() int {
	return max(limits.EC2MutateRefill, tuning.AutoScalingCallsPerRound/(s.k+1))
}

// budget is how many Auto Scaling calls this round makes to create
// groups and suspend their processes: perRound, or, alone, after a round
// that paced them (st.Deploy, not done), what the bucket refilled during
// its wait, if less. A deploy's first round alone (none before it, no
// other deploy on its way) makes the whole bucket's
// (limits.AutoScalingBurst): the bucket had the release's checks' time to
// refill, and the token of the round's own listing of the groups is back
// before its creates go (a tenth of a second: the resolution's reads
// after the listing, the write of the release's intent and each group's
// launch template take longer). A release of 50 services so leaves 10
// creates for the next round, a second's refill, not 12 (two seconds'):
// its last launches come a second sooner.
func (s share) budget(st *execution.State) int {
	if s.k == 0 && st.Deploy == nil {
		return limits.AutoScalingBurst
	}
	budget := s.perRound()
	if p := st.Deploy; s.k == 0 && p != nil && !p.Done && p.WaitSeconds > 0 {
		budget = min(budget, p.WaitSeconds*limits.AutoScalingRefill)
	}
	return budget
}

// creating is s for a next round that creates groups: beside others,
// each with its launch template, whose bucket (EC2's CreateLaunchTemplate,
// limits.EC2MutateRefill a second) refills slower than Auto Scaling's.
func (s share) creating() share {
	s.refill = limits.EC2MutateRefill
	return s
}

// first is the wait, in seconds, before the first round of a deploy
// beside k others (k > 0) makes anything: anywhere from a second to
// twice the time its (k+1)-th of the refill takes to bring back a round's
// creates (creating; twice: the deploys that start after it are not
// counted yet, and the first rounds of all of them spend what the ones
// before them leave), drawn by the seed, so that deploys that started together
// (one every tuning.StartEvery, about a start's Auto Scaling calls apart)
// do not all make their first round, each a round's creates and launch
// templates, within moments of each other.
func (s share) first() int {
	every := time.Duration(s.perRound()*(s.k+1)) * time.Second / limits.EC2MutateRefill
	return pacing.Schedule{Paces: []pacing.Pace{{Every: every}}, Jitter: 1}.Next(pacing.Situation{Checks: s.checks, Seed: s.seed})
}

// wait is the wait, in seconds, before a round of Deploy that makes
// left Auto Scaling calls (up to perRound): the time the account's
// bucket takes to refill that many (limits.AutoScalingRefill a second),
// at least a second; beside k others, the time its (k+1)-th of the
// slowest refill the round spends takes (creating), jittered by half
// either way.
func (s share) wait(left int) int {
	next := min(left, s.perRound())
	if s.k == 0 {
		return max(1, (next+limits.AutoScalingRefill-1)/limits.AutoScalingRefill)
	}
	refill := limits.AutoScalingRefill
	if s.refill > 0 {
		refill = min(refill, s.refill)
	}
	every := time.Duration(next*(s.k+1)) * time.Second / time.Duration(refill)
	return pacing.Schedule{Paces: []pacing.Pace{{Every: every}}, Jitter: tuning.ShareJitter}.Next(pacing.Situation{Checks: s.checks, Seed: s.seed})
}
