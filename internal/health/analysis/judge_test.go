package analysis

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// series is n samples around mean, spread ±5% in a fixed pattern, shifted
// by phase so two series of one mean are not the same.
func series(mean float64, n, phase int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = mean * (1 + 0.05*math.Sin(float64(i*7+phase)))
	}
	return out
}

func TestJudgeMetric(t *testing.T) {
	base := series(100, 10, 0)
	tests := []struct {
		name string
		m    Metric
		want Verdict
	}{
		{"30% slower is high", Metric{Direction: DirectionHigher, Tolerance: 0.1, New: series(130, 10, 3), Previous: base}, VerdictHigh},
		{"the same is a pass", Metric{Direction: DirectionHigher, Tolerance: 0.1, New: series(100, 10, 3), Previous: base}, VerdictPass},
		{"better is a pass", Metric{Direction: DirectionHigher, Tolerance: 0.1, New: series(70, 10, 3), Previous: base}, VerdictPass},
		{"within the tolerance is a pass", Metric{Direction: DirectionHigher, Tolerance: 0.5, New: series(130, 10, 3), Previous: base}, VerdictPass},
		{"lower is worse: 30% less is low", Metric{Direction: DirectionLower, Tolerance: 0.1, New: series(70, 10, 3), Previous: base}, VerdictLow},
		{"lower is worse: more is a pass", Metric{Direction: DirectionLower, Tolerance: 0.1, New: series(130, 10, 3), Previous: base}, VerdictPass},
		{"either way: more is high", Metric{Direction: DirectionEither, Tolerance: 0.1, New: series(130, 10, 3), Previous: base}, VerdictHigh},
		{"either way: less is low", Metric{Direction: DirectionEither, Tolerance: 0.1, New: series(70, 10, 3), Previous: base}, VerdictLow},
		{"no new samples", Metric{Direction: DirectionHigher, Previous: base}, VerdictNoData},
		{"no previous samples", Metric{Direction: DirectionHigher, New: base}, VerdictNoData},
		{"only NaNs is no data", Metric{Direction: DirectionHigher, New: []float64{math.NaN()}, Previous: base}, VerdictNoData},
		{"a rise from zero counts", Metric{Direction: DirectionHigher, Tolerance: 0.1, New: series(1, 10, 3), Previous: make([]float64, 10)}, VerdictHigh},
		{"too few samples to be significant is no data", Metric{Direction: DirectionHigher, Tolerance: 0.1, New: []float64{200}, Previous: []float64{100}}, VerdictNoData},
		{"two samples against five cannot reach Alpha", Metric{Direction: DirectionHigher, Tolerance: 0.1, New: series(160, 2, 3), Previous: series(100, 5, 0)}, VerdictNoData},
		{"three samples are still too few", Metric{Direction: DirectionHigher, Tolerance: 0.1, New: series(160, 3, 3), Previous: series(100, 5, 0)}, VerdictNoData},
		{"four samples against five can tell", Metric{Direction: DirectionHigher, Tolerance: 0.1, New: series(160, 4, 3), Previous: series(100, 5, 0)}, VerdictHigh},
		{"a sparse previous side is judged as it is", Metric{Direction: DirectionHigher, Tolerance: 0.1, New: series(100, 10, 3), Previous: []float64{100}}, VerdictPass},
		{"either way needs five", Metric{Direction: DirectionEither, Tolerance: 0.1, New: series(160, 4, 3), Previous: series(100, 5, 0)}, VerdictNoData},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, JudgeMetric(tt.m).Verdict)
		})
	}
}

func TestJudgeScore(t *testing.T) {
	th := Thresholds{Pass: 75, Marginal: 50}
	pass := Metric{Name: "p", Direction: DirectionHigher, Tolerance: 0.1, New: series(100, 10, 3), Previous: series(100, 10, 0)}
	high := Metric{Name: "h", Direction: DirectionHigher, Tolerance: 0.1, New: series(130, 10, 3), Previous: series(100, 10, 0)}
	none := Metric{Name: "n", Direction: DirectionHigher}
	tests := []struct {
		name    string
		metrics []Metric
		score   float64
		class   Class
	}{
		{"all pass", []Metric{pass, pass}, 100, ClassPass},
		{"nodata is left out of the score", []Metric{pass, none}, 100, ClassPass},
		{"two of three is marginal", []Metric{pass, pass, high}, 200.0 / 3, ClassMarginal},
		{"half is marginal at its threshold", []Metric{pass, high}, 50, ClassMarginal},
		{"one of three fails", []Metric{pass, high, high}, 100.0 / 3, ClassFail},
		{"no data at all", []Metric{none, none}, 0, ClassNoData},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Judge(tt.metrics, th)
			assert.InDelta(t, tt.score, r.Score, 1e-9)
			assert.Equal(t, tt.class, r.Class)
			assert.Len(t, r.Metrics, len(tt.metrics))
		})
	}
}

// A release whose new group answers 30% slower than the previous one
// fails the analysis, though its CPU is the same.
func ExampleJudge() {
	previous := []float64{101, 98, 103, 99, 100, 102, 97, 100, 101, 99}
	slower := []float64{131, 128, 133, 129, 130, 132, 127, 130, 131, 129}
	cpu := []float64{40, 41, 39, 40, 42, 38, 40, 41, 39, 40}
	r := Judge([]Metric{
		{Name: "Latency", Direction: DirectionHigher, Tolerance: 0.1, New: slower, Previous: previous},
		{Name: "CPUUtilization", Direction: DirectionHigher, Tolerance: 0.2, New: cpu, Previous: cpu},
	}, Thresholds{Pass: 95, Marginal: 75})
	for _, m := range r.Metrics {
		fmt.Printf("%s: %d vs %d samples, p=%.5f, %s\n", m.Name, m.NewSamples, m.PreviousSamples, m.PValue, m.Verdict)
	}
	fmt.Printf("score %.0f: %s\n", r.Score, r.Class)
	// Output:
	// Latency: 10 vs 10 samples, p=0.00009, high
	// CPUUtilization: 10 vs 10 samples, p=0.51571, pass
	// score 50: fail
}
