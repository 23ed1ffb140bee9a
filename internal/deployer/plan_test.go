package deployer

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/ledger"
	"github.com/ferryhq/ferry/internal/store/lock"
)

// planOf runs the Plan task for r as a plan execution does, registered
// RUNNING with r under "plan", and checks it wrote nothing: not in the
// deployer bucket, not in the target.
func (h *harness) planOf(r *release.Release) (*execution.Plan, error) {
	h.t.Helper()
	raw, err := json.Marshal(r)
	require.NoError(h.t, err)
	input, err := json.Marshal(execution.PlanInput{Plan: raw})
	require.NoError(h.t, err)
	name := "plan-" + r.ReleaseID
	arn := asl.ExecutionARN(naming.StateMachineARN(account, region), name)
	h.executions.register(arn, input, h.clk.Now())
	x := &run{h: h, input: input, ctx: execution.Context{ID: arn, Name: name, StartTime: h.clk.Now()}}
	objects, world := h.objects(h.t.(*testing.T)), h.snapshot()
	out, err := x.invoke(execution.TaskPlan, json.RawMessage(input))
	assert.Equal(h.t, objects, h.objects(h.t.(*testing.T)), "a plan writes nothing in the deployer bucket")
	assert.Equal(h.t, world, h.snapshot(), "a plan changes nothing in the target")
	if err != nil {
		return nil, err
	}
	var p execution.Plan
	require.NoError(h.t, json.Unmarshal(out, &p))
	return &p, nil
}

// TestPlanFirstDeploy: with nothing deployed, the plan is the groups
// Deploy would create, resolved in the target, with the capacity package
// capacity gives a new service, and nothing to retire.
func TestPlanFirstDeploy(t *testing.T) {
	h := newHarness(t)
	r := h.baseRelease()
	p, err := h.planOf(r)
	require.NoError(t, err)
	assert.True(t, p.Proceed, p.Refusals)
	assert.Empty(t, p.Refusals)
	assert.Empty(t, p.Deployed)
	assert.Empty(t, p.Retire)
	assert.Empty(t, p.Changes)
	require.Len(t, p.Groups, 1)
	g := p.Groups[0]
	assert.Equal(t, naming.GroupName(project, config, "web", r.ReleaseID), g.Group)
	assert.Equal(t, []string{"subnet-00000000000000a01", "subnet-00000000000000b01"}, g.Subnets, "subnets resolved to ids")
	assert.Regexp(t, `^ami-[0-9a-f]+$`, g.ImageID)
	assert.Equal(t, 2, g.Desired, "a new service starts at min_size")
	assert.Equal(t, 3, g.Launch, "ceil(2 * (1 + 0.5))")
	assert.Equal(t, 2, g.HealthyTarget)
	assert.Equal(t, []string{"coinbase-deploy-test-web-elb"}, g.LoadBalancers)
	require.Len(t, g.TargetGroups, 1)
	assert.Regexp(t, `^arn:aws:elasticloadbalancing:`, g.TargetGroups[0])
	assert.Len(t, g.UserDataSHA256, 64)
}

// TestPlanNextDeploy: with a release deployed, the plan says which
// groups the swap retires, keeps the previous desired capacity, lists
// what changed, and lists every reason a deploy would be refused: a
// service left out without remove, the lock held, a resource missing.
func TestPlanNextDeploy(t *testing.T) {
	h := newHarness(t)
	r1 := h.baseRelease()
	r1.Services["worker"] = &release.Service{InstanceType: "t3.small", SecurityGroups: []string{"ec2::coinbase/deploy-test::development-worker"}}
	h.start(r1).succeed()
	h.clk.Advance(time.Hour)

	r2 := h.baseRelease()
	r2.Services["web"].InstanceType = "t3.small"
	r2.Version = "build-2"
	r2.Reconcile = release.ReconcileHeal
	p, err := h.planOf(r2)
	require.NoError(t, err)
	assert.False(t, p.Proceed)
	assert.Equal(t, []string{`remove: the deploy would delete the serving groups of worker, which the release does not deploy; name them under "remove" to delete them, or deploy them`}, p.Refusals)
	assert.Equal(t, r1.ReleaseID, p.Deployed)
	assert.Empty(t, p.Retire, "a refused deploy retires nothing")
	assert.Empty(t, p.Remove, "a refused deploy removes nothing")
	assert.Contains(t, p.Changes, execution.Change{Field: "version", From: "", To: "build-2"})
	assert.Contains(t, p.Changes, execution.Change{Field: "reconcile", From: "record", To: "heal"})
	assert.Contains(t, p.Changes, execution.Change{Service: "web", Field: "instance_type", From: "t2.nano", To: "t3.small"})
	assert.Contains(t, p.Changes, execution.Change{Service: "worker", Field: "service", From: "deployed", To: "removed"})
	assert.NotContains(t, p.Changes, execution.Change{Service: "web", Field: "image_id"}, "the image is the same")

	r2.Remove = []string{"worker"}
	p, err = h.planOf(r2)
	require.NoError(t, err)
	assert.True(t, p.Proceed, p.Refusals)
	assert.Equal(t, []string{naming.GroupName(project, config, "web", r1.ReleaseID), naming.GroupName(project, config, "worker", r1.ReleaseID)}, p.Retire)
	assert.Equal(t, []string{"worker"}, p.Remove)

	r2.Subnets = []string{"test_private_subnet_a", "no_such_subnet"}
	p, err = h.planOf(r2)
	require.NoError(t, err)
	assert.False(t, p.Proceed)
	require.Len(t, p.Refusals, 1, p.Refusals)
	assert.Contains(t, p.Refusals[0], "no_such_subnet")
	assert.Empty(t, p.Retire)
	assert.Empty(t, p.Remove)

	require.NoError(t, h.locks.Acquire(t.Context(), project, config, lock.Holder{ReleaseID: "r-other", Execution: "arn:other"}))
	p, err = h.planOf(r2)
	require.NoError(t, err)
	assert.False(t, p.Proceed)
	assert.Equal(t, []string{"lock: release r-other is deploying to coinbase/deploy-test development (locked since " +
		h.clk.Now().UTC().Format("2006-01-02 15:04:05Z") + "): plan again when it ends"}, p.Refusals, "the deploy under way is the one reason")
	assert.Equal(t, r1.ReleaseID, p.Deployed)

	require.NoError(t, h.ledger.PutOutcome(t.Context(), project, config, ledger.Outcome{ReleaseID: "r-other", End: execution.EndFailureDirty}))
	p, err = h.planOf(r2)
	require.NoError(t, err)
	require.Len(t, p.Refusals, 1, p.Refusals)
	assert.Contains(t, p.Refusals[0], "lock: release r-other ended FailureDirty and keeps the lock of coinbase/deploy-test development", "a lock left behind is not a deploy under way")
}

// TestPlanDuringBake: a plan while another release bakes (its groups
// serve, the previous ones stand by) is refused for that one reason: no
// complaint about the number of previous groups, no retire list made of
// the groups the deploy under way creates or stands by.
func TestPlanDuringBake(t *testing.T) {
	h := newHarness(t)
	r1, r2 := h.baseRelease(), h.baseRelease()
	r2.BakeSeconds = 3600
	x := h.atSwap(r1, r2)
	require.NoError(t, x.once(execution.TaskBake))
	require.False(t, x.state.Bake.Done, "baking")
	h.clk.Advance(time.Minute)

	p, err := h.planOf(h.baseRelease())
	require.NoError(t, err)
	assert.False(t, p.Proceed)
	require.Len(t, p.Refusals, 1, p.Refusals)
	assert.Regexp(t, `^lock: release `+r2.ReleaseID+` is deploying to coinbase/deploy-test development \(locked since [^)]+\): plan again when it ends$`, p.Refusals[0])
	assert.Empty(t, p.Retire)
	assert.Empty(t, p.Remove)
	assert.Empty(t, p.Groups)
	assert.Equal(t, r1.ReleaseID, p.Deployed)
}

// TestPlanBadRelease: a plan of a release that does not validate fails
// as Validate does, naming every problem, and a request whose execution
// plans another release is refused.
func TestPlanBadRelease(t *testing.T) {
	h := newHarness(t)
	r := h.baseRelease()
	r.Services["web"].InstanceType = ""
	_, err := h.planOf(r)
	var bad *failure.BadReleaseError
	require.ErrorAs(t, err, &bad)
	assert.Contains(t, err.Error(), "services.web.instance_type")

	good := h.baseRelease()
	other := h.baseRelease()
	raw, err := json.Marshal(other)
	require.NoError(t, err)
	input, err := json.Marshal(execution.PlanInput{Plan: raw})
	require.NoError(t, err)
	arn := asl.ExecutionARN(naming.StateMachineARN(account, region), "plan-forged")
	h.executions.register(arn, input, h.clk.Now())
	forged, err := json.Marshal(execution.PlanInput{Plan: mustJSON(t, good)})
	require.NoError(t, err)
	x := &run{h: h, ctx: execution.Context{ID: arn, Name: "plan-forged", StartTime: h.clk.Now()}}
	_, err = x.invoke(execution.TaskPlan, json.RawMessage(forged))
	var internal *failure.InternalError
	require.ErrorAs(t, err, &internal)
	assert.Contains(t, err.Error(), "runs release")
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}
