package resources

import (
	"context"
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/naming/tags"
	"github.com/ferryhq/ferry/internal/release"
)

// describeAlarmsBatch is how many names one DescribeAlarms call takes.
const describeAlarmsBatch = 100

// checkAlarms checks the alarms r names (at the release and per service,
// alarmUses): each must exist in the target and be the project-config's
// own, tagged with its ProjectName and ConfigName, so a release can be
// gated only by alarms its team owns. Calls: one DescribeAlarms per 100
// names, one ListTagsForResource per alarm.
func checkAlarms(ctx context.Context, api cloud.CloudWatch, r *release.Release, p *problems) error {
	uses := alarmUses(r)
	if len(uses) == 0 {
		return nil
	}
	arns, err := AlarmARNs(ctx, api, r.AlarmNames())
	if err != nil {
		return err
	}
	checked := map[string]bool{}
	for _, u := range uses {
		arn, ok := arns[u.ref]
		if !ok {
			p.add(u.path, "alarm %q not found", u.ref)
			continue
		}
		if checked[u.ref] {
			continue
		}
		checked[u.ref] = true
		out, err := api.ListTagsForResource(ctx, &cloudwatch.ListTagsForResourceInput{ResourceARN: aws.String(arn)})
		if err != nil {
			return cloud.Classify("cloudwatch:ListTagsForResource", err)
		}
		alarmTags := tags.FromCloudWatch(out.Tags)
		for _, w := range [][2]string{{naming.TagProjectName, r.ProjectName}, {naming.TagConfigName, r.ConfigName}} {
			if alarmTags[w[0]] != w[1] {
				p.add(u.path, "alarm %q is tagged %s=%q, not %q", u.ref, w[0], alarmTags[w[0]], w[1])
			}
		}
	}
	return nil
}

// alarmUses are the places r names an alarm.
func alarmUses(r *release.Release) []use {
	out := appendUses(nil, "alarms", r.Alarms, "")
	for _, name := range slices.Sorted(maps.Keys(r.Services)) {
		if s := r.Services[name]; s != nil {
			out = appendUses(out, "services."+name+".alarms", s.Alarms, name)
		}
	}
	return out
}

// AlarmARNs returns the ARN of each of names that exists, by name (a name
// missing from the result does not exist). A failure is classified.
func AlarmARNs(ctx context.Context, api cloud.CloudWatch, names []string) (map[string]string, error) {
	out := map[string]string{}
	alarms, err := DescribeAlarms(ctx, api, names)
	for _, a := range alarms {
		out[aws.ToString(a.AlarmName)] = aws.ToString(a.AlarmArn)
	}
	return out, err
}

// DescribeAlarms describes the alarms of names that exist, by batches of
// 100, every page. A failure is classified.
func DescribeAlarms(ctx context.Context, api cloud.CloudWatch, names []string) ([]cwtypes.MetricAlarm, error) {
	var out []cwtypes.MetricAlarm
	for batch := range slices.Chunk(names, describeAlarmsBatch) {
		in := &cloudwatch.DescribeAlarmsInput{AlarmNames: batch, MaxRecords: aws.Int32(describeAlarmsBatch)}
		for {
			page, err := api.DescribeAlarms(ctx, in)
			if err != nil {
				return nil, cloud.Classify("cloudwatch:DescribeAlarms", err)
			}
			out = append(out, page.MetricAlarms...)
			if aws.ToString(page.NextToken) == "" {
				break
			}
			in.NextToken = page.NextToken
		}
	}
	return out, nil
}
