package release

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAnalysisDefaults(t *testing.T) {
	r := valid()
	r.Analysis = &Analysis{Metrics: []AnalysisMetric{{Namespace: "AWS/EC2", Name: "CPUUtilization"}}}
	c := r.Clone()
	c.ApplyDefaults()
	a := c.Analysis
	assert.Equal(t, DefaultAnalysisWindow, a.WindowSeconds)
	assert.Equal(t, DefaultAnalysisPeriod, a.PeriodSeconds)
	assert.Equal(t, DefaultAnalysisPass, *a.PassScore)
	assert.Equal(t, DefaultAnalysisMarginal, *a.MarginalScore)
	m := a.Metrics[0]
	assert.Equal(t, "Average", m.Stat)
	assert.Equal(t, "higher", m.Direction)
	assert.Equal(t, DefaultAnalysisTolerance, *m.Tolerance)
	assert.Nil(t, r.Analysis.Metrics[0].Tolerance, "the defaults went to the clone only")
	assert.NoError(t, r.Validate(false))

	low := 50.0
	r.Analysis.PassScore = &low
	c = r.Clone()
	c.ApplyDefaults()
	assert.Equal(t, low, *c.Analysis.MarginalScore, "the default marginal score is at most the pass score")
}

func TestAnalysisRules(t *testing.T) {
	tests := []struct {
		name string
		edit func(a *Analysis)
		want string
	}{
		{"no metric", func(a *Analysis) { a.Metrics = nil }, "analysis.metrics: at least one metric is required"},
		{"a period of seconds", func(a *Analysis) { a.PeriodSeconds = 30 }, "analysis.period_seconds: must be a whole number of minutes"},
		{"a window longer than an hour", func(a *Analysis) { a.WindowSeconds = 7200 }, "analysis.window_seconds: must be whole periods"},
		{"a window of three periods can never find a difference", func(a *Analysis) { a.WindowSeconds, a.PeriodSeconds = 180, 60 }, "analysis.window_seconds: must hold at least 4 periods"},
		{"either way needs five", func(a *Analysis) { a.WindowSeconds, a.Metrics[0].Direction = 240, "either" }, "analysis.window_seconds: must hold at least 5 periods"},
		{"four periods one way", func(a *Analysis) { a.WindowSeconds = 240 }, ""},
		{"a score above 100", func(a *Analysis) { s := 101.0; a.PassScore = &s }, "analysis.pass_score: must be a score from 0 to 100"},
		{"too many metrics", func(a *Analysis) {
			for i := range 21 {
				a.Metrics = append(a.Metrics, AnalysisMetric{Namespace: "App", Name: strings.Repeat("m", i+1)})
			}
		}, "analysis.metrics: at most 20 metrics"},
		{"a name with a control character", func(a *Analysis) { a.Metrics[0].Name = "a\tb" }, "analysis.metrics[0].name: must be a CloudWatch metric name"},
		{"a percentile is a statistic", func(a *Analysis) { a.Metrics[0].Stat = "p99.9" }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := valid()
			r.Analysis = &Analysis{Metrics: []AnalysisMetric{{Namespace: "AWS/EC2", Name: "CPUUtilization"}}}
			tt.edit(r.Analysis)
			err := r.Validate(false)
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestAnalysisRefusedInADestroy(t *testing.T) {
	r := &Release{ProjectName: "coinbase/deploy-test", ConfigName: "development", Destroy: true,
		Analysis: &Analysis{Metrics: []AnalysisMetric{{Namespace: "AWS/EC2", Name: "CPUUtilization"}}}}
	err := r.Validate(false)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "analysis: must be absent from a destroy")
}

func TestAnalysisUnknownFieldIsRefused(t *testing.T) {
	data := strings.Replace(minimalFile, `"services"`, `"analysis":{"metrics":[{"namespace":"AWS/EC2","name":"CPUUtilization","tolerence":1}]},"services"`, 1)
	_, err := Decode([]byte(data))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "analysis.metrics[0].tolerence: unknown field (did you mean tolerance?)")
}
