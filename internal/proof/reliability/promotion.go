package reliability

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/deployer"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/local/region"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/pipeline"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/ledger"
)

// The promotion matrix: a promotion of the deploy-test release through a
// two-stage pipeline (PromotionPipeline), on a fresh
// local region each run, with one fault in the promotion's own tasks
// (Promote, Gate, StartTarget, EndStage): each S3 call they make failing
// with each call fault, and each of their invocations dying after its
// work was done. The deploys the promotion runs are the deploy matrix's
// subject, not this one's.
//
// Its invariants:
//
//   - the promotion's execution ends in Success, FailureClean or
//     FailureDirty;
//   - Success: every stage and target recorded succeeded, every target
//     runs the promotion's release;
//   - otherwise the record does not say succeeded, and no stage after the
//     first that did not succeed deployed anything;
//   - every target was deployed by at most one execution, the one named
//     by its release: a retried task never deploys a target twice;
//   - a record's stage is never ahead of what ran: a stage recorded
//     succeeded has every target's outcome Success.

// promotionID is every run's promotion id.
const promotionID = "20260301T120000Z-matrix"

// PromotionFault is one fault of the promotion matrix: the S3 call of
// index Call (counted over the promotion's own tasks) failing with Kind,
// or the invocation of index Invocation dying after its work (Kind
// LambdaDied).
type PromotionFault struct {
	Kind       Kind
	Call       int
	Invocation int
}

func (f PromotionFault) String() string {
	if f.Kind == LambdaDied {
		return fmt.Sprintf("%s at invocation %d", f.Kind, f.Invocation)
	}
	return fmt.Sprintf("%s at S3 call %d", f.Kind, f.Call)
}

// PromotionResult is how one run of the promotion matrix ended.
type PromotionResult struct {
	Fault PromotionFault
	// End is the promotion's end state; Calls and Invocations what its
	// own tasks made (the base run's are the matrix's indexes).
	End         string
	Calls       []string
	Invocations []string
	Violations  []string
}

// promotionTask reports whether task is one of a promotion's own.
func promotionTask(task string) bool {
	switch task {
	case execution.TaskPromote, execution.TaskGate, execution.TaskStartTarget, execution.TaskEndStage, execution.TaskRequestApproval:
		return true
	}
	return false
}

type promotionCtxKey struct{}

// promotionFaults injects a PromotionFault and records what the
// promotion's tasks did.
type promotionFaults struct {
	fault *PromotionFault
	mu    sync.Mutex
	calls []string
	invs  []string
}

func (p *promotionFaults) intercept(ctx context.Context, req execution.Request, next region.Invoke) (json.RawMessage, error) {
	if !promotionTask(req.Task) {
		return next(ctx, req)
	}
	p.mu.Lock()
	n := len(p.invs)
	p.invs = append(p.invs, req.Task)
	p.mu.Unlock()
	out, err := next(context.WithValue(ctx, promotionCtxKey{}, req.Task), req)
	if f := p.fault; err == nil && f != nil && f.Kind == LambdaDied && f.Invocation == n {
		return nil, &lambdaDied{task: req.Task}
	}
	return out, err
}

// call records an S3 call of a promotion task and returns the fault to
// inject into it, if any.
func (p *promotionFaults) call(ctx context.Context, op string, key *string) error {
	task, _ := ctx.Value(promotionCtxKey{}).(string)
	if task == "" {
		return nil
	}
	p.mu.Lock()
	n := len(p.calls)
	p.calls = append(p.calls, task+" "+op+" "+aws.ToString(key))
	p.mu.Unlock()
	if f := p.fault; f != nil && f.Kind != LambdaDied && f.Call == n {
		return s3Error(f.Kind, op)
	}
	return nil
}

// promotionStore is the deployer's store with the promotion's faults.
type promotionStore struct {
	next deployer.Store
	p    *promotionFaults
}

var _ deployer.Store = (*promotionStore)(nil)

func (s *promotionStore) PutObject(ctx context.Context, in *s3.PutObjectInput, o ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	if err := s.p.call(ctx, "PutObject", in.Key); err != nil {
		return nil, err
	}
	return s.next.PutObject(ctx, in, o...)
}

func (s *promotionStore) GetObject(ctx context.Context, in *s3.GetObjectInput, o ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	if err := s.p.call(ctx, "GetObject", in.Key); err != nil {
		return nil, err
	}
	return s.next.GetObject(ctx, in, o...)
}

func (s *promotionStore) HeadObject(ctx context.Context, in *s3.HeadObjectInput, o ...func(*s3.Options)) (*s3.HeadObjectOutput, error) {
	if err := s.p.call(ctx, "HeadObject", in.Key); err != nil {
		return nil, err
	}
	return s.next.HeadObject(ctx, in, o...)
}

func (s *promotionStore) DeleteObject(ctx context.Context, in *s3.DeleteObjectInput, o ...func(*s3.Options)) (*s3.DeleteObjectOutput, error) {
	if err := s.p.call(ctx, "DeleteObject", in.Key); err != nil {
		return nil, err
	}
	return s.next.DeleteObject(ctx, in, o...)
}

func (s *promotionStore) ListObjectsV2(ctx context.Context, in *s3.ListObjectsV2Input, o ...func(*s3.Options)) (*s3.ListObjectsV2Output, error) {
	if err := s.p.call(ctx, "ListObjectsV2", in.Prefix); err != nil {
		return nil, err
	}
	return s.next.ListObjectsV2(ctx, in, o...)
}

// PromotionPipeline is the matrix's pipeline, in the repository:
// development, then staging after a soak.
const PromotionPipeline = "testdata/pipelines/two-stages.json"

// RunPromotion runs the matrix's promotion once, in the repository at
// root, on a fresh region of the deploy-test world, with fault injected
// (nil: the base run), and checks its invariants.
func RunPromotion(ctx context.Context, root string, fault *PromotionFault) (*PromotionResult, error) {
	world, err := sim.Load(filepath.Join(root, "testdata", "worlds", "deploy-test.json"))
	if err != nil {
		return nil, err
	}
	pipelineFile, err := os.ReadFile(filepath.Join(root, PromotionPipeline))
	if err != nil {
		return nil, err
	}
	pf := &promotionFaults{fault: fault}
	reg, err := region.New(ctx, region.Options{
		World:     world,
		Clock:     clock.NewVirtual(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)),
		Intercept: pf.intercept,
		Store:     func(next deployer.Store) deployer.Store { return &promotionStore{next: next, p: pf} },
	})
	if err != nil {
		return nil, err
	}
	defer reg.Close()
	p, err := pipeline.Decode(pipelineFile)
	if err != nil {
		return nil, err
	}
	for _, s := range p.Stages {
		for _, t := range s.Targets {
			if _, err := reg.S3().PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(reg.Bucket()),
				Key: aws.String(naming.PipelineKey(p.ProjectName, pipeline.TargetConfig(s, t))), Body: bytes.NewReader(pipelineFile)}); err != nil {
				return nil, err
			}
		}
	}
	rel, err := release.ReadFile(filepath.Join(root, "testdata", "deploy-test-release.json"))
	if err != nil {
		return nil, err
	}
	rel.ConfigName = ""
	q := &pipeline.Request{PromotionID: promotionID, CreatedAt: reg.Clock().Now().Add(-time.Minute).UTC(), CreatedBy: "matrix", Pipeline: p, Release: rel}
	x, err := reg.StartPromotion(ctx, q)
	if err != nil {
		return nil, err
	}
	waitCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := x.Wait(waitCtx); err != nil {
		return nil, fmt.Errorf("the promotion did not end: %w", err)
	}
	res := &PromotionResult{End: lastState(x), Calls: slices.Clone(pf.calls), Invocations: slices.Clone(pf.invs)}
	if fault != nil {
		res.Fault = *fault
	}
	res.Violations, err = checkPromotion(ctx, reg, p, x, res.End)
	return res, err
}

func lastState(x *asl.Execution) string {
	path := x.Path()
	if len(path) == 0 {
		return ""
	}
	return path[len(path)-1]
}

// checkPromotion checks the matrix's invariants after a run.
func checkPromotion(ctx context.Context, reg *region.Region, p *pipeline.Pipeline, x *asl.Execution, end string) ([]string, error) {
	var out []string
	if !slices.Contains([]string{execution.EndSuccess, execution.EndFailureClean, execution.EndFailureDirty}, end) {
		d := x.Describe()
		out = append(out, fmt.Sprintf("the promotion ended in %q (%s: %s), not an end state", end, d.Error, d.Cause))
	}
	out = append(out, checkWaves(reg, p)...)
	records, err := checkRecords(ctx, reg, p, end)
	return append(out, records...), err
}

// checkWaves: every target deployed by at most its own execution; no
// stage deployed after one whose deploy did not succeed.
func checkWaves(reg *region.Region, p *pipeline.Pipeline) []string {
	var out []string
	stopped := -1 // the first stage with a target not deployed or not succeeded
	for i, s := range p.Stages {
		for _, t := range s.Targets {
			config := pipeline.TargetConfig(s, t)
			runs := deploysOf(reg, config)
			switch {
			case len(runs) > 1 || (len(runs) == 1 && runs[0].Describe().Name != naming.ExecutionName(p.ProjectName, config, promotionID)):
				out = append(out, fmt.Sprintf("%s was deployed by %d executions, not by its one execution", config, len(runs)))
			case len(runs) > 0 && stopped >= 0 && stopped < i:
				out = append(out, fmt.Sprintf("%s (stage %s) was deployed after stage %s did not succeed", config, s.ConfigName, p.Stages[stopped].ConfigName))
			}
			if stopped < 0 && (len(runs) == 0 || lastState(runs[0]) != execution.EndSuccess) {
				stopped = i
			}
		}
	}
	return out
}

// deploysOf are the executions that deployed the promotion's release to
// config.
func deploysOf(reg *region.Region, config string) []*asl.Execution {
	var runs []*asl.Execution
	for _, e := range reg.Executions("") {
		if in := e.Describe().Input; strings.Contains(in, `"config_name":"`+config+`"`) && strings.Contains(in, `"release_id":"`+promotionID+`"`) {
			runs = append(runs, e)
		}
	}
	return runs
}

// checkRecords: a success has every target running the release and the
// record saying succeeded; a stage recorded succeeded runs the release on
// every target; a promotion that did not succeed is never recorded so.
func checkRecords(ctx context.Context, reg *region.Region, p *pipeline.Pipeline, end string) ([]string, error) {
	var out []string
	l := ledger.New(reg.S3(), reg.Bucket())
	first := pipeline.TargetConfig(p.Stages[0], p.Stages[0].Targets[0])
	rec, found, err := l.GetPromotion(ctx, p.ProjectName, first, promotionID)
	if err != nil {
		return nil, err
	}
	for i, s := range p.Stages {
		recorded := found && rec.Stages[i].Status == ledger.PromotionSucceeded
		for _, t := range s.Targets {
			config := pipeline.TargetConfig(s, t)
			runs, err := runsPromotion(ctx, l, p.ProjectName, config)
			switch {
			case err != nil:
				return nil, err
			case end == execution.EndSuccess && !runs:
				out = append(out, fmt.Sprintf("the promotion succeeded but %s does not run its release", config))
			case recorded && !runs:
				out = append(out, fmt.Sprintf("stage %s is recorded succeeded but %s does not run the release", s.ConfigName, config))
			}
		}
	}
	succeeded := found && rec.Status == ledger.PromotionSucceeded
	if (end == execution.EndSuccess) != succeeded {
		out = append(out, fmt.Sprintf("the promotion ended %s but its record says %q (found %v)", end, rec.Status, found))
	}
	return out, nil
}

// runsPromotion reports whether config runs the promotion's release, as
// its current record says.
func runsPromotion(ctx context.Context, l *ledger.Ledger, project, config string) (bool, error) {
	cur, ok, err := l.GetCurrent(ctx, project, config)
	return ok && cur.ReleaseID == promotionID, err
}

// PromotionSchedules are every fault of the promotion matrix, from the
// base run's calls and invocations.
func PromotionSchedules(base *PromotionResult) []PromotionFault {
	var out []PromotionFault
	for i := range base.Calls {
		for _, k := range []Kind{ServerError, Throttling, AccessDenied} {
			out = append(out, PromotionFault{Kind: k, Call: i})
		}
	}
	for i := range base.Invocations {
		out = append(out, PromotionFault{Kind: LambdaDied, Invocation: i})
	}
	return out
}

// PromotionMatrix is a run of the whole promotion matrix.
type PromotionMatrix struct {
	Base    *PromotionResult
	Results []*PromotionResult
}

// RunPromotionMatrix runs the base promotion, then every schedule of
// PromotionSchedules, in the repository at root.
func RunPromotionMatrix(ctx context.Context, root string) (*PromotionMatrix, error) {
	base, err := RunPromotion(ctx, root, nil)
	if err != nil {
		return nil, err
	}
	m := &PromotionMatrix{Base: base}
	for _, f := range PromotionSchedules(base) {
		res, err := RunPromotion(ctx, root, &f)
		if err != nil {
			return m, fmt.Errorf("%s: %w", f, err)
		}
		m.Results = append(m.Results, res)
	}
	return m, nil
}

// Violations are every violated invariant of the matrix, each with its
// fault.
func (m *PromotionMatrix) Violations() []string {
	var out []string
	for _, v := range m.Base.Violations {
		out = append(out, "base: "+v)
	}
	for _, r := range m.Results {
		for _, v := range r.Violations {
			out = append(out, r.Fault.String()+": "+v)
		}
	}
	return out
}

// Report prints each run's end by fault kind, every violation, and the
// summary line.
func (m *PromotionMatrix) Report(w io.Writer) {
	ends := map[Kind]map[string]int{}
	for _, r := range m.Results {
		if ends[r.Fault.Kind] == nil {
			ends[r.Fault.Kind] = map[string]int{}
		}
		ends[r.Fault.Kind][r.End]++
	}
	for _, k := range []Kind{ServerError, Throttling, AccessDenied, LambdaDied} {
		fmt.Fprintf(w, "  %-14s %v\n", k, ends[k])
	}
	for _, v := range m.Violations() {
		fmt.Fprintln(w, "VIOLATION", v)
	}
	fmt.Fprintf(w, "reliability: %d promotion schedules injected (%d S3-call faults, %d lost invocations), %d violations\n",
		len(m.Results), 3*len(m.Base.Calls), len(m.Base.Invocations), len(m.Violations()))
}
