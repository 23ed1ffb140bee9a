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
	"strings"
	"text/tabwriter"
	"time"
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
	// APICallsPerCheck is the calls of a full health check (the costliest
	// of the release's checks: one made once instances are in service, when
	// every target group is asked); APICallsPerCheckMean averages every
	// check, the cheap ones before any instance is in service included;
	// APICallsPerCheckByOp is the full check by operation.
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
	// HandlerPeakHeapBytes bounds one invocation's heap (see
	// Measurement.HandlerPeakHeap).
	HandlerPeakHeapBytes uint64 `json:"handler_peak_heap_bytes"`
	HandlerPeakHeapTask  string `json:"handler_peak_heap_task"`

	MaxPayloadBytes     int    `json:"max_payload_bytes"`
	MaxPayloadAt        string `json:"max_payload_at"`
	ExecutionInputBytes int    `json:"execution_input_bytes"`

	// AddedLatencyS is the simulated seconds, beyond the release's
	// stability window (StableWindow), from the last needed instance
	// becoming healthy to CleanUpSuccess; LastHealthyS and CleanUpSuccessS
	// are both from the execution's start, DeployS the execution's length.
	AddedLatencyS   float64 `json:"added_latency_s"`
	LastHealthyS    float64 `json:"last_healthy_s"`
	CleanUpSuccessS float64 `json:"cleanup_success_s"`
	DeployS         float64 `json:"deploy_s"`

	// The reference model (30 s after Deploy, then every 15 s) in the same
	// cell. LatencyRatio is reference over ferry added latency (null when
	// ferry's is zero).
	ReferenceAddedLatencyS     float64  `json:"reference_added_latency_s"`
	ReferenceHealthChecks      int      `json:"reference_health_checks"`
	ReferenceAPICallsTotal     int      `json:"reference_api_calls_total"`
	ReferenceAPICallsPerCheck  int      `json:"reference_api_calls_per_check"`
	ReferenceTransitions       int      `json:"reference_transitions"`
	ReferenceLambdaInvocations int      `json:"reference_lambda_invocations"`
	ReferenceDeployS           float64  `json:"reference_deploy_s"`
	LatencyRatio               *float64 `json:"latency_ratio"`

	// WallS is the real time both models' runs of the cell took.
	WallS float64 `json:"wall_s"`
}

// NewCellResult combines ferry's and the reference model's measurements of
// one cell.
func NewCellResult(f, ref *Measurement) CellResult {
	c := CellResult{
		Services: f.Cell.Services, Instances: f.Cell.Instances,
		APICallsTotal: f.APICalls(), AWSCallsTotal: f.AWSCalls, S3CallsTotal: f.S3Calls, APICallsByOp: f.ByOp,
		HealthChecks: len(f.CheckCalls), APICallsPerCheck: f.CallsPerCheckMax(),
		APICallsPerCheckMean: round(f.CallsPerCheck(), 2), APICallsPerCheckByOp: f.FullCheckByOp,
		Transitions: f.Transitions, LambdaInvocations: f.Invocations,
		HandlerTimeMS: ms(f.HandlerTime), HandlerTimeMSByTask: map[string]float64{},
		HandlerMaxMS: ms(f.HandlerMax), HandlerMaxTask: f.HandlerMaxTask,
		HandlerPeakHeapBytes: f.HandlerPeakHeap, HandlerPeakHeapTask: f.HandlerPeakHeapTask,
		MaxPayloadBytes: f.MaxPayload, MaxPayloadAt: f.MaxPayloadAt, ExecutionInputBytes: f.ExecutionInput,
		AddedLatencyS: f.AddedLatency.Seconds(), LastHealthyS: f.LastHealthy.Seconds(),
		CleanUpSuccessS: f.CleanUpSuccess.Seconds(), DeployS: f.Duration.Seconds(),
		ReferenceAddedLatencyS: ref.AddedLatency.Seconds(), ReferenceHealthChecks: len(ref.CheckCalls),
		ReferenceAPICallsTotal: ref.APICalls(), ReferenceAPICallsPerCheck: ref.CallsPerCheckMax(),
		ReferenceTransitions: ref.Transitions, ReferenceLambdaInvocations: ref.Invocations,
		ReferenceDeployS: ref.Duration.Seconds(),
		WallS:            round((f.Wall + ref.Wall).Seconds(), 3),
	}
	for task, d := range f.HandlerTimeByTask {
		c.HandlerTimeMSByTask[task] = ms(d)
	}
	if f.AddedLatency > 0 {
		r := round(ref.AddedLatency.Seconds()/f.AddedLatency.Seconds(), 2)
		c.LatencyRatio = &r
	}
	return c
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
	MaxAddedLatencyMedian = 5 * time.Second
	MaxPayloadBytesS50    = 32 << 10
	MaxLambdaBinaryBytes  = 20_000_000
	MaxHandlerHeapBytes   = 128 << 20
	MaxHandlerTime        = time.Second
)

// Report is build/bench.json.
type Report struct {
	GoVersion string       `json:"go_version"`
	Platform  string       `json:"platform"`
	CPUs      int          `json:"cpus"`
	Cells     []CellResult `json:"cells"`
	Lambda    *Binary      `json:"lambda_binary"`
	Uploads   *Uploads     `json:"asset_uploads"`
	Targets   []Target     `json:"targets"`
}

// NewReport makes a report of the cells, the binary and the uploads (either
// may be nil: not measured) and checks the targets.
func NewReport(cells []CellResult, bin *Binary, up *Uploads) *Report {
	r := &Report{
		GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH, CPUs: runtime.NumCPU(),
		Cells: cells, Lambda: bin, Uploads: up,
	}
	r.Targets = Targets(cells, bin, up)
	return r
}

// Passed reports whether no target failed.
func (r *Report) Passed() bool {
	return !slices.ContainsFunc(r.Targets, func(t Target) bool { return t.Status == Fail })
}

// Targets checks the targets:
//   - calls_per_check_flat: for each S measured at N=1 and N=100, a full
//     health check at N=100 makes no more calls than at N=1;
//   - added_latency_median: the median over the cells of the deploy-added
//     latency is at most 5 simulated seconds;
//   - payload_s50: every payload at S=50 is at most 32 KiB;
//   - lambda_binary: the stripped arm64 Lambda is at most 20 MB;
//   - handler_memory: no invocation needs more than 128 MiB of heap;
//   - handler_time_s50_n100: every invocation at S=50, N=100 takes under
//     1 s of real time;
//   - unchanged_assets: a second deploy of unchanged assets uploads no asset
//     bytes.
func Targets(cells []CellResult, bin *Binary, up *Uploads) []Target {
	return []Target{
		flatTarget(cells), latencyTarget(cells), payloadTarget(cells),
		binaryTarget(bin), memoryTarget(cells), timeTarget(cells), assetsTarget(up),
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
	t := Target{Name: "calls_per_check_flat", Want: "per full health check, N=100 <= N=1 for each S", Status: Skip}
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

// latencyTarget is added_latency_median.
func latencyTarget(cells []CellResult) Target {
	t := Target{Name: "added_latency_median", Want: fmt.Sprintf("median <= %gs", MaxAddedLatencyMedian.Seconds()), Status: Skip}
	if len(cells) > 0 {
		var xs []float64
		for _, c := range cells {
			xs = append(xs, c.AddedLatencyS)
		}
		m := median(xs)
		t.Measured = fmt.Sprintf("median %gs (max %gs)", m, slices.Max(xs))
		t.Status = status(m <= MaxAddedLatencyMedian.Seconds())
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

// timeTarget is handler_time_s50_n100.
func timeTarget(cells []CellResult) Target {
	t := Target{Name: "handler_time_s50_n100", Want: fmt.Sprintf("every invocation < %v at S=50,N=100", MaxHandlerTime), Status: Skip}
	if c := findCell(cells, 50, 100); c != nil {
		t.Measured = fmt.Sprintf("max %gms (%s)", c.HandlerMaxMS, c.HandlerMaxTask)
		t.Status = status(c.HandlerMaxMS < float64(MaxHandlerTime/time.Millisecond))
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
	fmt.Fprintln(tw, "S\tN\tcalls\tcalls/check\tref calls/check\tchecks\tref checks\ttransitions\tlambdas\thandler ms\tmax handler ms\tmax payload B\tpeak heap MiB\tlatency s\tref latency s\tref/ferry\t")
	for _, c := range r.Cells {
		ratio := "-"
		if c.LatencyRatio != nil {
			ratio = fmt.Sprintf("%.1fx", *c.LatencyRatio)
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.0f\t%.0f\t%d\t%.1f\t%g\t%g\t%s\t\n",
			c.Services, c.Instances, c.APICallsTotal, c.APICallsPerCheck, c.ReferenceAPICallsPerCheck,
			c.HealthChecks, c.ReferenceHealthChecks, c.Transitions, c.LambdaInvocations,
			c.HandlerTimeMS, c.HandlerMaxMS, c.MaxPayloadBytes, float64(c.HandlerPeakHeapBytes)/(1<<20),
			c.AddedLatencyS, c.ReferenceAddedLatencyS, ratio)
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

// RunGrid runs every cell with both models, in order, calling progress (if
// set) after each cell.
func RunGrid(ctx context.Context, cells []Cell, progress func(CellResult)) ([]CellResult, error) {
	var out []CellResult
	for _, c := range cells {
		f, err := Run(ctx, c, Ferry)
		if err != nil {
			return nil, err
		}
		ref, err := Run(ctx, c, Reference)
		if err != nil {
			return nil, err
		}
		res := NewCellResult(f, ref)
		out = append(out, res)
		if progress != nil {
			progress(res)
		}
	}
	return out, nil
}

// Markdown writes the README's benchmark section: how it was measured, the
// table and the targets.
func (r *Report) Markdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("## Performance\n\n")
	b.WriteString("`make bench` deploys on the simulated AWS, on virtual time, through the real state machine " +
		"definition and the real deployer handlers (package `internal/bench`). Each cell has S services of N instances " +
		"(each new group launches ceil(1.1 N) instances and needs N healthy; instances are healthy 60-120 simulated " +
		"seconds after launch, spread deterministically); a previous release is deployed first, then the measured " +
		"release replaces it. The reference model runs the same definition and handlers with the design's reference " +
		"timing: a fixed 30 s wait after Deploy and a health check every 15 s.\n\n")
	b.WriteString("- **calls**: AWS and S3 calls of the measured release's handlers. **calls/check**: the calls of a full health " +
		"check (once instances are in service: one DescribeAutoScalingGroups per 50 services, one DescribeTargetHealth per " +
		"target group, the halt marker and the release from S3). Checks made before any instance is in service skip the " +
		"load balancers and cost ceil(S/50)+2, so the mean over a deploy's checks (`api_calls_per_check_mean` in " +
		"build/bench.json) depends on how early the first instance boots, not on what a check costs.\n")
	b.WriteString(fmt.Sprintf("- **latency**: deploy-added latency, simulated seconds from the moment the last needed instance became healthy "+
		"to the start of CleanUpSuccess, beyond the release's %d s stability window (every service must hold its target that "+
		"long before the previous release is retired; the simulation's times are whole seconds, so ferry's is 0-4 s with a 5 s "+
		"interval).\n", int(StableWindow/time.Second)))
	b.WriteString("- **handler ms**: the handlers' real run time in total and the longest invocation (on the simulation, " +
		"no network latency). **peak heap**: the most bytes one invocation allocated (an upper bound of its heap; it " +
		"includes what the in-process simulated AWS and S3 allocate to answer it). **max payload**: the largest state " +
		"input or output and Lambda request or result, but for the release itself entering Validate")
	maxInput := 0
	for _, c := range r.Cells {
		maxInput = max(maxInput, c.ExecutionInputBytes)
	}
	fmt.Fprintf(&b, " (the execution's input, at most %d bytes here), which Validate replaces by the small State.\n\n", maxInput)
	fmt.Fprintf(&b, "Last run: %s, %s, %d CPUs.\n\n", r.GoVersion, r.Platform, r.CPUs)
	b.WriteString("| S | N | calls | calls/check | ref calls/check | checks | ref checks | transitions | lambdas | handler ms | max handler ms | max payload B | peak heap MiB | latency s | ref latency s | ref/ferry |\n")
	b.WriteString("|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, c := range r.Cells {
		ratio := "-"
		if c.LatencyRatio != nil {
			ratio = fmt.Sprintf("%.1fx", *c.LatencyRatio)
		}
		fmt.Fprintf(&b, "| %d | %d | %d | %d | %d | %d | %d | %d | %d | %.0f | %.0f | %d | %.1f | %g | %g | %s |\n",
			c.Services, c.Instances, c.APICallsTotal, c.APICallsPerCheck, c.ReferenceAPICallsPerCheck,
			c.HealthChecks, c.ReferenceHealthChecks, c.Transitions, c.LambdaInvocations,
			c.HandlerTimeMS, c.HandlerMaxMS, c.MaxPayloadBytes, float64(c.HandlerPeakHeapBytes)/(1<<20),
			c.AddedLatencyS, c.ReferenceAddedLatencyS, ratio)
	}
	b.WriteString("\n| target | status | want | measured |\n|---|---|---|---|\n")
	for _, t := range r.Targets {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", t.Name, t.Status, t.Want, t.Measured)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
