package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/health/analysis"
)

// analysisLines are a canary analysis as follow prints it: "canary
// analysis of" its head (analysisHead), then each metric's verdict,
// p-value and samples (metricLines).
func analysisLines(a *execution.Analysis) []string {
	when := "canary analysis of "
	if a.Bake {
		when = "canary analysis (bake) of "
	}
	return append([]string{when + analysisHead(a)}, metricLines(a)...)
}

// analysisHead is the service judged worst, with its score and class
// (and the others' scores).
func analysisHead(a *execution.Analysis) string {
	head := fmt.Sprintf("%s: %s", a.Service, a.Report.Class)
	if a.Report.Class != analysis.ClassNoData {
		head = fmt.Sprintf("%s: score %.0f, %s", a.Service, a.Report.Score, a.Report.Class)
	}
	if others := otherScores(a); others != "" {
		head += " (" + others + ")"
	}
	return head
}

// metricLines are each metric's verdict, p-value, means and samples,
// indented.
func metricLines(a *execution.Analysis) []string {
	var lines []string
	for _, m := range a.Report.Metrics {
		line := fmt.Sprintf("  %s: %s, %d new and %d previous samples", oneLine(m.Name), m.Verdict, m.NewSamples, m.PreviousSamples)
		if m.Verdict != analysis.VerdictNoData {
			line = fmt.Sprintf("  %s: %s, p=%.2g, mean %.4g against %.4g, %d new and %d previous samples",
				oneLine(m.Name), m.Verdict, m.PValue, m.NewMean, m.PreviousMean, m.NewSamples, m.PreviousSamples)
		}
		lines = append(lines, line)
	}
	return lines
}

// otherScores are the scores of the services but the one shown, by name.
func otherScores(a *execution.Analysis) string {
	var out []string
	for _, svc := range slices.Sorted(maps.Keys(a.Scores)) {
		if svc != a.Service {
			out = append(out, fmt.Sprintf("%s %.0f", svc, a.Scores[svc]))
		}
	}
	return strings.Join(out, ", ")
}

// analysisKey is what makes one analysis differ from another for a
// follower: the service judged worst, its class and score.
func analysisKey(a *execution.Analysis) string {
	if a == nil {
		return ""
	}
	return fmt.Sprintf("%s %s %.0f %t", a.Service, a.Report.Class, a.Report.Score, a.Bake)
}
