package fleet_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/fleet"
	"github.com/ferryhq/ferry/internal/naming"
)

// TestAlarmsOfTheGroupsAsked: Alarms returns, for each group asked, the
// alarms ferry named after it on its AutoScalingGroupName dimension, and
// nothing of another group of the project-config (its alarms are its
// own: removing one group never deletes another's).
func TestAlarmsOfTheGroupsAsked(t *testing.T) {
	e := newEnv(t)
	a, b := e.make(t, "r1", nil), e.make(t, "r2", nil)
	got, err := fleet.Alarms(e.ctx, e.c.CloudWatch, owner, []string{a})
	require.NoError(t, err)
	assert.Equal(t, map[string][]string{a: {naming.AlarmName(a, "cpu_scale_up")}}, got)
	assert.NotContains(t, got, b)
}

// TestRemoveSkipsAnotherProjectsTemplate: a launch template of the name
// that another project's tags mark is never deleted, even when no group of
// the name is left: the template's own tags decide.
func TestRemoveSkipsAnotherProjectsTemplate(t *testing.T) {
	e := newEnv(t)
	name := e.make(t, "r1", map[string]string{naming.TagProjectName: "someone/else", naming.TagConfigName: config,
		naming.TagDeployWith: naming.DeployWithValue, naming.TagReleaseID: "r1"})
	_, err := e.c.AutoScaling.DeleteAutoScalingGroup(e.ctx, &autoscaling.DeleteAutoScalingGroupInput{AutoScalingGroupName: aws.String(name), ForceDelete: aws.Bool(true)})
	require.NoError(t, err)
	e.clk.Advance(10 * 60e9)
	res, err := (&fleet.Remover{Clients: e.c, Owner: owner}).Remove(e.ctx, []string{name})
	require.NoError(t, err)
	assert.Equal(t, []string{name}, res.Skipped)
	assert.Contains(t, e.left(name), "template")
}

// TestOthersLeavesGroupsBeingDeleted: what a swap retires are the other
// releases' groups not being deleted already (Status "Delete in
// progress", AutoScalingGroup, Auto Scaling API Reference).
func TestOthersLeavesGroupsBeingDeleted(t *testing.T) {
	g := func(name, release, status string) astypes.AutoScalingGroup {
		out := astypes.AutoScalingGroup{AutoScalingGroupName: aws.String(name), Tags: []astypes.TagDescription{{Key: aws.String(naming.TagReleaseID), Value: aws.String(release)}}}
		if status != "" {
			out.Status = aws.String(status)
		}
		return out
	}
	groups := []astypes.AutoScalingGroup{g("old", "r1", ""), g("going", "r0", "Delete in progress"), g("new", "r2", "")}
	assert.Equal(t, []string{"old"}, fleet.Others("r2", groups, nil))
}
