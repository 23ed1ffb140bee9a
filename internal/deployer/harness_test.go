package deployer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/fanout"
	"github.com/ferryhq/ferry/internal/identity"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/local/s3server"
	"github.com/ferryhq/ferry/internal/local/s3server/s3test"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/halt"
	"github.com/ferryhq/ferry/internal/store/ledger"
	"github.com/ferryhq/ferry/internal/store/lock"
	"github.com/ferryhq/ferry/internal/target"
	"github.com/ferryhq/ferry/internal/tuning"
)

const (
	account = "111111111111"
	region  = "us-east-1"
	project = "coinbase/deploy-test"
	config  = "development"
)

var (
	bucket      = naming.DeployerBucketName(account, region)
	assetBucket = naming.AssetBucketName(account, region, "")
	epoch       = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
)

// harness is one deployer over a simulated AWS (the deploy-test world) and
// an in-process S3 server, sharing a virtual clock.
type harness struct {
	t     testing.TB
	clk   *clock.Virtual
	world *sim.World
	s3    *s3.Client
	// store is the deployer's S3 client: it refuses what a test denies.
	store *s3test.Denying
	// published is the target's asset bucket client, acting as its
	// publish role: it refuses what a test denies.
	published *s3test.Denying
	d         *Deployer
	ledger    *ledger.Ledger
	locks     *lock.Locks
	halts     *halt.Halts
	// executions are the state machine's executions the deployer
	// confirms each task against; start registers each one RUNNING.
	executions *fakeExecutions
	n          int
	// timed gives each task's invocation a Timeline (package fanout): its
	// calls take the time a test's OnCall spends, at their offsets, and
	// the clock passes it before the invocation returns, as a region's
	// does.
	timed bool
}

// fakeExecutions is Step Functions' DescribeExecution over executions a
// test registers. An unknown ARN is ExecutionDoesNotExist, as AWS answers
// (DescribeExecution, AWS Step Functions API Reference: Errors).
type fakeExecutions struct {
	byARN map[string]*sfn.DescribeExecutionOutput
	// started are the executions StartExecution started, in order; now
	// is their start time.
	started []string
	now     func() time.Time
}

var _ Executions = (*fakeExecutions)(nil)

func (f *fakeExecutions) DescribeExecution(_ context.Context, in *sfn.DescribeExecutionInput, _ ...func(*sfn.Options)) (*sfn.DescribeExecutionOutput, error) {
	out, ok := f.byARN[aws.ToString(in.ExecutionArn)]
	if !ok {
		return nil, &sfntypes.ExecutionDoesNotExist{Message: aws.String("Execution Does Not Exist: '" + aws.ToString(in.ExecutionArn) + "'")}
	}
	c := *out
	return &c, nil
}

// StartExecution registers a RUNNING execution of in's name and input,
// started at the epoch of its registry's clock (the harness's heals).
func (f *fakeExecutions) StartExecution(_ context.Context, in *sfn.StartExecutionInput, _ ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error) {
	arn := asl.ExecutionARN(aws.ToString(in.StateMachineArn), aws.ToString(in.Name))
	if _, ok := f.byARN[arn]; ok {
		return nil, &sfntypes.ExecutionAlreadyExists{Message: aws.String("Execution Already Exists: '" + arn + "'")}
	}
	f.register(arn, json.RawMessage(aws.ToString(in.Input)), f.now())
	f.started = append(f.started, arn)
	return &sfn.StartExecutionOutput{ExecutionArn: aws.String(arn), StartDate: aws.Time(f.now())}, nil
}

// register records a RUNNING execution of the deployer's state machine
// with input, started at start, and returns its description for a test
// to change.
func (f *fakeExecutions) register(arn string, input json.RawMessage, start time.Time) *sfn.DescribeExecutionOutput {
	out := &sfn.DescribeExecutionOutput{
		ExecutionArn: aws.String(arn), StateMachineArn: aws.String(naming.StateMachineARN(account, region)),
		Status: sfntypes.ExecutionStatusRunning, Input: aws.String(string(input)), StartDate: aws.Time(start),
		RedriveCount: aws.Int32(0),
	}
	f.byARN[arn] = out
	return out
}

// caller is who asks for every release of the harness: the caller its
// identity proof names, as fakeIdentities verifies it, with its unique
// id callerID.
const (
	caller   = "arn:aws:iam::" + account + ":user/alice"
	callerID = "AIDAEXAMPLEALICE"
)

// fakeIdentities verifies every release's identity proof, present or
// not, as naming caller (internal/identity verifies real ones).
type fakeIdentities struct{}

var _ Identities = fakeIdentities{}

func (fakeIdentities) Verify(context.Context, *release.Identity, string) (identity.Caller, error) {
	return identity.Caller{ARN: caller, Account: account, UserID: callerID}, nil
}

func worldSpec(t testing.TB) sim.WorldSpec {
	_, file, _, _ := runtime.Caller(0)
	spec, err := sim.Load(filepath.Join(filepath.Dir(file), "..", "..", "testdata", "worlds", "deploy-test.json"))
	require.NoError(t, err)
	return spec
}

func newHarness(t testing.TB, mutate ...func(*sim.WorldSpec)) *harness {
	t.Helper()
	clk := clock.NewVirtual(epoch)
	srv, err := s3server.Start(s3server.Options{Clock: clk, Buckets: []string{assetBucket}, Versioned: []string{bucket}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	spec := worldSpec(t)
	for _, m := range mutate {
		m(&spec)
	}
	world, err := sim.New(clk, spec)
	require.NoError(t, err)
	client := srv.Client()
	published := s3test.NewDenying(t, client)
	conn := world.Connector(account, func(target.Target) cloud.AssetStore { return published }, cloud.ConnectorOptions{})
	store := s3test.NewDenying(t, client)
	executions := &fakeExecutions{byARN: map[string]*sfn.DescribeExecutionOutput{}, now: clk.Now}
	d, err := New(Config{
		Bucket:          bucket,
		DefaultTarget:   target.Target{AccountID: account, Region: region},
		Executions:      executions,
		Starts:          executions,
		StateMachineARN: naming.StateMachineARN(account, region),
		Identities:      fakeIdentities{},
		Version:         harnessVersion,
		Clock:           clk,
		Logger:          slog.New(slog.NewTextHandler(io.Discard, nil)),
	}, store, conn)
	require.NoError(t, err)
	return &harness{
		t: t, clk: clk, world: world, s3: client, store: store, published: published, d: d,
		ledger: ledger.New(client, bucket), locks: lock.New(client, bucket, clk), halts: halt.New(client, bucket),
		executions: executions,
	}
}

// harnessVersion is the deployer version the harness's deployer records.
const harnessVersion = "v0.0.0-test (commit c0ffee, go1.26)"

// baseRelease is the seed's deploy-test release, as the client uploads it.
func (h *harness) baseRelease() *release.Release {
	h.n++
	return &release.Release{
		ProjectName: project,
		ConfigName:  config,
		ReleaseID:   fmt.Sprintf("r%d-%s", h.n, h.clk.Now().Format("150405")),
		CreatedAt:   h.clk.Now().Add(-time.Minute),
		CreatedBy:   caller,
		Subnets:     []string{"test_private_subnet_a", "test_private_subnet_b"},
		AMI:         "ubuntu",
		UserData:    "#cloud-config\n# {{RELEASE_ID}} {{PROJECT_NAME}} {{CONFIG_NAME}} {{SERVICE_NAME}}\n",
		Timeout:     600,
		Services: map[string]*release.Service{
			"web": {
				InstanceType:   "t2.nano",
				SecurityGroups: []string{"ec2::coinbase/deploy-test::development"},
				ELBs:           []string{"coinbase-deploy-test-web-elb"},
				TargetGroups:   []string{"coinbase-deploy-test-web-tg"},
				Profile:        "coinbase-deploy-test",
				EBSVolumeSize:  20,
				Autoscaling: &release.Autoscaling{
					MinSize: 2, MaxSize: 4, Spread: 0.5,
					Policies: []release.Policy{
						{Type: "cpu_scale_up", Threshold: 25, ScalingAdjustment: 2},
						{Type: "cpu_scale_down", Threshold: 15, ScalingAdjustment: -1},
					},
				},
				Tags: map[string]string{"Team": "infra"},
			},
		},
	}
}

// addAsset uploads content to the deployer bucket and names it in r.
func (h *harness) addAsset(r *release.Release, name string, content []byte) {
	sum := sha256.Sum256(content)
	hexSum := hex.EncodeToString(sum[:])
	_, err := h.s3.PutObject(h.t.Context(), &s3.PutObjectInput{
		Bucket: aws.String(bucket), Key: aws.String(naming.AssetKey(r.ProjectName, r.ConfigName, hexSum)),
		Body: bytes.NewReader(content), ContentLength: aws.Int64(int64(len(content))),
	})
	require.NoError(h.t, err)
	if r.Assets == nil {
		r.Assets = map[string]*release.Asset{}
	}
	r.Assets[name] = &release.Asset{SHA256: hexSum, Size: int64(len(content))}
}

// upload stores r in the deployer bucket as the client does and returns
// the execution input.
func (h *harness) upload(r *release.Release) json.RawMessage {
	raw, err := json.Marshal(r)
	require.NoError(h.t, err)
	require.NoError(h.t, h.ledger.PutRelease(h.t.Context(), r.ProjectName, r.ConfigName, r.ReleaseID, raw))
	return raw
}

// execution is one execution of the state machine, driven by hand.
type run struct {
	h     *harness
	ctx   execution.Context
	input json.RawMessage
	state *execution.State
}

// spendEach makes every call of the deployer, to AWS and to the
// deployer bucket, spend call on its Timeline (package fanout), the
// modelled time of one call.
func (h *harness) spendEach(call time.Duration) {
	h.world.OnCall(func(ctx context.Context, _ sim.Call) { fanout.Spend(ctx, call) })
	h.store.Observe = func(ctx context.Context, _, _ string) { fanout.Spend(ctx, call) }
}

func (h *harness) start(r *release.Release) *run {
	return h.startAs(r, naming.ExecutionName(r.ProjectName, r.ConfigName, r.ReleaseID))
}

// startAs starts an execution of r named name, registered RUNNING.
func (h *harness) startAs(r *release.Release, name string) *run {
	input := h.upload(r)
	arn := asl.ExecutionARN(naming.StateMachineARN(account, region), name)
	h.executions.register(arn, input, h.clk.Now())
	return &run{h: h, input: input, ctx: execution.Context{ID: arn, Name: name, StartTime: h.clk.Now()}}
}

// invoke runs one task with the given input.
func (x *run) invoke(task string, input any) (json.RawMessage, error) {
	raw, ok := input.(json.RawMessage)
	if !ok {
		var err error
		raw, err = json.Marshal(input)
		require.NoError(x.h.t, err)
	}
	ctx := fanout.InOrder(x.h.t.Context())
	var tl *fanout.Timeline
	if x.h.timed {
		ctx, tl = fanout.WithTimeline(ctx)
	}
	out, err := x.h.d.Invoke(ctx, execution.Request{Task: task, Input: raw, Execution: x.ctx})
	if tl != nil {
		x.h.clk.Advance(tl.Elapsed()) // the invocation took its calls' time
	}
	if err != nil {
		var n failure.Named
		require.ErrorAs(x.h.t, err, &n, "every error is named")
	}
	return out, err
}

// step runs a task as the state machine does: Validate's input is the
// release, the others' the State; CheckHealthy's and NextStep's results
// go to $.health, every other result replaces the State; CleanUpSuccess and
// CleanUpFailure run again after the wait they ask for (the Retired? and
// CleanedUp? loops) until they report the retirement done, or fail.
func (x *run) step(task string) error {
	if task == execution.TaskBake {
		return x.bake()
	}
	if task == execution.TaskValidateResources || task == execution.TaskDeploy {
		return x.untilDone(task)
	}
	if task != execution.TaskCleanUpSuccess && task != execution.TaskCleanUpFailure {
		return x.once(task)
	}
	for steps := 1; ; steps++ {
		if err := x.once(task); err != nil {
			return err
		}
		if x.state.Retire == nil || x.state.Retire.Done {
			return nil
		}
		require.LessOrEqual(x.h.t, steps, limits.MaxRetireSteps, "the retirement takes more steps than an execution allows")
		x.h.clk.Advance(time.Duration(x.state.Retire.WaitSeconds) * time.Second)
	}
}

// untilDone runs task (ValidateResources or Deploy) as its loop does:
// again after the wait it asks for (AWS throttled it), until it reports
// itself done, or fails.
func (x *run) untilDone(task string) error {
	for rounds := 1; ; rounds++ {
		if err := x.once(task); err != nil {
			return err
		}
		p := x.state.Deploy
		if task == execution.TaskValidateResources {
			p = x.state.Resources
		}
		if p == nil || p.Done {
			return nil
		}
		require.LessOrEqual(x.h.t, rounds, limits.MaxThrottledSteps, "%s takes more rounds than an execution allows", task)
		x.h.clk.Advance(time.Duration(p.WaitSeconds) * time.Second)
	}
}

// bake runs Bake as the Baked? loop does: again after the wait it asks
// for, until it reports the bake done, or fails.
func (x *run) bake() error {
	for checks := 1; ; checks++ {
		if err := x.once(execution.TaskBake); err != nil {
			return err
		}
		if x.state.Bake == nil || x.state.Bake.Done {
			return nil
		}
		require.LessOrEqual(x.h.t, checks, limits.MaxBakeChecks, "the bake takes more checks than an execution allows")
		x.h.clk.Advance(time.Duration(x.state.Bake.WaitSeconds) * time.Second)
	}
}

// once runs one invocation of a task (see step).
func (x *run) once(task string) error {
	var input any = x.state
	if task == execution.TaskValidate {
		input = x.input
	}
	out, err := x.invoke(task, input)
	if err != nil {
		return err
	}
	if task == execution.TaskCheckHealthy || task == execution.TaskNextStep {
		var hl execution.Health
		require.NoError(x.h.t, json.Unmarshal(out, &hl))
		x.state.Health = &hl
		return nil
	}
	var st execution.State
	require.NoError(x.h.t, json.Unmarshal(out, &st))
	x.state = &st
	return nil
}

// stepRetrying runs a task as the state machine does with its retry
// policy: a RetryableError is retried after the backoff (on the virtual
// clock), with $$.State.RetryCount counting the retries, up to
// tuning.TaskRetryMaxAttempts; it returns the last error.
func (x *run) stepRetrying(task string) error {
	defer func() { x.ctx.RetryCount = 0 }()
	delay := time.Duration(tuning.TaskRetryIntervalSeconds) * time.Second
	for retry := 0; ; retry++ {
		x.ctx.RetryCount = retry
		err := x.step(task)
		if !failure.IsRetryable(err) || retry == tuning.TaskRetryMaxAttempts {
			return err
		}
		x.h.clk.Advance(delay)
		delay = min(time.Duration(float64(delay)*tuning.TaskRetryBackoffRate), time.Duration(tuning.TaskRetryMaxDelaySeconds)*time.Second)
	}
}

// steps runs tasks in order and stops at the first error.
func (x *run) steps(tasks ...string) error {
	for _, task := range tasks {
		if err := x.step(task); err != nil {
			return err
		}
	}
	return nil
}

var upToDeploy = []string{
	execution.TaskValidate, execution.TaskLock, execution.TaskValidateResources,
	execution.TaskPublish, execution.TaskDeploy,
}

// untilHealthy waits as the state machine does (the wait CheckHealthy
// asks for) and checks, taking a canary's next step when a check says so
// (NextStep), until healthy, an error, or limit checks.
func (x *run) untilHealthy(limit int) (checks int, err error) {
	for checks = 1; checks <= limit; checks++ {
		x.h.clk.Advance(time.Duration(x.state.Health.WaitSeconds) * time.Second)
		if err := x.step(execution.TaskCheckHealthy); err != nil {
			return checks, err
		}
		if x.state.Health.Healthy {
			return checks, nil
		}
		if x.state.Health.NextStep {
			if err := x.step(execution.TaskNextStep); err != nil {
				return checks, err
			}
		}
	}
	x.h.t.Fatalf("not healthy after %d checks: %+v", limit, x.state.Health)
	return checks, nil
}

// atSwap deploys prev to Success, lets an hour pass, and runs next up to
// its swap: healthy, with CleanUpSuccess to run. next is stamped created a
// minute before it starts, as the client does. It returns next's run.
func (h *harness) atSwap(prev, next *release.Release) *run {
	h.t.Helper()
	h.start(prev).succeed()
	h.clk.Advance(time.Hour)
	next.CreatedAt = h.clk.Now().Add(-time.Minute)
	x := h.start(next)
	require.NoError(h.t, x.steps(upToDeploy...))
	_, err := x.untilHealthy(200)
	require.NoError(h.t, err)
	return x
}

// toSwapHiding runs a release that replaces a previous one up to its
// swap (healthy, CleanUpSuccess next), its new web group made under hide
// when set (sim.Hiding, whose Prefix it sets to the group's name), and
// returns the run, the new group's name and its lookups so far.
func (h *harness) toSwapHiding(hide *sim.Hiding) (*run, string, int) {
	h.t.Helper()
	h.start(h.baseRelease()).succeed()
	h.clk.Advance(time.Hour)
	r := h.baseRelease()
	name := naming.GroupName(project, config, "web", r.ReleaseID)
	x := h.start(r)
	require.NoError(h.t, x.steps(upToDeploy[:4]...))
	if hide != nil {
		hide.Prefix = name
		require.NoError(h.t, h.world.Faults().Hide(*hide))
	}
	require.NoError(h.t, x.step(execution.TaskDeploy))
	_, err := x.untilHealthy(100)
	require.NoError(h.t, err)
	return x, name, h.world.Lookups(sim.HideGroups)[name]
}

// succeed runs a whole successful execution, with the state machine's
// retries.
func (x *run) succeed() {
	x.h.t.Helper()
	for _, task := range upToDeploy {
		require.NoError(x.h.t, x.stepRetrying(task), task)
	}
	_, err := x.untilHealthy(200)
	require.NoError(x.h.t, err)
	require.NoError(x.h.t, x.stepRetrying(execution.TaskBake))
	require.NoError(x.h.t, x.stepRetrying(execution.TaskCleanUpSuccess))
}

// fail runs the failure path after err, as the state machine's Catch and
// Retry do.
func (x *run) fail(err error) error {
	x.state.Error = &execution.Error{Error: failure.NameOf(err), Cause: failure.Cause(err)}
	if err := x.stepRetrying(execution.TaskCleanUpFailure); err != nil {
		return err
	}
	return x.stepRetrying(execution.TaskReleaseLock)
}

// snapshot is the world's picture as JSON, for comparisons.
func (h *harness) snapshot() string {
	b, err := json.Marshal(h.world.Snapshot())
	require.NoError(h.t, err)
	return string(b)
}

// groups returns the ASGs of the world's first account-region by name.
func (h *harness) groups() map[string]sim.GroupSnapshot {
	out := map[string]sim.GroupSnapshot{}
	for _, a := range h.world.Snapshot().Accounts {
		if a.Account == account && a.Region == region {
			for _, g := range a.Groups {
				out[g.Name] = g
			}
		}
	}
	return out
}

func (h *harness) account() sim.AccountSnapshot {
	for _, a := range h.world.Snapshot().Accounts {
		if a.Account == account && a.Region == region {
			return a
		}
	}
	return sim.AccountSnapshot{}
}
