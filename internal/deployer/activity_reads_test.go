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
	"github.com/ferryhq/ferry/internal/tuning"
)

// newestActivity answers DescribeScalingActivities with one activity,
// started at start, as Auto Scaling describes a group's newest first
// (in progress first: DescribeScalingActivities, Auto Scaling API
// Reference), and counts the calls.
type newestActivity struct {
	cloud.AutoScaling
	start time.Time
	code  astypes.ScalingActivityStatusCode
	calls int
}

func (n *newestActivity) DescribeScalingActivities(context.Context, *autoscaling.DescribeScalingActivitiesInput, ...func(*autoscaling.Options)) (*autoscaling.DescribeScalingActivitiesOutput, error) {
	n.calls++
	return &autoscaling.DescribeScalingActivitiesOutput{Activities: []astypes.Activity{{StartTime: aws.Time(n.start), StatusCode: n.code}}}, nil
}

// TestActivitiesDue: a report reads a group's scaling activities on a
// change a check sees (its instances, one terminating, short of its
// launch count). A check reads those of a group never read once, while
// the calls its load balancer reads leave of tuning.BalancerReadBurst
// cover the pages (one per 100 instances and one more): a check's calls
// grow neither with instances nor with the first reads. The gate reads
// every group never read, and, asking for the newest activity alone, a
// group with one in progress or begun since the last read.
func TestActivitiesDue(t *testing.T) {
	read := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	seen := execution.ServiceHealth{Instances: "d1", ActivitiesAt: &read}
	never := execution.ServiceHealth{Instances: "d1"}
	same := execution.ServiceHealth{Instances: "d1", Launched: 3}
	over := astypes.ScalingActivityStatusCodeSuccessful
	for _, tc := range []struct {
		name        string
		reads       activityReads
		first       int
		prev, cur   execution.ServiceHealth
		instances   int
		newest      time.Time
		code        astypes.ScalingActivityStatusCode
		due         bool
		left, calls int
	}{
		{name: "instances changed", prev: seen, cur: execution.ServiceHealth{Instances: "d2", Launched: 3}, due: true},
		{name: "one terminating", prev: seen, cur: execution.ServiceHealth{Instances: "d1", Launched: 3, Terminating: 1}, due: true},
		{name: "short of the launch count", prev: seen, cur: execution.ServiceHealth{Instances: "d1", Launched: 2}, due: true},
		{name: "unchanged, read before", prev: seen, cur: same},
		{name: "never read, calls to spare", first: 2, prev: never, cur: same, instances: 150, due: true},
		{name: "never read, too few calls left", first: 1, prev: never, cur: same, instances: 150, left: 1},
		{name: "never read, at the gate", reads: activitiesExact, prev: never, cur: same, instances: 150, due: true},
		{name: "the gate, nothing since", reads: activitiesExact, prev: seen, cur: same, newest: read, code: over, calls: 1},
		{name: "the gate, one begun since", reads: activitiesExact, prev: seen, cur: same, newest: read.Add(time.Millisecond), code: over, due: true, calls: 1},
		{name: "the gate, one in progress", reads: activitiesExact, prev: seen, cur: same, newest: read.Add(-time.Hour), code: astypes.ScalingActivityStatusCodeInProgress, due: true, calls: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := &newestActivity{start: tc.newest, code: tc.code}
			b := &activityBudget{reads: tc.reads, first: tc.first}
			due, err := b.due(t.Context(), api, "g", tc.prev, tc.cur, 3, tc.instances)
			require.NoError(t, err)
			assert.Equal(t, tc.due, due)
			assert.Equal(t, tc.left, b.first, "calls left for first reads")
			assert.Equal(t, tc.calls, api.calls)
		})
	}
	assert.Equal(t, tuning.BalancerReadBurst-12, firstReads(12))
	assert.Zero(t, firstReads(tuning.BalancerReadBurst+5))
}
