package deployer

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/fanout"
	"github.com/ferryhq/ferry/internal/fleet"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/tuning"
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
func makeGroups(ctx context.Context, rel *fleet.Release, work []making, budget int, log *slog.Logger) (paced, error) {
	creates := 0
	for i := range work {
		if work[i].group != nil {
			creates++
			work[i].create = creates <= budget
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
		return throttled.wait(left, min(creates, budget))
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
		return throttled.wait(left, creates+n)
	}
	return paced{}, nil
}

// paced is a round of Deploy that left Auto Scaling calls for the next:
// the wait before it in seconds (0: none left), and the error of the
// calls AWS throttled (nil when the budget alone left them).
type paced struct {
	wait      int
	throttled error
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
// pacedWait.
func (t *throttles) wait(left, tried int) (paced, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var err error
	if len(t.errs) > 0 {
		err = errors.Join(t.errs...)
	}
	if len(t.errs) > 0 && len(t.errs) >= tried {
		return paced{}, err
	}
	return paced{wait: pacedWait(left), throttled: err}, nil
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

// pacedWait is the wait, in seconds, before a round of Deploy that makes
// left Auto Scaling calls (up to tuning.AutoScalingCallsPerRound): the
// time the account's bucket takes to refill that many
// (limits.AutoScalingRefill a second), at least a second.
func pacedWait(left int) int {
	next := min(left, tuning.AutoScalingCallsPerRound)
	return max(1, (next+limits.AutoScalingRefill-1)/limits.AutoScalingRefill)
}

// roundBudget is how many Auto Scaling calls this round of Deploy makes
// to create groups and suspend their processes: tuning.AutoScalingCallsPerRound,
// or after a round that paced them (st.Deploy, not done) what the bucket
// refilled during its wait, if less.
func roundBudget(st *execution.State) int {
	budget := tuning.AutoScalingCallsPerRound
	if p := st.Deploy; p != nil && !p.Done && p.WaitSeconds > 0 {
		budget = min(budget, p.WaitSeconds*limits.AutoScalingRefill)
	}
	return budget
}
