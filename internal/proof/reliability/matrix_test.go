package reliability

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
)

// TestCleanRun: the reference deploy succeeds without a violation, and its
// call sequence covers every task of a successful deploy, a canary's step
// included.
func TestCleanRun(t *testing.T) {
	res := clean(t)
	require.Equal(t, execution.EndSuccess, res.End, "%s: %s", res.Error, res.Cause)
	assert.Empty(t, res.Violations)
	var tasks []string
	for _, inv := range res.Invocations {
		if len(tasks) == 0 || tasks[len(tasks)-1] != inv.Task {
			tasks = append(tasks, inv.Task)
		}
	}
	assert.Equal(t, []string{execution.TaskValidate, execution.TaskLock, execution.TaskValidateResources, execution.TaskPublish,
		execution.TaskDeploy, execution.TaskCheckHealthy, execution.TaskNextStep, execution.TaskCheckHealthy,
		execution.TaskBake, execution.TaskCleanUpSuccess}, tasks, "the reference's web is a canary: one step, then the whole group")
	for _, c := range res.Calls {
		assert.NotZero(t, c.Invocation, "call %s belongs to no invocation", c)
	}
	assert.Greater(t, countAWS(res.Calls), 0)
	assert.Greater(t, len(res.Calls)-countAWS(res.Calls), 0, "S3 calls are recorded")
}

// TestMatrixSample runs a deterministic sample of every family of the
// matrix and asserts zero violations. The full matrix is make reliability.
func TestMatrixSample(t *testing.T) {
	if testing.Short() {
		t.Skip("the matrix sample deploys hundreds of times")
	}
	m := runSample(t, reference(t), 3, Families())
	kinds := map[Kind]bool{}
	behaviours := map[Behaviour]bool{}
	for _, e := range m.Entries {
		for _, f := range e.Schedule.Faults {
			kinds[f.Kind] = true
		}
		if e.Schedule.Behaviour != "" {
			behaviours[e.Schedule.Behaviour] = true
		}
	}
	assert.Len(t, kinds, len(Kinds()), "the sample has every fault kind: %v", kinds)
	assert.Len(t, behaviours, len(Behaviours()), "the sample has every behaviour: %v", behaviours)
}

// runSample runs every sampleEvery-th schedule of each family of s's
// matrix, from offset, logs the report and asserts no violation and
// schedules of each of families.
func runSample(t *testing.T, s *Scenario, offset int, families []Family) *Matrix {
	t.Helper()
	m, err := s.RunMatrix(context.Background(), MatrixOptions{Every: sampleEvery, Offset: offset, Workers: 2})
	require.NoError(t, err)
	var out bytes.Buffer
	m.Report(&out)
	t.Log("\n" + out.String())
	assert.Empty(t, m.Violations())
	for _, f := range families {
		assert.Positive(t, m.Counts()[f], "the sample has %s schedules", f)
	}
	return m
}

// sampleEvery is the sample's stride: every 23rd schedule of each family
// and kind.
const sampleEvery = 23

// TestSchedules: the matrix has every family the safety issue asks for,
// and more than 3000 schedules.
func TestSchedules(t *testing.T) {
	b := Bases{Success: clean(t), Failure: failed(t), Rollback: rolledBack(t)}
	counts := map[Family]int{}
	kinds := map[Kind]bool{}
	behaviours := map[Behaviour]bool{}
	for _, s := range b.Schedules() {
		counts[s.Family]++
		for _, f := range s.Faults {
			kinds[f.Kind] = true
		}
		if s.Behaviour != "" {
			behaviours[s.Behaviour] = true
		}
	}
	total := 0
	for _, f := range Families() {
		assert.Positive(t, counts[f], f)
		total += counts[f]
	}
	assert.GreaterOrEqual(t, total, 3000)
	for _, k := range Kinds() {
		assert.True(t, kinds[k], "kind %s", k)
	}
	for _, bh := range Behaviours() {
		assert.True(t, behaviours[bh], "behaviour %s", bh)
	}
}

// TestTargetsTheCall: a fault made from index i fails exactly the clean
// run's call i (the run follows the clean calls up to it).
func TestTargetsTheCall(t *testing.T) {
	res := clean(t)
	sc := reference(t)
	for _, i := range []int{0, callIndex(t, res, execution.TaskDeploy, "CreateAutoScalingGroup", "", 1), len(res.Calls) - 1} {
		f, err := Target(res, i, Throttling)
		require.NoError(t, err)
		got, err := sc.Run(context.Background(), RunOptions{Schedule: One(f)})
		require.NoError(t, err)
		assert.True(t, got.Fired, "fault %s", f)
		assert.Equal(t, res.Calls[i].Task, got.FiredIn)
		require.Greater(t, len(got.Calls), i)
		assert.Equal(t, res.Calls[:i+1], got.Calls[:i+1], "the calls up to the fault are the clean run's")
		assert.Equal(t, execution.EndSuccess, got.End, "a throttled call is retried")
		assert.Empty(t, got.Violations)
	}
	_, err := Target(res, len(res.Calls), Throttling)
	assert.Error(t, err)
}

// TestFaultsFound are the runs of the matrix that showed bugs: each must
// end without a violation. The comments say what the matrix saw.
func TestFaultsFound(t *testing.T) {
	res := clean(t)
	sc := reference(t)
	id := res.ReleaseID
	const p, c = "acme/shop", "production"
	tests := []struct {
		name string
		kind Kind
		idx  int
		// found is what the matrix showed before the fix (or now).
		found string
	}{
		{"lock: invocation dies after taking the lock", LambdaDied,
			callIndex(t, res, execution.TaskLock, "PutObject", naming.LockKey(p, c), 1),
			"fixed in 263973a: FailureClean with the lock still held (Lock's catch skipped ReleaseLock; Lambda.Unknown not retried)"},
		{"validate: run-once marker write denied", AccessDenied,
			callIndex(t, res, execution.TaskValidate, "PutObject", naming.StartedKey(p, c, id), 1),
			"fixed in 263973a, when Lock wrote the marker after taking the lock: FailureClean with the lock still held"},
		{"clean-up success: invocation dies after its work", LambdaDied,
			callIndex(t, res, execution.TaskCleanUpSuccess, "DeleteObject", naming.LockKey(p, c), 1),
			"fixed in 263973a: FailureDirty with the lock released and the outcome Success"},
		{"clean-up success: release unreadable", AccessDenied,
			callIndex(t, res, execution.TaskCleanUpSuccess, "GetObject", naming.ReleaseKey(p, c, id), 1),
			"fixed (CleanUpSuccess names what it leaves in a FailureDirty outcome; the lock is released last): FailureDirty without an outcome (nothing names the leftovers)"},
		{"clean-up success: describing the groups denied", AccessDenied,
			callIndex(t, res, execution.TaskCleanUpSuccess, "DescribeAutoScalingGroups", "", 1),
			"fixed (CleanUpSuccess names what it leaves in a FailureDirty outcome; the lock is released last): FailureDirty without an outcome"},
		{"clean-up success: writing the current record denied", AccessDenied,
			callIndex(t, res, execution.TaskCleanUpSuccess, "PutObject", naming.CurrentKey(p, c), 1),
			"fixed (CleanUpSuccess names what it leaves in a FailureDirty outcome; the lock is released last): FailureDirty without an outcome"},
		{"clean-up success: releasing the lock denied", AccessDenied,
			callIndex(t, res, execution.TaskCleanUpSuccess, "DeleteObject", naming.LockKey(p, c), 1),
			"fixed (CleanUpSuccess names what it leaves in a FailureDirty outcome; the lock is released last): FailureDirty, but the outcome (written before the lock is released) says Success"},
		{"clean-up success: removing the halt marker denied", AccessDenied,
			callIndex(t, res, execution.TaskCleanUpSuccess, "DeleteObject", naming.HaltKey(p, c), 1),
			"fixed (CleanUpSuccess names what it leaves in a FailureDirty outcome; the lock is released last): FailureDirty with the lock already released and the outcome Success"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Target(res, tt.idx, tt.kind)
			require.NoError(t, err)
			got, err := sc.Run(context.Background(), RunOptions{Schedule: One(f)})
			require.NoError(t, err)
			assert.True(t, got.Fired)
			assert.Empty(t, got.Violations, "fault %s ended %s (%s: %s); the matrix found: %s", f, got.End, got.Error, got.Cause, tt.found)
		})
	}
}

// TestSchedulesFound are schedules of the families beyond single faults
// that showed bugs or checker errors: each must end without a violation.
func TestSchedulesFound(t *testing.T) {
	if testing.Short() {
		t.Skip("deploys several times")
	}
	res, fail, back := clean(t), failed(t), rolledBack(t)
	sc := reference(t)
	id := res.ReleaseID
	const p, c = "acme/shop", "production"
	target := func(base *Result, task, op, key string, n int, k Kind) Fault {
		f, err := Target(base, callIndex(t, base, task, op, key, n), k)
		require.NoError(t, err)
		return f
	}
	tests := []struct {
		name     string
		schedule Schedule
		found    string
	}{
		{"clean-up success: its record and the listing of the previous groups denied", Schedule{Family: Pair, Base: BaseSuccess, Faults: []Fault{
			target(res, execution.TaskCleanUpSuccess, "GetObject", naming.DeletingKey(p, c, id), 1, AccessDenied),
			target(res, execution.TaskCleanUpSuccess, "DescribeAutoScalingGroups", "", 1, AccessDenied),
		}}, "fixed (Deploy records the previous groups it saw): FailureDirty naming \"the previous groups (whether they were being retired is unknown)\", not the groups"},
		{"clean-up failure: its role's credentials expired", Schedule{Family: Single, Base: BaseFailure, Faults: []Fault{
			target(fail, execution.TaskCleanUpFailure, "GetObject", naming.DeployingKey(p, c, id), 1, RoleExpired),
		}}, "fixed (fleet.Leftovers): FailureDirty naming \"whatever the release created\", not its groups, templates and alarms"},
		{"clean-up failure: the removal's describe of the groups denied", Schedule{Family: Single, Base: BaseFailure, Faults: []Fault{
			// The second describe is the removal's own.
			target(fail, execution.TaskCleanUpFailure, "DescribeAutoScalingGroups", "", 2, AccessDenied),
		}}, "fixed (fleet.Leftovers): FailureDirty naming the groups and templates left, not their alarms"},
		{"rollback: resuming the previous group's processes denied", Schedule{Family: Single, Base: BaseRollback, Faults: []Fault{
			target(back, execution.TaskCleanUpFailure, "ResumeProcesses", "", 1, AccessDenied),
		}}, "fixed (leftServing): FailureDirty naming what the rollback left, not the release's own groups, templates and alarms, left serving"},
		{"race: a second release starts while Validate's response is lost", Schedule{Family: Race, Base: BaseSuccess, RaceAfterLost: true, Faults: []Fault{
			target(res, execution.TaskValidate, "GetObject", naming.ReleaseKey(p, c, id), 1, LambdaDied),
		}}, "checker fixed: the second release holding the lock before Lock, and its retiring the previous groups, were taken for violations"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sc.Run(context.Background(), RunOptions{Schedule: tt.schedule})
			require.NoError(t, err)
			assert.True(t, got.Fired)
			assert.Empty(t, got.Violations, "%s ended %s (%s: %s); the matrix found: %s", tt.schedule, got.End, got.Error, got.Cause, tt.found)
		})
	}
}

// TestCutConnectionsAreViolations: a cut connection anywhere in the world
// after a run is a violation naming where.
func TestCutConnectionsAreViolations(t *testing.T) {
	var r run
	r.checkCuts(sim.Snapshot{Accounts: []sim.AccountSnapshot{{Account: "111111111111", Region: "us-east-1",
		LoadBalancers: []sim.RegistrationSnapshot{{Name: "elb"}},
		TargetGroups:  []sim.RegistrationSnapshot{{Name: "tg", CutConnections: 3}},
	}}})
	assert.Equal(t, []string{"tg in 111111111111/us-east-1 counted 3 cut connections"}, r.violations)

	dark := sim.Snapshot{Accounts: []sim.AccountSnapshot{{Account: "111111111111", Region: "us-east-1",
		LoadBalancers: []sim.RegistrationSnapshot{{Name: "elb", CutConnections: 1, WentDark: 1}},
		TargetGroups:  []sim.RegistrationSnapshot{{Name: "tg", CutConnections: 3, WentDark: 1}},
	}}}
	for _, sc := range []*Scenario{{}, {Destroy: true}} {
		r := run{sc: sc}
		r.checkCuts(dark)
		assert.Equal(t, []string{"elb in 111111111111/us-east-1 counted 1 cut connections", "tg in 111111111111/us-east-1 counted 3 cut connections"},
			r.violations, "destroy %v: a load balancer a destroy drains out is withdrawn, never cut; one dark while claimed is a cut", sc.Destroy)
	}
}
