package deployer

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/health/analysis"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
)

// withLatency is the harness's world where "ubuntu" publishes a latency
// of 100 per group, with images "ubuntu-slow" (130: a build 30%
// slower), "ubuntu-same" (100) and "ubuntu-silent" (none).
func withLatency(w *sim.WorldSpec) {
	r := &w.Accounts[0].Regions[0]
	latency := func(v float64) []sim.MetricSpec {
		return []sim.MetricSpec{{Namespace: "DeployTest", Name: "Latency", Value: v}}
	}
	for i := range r.AMIs {
		if r.AMIs[i].Name == "ubuntu" {
			r.AMIs[i].Metrics = latency(100)
		}
	}
	cpu := 20.0 // ubuntu's
	for _, img := range []struct {
		id, name string
		metrics  []sim.MetricSpec
	}{
		{"ami-00000000000a1a01", "ubuntu-slow", latency(130)},
		{"ami-00000000000a1a02", "ubuntu-same", latency(100)},
		{"ami-00000000000a1a03", "ubuntu-silent", nil},
	} {
		r.AMIs = append(r.AMIs, sim.AMISpec{ID: img.id, Name: img.name, Metrics: img.metrics, CPUPercent: &cpu,
			Tags: map[string]string{"Name": img.name, "DeployWith": "ferry"}})
	}
}

// withAnalysis gives r a canary in two steps and an analysis of metrics
// over five minutes.
func withAnalysis(r *release.Release, image string, metrics ...release.AnalysisMetric) {
	r.AMI = image
	r.Services["web"].Rollout = &release.Rollout{Steps: []release.Step{{N: 1}, {N: 100, Percent: true}}, StepWaitSeconds: 240}
	r.Analysis = &release.Analysis{WindowSeconds: 300, Metrics: metrics}
}

var (
	latencyMetric = release.AnalysisMetric{Namespace: "DeployTest", Name: "Latency"}
	cpuMetric     = release.AnalysisMetric{Namespace: "AWS/EC2", Name: "CPUUtilization"}
)

// TestAnalysisRollsBackASlowerBuild: a build 30% slower than the one it
// replaces fails the canary analysis at its first step, while no alarm
// fires, and rolls back as an alarm does: the previous group serves on,
// and the outcome keeps the analysis that failed.
func TestAnalysisRollsBackASlowerBuild(t *testing.T) {
	h := newHarness(t, withLatency)
	r1 := h.baseRelease()
	h.start(r1).succeed()
	r2 := h.baseRelease()
	withAnalysis(r2, "ubuntu-slow", latencyMetric)
	x := h.start(r2)
	require.NoError(t, x.steps(upToDeploy...))
	_, err := x.untilHealthy(300)
	var halted *failure.HaltError
	require.ErrorAs(t, err, &halted)
	assert.Regexp(t, `^service web: canary analysis scored 0, below its marginal_score of 75: DeployTest/Latency high \(mean 13\d\.?\d* over \d+ samples against (99|10\d)\.?\d* over \d+ samples, p=`, halted.Reason)
	assert.Equal(t, 1, x.state.Health.Services["web"].Step, "rolled back at its first step")
	require.NoError(t, x.fail(err))
	old := h.groups()[naming.GroupName(project, config, "web", r1.ReleaseID)]
	attached, _ := serving(old)
	assert.True(t, attached, "the previous fleet serves on")

	o, found, err := h.ledger.GetOutcome(t.Context(), project, config, r2.ReleaseID)
	require.NoError(t, err)
	require.True(t, found)
	require.NotNil(t, o.Analysis, "the outcome keeps the analysis")
	assert.Equal(t, analysis.ClassFail, o.Analysis.Report.Class)
	require.Len(t, o.Analysis.Report.Metrics, 1)
	m := o.Analysis.Report.Metrics[0]
	assert.Equal(t, analysis.VerdictHigh, m.Verdict)
	assert.Less(t, m.PValue, analysis.Alpha)
	assert.GreaterOrEqual(t, m.NewSamples, 3)
	assert.Equal(t, 5, m.PreviousSamples, "five one-minute samples of the previous group")
}

// TestAnalysisFailingAtItsFirstCheckIsKept: an analysis that fails at
// the release's first check halts it before the state carries any
// judgement; the outcome still keeps the report the rollback was for.
func TestAnalysisFailingAtItsFirstCheckIsKept(t *testing.T) {
	h := newHarness(t, withLatency)
	h.start(h.baseRelease()).succeed()
	r2 := h.baseRelease()
	withAnalysis(r2, "ubuntu-slow", latencyMetric)
	x := h.start(r2)
	require.NoError(t, x.steps(upToDeploy...))
	_, err := x.untilHealthy(300)
	var halted *failure.HaltError
	require.ErrorAs(t, err, &halted)
	x.state.Health.Analysis = nil // as the state stands when the first check fails
	require.NoError(t, x.fail(err))

	o, found, err := h.ledger.GetOutcome(t.Context(), project, config, r2.ReleaseID)
	require.NoError(t, err)
	require.True(t, found)
	require.NotNil(t, o.Analysis, "the outcome keeps the analysis the rollback was for")
	assert.Equal(t, analysis.ClassFail, o.Analysis.Report.Class)
}

// TestAnalysisPassesAnEqualBuild: a build as fast as the previous one
// passes at every check, the bake included, where the previous group,
// standing by, is judged on the window before it stood by.
func TestAnalysisPassesAnEqualBuild(t *testing.T) {
	h := newHarness(t, withLatency)
	r1 := h.baseRelease()
	h.start(r1).succeed()
	r2 := h.baseRelease()
	withAnalysis(r2, "ubuntu-same", latencyMetric)
	r2.BakeSeconds = 600
	x := h.start(r2)
	require.NoError(t, x.steps(upToDeploy...))
	_, err := x.untilHealthy(300)
	require.NoError(t, err)
	a := x.state.Health.Analysis
	require.NotNil(t, a)
	assert.Equal(t, analysis.ClassPass, a.Report.Class)
	assert.Equal(t, map[string]float64{"web": 100}, a.Scores)
	for range 300 {
		require.NoError(t, x.stepRetrying(execution.TaskBake))
		if x.state.Bake.Done {
			break
		}
		h.clk.Advance(time.Duration(x.state.Bake.WaitSeconds) * time.Second)
	}
	require.True(t, x.state.Bake.Done)
	a = x.state.Health.Analysis
	require.NotNil(t, a)
	assert.True(t, a.Bake)
	assert.Equal(t, analysis.ClassPass, a.Report.Class)
	assert.Equal(t, 5, a.Report.Metrics[0].PreviousSamples, "the window before the previous group stood by")
	require.NoError(t, x.stepRetrying(execution.TaskCleanUpSuccess))
}

// TestAnalysisNoData: a metric the new build does not publish is nodata,
// left out of the score, so the release is judged on the others; with no
// metric to judge at all, the release waits for data and its timeout
// rolls it back (never a pass without evidence).
func TestAnalysisNoData(t *testing.T) {
	t.Run("judged on the metrics with data", func(t *testing.T) {
		h := newHarness(t, withLatency)
		h.start(h.baseRelease()).succeed()
		r2 := h.baseRelease()
		withAnalysis(r2, "ubuntu-silent", latencyMetric, cpuMetric)
		x := h.start(r2)
		require.NoError(t, x.steps(upToDeploy...))
		_, err := x.untilHealthy(300)
		require.NoError(t, err)
		a := x.state.Health.Analysis
		require.NotNil(t, a)
		assert.Equal(t, analysis.ClassPass, a.Report.Class)
		assert.Equal(t, analysis.VerdictNoData, a.Report.Metrics[0].Verdict)
		assert.Zero(t, a.Report.Metrics[0].NewSamples)
		assert.Equal(t, analysis.VerdictPass, a.Report.Metrics[1].Verdict)
		cpu := a.Report.Metrics[1]
		assert.GreaterOrEqual(t, cpu.NewSamples, 4, "detailed monitoring: a CPU sample a minute")
		assert.Positive(t, cpu.PreviousSamples, "basic monitoring (the previous release had no analysis): one in five minutes")
	})
	t.Run("no data at all waits until the timeout", func(t *testing.T) {
		h := newHarness(t, withLatency)
		h.start(h.baseRelease()).succeed()
		r2 := h.baseRelease()
		withAnalysis(r2, "ubuntu-silent", latencyMetric)
		x := h.start(r2)
		require.NoError(t, x.steps(upToDeploy...))
		_, err := x.untilHealthy(500)
		var timeout *failure.TimeoutError
		require.ErrorAs(t, err, &timeout)
		a := x.state.Health.Analysis
		require.NotNil(t, a)
		assert.Equal(t, analysis.ClassNoData, a.Report.Class)
	})
}

// windowReader records each GetMetricData call's window and the groups
// it asks for, and answers three samples a query (the previous groups'
// 100, the new group's given).
type windowReader struct {
	newValue float64
	calls    []cloudwatch.GetMetricDataInput
}

func (w *windowReader) GetMetricData(_ context.Context, in *cloudwatch.GetMetricDataInput, _ ...func(*cloudwatch.Options)) (*cloudwatch.GetMetricDataOutput, error) {
	w.calls = append(w.calls, *in)
	out := &cloudwatch.GetMetricDataOutput{}
	for i, q := range in.MetricDataQueries {
		v := 100.0
		if strings.HasSuffix(aws.ToString(q.MetricStat.Metric.Dimensions[0].Value), "/r-new") {
			v = w.newValue
		}
		out.MetricDataResults = append(out.MetricDataResults, cwtypes.MetricDataResult{Id: q.Id, StatusCode: cwtypes.StatusCodeComplete,
			Values: []float64{v + float64(i), v + 1.5, v + 2.25, v + 3, v - 1}})
	}
	return out, nil
}

// TestAnalysisWindows: while the previous groups serve, both sides are
// read over the same last window of whole periods, in one call; in the
// bake the previous groups' window ends when they stood by, the new
// group's now. A failing score is a halt; the judgement is recorded.
func TestAnalysisWindows(t *testing.T) {
	h := newHarness(t)
	r := h.baseRelease()
	r.ReleaseID = "r-new"
	withAnalysis(r, "ubuntu", latencyMetric)
	r.ApplyDefaults()
	st := &execution.State{ProjectName: project, ConfigName: config, ReleaseID: r.ReleaseID,
		Previous: []string{naming.GroupName(project, config, "web", "r-old"), naming.GroupName(project, config, "web", "r-old"), naming.GroupName(project, config, "worker", "r-old")}}
	now := h.clk.Now().Add(90 * time.Second)
	since := now.Add(-20 * time.Minute)

	w := &windowReader{newValue: 100}
	a, err := h.d.analyze(t.Context(), w, st, r, now, now, false)
	require.NoError(t, err)
	require.Len(t, w.calls, 1, "one window, one call")
	assert.Equal(t, now.Truncate(time.Minute), *w.calls[0].EndTime)
	assert.Equal(t, now.Truncate(time.Minute).Add(-5*time.Minute), *w.calls[0].StartTime)
	assert.Len(t, w.calls[0].MetricDataQueries, 2, "web's new group and its one previous group; worker is not deployed")
	assert.Equal(t, analysis.ClassPass, a.Report.Class)

	w = &windowReader{newValue: 200}
	a, err = h.d.analyze(t.Context(), w, st, r, now, since, true)
	var halted *failure.HaltError
	require.ErrorAs(t, err, &halted)
	require.Len(t, w.calls, 2, "two windows, two calls")
	assert.Equal(t, now.Truncate(time.Minute), *w.calls[0].EndTime, "the new group's")
	assert.Equal(t, since.Truncate(time.Minute), *w.calls[1].EndTime, "the previous group's, before it stood by")
	assert.True(t, a.Bake)
	got, found, err := h.ledger.GetAnalysis(t.Context(), project, config, r.ReleaseID)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, analysis.ClassFail, got.Report.Class)
	assert.Equal(t, analysis.VerdictHigh, got.Report.Metrics[0].Verdict)
}
