package tuning

import "time"

// The deployer's health-check pacing and the ASG settings it derives.
const (
	// HealthCheckInterval is how long the state machine waits between two
	// health checks (CheckHealthy's wait_seconds), and after Deploy before
	// the first. It bounds the latency ferry adds once the last needed
	// instance is healthy.
	HealthCheckInterval = 5 * time.Second
	// HealthCheckGracePeriod is the new ASGs' health check grace period: how
	// long after launch an instance failing its load balancer's health
	// check is left alone.
	HealthCheckGracePeriod = 300 * time.Second
	// RetireCheckInterval is how long the state machine waits between two
	// steps of retiring the previous groups (CleanUpSuccess's
	// wait_seconds): detach, draining, scale-in, hooks, delete.
	RetireCheckInterval = 15 * time.Second
	// RetireTimeout bounds the retirement of the previous groups, from the
	// point of no return: AWS ends a hook at its heartbeat timeout (at most
	// 7200 s) and a drain at its delay (at most 3600 s), so a group still
	// standing past it is stuck; it is deleted with ForceDelete (it left
	// its load balancers first, so no request is cut). With
	// RetireCheckInterval it keeps an execution's retirement within
	// limits.MaxRetireSteps.
	RetireTimeout = 2 * time.Hour
	// RollbackCheckInterval is how long the state machine waits between
	// two checks of a rollback (CleanUpFailure after a bake): whether the
	// previous groups, back in their load balancers, pass their health
	// checks. It bounds the time the new groups serve alone after a
	// rollback could have finished.
	RollbackCheckInterval = 5 * time.Second
	// RollbackTimeout bounds a rollback: previous groups not healthy in
	// their load balancers this long after they were put back will not
	// be, and the release ends FailureDirty with its own groups left
	// serving beside them (never none). With RollbackCheckInterval it
	// keeps a rollback within limits.MaxRollbackChecks.
	RollbackTimeout = 15 * time.Minute
	// ErrorRateWindow is how far back a service's error rate looks: its
	// load balancers' requests and 5xx in the whole minutes CloudWatch
	// published over the last two.
	ErrorRateWindow = 2 * time.Minute
	// DescribeBatch is how many names ferry passes to one describe call
	// that takes a list of names (Auto Scaling groups, load balancer tags).
	DescribeBatch = 20
)

// The retry policy of every task of the deploy state machine, for
// transient errors. The state machine is generated from these, and the
// clean-up handlers read from the retry count when an attempt is the last.
const (
	TaskRetryIntervalSeconds = 2
	TaskRetryBackoffRate     = 2.0
	TaskRetryMaxAttempts     = 6
	TaskRetryMaxDelaySeconds = 30
)

// Defaults of a release and of the deployer's checks of it.
const (
	// DefaultTimeout is a release's timeout when it names none (at most
	// limits.MaxTimeout).
	DefaultTimeout = 600 * time.Second
	// CreatedAtMaxAge and CreatedAtMaxSkew are the default window of a
	// release's created_at at Validate: at most this old, at most this far
	// in the future.
	CreatedAtMaxAge  = 10 * time.Minute
	CreatedAtMaxSkew = 2 * time.Minute
)
