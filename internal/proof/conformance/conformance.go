package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/ferryhq/ferry/internal/local/asl"
)

// Scenario is one deploy story run end to end against moto.
type Scenario struct {
	Name string
	// What the scenario shows, for the per-scenario line.
	What string
	run  func(ctx context.Context, e *env) error
}

// Result is how one scenario went.
type Result struct {
	Scenario string
	What     string
	// Err is nil when the scenario passed.
	Err     error
	Elapsed time.Duration
}

// Options configure Run.
type Options struct {
	// Root is the repository root (testdata/conformance is under it).
	Root string
	// Logger receives the deployer's logs (default: none).
	Logger *slog.Logger
	// Report, when set, is called with each result as it is known.
	Report func(Result)
}

// Run starts one moto_server, runs every scenario against it (resetting
// moto between them) and kills it. The error is ErrNoMoto when
// moto_server is not on PATH, or what kept the suite from starting; a
// failing scenario is a Result with Err set.
func Run(ctx context.Context, opts Options) ([]Result, error) {
	if opts.Logger == nil {
		opts.Logger = discard()
	}
	m, err := StartMoto(ctx)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	var results []Result
	for _, sc := range Scenarios() {
		start := time.Now()
		err := runOne(ctx, m, opts, sc)
		r := Result{Scenario: sc.Name, What: sc.What, Err: err, Elapsed: time.Since(start)}
		results = append(results, r)
		if opts.Report != nil {
			opts.Report(r)
		}
	}
	return results, nil
}

func runOne(ctx context.Context, m *Moto, opts Options, sc Scenario) error {
	e, err := newEnv(ctx, m, opts.Root, opts.Logger)
	if err != nil {
		return err
	}
	return sc.run(ctx, e)
}

// Scenarios are the suite, in order.
func Scenarios() []Scenario {
	return []Scenario{
		{Name: "first-deploy", What: "a first release deploys and succeeds", run: firstDeploy},
		{Name: "swap", What: "a second release replaces the first, old groups deleted", run: swap},
		{Name: "removed-service", What: "a service the new release drops is retired when it names it under remove, and refused when it does not", run: removedService},
		{Name: "bad-ami", What: "an unknown image is refused: FailureClean, previous serving", run: badAMI},
		{Name: "held-lock", What: "a held lock refuses the release: LockExistsError", run: heldLock},
		{Name: "halt", What: "a halt marker stops it: HaltError, FailureClean, previous serving", run: haltScenario},
		{Name: "asset", What: "an asset is published to the target's asset bucket, and collected by a later success", run: assetPublished},
		{Name: "second-account", What: "a release for another account deploys through AssumeRole", run: secondAccount},
		{Name: "destroy", What: "a destroy retires every group of the config and succeeds", run: destroyScenario},
		{Name: "drift", What: "a drift query finds nothing unchanged and min/max set by hand", run: driftScenario},
	}
}

// EndError says an execution ended otherwise than the scenario expects.
type EndError struct {
	Execution string
	Path      []string
	Status    asl.Status
	ErrorName string
	Cause     string
	Want      string
}

func (e *EndError) Error() string {
	last := ""
	if len(e.Path) > 0 {
		last = e.Path[len(e.Path)-1]
	}
	return fmt.Sprintf("execution %s ended in %s (%s, error %q, cause %s), want %s",
		e.Execution, last, e.Status, e.ErrorName, e.Cause, e.Want)
}

// expectEnd checks that x ended in state final, with error errName when
// errName is set, whose cause is the function error payload AWS's Lambda
// service reports ({"errorMessage": ..., "errorType": errName}).
func expectEnd(x *asl.Execution, final, errName string) error {
	d := x.Describe()
	path := x.Path()
	last := ""
	if len(path) > 0 {
		last = path[len(path)-1]
	}
	var payload struct {
		Type string `json:"errorType"`
	}
	if last == final && (errName == "" || d.Error == errName && json.Unmarshal([]byte(d.Cause), &payload) == nil && payload.Type == errName) {
		return nil
	}
	want := final
	if errName != "" {
		want += " with " + errName + " and its function error payload as the cause"
	}
	return &EndError{Execution: d.Name, Path: path, Status: d.Status, ErrorName: d.Error, Cause: d.Cause, Want: want}
}

// Preamble is printed before the scenarios: what runs on moto and what
// does not.
const Preamble = "conformance: ferry's deployer and state machine against moto_server over HTTP " +
	"(EC2, Auto Scaling, ELB, ELBv2, IAM, STS, S3, EventBridge); CloudWatch goes to the simulation " +
	"(the SDK's CloudWatch client speaks Smithy RPC v2 CBOR, which moto 5.2.1 does not)"

// Line is the line printed for one result.
func Line(r Result) string {
	status := "ok  "
	if r.Err != nil {
		status = "FAIL"
	}
	s := fmt.Sprintf("%s %-16s %-66s %5.1fs", status, r.Scenario, r.What, r.Elapsed.Seconds())
	if r.Err != nil {
		s += "\n     " + r.Err.Error()
	}
	return s
}

// Summary is the last line, and whether every scenario passed.
func Summary(results []Result) (string, bool) {
	passed := 0
	for _, r := range results {
		if r.Err == nil {
			passed++
		}
	}
	return fmt.Sprintf("conformance: %d scenarios on moto, %d passed", len(results), passed), passed == len(results)
}
