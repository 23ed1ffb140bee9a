package release

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/ferryhq/ferry/internal/health/analysis"
	"github.com/ferryhq/ferry/internal/limits"
)

// Analysis is automated canary analysis (package analysis): while the
// release is judged (every health check, canary steps included, and
// every check of the bake) each service's new group is compared with the
// service's previous groups on Metrics, each read per group (dimension
// AutoScalingGroupName) over the last WindowSeconds in periods of
// PeriodSeconds. A score below MarginalScore rolls the release back as
// an alarm in ALARM does; the check that would find the release healthy
// waits while the score is below PassScore (marginal) or no metric has
// data, which the release's timeout bounds; during canary steps and the
// bake a marginal score, or no data, goes on. A metric without samples
// on either side, or with fewer new samples than a difference needs to
// be significant (analysis.MinSamples: the window holds at least that
// many periods), is nodata and left out of the score. During the bake
// the previous groups stand by and serve nothing, so their samples are
// those of the window before they stood by. A service without a previous
// group (its first release) is not analysed. Each group is one stream
// of samples whatever its size, so a statistic that grows with the
// group (Sum, SampleCount) compares a canary's one instance with a
// whole fleet: use Average or a percentile. EC2's own metrics come
// every five minutes under basic monitoring: the deployer enables
// detailed monitoring on the new groups when the period is shorter,
// but a previous group launched without it has a sample every five
// minutes.
type Analysis struct {
	Metrics       []AnalysisMetric `json:"metrics"`
	WindowSeconds int              `json:"window_seconds,omitempty"`
	PeriodSeconds int              `json:"period_seconds,omitempty"`
	PassScore     *float64         `json:"pass_score,omitempty"`
	MarginalScore *float64         `json:"marginal_score,omitempty"`
}

// AnalysisMetric is a CloudWatch metric that carries the
// AutoScalingGroupName dimension (EC2's own CPUUtilization and
// NetworkOut, the CloudWatch agent's in CWAgent, an application's custom
// metrics) and how to judge it.
type AnalysisMetric struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Stat is the statistic of each period (default Average).
	Stat string `json:"stat,omitempty"`
	// Direction is which way the metric is worse: higher (the
	// default), lower or either.
	Direction string `json:"direction,omitempty"`
	// Tolerance is how much worse the new groups' mean may be, a fraction
	// of the previous groups' (default 0.1: 10%).
	Tolerance *float64 `json:"tolerance,omitempty"`
}

// Label names the metric in reports: namespace/name, with its statistic
// when it is not Average.
func (m AnalysisMetric) Label() string {
	l := m.Namespace + "/" + m.Name
	if m.Stat != "" && m.Stat != DefaultAnalysisStat {
		l += " " + m.Stat
	}
	return l
}

// Thresholds are the analysis's score thresholds (defaults applied).
func (a *Analysis) Thresholds() analysis.Thresholds {
	return analysis.Thresholds{Pass: *a.PassScore, Marginal: *a.MarginalScore}
}

// NeedsDetailedMonitoring reports whether the analysis reads EC2's own
// metrics (namespace AWS/EC2) in periods shorter than the five minutes
// of basic monitoring; false for nil. Defaults must be applied.
func (a *Analysis) NeedsDetailedMonitoring() bool {
	if a == nil || a.PeriodSeconds >= 300 {
		return false
	}
	return slices.ContainsFunc(a.Metrics, func(m AnalysisMetric) bool { return m.Namespace == "AWS/EC2" })
}

// Defaults of an analysis (Spinnaker's canary stage's thresholds).
const (
	DefaultAnalysisWindow    = 600
	DefaultAnalysisPeriod    = 60
	DefaultAnalysisPass      = 95.0
	DefaultAnalysisMarginal  = 75.0
	DefaultAnalysisStat      = "Average"
	DefaultAnalysisTolerance = 0.1
	// maxAnalysisTolerance is the largest tolerance: ten times the
	// previous mean.
	maxAnalysisTolerance = 10
	maxMetricNameLen     = 255
)

// AnalysisStats are the statistics a metric may be judged on; a
// percentile pNN or pNN.NN too.
var AnalysisStats = []string{"Average", "Sum", "Minimum", "Maximum", "SampleCount"}

var percentileRe = regexp.MustCompile(`^p(\d{1,2}(\.\d{1,2})?|100)$`)

// metricNamespaceRe and metricNameRe are CloudWatch's: a namespace of
// letters, digits and . - _ / # : (and spaces), a name of printable ASCII.
var (
	metricNamespaceRe = regexp.MustCompile(`^[A-Za-z0-9.\-_/#: ]{1,255}$`)
	metricNameRe      = regexp.MustCompile(`^[\x20-\x7e]{1,255}$`)
)

// applyDefaults fills in an analysis's unset window, period, thresholds,
// and each metric's statistic, direction and tolerance.
func (a *Analysis) applyDefaults() {
	if a.WindowSeconds == 0 {
		a.WindowSeconds = DefaultAnalysisWindow
	}
	if a.PeriodSeconds == 0 {
		a.PeriodSeconds = DefaultAnalysisPeriod
	}
	if a.PassScore == nil {
		a.PassScore = new(float64)
		*a.PassScore = DefaultAnalysisPass
	}
	if a.MarginalScore == nil {
		a.MarginalScore = new(float64)
		*a.MarginalScore = min(DefaultAnalysisMarginal, *a.PassScore)
	}
	for i := range a.Metrics {
		m := &a.Metrics[i]
		if m.Stat == "" {
			m.Stat = DefaultAnalysisStat
		}
		if m.Direction == "" {
			m.Direction = string(analysis.DirectionHigher)
		}
		if m.Tolerance == nil {
			m.Tolerance = new(float64)
			*m.Tolerance = DefaultAnalysisTolerance
		}
	}
}

func (a *Analysis) clone() *Analysis {
	c := *a
	c.PassScore, c.MarginalScore = clonePtr(a.PassScore), clonePtr(a.MarginalScore)
	c.Metrics = slices.Clone(a.Metrics)
	for i := range c.Metrics {
		c.Metrics[i].Tolerance = clonePtr(a.Metrics[i].Tolerance)
	}
	return &c
}

// analysis checks the release's analysis (defaults applied): a window of
// whole periods of whole minutes, thresholds from 0 to 100 with the
// marginal one at most the pass one, and 1 to limits.MaxAnalysisMetrics
// metrics, each named as CloudWatch names them, none twice.
func (v *validator) analysis() {
	a := v.r.Analysis
	if a == nil {
		return
	}
	const apath = "analysis"
	v.analysisWindow(apath, a)
	switch n := len(a.Metrics); {
	case n == 0:
		v.p.add(field(apath, "metrics"), "at least one metric is required")
	case n > limits.MaxAnalysisMetrics:
		v.p.add(field(apath, "metrics"), "at most %d metrics, not %d", limits.MaxAnalysisMetrics, n)
	}
	v.analysisSamples(apath, a)
	seen := map[string]int{}
	for i, m := range a.Metrics {
		mpath := index(field(apath, "metrics"), i)
		v.analysisMetric(mpath, m)
		if j, dup := seen[m.Label()]; dup {
			v.p.add(mpath, "the same metric as metrics[%d] (%s)", j, m.Label())
		}
		seen[m.Label()] = i
	}
}

// analysisWindow checks an analysis's period, window and thresholds.
func (v *validator) analysisWindow(apath string, a *Analysis) {
	switch p := a.PeriodSeconds; {
	case p < 60 || p%60 != 0 || p > limits.MaxAnalysisWindow:
		v.p.add(field(apath, "period_seconds"), "must be a whole number of minutes, 60 to %d seconds, not %d", limits.MaxAnalysisWindow, p)
	case a.WindowSeconds < p || a.WindowSeconds > limits.MaxAnalysisWindow || a.WindowSeconds%p != 0:
		v.p.add(field(apath, "window_seconds"), "must be whole periods of period_seconds (%d), up to %d seconds, not %d", p, limits.MaxAnalysisWindow, a.WindowSeconds)
	}
	for _, s := range []struct {
		key   string
		score float64
	}{{"pass_score", *a.PassScore}, {"marginal_score", *a.MarginalScore}} {
		if math.IsNaN(s.score) || s.score < 0 || s.score > 100 {
			v.p.add(field(apath, s.key), "must be a score from 0 to 100, not %v", s.score)
		}
	}
	if *a.MarginalScore > *a.PassScore {
		v.p.add(field(apath, "marginal_score"), "must be at most pass_score (%v), not %v", *a.PassScore, *a.MarginalScore)
	}
}

// analysisSamples checks that the window holds enough periods for each
// metric's test to ever find a difference (analysis.MinSamples): with
// fewer, every judgement would be no data.
func (v *validator) analysisSamples(apath string, a *Analysis) {
	if a.PeriodSeconds < 60 || a.WindowSeconds%a.PeriodSeconds != 0 {
		return // analysisWindow said what is wrong
	}
	need := 0
	for _, m := range a.Metrics {
		need = max(need, analysis.MinSamples(analysis.Direction(m.Direction)))
	}
	if have := a.WindowSeconds / a.PeriodSeconds; have < need {
		v.p.add(field(apath, "window_seconds"), "must hold at least %d periods of period_seconds (%d) for a difference to be significant, not %d", need, a.PeriodSeconds, have)
	}
}

// analysisMetric checks one metric of the analysis at mpath.
func (v *validator) analysisMetric(mpath string, m AnalysisMetric) {
	if !metricNamespaceRe.MatchString(m.Namespace) {
		v.p.add(field(mpath, "namespace"), "must be a CloudWatch namespace (1 to %d letters, digits or . - _ / # : and spaces), not %q", maxMetricNameLen, m.Namespace)
	}
	if !metricNameRe.MatchString(m.Name) {
		v.p.add(field(mpath, "name"), "must be a CloudWatch metric name (1 to %d printable ASCII characters), not %q", maxMetricNameLen, m.Name)
	}
	if !slices.Contains(AnalysisStats, m.Stat) && !percentileRe.MatchString(m.Stat) {
		v.p.add(field(mpath, "stat"), "must be one of %s or a percentile like p99, not %q", strings.Join(AnalysisStats, ", "), m.Stat)
	}
	if !slices.Contains(analysis.Directions, analysis.Direction(m.Direction)) {
		v.p.add(field(mpath, "direction"), "must be higher, lower or either (which way the metric is worse), not %q", m.Direction)
	}
	if t := *m.Tolerance; math.IsNaN(t) || t < 0 || t > maxAnalysisTolerance {
		v.p.add(field(mpath, "tolerance"), "must be a fraction of the previous groups' mean from 0 to %d (0.1 is 10%%), not %v", maxAnalysisTolerance, t)
	}
}

// analysisSchema is the schema of a release's analysis (Analysis).
func analysisSchema() obj {
	score := func(desc string) obj { return obj{"type": "number", "minimum": 0, "maximum": 100, "description": desc} }
	directions := make([]string, len(analysis.Directions))
	for i, d := range analysis.Directions {
		directions[i] = string(d)
	}
	metric := schemaObject("A CloudWatch metric with the AutoScalingGroupName dimension, read for each group.", obj{
		"namespace": obj{"type": "string", "pattern": metricNamespaceRe.String(), "description": "Its namespace: AWS/EC2, CWAgent, or the application's."},
		"name":      obj{"type": "string", "pattern": metricNameRe.String(), "description": "Its name, like CPUUtilization or NetworkOut."},
		"stat": obj{"type": "string", "pattern": `^(` + strings.Join(AnalysisStats, "|") + `|` + strings.Trim(percentileRe.String(), "^$") + `)$`,
			"description": "The statistic of each period (default " + DefaultAnalysisStat + "), or a percentile like p99."},
		"direction": obj{"enum": directions, "description": "Which way the metric is worse: higher (the default), lower or either."},
		"tolerance": obj{"type": "number", "minimum": 0, "maximum": maxAnalysisTolerance,
			"description": fmt.Sprintf("How much worse the new groups' mean may be than the previous groups', a fraction of it (default %g: %g%%).", DefaultAnalysisTolerance, 100*DefaultAnalysisTolerance)},
	}, "namespace", "name")
	return schemaObject("Automated canary analysis: at each check of the health and the bake, each service's new group is compared with its previous groups on these metrics (a Mann-Whitney U test of each window's samples); a score below marginal_score rolls back like an alarm, and the release is healthy only at pass_score or more.", obj{
		"metrics": obj{"type": "array", "minItems": 1, "maxItems": limits.MaxAnalysisMetrics, "items": metric, "description": "The metrics to compare."},
		"window_seconds": obj{"type": "integer", "minimum": 60, "maximum": limits.MaxAnalysisWindow,
			"description": fmt.Sprintf("Seconds of samples each judgement compares, whole periods (default %d).", DefaultAnalysisWindow)},
		"period_seconds": obj{"type": "integer", "minimum": 60, "maximum": limits.MaxAnalysisWindow, "multipleOf": 60,
			"description": fmt.Sprintf("Seconds of one sample (default %d).", DefaultAnalysisPeriod)},
		"pass_score":     score(fmt.Sprintf("The score (0 to 100, the share of metrics that pass) at which the release passes (default %g).", DefaultAnalysisPass)),
		"marginal_score": score(fmt.Sprintf("The score below which the release is rolled back (default %g, at most pass_score).", DefaultAnalysisMarginal)),
	}, "metrics")
}
