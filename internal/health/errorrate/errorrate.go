package errorrate

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/limits"
)

// API is the CloudWatch call errorrate makes.
type API interface {
	GetMetricData(ctx context.Context, in *cloudwatch.GetMetricDataInput, optFns ...func(*cloudwatch.Options)) (*cloudwatch.GetMetricDataOutput, error)
}

var _ API = (*cloudwatch.Client)(nil)

// Source is one stream of requests: a classic load balancer (Classic, by
// name), or a target group (TargetGroup, by ARN) as one application load
// balancer (LoadBalancer, by ARN) sends it traffic.
type Source struct {
	Classic      string
	TargetGroup  string
	LoadBalancer string
}

// String names the source for people.
func (s Source) String() string {
	if s.Classic != "" {
		return "load balancer " + s.Classic
	}
	return "target group " + suffix(s.TargetGroup, ":")
}

// metrics are the source's namespace, dimensions, and its requests' and
// 5xx metric names.
func (s Source) metrics() (namespace string, dims []cwtypes.Dimension, requests, errors string) {
	if s.Classic != "" {
		return "AWS/ELB", []cwtypes.Dimension{{Name: aws.String("LoadBalancerName"), Value: aws.String(s.Classic)}},
			"RequestCount", "HTTPCode_Backend_5XX"
	}
	// "TargetGroup: ... targetgroup/my-target-group/1234567890123456 (the
	// final portion of the target group ARN)"; "LoadBalancer: ...
	// app/my-load-balancer/1234567890123456 (the final portion of the
	// load balancer ARN)" (Application Load Balancers User Guide,
	// "CloudWatch metrics for your Application Load Balancer").
	return "AWS/ApplicationELB", []cwtypes.Dimension{
			{Name: aws.String("LoadBalancer"), Value: aws.String(suffix(s.LoadBalancer, ":loadbalancer/"))},
			{Name: aws.String("TargetGroup"), Value: aws.String(suffix(s.TargetGroup, ":"))},
		},
		"RequestCount", "HTTPCode_Target_5XX_Count"
}

// suffix is what follows the last sep of arn.
func suffix(arn, sep string) string {
	if i := strings.LastIndex(arn, sep); i >= 0 {
		return arn[i+len(sep):]
	}
	return arn
}

// Traffic is the requests a source (or several) served and how many were
// answered with a 5xx.
type Traffic struct {
	Requests, Errors float64
}

// Add is t and u together.
func (t Traffic) Add(u Traffic) Traffic { return Traffic{t.Requests + u.Requests, t.Errors + u.Errors} }

// Rate is the share of requests answered with a 5xx; 0 without requests.
func (t Traffic) Rate() float64 {
	if t.Requests <= 0 {
		return 0
	}
	return t.Errors / t.Requests
}

// Read returns each source's traffic in the whole minutes from
// now-window to now, from its load balancer's own metrics (Sum per
// minute): one GetMetricData per 250 sources. A source without
// datapoints (no traffic, or none published yet) has none. A transient
// failure is a *failure.RetryableError; any other a *failure.DeployError
// (a rate that cannot be read never passes).
func Read(ctx context.Context, api API, sources []Source, window time.Duration, now time.Time) (map[Source]Traffic, error) {
	out := map[Source]Traffic{}
	start := now.Add(-window).Truncate(time.Minute)
	for batch := range slices.Chunk(sources, limits.GetMetricDataQueries/2) {
		in := &cloudwatch.GetMetricDataInput{StartTime: aws.Time(start), EndTime: aws.Time(now)}
		for i, s := range batch {
			ns, dims, requests, errors := s.metrics()
			for j, name := range []string{requests, errors} {
				in.MetricDataQueries = append(in.MetricDataQueries, cwtypes.MetricDataQuery{
					Id: aws.String(fmt.Sprintf("m%d_%d", i, j)), ReturnData: aws.Bool(true),
					MetricStat: &cwtypes.MetricStat{Metric: &cwtypes.Metric{Namespace: aws.String(ns), MetricName: aws.String(name), Dimensions: dims},
						Period: aws.Int32(60), Stat: aws.String("Sum")},
				})
			}
		}
		sums := map[string]float64{}
		for p := cloudwatch.NewGetMetricDataPaginator(api, in); p.HasMorePages(); {
			page, err := p.NextPage(ctx)
			if err != nil {
				return nil, cloud.ClassifyAs("cloudwatch:GetMetricData", err, failure.AsDeploy)
			}
			for _, r := range page.MetricDataResults {
				for _, v := range r.Values {
					sums[aws.ToString(r.Id)] += v
				}
			}
		}
		for i, s := range batch {
			out[s] = out[s].Add(Traffic{Requests: sums[fmt.Sprintf("m%d_0", i)], Errors: sums[fmt.Sprintf("m%d_1", i)]})
		}
	}
	return out, nil
}
