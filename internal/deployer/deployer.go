package deployer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/store/halt"
	"github.com/ferryhq/ferry/internal/store/ledger"
	"github.com/ferryhq/ferry/internal/store/lock"
	"github.com/ferryhq/ferry/internal/target"
	"github.com/ferryhq/ferry/internal/tuning"
)

// Store is the S3 API the deployer calls on its own bucket: the lock, halt
// and ledger stores, and reading assets to publish.
type Store interface {
	PutObject(ctx context.Context, in *s3.PutObjectInput, optFns ...func(*s3.Options)) (*s3.PutObjectOutput, error)
	GetObject(ctx context.Context, in *s3.GetObjectInput, optFns ...func(*s3.Options)) (*s3.GetObjectOutput, error)
	HeadObject(ctx context.Context, in *s3.HeadObjectInput, optFns ...func(*s3.Options)) (*s3.HeadObjectOutput, error)
	DeleteObject(ctx context.Context, in *s3.DeleteObjectInput, optFns ...func(*s3.Options)) (*s3.DeleteObjectOutput, error)
	ListObjectsV2(ctx context.Context, in *s3.ListObjectsV2Input, optFns ...func(*s3.Options)) (*s3.ListObjectsV2Output, error)
}

// Connector turns a target environment into its AWS clients, acting for
// one release (*cloud.Connector).
type Connector interface {
	Connect(ctx context.Context, t target.Target, s cloud.Session) (*cloud.Clients, error)
}

var (
	_ Store     = (*s3.Client)(nil)
	_ Connector = (*cloud.Connector)(nil)
)

// Config is the deployer's typed configuration. Bucket and DefaultTarget
// are required; every other zero field takes its default.
type Config struct {
	// Bucket is the deployer's own bucket.
	Bucket string
	// DefaultTarget is the environment of a release that names no account
	// or region: the deployer's own.
	DefaultTarget target.Target
	// CreatedAtMaxAge and CreatedAtMaxSkew are the window a release's
	// created_at must fall in at Validate (defaults
	// tuning.CreatedAtMaxAge, tuning.CreatedAtMaxSkew).
	CreatedAtMaxAge  time.Duration
	CreatedAtMaxSkew time.Duration
	// HealthCheckInterval is the health checks' interval in the first
	// ten minutes of an execution (default tuning.HealthCheckInterval):
	// the first pace of tuning.HealthChecks, no later one shorter.
	HealthCheckInterval time.Duration
	// HealthCheckGracePeriod of the new ASGs (default
	// tuning.HealthCheckGracePeriod).
	HealthCheckGracePeriod time.Duration
	// Executions and StateMachineARN confirm that each task runs for a
	// RUNNING execution of the deployer's state machine with the release it
	// names (see confirmExecution). The Lambda always sets both; nil
	// Executions skips the check (tests of single handlers).
	Executions      Executions
	StateMachineARN string
	// KeepReleases is how many of a project-config's newest releases keep
	// their assets when a reconcile pass collects the deployer bucket and
	// CleanUpSuccess the target's asset bucket (default
	// tuning.AssetKeepReleases).
	KeepReleases int
	// Starts starts the heals of a reconcile pass (executions of
	// StateMachineARN); nil leaves a pass unable to heal (each heal it
	// would start is counted as a failure).
	Starts Starter
	// Identities verifies the identity proof of each release at Validate
	// (identity.Verifier): a release without a valid one is refused, and
	// the caller it proves is what the records name as created_by. The
	// Lambda always sets it; nil takes created_by as the release claims it
	// (tests of single handlers).
	Identities Identities
	// IdentityAccounts are the accounts whose principals' identity proofs
	// the deployer accepts (default the default target's account): a
	// proof that verifies but names a caller of another account is
	// refused. An approval may also come from an account its pipeline's
	// approvers name.
	IdentityAccounts []string
	// Version is the deployer's build (buildinfo.Get().String(), passed
	// in by its main), written as deployer_version into every outcome and
	// current record.
	Version string
	// Clock tells the time (default clock.System).
	Clock clock.Clock
	// Logger receives the handlers' logs (default slog.Default()).
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.CreatedAtMaxAge <= 0 {
		c.CreatedAtMaxAge = tuning.CreatedAtMaxAge
	}
	if c.CreatedAtMaxSkew <= 0 {
		c.CreatedAtMaxSkew = tuning.CreatedAtMaxSkew
	}
	if c.HealthCheckInterval <= 0 {
		c.HealthCheckInterval = tuning.HealthCheckInterval
	}
	if c.HealthCheckGracePeriod <= 0 {
		c.HealthCheckGracePeriod = tuning.HealthCheckGracePeriod
	}
	if c.KeepReleases <= 0 {
		c.KeepReleases = tuning.AssetKeepReleases
	}
	if len(c.IdentityAccounts) == 0 && c.DefaultTarget.AccountID != "" {
		c.IdentityAccounts = []string{c.DefaultTarget.AccountID}
	}
	if c.Clock == nil {
		c.Clock = clock.System{}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Deployer runs the deploy state machine's tasks. It is safe for
// concurrent use; it keeps no state between invocations.
type Deployer struct {
	cfg       Config
	store     Store
	connector Connector
	locks     *lock.Locks
	halts     *halt.Halts
	ledger    *ledger.Ledger
	starts    *lock.Starts
	turns     *lock.Turns
	clock     clock.Clock
	log       *slog.Logger
	// confirmed are the execution inputs confirmRelease has read.
	confirmed *confirmedInputs
}

// New returns a Deployer that keeps its state in cfg.Bucket through store
// and reaches target environments through connector.
func New(cfg Config, store Store, connector Connector) (*Deployer, error) {
	if cfg.Bucket == "" {
		return nil, errors.New("deployer: config: bucket is required")
	}
	if err := cfg.DefaultTarget.Validate(); err != nil {
		return nil, fmt.Errorf("deployer: config: default target: %w", err)
	}
	if cfg.Executions != nil && cfg.StateMachineARN == "" {
		return nil, errors.New("deployer: config: the state machine's ARN is required to confirm executions")
	}
	if store == nil || connector == nil {
		return nil, errors.New("deployer: a store and a connector are required")
	}
	cfg = cfg.withDefaults()
	return &Deployer{
		cfg:       cfg,
		store:     store,
		connector: connector,
		locks:     lock.New(store, cfg.Bucket, cfg.Clock),
		starts:    lock.NewStarts(store, cfg.Bucket),
		turns:     lock.NewTurns(store, cfg.Bucket),
		halts:     halt.New(store, cfg.Bucket),
		ledger:    ledger.New(store, cfg.Bucket),
		clock:     cfg.Clock,
		log:       cfg.Logger,
		confirmed: &confirmedInputs{},
	}, nil
}

type handler func(d *Deployer, ctx context.Context, req execution.Request) (any, error)

var handlers = map[string]handler{
	execution.TaskValidate:          (*Deployer).validate,
	execution.TaskLock:              (*Deployer).lock,
	execution.TaskValidateResources: (*Deployer).validateResources,
	execution.TaskPublish:           (*Deployer).publish,
	execution.TaskDeploy:            (*Deployer).deploy,
	execution.TaskCheckHealthy:      (*Deployer).checkHealthy,
	execution.TaskNextStep:          (*Deployer).nextStep,
	execution.TaskBake:              (*Deployer).bake,
	execution.TaskCleanUpSuccess:    (*Deployer).cleanUpSuccess,
	execution.TaskCleanUpFailure:    (*Deployer).cleanUpFailure,
	execution.TaskReleaseLock:       (*Deployer).releaseLock,
	execution.TaskPlan:              (*Deployer).plan,
	execution.TaskDrift:             (*Deployer).drift,
	execution.TaskVerifyApproval:    (*Deployer).verifyApproval,
	execution.TaskReconcile:         (*Deployer).reconcile,
	execution.TaskPromote:           (*Deployer).promote,
	execution.TaskGate:              (*Deployer).checkGate,
	execution.TaskRequestApproval:   (*Deployer).requestApproval,
	execution.TaskStartTarget:       (*Deployer).startTarget,
	execution.TaskEndStage:          (*Deployer).endStage,
}

// Invoke runs the task req names and returns its result as JSON: the
// State for every task but CheckHealthy and NextStep, whose result is the
// Health. An
// unknown task is a *failure.UnknownTaskError; a panic in a handler is
// recovered into a *failure.InternalError naming the task (the stack goes
// to the log, not into the error). Every error returned is a failure.Named
// error.
func (d *Deployer) Invoke(ctx context.Context, req execution.Request) (out json.RawMessage, err error) {
	h, ok := handlers[req.Task]
	if !ok {
		return nil, &failure.UnknownTaskError{Task: req.Task}
	}
	log := d.log.With("task", req.Task, "execution", req.Execution.ID)
	start := time.Now()
	defer func() {
		if p := recover(); p != nil {
			log.Error("handler panicked", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			out, err = nil, &failure.InternalError{Msg: fmt.Sprintf("task %s panicked: %v", req.Task, p)}
		}
		if err != nil {
			log.Warn("task failed", "error_name", failure.NameOf(err), "error", err.Error())
		} else {
			log.Info("task done", "duration_ms", time.Since(start).Milliseconds())
		}
	}()
	result, err := h(d, ctx, req)
	if err != nil {
		return nil, named(req.Task, err)
	}
	data, err := json.Marshal(result)
	if err != nil {
		return nil, &failure.InternalError{Msg: fmt.Sprintf("task %s: encoding its result: %v", req.Task, err)}
	}
	return data, nil
}

// named makes sure err carries a state machine error name: an error ferry
// did not classify is wrapped in the kind of error its task fails with.
func named(task string, err error) error {
	var n failure.Named
	if errors.As(err, &n) {
		return err
	}
	switch task {
	case execution.TaskLock, execution.TaskReleaseLock:
		return &failure.LockError{Op: task, Err: err}
	case execution.TaskCleanUpSuccess, execution.TaskCleanUpFailure:
		return &failure.CleanUpError{Err: err}
	}
	return &failure.DeployError{Op: task, Err: err}
}

// decodeState reads the State a task is given. A state that is not a
// State (or that names no release) is a bug in the state machine.
func decodeState(req execution.Request) (*execution.State, error) {
	var st execution.State
	if err := json.Unmarshal(req.Input, &st); err != nil {
		return nil, &failure.InternalError{Msg: fmt.Sprintf("task %s: input is not a state document: %v", req.Task, err)}
	}
	if st.ProjectName == "" || st.ConfigName == "" || st.ReleaseID == "" || st.ReleaseSHA256 == "" {
		return nil, &failure.InternalError{Msg: fmt.Sprintf("task %s: state document names no release (project, config, release_id, release_sha256)", req.Task)}
	}
	return &st, nil
}

// now is the deployer's time, in UTC.
func (d *Deployer) now() time.Time { return d.clock.Now().UTC() }
