package sim

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"

	"github.com/ferryhq/ferry/internal/cloud"
)

// CloudWatch is the simulated CloudWatch API (alarms) of one
// account-region.
type CloudWatch struct{ view }

var _ cloud.CloudWatch = (*CloudWatch)(nil)

const serviceCloudWatch = "CloudWatch"

// PutMetricAlarm creates or replaces an alarm. Tags are set when the alarm
// is created and ignored when it is replaced, as in AWS. From then on the
// alarm is evaluated on the world's clock (see evaluate), and while it is
// in ALARM it invokes its actions that are scaling policies.
func (c *CloudWatch) PutMetricAlarm(ctx context.Context, in *cloudwatch.PutMetricAlarmInput, _ ...func(*cloudwatch.Options)) (*cloudwatch.PutMetricAlarmOutput, error) {
	const op = "PutMetricAlarm"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	return &cloudwatch.PutMetricAlarmOutput{}, c.end(op, r.putAlarm(in))
}

func (r *region) putAlarm(in *cloudwatch.PutMetricAlarmInput) error {
	name := deref(in.AlarmName)
	switch {
	case name == "" || len(name) > 255:
		return apiErr("InvalidParameterValue", "AlarmName must have length between 1 and 255")
	case in.EvaluationPeriods == nil || *in.EvaluationPeriods < 1:
		return apiErr("MissingParameter", "The parameter EvaluationPeriods must be specified and at least 1")
	case in.ComparisonOperator == "":
		return apiErr("MissingParameter", "The parameter ComparisonOperator must be specified")
	case in.Metrics == nil && (deref(in.MetricName) == "" || deref(in.Namespace) == ""):
		return apiErr("MissingParameter", "The parameters MetricName and Namespace must be specified")
	case in.Metrics == nil && in.Statistic == "" && in.ExtendedStatistic == nil:
		return apiErr("MissingParameter", "The parameter Statistic or ExtendedStatistic must be specified")
	case in.Period != nil && *in.Period%60 != 0 && *in.Period != 10 && *in.Period != 30:
		return apiErr("InvalidParameterValue", "The parameter Period must be 10, 30 or a multiple of 60")
	case in.Threshold == nil && in.ThresholdMetricId == nil:
		return apiErr("MissingParameter", "The parameter Threshold must be specified")
	}
	// "If you are using this operation to create an alarm with tags, you
	// must have both the cloudwatch:PutMetricAlarm and
	// cloudwatch:TagResource permissions" (PutMetricAlarm, CloudWatch API
	// Reference).
	auths := []Auth{{Action: "cloudwatch:PutMetricAlarm", Resource: r.alarmARN(name), RequestTags: cwTags(in.Tags),
		Context: map[string][]string{"cloudwatch:AlarmActions": in.AlarmActions}}}
	if len(in.Tags) > 0 {
		auths = append(auths, Auth{Action: "cloudwatch:TagResource", Resource: r.alarmARN(name), RequestTags: cwTags(in.Tags)})
	}
	if err := r.w.authorize(auths...); err != nil {
		return err
	}
	if r.alarms[name] == nil && len(r.alarms) >= r.w.quotas.Alarms {
		return apiErr(cloud.CodeLimitExceeded, "The maximum number of alarms has been reached")
	}
	r.setAlarm(in)
	return nil
}

// setAlarm creates or replaces the alarm that in names, at now, and starts its
// evaluation.
func (r *region) setAlarm(in *cloudwatch.PutMetricAlarmInput) {
	name := deref(in.AlarmName)
	a := r.alarms[name]
	if a == nil {
		a = &alarm{arn: "arn:aws:cloudwatch:" + r.name + ":" + r.account.id + ":alarm:" + name, tags: append([]cwtypes.Tag(nil), in.Tags...)}
		a.state = alarmState{value: cwtypes.StateValueInsufficientData, reason: "Unchecked: Initial alarm creation", since: r.w.now}
		r.alarms[name] = a
	}
	a.input = *in
	a.updated = r.w.now
	a.state.breaching = time.Time{}
	r.scheduleAlarm(a, r.w.now)
}

// DescribeAlarms returns metric alarms by names (unknown names are left
// out) or name prefix (not both), sorted by name, paginated by MaxRecords
// (1-100, default 50) and NextToken.
func (c *CloudWatch) DescribeAlarms(ctx context.Context, in *cloudwatch.DescribeAlarmsInput, _ ...func(*cloudwatch.Options)) (*cloudwatch.DescribeAlarmsOutput, error) {
	const op = "DescribeAlarms"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	out, err := r.describeAlarms(in)
	return out, c.end(op, err)
}

func (r *region) describeAlarms(in *cloudwatch.DescribeAlarmsInput) (*cloudwatch.DescribeAlarmsOutput, error) {
	if len(in.AlarmNames) > 0 && in.AlarmNamePrefix != nil {
		return nil, apiErr("InvalidParameterCombination", "AlarmNames and AlarmNamePrefix cannot be specified together")
	}
	if len(in.AlarmNames) > 100 {
		return nil, apiErr(cloud.CodeValidation, "AlarmNames must have at most 100 members")
	}
	limit := int(deref(in.MaxRecords))
	if limit == 0 {
		limit = 50
	}
	if limit < 1 || limit > 100 {
		return nil, apiErr("InvalidParameterValue", "MaxRecords must be between 1 and 100")
	}
	var names []string
	if len(in.AlarmNames) > 0 {
		names = append(names, in.AlarmNames...)
		slices.Sort(names)
		names = slices.Compact(names)
	} else {
		for _, n := range slices.Sorted(maps.Keys(r.alarms)) {
			if strings.HasPrefix(n, deref(in.AlarmNamePrefix)) {
				names = append(names, n)
			}
		}
	}
	start, ok := pageStart(names, deref(in.NextToken))
	if !ok {
		return nil, apiErr("InvalidNextToken", "The specified token is invalid")
	}
	out := &cloudwatch.DescribeAlarmsOutput{MetricAlarms: []cwtypes.MetricAlarm{}}
	for _, n := range names[start:] {
		a := r.alarms[n]
		if a == nil {
			continue
		}
		if len(out.MetricAlarms) == limit {
			out.NextToken = pageToken(*out.MetricAlarms[limit-1].AlarmName)
			break
		}
		out.MetricAlarms = append(out.MetricAlarms, a.describe())
	}
	return out, nil
}

func (a *alarm) describe() cwtypes.MetricAlarm {
	in := a.input
	return cwtypes.MetricAlarm{
		AlarmName: in.AlarmName, AlarmArn: aws.String(a.arn), AlarmDescription: in.AlarmDescription,
		AlarmActions: in.AlarmActions, OKActions: in.OKActions, ActionsEnabled: aws.Bool(in.ActionsEnabled == nil || *in.ActionsEnabled),
		MetricName: in.MetricName, Namespace: in.Namespace, Statistic: in.Statistic, Dimensions: in.Dimensions,
		Period: in.Period, EvaluationPeriods: in.EvaluationPeriods, Threshold: in.Threshold,
		ComparisonOperator: in.ComparisonOperator, StateValue: a.state.value, StateReason: aws.String(a.state.reason),
		StateUpdatedTimestamp:              aws.Time(a.state.since),
		AlarmConfigurationUpdatedTimestamp: aws.Time(a.updated), Unit: in.Unit,
	}
}

// DeleteAlarms deletes up to 100 alarms. Following the current API
// reference, the alarms that exist are deleted even when some names are
// wrong; the call then fails with ResourceNotFound naming the first
// missing one, so a retry of a partly done delete sees ResourceNotFound.
func (c *CloudWatch) DeleteAlarms(ctx context.Context, in *cloudwatch.DeleteAlarmsInput, _ ...func(*cloudwatch.Options)) (*cloudwatch.DeleteAlarmsOutput, error) {
	const op = "DeleteAlarms"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	if len(in.AlarmNames) > 100 {
		return nil, c.end(op, apiErr(cloud.CodeValidation, "AlarmNames must have at most 100 members"))
	}
	var auths []Auth
	for _, n := range in.AlarmNames {
		auths = append(auths, Auth{Action: "cloudwatch:DeleteAlarms", Resource: r.alarmARN(n)})
	}
	if err := r.w.authorize(auths...); err != nil {
		return nil, c.end(op, err)
	}
	var missing error
	for _, n := range in.AlarmNames {
		if r.alarms[n] == nil {
			if missing == nil {
				missing = apiErrf(cloud.CodeResourceNotFound, "Alarm %s does not exist", n)
			}
			continue
		}
		delete(r.alarms, n)
	}
	if missing != nil {
		return nil, c.end(op, missing)
	}
	return &cloudwatch.DeleteAlarmsOutput{}, c.end(op, nil)
}

// ListTagsForResource lists the tags of an alarm, by ARN. An ARN that
// names no alarm of the region is ResourceNotFound, as CloudWatch answers.
func (c *CloudWatch) ListTagsForResource(ctx context.Context, in *cloudwatch.ListTagsForResourceInput, _ ...func(*cloudwatch.Options)) (*cloudwatch.ListTagsForResourceOutput, error) {
	const op = "ListTagsForResource"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	for _, a := range r.alarms {
		if a.arn == deref(in.ResourceARN) {
			return &cloudwatch.ListTagsForResourceOutput{Tags: slices.Clone(a.tags)}, c.end(op, nil)
		}
	}
	return nil, c.end(op, apiErrf("ResourceNotFoundException", "Resource %s not found", deref(in.ResourceARN)))
}
