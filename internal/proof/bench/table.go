package bench

import (
	"fmt"
	"strconv"
)

// source says where a column's figures come from.
type source string

// The sources of a column's figures.
const (
	// given: the cell's own parameters.
	given source = "given"
	// counted on the run (calls, transitions, bytes).
	counted source = "counted"
	// timed: virtual time on the simulated AWS, its instance timings and
	// call cost modelled.
	timed source = "timed on the model"
	// realTime: real time of this machine's processes.
	realTime source = "real time here"
	// priced: counts times AWS's prices.
	priced source = "counted, priced"
)

// column is one column of the cells' table: its head, what it is and
// where it comes from, and its figure for a cell.
type column struct {
	head, what string
	kind       source
	cell       func(c CellResult) string
}

// mmm is a distribution's min / median / max.
func mmm(d Dist, format string) string {
	return fmt.Sprintf(format+" / "+format+" / "+format, d.Min, d.Median, d.Max)
}

// columns are the cells' table, in order.
var columns = []column{
	{"S", "services", given, func(c CellResult) string { return strconv.Itoa(c.Services) }},
	{"N", "instances each service needs healthy", given, func(c CellResult) string { return strconv.Itoa(c.Instances) }},
	{"calls", "AWS and S3 calls of the measured release's handlers (first seed)", counted, func(c CellResult) string { return strconv.Itoa(c.APICallsTotal) }},
	{"calls/check", "calls of the costliest health check over the seeds, but for the announcement of a healthy release (once a deploy)", counted,
		func(c CellResult) string { return strconv.Itoa(c.APICallsPerCheck) }},
	{"ref calls/check", "the same for the reference model", counted, func(c CellResult) string { return strconv.Itoa(c.ReferenceAPICallsPerCheck) }},
	{"checks", "health checks per deploy (median over the seeds)", counted, func(c CellResult) string { return fmt.Sprintf("%g", c.HealthChecksBySeed.Median) }},
	{"ref checks", "the same for the reference model", counted, func(c CellResult) string { return fmt.Sprintf("%g", c.ReferenceHealthChecks.Median) }},
	{"transitions", "Step Functions state transitions (first seed)", counted, func(c CellResult) string { return strconv.Itoa(c.Transitions) }},
	{"lambdas", "Lambda invocations (first seed)", counted, func(c CellResult) string { return strconv.Itoa(c.LambdaInvocations) }},
	{"handler ms", "the handlers' run time, all invocations (first seed, with every CPU of this machine)", realTime, func(c CellResult) string { return fmt.Sprintf("%.0f", c.HandlerTimeMS) }},
	{"max on Lambda ms", "the longest invocation on the deployer's Lambda's CPU share, as handler_lambda_method says (under a CPU quota, or CPU time scaled)", realTime,
		func(c CellResult) string { return fmt.Sprintf("%.0f", c.HandlerTimeMSLambda) }},
	{"max payload B", "the largest payload between states (first seed)", counted, func(c CellResult) string { return strconv.Itoa(c.MaxPayloadBytes) }},
	{"peak heap MiB", "the most bytes one invocation allocated (first seed)", counted, func(c CellResult) string {
		return fmt.Sprintf("%.1f", float64(c.HandlerPeakHeapBytes)/(1<<20))
	}},
	{"floor s", "physical floor: the slowest needed instance's launch to healthy plus the stability window (min / median / max over the seeds)", timed,
		func(c CellResult) string { return mmm(c.FloorS, "%.1f") }},
	{"whole s", "the whole deploy: the execution's start to CleanUpSuccess (min / median / max)", timed, func(c CellResult) string { return mmm(c.WholeS, "%.1f") }},
	{"over floor s", "whole minus floor: all the deploy adds, its steps before the instances launch included (min / median / max)", timed,
		func(c CellResult) string { return mmm(c.OverFloorS, "%.1f") }},
	{"latency s", "added latency: from the last needed instance healthy to CleanUpSuccess, beyond the stability window (min / median / max)", timed,
		func(c CellResult) string { return mmm(c.AddedLatencyS, "%.2f") }},
	{"latency p95 s", "its 95th percentile over the seeds", timed, func(c CellResult) string { return fmt.Sprintf("%.2f", c.AddedLatencyS.P95) }},
	{"ref latency s", "the reference model's added latency (min / median / max)", timed, func(c CellResult) string { return mmm(c.ReferenceAddedLatencyS, "%.2f") }},
	{"ref/ferry", "reference over ferry median added latency", timed, func(c CellResult) string {
		if c.LatencyRatio == nil {
			return "-"
		}
		return fmt.Sprintf("%.1fx", *c.LatencyRatio)
	}},
	{"cost $", "dollars per deploy on AWS (median over the seeds)", priced, func(c CellResult) string { return fmt.Sprintf("%.5f", c.CostUSD.Median) }},
	{"ref cost $", "the same for the reference model", priced, func(c CellResult) string { return fmt.Sprintf("%.5f", c.ReferenceCostUSD.Median) }},
}

// rows are the cells' table, a header first.
func (r *Report) rows() [][]string {
	head := make([]string, len(columns))
	for i, col := range columns {
		head[i] = col.head
	}
	rows := [][]string{head}
	for _, c := range r.Cells {
		row := make([]string, len(columns))
		for i, col := range columns {
			row[i] = col.cell(c)
		}
		rows = append(rows, row)
	}
	return rows
}
