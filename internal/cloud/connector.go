package cloud

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	ststypes "github.com/aws/aws-sdk-go-v2/service/sts/types"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/target"
	"github.com/ferryhq/ferry/internal/tuning"
)

// ConnectorOptions tune a Connector. The zero value is the production
// setting.
type ConnectorOptions struct {
	// Clock decides when cached credentials are due for a refresh
	// (default clock.System). The simulated AWS shares its virtual clock.
	Clock clock.Clock
	// Duration of an assumed-role session (default
	// tuning.RoleSessionDuration).
	Duration time.Duration
	// ExpiryWindow is how long before expiry credentials are refreshed
	// (default tuning.CredentialsExpiryWindow).
	ExpiryWindow time.Duration
	// MaxConnections is how many (target, session) connections are kept,
	// the least recently used dropped first (default
	// tuning.MaxCachedConnections).
	MaxConnections int
}

// Session is the release a Connect acts for. It is not part of a target's
// identity: the same target is reached with one Session per release. The
// target's roles are assumed for that release alone, with
//
//   - the session tags ProjectName and ConfigName (naming.SessionTagKeys),
//     which the bootstrap roles' trust requires and their policies scope
//     every resource by (aws:PrincipalTag), so a session can touch only
//     its own project-config's groups, templates, alarms and roles;
//   - the role session name naming.RoleSessionName(Project, Config,
//     ReleaseID), so CloudTrail shows which release acted;
//   - the source identity SourceIdentity, when set: who asked for the
//     release (naming.SourceIdentity of the caller its identity proof
//     names), which STS keeps with the session and CloudTrail records
//     with every call it makes.
type Session struct {
	Project        string
	Config         string
	ReleaseID      string
	SourceIdentity string
}

// sessionNamePattern is STS's pattern of a role session name and of a
// source identity, and tagValuePattern that of a session tag value
// (AssumeRole, STS API Reference).
var (
	sessionNamePattern = regexp.MustCompile(`^[\w+=,.@-]{2,64}$`)
	tagValuePattern    = regexp.MustCompile(`^[\p{L}\p{Z}\p{N}_.:/=+\-@]{1,256}$`)
)

// Validate reports what is wrong with a session (nil when STS accepts its
// name and tags).
func (s Session) Validate() error {
	switch {
	case !tagValuePattern.MatchString(s.Project):
		return fmt.Errorf("session: project %q is not a session tag value", s.Project)
	case !tagValuePattern.MatchString(s.Config):
		return fmt.Errorf("session: config %q is not a session tag value", s.Config)
	case s.ReleaseID == "":
		return errors.New("session: the release id is empty")
	case !sessionNamePattern.MatchString(naming.RoleSessionName(s.Project, s.Config, s.ReleaseID)):
		return fmt.Errorf("session: %s/%s/%s makes no valid role session name", s.Project, s.Config, s.ReleaseID)
	case s.SourceIdentity != "" && (!sessionNamePattern.MatchString(s.SourceIdentity) || strings.HasPrefix(s.SourceIdentity, "aws:")):
		return fmt.Errorf("session: %q is not a source identity", s.SourceIdentity)
	}
	return nil
}

// Connector turns a Target and a Session into the Clients of that
// environment by assuming the target's conventional deploy role
// (naming.DeployRoleName) for every client but Assets and its publish role
// (naming.PublishRoleName) for Assets, for that session (see Session). The
// deployer's own account goes through the same path. It is safe for
// concurrent use.
//
// The Clients of a (target, session) are built once and reused; their
// credentials are cached and refreshed ExpiryWindow before they expire, so
// the Connects of one release cost one AssumeRole per role per session
// duration. At most MaxConnections are kept.
type Connector struct {
	sts   STS
	build func(t target.Target, deploy, publish aws.CredentialsProvider) *Clients
	opts  ConnectorOptions

	mu    sync.Mutex
	conns map[connKey]*connection
	uses  uint64
}

type connKey struct {
	target  target.Target
	session Session
}

type connection struct {
	clients *Clients
	deploy  *CredentialsCache
	publish *CredentialsCache
	used    uint64
}

// NewConnector returns a Connector that assumes roles with stsClient (the
// deployer's own STS) and builds clients with build (AWSBuilder for AWS,
// sim.World.Build for the simulation).
func NewConnector(stsClient STS, build func(t target.Target, deploy, publish aws.CredentialsProvider) *Clients, opts ConnectorOptions) *Connector {
	if opts.Clock == nil {
		opts.Clock = clock.System{}
	}
	if opts.Duration <= 0 {
		opts.Duration = tuning.RoleSessionDuration
	}
	if opts.ExpiryWindow <= 0 {
		opts.ExpiryWindow = tuning.CredentialsExpiryWindow
	}
	if opts.MaxConnections <= 0 {
		opts.MaxConnections = tuning.MaxCachedConnections
	}
	return &Connector{sts: stsClient, build: build, opts: opts, conns: map[connKey]*connection{}}
}

// Connect returns the Clients of t for session s. It assumes the deploy
// role at once (the first time, and again when the cached credentials are
// near expiry), so a target whose deploy role is missing or does not trust
// the deployer fails here with a *RoleError naming the role and the
// account. The publish role is assumed on the first Assets call. Connect
// never caches a failure: the next Connect tries again.
func (c *Connector) Connect(ctx context.Context, t target.Target, s Session) (*Clients, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	key := connKey{target: t, session: s}
	c.mu.Lock()
	conn, ok := c.conns[key]
	if !ok {
		c.evict()
		deploy := c.cache(t, s, naming.DeployRoleName(t.AccountID, t.Region, t.Qualifier))
		publish := c.cache(t, s, naming.PublishRoleName(t.AccountID, t.Region, t.Qualifier))
		conn = &connection{clients: c.build(t, deploy, publish), deploy: deploy, publish: publish}
		c.conns[key] = conn
	}
	c.uses++
	conn.used = c.uses
	c.mu.Unlock()
	if _, err := conn.deploy.Retrieve(ctx); err != nil {
		return nil, err
	}
	return conn.clients, nil
}

// evict drops the least recently used connection when the cache is full.
// The caller holds c.mu.
func (c *Connector) evict() {
	if len(c.conns) < c.opts.MaxConnections {
		return
	}
	var oldest connKey
	first := true
	for k, conn := range c.conns {
		if first || conn.used < c.conns[oldest].used {
			oldest, first = k, false
		}
	}
	delete(c.conns, oldest)
}

func (c *Connector) cache(t target.Target, s Session, role string) *CredentialsCache {
	arn := naming.RoleARN(t.AccountID, role)
	provider := stscreds.NewAssumeRoleProvider(c.sts, arn, func(o *stscreds.AssumeRoleOptions) {
		o.RoleSessionName = naming.RoleSessionName(s.Project, s.Config, s.ReleaseID)
		if s.SourceIdentity != "" {
			o.SourceIdentity = aws.String(s.SourceIdentity)
		}
		o.Duration = c.opts.Duration
		o.Tags = []ststypes.Tag{
			{Key: aws.String(naming.TagProjectName), Value: aws.String(s.Project)},
			{Key: aws.String(naming.TagConfigName), Value: aws.String(s.Config)},
		}
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
	return fmt.Sprintf("cannot assume role %s in account %s (is the account bootstrapped, and does the role trust the deployer's role?): %v",
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
