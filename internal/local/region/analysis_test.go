package region

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/health/analysis"
	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/ledger"
)

// slowAlarm is the team's latency alarm: ALARM once instances of the
// slower build have served for ten minutes.
const slowAlarm = "deploy-test-latency"

// analysisRegion is the deploy-test region where "ubuntu" reports a
// latency of 100 per group (DeployTest/Latency, AutoScalingGroupName),
// "ubuntu-slow" 130 (a build 30% slower, which the team's alarm catches
// after ten minutes), "ubuntu-same" 100 and "ubuntu-silent" none.
func analysisRegion(t *testing.T) (*Region, *clock.Virtual) {
	t.Helper()
	clk := clock.NewVirtual(epoch0)
	w := testWorld(t)
	r := &w.Accounts[0].Regions[0]
	latency := func(v float64) []sim.MetricSpec {
		return []sim.MetricSpec{{Namespace: "DeployTest", Name: "Latency", Value: v}}
	}
	for i := range r.AMIs {
		if r.AMIs[i].Name == "ubuntu" {
			r.AMIs[i].Metrics = latency(100)
		}
	}
	for _, img := range []struct {
		id, name string
		metrics  []sim.MetricSpec
	}{{"ami-00000000000a1a01", "ubuntu-slow", latency(130)}, {"ami-00000000000a1a02", "ubuntu-same", latency(100)}, {"ami-00000000000a1a03", "ubuntu-silent", nil}} {
		r.AMIs = append(r.AMIs, sim.AMISpec{ID: img.id, Name: img.name, Metrics: img.metrics,
			Tags: map[string]string{"Name": img.name, "DeployWith": "ferry"}})
	}
	r.Alarms = append(r.Alarms, sim.AlarmSpec{Name: slowAlarm, Image: "ubuntu-slow", Minutes: 10,
		Tags: map[string]string{"ProjectName": testProject, "ConfigName": testConfig}})
	reg, err := New(context.Background(), Options{World: w, Clock: clk})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, reg.Close()) })
	return reg, clk
}

// TestCanaryAnalysisOnTheLocalRegion runs the deploy definition with the
// real handlers: a release 30% slower than the one it replaces is rolled
// back by its canary analysis at its first canary step, before the
// team's alarm fires, and the outcome keeps the failing analysis; a
// release as fast succeeds; a metric the new build does not publish is
// nodata, left out of the score.
func TestCanaryAnalysisOnTheLocalRegion(t *testing.T) {
	ctx := context.Background()
	reg, clk := analysisRegion(t)
	deploy := func(id, image string, metrics ...release.AnalysisMetric) (path []string, d asl.Description) {
		x, err := reg.StartRelease(ctx, releaseJSON(t, clk, id, func(rel *release.Release) {
			rel.AMI = image
			rel.Alarms = []string{slowAlarm}
			rel.Timeout = 1200
			rel.Services["web"].Autoscaling = &release.Autoscaling{MinSize: 2, MaxSize: 2}
			rel.Services["web"].Rollout = &release.Rollout{Steps: []release.Step{{N: 1}, {N: 100, Percent: true}}, StepWaitSeconds: 300}
			if len(metrics) > 0 {
				rel.Analysis = &release.Analysis{WindowSeconds: 300, Metrics: metrics}
			}
		}))
		require.NoError(t, err)
		require.NoError(t, x.Wait(ctx))
		clk.Advance(time.Hour)
		return x.Path(), x.Describe()
	}
	latency := release.AnalysisMetric{Namespace: "DeployTest", Name: "Latency"}
	memory := release.AnalysisMetric{Namespace: "CWAgent", Name: "mem_used_percent"}
	outcome := func(id string) ledger.Outcome {
		o, found, err := ledger.New(reg.S3(), reg.Bucket()).GetOutcome(ctx, testProject, testConfig, id)
		require.NoError(t, err)
		require.True(t, found)
		return o
	}

	path, _ := deploy("r-base", "ubuntu")
	require.Equal(t, execution.EndSuccess, last(path))

	path, d := deploy("r-slow", "ubuntu-slow", latency)
	require.Equal(t, execution.EndFailureClean, last(path))
	assert.Equal(t, "HaltError", d.Error)
	assert.Contains(t, d.Cause, "canary analysis scored 0, below its marginal_score of 75: DeployTest/Latency high")
	assert.NotContains(t, d.Cause, "alarm in ALARM", "the analysis rolled it back before the alarm fired")
	assert.NotContains(t, path, execution.TaskNextStep, "rolled back at its first step")
	o := outcome("r-slow")
	require.NotNil(t, o.Analysis)
	assert.Equal(t, analysis.ClassFail, o.Analysis.Report.Class)
	assert.Equal(t, analysis.VerdictHigh, o.Analysis.Report.Metrics[0].Verdict)
	assert.Less(t, o.Analysis.Report.Metrics[0].PValue, analysis.Alpha)

	view := httptest.NewServer(reg.Handler())
	defer view.Close()
	var recorded execution.Analysis
	getJSON(t, view.URL+AnalysisPath+"?"+url.Values{"project": {testProject}, "config": {testConfig}, "release": {"r-slow"}}.Encode(), &recorded)
	assert.Equal(t, *o.Analysis, recorded, "the console's view is the recorded analysis that rolled the release back")
	for query, status := range map[string]int{
		"project=" + url.QueryEscape(testProject) + "&config=" + testConfig + "&release=r-base": http.StatusNotFound,
		"project=" + url.QueryEscape(testProject) + "&release=r-slow":                           http.StatusBadRequest,
	} {
		resp, err := http.Get(view.URL + AnalysisPath + "?" + query)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, status, resp.StatusCode, query)
	}

	path, d = deploy("r-same", "ubuntu-same", latency)
	require.Equal(t, execution.EndSuccess, last(path), "%s %s", d.Error, d.Cause)
	assert.Contains(t, path, execution.TaskNextStep)
	o = outcome("r-same")
	require.NotNil(t, o.Analysis)
	assert.Equal(t, analysis.ClassPass, o.Analysis.Report.Class)

	path, d = deploy("r-silent", "ubuntu-silent", latency, memory)
	require.Equal(t, execution.EndFailureClean, last(path), "no metric has data: the release waits for it until its timeout")
	assert.Equal(t, "TimeoutError", d.Error)
	o = outcome("r-silent")
	require.NotNil(t, o.Analysis)
	assert.Equal(t, analysis.ClassNoData, o.Analysis.Report.Class)
	for _, m := range o.Analysis.Report.Metrics {
		assert.Equal(t, analysis.VerdictNoData, m.Verdict, m.Name)
	}
}
