package sim

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
)

// The load balancer metrics the simulation publishes (Elastic Load
// Balancing User Guides, "CloudWatch metrics for your Classic Load
// Balancer" and "... for your Application Load Balancer"): RequestCount
// and the targets' 5xx, per classic load balancer (dimension
// LoadBalancerName) and per target group of an application load balancer
// (dimensions TargetGroup and LoadBalancer, each the final portion of
// its ARN: targetgroup/NAME/ID, app/NAME/ID).
const (
	namespaceELB        = "AWS/ELB"
	namespaceALB        = "AWS/ApplicationELB"
	metricRequests      = "RequestCount"
	metricELBBackend5XX = "HTTPCode_Backend_5XX"
	metricALBTarget5XX  = "HTTPCode_Target_5XX_Count"
)

// maxMetricQueries is how many queries one GetMetricData call may make
// (CloudWatch API Reference, GetMetricData: "you can include as many as
// 500 MetricDataQuery structures").
const maxMetricQueries = 500

// GetMetricData returns, for each query, one datapoint per Period (a
// multiple of 60 seconds) from StartTime, rounded down to the minute,
// to EndTime that has data (CloudWatch API Reference, GetMetricData),
// of the metrics the simulation publishes: load balancer metrics (see
// namespaceELB; the Sum only) and Auto Scaling group metrics, dimension
// AutoScalingGroupName (groupSeries). Datapoints come newest first
// (ScanBy's default, TimestampDescending) or oldest first
// (TimestampAscending). At most MaxDatapoints (default 100,800) come in
// one call, the query cut short answered with StatusCode PartialData and
// the output's NextToken, with which the next call goes on from there
// (the queries before it answered already). A metric the simulation
// does not publish has no datapoints, as a metric without data has none
// on AWS. GetMetricData has no resource-level permissions (Resource
// "*").
func (c *CloudWatch) GetMetricData(ctx context.Context, in *cloudwatch.GetMetricDataInput, _ ...func(*cloudwatch.Options)) (*cloudwatch.GetMetricDataOutput, error) {
	const op = "GetMetricData"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	out, err := r.getMetricData(in)
	return out, c.end(op, err)
}

// defaultMaxDatapoints is GetMetricData's MaxDatapoints when a request
// sets none (CloudWatch API Reference, GetMetricData).
const defaultMaxDatapoints = 100800

func (r *region) getMetricData(in *cloudwatch.GetMetricDataInput) (*cloudwatch.GetMetricDataOutput, error) {
	if err := checkMetricDataInput(in); err != nil {
		return nil, err
	}
	if err := r.w.authorize(Auth{Action: "cloudwatch:GetMetricData", Resource: "*"}); err != nil {
		return nil, err
	}
	from, skip, ok := metricPageStart(deref(in.NextToken), len(in.MetricDataQueries))
	if !ok {
		return nil, apiErr("InvalidNextToken", "The specified token is invalid")
	}
	budget := int(deref(in.MaxDatapoints))
	if budget <= 0 {
		budget = defaultMaxDatapoints
	}
	start, end := in.StartTime.UTC().Truncate(time.Minute), in.EndTime.UTC()
	out := &cloudwatch.GetMetricDataOutput{}
	for qi := from; qi < len(in.MetricDataQueries); qi++ {
		q := in.MetricDataQueries[qi]
		if err := checkMetricQuery(q); err != nil {
			return nil, err
		}
		times, values := r.metricSeries(q.MetricStat, start, end)
		if in.ScanBy != cwtypes.ScanByTimestampAscending {
			slices.Reverse(times)
			slices.Reverse(values)
		}
		times, values = times[min(skip, len(times)):], values[min(skip, len(values)):]
		res := cwtypes.MetricDataResult{Id: q.Id, Label: q.MetricStat.Metric.MetricName, StatusCode: cwtypes.StatusCodeComplete}
		if len(times) > budget {
			res.StatusCode = cwtypes.StatusCodePartialData
			out.NextToken = aws.String(fmt.Sprintf("%d:%d", qi, skip+budget))
			times, values = times[:budget], values[:budget]
		}
		res.Timestamps, res.Values = append(res.Timestamps, times...), append(res.Values, values...)
		out.MetricDataResults = append(out.MetricDataResults, res)
		budget -= len(times)
		skip = 0
		if out.NextToken != nil {
			break
		}
	}
	return out, nil
}

// metricPageStart is where a GetMetricData page goes on from its
// NextToken ("" for the first): the query, and how many of its
// datapoints came already.
func metricPageStart(token string, queries int) (query, skip int, ok bool) {
	if token == "" {
		return 0, 0, true
	}
	if _, err := fmt.Sscanf(token, "%d:%d", &query, &skip); err != nil || query < 0 || query >= queries || skip < 0 {
		return 0, 0, false
	}
	return query, skip, true
}

// metricSeries is a query's datapoints from start to end, oldest first:
// a load balancer metric's Sum, or an Auto Scaling group metric's
// statistic (groupSeries); none for a metric the simulation does not
// publish.
func (r *region) metricSeries(s *cwtypes.MetricStat, start, end time.Time) ([]time.Time, []float64) {
	period := time.Duration(deref(s.Period)) * time.Second
	if g, ok := groupDimension(s.Metric); ok {
		return r.groupSeries(g, s.Metric, deref(s.Stat), start, end, period)
	}
	t, errors, ok := r.metricTraffic(s.Metric)
	if !ok || deref(s.Stat) != "Sum" {
		return nil, nil
	}
	times, points := t.sum(start, end, period)
	values := make([]float64, len(points))
	for i, p := range points {
		values[i] = p.requests
		if errors {
			values[i] = p.errors
		}
	}
	return times, values
}

// checkMetricDataInput refuses a GetMetricData input as CloudWatch does:
// 1 to 500 queries, and a start before the end.
func checkMetricDataInput(in *cloudwatch.GetMetricDataInput) error {
	switch {
	case len(in.MetricDataQueries) == 0:
		return apiErr("MissingParameter", "The parameter MetricDataQueries must be specified")
	case len(in.MetricDataQueries) > maxMetricQueries:
		return apiErr("InvalidParameterValue", "The collection MetricDataQueries must not have a size greater than 500")
	case in.StartTime == nil || in.EndTime == nil:
		return apiErr("MissingParameter", "The parameters StartTime and EndTime must be specified")
	case !in.StartTime.Before(*in.EndTime):
		return apiErr("InvalidParameterValue", "The parameter StartTime must be less than the parameter EndTime")
	}
	return nil
}

// checkMetricQuery refuses a query the simulation cannot answer: one
// without an Id, a metric math expression, or a period that is not a
// whole number of minutes (its metrics are published per minute).
func checkMetricQuery(q cwtypes.MetricDataQuery) error {
	switch s := q.MetricStat; {
	case deref(q.Id) == "":
		return apiErr("MissingParameter", "The parameter MetricDataQueries.member.Id must be specified")
	case s == nil || s.Metric == nil:
		return apiErr("InvalidParameterValue", "The simulation answers MetricStat queries only: "+deref(q.Id))
	case deref(s.Period) < 60 || deref(s.Period)%60 != 0:
		return apiErr("InvalidParameterValue", "The parameter Period must be a multiple of 60 for the metrics the simulation publishes")
	}
	return nil
}

// metricTraffic is the traffic a load balancer metric counts, and whether
// it counts the 5xx (else the requests); false for a metric the
// simulation does not publish.
func (r *region) metricTraffic(m *cwtypes.Metric) (t *traffic, errors, ok bool) {
	dims := map[string]string{}
	for _, d := range m.Dimensions {
		dims[deref(d.Name)] = deref(d.Value)
	}
	name := deref(m.MetricName)
	switch deref(m.Namespace) {
	case namespaceELB:
		if lb := r.elbs[dims["LoadBalancerName"]]; lb != nil && len(dims) == 1 && (name == metricRequests || name == metricELBBackend5XX) {
			return &lb.traffic, name == metricELBBackend5XX, true
		}
	case namespaceALB:
		if len(dims) == 2 && (name == metricRequests || name == metricALBTarget5XX) {
			if t := r.targetGroupTraffic(dims["TargetGroup"], dims["LoadBalancer"]); t != nil {
				return t, name == metricALBTarget5XX, true
			}
		}
	}
	return nil, false, false
}

// targetGroupTraffic is the traffic the load balancer lb sent the target
// group tg, each named by a metric's dimension value; nil for none.
func (r *region) targetGroupTraffic(tg, lb string) *traffic {
	for _, g := range r.tgs {
		if arnSuffix(g.arn, ":") != tg {
			continue
		}
		for _, l := range g.lbs {
			if arnSuffix(l.arn, ":loadbalancer/") == lb {
				return g.traffic[l.arn]
			}
		}
	}
	return nil
}

// arnSuffix is what follows the last sep of arn: a load balancer metric's
// dimension value.
func arnSuffix(arn, sep string) string {
	if i := strings.LastIndex(arn, sep); i >= 0 {
		return arn[i+len(sep):]
	}
	return arn
}
