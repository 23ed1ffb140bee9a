package fleet_test

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
	"github.com/ferryhq/ferry/internal/fleet"
	"github.com/ferryhq/ferry/internal/naming"
)

// activities answers DescribeScalingActivities with acts, newest first,
// as Auto Scaling does; every other call is the embedded API's.
type activities struct {
	cloud.AutoScaling
	acts []astypes.Activity
}

var _ cloud.AutoScaling = (*activities)(nil)

func (a *activities) DescribeScalingActivities(context.Context, *autoscaling.DescribeScalingActivitiesInput, ...func(*autoscaling.Options)) (*autoscaling.DescribeScalingActivitiesOutput, error) {
	return &autoscaling.DescribeScalingActivitiesOutput{Activities: a.acts}, nil
}

// TestReadActivitiesFailed: a launch that will fail again is the newest
// activity in status Failed or Cancelled (Activity.StatusCode, Auto
// Scaling API Reference) whose message is not a capacity shortage (which
// Auto Scaling retries in other zones: InsufficientInstanceCapacity, EC2
// API Reference, Error codes); a successful activity or a shortage is not.
func TestReadActivitiesFailed(t *testing.T) {
	act := func(code astypes.ScalingActivityStatusCode, msg string) astypes.Activity {
		return astypes.Activity{StatusCode: code, StatusMessage: aws.String(msg), Description: aws.String("Launching a new EC2 instance")}
	}
	shortage := "We currently do not have sufficient t2.nano capacity in the Availability Zone you requested"
	for _, tc := range []struct {
		name string
		acts []astypes.Activity
		want string
	}{
		{"none failed", []astypes.Activity{act(astypes.ScalingActivityStatusCodeSuccessful, "ok")}, ""},
		{"failed", []astypes.Activity{act(astypes.ScalingActivityStatusCodeFailed, "The image id does not exist")}, "The image id does not exist"},
		{"cancelled", []astypes.Activity{act(astypes.ScalingActivityStatusCodeCancelled, "Invalid IAM instance profile")}, "Invalid IAM instance profile"},
		{"a shortage is retried", []astypes.Activity{act(astypes.ScalingActivityStatusCodeFailed, shortage)}, ""},
		{"the newest failure", []astypes.Activity{
			act(astypes.ScalingActivityStatusCodeFailed, shortage),
			act(astypes.ScalingActivityStatusCodeFailed, "newest"),
			act(astypes.ScalingActivityStatusCodeCancelled, "older"),
		}, "newest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			got, err := fleet.ReadActivities(e.ctx, &activities{AutoScaling: e.c.AutoScaling, acts: tc.acts}, "g")
			require.NoError(t, err)
			assert.Equal(t, tc.want, got.Failed)
			assert.Zero(t, got.Terminated)
		})
	}
}

// TestOwnerMarks: a resource is ferry's for the project-config only when
// all three of its tags say so: project, config and the deployer's mark.
func TestOwnerMarks(t *testing.T) {
	assert.True(t, owner.Marks(releaseTags("r1")))
	for _, k := range []string{naming.TagProjectName, naming.TagConfigName, naming.TagDeployWith} {
		tags := releaseTags("r1")
		tags[k] = "other"
		assert.False(t, owner.Marks(tags), "%s differs", k)
	}
}

// TestReadActivitiesRebalanced: an instance Capacity Rebalancing
// terminated (its activity's Cause names the "EC2 instance rebalance
// recommendation": "Use Capacity Rebalancing to handle Amazon EC2 Spot
// Interruptions", Auto Scaling User Guide) is reported by its id, not
// counted as a termination.
func TestReadActivitiesRebalanced(t *testing.T) {
	e := newEnv(t)
	acts := []astypes.Activity{
		{Description: aws.String("Terminating EC2 instance: i-0aaa"), Cause: aws.String("At 2025-06-01T12:00:00Z an instance was taken out of service in response to an EC2 instance rebalance recommendation."), StatusCode: astypes.ScalingActivityStatusCodeSuccessful},
		{Description: aws.String("Terminating EC2 instance: i-0bbb"), Cause: aws.String("At 2025-06-01T12:00:00Z an instance was taken out of service in response to a user request."), StatusCode: astypes.ScalingActivityStatusCodeSuccessful},
	}
	got, err := fleet.ReadActivities(e.ctx, &activities{AutoScaling: e.c.AutoScaling, acts: acts}, "g")
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{"i-0aaa": true}, got.Rebalanced)
	assert.Equal(t, 1, got.Terminated)
}

// TestActivitySince: Auto Scaling describes a group's activities in
// progress first, then by start time, newest first ("Activities are
// sorted by start time. Activities still in progress are described
// first", DescribeScalingActivities, Auto Scaling API Reference). One
// record then says whether an activity began after a time: the first is
// in progress (Activity.StatusCode neither Successful, Failed nor
// Cancelled), or over and started after it. ReadActivities's Latest is
// when the newest of all started.
func TestActivitySince(t *testing.T) {
	at := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	act := func(start time.Time, code astypes.ScalingActivityStatusCode) astypes.Activity {
		return astypes.Activity{StartTime: aws.Time(start), StatusCode: code, Description: aws.String("Launching a new EC2 instance")}
	}
	for _, tc := range []struct {
		name   string
		acts   []astypes.Activity
		since  bool
		latest time.Time
	}{
		{"none", nil, false, time.Time{}},
		{"the one read, over", []astypes.Activity{act(at, astypes.ScalingActivityStatusCodeSuccessful), act(at.Add(-time.Minute), astypes.ScalingActivityStatusCodeSuccessful)}, false, at},
		{"a later one, over", []astypes.Activity{act(at.Add(time.Second), astypes.ScalingActivityStatusCodeSuccessful), act(at, astypes.ScalingActivityStatusCodeSuccessful)}, true, at.Add(time.Second)},
		{"a later one failed", []astypes.Activity{act(at.Add(time.Second), astypes.ScalingActivityStatusCodeCancelled)}, true, at.Add(time.Second)},
		{"one in progress", []astypes.Activity{act(at.Add(-time.Hour), astypes.ScalingActivityStatusCodeInProgress), act(at, astypes.ScalingActivityStatusCodeSuccessful)}, true, at},
		{"one waiting for a hook", []astypes.Activity{act(at.Add(-time.Hour), astypes.ScalingActivityStatusCodeMidLifecycleAction)}, true, at.Add(-time.Hour)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := &activities{acts: tc.acts}
			since, err := fleet.ActivitySince(t.Context(), api, "g", at)
			require.NoError(t, err)
			assert.Equal(t, tc.since, since)
			read, err := fleet.ReadActivities(t.Context(), api, "g")
			require.NoError(t, err)
			assert.Equal(t, tc.latest, read.Latest)
		})
	}
}
