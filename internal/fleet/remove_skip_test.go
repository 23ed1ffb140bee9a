package fleet_test

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/fleet"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
)

// TestRemoveSkipsAnotherProjectsGroupWithoutTemplate: a group of the
// name that is not ferry's for this project is never deleted, even when
// no launch template of the name is left to tell: the group's own tags
// decide.
func TestRemoveSkipsAnotherProjectsGroupWithoutTemplate(t *testing.T) {
	e := newEnv(t)
	name := e.make(t, "r1", map[string]string{naming.TagProjectName: "someone/else", naming.TagConfigName: config,
		naming.TagDeployWith: naming.DeployWithValue, naming.TagReleaseID: "r1"})
	_, err := e.c.EC2.DeleteLaunchTemplate(e.ctx, &ec2.DeleteLaunchTemplateInput{LaunchTemplateName: aws.String(name)})
	require.NoError(t, err)
	res, err := (&fleet.Remover{Clients: e.c, Owner: owner}).Remove(e.ctx, []string{name})
	require.NoError(t, err)
	assert.Equal(t, []string{name}, res.Skipped)
	assert.Empty(t, res.Removed)
	assert.Contains(t, e.left(name), "group")
}

// TestRemoveNamesWhatAFailureLeaves: a CleanUpError names every resource
// of the name still standing, so whoever cleans up by hand knows all of
// it: an alarm CloudWatch would not delete keeps its group and launch
// template too (they are not deleted after it).
func TestRemoveNamesWhatAFailureLeaves(t *testing.T) {
	e := newEnv(t)
	name := e.make(t, "r1", nil)
	_, err := e.world.Faults().Add(sim.Rule{Op: "DeleteAlarms", Nth: 1, Err: sim.AccessDenied()})
	require.NoError(t, err)
	_, err = (&fleet.Remover{Clients: e.c, Owner: owner}).Remove(e.ctx, []string{name})
	var ce *failure.CleanUpError
	require.ErrorAs(t, err, &ce)
	all := strings.Join(ce.Leftovers, "\n")
	assert.Contains(t, all, "auto scaling group "+name)
	assert.Contains(t, all, "launch template "+name)
	assert.Contains(t, all, "alarms ")
	assert.Equal(t, []string{"group", "template", "alarm"}, e.left(name))
}

// TestRemoveFinishesAGroupBeingDeleted: a group already being deleted
// (Status "Delete in progress", AutoScalingGroup, Auto Scaling API
// Reference) is not refused for the instances it still shows: its
// deletion is under way, and its alarms and launch template are removed.
func TestRemoveFinishesAGroupBeingDeleted(t *testing.T) {
	e := newEnv(t)
	name := e.serving(t, "r1", nil)
	c := *e.c
	c.AutoScaling = deleting{e.c.AutoScaling}
	res, err := (&fleet.Remover{Clients: &c, Owner: owner}).Remove(e.ctx, []string{name})
	require.NoError(t, err)
	assert.Equal(t, []string{name}, res.Removed)
	assert.NotContains(t, e.left(name), "template")
}
