package fleet_test

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/fleet"
	"github.com/ferryhq/ferry/internal/local/sim"
)

// TestCreateGroupHealthCheck: a group in a classic load balancer or a
// target group is judged by the load balancer's health checks
// (HealthCheckType ELB), any other by EC2's; its grace period is given in
// seconds (HealthCheckGracePeriod, CreateAutoScalingGroup, Auto Scaling
// API Reference).
func TestCreateGroupHealthCheck(t *testing.T) {
	for _, tc := range []struct {
		name      string
		elb, tg   bool
		checkType string
	}{
		{"no load balancer", false, false, "EC2"},
		{"a classic load balancer", true, false, "ELB"},
		{"a target group", false, true, "ELB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			rel := e.release("r1")
			tmpl, grp := specs("r1")
			grp.HealthCheckGracePeriod = 5 * time.Minute
			if tc.elb {
				grp.LoadBalancers = []string{"coinbase-deploy-test-web-elb"}
			}
			if tc.tg {
				tgs, err := e.c.ELBv2.DescribeTargetGroups(e.ctx, &elasticloadbalancingv2.DescribeTargetGroupsInput{Names: []string{"coinbase-deploy-test-web-tg"}})
				require.NoError(t, err)
				grp.TargetGroups = []string{aws.ToString(tgs.TargetGroups[0].TargetGroupArn)}
			}
			require.NoError(t, rel.CreateTemplate(e.ctx, tmpl))
			require.NoError(t, rel.CreateGroup(e.ctx, grp))
			g := describe(t, e, grp.Name)
			assert.Equal(t, tc.checkType, aws.ToString(g.HealthCheckType))
			assert.Equal(t, int32(300), aws.ToInt32(g.HealthCheckGracePeriod))
		})
	}
}

// TestCreateTemplateVolume: a template with a volume launches it as
// asked (BlockDeviceMappings, CreateLaunchTemplate, EC2 API Reference).
func TestCreateTemplateVolume(t *testing.T) {
	e := newEnv(t)
	tmpl, _ := specs("r1")
	require.NoError(t, e.release("r1").CreateTemplate(e.ctx, tmpl))
	var volumes map[string]int32
	for _, a := range e.world.Snapshot().Accounts {
		for _, lt := range a.LaunchTemplates {
			if lt.Name == tmpl.Name {
				volumes = lt.Volumes
			}
		}
	}
	assert.Equal(t, map[string]int32{"/dev/sda1": 20}, volumes)
}

// TestReleaseRefusals: a call of a release's lifecycle AWS refuses for
// good is an error, never a step reported done: a DeployError while
// nothing of the previous release was touched (create, canary step,
// policies), a CleanUpError once the swap is done (settle).
func TestReleaseRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, op string
		nth      int
		run      func(t *testing.T, e *env, rel *fleet.Release, grp fleet.Group) error
		deploy   bool
	}{
		{"create group", "CreateAutoScalingGroup", 1, func(t *testing.T, e *env, rel *fleet.Release, grp fleet.Group) error {
			return rel.CreateGroup(e.ctx, grp)
		}, true},
		{"canary step", "UpdateAutoScalingGroup", 1, func(t *testing.T, e *env, rel *fleet.Release, grp fleet.Group) error {
			return rel.Step(e.ctx, grp.Name, 1, 2)
		}, true},
		{"scaling policy", "PutScalingPolicy", 1, func(t *testing.T, e *env, rel *fleet.Release, grp fleet.Group) error {
			return rel.PutPolicies(e.ctx, grp.Name, releaseTags("r1"), []fleet.Policy{{Type: "cpu_scale_up", Adjustment: 1, Period: 60, EvaluationPeriods: 1, Threshold: 70, Above: true}}, nil)
		}, true},
		{"policy alarm", "PutMetricAlarm", 1, func(t *testing.T, e *env, rel *fleet.Release, grp fleet.Group) error {
			return rel.PutPolicies(e.ctx, grp.Name, releaseTags("r1"), []fleet.Policy{{Type: "cpu_scale_up", Adjustment: 1, Period: 60, EvaluationPeriods: 1, Threshold: 70, Above: true}}, nil)
		}, true},
		{"settle's resume", "ResumeProcesses", 1, func(t *testing.T, e *env, rel *fleet.Release, grp fleet.Group) error {
			g := describe(t, e, grp.Name)
			require.NoError(t, rel.Suspend(e.ctx, grp.Name, &g))
			return rel.Settle(e.ctx, describe(t, e, grp.Name), 3, 3)
		}, false},
		{"settle", "UpdateAutoScalingGroup", 1, func(t *testing.T, e *env, rel *fleet.Release, grp fleet.Group) error {
			return rel.Settle(e.ctx, describe(t, e, grp.Name), 1, 3)
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			rel := e.release("r1")
			tmpl, grp := specs("r1")
			require.NoError(t, rel.CreateTemplate(e.ctx, tmpl))
			if tc.op != "CreateAutoScalingGroup" {
				require.NoError(t, rel.CreateGroup(e.ctx, grp))
				e.clk.Advance(5 * time.Minute)
			}
			_, err := e.world.Faults().Add(sim.Rule{Op: tc.op, Nth: tc.nth, Err: sim.AccessDenied()})
			require.NoError(t, err)
			err = tc.run(t, e, rel, grp)
			require.Error(t, err)
			assert.False(t, failure.IsRetryable(err), "%v", err)
			if tc.deploy {
				var de *failure.DeployError
				assert.ErrorAs(t, err, &de)
			} else {
				var ce *failure.CleanUpError
				assert.ErrorAs(t, err, &ce)
			}
		})
	}
}

// TestSettleKeepsACapacityChanged: settling scales the group from the
// launch count down to desired only while it still runs the launch
// count; a capacity a person changed since is kept, and a desired
// capacity of 0 (no size known) never scales it to nothing.
func TestSettleKeepsACapacityChanged(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		current, desired, want int
	}{
		{"at the launch count", 3, 1, 1},
		{"changed since", 2, 1, 2},
		{"no desired size", 3, 0, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			rel, grp := steppedGroup(t, e, tc.current)
			e.clk.Advance(5 * time.Minute)
			require.NoError(t, rel.Settle(e.ctx, describe(t, e, grp.Name), tc.desired, 3))
			assert.Equal(t, int32(tc.want), aws.ToInt32(describe(t, e, grp.Name).DesiredCapacity))
		})
	}
}

// TestSuspendOnlyWhatIsNot: Suspend suspends DeployProcesses of a group
// that does not show them suspended, and makes no call for a group that
// does (every call draws on the account's one Auto Scaling request
// bucket: Amazon EC2 Auto Scaling API Reference, Welcome, API request
// rate).
func TestSuspendOnlyWhatIsNot(t *testing.T) {
	e := newEnv(t)
	rel := e.release("r1")
	tmpl, grp := specs("r1")
	require.NoError(t, rel.CreateTemplate(e.ctx, tmpl))
	require.NoError(t, rel.CreateGroup(e.ctx, grp))
	g := describe(t, e, grp.Name)
	require.NoError(t, rel.Suspend(e.ctx, grp.Name, &g))
	g = describe(t, e, grp.Name)
	var suspended []string
	for _, p := range g.SuspendedProcesses {
		suspended = append(suspended, aws.ToString(p.ProcessName))
	}
	assert.ElementsMatch(t, fleet.DeployProcesses, suspended)
	calls := len(e.world.CallLog())
	require.NoError(t, rel.Suspend(e.ctx, grp.Name, &g))
	assert.Equal(t, calls, len(e.world.CallLog()), "all suspended already: no call")
}

// TestCreateTemplateOwnExisting: a launch template of the name that
// already exists and this release made (its tags say so) is accepted,
// even when EC2 refuses the create as a new request
// (InvalidLaunchTemplateName.AlreadyExistsException, CreateLaunchTemplate,
// EC2 API Reference: another client token).
func TestCreateTemplateOwnExisting(t *testing.T) {
	e := newEnv(t)
	tmpl, _ := specs("r1")
	require.NoError(t, e.release("r1").CreateTemplate(e.ctx, tmpl))
	again := e.release("r1")
	again.SHA256 = "another request"
	require.NoError(t, again.CreateTemplate(e.ctx, tmpl))
}

// TestSettleAtDesiredMakesNoUpdate: a group launched at its desired
// capacity (no spread) is settled without an UpdateAutoScalingGroup call
// (Auto Scaling's one request bucket: Amazon EC2 Auto Scaling API
// Reference, Welcome, API request rate).
func TestSettleAtDesiredMakesNoUpdate(t *testing.T) {
	e := newEnv(t)
	rel := e.release("r1")
	tmpl, grp := specs("r1")
	require.NoError(t, rel.CreateTemplate(e.ctx, tmpl))
	require.NoError(t, rel.CreateGroup(e.ctx, grp))
	e.clk.Advance(5 * time.Minute)
	updates := func() int {
		n := 0
		for _, c := range e.world.CallLog() {
			if c.Op == "UpdateAutoScalingGroup" {
				n++
			}
		}
		return n
	}
	before := updates()
	require.NoError(t, rel.Settle(e.ctx, describe(t, e, grp.Name), 3, 3))
	assert.Equal(t, before, updates())
}

// TestCreateGroupAgain: a CreateAutoScalingGroup retried after its answer
// was lost (a timeout: the SDK's retry, or the task's) meets the group the
// first attempt made: AWS answers AlreadyExists (CreateAutoScalingGroup,
// Auto Scaling API Reference), and the group, found by name and this
// release's tags, is accepted as made, its instances not launched again.
// One AWS does not show yet (eventual consistency) is retryable; one of
// the name another release made is refused.
func TestCreateGroupAgain(t *testing.T) {
	t.Run("this release's", func(t *testing.T) {
		e := newEnv(t)
		rel := e.release("r1")
		tmpl, grp := specs("r1")
		require.NoError(t, rel.CreateTemplate(e.ctx, tmpl))
		require.NoError(t, rel.CreateGroup(e.ctx, grp))
		require.NoError(t, rel.CreateGroup(e.ctx, grp), "the retry finds what the first attempt made")
		assert.Len(t, describe(t, e, grp.Name).Instances, grp.Desired, "launched once")
	})
	t.Run("not visible yet", func(t *testing.T) {
		e := newEnv(t)
		rel := e.release("r1")
		tmpl, grp := specs("r1")
		require.NoError(t, rel.CreateTemplate(e.ctx, tmpl))
		require.NoError(t, e.world.Faults().Hide(sim.Hiding{Kind: sim.HideGroups, Calls: 1}))
		require.NoError(t, rel.CreateGroup(e.ctx, grp))
		err := rel.CreateGroup(e.ctx, grp)
		assert.True(t, failure.IsRetryable(err), "%v", err)
		require.NoError(t, rel.CreateGroup(e.ctx, grp), "visible at the next attempt")
	})
	t.Run("another release's", func(t *testing.T) {
		e := newEnv(t)
		tmpl, grp := specs("r1")
		require.NoError(t, e.release("r1").CreateTemplate(e.ctx, tmpl))
		theirs := grp
		theirs.Tags = releaseTags("r2")
		require.NoError(t, e.release("r2").CreateGroup(e.ctx, theirs))
		var de *failure.DeployError
		assert.ErrorAs(t, e.release("r1").CreateGroup(e.ctx, grp), &de)
	})
}

// TestReleaseRefusedNotRetried: Auto Scaling answers both a request it
// refuses and a name it does not show yet with a ValidationError (Common
// Errors, Auto Scaling API Reference; CreateAutoScalingGroup); only the
// second is retried. A group whose mixed instances policy no instance
// type meets (InstanceRequirements, Auto Scaling API Reference), or a
// canary step past the group's maximum size (UpdateAutoScalingGroup:
// desired capacity within min and max), is refused the same way on every
// attempt: it fails now, a *failure.DeployError naming the group and
// AWS's message, not after the task's retries. A launch template or group
// AWS does not show yet ("Eventual consistency", EC2 API Reference;
// sim.Hiding) is still retryable until the last attempt.
func TestReleaseRefusedNotRetried(t *testing.T) {
	impossible := &fleet.Mixed{
		Overrides: []astypes.LaunchTemplateOverrides{{InstanceRequirements: &astypes.InstanceRequirements{
			VCpuCount: &astypes.VCpuCountRequest{Min: aws.Int32(4096)}, MemoryMiB: &astypes.MemoryMiBRequest{Min: aws.Int32(1024)},
		}}},
		SpotAllocationStrategy: "price-capacity-optimized", OnDemandAllocationStrategy: "lowest-price",
	}
	for _, tc := range []struct {
		name      string
		hide      sim.HiddenKind // hidden from the next lookup
		run       func(e *env, rel *fleet.Release, grp fleet.Group) error
		created   bool // the group is made first
		retryable bool
		message   string // of AWS's, in the error
	}{
		{name: "no instance type meets the requirements", run: func(e *env, rel *fleet.Release, grp fleet.Group) error {
			grp.Mixed = impossible
			return rel.CreateGroup(e.ctx, grp)
		}, message: "No instance type matches the InstanceRequirements"},
		{name: "the launch template not visible yet", hide: sim.HideLaunchTemplates, run: func(e *env, rel *fleet.Release, grp fleet.Group) error {
			return rel.CreateGroup(e.ctx, grp)
		}, retryable: true},
		{name: "a step past the maximum size", created: true, run: func(e *env, rel *fleet.Release, grp fleet.Group) error {
			return rel.Step(e.ctx, grp.Name, 1, grp.MaxSize+1)
		}, message: "must be between the specified min size"},
		{name: "a step on a group not visible yet", hide: sim.HideGroups, created: true, run: func(e *env, rel *fleet.Release, grp fleet.Group) error {
			return rel.Step(e.ctx, grp.Name, 1, 2)
		}, retryable: true},
		{name: "suspending a group not visible yet", hide: sim.HideGroups, created: true, run: func(e *env, rel *fleet.Release, grp fleet.Group) error {
			return rel.Suspend(e.ctx, grp.Name, nil)
		}, retryable: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			rel := e.release("r1")
			tmpl, grp := specs("r1")
			if tc.hide != "" {
				require.NoError(t, e.world.Faults().Hide(sim.Hiding{Kind: tc.hide, Calls: 1}))
			}
			require.NoError(t, rel.CreateTemplate(e.ctx, tmpl))
			if tc.created {
				require.NoError(t, rel.CreateGroup(e.ctx, grp))
			}
			err := tc.run(e, rel, grp)
			require.Error(t, err)
			assert.Contains(t, err.Error(), grp.Name, "names the group")
			if tc.retryable {
				assert.True(t, failure.IsRetryable(err), "not visible yet: retried: %v", err)
				return
			}
			assert.False(t, failure.IsRetryable(err), "refused: not retried: %v", err)
			var de *failure.DeployError
			require.ErrorAs(t, err, &de)
			assert.Contains(t, err.Error(), tc.message, "says what AWS said")
		})
	}
}

// TestSettleCallsAreSettles: SettleCalls counts the Auto Scaling calls
// Settle makes for a group as described (each draws on the account's one
// request bucket: Amazon EC2 Auto Scaling API Reference, Welcome, API
// request rate), so a caller can settle its groups a bucket's share at a
// time: two for a group at its launch count with its processes
// suspended, one when only one of the two is needed, none once settled.
func TestSettleCallsAreSettles(t *testing.T) {
	for _, tc := range []struct {
		name             string
		current, desired int
		suspend          bool
		want             int
	}{
		{"scaled down and resumed", 3, 1, true, 2},
		{"resumed only: at desired", 3, 3, true, 1},
		{"scaled down only: nothing suspended", 3, 1, false, 1},
		{"settled", 1, 1, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			rel, grp := steppedGroup(t, e, tc.current)
			if tc.suspend {
				g := describe(t, e, grp.Name)
				require.NoError(t, rel.Suspend(e.ctx, grp.Name, &g))
			}
			e.clk.Advance(5 * time.Minute)
			g := describe(t, e, grp.Name)
			before := len(e.world.CallLog())
			require.NoError(t, rel.Settle(e.ctx, g, tc.desired, 3))
			assert.Equal(t, tc.want, len(e.world.CallLog())-before)
			assert.Equal(t, tc.want, fleet.SettleCalls(g, tc.desired, 3))
			assert.Zero(t, fleet.SettleCalls(describe(t, e, grp.Name), tc.desired, 3), "settled: nothing left")
		})
	}
}

// steppedGroup creates release r1's template and group and steps the
// group to current instances (its launch count).
func steppedGroup(t *testing.T, e *env, current int) (*fleet.Release, fleet.Group) {
	t.Helper()
	rel := e.release("r1")
	tmpl, grp := specs("r1")
	require.NoError(t, rel.CreateTemplate(e.ctx, tmpl))
	require.NoError(t, rel.CreateGroup(e.ctx, grp))
	require.NoError(t, rel.Step(e.ctx, grp.Name, 1, current))
	return rel, grp
}
