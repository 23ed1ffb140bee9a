package fleet_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/fleet"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
)

const (
	account = "111111111111"
	region  = "us-east-1"
	project = "coinbase/deploy-test"
	config  = "development"
)

var owner = fleet.Owner{Project: project, Config: config}

type env struct {
	ctx   context.Context
	clk   *clock.Virtual
	world *sim.World
	c     *cloud.Clients
}

func newEnv(t *testing.T) *env {
	t.Helper()
	spec, err := sim.Load(filepath.Join("..", "..", "testdata", "worlds", "deploy-test.json"))
	require.NoError(t, err)
	clk := clock.NewVirtual(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC))
	w, err := sim.New(clk, spec)
	require.NoError(t, err)
	return &env{ctx: t.Context(), clk: clk, world: w, c: w.Clients(account, region)}
}

// make creates, for release id, the launch template, group and CPU alarm
// ferry would, tagged for the project-config (or for tagged, when given).
func (e *env) make(t *testing.T, release string, tags map[string]string) string {
	t.Helper()
	name := naming.GroupName(project, config, "web", release)
	if tags == nil {
		tags = map[string]string{naming.TagProjectName: project, naming.TagConfigName: config,
			naming.TagDeployWith: naming.DeployWithValue, naming.TagReleaseID: release}
	}
	var ltTags []ec2types.Tag
	var asgTags []astypes.Tag
	for k, v := range tags {
		ltTags = append(ltTags, ec2types.Tag{Key: aws.String(k), Value: aws.String(v)})
		asgTags = append(asgTags, astypes.Tag{Key: aws.String(k), Value: aws.String(v)})
	}
	_, err := e.c.EC2.CreateLaunchTemplate(e.ctx, &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String(name),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String("ami-0000000000000ab01"), InstanceType: "t2.nano"},
		TagSpecifications:  []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeLaunchTemplate, Tags: ltTags}},
	})
	require.NoError(t, err)
	_, err = e.c.AutoScaling.CreateAutoScalingGroup(e.ctx, &autoscaling.CreateAutoScalingGroupInput{
		AutoScalingGroupName: aws.String(name),
		LaunchTemplate:       &astypes.LaunchTemplateSpecification{LaunchTemplateName: aws.String(name)},
		MinSize:              aws.Int32(1), MaxSize: aws.Int32(1), VPCZoneIdentifier: aws.String("subnet-00000000000000a01"), Tags: asgTags,
	})
	require.NoError(t, err)
	p, err := e.c.AutoScaling.PutScalingPolicy(e.ctx, &autoscaling.PutScalingPolicyInput{AutoScalingGroupName: aws.String(name),
		PolicyName: aws.String("cpu_scale_up"), AdjustmentType: aws.String("ChangeInCapacity"), ScalingAdjustment: aws.Int32(1)})
	if err == nil {
		_, err = e.c.CloudWatch.PutMetricAlarm(e.ctx, &cloudwatch.PutMetricAlarmInput{
			AlarmName: aws.String(naming.AlarmName(name, "cpu_scale_up")), Namespace: aws.String("AWS/EC2"), MetricName: aws.String("CPUUtilization"),
			Statistic: cwtypes.StatisticAverage, Period: aws.Int32(300), EvaluationPeriods: aws.Int32(1), Threshold: aws.Float64(70),
			ComparisonOperator: cwtypes.ComparisonOperatorGreaterThanThreshold, AlarmActions: []string{aws.ToString(p.PolicyARN)},
			Dimensions: []cwtypes.Dimension{{Name: aws.String("AutoScalingGroupName"), Value: aws.String(name)}},
		})
	}
	return name
}

// left lists what of name is still in the world: the group (not being
// deleted), the launch template, alarms.
func (e *env) left(name string) []string {
	var out []string
	for _, a := range e.world.Snapshot().Accounts {
		for _, g := range a.Groups {
			if g.Name == name && g.Status == "" {
				out = append(out, "group")
			}
		}
		for _, lt := range a.LaunchTemplates {
			if lt.Name == name {
				out = append(out, "template")
			}
		}
		for _, al := range a.Alarms {
			if al.Name == naming.AlarmName(name, "cpu_scale_up") {
				out = append(out, "alarm")
			}
		}
	}
	return out
}

func ofRelease(id string) func(map[string]string) bool {
	return func(tags map[string]string) bool { return tags[naming.TagReleaseID] == id }
}

// TestRemove: a group, its launch template and alarm go, by name; a name
// that never existed is removed at once (not found means gone); a group
// of another owner, or one Owns refuses, is left alone and reported.
func TestRemove(t *testing.T) {
	e := newEnv(t)
	mine := e.make(t, "r1", nil)
	other := e.make(t, "r2", nil)
	foreign := e.make(t, "r3", map[string]string{naming.TagProjectName: "other/project", naming.TagConfigName: config,
		naming.TagDeployWith: naming.DeployWithValue, naming.TagReleaseID: "r3"})
	never := naming.GroupName(project, config, "worker", "r1")
	require.Equal(t, []string{"group", "template", "alarm"}, e.left(mine))

	r := &fleet.Remover{Clients: e.c, Owner: owner, Owns: ofRelease("r1")}
	res, err := r.Remove(e.ctx, []string{mine, other, foreign, never, mine})
	require.NoError(t, err)
	assert.Equal(t, []string{mine, never}, res.Removed)
	assert.ElementsMatch(t, []string{other, foreign}, res.Skipped)
	assert.Empty(t, e.left(mine))
	assert.Equal(t, []string{"group", "template", "alarm"}, e.left(other))
	assert.Equal(t, []string{"group", "template", "alarm"}, e.left(foreign))

	res, err = r.Remove(e.ctx, []string{mine})
	require.NoError(t, err, "idempotent")
	assert.Equal(t, []string{mine}, res.Removed)
}

// TestRemoveNotVisibleYet: AWS's eventual consistency hides a group and
// template created moments ago from every describe and from the deletes
// themselves ("not found"). For a name the release created (Created) that
// is retryable, never "gone", until the last attempt; the group is
// removed once AWS shows it. A name not created moments ago that is not
// found is gone.
func TestRemoveNotVisibleYet(t *testing.T) {
	e := newEnv(t)
	require.NoError(t, e.world.Faults().Hide(sim.Hiding{Kind: sim.HideGroups, Calls: 4}))
	// The template is visible to the group's create (its first lookup),
	// then hidden for two.
	require.NoError(t, e.world.Faults().Hide(sim.Hiding{Kind: sim.HideLaunchTemplates, From: 2, Calls: 2}))
	name := e.make(t, "r1", nil) // its scaling policy is refused: the group is hidden
	r := &fleet.Remover{Clients: e.c, Owner: owner, Owns: ofRelease("r1"), Created: map[string]bool{name: true}}

	_, err := r.Remove(e.ctx, []string{name})
	require.Error(t, err)
	assert.Equal(t, failure.NameRetryable, failure.NameOf(err), "%v", err)
	assert.Contains(t, err.Error(), "not visible yet")
	assert.Equal(t, []string{"group", "template"}, e.left(name), "nothing was deleted: AWS did not show it")

	res, err := r.Remove(e.ctx, []string{name})
	require.NoError(t, err)
	assert.Equal(t, []string{name}, res.Removed)
	assert.Empty(t, e.left(name))

	// A delete answering "not found" that the next describe contradicts
	// (the group flickers into view) is retryable too.
	e1 := newEnv(t)
	require.NoError(t, e1.world.Faults().Hide(sim.Hiding{Kind: sim.HideGroups, From: 3, Calls: 1}))
	flicker := e1.make(t, "r1", nil)
	_, err = (&fleet.Remover{Clients: e1.c, Owner: owner, Owns: ofRelease("r1")}).Remove(e1.ctx, []string{flicker})
	require.Error(t, err)
	assert.Equal(t, failure.NameRetryable, failure.NameOf(err), "%v", err)
	assert.Equal(t, []string{"group", "template"}, e1.left(flicker))

	e2 := newEnv(t)
	require.NoError(t, e2.world.Faults().Hide(sim.Hiding{Kind: sim.HideGroups, Calls: 10}))
	hidden := e2.make(t, "r1", nil)
	for _, tc := range []struct {
		name string
		r    *fleet.Remover
	}{
		{"not created by this release", &fleet.Remover{Clients: e2.c, Owner: owner, Owns: ofRelease("r1")}},
		{"last attempt", &fleet.Remover{Clients: e2.c, Owner: owner, Owns: ofRelease("r1"), Created: map[string]bool{hidden: true}, LastAttempt: true}},
	} {
		res, err := tc.r.Remove(e2.ctx, []string{hidden})
		require.NoError(t, err, tc.name)
		assert.Equal(t, []string{hidden}, res.Removed, "%s: not found means gone", tc.name)
	}
}

// TestRemoveAlarmsBatched: a removal of several groups deletes their
// alarms in one DeleteAlarms call (up to 100 names: CloudWatch API
// Reference, DeleteAlarms), not one a group: CloudWatch's DeleteAlarms
// quota is 3 transactions a second per account (CloudWatch service
// quotas).
func TestRemoveAlarmsBatched(t *testing.T) {
	e := newEnv(t)
	var names []string
	for _, id := range []string{"r0", "r1", "r2"} {
		names = append(names, e.make(t, id, nil))
	}
	before := e.world.Calls()["DeleteAlarms"]
	res, err := (&fleet.Remover{Clients: e.c, Owner: owner}).Remove(e.ctx, names)
	require.NoError(t, err)
	assert.Equal(t, names, res.Removed)
	assert.Equal(t, 1, e.world.Calls()["DeleteAlarms"]-before, "one call for every group's alarms")
	for _, n := range names {
		assert.Empty(t, e.left(n))
	}
}

// TestRemoveFailures: an error AWS gives for a delete is a leftover named
// in a CleanUpError (the rest is still removed); when every failure is
// transient the error is retryable.
func TestRemoveFailures(t *testing.T) {
	for _, tc := range []struct {
		name, op  string
		err       error
		retryable bool
		left      []string
	}{
		{"group delete denied", "DeleteAutoScalingGroup", sim.AccessDenied(), false, []string{"group", "template"}},
		{"group delete throttled", "DeleteAutoScalingGroup", sim.Throttling(), true, []string{"group", "template"}},
		{"template delete denied", "DeleteLaunchTemplate", sim.AccessDenied(), false, []string{"template"}},
		{"alarm delete denied", "DeleteAlarms", sim.AccessDenied(), false, []string{"group", "template", "alarm"}},
		{"describe throttled", "DescribeAutoScalingGroups", sim.Throttling(), true, []string{"group", "template", "alarm"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			a, b := e.make(t, "r1", nil), e.make(t, "r0", nil)
			_, err := e.world.Faults().Add(sim.Rule{Op: tc.op, Nth: 1, Err: tc.err})
			require.NoError(t, err)
			r := &fleet.Remover{Clients: e.c, Owner: owner}
			res, err := r.Remove(e.ctx, []string{a, b})
			require.Error(t, err)
			var ce *failure.CleanUpError
			require.ErrorAs(t, err, &ce)
			assert.NotEmpty(t, ce.Leftovers)
			assert.Equal(t, tc.retryable, failure.IsRetryable(err), "%v", err)
			first := b // names are removed in order: r0 before r1
			// One DeleteAlarms call deletes both names' alarms: refused,
			// it leaves both.
			if tc.op == "DescribeAutoScalingGroups" || tc.op == "DeleteAlarms" {
				assert.Empty(t, res.Removed)
			} else {
				assert.Equal(t, []string{a}, res.Removed, "the other name was still removed")
			}
			assert.Equal(t, tc.left, e.left(first))
		})
	}
}

// TestRemoveGoneNoCalls: a name whose group and template AWS does not
// show, and that the Remover did not create moments ago, is gone: a
// removal taken again (after a step AWS throttled) counts it removed
// without a DeleteAutoScalingGroup or DeleteLaunchTemplate call, which
// would spend the account's shared Auto Scaling bucket (Amazon EC2 Auto
// Scaling API Reference, API request rate) on what is deleted already.
func TestRemoveGoneNoCalls(t *testing.T) {
	e := newEnv(t)
	name := e.make(t, "r1", nil)
	r := &fleet.Remover{Clients: e.c, Owner: owner}
	_, err := r.Remove(e.ctx, []string{name})
	require.NoError(t, err)
	e.clk.Advance(time.Hour)
	require.Empty(t, e.left(name))
	before := e.world.Calls()
	res, err := r.Remove(e.ctx, []string{name})
	require.NoError(t, err)
	assert.Equal(t, []string{name}, res.Removed)
	after := e.world.Calls()
	for _, op := range []string{"DeleteAutoScalingGroup", "DeleteLaunchTemplate", "DeleteAlarms"} {
		assert.Equal(t, before[op], after[op], op)
	}
}

// TestRemoveVanishedBetweenDescribeAndDelete: a group or template the
// first describe showed, whose delete then answers "not found" (and, for
// a group, the describe after it agrees), is gone, unless this release
// created it moments ago and a retry follows: then the "not found" may
// be eventual consistency (a delete can be answered by another replica
// than the describe; "Eventual consistency", Amazon EC2 API Reference),
// and the removal is retried, never reported done.
func TestRemoveVanishedBetweenDescribeAndDelete(t *testing.T) {
	for _, kind := range []sim.HiddenKind{sim.HideGroups, sim.HideLaunchTemplates} {
		for _, tc := range []struct {
			name          string
			created, last bool
			removed       bool
		}{
			{"made by another release", false, false, true},
			{"made moments ago, a retry follows", true, false, false},
			{"made moments ago, the last attempt", true, true, true},
		} {
			t.Run(string(kind)+"/"+tc.name, func(t *testing.T) {
				e := newEnv(t)
				// Each kind's calls: the group's create and Remove's
				// describe see it; the delete and the describe after it
				// do not.
				require.NoError(t, e.world.Faults().Hide(sim.Hiding{Kind: kind, From: 3, Calls: 2}))
				name := e.make(t, "r1", nil)
				r := &fleet.Remover{Clients: e.c, Owner: owner, Owns: ofRelease("r1"), LastAttempt: tc.last}
				if tc.created {
					r.Created = map[string]bool{name: true}
				}
				res, err := r.Remove(e.ctx, []string{name})
				if tc.removed {
					require.NoError(t, err)
					assert.Equal(t, []string{name}, res.Removed)
					return
				}
				require.Error(t, err)
				assert.Equal(t, failure.NameRetryable, failure.NameOf(err), "%v", err)
				assert.Contains(t, err.Error(), "not visible yet")
				assert.Empty(t, res.Removed)
			})
		}
	}
}
