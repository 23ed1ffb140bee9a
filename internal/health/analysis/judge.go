package analysis

import (
	"math"
)

// Direction says which way a metric is worse.
type Direction string

// Directions.
const (
	// DirectionHigher: higher is worse (latency, errors, CPU).
	DirectionHigher Direction = "higher"
	// DirectionLower: lower is worse (requests served, throughput).
	DirectionLower Direction = "lower"
	// DirectionEither: a change either way is worse.
	DirectionEither Direction = "either"
)

// Directions are the directions a metric may have.
var Directions = []Direction{DirectionHigher, DirectionLower, DirectionEither}

// Verdict is one metric's judgement.
type Verdict string

// Verdicts (Kayenta's metric classifications).
const (
	VerdictPass   Verdict = "pass"
	VerdictHigh   Verdict = "high"
	VerdictLow    Verdict = "low"
	VerdictNoData Verdict = "nodata"
)

// Class is the overall classification of a score.
type Class string

// Classes (Kayenta's score classifications, and no data at all).
const (
	ClassPass     Class = "pass"
	ClassMarginal Class = "marginal"
	ClassFail     Class = "fail"
	ClassNoData   Class = "nodata"
)

// Alpha is the significance a difference must reach (a p-value below
// it) to make a metric high or low: Kayenta's judge works at a 98%
// confidence level.
const Alpha = 0.02

// Metric is one metric's samples over a window: those of the new groups
// and those of the previous groups, with its direction and tolerance (a
// fraction of the previous mean the new mean may be worse by, 0.1 for
// 10%).
type Metric struct {
	Name      string
	Direction Direction
	Tolerance float64
	New       []float64
	Previous  []float64
}

// Result is one metric's judgement.
type Result struct {
	Name      string    `json:"name"`
	Direction Direction `json:"direction"`
	// NewSamples and PreviousSamples count the finite samples judged.
	NewSamples      int `json:"new_samples"`
	PreviousSamples int `json:"previous_samples"`
	// NewMean and PreviousMean are their means (0 without samples).
	NewMean      float64 `json:"new_mean"`
	PreviousMean float64 `json:"previous_mean"`
	// U and PValue are the Mann-Whitney test's (the new samples' U); 0
	// and 1 without data.
	U      float64 `json:"u"`
	PValue float64 `json:"p_value"`
	// Exact says the p-value is exact, not approximated.
	Exact   bool    `json:"exact,omitempty"`
	Verdict Verdict `json:"verdict"`
}

// Thresholds are the scores (0 to 100) that classify: at least Pass is
// ClassPass, at least Marginal ClassMarginal, below it ClassFail.
type Thresholds struct {
	Pass     float64
	Marginal float64
}

// Report is the judgement of every metric and the overall score.
type Report struct {
	// Score is 100 times the share of the metrics with data that pass; 0
	// when none has data.
	Score   float64  `json:"score"`
	Class   Class    `json:"class"`
	Metrics []Result `json:"metrics"`
}

// Judge judges each metric (JudgeMetric), in order, scores them and
// classifies the score (see the package doc).
func Judge(metrics []Metric, th Thresholds) Report {
	r := Report{Metrics: make([]Result, 0, len(metrics))}
	var pass, judged int
	for _, m := range metrics {
		res := JudgeMetric(m)
		r.Metrics = append(r.Metrics, res)
		if res.Verdict == VerdictNoData {
			continue
		}
		judged++
		if res.Verdict == VerdictPass {
			pass++
		}
	}
	if judged == 0 {
		r.Class = ClassNoData
		return r
	}
	r.Score = 100 * float64(pass) / float64(judged)
	r.Class = th.Classify(r.Score)
	return r
}

// Classify is the class of score: ClassPass at or above Pass,
// ClassMarginal at or above Marginal, else ClassFail.
func (th Thresholds) Classify(score float64) Class {
	switch {
	case score >= th.Pass:
		return ClassPass
	case score >= th.Marginal:
		return ClassMarginal
	}
	return ClassFail
}

// JudgeMetric judges one metric. Samples that are not finite are left
// out (Kayenta removes NaNs). Either side without a sample is
// VerdictNoData, and so are fewer new samples than MinSamples: a canary
// that has not yet published enough for any difference to be
// significant against as many previous samples has not passed. (The
// previous side is judged as it is: a sparse one, a group under basic
// monitoring, does not grow by waiting.) Otherwise the new samples are tested against the
// previous ones in the metric's direction (Greater when higher is worse,
// Less when lower is, TwoSided for either), and the metric is high (or
// low) when the test is significant (p < Alpha) and the new mean is
// beyond the previous mean by more than the tolerance, else it passes.
func JudgeMetric(m Metric) Result {
	x, y := finite(m.New), finite(m.Previous)
	r := Result{Name: m.Name, Direction: m.Direction, NewSamples: len(x), PreviousSamples: len(y), PValue: 1, Verdict: VerdictNoData}
	if len(x) == 0 || len(y) == 0 {
		return r
	}
	r.NewMean, r.PreviousMean = mean(x), mean(y)
	alt := TwoSided
	switch m.Direction {
	case DirectionHigher:
		alt = Greater
	case DirectionLower:
		alt = Less
	}
	if len(x) < MinSamples(m.Direction) {
		return r // too few new samples to tell yet: no data, not a pass
	}
	t := MannWhitney(x, y, alt)
	r.U, r.PValue, r.Exact = t.U, t.P, t.Exact
	r.Verdict = VerdictPass
	if t.P >= Alpha {
		return r
	}
	half := float64(len(x)*len(y)) / 2
	allowed := m.Tolerance * scale(r.PreviousMean)
	switch {
	case alt != Less && t.U > half && r.NewMean-r.PreviousMean > allowed:
		r.Verdict = VerdictHigh
	case alt != Greater && t.U < half && r.PreviousMean-r.NewMean > allowed:
		r.Verdict = VerdictLow
	}
	return r
}

// smallestP is the smallest p-value the Mann-Whitney test of alt can
// give n samples against m: that of the most extreme ordering, one of
// the C(n+m, n) equally likely under the null hypothesis (two of them
// for a two-sided test). Below Alpha's reach, no difference however
// large could be significant.
func smallestP(n, m int, alt Alternative) float64 {
	lc, _ := math.Lgamma(float64(n + m + 1))
	ln, _ := math.Lgamma(float64(n + 1))
	lm, _ := math.Lgamma(float64(m + 1))
	p := math.Exp(ln + lm - lc)
	if alt == TwoSided {
		p *= 2
	}
	return p
}

// MinSamples is the fewest new samples JudgeMetric judges a metric of
// direction d on: the fewest a side with which a difference can be
// significant (smallestP below Alpha): 4 one-sided, 5 for
// DirectionEither.
func MinSamples(d Direction) int {
	alt := TwoSided
	if d == DirectionHigher {
		alt = Greater
	} else if d == DirectionLower {
		alt = Less
	}
	n := 1
	for smallestP(n, n, alt) >= Alpha {
		n++
	}
	return n
}

// scale is what a tolerance is a fraction of: |previous mean|, or one
// unit when it is 0 (so a rise from nothing counts).
func scale(previous float64) float64 {
	if previous == 0 {
		return 1
	}
	return math.Abs(previous)
}

// finite is xs without its NaNs and infinities.
func finite(xs []float64) []float64 {
	out := make([]float64, 0, len(xs))
	for _, v := range xs {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			out = append(out, v)
		}
	}
	return out
}

// mean is the mean of xs (not empty).
func mean(xs []float64) float64 {
	var s float64
	for _, v := range xs {
		s += v
	}
	return s / float64(len(xs))
}
