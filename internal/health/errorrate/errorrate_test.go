package errorrate

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/failure"
)

// fakeMetrics answers every query with one datapoint: 100 requests, and
// 5xx as the source's name says, and records the calls.
type fakeMetrics struct {
	calls []*cloudwatch.GetMetricDataInput
	err   error
}

func (f *fakeMetrics) GetMetricData(_ context.Context, in *cloudwatch.GetMetricDataInput, _ ...func(*cloudwatch.Options)) (*cloudwatch.GetMetricDataOutput, error) {
	f.calls = append(f.calls, in)
	if f.err != nil {
		return nil, f.err
	}
	out := &cloudwatch.GetMetricDataOutput{}
	for _, q := range in.MetricDataQueries {
		v := 100.0
		if name := aws.ToString(q.MetricStat.Metric.MetricName); name != "RequestCount" {
			v = 7
		}
		out.MetricDataResults = append(out.MetricDataResults, cwtypes.MetricDataResult{Id: q.Id, Values: []float64{v}})
	}
	return out, nil
}

var _ API = (*fakeMetrics)(nil)

// TestMetricsOfASource: a classic load balancer's metrics are AWS/ELB's
// by LoadBalancerName; a target group's AWS/ApplicationELB's by
// TargetGroup and LoadBalancer, each the final portion of its ARN.
func TestMetricsOfASource(t *testing.T) {
	ns, dims, req, errs := Source{Classic: "web-elb"}.metrics()
	assert.Equal(t, []string{"AWS/ELB", "LoadBalancerName=web-elb", "RequestCount", "HTTPCode_Backend_5XX"}, []string{ns, dimString(dims), req, errs})
	src := Source{
		TargetGroup:  "arn:aws:elasticloadbalancing:us-east-1:111111111111:targetgroup/web-tg/73e2d6bc24d8a067",
		LoadBalancer: "arn:aws:elasticloadbalancing:us-east-1:111111111111:loadbalancer/app/web-alb/50dc6c495c0c9188",
	}
	ns, dims, req, errs = src.metrics()
	assert.Equal(t, []string{"AWS/ApplicationELB", "LoadBalancer=app/web-alb/50dc6c495c0c9188,TargetGroup=targetgroup/web-tg/73e2d6bc24d8a067", "RequestCount", "HTTPCode_Target_5XX_Count"},
		[]string{ns, dimString(dims), req, errs})
	assert.Equal(t, "target group targetgroup/web-tg/73e2d6bc24d8a067", src.String())
}

func dimString(dims []cwtypes.Dimension) string {
	s := ""
	for i, d := range dims {
		if i > 0 {
			s += ","
		}
		s += aws.ToString(d.Name) + "=" + aws.ToString(d.Value)
	}
	return s
}

// TestRead: each source's requests and 5xx are summed over the window's
// whole minutes, 250 sources (500 queries) a call; a failure is
// classified.
func TestRead(t *testing.T) {
	var sources []Source
	for i := range 251 {
		sources = append(sources, Source{Classic: fmt.Sprintf("lb-%d", i)})
	}
	api := &fakeMetrics{}
	now := time.Date(2026, 11, 25, 10, 3, 30, 0, time.UTC)
	got, err := Read(context.Background(), api, sources, 2*time.Minute, now)
	require.NoError(t, err)
	require.Len(t, api.calls, 2)
	assert.Len(t, api.calls[0].MetricDataQueries, 500)
	assert.Equal(t, time.Date(2026, 11, 25, 10, 1, 0, 0, time.UTC), *api.calls[0].StartTime, "whole minutes")
	assert.Equal(t, Traffic{Requests: 100, Errors: 7}, got[sources[250]])
	assert.InDelta(t, 0.07, got[sources[0]].Rate(), 1e-12)
	assert.Zero(t, Traffic{}.Rate(), "no requests, no rate")

	_, err = Read(context.Background(), &fakeMetrics{err: &smithy.GenericAPIError{Code: "Throttling"}}, sources[:1], time.Minute, now)
	assert.True(t, failure.IsRetryable(err), "%v", err)
	_, err = Read(context.Background(), &fakeMetrics{err: &smithy.GenericAPIError{Code: "AccessDenied"}}, sources[:1], time.Minute, now)
	var deploy *failure.DeployError
	require.True(t, errors.As(err, &deploy), "a rate that cannot be read never passes: %v", err)
}
