package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/local/region"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/statemachine/shape"
)

// cellKeys are the stable names of a cell in build/bench.json.
var cellKeys = []string{
	"services", "instances",
	"api_calls_total", "aws_calls_total", "s3_calls_total", "api_calls_by_op",
	"health_checks", "api_calls_per_check", "api_calls_per_check_mean", "api_calls_per_check_by_op",
	"transitions", "lambda_invocations",
	"handler_time_ms", "handler_time_ms_by_task", "handler_max_ms", "handler_max_task", "handler_time_ms_lambda", "handler_lambda_task",
	"handler_lambda_method", "handler_time_ms_lambda_scaled",
	"handler_peak_heap_bytes", "handler_peak_heap_task",
	"max_payload_bytes", "max_payload_at", "execution_input_bytes",
	"added_latency_s", "floor_s", "over_floor_s", "whole_deploy_s", "last_healthy_s", "cleanup_success_s", "deploy_s",
	"health_checks_by_seed", "cost_usd", "cost_usd_at_previous_memory",
	"reference_added_latency_s", "reference_health_checks", "reference_api_calls_total",
	"reference_api_calls_per_check", "reference_transitions", "reference_lambda_invocations",
	"reference_deploy_s", "reference_cost_usd", "latency_ratio", "wall_s",
}

// TestSmallestCell runs the S=1, N=1 cell with both models and checks the
// report's JSON shape, what the figures must agree on, and the targets.
func TestSmallestCell(t *testing.T) {
	ctx := context.Background()
	opts := GridOptions{Seeds: 3}
	cells, err := RunGrid(ctx, []Cell{{Services: 1, Instances: 1}}, opts, nil)
	require.NoError(t, err)
	require.Len(t, cells, 1)
	up, err := AssetUploads(ctx, "")
	require.NoError(t, err)
	report := NewReport(cells, opts, nil, nil, nil, &Binary{Path: "bootstrap", Bytes: 10 << 20, Build: LambdaBuild}, up)

	var buf bytes.Buffer
	require.NoError(t, report.JSON(&buf))
	var doc map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(buf.Bytes(), &doc))
	assert.ElementsMatch(t, []string{"go_version", "platform", "cpus", "seeds", "call_cost_ms", "throttling", "cells", "cost_usd_by_cell", "reference_cost_usd_by_cell",
		"lambda_memory_mb", "prices_at", "lambda_binary", "asset_uploads", "targets"},
		slices.Collect(maps.Keys(doc)))
	assert.JSONEq(t, `"aws-documented"`, string(doc["throttling"]))
	var jcells []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(doc["cells"], &jcells))
	require.Len(t, jcells, 1)
	assert.ElementsMatch(t, cellKeys, slices.Collect(maps.Keys(jcells[0])))

	c := cells[0]
	assert.Equal(t, 1, c.Services)
	assert.Equal(t, 1, c.Instances)
	assert.Equal(t, c.AWSCallsTotal+c.S3CallsTotal, c.APICallsTotal)
	assert.Equal(t, c.APICallsTotal, total(c.APICallsByOp), "the by-operation counts add up")
	assert.Equal(t, c.APICallsPerCheck, total(c.APICallsPerCheckByOp), "the full check by operation adds up")
	assert.LessOrEqual(t, c.APICallsPerCheckMean, float64(c.APICallsPerCheck))
	assert.Positive(t, c.APICallsByOp["autoscaling:CreateAutoScalingGroup"])
	assert.Positive(t, c.APICallsByOp["s3:GetObject"])
	assert.Positive(t, c.HealthChecks)
	assert.GreaterOrEqual(t, c.LambdaInvocations, c.HealthChecks+6, "Validate, Lock, ValidateResources, Publish, Deploy, CleanUpSuccess")
	assert.Greater(t, c.Transitions, c.LambdaInvocations, "Choice and Wait states are transitions too")
	assert.Positive(t, c.MaxPayloadBytes)
	assert.Positive(t, c.ExecutionInputBytes)
	assert.LessOrEqual(t, c.HandlerMaxMS, c.HandlerTimeMS)
	assert.Positive(t, c.HandlerPeakHeapBytes)
	// Simulated time, to the millisecond: the release is never judged
	// healthy before it is, and ferry's pacing finds it sooner than the
	// reference's 15 s.
	assert.Equal(t, 3, c.AddedLatencyS.Seeds)
	assert.GreaterOrEqual(t, c.AddedLatencyS.Min, 0.0)
	assert.Less(t, c.AddedLatencyS.Max, 15.0)
	assert.GreaterOrEqual(t, c.ReferenceAddedLatencyS.Min, 0.0)
	assert.Less(t, c.ReferenceAddedLatencyS.Max, 16.0)
	assert.GreaterOrEqual(t, c.LastHealthyS, 60.0, "instances take 60 s at least")
	assert.Positive(t, c.CostUSD.Median)
	assert.Positive(t, c.ReferenceCostUSD.Median)

	assert.Equal(t, int64(0), up.SecondAssetBytes)
	assert.Positive(t, up.FirstAssetBytes)
	statuses := map[string]Status{}
	for _, tg := range report.Targets {
		statuses[tg.Name] = tg.Status
	}
	assert.Equal(t, Skip, statuses["calls_per_check_flat"], "no N=100")
	assert.Equal(t, Skip, statuses["added_latency_s50_n100"])
	assert.Equal(t, Skip, statuses["history_events_48h"])
	assert.NotEqual(t, Skip, statuses["cost_by_cell"])
	assert.Equal(t, Pass, statuses["lambda_binary"])
	assert.Equal(t, Pass, statuses["handler_memory"])
	assert.Equal(t, Pass, statuses["unchanged_assets"])

	var table, md bytes.Buffer
	require.NoError(t, report.WriteTable(&table))
	assert.Contains(t, table.String(), "ref latency s")
	assert.Contains(t, table.String(), "unchanged_assets")
	require.NoError(t, report.Markdown(&md))
	assert.Contains(t, md.String(), "| 1 | 1 | ")
}

// TestModels: the reference model waits 30 s after Deploy, then 15 s
// between checks; ferry paces its checks (package pacing): its first
// check at half the boot the previous release saw, then 5 s jittered by
// a fifth (at least 10 s, jittered, while needed instances boot behind
// its load balancer; 2 s while its target is imminent), and 30 s apart
// while the service holds its target.
func TestModels(t *testing.T) {
	tests := []struct {
		model            Model
		first            [2]time.Duration
		between, holding [2]time.Duration
	}{
		{Ferry, [2]time.Duration{10 * time.Second, 60 * time.Second}, [2]time.Duration{2 * time.Second, 12 * time.Second}, [2]time.Duration{time.Second, 30 * time.Second}},
		{Reference, [2]time.Duration{30 * time.Second, 30 * time.Second}, [2]time.Duration{15 * time.Second, 15 * time.Second}, [2]time.Duration{15 * time.Second, 15 * time.Second}},
	}
	// A check's calls take their modelled time (30 ms each) before the
	// wait starts: the spacing is the wait and up to a second more.
	within := func(t *testing.T, d time.Duration, r [2]time.Duration, msg string) {
		t.Helper()
		assert.GreaterOrEqual(t, d, r[0], msg)
		assert.LessOrEqual(t, d, r[1]+time.Second, msg)
	}
	for _, tt := range tests {
		t.Run(tt.model.Name, func(t *testing.T) {
			m, err := Run(context.Background(), Cell{Services: 1, Instances: 10}, tt.model, Options{})
			require.NoError(t, err)
			require.NotEmpty(t, m.Checks)
			within(t, m.Checks[0]-m.Deployed, tt.first, "the first check")
			for k := 1; k < len(m.Checks); k++ {
				d := m.Checks[k] - m.Checks[k-1]
				if m.Checks[k] <= m.LastHealthy {
					within(t, d, tt.between, fmt.Sprintf("check %d", k))
				} else {
					within(t, d, [2]time.Duration{min(tt.between[0], tt.holding[0]), max(tt.between[1], tt.holding[1])}, fmt.Sprintf("check %d", k))
				}
			}
			within(t, m.CleanUpSuccess-m.Checks[len(m.Checks)-1], [2]time.Duration{0, 0}, "healthy at the last check")
			assert.Len(t, m.CheckCalls, len(m.Checks))
		})
	}
}

// cell is a synthetic cell result that meets every target.
func cell(s, n int) CellResult {
	return CellResult{Services: s, Instances: n, APICallsPerCheck: 3 + s, AddedLatencyS: Dist{Median: 2, P95: 4, Max: 5, Seeds: 20},
		FloorS: Dist{Min: 150, Median: 160, Max: 170, Seeds: 20}, WholeS: Dist{Min: 152, Median: 162.5, Max: 174, Seeds: 20},
		OverFloorS: Dist{Min: 2, Median: 2.5, P95: 3.5, Max: 4, Seeds: 20}, HandlerLambdaMethod: "cgroup v1 cpu.cfs_quota_us 28942 of cpu.cfs_period_us 100000, GOMAXPROCS=1: " + QuotaMeasures, HandlerLambdaTask: "Deploy",
		CostUSD: Dist{Median: 0.001}, ReferenceCostUSD: Dist{Median: 0.0012},
		MaxPayloadBytes: 100 * s, HandlerPeakHeapBytes: 1 << 20, HandlerMaxMS: 100, HandlerMaxTask: "CheckHealthy", HandlerTimeMSLambda: 300}
}

func grid(mutate func(*CellResult)) []CellResult {
	var cells []CellResult
	for _, c := range Grid() {
		r := cell(c.Services, c.Instances)
		if mutate != nil {
			mutate(&r)
		}
		cells = append(cells, r)
	}
	return cells
}

func TestTargets(t *testing.T) {
	bin := &Binary{Bytes: 13 << 20}
	up := &Uploads{FirstAssetBytes: 70}
	long := &Long{HistoryEvents: 14_000, AddedLatencyS: Dist{Median: 5, P95: 12, Max: 13, Seeds: 20}}
	follow := &Follow{Polls: 40, MeanBytes: 3000, MaxBytesInLoop: 9000, MaxBytes: 24000, CallsPerSecondWaiting: 0.17,
		S50: &Follow{Polls: 40, MeanBytes: 3000, MaxBytesInLoop: 10 << 10, MaxBytes: 30000, CallsPerSecondWaiting: 0.17}}
	multi := &Multi{Deploys: 100, Services: 10, Succeeded: 100, DescribeTargetHealthPerS: 6, DescribeASGPerS: 7, MaxCallsInASecond: 30}
	tests := []struct {
		name   string
		cells  []CellResult
		long   *Long
		multi  *Multi
		follow *Follow
		bin    *Binary
		up     *Uploads
		want   map[string]Status // targets not listed pass
	}{
		{name: "all pass", long: long, follow: follow, multi: multi, cells: grid(nil), bin: bin, up: up},
		{name: "calls per check grow with instances", long: long, follow: follow, multi: multi, bin: bin, up: up,
			cells: grid(func(c *CellResult) {
				if c.Services == 10 && c.Instances == 100 {
					c.APICallsPerCheck++
				}
			}),
			want: map[string]Status{"calls_per_check_flat": Fail}},
		{name: "median latency above 3 s at S=50,N=100", bin: bin, up: up, long: long, follow: follow, multi: multi,
			cells: grid(func(c *CellResult) {
				if c.Services == 50 && c.Instances == 100 {
					c.AddedLatencyS.Median = 3.5
				}
			}),
			want: map[string]Status{"added_latency_s50_n100": Fail}},
		{name: "p95 latency above 6 s at S=50,N=100", bin: bin, up: up, long: long, follow: follow, multi: multi,
			cells: grid(func(c *CellResult) {
				if c.Services == 50 && c.Instances == 100 {
					c.AddedLatencyS.P95 = 6.5
				}
			}),
			want: map[string]Status{"added_latency_s50_n100": Fail}},
		{name: "the whole deploy 3.5 s over its floor at S=50,N=100 (median)", bin: bin, up: up, long: long, follow: follow, multi: multi,
			cells: grid(func(c *CellResult) {
				if c.Services == 50 && c.Instances == 100 {
					c.OverFloorS.Median = 3.5
				}
			}),
			want: map[string]Status{"over_floor_s50_n100": Fail}},
		{name: "the whole deploy 6.5 s over its floor at S=50,N=100 (p95)", bin: bin, up: up, long: long, follow: follow, multi: multi,
			cells: grid(func(c *CellResult) {
				if c.Services == 50 && c.Instances == 100 {
					c.OverFloorS.P95 = 6.5
				}
			}),
			want: map[string]Status{"over_floor_s50_n100": Fail}},
		{name: "slower elsewhere is not the target", bin: bin, up: up, long: long, follow: follow, multi: multi,
			cells: grid(func(c *CellResult) {
				if c.Instances == 10 {
					c.AddedLatencyS = Dist{Median: 9, P95: 14}
				}
			})},
		{name: "dearer than the reference in one cell", bin: bin, up: up, long: long, follow: follow, multi: multi,
			cells: grid(func(c *CellResult) {
				if c.Services == 50 && c.Instances == 10 {
					c.CostUSD.Median = 0.0013
				}
			}),
			want: map[string]Status{"cost_by_cell": Fail}},
		{name: "over 20,000 history events in 48 h", cells: grid(nil), bin: bin, up: up, multi: multi,
			long: &Long{HistoryEvents: 20_001, AddedLatencyS: long.AddedLatencyS}, follow: follow,
			want: map[string]Status{"history_events_48h": Fail}},
		{name: "16 s late within the first hour", cells: grid(nil), bin: bin, up: up, multi: multi,
			long: &Long{HistoryEvents: 14_000, AddedLatencyS: Dist{Median: 5, P95: 12, Max: 16}}, follow: follow,
			want: map[string]Status{"long_timeout_latency": Fail}},
		{name: "payload over 32 KiB at S=50", long: long, follow: follow, multi: multi, bin: bin, up: up,
			cells: grid(func(c *CellResult) {
				if c.Services == 50 && c.Instances == 10 {
					c.MaxPayloadBytes = 32<<10 + 1
				}
			}),
			want: map[string]Status{"payload_s50": Fail}},
		{name: "large payload below S=50 is not the target", long: long, follow: follow, multi: multi, bin: bin, up: up,
			cells: grid(func(c *CellResult) {
				if c.Services == 10 {
					c.MaxPayloadBytes = 40 << 10
				}
			})},
		{name: "binary over 20 MB", long: long, follow: follow, multi: multi, cells: grid(nil), bin: &Binary{Bytes: MaxLambdaBinaryBytes + 1}, up: up,
			want: map[string]Status{"lambda_binary": Fail}},
		{name: "heap over 128 MiB", long: long, follow: follow, multi: multi, bin: bin, up: up,
			cells: grid(func(c *CellResult) {
				if c.Services == 1 && c.Instances == 10 {
					c.HandlerPeakHeapBytes = 128<<20 + 1
				}
			}),
			want: map[string]Status{"handler_memory": Fail}},
		{name: "a handler takes over 1 s on the Lambda's CPU share at S=50,N=100", long: long, follow: follow, multi: multi, bin: bin, up: up,
			cells: grid(func(c *CellResult) {
				if c.Services == 50 && c.Instances == 100 {
					c.HandlerTimeMSLambda = 1001
				}
			}),
			want: map[string]Status{"handler_time_s50_n100": Fail}},
		{name: "without a CPU quota the handler time is not measured, neither passed nor failed", long: long, follow: follow, multi: multi, bin: bin, up: up,
			cells: grid(func(c *CellResult) {
				c.HandlerLambdaMethod = ScaledMethod
			}),
			want: map[string]Status{"handler_time_s50_n100": Skip}},
		{name: "a slow handler elsewhere is not the target", long: long, follow: follow, multi: multi, bin: bin, up: up,
			cells: grid(func(c *CellResult) {
				if c.Services == 10 {
					c.HandlerTimeMSLambda = 5000
				}
			})},
		{name: "real time on this machine is not the target", long: long, follow: follow, multi: multi, bin: bin, up: up,
			cells: grid(func(c *CellResult) {
				c.HandlerMaxMS = 5000
			})},
		{name: "second deploy uploads asset bytes", long: long, follow: follow, multi: multi, cells: grid(nil), bin: bin, up: &Uploads{FirstAssetBytes: 70, SecondAssetBytes: 70},
			want: map[string]Status{"unchanged_assets": Fail}},
		{name: "nothing uploaded at all proves nothing", long: long, follow: follow, multi: multi, cells: grid(nil), bin: bin, up: &Uploads{},
			want: map[string]Status{"unchanged_assets": Fail}},
		{name: "a deploy of 100 failed", cells: grid(nil), bin: bin, up: up, long: long, follow: follow,
			multi: &Multi{Deploys: 100, Services: 10, Succeeded: 99, DescribeTargetHealthPerS: 6, DescribeASGPerS: 7, MaxCallsInASecond: 30},
			want:  map[string]Status{"multi_project": Fail}},
		{name: "a throttled call reached a task's retry", cells: grid(nil), bin: bin, up: up, long: long, follow: follow,
			multi: &Multi{Deploys: 100, Services: 10, Succeeded: 100, ThrottledToRetry: 1, DescribeTargetHealthPerS: 6, DescribeASGPerS: 7, MaxCallsInASecond: 30},
			want:  map[string]Status{"multi_project": Fail}},
		{name: "41 describes in a second", cells: grid(nil), bin: bin, up: up, long: long, follow: follow,
			multi: &Multi{Deploys: 100, Services: 10, Succeeded: 100, DescribeTargetHealthPerS: 6, DescribeASGPerS: 7, MaxCallsInASecond: 41},
			want:  map[string]Status{"multi_project": Fail}},
		{name: "one run of two over 40 in a second", cells: grid(nil), bin: bin, up: up, long: long, follow: follow,
			multi: WorstMulti([]*Multi{
				{Deploys: 100, Services: 10, Succeeded: 100, DescribeTargetHealthPerS: 6, DescribeASGPerS: 7, MaxCallsInASecond: 35},
				{Deploys: 100, Services: 10, Succeeded: 100, DescribeTargetHealthPerS: 6, DescribeASGPerS: 7, MaxCallsInASecond: 45},
			}),
			want: map[string]Status{"multi_project": Fail}},
		{name: "a poll of 11 KB while waiting", cells: grid(nil), bin: bin, up: up, long: long, multi: multi,
			follow: &Follow{Polls: 40, MeanBytes: 3000, MaxBytesInLoop: 11 << 10, MaxBytes: 24000, CallsPerSecondWaiting: 0.17},
			want:   map[string]Status{"follow_bytes_per_poll": Fail, "follow_bytes_per_poll_s50": Skip}},
		{name: "a poll of 11 KB while 50 services wait", cells: grid(nil), bin: bin, up: up, long: long, multi: multi,
			follow: &Follow{Polls: 40, MeanBytes: 3000, MaxBytesInLoop: 9000, MaxBytes: 24000, CallsPerSecondWaiting: 0.17,
				S50: &Follow{Polls: 40, MeanBytes: 3000, MaxBytesInLoop: 10<<10 + 1, MaxBytes: 30000, CallsPerSecondWaiting: 0.17}},
			want: map[string]Status{"follow_bytes_per_poll_s50": Fail}},
		{name: "S=50 not measured", cells: grid(nil), bin: bin, up: up, long: long, multi: multi,
			follow: &Follow{Polls: 40, MeanBytes: 3000, MaxBytesInLoop: 9000, MaxBytes: 24000, CallsPerSecondWaiting: 0.17},
			want:   map[string]Status{"follow_bytes_per_poll_s50": Skip}},
		{name: "a follower reading too often", cells: grid(nil), bin: bin, up: up, long: long, multi: multi,
			follow: &Follow{Polls: 40, MeanBytes: 3000, MaxBytesInLoop: 9000, MaxBytes: 24000, CallsPerSecondWaiting: 0.25},
			want:   map[string]Status{"follow_bytes_per_poll": Fail, "follow_bytes_per_poll_s50": Skip}},
		{name: "nothing measured", want: map[string]Status{
			"calls_per_check_flat": Skip, "added_latency_s50_n100": Skip, "over_floor_s50_n100": Skip, "history_events_48h": Skip, "long_timeout_latency": Skip, "multi_project": Skip, "follow_bytes_per_poll": Skip,
			"follow_bytes_per_poll_s50": Skip,
			"cost_by_cell":              Skip, "payload_s50": Skip, "lambda_binary": Skip,
			"handler_memory": Skip, "handler_time_s50_n100": Skip, "unchanged_assets": Skip}},
		{name: "partial grid", cells: []CellResult{cell(1, 1), cell(10, 100)}, bin: bin, up: up, long: long, follow: follow, multi: multi,
			want: map[string]Status{"calls_per_check_flat": Skip, "added_latency_s50_n100": Skip, "over_floor_s50_n100": Skip, "payload_s50": Skip, "handler_time_s50_n100": Skip}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string]Status{}
			for _, tg := range Targets(tt.cells, tt.long, tt.multi, tt.follow, tt.bin, tt.up) {
				got[tg.Name] = tg.Status
				assert.NotEmpty(t, tg.Want, tg.Name)
				if tg.Status != Skip {
					assert.NotEmpty(t, tg.Measured, tg.Name)
				}
			}
			want := map[string]Status{}
			for name := range got {
				want[name] = Pass
			}
			maps.Copy(want, tt.want)
			assert.Equal(t, want, got)
			r := &Report{Targets: Targets(tt.cells, tt.long, tt.multi, tt.follow, tt.bin, tt.up)}
			assert.Equal(t, !slices.Contains(slices.Collect(maps.Values(want)), Fail), r.Passed())
		})
	}
}

func TestReleaseFileIsValid(t *testing.T) {
	for _, c := range Grid() {
		raw, err := ReleaseFile(c, 1)
		require.NoError(t, err)
		assert.NotContains(t, string(raw), "release_id", "the client sets it")
		r, err := release.DecodeFile(raw)
		require.NoError(t, err, c.String())
		r.ApplyDefaults()
		require.NoError(t, r.Validate(false), c.String())
	}
}

func TestGrid(t *testing.T) {
	assert.Len(t, Grid(), 9)
	assert.Equal(t, Cell{Services: 50, Instances: 100}, Grid()[8])
}

// BenchmarkDeploySmallCell deploys the S=1, N=10 cell (a previous release,
// then the measured one) per iteration and reports what the measured
// release cost.
func BenchmarkDeploySmallCell(b *testing.B) {
	ctx := context.Background()
	var last *Measurement
	for b.Loop() {
		m, err := Run(ctx, Cell{Services: 1, Instances: 10}, Ferry, Options{})
		if err != nil {
			b.Fatal(err)
		}
		last = m
	}
	b.ReportMetric(float64(last.APICalls()), "api_calls/deploy")
	b.ReportMetric(float64(last.CallsPerCheckMax()), "api_calls/check")
	b.ReportMetric(float64(last.Transitions), "transitions/deploy")
	b.ReportMetric(last.AddedLatency.Seconds(), "added_latency_s")
	b.ReportMetric(float64(last.HandlerTime.Microseconds())/1000, "handler_ms/deploy")
}

// TestMulti: a few deploys at once on a throttling world all succeed
// (CloudWatch's PutMetricAlarm, 3 a second, may throttle one of their
// calls through the SDK's retries: Deploy runs again after a wait), none
// through a task's retry; the rates are counted over the measured round.
func TestMulti(t *testing.T) {
	m, err := RunMulti(context.Background(), 3, 2, GridOptions{})
	require.NoError(t, err)
	assert.Equal(t, 3, m.Deploys)
	assert.Equal(t, 3, m.PreviousSucceeded)
	assert.Equal(t, 3, m.Succeeded, m.Failure)
	assert.Zero(t, m.ThrottledToRetry)
	assert.Equal(t, m.ThrottledCalls, total(m.ThrottledByOp))
	assert.Positive(t, m.DescribeASGPerS)
	assert.Positive(t, m.DescribeTargetHealthPerS)
	assert.Positive(t, m.MaxCallsInASecond)
	assert.NotEmpty(t, m.BusiestBucket, "the bucket of the busiest second")
	assert.Greater(t, m.Seconds, 60.0)
	assert.Equal(t, 3*2, m.CallsByOp["Auto Scaling:CreateAutoScalingGroup"], "one group a service")
	assert.Equal(t, 3*2, m.AutoScalingCallsByTask["Deploy CreateAutoScalingGroup"])
	assert.Equal(t, m.CallsByBucket[autoScaling], total(m.AutoScalingCallsByTask), "every call to the shared bucket, by task")
}

// TestWorstMulti: of several runs of multi_project, the report is of
// the worst, judged by what the target judges in its order, and names
// every run's busiest second.
func TestWorstMulti(t *testing.T) {
	run := func(succeeded, toRetry int, describes float64, busiest int) *Multi {
		return &Multi{Deploys: 100, Services: 10, Succeeded: succeeded, ThrottledToRetry: toRetry, DescribeTargetHealthPerS: describes, DescribeASGPerS: 1, MaxCallsInASecond: busiest, BusiestBucket: "b"}
	}
	tests := []struct {
		name string
		runs []*Multi
		want int // the index of the worst
	}{
		{"one run", []*Multi{run(100, 0, 2, 35)}, 0},
		{"the busiest second", []*Multi{run(100, 0, 2, 35), run(100, 0, 2, 45), run(100, 0, 2, 38)}, 1},
		{"a failed deploy before a busier second", []*Multi{run(100, 0, 2, 45), run(99, 0, 2, 30)}, 1},
		{"a task throttled to its retry before a busier second", []*Multi{run(100, 0, 2, 45), run(100, 1, 2, 30)}, 1},
		{"more describes a second before a busier second", []*Multi{run(100, 0, 2, 45), run(100, 0, 9, 30)}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := WorstMulti(tc.runs)
			want := *tc.runs[tc.want]
			want.Runs = got.Runs
			assert.Equal(t, &want, got)
			require.Len(t, got.Runs, len(tc.runs))
			for i, m := range tc.runs {
				assert.Equal(t, MultiRun{Succeeded: m.Succeeded, ThrottledToRetry: m.ThrottledToRetry, DescribesPerS: m.DescribeTargetHealthPerS,
					MaxCallsInASecond: m.MaxCallsInASecond, BusiestBucket: "b"}, got.Runs[i])
			}
			assert.Nil(t, tc.runs[tc.want].Runs, "the runs themselves are left as they were")
		})
	}
	target := multiTarget(WorstMulti([]*Multi{run(100, 0, 2, 35), run(100, 0, 2, 45)}))
	assert.Equal(t, Fail, target.Status)
	assert.Contains(t, target.Measured, "at most 45 calls in a second (b)")
	assert.Contains(t, target.Measured, "the worst of 2 runs (busiest seconds 35, 45)")

	hidden := multiTarget(WorstMulti([]*Multi{run(100, 0, 3, 45), run(100, 0, 4, 30)}))
	assert.Equal(t, Fail, hidden.Status, "the run reported (more describes a second) passes, the busier one does not: the target fails")
	assert.Equal(t, Pass, multiTarget(WorstMulti([]*Multi{run(100, 0, 3, 40), run(100, 0, 4, 30)})).Status)
}

// TestThrottledS50Untimed: a project of 50 services deploys twice and
// succeeds on a world that throttles as AWS documents, without the
// benchmark's modelled call time (as the local region runs it: every call
// of a task at one instant, so a step gets through only a bucket's burst,
// such as Auto Scaling's one shared bucket: Amazon EC2 Auto Scaling API
// Reference, API request rate). The second release's retirement of 50
// groups once ran out of its throttled steps, then of its retries, and
// ended FailureDirty: a removal taken again deleted every group already
// gone again, and a retirement step throttled part-way kept nothing.
func TestThrottledS50Untimed(t *testing.T) {
	ctx := context.Background()
	c := Cell{Services: 50, Instances: 1}
	r, err := region.New(ctx, region.Options{World: World(c), Clock: clock.NewVirtual(Start)})
	require.NoError(t, err)
	defer r.Close()
	sub, err := newSubmitter(r)
	require.NoError(t, err)
	defer sub.close()
	for v := range 2 {
		d, err := sub.deploy(ctx, c, v)
		require.NoError(t, err, "release %d", v)
		assert.Equal(t, asl.StatusSucceeded, d.Status)
	}
	assert.NotEmpty(t, r.World().Throttles().Retried, "the world throttled")
}

// TestCostliestCheck: a cell's calls per check are its costliest health
// check over every seed (which services a check asks depends on when
// the instances boot), its operations that check's.
func TestCostliestCheck(t *testing.T) {
	fs := []*Measurement{
		{CheckCalls: []int{5, 7}, FullCheckByOp: map[string]int{"a": 7}},
		{CheckCalls: []int{3, 9, 4}, FullCheckByOp: map[string]int{"b": 9}},
		{CheckCalls: []int{9}, FullCheckByOp: map[string]int{"c": 9}},
	}
	c := NewCellResult(fs, fs, 512)
	assert.Equal(t, 9, c.APICallsPerCheck)
	assert.Equal(t, map[string]int{"b": 9}, c.APICallsPerCheckByOp, "the first of equals")
	assert.Equal(t, 9, c.ReferenceAPICallsPerCheck)
	assert.Equal(t, 2, c.HealthChecks, "the first seed's details")
}

// distOf: the median, the 95th percentile by nearest rank, the extremes.
func TestDistOf(t *testing.T) {
	xs := make([]float64, 20)
	for i := range xs {
		xs[i] = float64(20 - i) // 20 down to 1
	}
	assert.Equal(t, Dist{Median: 10.5, P95: 19, Min: 1, Max: 20, Seeds: 20}, distOf(xs))
	assert.Equal(t, Dist{Median: 3, P95: 3, Min: 3, Max: 3, Seeds: 1}, distOf([]float64{3}))
	assert.Equal(t, Dist{}, distOf(nil))
}

// Cost: transitions, Lambda requests and GB-seconds at the memory asked,
// S3 writes and reads (deletes free), nothing for the targets' APIs.
func TestCost(t *testing.T) {
	m := &Measurement{Transitions: 1000, Invocations: 100, LambdaBilled: 50 * time.Second,
		ByOp: map[string]int{"s3:GetObject": 1000, "s3:HeadObject": 1000, "s3:PutObject": 100, "s3:DeleteObject": 100, "autoscaling:DescribeAutoScalingGroups": 1000}}
	want := 1000*StepFunctionsTransitionUSD + 100*LambdaRequestUSD + 50*0.5*LambdaGBSecondUSD + 2000*S3ReadUSD + 100*S3WriteUSD
	assert.InDelta(t, want, Cost(m, 512), 1e-12)
	assert.InDelta(t, 25*LambdaGBSecondUSD, Cost(m, 1024)-Cost(m, 512), 1e-12, "twice the memory, twice the GB-seconds")
}

// TestWritePage: the performance section is regenerated between its
// markers, the rest of the page kept byte for byte; a page without them
// is left alone (ErrNoMarkers).
func TestWritePage(t *testing.T) {
	r := NewReport(grid(nil), GridOptions{Seeds: 20}, nil, nil, nil, nil, nil)
	dir := t.TempDir()
	page := filepath.Join(dir, "performance.md")
	before, after := "# Performance\n\nintro\n\n", "\n\n## Afterwards\n"
	require.NoError(t, os.WriteFile(page, []byte(before+PageBegin+"\nold figures\n"+PageEnd+after), 0o644))
	require.NoError(t, WritePage(page, r))
	got, err := os.ReadFile(page)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(got), before+PageBegin+"\n"))
	assert.True(t, strings.HasSuffix(string(got), PageEnd+after))
	assert.NotContains(t, string(got), "old figures")
	assert.Contains(t, string(got), "| 50 | 100 | ")
	assert.Contains(t, string(got), "aws-documented")
	require.NoError(t, WritePage(page, r))
	again, err := os.ReadFile(page)
	require.NoError(t, err)
	assert.Equal(t, string(got), string(again), "regenerating is idempotent")

	bare := filepath.Join(dir, "bare.md")
	require.NoError(t, os.WriteFile(bare, []byte(before), 0o644))
	require.ErrorIs(t, WritePage(bare, r), ErrNoMarkers)
	kept, err := os.ReadFile(bare)
	require.NoError(t, err)
	assert.Equal(t, before, string(kept))
}

// TestPerformancePageHasItsMarkers: the page make bench writes has both
// markers, in order, so WritePage regenerates its section rather than
// leaving it stale (ErrNoMarkers).
func TestPerformancePageHasItsMarkers(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "..", "..", filepath.FromSlash(PerformancePage)))
	require.NoError(t, err)
	begin := strings.Index(string(page), PageBegin)
	end := strings.Index(string(page), PageEnd)
	require.GreaterOrEqual(t, begin, 0, "%s has no %s", PerformancePage, PageBegin)
	assert.Greater(t, end, begin, "%s has no %s after %s", PerformancePage, PageEnd, PageBegin)
}

// TestBeforeLaunch: a release of 50 services reaches Deploy, where its
// groups are created, within 45 calls' time of its start: Validate, Lock,
// ValidateResources and Publish make their per-service calls side by
// side (fifty instance profiles read, fifty user data written), not one
// after the other (then 90 calls' time more), and ValidateResources
// checks profiles, hooks, alarms and previous groups beside the network
// (then 9 more). All of it is time the deploy adds to its physical
// floor.
func TestBeforeLaunch(t *testing.T) {
	m, err := Run(context.Background(), Cell{Services: 50, Instances: 1}, Ferry, Options{})
	require.NoError(t, err)
	i := slices.IndexFunc(m.Steps, func(s Step) bool { return s.State == execution.TaskDeploy })
	require.GreaterOrEqual(t, i, 0, "the measured release entered Deploy: %v", m.Steps)
	assert.LessOrEqual(t, m.Steps[i].At, 45*DefaultCallCost, "before Deploy: %v", m.Steps[:i])
}

// TestLaunchedWhenCreated: the instances a release needs launch when the
// Auto Scaling call that made them got through, not when Deploy began
// (sim.World.InstanceTimes; a throttled attempt has no effect: Amazon EC2
// Auto Scaling API Reference, Welcome, "API request rate"). At S=50
// Deploy's fifty CreateAutoScalingGroup calls are more than the
// account's one Auto Scaling bucket holds: Deploy creates what a round's
// budget allows and the rest after the bucket's refill (a paced round,
// WaitForDeploy), and a create AWS throttles all the same launches
// after the SDK's backoff: time the deploy adds over its physical floor
// (its slowest needed instance's launch to healthy, plus the window),
// none of it hidden in the floor.
func TestLaunchedWhenCreated(t *testing.T) {
	m, err := Run(context.Background(), Cell{Services: 50, Instances: 1}, Ferry, Options{})
	require.NoError(t, err)
	require.True(t, m.ThrottledRetried["Auto Scaling:CreateAutoScalingGroup"] > 0 || slices.ContainsFunc(m.Steps, func(s Step) bool { return s.State == shape.StateWaitForDeploy }),
		"Deploy's creates paced or throttled: %v %v", m.Steps, m.ThrottledRetried)
	i := slices.IndexFunc(m.Steps, func(s Step) bool { return s.State == execution.TaskDeploy })
	require.GreaterOrEqual(t, i, 0, "the measured release entered Deploy: %v", m.Steps)
	deploy := m.Steps[i].At
	assert.Greater(t, m.FirstLaunch, deploy, "the first create follows Deploy's other calls")
	assert.Greater(t, m.LastLaunch, m.FirstLaunch, "a paced or throttled create launches after its wait")
	assert.LessOrEqual(t, m.LastLaunch, m.Deployed, "every create got through before Deploy returned")
	assert.GreaterOrEqual(t, m.CleanUpSuccess-m.Floor, m.FirstLaunch, "the time before the launches is over the floor")
	assert.GreaterOrEqual(t, m.CleanUpSuccess, m.LastHealthy+StableWindow)
	t.Logf("Deploy %v to %v, launches %v to %v, floor %v, CleanUpSuccess %v, retried %v", deploy, m.Deployed, m.FirstLaunch, m.LastLaunch, m.Floor, m.CleanUpSuccess, m.ThrottledRetried)
}

// TestBusySeconds: the seconds a bucket took more than 40 attempts are
// counted per bucket and shown busiest first, at most busyShown of each
// bucket's, with the calls first made in them by task; the rest of their
// attempts are the SDK's retries. Seconds before the measured round are
// left out.
func TestBusySeconds(t *testing.T) {
	since := Start
	at := func(bucket string, s int64) sim.BucketSecond {
		return sim.BucketSecond{Account: "1", Region: "r", Bucket: bucket, Second: since.Unix() + s}
	}
	attempts := map[sim.BucketSecond]int{at("A", -5): 99, at("A", 3): 41, at("A", 7): 52, at("B", 1): 40}
	for s := range busyShown + 1 {
		attempts[at("C", int64(10+s))] = 45
	}
	firsts := map[sim.BucketSecond]map[string]int{at("A", 7): {"Deploy CreateAutoScalingGroup": 30, "CheckHealthy DescribeAutoScalingGroups": 2}}
	var m Multi
	m.busySeconds(attempts, firsts, since)
	assert.Equal(t, map[string]int{"A": 2, "C": busyShown + 1}, m.SecondsOverByBucket)
	require.Len(t, m.BusySeconds, 2+busyShown)
	assert.Equal(t, BusySecond{Bucket: "A", At: 7, Attempts: 52, Retries: 20, FirstByTask: firsts[at("A", 7)]}, m.BusySeconds[0])
	assert.Equal(t, BusySecond{Bucket: "A", At: 3, Attempts: 41, Retries: 41}, m.BusySeconds[busyShown+1])
}

// TestCheckReadsLeaveOnceADeploy: the check that finds a release healthy
// announces it and clears its start marker, once a deploy; a check's
// cost (calls_per_check_flat) counts neither, and every other call.
func TestCheckReadsLeaveOnceADeploy(t *testing.T) {
	ops := map[string]int{"elbv2:DescribeTargetHealth": 30, "s3:GetObject": 3, "s3:DeleteObject": 1, "eventbridge:PutEvents": 1, "autoscaling:DescribeAutoScalingGroups": 1}
	assert.Equal(t, map[string]int{"elbv2:DescribeTargetHealth": 30, "s3:GetObject": 3, "autoscaling:DescribeAutoScalingGroups": 1}, checkReads(ops))
	assert.Len(t, ops, 5, "the calls counted are left as they were")
}
