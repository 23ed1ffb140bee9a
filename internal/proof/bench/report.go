package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/tuning"
)

// CellResult is one cell of build/bench.json: ferry's measured release and
// the reference model's, side by side. Field names are stable.
type CellResult struct {
	Services  int `json:"services"`
	Instances int `json:"instances"`

	// APICallsTotal is every AWS and S3 call of the measured release's
	// handlers; APICallsByOp the same by "service:Operation".
	APICallsTotal int            `json:"api_calls_total"`
	AWSCallsTotal int            `json:"aws_calls_total"`
	S3CallsTotal  int            `json:"s3_calls_total"`
	APICallsByOp  map[string]int `json:"api_calls_by_op"`

	// HealthChecks is how many CheckHealthy invocations the release took.
	// APICallsPerCheck is the calls of the costliest health check over
	// every seed (a check asks the load balancers of the services in
	// service and not holding their target mid-window, at most
	// tuning.ServicesAskedPerCheck below it: which ones depends on when
	// the instances boot, so one seed's costliest check is a sample of
	// it); APICallsPerCheckMean averages every check of the first seed,
	// the cheap ones before any instance is in service included;
	// APICallsPerCheckByOp is the costliest check by operation.
	HealthChecks         int            `json:"health_checks"`
	APICallsPerCheck     int            `json:"api_calls_per_check"`
	APICallsPerCheckMean float64        `json:"api_calls_per_check_mean"`
	APICallsPerCheckByOp map[string]int `json:"api_calls_per_check_by_op"`

	Transitions       int `json:"transitions"`
	LambdaInvocations int `json:"lambda_invocations"`

	// HandlerTimeMS is the handlers' total real run time; HandlerMaxMS the
	// longest single invocation, of HandlerMaxTask.
	HandlerTimeMS       float64            `json:"handler_time_ms"`
	HandlerTimeMSByTask map[string]float64 `json:"handler_time_ms_by_task"`
	HandlerMaxMS        float64            `json:"handler_max_ms"`
	HandlerMaxTask      string             `json:"handler_max_task"`
	// HandlerTimeMSLambda is the longest invocation on the deployer's
	// Lambda's CPU share, of HandlerLambdaTask, measured as
	// HandlerLambdaMethod says: its real time under a CPU quota at that
	// share (UnderQuota), or else HandlerTimeMSScaled.
	// HandlerTimeMSScaled is the longest invocation's CPU time scaled to
	// the share (Measurement.HandlerLambdaMax). Both count the simulated
	// AWS answering in the same process: upper bounds.
	HandlerTimeMSLambda float64 `json:"handler_time_ms_lambda"`
	HandlerLambdaTask   string  `json:"handler_lambda_task"`
	HandlerLambdaMethod string  `json:"handler_lambda_method"`
	HandlerTimeMSScaled float64 `json:"handler_time_ms_lambda_scaled"`
	// HandlerPeakHeapBytes bounds one invocation's heap (see
	// Measurement.HandlerPeakHeap).
	HandlerPeakHeapBytes uint64 `json:"handler_peak_heap_bytes"`
	HandlerPeakHeapTask  string `json:"handler_peak_heap_task"`

	MaxPayloadBytes     int    `json:"max_payload_bytes"`
	MaxPayloadAt        string `json:"max_payload_at"`
	ExecutionInputBytes int    `json:"execution_input_bytes"`

	// AddedLatencyS is the simulated seconds, beyond the release's
	// stability window (StableWindow), from the last needed instance
	// becoming healthy to CleanUpSuccess, over the cell's seeds;
	// LastHealthyS and CleanUpSuccessS are both from the execution's
	// start, DeployS the execution's length (the first seed's).
	AddedLatencyS Dist `json:"added_latency_s"`
	// FloorS is the deploy's physical floor over the seeds
	// (Measurement.Floor: the slowest needed instance's launch to healthy,
	// plus the stability window); OverFloorS what the deploy added to it,
	// from the execution's start to CleanUpSuccess; WholeS the execution's
	// start to CleanUpSuccess.
	FloorS          Dist    `json:"floor_s"`
	OverFloorS      Dist    `json:"over_floor_s"`
	WholeS          Dist    `json:"whole_deploy_s"`
	LastHealthyS    float64 `json:"last_healthy_s"`
	CleanUpSuccessS float64 `json:"cleanup_success_s"`
	DeployS         float64 `json:"deploy_s"`
	// HealthChecksBySeed and CostUSD are the health checks and the cost
	// on AWS (Cost, at tuning.DeployerLambdaMemoryMB) over the seeds.
	HealthChecksBySeed Dist `json:"health_checks_by_seed"`
	CostUSD            Dist `json:"cost_usd"`
	// CostUSDPreviousMemory is the cost with the Lambda's previous memory
	// size (PreviousLambdaMemoryMB): what right-sizing it saved.
	CostUSDPreviousMemory Dist `json:"cost_usd_at_previous_memory"`

	// The reference model (30 s after Deploy, then every 15 s, its calls
	// one after the other) in the same cell, over the same seeds.
	// LatencyRatio is reference over ferry median added latency (null
	// when ferry's is zero).
	ReferenceAddedLatencyS     Dist     `json:"reference_added_latency_s"`
	ReferenceHealthChecks      Dist     `json:"reference_health_checks"`
	ReferenceAPICallsTotal     int      `json:"reference_api_calls_total"`
	ReferenceAPICallsPerCheck  int      `json:"reference_api_calls_per_check"`
	ReferenceTransitions       int      `json:"reference_transitions"`
	ReferenceLambdaInvocations int      `json:"reference_lambda_invocations"`
	ReferenceDeployS           float64  `json:"reference_deploy_s"`
	ReferenceCostUSD           Dist     `json:"reference_cost_usd"`
	LatencyRatio               *float64 `json:"latency_ratio"`

	// WallS is the real time both models' runs of the cell took, every
	// seed.
	WallS float64 `json:"wall_s"`
}

// NewCellResult combines ferry's and the reference model's measurements of
// one cell, seed by seed (at least one each): the details are the first
// seed's, the distributions every seed's.
func NewCellResult(fs, refs []*Measurement, memoryMB int) CellResult {
	f, ref := fs[0], refs[0]
	c := CellResult{
		Services: f.Cell.Services, Instances: f.Cell.Instances,
		APICallsTotal: f.APICalls(), AWSCallsTotal: f.AWSCalls, S3CallsTotal: f.S3Calls, APICallsByOp: f.ByOp,
		HealthChecks: len(f.CheckCalls), APICallsPerCheck: costliest(fs).CallsPerCheckMax(),
		APICallsPerCheckMean: round(f.CallsPerCheck(), 2), APICallsPerCheckByOp: costliest(fs).FullCheckByOp,
		Transitions: f.Transitions, LambdaInvocations: f.Invocations,
		HandlerTimeMS: ms(f.HandlerTime), HandlerTimeMSByTask: map[string]float64{},
		HandlerMaxMS: ms(f.HandlerMax), HandlerMaxTask: f.HandlerMaxTask,
		HandlerTimeMSLambda: ms(f.HandlerLambdaMax), HandlerLambdaTask: f.HandlerLambdaMaxTask, HandlerLambdaMethod: ScaledMethod,
		HandlerTimeMSScaled:  ms(f.HandlerLambdaMax),
		HandlerPeakHeapBytes: f.HandlerPeakHeap, HandlerPeakHeapTask: f.HandlerPeakHeapTask,
		MaxPayloadBytes: f.MaxPayload, MaxPayloadAt: f.MaxPayloadAt, ExecutionInputBytes: f.ExecutionInput,
		AddedLatencyS: over(fs, func(m *Measurement) float64 { return round(m.AddedLatency.Seconds(), 3) }),
		FloorS:        over(fs, func(m *Measurement) float64 { return round(m.Floor.Seconds(), 3) }),
		OverFloorS:    over(fs, func(m *Measurement) float64 { return round((m.CleanUpSuccess - m.Floor).Seconds(), 3) }),
		WholeS:        over(fs, func(m *Measurement) float64 { return round(m.CleanUpSuccess.Seconds(), 3) }),
		LastHealthyS:  round(f.LastHealthy.Seconds(), 3), CleanUpSuccessS: round(f.CleanUpSuccess.Seconds(), 3),
		DeployS:                round(f.Duration.Seconds(), 3),
		HealthChecksBySeed:     over(fs, func(m *Measurement) float64 { return float64(len(m.CheckCalls)) }),
		CostUSD:                over(fs, func(m *Measurement) float64 { return round(Cost(m, memoryMB), 6) }),
		CostUSDPreviousMemory:  over(fs, func(m *Measurement) float64 { return round(Cost(m, PreviousLambdaMemoryMB), 6) }),
		ReferenceAddedLatencyS: over(refs, func(m *Measurement) float64 { return round(m.AddedLatency.Seconds(), 3) }),
		ReferenceHealthChecks:  over(refs, func(m *Measurement) float64 { return float64(len(m.CheckCalls)) }),
		ReferenceAPICallsTotal: ref.APICalls(), ReferenceAPICallsPerCheck: costliest(refs).CallsPerCheckMax(),
		ReferenceTransitions: ref.Transitions, ReferenceLambdaInvocations: ref.Invocations,
		ReferenceDeployS: round(ref.Duration.Seconds(), 3),
		ReferenceCostUSD: over(refs, func(m *Measurement) float64 { return round(Cost(m, memoryMB), 6) }),
	}
	var wall time.Duration
	for _, m := range append(slices.Clone(fs), refs...) {
		wall += m.Wall
	}
	c.WallS = round(wall.Seconds(), 3)
	for task, d := range f.HandlerTimeByTask {
		c.HandlerTimeMSByTask[task] = ms(d)
	}
	if c.AddedLatencyS.Median > 0 {
		r := round(c.ReferenceAddedLatencyS.Median/c.AddedLatencyS.Median, 2)
		c.LatencyRatio = &r
	}
	return c
}

// ScaledMethod is how HandlerTimeMSLambda is measured without a CPU
// quota.
var ScaledMethod = fmt.Sprintf("no CPU quota: the process's CPU time during the invocation divided by %.2f, the simulated AWS answering it in the same process included", LambdaCPUShare)

// UnderQuota sets the cell's time on the Lambda's CPU share to q's,
// measured under a real CPU quota.
func (c *CellResult) UnderQuota(q *Quota) {
	c.HandlerTimeMSLambda, c.HandlerLambdaTask, c.HandlerLambdaMethod = q.MaxMS, q.MaxTask, q.Method
}

// costliest is the measurement of ms (at least one) whose costliest
// health check made the most calls, the first of equals.
func costliest(ms []*Measurement) *Measurement {
	most := ms[0]
	for _, m := range ms[1:] {
		if m.CallsPerCheckMax() > most.CallsPerCheckMax() {
			most = m
		}
	}
	return most
}

// over is the distribution of a figure of ms.
func over(ms []*Measurement, figure func(*Measurement) float64) Dist {
	xs := make([]float64, len(ms))
	for i, m := range ms {
		xs[i] = figure(m)
	}
	return distOf(xs)
}

func ms(d time.Duration) float64 { return round(float64(d)/float64(time.Millisecond), 3) }

func round(x float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(x*p) / p
}

// Binary is the Lambda binary's measurement.
type Binary struct {
	Path  string `json:"path"`
	Bytes int64  `json:"bytes"`
	// Build is how it was built.
	Build string `json:"build"`
}

// Uploads is what two ferry deploys of the same release file uploaded as
// assets.
type Uploads struct {
	// Method says how the deploys ran: the ferry binary against a served
	// region, or the client's upload function in-process.
	Method string `json:"method"`
	// FirstAssetBytes and SecondAssetBytes are the PutObject body bytes on
	// the deployer bucket's asset keys of the first and second deploy.
	FirstAssetBytes  int64 `json:"first_deploy_asset_bytes"`
	SecondAssetBytes int64 `json:"second_deploy_asset_bytes"`
}

// Status is a target's outcome.
type Status string

// Target outcomes.
const (
	Pass Status = "PASS"
	Fail Status = "FAIL"
	// Skip: the run did not measure what the target needs (a partial
	// grid, no binary).
	Skip Status = "SKIP"
)

// Target is one of the targets, checked on a report.
type Target struct {
	Name     string `json:"name"`
	Want     string `json:"want"`
	Measured string `json:"measured"`
	Status   Status `json:"status"`
}

// Limits of the targets.
const (
	MaxAddedLatencyMedian = 3 * time.Second
	MaxAddedLatencyP95    = 6 * time.Second
	MaxHistoryEvents48h   = 20_000
	MaxLongAddedLatency   = 15 * time.Second
	MaxPayloadBytesS50    = 32 << 10
	MaxLambdaBinaryBytes  = 20_000_000
	MaxHandlerHeapBytes   = 128 << 20
	MaxHandlerTime        = time.Second
)

// Report is build/bench.json.
type Report struct {
	GoVersion string `json:"go_version"`
	Platform  string `json:"platform"`
	CPUs      int    `json:"cpus"`
	// Seeds and CallCostMS are how the cells ran (GridOptions).
	Seeds      int     `json:"seeds"`
	CallCostMS float64 `json:"call_cost_ms"`
	// Throttling is the request rates every run's simulated AWS enforces
	// (sim.ThrottleModel: the token buckets AWS documents, each cited in
	// package sim), in every cell as in multi_project.
	Throttling string       `json:"throttling"`
	Cells      []CellResult `json:"cells"`
	// AddedLatencyS is the added latency at S=50, N=100 (nil: not
	// measured), FloorS, WholeS and OverFloorS that cell's whole deploy
	// against its physical floor; CostUSDByCell and
	// ReferenceCostUSDByCell the median cost of a deploy in each cell,
	// keyed "SxN".
	AddedLatencyS          *Dist              `json:"added_latency_s,omitempty"`
	FloorS                 *Dist              `json:"floor_s,omitempty"`
	WholeS                 *Dist              `json:"whole_deploy_s,omitempty"`
	OverFloorS             *Dist              `json:"over_floor_s,omitempty"`
	CostUSDByCell          map[string]float64 `json:"cost_usd_by_cell,omitempty"`
	ReferenceCostUSDByCell map[string]float64 `json:"reference_cost_usd_by_cell,omitempty"`
	// LambdaMemoryMB is the memory the cost is at; PricesAt the prices'
	// date.
	LambdaMemoryMB int    `json:"lambda_memory_mb"`
	PricesAt       string `json:"prices_at"`
	// HistoryEvents48h and LongTimeout are RunLong's (nil: not run).
	HistoryEvents48h *int  `json:"history_events_48h,omitempty"`
	LongTimeout      *Long `json:"long_timeout,omitempty"`
	// MultiProject is RunMulti's (nil: not run).
	MultiProject *Multi `json:"multi_project,omitempty"`
	// FollowBytesPerPoll is the client's follow cost (nil: not given).
	FollowBytesPerPoll *Follow `json:"follow_bytes_per_poll,omitempty"`
	// FollowBytesPerPollS50 is the follow cost of a deploy of 50 services
	// (the Follow's S50; nil: not given).
	FollowBytesPerPollS50 *Follow  `json:"follow_bytes_per_poll_s50,omitempty"`
	Lambda                *Binary  `json:"lambda_binary"`
	Uploads               *Uploads `json:"asset_uploads"`
	Targets               []Target `json:"targets"`
}

// NewReport makes a report of the cells, the long timeout's runs, the
// binary and the uploads (each but the cells may be nil: not measured)
// and checks the targets.
func NewReport(cells []CellResult, opts GridOptions, long *Long, multi *Multi, follow *Follow, bin *Binary, up *Uploads) *Report {
	opts = opts.withDefaults()
	r := &Report{
		GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH, CPUs: runtime.NumCPU(),
		Seeds: opts.Seeds, CallCostMS: ms(Options{CallCost: opts.CallCost}.withDefaults().CallCost), Throttling: sim.ThrottleModel,
		Cells: cells, LongTimeout: long, MultiProject: multi, FollowBytesPerPoll: follow, Lambda: bin, Uploads: up,
		LambdaMemoryMB: tuning.DeployerLambdaMemoryMB, PricesAt: PricesAt,
	}
	if c := findCell(cells, 50, 100); c != nil {
		r.AddedLatencyS, r.FloorS, r.WholeS, r.OverFloorS = &c.AddedLatencyS, &c.FloorS, &c.WholeS, &c.OverFloorS
	}
	for _, c := range cells {
		if r.CostUSDByCell == nil {
			r.CostUSDByCell, r.ReferenceCostUSDByCell = map[string]float64{}, map[string]float64{}
		}
		key := fmt.Sprintf("%dx%d", c.Services, c.Instances)
		r.CostUSDByCell[key], r.ReferenceCostUSDByCell[key] = c.CostUSD.Median, c.ReferenceCostUSD.Median
	}
	if follow != nil {
		r.FollowBytesPerPollS50 = follow.S50
	}
	if long != nil {
		r.HistoryEvents48h = &long.HistoryEvents
	}
	r.Targets = Targets(cells, long, multi, follow, bin, up)
	return r
}

// Passed reports whether no target failed.
func (r *Report) Passed() bool {
	return !slices.ContainsFunc(r.Targets, func(t Target) bool { return t.Status == Fail })
}

// Targets checks the targets:
//   - calls_per_check_flat: for each S measured at N=1 and N=100, the
//     costliest health check over the seeds at N=100 makes no more calls
//     than at N=1;
//   - added_latency_s50_n100: over the seeds at S=50, N=100, the
//     deploy-added latency's median is at most 3 s and its 95th
//     percentile at most 6 s;
//   - over_floor_s50_n100: over the same seeds, the whole deploy
//     (start to CleanUpSuccess) against its physical floor: what it adds
//     has a median of at most 3 s and a 95th percentile of at most 6 s;
//   - history_events_48h: a release never healthy records at most 20,000
//     history events over a 48-hour timeout;
//   - long_timeout_latency: with a 48-hour timeout, a release healthy
//     within the first hour waits at most 15 s more (every seed);
//   - multi_project: K deploys at once in one account (RunMulti) all
//     succeed, no throttled call reaches a task's retry, at most 8
//     DescribeTargetHealth and 8 DescribeAutoScalingGroups a second on
//     average and never more than 40 of either in a second;
//   - follow_bytes_per_poll: a follower reads at most 10 KB a poll and
//     0.2 times a second while a deploy waits, so 100 fit in the
//     account's GetExecutionHistory budget (Follow);
//   - follow_bytes_per_poll_s50: so does a follower of a deploy of 50
//     services (Follow.S50);
//   - cost_by_cell: in every cell, the median cost of a deploy is no
//     higher than the reference model's;
//   - payload_s50: every payload at S=50 is at most 32 KiB;
//   - lambda_binary: the stripped arm64 Lambda is at most 20 MB;
//   - handler_memory: no invocation needs more than 128 MiB of heap;
//   - handler_time_s50_n100: every invocation at S=50, N=100 takes under
//     1 s of real time;
//   - unchanged_assets: a second deploy of unchanged assets uploads no asset
//     bytes.
func Targets(cells []CellResult, long *Long, multi *Multi, follow *Follow, bin *Binary, up *Uploads) []Target {
	return []Target{
		flatTarget(cells), latencyTarget(cells), overFloorTarget(cells), historyTarget(long), longLatencyTarget(long), multiTarget(multi), followTarget(follow), followS50Target(follow),
		costTarget(cells),
		payloadTarget(cells), binaryTarget(bin), memoryTarget(cells), timeTarget(cells), assetsTarget(up),
	}
}

// findCell returns the cell of S=s, N=n, or nil.
func findCell(cells []CellResult, s, n int) *CellResult {
	for i := range cells {
		if cells[i].Services == s && cells[i].Instances == n {
			return &cells[i]
		}
	}
	return nil
}

// flatTarget is calls_per_check_flat.
func flatTarget(cells []CellResult) Target {
	t := Target{Name: "calls_per_check_flat", Want: "costliest health check over the seeds, N=100 <= N=1 for each S", Status: Skip}
	var parts []string
	for _, s := range servicesOf(cells) {
		one, hundred := findCell(cells, s, 1), findCell(cells, s, 100)
		if one == nil || hundred == nil {
			continue
		}
		parts = append(parts, fmt.Sprintf("S=%d: %d vs %d", s, hundred.APICallsPerCheck, one.APICallsPerCheck))
		if t.Status != Fail {
			t.Status = Pass
		}
		if hundred.APICallsPerCheck > one.APICallsPerCheck {
			t.Status = Fail
		}
	}
	t.Measured = strings.Join(parts, "; ")
	return t
}

// latencyTarget is added_latency_s50_n100.
func latencyTarget(cells []CellResult) Target {
	t := Target{Name: "added_latency_s50_n100", Status: Skip,
		Want: fmt.Sprintf("median <= %gs, p95 <= %gs at S=50,N=100", MaxAddedLatencyMedian.Seconds(), MaxAddedLatencyP95.Seconds())}
	if c := findCell(cells, 50, 100); c != nil {
		d := c.AddedLatencyS
		t.Measured = fmt.Sprintf("min %gs, median %gs, p95 %gs, max %gs over %d seeds (reference: median %gs)", d.Min, d.Median, d.P95, d.Max, d.Seeds, c.ReferenceAddedLatencyS.Median)
		t.Status = status(d.Median <= MaxAddedLatencyMedian.Seconds() && d.P95 <= MaxAddedLatencyP95.Seconds())
	}
	return t
}

// overFloorTarget is over_floor_s50_n100.
func overFloorTarget(cells []CellResult) Target {
	t := Target{Name: "over_floor_s50_n100", Status: Skip,
		Want: fmt.Sprintf("whole deploy minus its physical floor: median <= %gs, p95 <= %gs at S=50,N=100", MaxAddedLatencyMedian.Seconds(), MaxAddedLatencyP95.Seconds())}
	if c := findCell(cells, 50, 100); c != nil {
		d := c.OverFloorS
		t.Measured = fmt.Sprintf("min %gs, median %gs, p95 %gs, max %gs over %d seeds (whole deploy median %gs, floor median %gs)",
			d.Min, d.Median, d.P95, d.Max, d.Seeds, c.WholeS.Median, c.FloorS.Median)
		t.Status = status(d.Median <= MaxAddedLatencyMedian.Seconds() && d.P95 <= MaxAddedLatencyP95.Seconds())
	}
	return t
}

// historyTarget is history_events_48h.
func historyTarget(long *Long) Target {
	t := Target{Name: "history_events_48h", Want: fmt.Sprintf("<= %d events over a 48 h timeout", MaxHistoryEvents48h), Status: Skip}
	if long != nil {
		t.Measured = fmt.Sprintf("%d events", long.HistoryEvents)
		t.Status = status(long.HistoryEvents <= MaxHistoryEvents48h)
	}
	return t
}

// longLatencyTarget is long_timeout_latency.
func longLatencyTarget(long *Long) Target {
	t := Target{Name: "long_timeout_latency", Want: fmt.Sprintf("<= %gs added when healthy within the first hour of a 48 h timeout", MaxLongAddedLatency.Seconds()), Status: Skip}
	if long != nil {
		d := long.AddedLatencyS
		t.Measured = fmt.Sprintf("max %gs, median %gs over %d seeds", d.Max, d.Median, d.Seeds)
		t.Status = status(d.Max <= MaxLongAddedLatency.Seconds())
	}
	return t
}

// Limits of multi_project.
const (
	MaxDescribesPerSecond     = 8.0
	MaxBucketCallsInOneSecond = 40
)

// multiTarget is multi_project.
func multiTarget(m *Multi) Target {
	t := Target{Name: "multi_project", Status: Skip,
		Want: fmt.Sprintf("K deploys at once: all succeed, none throttled to a task's retry, <= %g DescribeTargetHealth and DescribeAutoScalingGroups/s, <= %d calls to one request bucket in any second",
			MaxDescribesPerSecond, MaxBucketCallsInOneSecond)}
	if m != nil {
		t.Measured = fmt.Sprintf("K=%d S=%d: %d succeeded (%d of the releases they replace), %d tasks throttled to their retry (%d calls throttled past the SDK's retries waited out by the loops, %d attempts retried by the SDK), %.2f DescribeTargetHealth/s, %.2f DescribeAutoScalingGroups/s, at most %d calls in a second (%s), over %.0f s",
			m.Deploys, m.Services, m.Succeeded, m.PreviousSucceeded, m.ThrottledToRetry, m.ThrottledCalls, m.ThrottledRetried, m.DescribeTargetHealthPerS, m.DescribeASGPerS, m.MaxCallsInASecond, m.BusiestBucket, m.Seconds)
		if len(m.Runs) > 1 {
			var busiest []string
			for _, r := range m.Runs {
				busiest = append(busiest, strconv.Itoa(r.MaxCallsInASecond))
			}
			t.Measured += fmt.Sprintf("; the worst of %d runs (busiest seconds %s)", len(m.Runs), strings.Join(busiest, ", "))
		}
		// Every run must pass on its own: the worst run is one order of
		// the criteria, and a run worse by one of them may hide another's
		// failure of the next.
		t.Status = status(!slices.ContainsFunc(m.every(), func(r MultiRun) bool {
			return r.Succeeded != m.Deploys || r.ThrottledToRetry != 0 || r.DescribesPerS > MaxDescribesPerSecond || r.MaxCallsInASecond > MaxBucketCallsInOneSecond
		}))
	}
	return t
}

// costTarget is cost_by_cell.
func costTarget(cells []CellResult) Target {
	t := Target{Name: "cost_by_cell", Want: "median cost per deploy <= the reference's in every cell", Status: Skip}
	var parts []string
	for _, c := range cells {
		parts = append(parts, fmt.Sprintf("S=%d,N=%d $%.6f vs $%.6f", c.Services, c.Instances, c.CostUSD.Median, c.ReferenceCostUSD.Median))
		if t.Status != Fail {
			t.Status = status(c.CostUSD.Median <= c.ReferenceCostUSD.Median)
		}
	}
	if len(parts) > 0 {
		t.Measured = fmt.Sprintf("%s (%d MB Lambda; prices of %s)", strings.Join(parts, "; "), tuning.DeployerLambdaMemoryMB, PricesAt)
	}
	return t
}

// payloadTarget is payload_s50.
func payloadTarget(cells []CellResult) Target {
	t := Target{Name: "payload_s50", Want: fmt.Sprintf("<= %d bytes at S=50", MaxPayloadBytesS50), Status: Skip}
	most := -1
	for _, c := range cells {
		if c.Services == 50 && c.MaxPayloadBytes > most {
			most = c.MaxPayloadBytes
		}
	}
	if most >= 0 {
		t.Measured = fmt.Sprintf("%d bytes", most)
		t.Status = status(most <= MaxPayloadBytesS50)
	}
	return t
}

// binaryTarget is lambda_binary.
func binaryTarget(bin *Binary) Target {
	t := Target{Name: "lambda_binary", Want: fmt.Sprintf("<= %d bytes (stripped, linux/arm64)", MaxLambdaBinaryBytes), Status: Skip}
	if bin != nil {
		t.Measured = fmt.Sprintf("%d bytes", bin.Bytes)
		t.Status = status(bin.Bytes <= MaxLambdaBinaryBytes)
	}
	return t
}

// memoryTarget is handler_memory.
func memoryTarget(cells []CellResult) Target {
	t := Target{Name: "handler_memory", Want: fmt.Sprintf("<= %d bytes of heap per invocation", MaxHandlerHeapBytes), Status: Skip}
	if len(cells) > 0 {
		var peak uint64
		at := ""
		for _, c := range cells {
			if c.HandlerPeakHeapBytes >= peak {
				peak, at = c.HandlerPeakHeapBytes, fmt.Sprintf("%s at S=%d,N=%d", c.HandlerPeakHeapTask, c.Services, c.Instances)
			}
		}
		t.Measured = fmt.Sprintf("%d bytes (%s)", peak, at)
		t.Status = status(peak <= MaxHandlerHeapBytes)
	}
	return t
}

// timeTarget is handler_time_s50_n100: measured under a CPU quota, or
// skipped (CPU time scaled is no measurement of it).
func timeTarget(cells []CellResult) Target {
	t := Target{Name: "handler_time_s50_n100", Status: Skip,
		Want: fmt.Sprintf("every invocation <= %v at S=50,N=100 on a %d MB Lambda's CPU share (%.2f vCPU), measured under a CPU quota", MaxHandlerTime, tuning.DeployerLambdaMemoryMB, LambdaCPUShare)}
	if c := findCell(cells, 50, 100); c != nil {
		t.Measured = fmt.Sprintf("max %gms (%s; %s; %gms of real time with every CPU here, in-process)",
			c.HandlerTimeMSLambda, c.HandlerLambdaTask, c.HandlerLambdaMethod, c.HandlerMaxMS)
		if c.HandlerLambdaMethod != ScaledMethod {
			t.Status = status(c.HandlerTimeMSLambda <= float64(MaxHandlerTime/time.Millisecond))
		}
	}
	return t
}

// assetsTarget is unchanged_assets.
func assetsTarget(up *Uploads) Target {
	t := Target{Name: "unchanged_assets", Want: "second deploy uploads 0 asset bytes", Status: Skip}
	if up != nil {
		t.Measured = fmt.Sprintf("first %d bytes, second %d bytes (%s)", up.FirstAssetBytes, up.SecondAssetBytes, up.Method)
		t.Status = status(up.SecondAssetBytes == 0 && up.FirstAssetBytes > 0)
	}
	return t
}

func status(ok bool) Status {
	if ok {
		return Pass
	}
	return Fail
}

func servicesOf(cells []CellResult) []int {
	var s []int
	for _, c := range cells {
		if !slices.Contains(s, c.Services) {
			s = append(s, c.Services)
		}
	}
	sort.Ints(s)
	return s
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// JSON writes the report as indented JSON.
func (r *Report) JSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes the cells as an aligned table, one row per cell,
// ferry's figures next to the reference model's, then the targets.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, row := range r.rows() {
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "target\tstatus\twant\tmeasured")
	for _, t := range r.Targets {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Name, t.Status, t.Want, t.Measured)
	}
	return tw.Flush()
}

// GridOptions are a grid's runs'.
type GridOptions struct {
	// Seeds is how many seeds each cell runs with (default 20); CallCost
	// the modelled time of a call (Options.CallCost).
	Seeds    int
	CallCost time.Duration
	// Workers is how many seeds after the first run at once (default the
	// CPUs). The first seed of each cell runs alone: its handler times
	// and heap are the report's.
	Workers int
}

func (o GridOptions) withDefaults() GridOptions {
	if o.Seeds <= 0 {
		o.Seeds = 20
	}
	if o.Workers <= 0 {
		o.Workers = runtime.NumCPU()
	}
	return o
}

// RunGrid runs every cell with both models over the seeds, cell after
// cell, calling progress (if set) after each cell.
func RunGrid(ctx context.Context, cells []Cell, opts GridOptions, progress func(CellResult)) ([]CellResult, error) {
	opts = opts.withDefaults()
	var out []CellResult
	for _, c := range cells {
		fs, err := runSeeds(ctx, c, Ferry, opts)
		if err != nil {
			return nil, err
		}
		refs, err := runSeeds(ctx, c, Reference, opts)
		if err != nil {
			return nil, err
		}
		res := NewCellResult(fs, refs, tuning.DeployerLambdaMemoryMB)
		out = append(out, res)
		if progress != nil {
			progress(res)
		}
	}
	return out, nil
}

// runSeeds runs cell c with model m for each seed: the first alone, the
// others opts.Workers at a time.
func runSeeds(ctx context.Context, c Cell, m Model, opts GridOptions) ([]*Measurement, error) {
	out := make([]*Measurement, opts.Seeds)
	run := func(seed int) error {
		var err error
		out[seed], err = Run(ctx, c, m, Options{CallCost: opts.CallCost, Seed: uint64(seed)})
		return err
	}
	if err := run(0); err != nil {
		return nil, err
	}
	seeds := make(chan int)
	errs := make(chan error, opts.Seeds)
	var wg sync.WaitGroup
	for range opts.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seed := range seeds {
				errs <- run(seed)
			}
		}()
	}
	for seed := 1; seed < opts.Seeds; seed++ {
		seeds <- seed
	}
	close(seeds)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Long is what a release with the longest timeout (limits.MaxTimeout)
// costs in history and latency.
type Long struct {
	// HistoryEvents are the history events of a release that is never
	// healthy, over its whole timeout to its end (FailureClean).
	HistoryEvents int `json:"history_events"`
	// AddedLatencyS is the added latency, over the seeds, of a release
	// whose instances boot in 45 to 55 minutes (healthy within the first
	// hour).
	AddedLatencyS Dist `json:"added_latency_s"`
}

// LongBoot is how long the instances of RunLong's healthy release boot,
// in seconds: they are healthy within the first hour.
var LongBoot = sim.Range{Min: 45 * 60, Max: 55 * 60}

// RunLong runs RunLong's two releases of one service of one instance with
// ferry's timing and a 48-hour timeout.
func RunLong(ctx context.Context, opts GridOptions) (*Long, error) {
	opts = opts.withDefaults()
	never, err := Run(ctx, Cell{Services: 1, Instances: 1, Timeout: limits.MaxTimeout, Behavior: sim.NeverHealthy}, Ferry, Options{CallCost: opts.CallCost})
	if err != nil {
		return nil, err
	}
	boot := LongBoot
	healthy, err := runSeeds(ctx, Cell{Services: 1, Instances: 1, Timeout: limits.MaxTimeout, Boot: &boot}, Ferry, opts)
	if err != nil {
		return nil, err
	}
	return &Long{
		HistoryEvents: never.HistoryEvents,
		AddedLatencyS: over(healthy, func(m *Measurement) float64 { return round(m.AddedLatency.Seconds(), 3) }),
	}, nil
}
