package sim

import (
	"context"
	"strings"
	"time"

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

// GetMetricData returns the datapoints of load balancer metrics (see
// namespaceELB): for each query, the Sum of each Period (a multiple of 60
// seconds) from StartTime to EndTime that has requests, newest first
// (ScanBy's default, TimestampDescending). A metric the simulation does
// not publish, or a statistic other than Sum, has no datapoints, as a
// metric without data has none on AWS. GetMetricData has no
// resource-level permissions (Resource "*").
func (c *CloudWatch) GetMetricData(ctx context.Context, in *cloudwatch.GetMetricDataInput, _ ...func(*cloudwatch.Options)) (*cloudwatch.GetMetricDataOutput, error) {
	const op = "GetMetricData"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	out, err := r.getMetricData(in)
	return out, c.end(op, err)
}

func (r *region) getMetricData(in *cloudwatch.GetMetricDataInput) (*cloudwatch.GetMetricDataOutput, error) {
	switch {
	case len(in.MetricDataQueries) == 0:
		return nil, apiErr("MissingParameter", "The parameter MetricDataQueries must be specified")
	case len(in.MetricDataQueries) > maxMetricQueries:
		return nil, apiErr("InvalidParameterValue", "The collection MetricDataQueries must not have a size greater than 500")
	case in.StartTime == nil || in.EndTime == nil:
		return nil, apiErr("MissingParameter", "The parameters StartTime and EndTime must be specified")
	case !in.StartTime.Before(*in.EndTime):
		return nil, apiErr("InvalidParameterValue", "The parameter StartTime must be less than the parameter EndTime")
	}
	if err := r.w.authorize(Auth{Action: "cloudwatch:GetMetricData", Resource: "*"}); err != nil {
		return nil, err
	}
	out := &cloudwatch.GetMetricDataOutput{}
	for _, q := range in.MetricDataQueries {
		s := q.MetricStat
		switch {
		case deref(q.Id) == "":
			return nil, apiErr("MissingParameter", "The parameter MetricDataQueries.member.Id must be specified")
		case s == nil || s.Metric == nil:
			return nil, apiErr("InvalidParameterValue", "The simulation answers MetricStat queries only: "+deref(q.Id))
		case deref(s.Period) < 60 || deref(s.Period)%60 != 0:
			return nil, apiErr("InvalidParameterValue", "The parameter Period must be a multiple of 60 for the metrics the simulation publishes")
		}
		res := cwtypes.MetricDataResult{Id: q.Id, Label: s.Metric.MetricName, StatusCode: cwtypes.StatusCodeComplete}
		if t, errors, ok := r.metricTraffic(s.Metric); ok && deref(s.Stat) == "Sum" {
			times, points := t.sum(in.StartTime.UTC(), in.EndTime.UTC(), time.Duration(deref(s.Period))*time.Second)
			for i := len(points) - 1; i >= 0; i-- {
				v := points[i].requests
				if errors {
					v = points[i].errors
				}
				res.Timestamps = append(res.Timestamps, times[i])
				res.Values = append(res.Values, v)
			}
		}
		out.MetricDataResults = append(out.MetricDataResults, res)
	}
	return out, nil
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
		if len(dims) != 2 || (name != metricRequests && name != metricALBTarget5XX) {
			return nil, false, false
		}
		for _, tg := range r.tgs {
			if arnSuffix(tg.arn, ":") != dims["TargetGroup"] {
				continue
			}
			for _, lb := range tg.lbs {
				if arnSuffix(lb.arn, ":loadbalancer/") == dims["LoadBalancer"] && tg.traffic[lb.arn] != nil {
					return tg.traffic[lb.arn], name == metricALBTarget5XX, true
				}
			}
		}
	}
	return nil, false, false
}

// arnSuffix is what follows the last sep of arn: a load balancer metric's
// dimension value.
func arnSuffix(arn, sep string) string {
	if i := strings.LastIndex(arn, sep); i >= 0 {
		return arn[i+len(sep):]
	}
	return arn
}
