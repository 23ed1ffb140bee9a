package fleet_test

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/fleet"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
)

func releaseTags(id string) map[string]string {
	return map[string]string{naming.TagProjectName: project, naming.TagConfigName: config,
		naming.TagDeployWith: naming.DeployWithValue, naming.TagReleaseID: id, naming.TagServiceName: "web"}
}

func (e *env) release(id string) *fleet.Release {
	return &fleet.Release{Clients: e.c, Owner: owner, ID: id, SHA256: "sha-" + id}
}

func specs(id string) (fleet.Template, fleet.Group) {
	name := naming.GroupName(project, config, "web", id)
	t := fleet.Template{Name: name, ImageID: "ami-0000000000000ab01", InstanceType: "t2.nano", UserData: []byte("#!/bin/sh\n"),
		Volume: &fleet.Volume{Device: "/dev/sda1", SizeGiB: 20, Type: "gp3"}, Tags: releaseTags(id)}
	g := fleet.Group{Name: name, MinSize: 1, MaxSize: 3, Desired: 3, Subnets: []string{"subnet-00000000000000a01"},
		HealthCheckGracePeriod: time.Minute, Tags: releaseTags(id)}
	return t, g
}

func (e *env) group(name string) (sim.GroupSnapshot, bool) {
	for _, a := range e.world.Snapshot().Accounts {
		for _, g := range a.Groups {
			if g.Name == name {
				return g, true
			}
		}
	}
	return sim.GroupSnapshot{}, false
}

// TestMakeAndSettle: a release's template, group, suspended processes and
// policies are made once whatever the retries, and settling scales the
// group back to desired and resumes its processes.
func TestMakeAndSettle(t *testing.T) {
	e := newEnv(t)
	rel := e.release("r1")
	tmpl, grp := specs("r1")
	policies := []fleet.Policy{{Type: "cpu_scale_up", Above: true, Threshold: 70, Adjustment: 1, EvaluationPeriods: 2, Period: 60, Cooldown: 120}}
	for attempt := range 2 {
		require.NoError(t, rel.CreateTemplate(e.ctx, tmpl), "attempt %d", attempt)
		require.NoError(t, rel.CreateGroup(e.ctx, grp), "attempt %d", attempt)
		require.NoError(t, rel.Suspend(e.ctx, grp.Name, nil), "attempt %d", attempt)
		require.NoError(t, rel.PutPolicies(e.ctx, grp.Name, releaseTags("r1"), policies, nil), "attempt %d", attempt)
	}
	g, ok := e.group(grp.Name)
	require.True(t, ok)
	assert.Equal(t, int32(3), g.Desired)
	assert.ElementsMatch(t, fleet.DeployProcesses, g.Suspended)
	assert.Equal(t, grp.Name, g.LaunchTemplate)
	assert.Equal(t, []string{naming.PolicyName("cpu_scale_up")}, g.Policies)
	assert.Contains(t, e.left(grp.Name), "template")

	found, err := fleet.Describe(e.ctx, e.c.AutoScaling, []string{grp.Name})
	require.NoError(t, err)
	require.NoError(t, rel.Suspend(e.ctx, grp.Name, ptr(found[grp.Name])), "suspended already: nothing to do")
	require.NoError(t, rel.Settle(e.ctx, found[grp.Name], 2, 3))
	g, _ = e.group(grp.Name)
	assert.Equal(t, int32(2), g.Desired, "scaled from the launch count to desired")
	assert.Empty(t, g.Suspended, "processes resumed")

	found, err = fleet.Describe(e.ctx, e.c.AutoScaling, []string{grp.Name})
	require.NoError(t, err)
	require.NoError(t, rel.Settle(e.ctx, found[grp.Name], 2, 3), "settled already: nothing to do")
	g, _ = e.group(grp.Name)
	assert.Equal(t, int32(2), g.Desired)
}

func ptr[T any](v T) *T { return &v }

// TestCreateRefusesAnotherReleasesName: a template or group of the name
// this release would make, made by someone else, is a DeployError.
func TestCreateRefusesAnotherReleasesName(t *testing.T) {
	e := newEnv(t)
	foreign := releaseTags("r0") // the name of r1's group, the tags of r0's
	name := e.make(t, "r1", foreign)
	tmpl, grp := specs("r1")
	require.Equal(t, name, tmpl.Name)
	rel := e.release("r1")
	for _, err := range []error{rel.CreateTemplate(e.ctx, tmpl), rel.CreateGroup(e.ctx, grp)} {
		var de *failure.DeployError
		require.ErrorAs(t, err, &de)
		assert.Contains(t, err.Error(), "not made by this release")
	}
}

// TestNotVisibleYet: a call naming a group AWS does not show yet is
// retryable until the last attempt, then a DeployError.
func TestNotVisibleYet(t *testing.T) {
	e := newEnv(t)
	name := naming.GroupName(project, config, "web", "r1")
	tests := []struct {
		name string
		last bool
		want string
	}{
		{"retries left", false, failure.NameRetryable},
		{"last attempt", true, failure.NameDeploy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rel := e.release("r1")
			rel.LastAttempt = tt.last
			assert.Equal(t, tt.want, failure.NameOf(rel.Suspend(e.ctx, name, nil)))
		})
	}
}

// TestInventory: Previous, Of and Others tell this release's groups and
// templates from those of other releases; a group being deleted is no
// longer a previous one.
func TestInventory(t *testing.T) {
	e := newEnv(t)
	r0 := e.make(t, "r0", releaseTags("r0"))
	r1 := e.make(t, "r1", releaseTags("r1"))
	gone := e.make(t, "r9", releaseTags("r9"))
	_, err := e.c.AutoScaling.DeleteAutoScalingGroup(e.ctx, &autoscaling.DeleteAutoScalingGroupInput{
		AutoScalingGroupName: aws.String(gone), ForceDelete: aws.Bool(true),
	})
	require.NoError(t, err)

	previous, err := fleet.Previous(e.ctx, e.c.AutoScaling, owner, "r1")
	require.NoError(t, err)
	require.Len(t, previous["web"], 1)
	assert.Equal(t, r0, aws.ToString(previous["web"][0].AutoScalingGroupName))

	groups, err := fleet.Groups(e.ctx, e.c.AutoScaling, owner)
	require.NoError(t, err)
	templates, err := fleet.Templates(e.ctx, e.c.EC2, owner)
	require.NoError(t, err)
	assert.Equal(t, []string{r1}, fleet.Of("r1", groups, templates))
	listed, err := fleet.List(e.ctx, e.c.AutoScaling, owner)
	require.NoError(t, err)
	assert.Equal(t, []string{r0, gone}, fleet.Others("r1", listed, templates), "the template of a group being deleted is still retired")
}

// TestReadActivities counts a group's terminations.
func TestReadActivities(t *testing.T) {
	e := newEnv(t)
	rel := e.release("r1")
	tmpl, grp := specs("r1")
	require.NoError(t, rel.CreateTemplate(e.ctx, tmpl))
	require.NoError(t, rel.CreateGroup(e.ctx, grp))
	e.clk.Advance(5 * time.Minute)
	acts, err := fleet.ReadActivities(e.ctx, e.c.AutoScaling, grp.Name)
	require.NoError(t, err)
	assert.False(t, acts.Latest.IsZero(), "when the newest launch started")
	assert.Equal(t, fleet.Activities{Latest: acts.Latest}, acts, "launches only")

	require.NoError(t, rel.Settle(e.ctx, describe(t, e, grp.Name), 1, 3))
	e.clk.Advance(5 * time.Minute)
	acts, err = fleet.ReadActivities(e.ctx, e.c.AutoScaling, grp.Name)
	require.NoError(t, err)
	assert.Equal(t, 2, acts.Terminated, "scaled in from 3 to 1")
	assert.Empty(t, acts.Failed)
}

func describe(t *testing.T, e *env, name string) astypes.AutoScalingGroup {
	t.Helper()
	found, err := fleet.Describe(e.ctx, e.c.AutoScaling, []string{name})
	require.NoError(t, err)
	return found[name]
}
