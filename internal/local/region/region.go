package region

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ferryhq/ferry/internal/buildinfo"
	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/deployer"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/fanout"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/local/s3server"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/ledger"
	"github.com/ferryhq/ferry/internal/target"
	"github.com/ferryhq/ferry/statemachine/definition"
	"github.com/ferryhq/ferry/statemachine/shape"
)

// DefaultRegion is the AWS region of a region whose Options name none.
const DefaultRegion = s3server.Region

// OwnClockCreatedAtWindow is the created_at window (both its maximum age
// and its maximum skew) of the deployer of a region that makes its own
// clock (Options.Clock nil) and whose Options set none: such a clock runs
// ahead of the wall clock that clients stamp created_at with, by
// (Speed-1) times the region's uptime or by every wait of discrete-event
// time, so the deployer's production window would soon refuse every
// release.
const OwnClockCreatedAtWindow = 100 * 365 * 24 * time.Hour

// Invoke runs one task of the deployer: the deployer's own Invoke, or the
// next step of an Options.Intercept.
type Invoke func(ctx context.Context, req execution.Request) (json.RawMessage, error)

// Options configure a Region. World is required; every other zero field
// takes its default.
type Options struct {
	// World is the simulated AWS's starting contents (sim.Load or
	// sim.ParseWorld). It must have at least one account.
	World sim.WorldSpec
	// Account is the deployer's own account (default: the world's first
	// account). It must be an account of World.
	Account string
	// Region is the deployer's own region (default DefaultRegion).
	Region string

	// Clock, when set, makes the region run on discrete-event time over
	// this virtual clock (see the package documentation). Speed must then
	// be zero.
	Clock *clock.Virtual
	// Speed > 0 runs the region on scaled real time: Speed simulated
	// seconds per wall second. Zero (with no Clock) is discrete-event time
	// on the region's own virtual clock, started at the wall clock's now,
	// which follows the wall clock while no execution runs.
	Speed float64
	// WallClock is the wall clock a region that makes its own clock starts
	// at, and on discrete-event time follows while no execution runs
	// (default clock.System). Scaled time passes with the system clock
	// whatever it is. It must not be set with Clock.
	WallClock clock.Clock

	// CreatedAtMaxAge and CreatedAtMaxSkew are the deployer's created_at
	// window; zero means the deployer's defaults with Clock, and
	// OwnClockCreatedAtWindow without.
	CreatedAtMaxAge  time.Duration
	CreatedAtMaxSkew time.Duration
	// HealthCheckInterval is the deployer's first health-check interval
	// (deployer.Config.HealthCheckInterval; zero: the deployer's default).
	HealthCheckInterval time.Duration
	// ReconcileEvery schedules a reconcile pass every so long on the
	// region's clock, as the DeployerStack's schedule does in AWS (zero:
	// none). A region with its own clock starts them itself; one on a
	// test's Clock when the test calls ReconcileIfDue.
	ReconcileEvery time.Duration

	// Logger receives the region's logs (default: none). At Debug it shows
	// every state entered and every AWS and S3 call; at Info executions
	// starting and ending; at Warn what went wrong.
	Logger *slog.Logger
	// Observer, when set, is called with every history event of every
	// execution, in order, as it is recorded, from the execution's
	// goroutine: discrete-event time stands still while it runs, so a test
	// may act "during" a state (write a halt marker, add a fault). It must
	// not start or stop executions.
	Observer func(executionARN string, ev asl.Event)
	// Intercept, when set, runs every task invocation instead of the
	// deployer: it calls next to run the task (or not), and may change
	// what the state machine sees (a Lambda that dies after its work is
	// done, a retry after success).
	Intercept func(ctx context.Context, req execution.Request, next Invoke) (json.RawMessage, error)
	// Store, when set, wraps the S3 client the deployer uses for its bucket
	// (fault injection and call recording on S3).
	Store func(deployer.Store) deployer.Store
	// Help, when set, serves the reference's pages at console.HelpPath
	// (mounted with that prefix stripped), which the console's header
	// links: ferry local gives client/help's Handler. Without it the path
	// answers 404.
	Help http.Handler
	// Assets, when set, wraps the S3 client Publish uses for the target
	// environments' asset buckets (call recording on S3, as Store does
	// for the deployer bucket).
	Assets func(cloud.AssetStore) cloud.AssetStore
}

// Info are a region's coordinates: what a client needs to deploy to it.
// GET /_ferry/info serves it as JSON.
type Info struct {
	StateMachineARN string `json:"state_machine_arn"`
	FunctionARN     string `json:"function_arn"`
	// Bucket is the deployer bucket.
	Bucket string `json:"bucket"`
	// AssetBuckets are the asset buckets of every bootstrapped environment
	// of the world.
	AssetBuckets []string `json:"asset_buckets"`
	Account      string   `json:"account"`
	Region       string   `json:"region"`
	// Speed is simulated seconds per wall second; 0 for discrete-event
	// time.
	Speed float64 `json:"speed"`
	// Now is the region's time.
	Now time.Time `json:"now"`
}

// Region is a running local region. It is safe for concurrent use.
type Region struct {
	info   Info
	logger *slog.Logger
	opts   Options
	clk    clock.Clock
	waiter asl.Waiter
	sched  *scheduler // nil on scaled time
	world  *sim.World
	s3srv  *s3server.Server
	s3     *s3.Client
	// newDeployer builds the deployer as a new Lambda container would:
	// with a connector that has no credentials cached. depMu guards dep.
	newDeployer func() (*deployer.Deployer, error)
	depMu       sync.Mutex
	dep         *deployer.Deployer
	machine     *asl.Machine
	def         []byte
	created     time.Time

	ctx    context.Context
	cancel context.CancelFunc

	// reconcileMu guards nextReconcile: when the next reconcile pass is
	// due on the region's clock.
	reconcileMu   sync.Mutex
	nextReconcile time.Time

	startMu sync.Mutex // serialises StartExecution
	mu      sync.Mutex
	byName  map[string]*entry
	// endWaiters are the tasks awaiting the end of a nested execution, by
	// its name.
	endWaiters map[string][]asl.Await
	order      []*entry // by start, oldest first
	seq        int64

	callMu  sync.Mutex
	callIdx int

	closeOnce sync.Once
	closeErr  error
}

// entry is one execution of the region.
type entry struct {
	x     *asl.Execution
	input string // as given to StartExecution, for idempotency
	seq   int64
}

// New builds a region and starts nothing but its in-process S3 server (on a
// loopback port of its own, which the deployer uses). ctx bounds the
// region's life: when it is done, running executions are aborted. Close
// releases everything.
func New(ctx context.Context, opts Options) (*Region, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	r := &Region{opts: opts, logger: logger, byName: map[string]*entry{}}
	if err := r.startClock(); err != nil {
		return nil, err
	}
	r.info = newInfo(opts)
	world, err := sim.New(r.clk, opts.World)
	if err != nil {
		return nil, fmt.Errorf("region: %w", err)
	}
	r.world = world
	if err := world.AddAccessKey(localCallerARN(r.info.Account), localCallerID(r.info.Account), localAccessKey, localSecret); err != nil {
		return nil, fmt.Errorf("region: %w", err)
	}
	// The deployer bucket is versioned, as DeployerStack creates it in AWS;
	// the asset buckets are not (BootstrapStack).
	srv, err := s3server.Start(s3server.Options{Clock: r.clk, Buckets: r.info.buckets(), Versioned: []string{r.info.Bucket}})
	if err != nil {
		return nil, fmt.Errorf("region: %w", err)
	}
	r.s3srv, r.s3 = srv, srv.Client()
	if err := r.startDeployer(); err != nil {
		_ = srv.Close()
		return nil, err
	}
	r.ctx, r.cancel = context.WithCancel(context.WithoutCancel(ctx))
	go func() {
		select {
		case <-ctx.Done():
			r.cancel()
		case <-r.ctx.Done():
		}
	}()
	if opts.ReconcileEvery > 0 && opts.Clock == nil {
		go r.scheduleReconcile(r.ctx)
	}
	logger.Info("region ready", "state_machine", r.info.StateMachineARN, "bucket", r.info.Bucket,
		"account", r.info.Account, "region", r.info.Region, "speed", opts.Speed)
	return r, nil
}

// check fills in the defaults of opts (the world's first account, the
// default region) and refuses options that cannot go together.
func (opts *Options) check() error {
	if len(opts.World.Accounts) == 0 {
		return errors.New("region: the world has no account")
	}
	if opts.Account == "" {
		opts.Account = opts.World.Accounts[0].ID
	}
	if !slices.ContainsFunc(opts.World.Accounts, func(a sim.AccountSpec) bool { return a.ID == opts.Account }) {
		return fmt.Errorf("region: account %s is not an account of the world", opts.Account)
	}
	if opts.Region == "" {
		opts.Region = DefaultRegion
	}
	if opts.Speed < 0 {
		return fmt.Errorf("region: speed %v must not be negative", opts.Speed)
	}
	if !(opts.Speed <= limits.MaxLocalSpeed) { // NaN too
		return fmt.Errorf("region: speed %v must be a number from 0 to %d", opts.Speed, limits.MaxLocalSpeed)
	}
	if opts.Clock != nil && opts.Speed != 0 {
		return errors.New("region: set Clock or Speed, not both")
	}
	if opts.Clock != nil && opts.WallClock != nil {
		return errors.New("region: set Clock or WallClock, not both (a region on Clock never reads the wall clock)")
	}
	return nil
}

// startClock sets the region's clock and waiter: the caller's Clock, a
// clock scaled by Speed from the wall clock, or the region's own virtual
// clock that skips idle waits. A region on its own clock accepts releases
// created within OwnClockCreatedAtWindow unless the options say otherwise.
func (r *Region) startClock() error {
	opts := &r.opts
	wall := opts.WallClock
	if wall == nil {
		wall = clock.System{}
	}
	switch {
	case opts.Clock != nil:
		r.sched = newScheduler(opts.Clock, nil)
		r.clk, r.waiter = opts.Clock, r.sched
	case opts.Speed > 0:
		scaled, err := clock.NewScaled(wall.Now().UTC().Truncate(time.Second), opts.Speed)
		if err != nil {
			return fmt.Errorf("region: %w", err)
		}
		r.clk, r.waiter = scaled, scaled
	default:
		v := clock.NewVirtual(wall.Now().UTC().Truncate(time.Second))
		r.sched = newScheduler(v, wall)
		r.clk, r.waiter = r.sched, r.sched
	}
	if opts.Clock == nil {
		if opts.CreatedAtMaxAge == 0 {
			opts.CreatedAtMaxAge = OwnClockCreatedAtWindow
		}
		if opts.CreatedAtMaxSkew == 0 {
			opts.CreatedAtMaxSkew = OwnClockCreatedAtWindow
		}
	}
	r.created = r.clk.Now()
	return nil
}

// newInfo names the region's state machine, function and buckets: the
// deployer's, and the asset bucket of every bootstrap in the world.
func newInfo(opts Options) Info {
	account, awsRegion := opts.Account, opts.Region
	info := Info{
		StateMachineARN: naming.StateMachineARN(account, awsRegion),
		FunctionARN:     fmt.Sprintf("arn:aws:lambda:%s:%s:function:%s", awsRegion, account, naming.DeployerFunctionName),
		Bucket:          naming.DeployerBucketName(account, awsRegion),
		Account:         account,
		Region:          awsRegion,
		Speed:           opts.Speed,
	}
	for _, a := range opts.World.Accounts {
		for _, b := range a.Bootstrap {
			name := naming.AssetBucketName(a.ID, b.Region, b.Qualifier)
			if !slices.Contains(info.AssetBuckets, name) {
				info.AssetBuckets = append(info.AssetBuckets, name)
			}
		}
	}
	slices.Sort(info.AssetBuckets)
	return info
}

// buckets is every bucket of the region: the deployer's first, then the
// asset buckets.
func (info Info) buckets() []string {
	buckets := []string{info.Bucket}
	for _, b := range info.AssetBuckets {
		if !slices.Contains(buckets, b) {
			buckets = append(buckets, b)
		}
	}
	return buckets
}

// startDeployer builds the deployer the region's Lambda runs (its store
// and asset store wrapped as the options say), and parses the deploy
// state machine's definition.
func (r *Region) startDeployer() error {
	opts, logger := r.opts, r.logger
	var store deployer.Store = loggingStore{next: r.s3, logger: logger}
	if opts.Store != nil {
		store = opts.Store(store)
	}
	var assetStore cloud.AssetStore = r.s3
	if opts.Assets != nil {
		assetStore = opts.Assets(assetStore)
	}
	assets := func(target.Target) cloud.AssetStore { return assetStore }
	account, awsRegion := r.info.Account, r.info.Region
	r.newDeployer = func() (*deployer.Deployer, error) {
		connector := cloud.NewConnector(r.world.STSAs(naming.RoleARN(account, naming.DeployerRoleName(awsRegion))), r.world.Build(assets), cloud.ConnectorOptions{Clock: r.clk})
		return deployer.New(deployer.Config{
			Bucket:              r.info.Bucket,
			DefaultTarget:       target.Target{AccountID: account, Region: awsRegion},
			CreatedAtMaxAge:     opts.CreatedAtMaxAge,
			CreatedAtMaxSkew:    opts.CreatedAtMaxSkew,
			HealthCheckInterval: opts.HealthCheckInterval,
			Executions:          r.SFN(),
			Starts:              r.SFN(),
			StateMachineARN:     r.info.StateMachineARN,
			Identities:          r.verifier(),
			Version:             buildinfo.Get().String(),
			Clock:               r.clk,
			Logger:              logger.With("component", "deployer"),
		}, store, connector)
	}
	var err error
	if r.dep, err = r.newDeployer(); err != nil {
		return fmt.Errorf("region: %w", err)
	}
	r.def = definition.Render(r.info.FunctionARN)
	if r.machine, err = asl.Parse(r.def); err != nil {
		return fmt.Errorf("region: the deploy state machine's definition: %w", err)
	}
	return nil
}

// Close aborts the running executions, waits for them to end and stops the
// S3 server. Closing twice is not an error.
func (r *Region) Close() error {
	r.closeOnce.Do(func() {
		r.cancel()
		r.mu.Lock()
		running := slices.Clone(r.order)
		r.mu.Unlock()
		for _, e := range running {
			<-e.x.Done()
		}
		r.closeErr = r.s3srv.Close()
	})
	return r.closeErr
}

// Info returns the region's coordinates, with Now the region's time.
func (r *Region) Info() Info {
	info := r.info
	info.AssetBuckets = slices.Clone(info.AssetBuckets)
	info.Now = r.clk.Now().UTC()
	return info
}

// StateMachineARN is the ARN of the deploy state machine.
func (r *Region) StateMachineARN() string { return r.info.StateMachineARN }

// Bucket is the deployer bucket.
func (r *Region) Bucket() string { return r.info.Bucket }

// Clock is the region's clock: the *clock.Virtual of Options.Clock, an
// *clock.Scaled, or the region's own discrete-event clock (which follows
// Options.WallClock while no execution runs).
func (r *Region) Clock() clock.Clock { return r.clk }

// World is the simulated AWS: Snapshot, Faults, Calls, CallLog, Clients.
func (r *Region) World() *sim.World { return r.world }

// S3 is an SDK client of the region's S3 store (path-style, over its
// own loopback listener): the deployer bucket and the asset buckets.
func (r *Region) S3() *s3.Client { return r.s3 }

// Pass lets d of the region's time pass for the task that calls it (an
// Options.Intercept modelling how long the task's calls took): other
// executions run meanwhile. It returns ctx's error when ctx is done
// first.
func (r *Region) Pass(ctx context.Context, d time.Duration) error {
	return r.waiter.Wait(ctx, d)
}

// ColdStart makes the next task invocations run in a new Lambda
// container: a deployer whose connector has no role credentials cached,
// so the next task that works in a target assumes its roles again. (An
// Options.Intercept may call it before it runs the task.)
func (r *Region) ColdStart() error {
	d, err := r.newDeployer()
	if err != nil {
		return fmt.Errorf("region: cold start: %w", err)
	}
	r.depMu.Lock()
	r.dep = d
	r.depMu.Unlock()
	return nil
}

// Definition is the state machine definition the region runs (the
// generated definition with the local function ARN).
func (r *Region) Definition() []byte { return slices.Clone(r.def) }

// Hold keeps discrete-event time still until release is called (release is
// idempotent): while a test prepares something between two states, no
// execution's wait can end. On scaled time it does nothing.
func (r *Region) Hold() (release func()) {
	if r.sched == nil {
		return func() {}
	}
	r.sched.join()
	var once sync.Once
	return func() { once.Do(r.sched.leave) }
}

// Start starts an execution of the deploy state machine, as StartExecution
// does: name must be 1 to 80 characters without whitespace, brackets,
// wildcards, control or special characters (InvalidName); input must be
// JSON of at most 256 KiB (InvalidExecutionInput), empty meaning {}. A name
// is unique among the region's executions: a second Start with the name
// and the same input while the execution runs returns it (idempotent,
// existed true); otherwise it is ExecutionAlreadyExists. Errors are
// *APIError.
func (r *Region) Start(name string, input json.RawMessage) (x *asl.Execution, existed bool, err error) {
	if err := validateName(name); err != nil {
		return nil, false, err
	}
	in := string(input)
	if len(input) == 0 {
		in = "{}"
	}
	if err := validateInput(in); err != nil {
		return nil, false, err
	}
	r.startMu.Lock()
	defer r.startMu.Unlock()
	if x, err := r.existing(name, in); x != nil || err != nil {
		return x, x != nil, err
	}
	if err := r.ctx.Err(); err != nil {
		return nil, false, apiErrorf(CodeInternal, "the region is shutting down")
	}
	x, err = r.run(name, in)
	if err != nil {
		return nil, false, err
	}
	return x, false, nil
}

// existing returns the running execution of name started with the same
// input (StartExecution is idempotent for it), an ExecutionAlreadyExists
// error for any other execution of name, or neither when name is new.
func (r *Region) existing(name, in string) (*asl.Execution, error) {
	r.mu.Lock()
	e, dup := r.byName[name]
	r.mu.Unlock()
	if !dup {
		return nil, nil
	}
	if e.input == in && e.x.Describe().Status == asl.StatusRunning {
		return e.x, nil
	}
	return nil, apiErrorf(CodeExecutionAlreadyExists, "Execution Already Exists: '%s'", e.x.ARN())
}

// run starts execution name with input in on the interpreter, registers
// it, and logs its end. No task runs before it is registered: a task's
// first call describes its own execution (deployer.Executions), and on
// AWS StartExecution has returned by then.
func (r *Region) run(name, in string) (*asl.Execution, error) {
	arn := asl.ExecutionARN(r.info.StateMachineARN, name)
	if r.sched != nil {
		r.sched.join()
	}
	registered := make(chan struct{})
	invoke := func(ctx context.Context, req execution.Request) (json.RawMessage, error) {
		select {
		case <-registered:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return r.invoke(ctx, req)
	}
	x, err := asl.Start(r.ctx, r.machine, asl.RunOptions{
		Input:           json.RawMessage(in),
		Name:            name,
		StateMachineARN: r.info.StateMachineARN,
		ExecutionARN:    arn,
		RoleARN:         r.roleARN(),
		Clock:           r.clk,
		Waiter:          r.waiter,
		Invoker:         r.tasks(TaskInvoker(r.info.FunctionARN, invoke)),
		Observer:        func(ev asl.Event) { r.observe(arn, ev) },
		// A promotion held at a gate waits for people and the world
		// outside: on the region's own clock, as long as they take.
		OutsideWaits: []string{shape.StateWaitForGate},
	})
	if err != nil {
		if r.sched != nil {
			r.sched.leave()
		}
		return nil, apiErrorf(CodeInvalidExecutionInput, "%v", err)
	}
	r.mu.Lock()
	r.seq++
	e := &entry{x: x, input: in, seq: r.seq}
	r.byName[name] = e
	r.order = append(r.order, e)
	r.mu.Unlock()
	close(registered)
	r.logger.Info("execution started", "execution", arn)
	go r.logEnd(x)
	return x, nil
}

// logEnd waits for x to end, logs how, and leaves the scheduler.
func (r *Region) logEnd(x *asl.Execution) {
	<-x.Done()
	d := x.Describe()
	level := slog.LevelInfo
	if d.Status != asl.StatusSucceeded {
		level = slog.LevelWarn
	}
	r.logger.Log(context.Background(), level, "execution ended", "execution", x.ARN(),
		"status", string(d.Status), "error", d.Error, "cause", failure.Message(d.Cause))
	r.wakeEnd(d.Name)
	if r.sched != nil {
		r.sched.leave()
	}
}

// StartRelease stores raw (a release as the client uploads it, with
// release_id and created_at set, and an identity proof unless it has one
// already, made as the client makes it) at its naming.ReleaseKey in the
// deployer bucket and starts an execution named by its release id with raw
// as input. Assets the release names must already be in the bucket. It is
// for in-process callers (tests, benchmarks); the client uploads and starts
// through the APIs.
func (r *Region) StartRelease(ctx context.Context, raw json.RawMessage) (*asl.Execution, error) {
	rel, err := release.Decode(raw)
	if err != nil {
		return nil, fmt.Errorf("region: start release: %w", err)
	}
	if err := release.ValidateReleaseID(rel.ReleaseID); err != nil {
		return nil, fmt.Errorf("region: start release: release_id: %w", err)
	}
	if rel.Identity == nil {
		if raw, err = r.prove(ctx, rel); err != nil {
			return nil, fmt.Errorf("region: start release: %w", err)
		}
	}
	return r.startProved(ctx, rel, raw)
}

// Prove returns raw (a release as the client uploads it) with an identity
// proof, pre-signed in process as the local caller, as the client adds
// one: for in-process callers that start releases through the APIs.
func (r *Region) Prove(ctx context.Context, raw json.RawMessage) (json.RawMessage, error) {
	rel, err := release.Decode(raw)
	if err != nil {
		return nil, fmt.Errorf("region: prove: %w", err)
	}
	return r.prove(ctx, rel)
}

// startProved stores raw, the encoding of rel, and starts it (see
// StartRelease).
func (r *Region) startProved(ctx context.Context, rel *release.Release, raw json.RawMessage) (*asl.Execution, error) {
	if err := ledger.New(r.s3, r.info.Bucket).PutRelease(ctx, rel.ProjectName, rel.ConfigName, rel.ReleaseID, raw); err != nil {
		return nil, fmt.Errorf("region: start release: %w", err)
	}
	x, _, err := r.Start(rel.ReleaseID, raw)
	return x, err
}

// prove adds an identity proof to rel, pre-signed in process as the local
// caller, and returns its canonical encoding.
func (r *Region) prove(ctx context.Context, rel *release.Release) (json.RawMessage, error) {
	sum, err := release.IdentityHash(rel)
	if err != nil {
		return nil, err
	}
	if rel.Identity, err = r.Signer().Prove(ctx, sum); err != nil {
		return nil, err
	}
	return release.Canonical(rel)
}

// Execution returns the execution with the given ARN: InvalidArn when arn
// is not an execution ARN, ExecutionDoesNotExist when the region has no
// such execution.
func (r *Region) Execution(arn string) (*asl.Execution, error) {
	sm, name, ok := splitExecutionARN(arn)
	if !ok {
		return nil, apiErrorf(CodeInvalidArn, "Invalid Arn: '%s'", arn)
	}
	r.mu.Lock()
	e, found := r.byName[name]
	r.mu.Unlock()
	if !found || sm != r.info.StateMachineARN {
		return nil, apiErrorf(CodeExecutionDoesNotExist, "Execution Does Not Exist: '%s'", arn)
	}
	return e.x, nil
}

// Executions returns the region's executions with the given status (every
// one when status is empty), newest first.
func (r *Region) Executions(status asl.Status) []*asl.Execution {
	r.mu.Lock()
	all := slices.Clone(r.order)
	r.mu.Unlock()
	var out []*asl.Execution
	for i := len(all) - 1; i >= 0; i-- {
		if status == "" || all[i].x.Describe().Status == status {
			out = append(out, all[i].x)
		}
	}
	return out
}

// Wait waits for the execution arn to end (or ctx to be done) and returns
// its description.
func (r *Region) Wait(ctx context.Context, arn string) (asl.Description, error) {
	x, err := r.Execution(arn)
	if err != nil {
		return asl.Description{}, err
	}
	if err := x.Wait(ctx); err != nil {
		return asl.Description{}, err
	}
	return x.Describe(), nil
}

// Stop stops the execution arn as StopExecution does: a running execution
// becomes ABORTED with errName and cause; one that has already ended is
// left as it is. It returns the execution's description.
func (r *Region) Stop(arn, errName, cause string) (asl.Description, error) {
	x, err := r.Execution(arn)
	if err != nil {
		return asl.Description{}, err
	}
	if x.Stop(errName, cause) {
		r.logger.Info("execution stopped", "execution", arn, "error", errName)
	}
	return x.Describe(), nil
}

// TaskInvoker returns the asl.Invoker of the deploy state machine's Task
// states as Step Functions and Lambda run them: a task whose resource is
// not functionARN fails with Lambda.ResourceNotFoundException; otherwise
// the Lambda request (an execution.Request) is decoded and run in-process
// by run. An error of run is a function error, reported as AWS's Lambda
// service reports one (see functionError), unless it is already an error
// of the Lambda service itself (it names itself, with a name outside
// ferry's registry: Lambda.Unknown for an invocation that died, say). The
// region runs its executions through it; package conformance runs the
// real deployer against moto through it.
func TaskInvoker(functionARN string, run Invoke) asl.Invoker {
	return asl.InvokerFunc(func(ctx context.Context, resource string, payload json.RawMessage) (json.RawMessage, error) {
		if resource == ResourceLambdaInvoke {
			return invokeIntegration(ctx, functionARN, run, payload)
		}
		if resource != functionARN {
			return nil, &lambdaError{name: "Lambda.ResourceNotFoundException",
				msg: fmt.Sprintf("Function not found: %s", resource)}
		}
		var req execution.Request
		if err := json.Unmarshal(payload, &req); err != nil {
			return nil, &functionError{err: &failure.InternalError{Msg: fmt.Sprintf("the deployer's request does not decode: %v", err)}}
		}
		out, err := run(ctx, req)
		if err != nil && !isServiceError(err) {
			return nil, &functionError{err: err}
		}
		return out, err
	})
}

// invokeIntegration runs a lambda:invoke task (Parameters FunctionName and
// Payload) and returns Lambda Invoke's response as the integration does:
// {"ExecutedVersion", "Payload", "StatusCode"}.
func invokeIntegration(ctx context.Context, functionARN string, run Invoke, payload json.RawMessage) (json.RawMessage, error) {
	var p struct {
		FunctionName string          `json:"FunctionName"`
		Payload      json.RawMessage `json:"Payload"`
	}
	if err := json.Unmarshal(payload, &p); err != nil {
		return nil, &integrationError{"States.Runtime", fmt.Sprintf("the Parameters of lambda:invoke do not decode: %v", err)}
	}
	out, err := TaskInvoker(functionARN, run).Invoke(ctx, p.FunctionName, p.Payload)
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		out = json.RawMessage("null")
	}
	return json.Marshal(struct {
		ExecutedVersion string          `json:"ExecutedVersion"`
		Payload         json.RawMessage `json:"Payload"`
		StatusCode      int             `json:"StatusCode"`
	}{"$LATEST", out, 200})
}

// tasks runs the region's nested executions (ResourceStartExecutionSync)
// and every other task through lambda.
func (r *Region) tasks(lambda asl.Invoker) asl.Invoker {
	return asl.InvokerFunc(func(ctx context.Context, resource string, payload json.RawMessage) (json.RawMessage, error) {
		if resource == ResourceStartExecutionSync {
			return r.runNested(ctx, payload)
		}
		return lambda.Invoke(ctx, resource, payload)
	})
}

// isServiceError reports whether err is an error of the Lambda service
// (or of Step Functions), not of the function: it names itself with a
// name that is not one of the function's (failure.Names).
func isServiceError(err error) bool {
	var named interface{ ErrorName() string }
	return errors.As(err, &named) && !slices.Contains(failure.Names(), named.ErrorName())
}

// invoke is the Invoker of every execution (through TaskInvoker): it runs
// the deployer's task in-process, through Options.Intercept when set.
//
// A task's side-by-side calls run in order (fanout.InOrder): a run sees
// the same calls in the same order every time, so a fault injected at a
// call index hits the same call.
func (r *Region) invoke(ctx context.Context, req execution.Request) (json.RawMessage, error) {
	ctx = fanout.InOrder(ctx)
	next := Invoke(func(ctx context.Context, req execution.Request) (json.RawMessage, error) {
		r.depMu.Lock()
		d := r.dep
		r.depMu.Unlock()
		return d.Invoke(ctx, req)
	})
	var out json.RawMessage
	var err error
	if r.opts.Intercept != nil {
		out, err = r.opts.Intercept(ctx, req, next)
	} else {
		out, err = next(ctx, req)
	}
	r.logCalls(ctx)
	if err != nil {
		r.logger.Debug("task failed", "execution", req.Execution.ID, "task", req.Task,
			"error", failure.NameOf(err), "cause", failure.Message(err.Error()))
	}
	return out, err
}

// functionError is a function error as the Lambda service reports it to
// Step Functions: the name is the payload's errorType, the cause the whole
// payload as JSON (failure.Cause), as on AWS. It wraps the handler's error,
// so an Intercept still sees the deployer's typed error with errors.As.
type functionError struct{ err error }

func (e *functionError) Error() string     { return failure.Cause(e.err) }
func (e *functionError) ErrorName() string { return failure.NameOf(e.err) }
func (e *functionError) Unwrap() error     { return e.err }

// lambdaError is an error of the Lambda service itself.
type lambdaError struct{ name, msg string }

func (e *lambdaError) Error() string     { return e.msg }
func (e *lambdaError) ErrorName() string { return e.name }

// observe logs an execution's event and passes it to Options.Observer.
func (r *Region) observe(arn string, ev asl.Event) {
	if r.logger.Enabled(context.Background(), slog.LevelDebug) {
		switch {
		case ev.StateEntered != nil:
			r.logger.Debug("state entered", "execution", arn, "state", ev.StateEntered.Name)
		case ev.LambdaFunctionFailed != nil:
			r.logger.Debug("task error", "execution", arn, "error", ev.LambdaFunctionFailed.Error)
		}
	}
	if r.opts.Observer != nil {
		r.opts.Observer(arn, ev)
	}
}

// logCalls logs at Debug the simulated AWS calls made since the last time.
func (r *Region) logCalls(ctx context.Context) {
	if !r.logger.Enabled(ctx, slog.LevelDebug) {
		return
	}
	r.callMu.Lock()
	defer r.callMu.Unlock()
	calls := r.world.CallLog()
	if len(calls) < r.callIdx { // someone reset the log
		r.callIdx = 0
	}
	for _, c := range calls[r.callIdx:] {
		r.logger.Debug("aws call", "service", c.Service, "op", c.Op, "account", c.Account, "region", c.Region)
	}
	r.callIdx = len(calls)
}
