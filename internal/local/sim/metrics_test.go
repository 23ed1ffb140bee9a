package sim_test

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLoadBalancerMetrics: the simulation publishes each load balancer's
// RequestCount and its targets' 5xx as CloudWatch does (Sum per minute,
// classic by LoadBalancerName, a target group by TargetGroup and
// LoadBalancer, each the final portion of its ARN), and GetMetricData
// returns them newest first; only while an instance passes the health
// check does a request reach one.
func TestLoadBalancerMetrics(t *testing.T) {
	f := newFixture(t)
	f.group(t, "g", amiOK, 2)
	f.clk.Advance(10 * time.Minute)
	tgs, err := f.c.ELBv2.DescribeTargetGroups(f.ctx, &elasticloadbalancingv2.DescribeTargetGroupsInput{Names: []string{tgName}})
	require.NoError(t, err)
	tg := tgs.TargetGroups[0]
	require.NotEmpty(t, tg.LoadBalancerArns)

	dim := func(name, value string) cwtypes.Dimension {
		return cwtypes.Dimension{Name: aws.String(name), Value: aws.String(value)}
	}
	query := func(id, ns, metric string, period int32, dims ...cwtypes.Dimension) cwtypes.MetricDataQuery {
		return cwtypes.MetricDataQuery{Id: aws.String(id), MetricStat: &cwtypes.MetricStat{
			Metric: &cwtypes.Metric{Namespace: aws.String(ns), MetricName: aws.String(metric), Dimensions: dims},
			Period: aws.Int32(period), Stat: aws.String("Sum")}}
	}
	end := f.clk.Now().Truncate(time.Minute)
	lbDim := dim("LoadBalancer", "app/"+arnTail(tg.LoadBalancerArns[0], "/app/"))
	tgDim := dim("TargetGroup", "targetgroup/"+arnTail(*tg.TargetGroupArn, ":targetgroup/"))
	out, err := f.c.CloudWatch.GetMetricData(f.ctx, &cloudwatch.GetMetricDataInput{
		StartTime: aws.Time(end.Add(-2 * time.Minute)), EndTime: aws.Time(end),
		MetricDataQueries: []cwtypes.MetricDataQuery{
			query("elb", "AWS/ELB", "RequestCount", 60, dim("LoadBalancerName", elbName)),
			query("elb5xx", "AWS/ELB", "HTTPCode_Backend_5XX", 60, dim("LoadBalancerName", elbName)),
			query("tg", "AWS/ApplicationELB", "RequestCount", 120, lbDim, tgDim),
			query("tgOnly", "AWS/ApplicationELB", "RequestCount", 60, tgDim),
		},
	})
	require.NoError(t, err)
	got := map[string][]float64{}
	for _, r := range out.MetricDataResults {
		assert.Equal(t, cwtypes.StatusCodeComplete, r.StatusCode)
		got[*r.Id] = r.Values
		if *r.Id == "elb" {
			assert.Equal(t, []time.Time{end.Add(-time.Minute), end.Add(-2 * time.Minute)}, r.Timestamps, "newest first")
		}
	}
	assert.Equal(t, map[string][]float64{
		"elb":    {600, 600}, // 10 requests a second, every minute
		"elb5xx": {0, 0},
		"tg":     {1200}, // one period of two minutes
		"tgOnly": nil,    // a target group's metrics have its load balancer's dimension too
	}, got)

	_, err = f.c.CloudWatch.GetMetricData(f.ctx, &cloudwatch.GetMetricDataInput{
		StartTime: aws.Time(end), EndTime: aws.Time(end.Add(-time.Minute)),
		MetricDataQueries: []cwtypes.MetricDataQuery{query("x", "AWS/ELB", "RequestCount", 60)},
	})
	assertCode(t, err, "InvalidParameterValue")
	_, err = f.c.CloudWatch.GetMetricData(f.ctx, &cloudwatch.GetMetricDataInput{
		StartTime: aws.Time(end.Add(-time.Minute)), EndTime: aws.Time(end),
		MetricDataQueries: []cwtypes.MetricDataQuery{query("x", "AWS/ELB", "RequestCount", 30)},
	})
	assertCode(t, err, "InvalidParameterValue")
}

// arnTail is what follows sep in arn.
func arnTail(arn, sep string) string {
	for i := 0; i+len(sep) <= len(arn); i++ {
		if arn[i:i+len(sep)] == sep {
			return arn[i+len(sep):]
		}
	}
	return arn
}
