package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"

	"github.com/ferryhq/ferry/internal/cloud"
)

// activity is one scaling activity of a group: an instance launched (or a
// launch that failed) or terminated. Its status is a function of time: in
// progress until end, then Successful (or Failed at once).
type activity struct {
	id          string
	description string
	cause       string
	details     string
	start, end  time.Time
	failed      bool
	message     string
}

// record adds an activity to the group's history.
func (g *group) record(a *activity) { g.activities = append(g.activities, a) }

// newActivityID returns a deterministic activity id (UUID-shaped).
func (w *World) newActivityID() string {
	w.ids["activity"]++
	return uuidFrom(w.ids["activity"])
}

// activityDetails is an activity's Details: the subnet and zone it acted in.
func activityDetails(sn *subnet) string {
	b, _ := json.Marshal(map[string]string{"Subnet ID": sn.id, "Availability Zone": sn.az})
	return string(b)
}

func (a *activity) describe(g *group, now time.Time) astypes.Activity {
	out := astypes.Activity{
		ActivityId: aws.String(a.id), AutoScalingGroupName: aws.String(g.name), AutoScalingGroupARN: aws.String(g.arn),
		Description: aws.String(a.description), Cause: aws.String(a.cause), Details: aws.String(a.details),
		StartTime: aws.Time(a.start),
	}
	switch {
	case a.failed:
		out.StatusCode, out.StatusMessage = astypes.ScalingActivityStatusCodeFailed, aws.String(a.message)
		out.Progress, out.EndTime = aws.Int32(100), aws.Time(a.end)
	case now.Before(a.end):
		out.StatusCode, out.Progress = astypes.ScalingActivityStatusCodeInProgress, aws.Int32(50)
	default:
		out.StatusCode, out.Progress, out.EndTime = astypes.ScalingActivityStatusCodeSuccessful, aws.Int32(100), aws.Time(a.end)
	}
	return out
}

// DescribeScalingActivities returns a group's scaling activities (every
// launch, failed launch and termination), activities in progress first,
// then newest first, paginated by MaxRecords (1-100, default 100) and
// NextToken. A group that does not exist (or is not visible yet) has no
// activities; without a group name every group's activities are
// described. ActivityIds filters by id.
func (c *AutoScaling) DescribeScalingActivities(ctx context.Context, in *autoscaling.DescribeScalingActivitiesInput, _ ...func(*autoscaling.Options)) (*autoscaling.DescribeScalingActivitiesOutput, error) {
	const op = "DescribeScalingActivities"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	out, err := r.describeActivities(in)
	return out, c.end(op, err)
}

func (r *region) describeActivities(in *autoscaling.DescribeScalingActivitiesInput) (*autoscaling.DescribeScalingActivitiesOutput, error) {
	limit := int(deref(in.MaxRecords))
	if limit == 0 {
		limit = 100
	}
	if limit < 1 || limit > 100 {
		return nil, apiErr(cloud.CodeValidation, "MaxRecords must be between 1 and 100")
	}
	if len(in.ActivityIds) > 50 {
		return nil, apiErr(cloud.CodeValidation, "ActivityIds must have at most 50 members")
	}
	var groups []*group
	if name := deref(in.AutoScalingGroupName); name != "" {
		if g := r.groups[name]; g != nil && r.visible(g) {
			groups = append(groups, g)
		}
	} else {
		for _, n := range slices.Sorted(maps.Keys(r.groups)) {
			if g := r.groups[n]; r.visible(g) {
				groups = append(groups, g)
			}
		}
	}
	now := r.w.now
	type entry struct {
		a *activity
		g *group
	}
	var all []entry
	for _, g := range groups {
		for _, a := range g.activities {
			if len(in.ActivityIds) == 0 || slices.Contains(in.ActivityIds, a.id) {
				all = append(all, entry{a, g})
			}
		}
	}
	inProgress := func(e entry) bool { return !e.a.failed && now.Before(e.a.end) }
	slices.SortStableFunc(all, func(x, y entry) int {
		if px, py := inProgress(x), inProgress(y); px != py {
			if px {
				return -1
			}
			return 1
		}
		return y.a.start.Compare(x.a.start)
	})
	start := 0
	if tok := deref(in.NextToken); tok != "" {
		if _, err := fmt.Sscanf(tok, "offset:%d", &start); err != nil || start < 0 || start > len(all) {
			return nil, apiErr("InvalidNextToken", "The token is not valid")
		}
	}
	out := &autoscaling.DescribeScalingActivitiesOutput{Activities: []astypes.Activity{}}
	for k := start; k < len(all); k++ {
		if len(out.Activities) == limit {
			out.NextToken = aws.String(fmt.Sprintf("offset:%d", k))
			break
		}
		out.Activities = append(out.Activities, all[k].a.describe(all[k].g, now))
	}
	return out, nil
}
