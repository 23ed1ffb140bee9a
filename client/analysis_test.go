package main

import (
	"bytes"
	"testing"
	"text/tabwriter"

	"github.com/stretchr/testify/assert"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/health/analysis"
	"github.com/ferryhq/ferry/internal/store/ledger"
)

// TestShowAnalysis: show prints the canary analysis the outcome keeps:
// the service, score and class, then each metric's verdict, p-value and
// samples.
func TestShowAnalysis(t *testing.T) {
	o := &ledger.Outcome{End: execution.EndFailureClean, Error: "HaltError", Cause: "service web: canary analysis scored 0",
		Analysis: analysisOf(analysis.ClassFail, 0,
			analysis.Result{Name: "App/Latency", Verdict: analysis.VerdictHigh, PValue: 0.0035, NewMean: 130.4, PreviousMean: 100.1, NewSamples: 3, PreviousSamples: 10},
			analysis.Result{Name: "CWAgent/mem_used_percent", Verdict: analysis.VerdictNoData, PValue: 1, PreviousSamples: 10})}
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	outcomeRows(tw, &releaseDetail{Outcome: o})
	tw.Flush()
	assert.Contains(t, buf.String(), "  analysis  web: score 0, fail (worker 100)\n")
	assert.Contains(t, buf.String(), "            App/Latency: high, p=0.0035, mean 130.4 against 100.1, 3 new and 10 previous samples\n")
	assert.Contains(t, buf.String(), "            CWAgent/mem_used_percent: nodata, 0 new and 10 previous samples\n")
}
