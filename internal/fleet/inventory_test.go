package fleet_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/cloud"
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
	assert.Equal(t, []string{"old"}, fleet.Others("r2", fleet.Summaries(groups), nil))
}

// TestDescribeKnownAsksOnlyForTheRest: DescribeKnown takes the groups
// its caller knows from it and asks AWS only for the others, 100 names a
// call (DescribeAutoScalingGroups accepts as many names as its
// MaxRecords, at most 100: Auto Scaling API Reference): none when every
// name is known. A name the caller's
// listing did not show is asked for by name.
func TestDescribeKnownAsksOnlyForTheRest(t *testing.T) {
	e := newEnv(t)
	a, b := e.make(t, "r1", nil), e.make(t, "r2", nil)
	all, err := fleet.Describe(e.ctx, e.c.AutoScaling, []string{a, b})
	require.NoError(t, err)
	many := []string{a}
	for i := range 98 {
		many = append(many, fmt.Sprintf("absent-%03d", i))
	}
	tests := []struct {
		name  string
		names []string
		known map[string]astypes.AutoScalingGroup
		calls int
	}{
		{"every name known", []string{a, b}, all, 0},
		{"one known", []string{a, b}, map[string]astypes.AutoScalingGroup{a: all[a]}, 1},
		{"none known", []string{a, b}, nil, 1},
		{"a batch of names in one call", append(many, b), nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.world.ResetCalls()
			got, err := fleet.DescribeKnown(e.ctx, e.c.AutoScaling, tt.names, tt.known)
			require.NoError(t, err)
			assert.ElementsMatch(t, []string{a, b}, slices.Collect(maps.Keys(got)))
			assert.Equal(t, tt.calls, e.world.Calls()["DescribeAutoScalingGroups"])
		})
	}
}

// TestRemoveJudgesWhatItWasGiven: a Remover given the groups as a
// describe moments before showed them (Described) asks AWS for no other
// describe, and refuses a group that description shows in service as it
// would on its own describe: nothing of it is deleted.
func TestRemoveJudgesWhatItWasGiven(t *testing.T) {
	e := newEnv(t)
	name := e.make(t, "r1", nil)
	e.clk.Advance(5 * 60e9)
	seen, err := fleet.Describe(e.ctx, e.c.AutoScaling, []string{name})
	require.NoError(t, err)
	require.NotEmpty(t, seen[name].Instances)
	e.world.ResetCalls()
	_, err = (&fleet.Remover{Clients: e.c, Owner: owner, Described: seen}).Remove(e.ctx, []string{name})
	require.Error(t, err, "in service: not deleted")
	assert.Zero(t, e.world.Calls()["DescribeAutoScalingGroups"])
	assert.Zero(t, e.world.Calls()["DeleteAutoScalingGroup"])
	assert.Contains(t, e.left(name), "group")
}

// includeRecorder records the IncludeInstances and the names asked for
// of each DescribeAutoScalingGroups it passes on.
type includeRecorder struct {
	cloud.AutoScaling
	include []*bool
	asked   [][]string
}

func (r *includeRecorder) DescribeAutoScalingGroups(ctx context.Context, in *autoscaling.DescribeAutoScalingGroupsInput, optFns ...func(*autoscaling.Options)) (*autoscaling.DescribeAutoScalingGroupsOutput, error) {
	r.include = append(r.include, in.IncludeInstances)
	r.asked = append(r.asked, in.AutoScalingGroupNames)
	return r.AutoScaling.DescribeAutoScalingGroups(ctx, in, optFns...)
}

// TestSummariesAskWithoutInstances: List and DescribeSummaries ask
// DescribeAutoScalingGroups for no instances (IncludeInstances false:
// "When set to true (default), the response includes instance details",
// Auto Scaling API Reference), Groups and Describe for them; a Summary
// is what the full description says of the group (name, tags, load
// balancers, capacity, suspended processes), and DescribeSummaries asks
// only for the names its caller did not know.
func TestSummariesAskWithoutInstances(t *testing.T) {
	e := newEnv(t)
	a, b := e.make(t, "r1", nil), e.make(t, "r2", nil)
	rec := &includeRecorder{AutoScaling: e.c.AutoScaling}
	full, err := fleet.Groups(e.ctx, rec, owner)
	require.NoError(t, err)
	_, err = fleet.Describe(e.ctx, rec, []string{a})
	require.NoError(t, err)
	assert.Equal(t, []*bool{aws.Bool(true), aws.Bool(true)}, rec.include, "Groups and Describe ask for the instances")

	rec.include = nil
	listed, err := fleet.List(e.ctx, rec, owner)
	require.NoError(t, err)
	assert.Equal(t, fleet.Summaries(full), listed, "everything a summary holds, as with the instances")
	known := listed[slices.IndexFunc(listed, func(s fleet.Summary) bool { return s.Name == a }):][:1]
	rec.asked = nil
	byName, err := fleet.DescribeSummaries(e.ctx, rec, []string{a, b}, known)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{a, b}, slices.Collect(maps.Keys(byName)))
	assert.Equal(t, known[0], byName[a], "the summary known, as it was")
	assert.Equal(t, b, byName[b].Name, "each name's own summary, never another known one")
	assert.Equal(t, []*bool{aws.Bool(false), aws.Bool(false)}, rec.include, "List and DescribeSummaries ask for none")
	assert.Equal(t, [][]string{{b}}, rec.asked, "only the name not known is asked for")
}

// TestSummaryUnsuspended: the processes of a list a group has not
// suspended, in the list's order, from its summary as from its full
// description (fleet.Unsuspended): what the bake's standby record and a
// retirement suspend or resume.
func TestSummaryUnsuspended(t *testing.T) {
	g := astypes.AutoScalingGroup{AutoScalingGroupName: aws.String("g"), SuspendedProcesses: []astypes.SuspendedProcess{
		{ProcessName: aws.String("Launch")}, {ProcessName: aws.String("AZRebalance")},
	}}
	procs := []string{"Launch", "Terminate", "AZRebalance", "AlarmNotification"}
	assert.Equal(t, []string{"Terminate", "AlarmNotification"}, fleet.Summarize(g).Unsuspended(procs))
	assert.Equal(t, fleet.Unsuspended(g, procs), fleet.Summarize(g).Unsuspended(procs))
	assert.Equal(t, procs, fleet.Summary{}.Unsuspended(procs), "none suspended: every one")
}

// TestGroupsListsAPageOfTheMost: a project-config's groups are listed
// limits.DescribeGroupsBatch a call (DescribeAutoScalingGroups'
// MaxRecords, at most 100, 50 by default: Auto Scaling API Reference):
// the previous and the new groups of a release of 50 services are one
// call, with their instances or without.
func TestGroupsListsAPageOfTheMost(t *testing.T) {
	e := newEnv(t)
	const n = 60
	for i := range n {
		e.make(t, fmt.Sprintf("r%02d", i), nil)
	}
	e.world.ResetCalls()
	groups, err := fleet.Groups(e.ctx, e.c.AutoScaling, owner)
	require.NoError(t, err)
	assert.Len(t, groups, n)
	summaries, err := fleet.List(e.ctx, e.c.AutoScaling, owner)
	require.NoError(t, err)
	assert.Len(t, summaries, n)
	assert.Equal(t, 2, e.world.Calls()["DescribeAutoScalingGroups"], "one call each")
}
