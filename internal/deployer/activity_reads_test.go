package deployer

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/fleet"
	"github.com/ferryhq/ferry/internal/health"
)

// activityLog answers DescribeScalingActivities for one group, as Auto
// Scaling describes a group's activities: newest first, in progress
// first (DescribeScalingActivities, Auto Scaling API Reference), each
// call at most MaxRecords of them; it counts the calls by MaxRecords.
type activityLog struct {
	cloud.AutoScaling
	acts  []astypes.Activity
	calls map[int32]int
}

func (a *activityLog) DescribeScalingActivities(_ context.Context, in *autoscaling.DescribeScalingActivitiesInput, _ ...func(*autoscaling.Options)) (*autoscaling.DescribeScalingActivitiesOutput, error) {
	if a.calls == nil {
		a.calls = map[int32]int{}
	}
	n := aws.ToInt32(in.MaxRecords)
	a.calls[n]++
	return &autoscaling.DescribeScalingActivitiesOutput{Activities: a.acts[:min(int(n), len(a.acts))]}, nil
}

// TestActivitiesNeed: a report reads a group's scaling activities on a
// change a check sees (its instances, one terminating, short of its
// launch count); a check reads nothing else, whatever a group's history.
// The gate reads every group never read, and asks of the others whether
// an activity began since their last read.
func TestActivitiesNeed(t *testing.T) {
	read := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	seen := execution.ServiceHealth{Instances: "d1", ActivitiesAt: &read}
	never := execution.ServiceHealth{Instances: "d1"}
	same := execution.ServiceHealth{Instances: "d1", Launched: 3}
	for _, tc := range []struct {
		name      string
		reads     activityReads
		prev, cur execution.ServiceHealth
		want      activityNeed
	}{
		{name: "instances changed", prev: seen, cur: execution.ServiceHealth{Instances: "d2", Launched: 3}, want: needRead},
		{name: "one terminating", prev: seen, cur: execution.ServiceHealth{Instances: "d1", Launched: 3, Terminating: 1}, want: needRead},
		{name: "short of the launch count", prev: seen, cur: execution.ServiceHealth{Instances: "d1", Launched: 2}, want: needRead},
		{name: "the first check", prev: execution.ServiceHealth{}, cur: same, want: needNone},
		{name: "unchanged, read before", prev: seen, cur: same, want: needNone},
		{name: "unchanged, never read", prev: never, cur: same, want: needNone},
		{name: "the gate, changed", reads: activitiesExact, prev: seen, cur: execution.ServiceHealth{Instances: "d2", Launched: 3}, want: needRead},
		{name: "the gate, never read", reads: activitiesExact, prev: never, cur: same, want: needRead},
		{name: "the gate, read before", reads: activitiesExact, prev: seen, cur: same, want: needProbe},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, needOf(tc.reads, tc.prev, tc.cur, 3))
		})
	}
}

// TestGateReadsActivitiesOnlyWhenOneBegan: at the gate, a group whose
// activities were read before is asked for its newest activity alone
// (one record); its whole history is read only when that one is in
// progress or began after the last read.
func TestGateReadsActivitiesOnlyWhenOneBegan(t *testing.T) {
	h := newHarness(t)
	r := h.baseRelease()
	last := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	g := astypes.AutoScalingGroup{AutoScalingGroupName: aws.String("g")}
	var live []string
	for _, id := range []string{"i-1", "i-2", "i-3"} {
		g.Instances = append(g.Instances, astypes.Instance{InstanceId: aws.String(id), LifecycleState: astypes.LifecycleStateInService, HealthStatus: aws.String("Healthy")})
		live = append(live, id)
	}
	prev := execution.ServiceHealth{Desired: 2, Launch: 3, Instances: health.Digest(live), ActivitiesAt: &last}
	act := func(start time.Time, code astypes.ScalingActivityStatusCode, what string) astypes.Activity {
		return astypes.Activity{StartTime: aws.Time(start), StatusCode: code, Description: aws.String(what)}
	}
	for _, tc := range []struct {
		name   string
		acts   []astypes.Activity
		read   bool
		latest time.Time
	}{
		{name: "nothing since", acts: []astypes.Activity{act(last, astypes.ScalingActivityStatusCodeSuccessful, "Launching a new EC2 instance: i-3")}},
		{name: "a termination since", acts: []astypes.Activity{
			act(last.Add(time.Minute), astypes.ScalingActivityStatusCodeSuccessful, "Terminating EC2 instance: i-4"),
			act(last, astypes.ScalingActivityStatusCodeSuccessful, "Launching a new EC2 instance: i-3")}, read: true, latest: last.Add(time.Minute)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := &activityLog{acts: tc.acts}
			got, err := readActivities(t.Context(), api, r, []string{"web"}, map[string]astypes.AutoScalingGroup{"web": g},
				map[string]execution.ServiceHealth{"web": prev}, activitiesExact)
			require.NoError(t, err)
			assert.Equal(t, 1, api.calls[1], "one record asked")
			if !tc.read {
				assert.Zero(t, api.calls[fleet.ActivitiesPerCall])
				assert.Nil(t, got["web"])
				return
			}
			assert.Equal(t, 1, api.calls[fleet.ActivitiesPerCall])
			require.NotNil(t, got["web"])
			assert.Equal(t, 1, got["web"].Terminated)
			assert.Equal(t, tc.latest, got["web"].Latest)
		})
	}
}
