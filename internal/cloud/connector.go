package cloud

import (
	"context"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/naming"
)

// ConnectorOptions tune a Connector. The zero value is the production
// setting.
type ConnectorOptions struct {
	// Clock decides when cached credentials are due for a refresh
	// (default clock.System). The simulated AWS shares its virtual clock.
	Clock clock.Clock
	// SessionName is appended to "ferry-" to name the role sessions
	// (default "deployer"), so CloudTrail shows who acted.
	SessionName string
	// Duration of an assumed-role session (default
	// limits.RoleSessionDuration).
	Duration time.Duration
	// ExpiryWindow is how long before expiry credentials are refreshed
	// (default limits.CredentialsExpiryWindow).
	ExpiryWindow time.Duration
}

// Connector turns a Target into the Clients of that environment by
// assuming the target's conventional deploy role (naming.DeployRoleName)
// for every client but Assets and its publish role (naming.PublishRoleName)
// for Assets. The deployer's own account goes through the same path. It is
// safe for concurrent use.
//
// The Clients of a target are built once and reused; their credentials are
// cached and refreshed ExpiryWindow before they expire, so many Connects
// cost one AssumeRole per role per session.
type Connector struct {
	sts   STS
	build func(t Target, deploy, publish aws.CredentialsProvider) *Clients
	opts  ConnectorOptions

	mu      sync.Mutex
	targets map[Target]*connection
}

type connection struct {
	clients *Clients
	deploy  *CredentialsCache
	publish *CredentialsCache
}

// NewConnector returns a Connector that assumes roles with stsClient (the
// deployer's own STS) and builds clients with build (AWSBuilder for AWS,
// sim.World.Build for the simulation).
func NewConnector(stsClient STS, build func(t Target, deploy, publish aws.CredentialsProvider) *Clients, opts ConnectorOptions) *Connector {
	if opts.Clock == nil {
		opts.Clock = clock.System{}
	}
	if opts.SessionName == "" {
		opts.SessionName = "deployer"
	}
	if opts.Duration <= 0 {
		opts.Duration = limits.RoleSessionDuration
	}
	if opts.ExpiryWindow <= 0 {
		opts.ExpiryWindow = limits.CredentialsExpiryWindow
	}
	return &Connector{sts: stsClient, build: build, opts: opts, targets: map[Target]*connection{}}
}

var (
	accountPattern = regexp.MustCompile(`^[0-9]{12}$`)
	regionPattern  = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]+$`)
)

// Validate reports what is wrong with a target (nil when it is usable).
func (t Target) Validate() error {
	switch {
	case !accountPattern.MatchString(t.AccountID):
		return fmt.Errorf("target account %q is not a 12-digit AWS account id", t.AccountID)
	case !regionPattern.MatchString(t.Region):
		return fmt.Errorf("target region %q is not an AWS region name", t.Region)
	case len(t.Qualifier) > limits.MaxQualifierLen:
		return fmt.Errorf("target qualifier %q is longer than %d characters", t.Qualifier, limits.MaxQualifierLen)
	}
	return nil
}

// Connect returns the Clients of t. It assumes the deploy role at once (the
// first time, and again when the cached credentials are near expiry), so a
// target whose deploy role is missing or does not trust the deployer fails
// here with a *RoleError naming the role and the account. The publish role
// is assumed on the first Assets call. Connect never caches a failure: the
// next Connect tries again.
func (c *Connector) Connect(ctx context.Context, t Target) (*Clients, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	conn, ok := c.targets[t]
	if !ok {
		deploy := c.cache(t, naming.DeployRoleName(t.AccountID, t.Region, t.Qualifier))
		publish := c.cache(t, naming.PublishRoleName(t.AccountID, t.Region, t.Qualifier))
		conn = &connection{clients: c.build(t, deploy, publish), deploy: deploy, publish: publish}
		c.targets[t] = conn
	}
	c.mu.Unlock()
	if _, err := conn.deploy.Retrieve(ctx); err != nil {
		return nil, err
	}
	return conn.clients, nil
}

func (c *Connector) cache(t Target, role string) *CredentialsCache {
	arn := naming.RoleARN(t.AccountID, role)
	provider := stscreds.NewAssumeRoleProvider(c.sts, arn, func(o *stscreds.AssumeRoleOptions) {
		o.RoleSessionName = "ferry-" + c.opts.SessionName
		o.Duration = c.opts.Duration
	})
	return &CredentialsCache{
		provider: provider, clock: c.opts.Clock, window: c.opts.ExpiryWindow,
		roleARN: arn, account: t.AccountID,
	}
}

// RoleError says a role of a target could not be assumed: it does not
// exist, it does not trust the deployer's account, or STS failed. The
// handler wraps it (a missing role is a bad release target; a throttled
// STS is retryable, see Classify).
type RoleError struct {
	RoleARN string
	Account string
	Err     error
}

func (e *RoleError) Error() string {
	return fmt.Sprintf("cannot assume role %s in account %s (is the account bootstrapped, and does the role trust the deployer's account?): %v",
		e.RoleARN, e.Account, e.Err)
}

// Unwrap returns the STS error.
func (e *RoleError) Unwrap() error { return e.Err }

// CredentialsCache caches the credentials of one assumed role and refreshes
// them a window before they expire, as told by an injected clock (so a
// virtual clock drives expiry in tests and in the simulation, which
// aws.CredentialsCache, tied to the wall clock, cannot). Concurrent
// Retrieves during a refresh wait for one AssumeRole. The credentials it
// hands out expire the window early, so an SDK client's own cache refreshes
// in step with it.
type CredentialsCache struct {
	provider aws.CredentialsProvider
	clock    clock.Clock
	window   time.Duration
	roleARN  string
	account  string

	mu    sync.Mutex
	creds aws.Credentials
	ok    bool
}

// Retrieve returns cached credentials, or assumes the role when there are
// none or they are within the expiry window. Errors are *RoleError.
func (c *CredentialsCache) Retrieve(ctx context.Context) (aws.Credentials, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ok && (!c.creds.CanExpire || c.clock.Now().Before(c.creds.Expires)) {
		return c.creds, nil
	}
	creds, err := c.provider.Retrieve(ctx)
	if err != nil {
		c.ok = false
		return aws.Credentials{}, &RoleError{RoleARN: c.roleARN, Account: c.account, Err: err}
	}
	if creds.CanExpire {
		creds.Expires = creds.Expires.Add(-c.window)
	}
	c.creds, c.ok = creds, true
	return creds, nil
}

var _ aws.CredentialsProvider = (*CredentialsCache)(nil)
