package sim_test

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/local/sim"
)

// groupQuery is a query of an Auto Scaling group metric.
func groupQuery(id, ns, metric, stat, group string, period int32) cwtypes.MetricDataQuery {
	return cwtypes.MetricDataQuery{Id: aws.String(id), MetricStat: &cwtypes.MetricStat{
		Metric: &cwtypes.Metric{Namespace: aws.String(ns), MetricName: aws.String(metric),
			Dimensions: []cwtypes.Dimension{{Name: aws.String("AutoScalingGroupName"), Value: aws.String(group)}}},
		Period: aws.Int32(period), Stat: aws.String(stat)}}
}

// TestGroupMetrics: the simulation publishes per group, dimension
// AutoScalingGroupName, its images' custom metrics every minute and
// EC2's CPUUtilization every five minutes under basic monitoring
// (Amazon EC2 User Guide, "Manage detailed monitoring for your EC2
// instances"); GetMetricData returns one datapoint a period with data,
// the statistic over every instance's (CloudWatch API Reference,
// GetMetricData).
func TestGroupMetrics(t *testing.T) {
	f := newFixture(t, func(w *sim.WorldSpec) {
		amis := w.Accounts[0].Regions[0].AMIs
		amis[0].Metrics = []sim.MetricSpec{{Namespace: "DeployTest", Name: "Latency", Value: 100}}
	})
	f.group(t, "g", amiOK, 2)
	f.clk.Advance(20 * time.Minute)
	end := f.clk.Now().Truncate(time.Minute)
	out, err := f.c.CloudWatch.GetMetricData(f.ctx, &cloudwatch.GetMetricDataInput{
		StartTime: aws.Time(end.Add(-10 * time.Minute)), EndTime: aws.Time(end),
		MetricDataQueries: []cwtypes.MetricDataQuery{
			groupQuery("lat", "DeployTest", "Latency", "Average", "g", 60),
			groupQuery("n", "DeployTest", "Latency", "SampleCount", "g", 60),
			groupQuery("cpu", "AWS/EC2", "CPUUtilization", "Average", "g", 60),
			groupQuery("none", "DeployTest", "Missing", "Average", "g", 60),
			groupQuery("other", "DeployTest", "Latency", "Average", "not-a-group", 60),
		},
	})
	require.NoError(t, err)
	got := map[string]cwtypes.MetricDataResult{}
	for _, r := range out.MetricDataResults {
		got[*r.Id] = r
	}
	require.Len(t, got["lat"].Values, 10, "a datapoint a minute")
	for _, v := range got["lat"].Values {
		assert.InDelta(t, 100, v, 100*sim.MetricJitter)
	}
	assert.NotEqual(t, got["lat"].Values[0], got["lat"].Values[1], "datapoints spread")
	assert.True(t, got["lat"].Timestamps[0].After(got["lat"].Timestamps[1]), "newest first")
	assert.Equal(t, []float64{2, 2, 2, 2, 2, 2, 2, 2, 2, 2}, got["n"].Values, "one datapoint an instance a minute")
	assert.Len(t, got["cpu"].Values, 2, "basic monitoring: every five minutes")
	for _, v := range got["cpu"].Values {
		assert.InDelta(t, 20, v, 20*sim.MetricJitter)
	}
	assert.Empty(t, got["none"].Values, "a metric nobody publishes has no data")
	assert.Empty(t, got["other"].Values)
}

// TestGetMetricDataPages: MaxDatapoints cuts a call short, the query it
// cut answered PartialData and NextToken going on from there; ScanBy
// TimestampAscending returns the oldest first (CloudWatch API
// Reference, GetMetricData: MaxDatapoints, NextToken, ScanBy,
// MetricDataResult.StatusCode).
func TestGetMetricDataPages(t *testing.T) {
	f := newFixture(t, func(w *sim.WorldSpec) {
		w.Accounts[0].Regions[0].AMIs[0].Metrics = []sim.MetricSpec{{Namespace: "DeployTest", Name: "Latency", Value: 100}}
	})
	f.group(t, "g", amiOK, 1)
	f.clk.Advance(20 * time.Minute)
	end := f.clk.Now().Truncate(time.Minute)
	in := &cloudwatch.GetMetricDataInput{
		StartTime: aws.Time(end.Add(-10 * time.Minute)), EndTime: aws.Time(end),
		ScanBy: cwtypes.ScanByTimestampAscending, MaxDatapoints: aws.Int32(7),
		MetricDataQueries: []cwtypes.MetricDataQuery{
			groupQuery("a", "DeployTest", "Latency", "Average", "g", 60),
			groupQuery("b", "DeployTest", "Latency", "Maximum", "g", 60),
		},
	}
	var pages int
	times := map[string][]time.Time{}
	for p := cloudwatch.NewGetMetricDataPaginator(f.c.CloudWatch, in); p.HasMorePages(); pages++ {
		page, err := p.NextPage(f.ctx)
		require.NoError(t, err)
		for _, r := range page.MetricDataResults {
			times[*r.Id] = append(times[*r.Id], r.Timestamps...)
			if page.NextToken != nil && r.Id == page.MetricDataResults[len(page.MetricDataResults)-1].Id {
				assert.Equal(t, cwtypes.StatusCodePartialData, r.StatusCode)
			}
		}
	}
	assert.Equal(t, 3, pages, "20 datapoints, 7 a page")
	for _, id := range []string{"a", "b"} {
		require.Len(t, times[id], 10, id)
		assert.Equal(t, end.Add(-10*time.Minute), times[id][0], "oldest first")
		assert.Equal(t, end.Add(-time.Minute), times[id][9])
	}
	in.NextToken = aws.String("garbage")
	_, err := f.c.CloudWatch.GetMetricData(f.ctx, in)
	assertCode(t, err, "InvalidNextToken")
}
