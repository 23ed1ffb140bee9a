package sim

import (
	"container/heap"
	"context"
	"fmt"
	"github.com/ferryhq/ferry/internal/fanout"
	"hash/fnv"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/naming"
)

// World is a whole simulated AWS: every account and region of a world file,
// driven by a clock. It is safe for concurrent use. Nothing runs in the
// background: every call first brings the world up to the clock's now, so
// a virtual clock moves instances through their lives as fast as a test
// advances it.
type World struct {
	clk     clock.Clock
	timings Timings
	quotas  Quotas
	// drawSeed and subsecond are the WorldSpec's Seed and Subsecond.
	drawSeed  uint64
	subsecond bool
	// onCall, when set, sees every call as it is made (OnCall).
	onCall func(ctx context.Context, c Call)
	// observer, when set, sees every change (Observe); before is the
	// world before the mutating call in progress.
	observer func(Change)
	before   *Instant
	// throttling is the WorldSpec's Throttle; buckets are its token
	// buckets by account, region and bucket key; throttles its counts;
	// attempts the attempts each bucket took in each second.
	throttling bool
	buckets    map[string]*bucket
	throttles  Throttles
	attempts   map[BucketSecond]int

	mu  sync.Mutex
	now time.Time
	// born is when the world started: world-file alarms at a time count
	// from it.
	born     time.Time
	accounts map[string]*account
	events   eventQueue
	seq      uint64
	ids      map[string]uint64
	sessions map[string]*session
	// keys are the IAM users' long-term access keys (AddAccessKey).
	keys map[string]*accessKey

	faults *Faults
	calls  callLog
	// caller is the role session making the call in progress (nil for
	// the unauthenticated clients of Clients): what IAM checks beyond the
	// call's own action apply to.
	caller *session
	// accepted is when the call in progress reached AWS: its place on
	// its task's Timeline after the backoff of its throttled attempts
	// (zero outside a call). See requestTime.
	accepted time.Time
}

type account struct {
	id       string
	roles    map[string]*role
	profiles map[string]*instanceProfile
	regions  map[string]*region
}

type role struct {
	name, path string
	id         string
	// bootstrap is bootstrapDeploy or bootstrapPublish for ferry's roles
	// of a bootstrapped environment, whose trust is narrower (STSAs).
	bootstrap string
	trust     map[string]bool // accounts
	services  map[string]bool // service principals
	// projects are the patterns of the projects a bootstrap role's trust
	// accepts (BootstrapSpec.Projects).
	projects []string
	created  time.Time
}

type instanceProfile struct {
	name, path, id string
	roles          []string
	created        time.Time
}

type session struct {
	account, role, name string
	expires             time.Time
	// tags are the session tags; deploy is set for a session of a
	// bootstrap deploy role, whose policy the world enforces (authorize).
	tags   map[string]string
	deploy bool
	// sourceIdentity is the source identity the session was opened
	// with; STS keeps it for the session's life.
	sourceIdentity string
}

// Kinds of bootstrap roles.
const (
	bootstrapDeploy  = "deploy"
	bootstrapPublish = "publish"
)

// arn is the session's assumed-role ARN, as IAM's errors name the caller.
func (s *session) arn() string {
	return "arn:aws:sts::" + s.account + ":assumed-role/" + s.role + "/" + s.name
}

// New builds a world from spec, checked as ParseWorld does. The clock is
// shared with whoever drives the simulation.
func New(clk clock.Clock, spec WorldSpec) (*World, error) {
	if problems := spec.Validate(); len(problems) > 0 {
		return nil, fmt.Errorf("world: %d problem(s): %v", len(problems), problems)
	}
	w := &World{
		clk:      clk,
		timings:  DefaultTimings().over(&spec.Defaults),
		drawSeed: spec.Seed, subsecond: spec.Subsecond,
		throttling: spec.Throttle, buckets: map[string]*bucket{}, attempts: map[BucketSecond]int{},
		throttles: Throttles{Retried: map[string]int{}, Failed: map[string]int{}},
		quotas:    spec.Limits,
		now:       clk.Now(),
		born:      clk.Now(),
		accounts:  map[string]*account{},
		ids:       map[string]uint64{},
		sessions:  map[string]*session{},
	}
	if w.quotas.AutoScalingGroups == 0 {
		w.quotas.AutoScalingGroups = 500
	}
	if w.quotas.LaunchTemplates == 0 {
		w.quotas.LaunchTemplates = 5000
	}
	if w.quotas.Alarms == 0 {
		w.quotas.Alarms = 10000
	}
	w.faults = &Faults{w: w}
	for _, as := range spec.Accounts {
		a := &account{id: as.ID, roles: map[string]*role{}, profiles: map[string]*instanceProfile{}, regions: map[string]*region{}}
		w.accounts[as.ID] = a
		addRole := func(name, path, bootstrap string, trust, services []string) *role {
			if path == "" {
				path = "/"
			}
			r := &role{name: name, path: path, bootstrap: bootstrap, id: w.newID("AROA", 17), trust: map[string]bool{}, services: map[string]bool{}, created: w.now}
			for _, t := range trust {
				r.trust[t] = true
			}
			for _, s := range services {
				r.services[s] = true
			}
			a.roles[name] = r
			return r
		}
		for _, b := range as.Bootstrap {
			addRole(naming.DeployRoleName(as.ID, b.Region, b.Qualifier), "/", bootstrapDeploy, b.Trust, nil).projects = b.Projects
			addRole(naming.PublishRoleName(as.ID, b.Region, b.Qualifier), "/", bootstrapPublish, b.Trust, nil).projects = b.Projects
		}
		for _, r := range as.Roles {
			addRole(r.Name, r.Path, "", r.Trust, r.TrustServices)
		}
		for _, ip := range as.InstanceProfiles {
			path := ip.Path
			if path == "" {
				path = "/"
			}
			a.profiles[ip.Name] = &instanceProfile{name: ip.Name, path: path, id: w.newID("AIPA", 17), roles: ip.Roles, created: w.now}
		}
		for _, rs := range as.Regions {
			a.regions[rs.Name] = w.newRegion(a, rs)
		}
	}
	return w, nil
}

// Clock returns the world's clock.
func (w *World) Clock() clock.Clock { return w.clk }

// Faults returns the world's fault injection rules.
func (w *World) Faults() *Faults { return w.faults }

// Accounts returns the ids of the world's accounts.
func (w *World) Accounts() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Sorted(maps.Keys(w.accounts))
}

// newID returns a deterministic id: prefix and a counter per prefix, hex
// padded to width.
func (w *World) newID(prefix string, width int) string {
	w.ids[prefix]++
	return fmt.Sprintf("%s%0*x", prefix, width, w.ids[prefix])
}

// region returns the state of an account-region, creating an empty region
// of a known account on first use (every AWS region exists). It returns
// nil for an account the world does not have.
func (w *World) region(accountID, name string) *region {
	a := w.accounts[accountID]
	if a == nil {
		return nil
	}
	r := a.regions[name]
	if r == nil {
		r = w.newRegion(a, RegionSpec{Name: name})
		a.regions[name] = r
	}
	return r
}

// OnCall makes fn see every call from now on, with the caller's context,
// as it is made (before a fault or the world answers it); fn must not
// call the world. A benchmark times calls with it.
func (w *World) OnCall(fn func(ctx context.Context, c Call)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.onCall = fn
}

// draw picks an instance's boot or health time in rng for id and
// purpose: in whole seconds, or to the millisecond when the world is
// Subsecond; varied by the world's Seed.
func (w *World) draw(rng Range, id, purpose string) time.Duration {
	if w.drawSeed != 0 {
		purpose += "/" + strconv.FormatUint(w.drawSeed, 10)
	}
	if w.subsecond {
		return rng.pickMS(seed(id, purpose))
	}
	return rng.pick(seed(id, purpose))
}

// seed returns a deterministic number from an id and a purpose.
func seed(id, purpose string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	h.Write([]byte{0})
	h.Write([]byte(purpose))
	return h.Sum64()
}

// advance brings the world to now: it runs every event due by now, in time
// order. The caller holds w.mu.
func (w *World) advance(now time.Time) {
	if now.Before(w.now) {
		now = w.now
	}
	for w.events.Len() > 0 && !w.events[0].at.After(now) {
		ev := heap.Pop(&w.events).(*event)
		w.now = ev.at
		w.countTraffic()
		ev.run(ev.at)
		w.checkServing()
		w.observeEvent()
	}
	w.now = now
	w.countTraffic()
	// Time alone makes a load balancer serve (an instance passes its
	// health check): noted before the call changes anything, so a call
	// that takes its last instance away counts it going dark.
	w.checkServing()
}

// countTraffic counts every load balancer's traffic up to the world's now
// (region.countTraffic). The caller holds w.mu.
func (w *World) countTraffic() {
	for _, a := range w.accounts {
		for _, r := range a.regions {
			r.countTraffic(w.now)
		}
	}
}

// checkServing updates what every load balancer and target group counts
// of cut traffic (servingCounter) at the world's now. It runs after every
// event and every call. The caller holds w.mu.
func (w *World) checkServing() {
	for _, a := range w.accounts {
		for _, r := range a.regions {
			r.checkServing(w.now)
		}
	}
}

// requestTime is when the call in progress takes effect where its moment
// matters to what it starts: the moment its attempt that was not
// throttled reached AWS (its place on its task's Timeline, after the
// retries' backoff), never before the world's now. A throttled attempt
// has no effect (Amazon EC2 Auto Scaling API Reference, Welcome, "API
// request rate"; the EC2 API's "Request throttling": the requests past
// the bucket "fail"), so the instances a throttled and retried
// CreateAutoScalingGroup or UpdateAutoScalingGroup launches begin
// launching when the retry got through, not when the first attempt was
// sent. Reads, and what a call changes at once, take the world's now.
// The caller holds w.mu.
func (w *World) requestTime() time.Time {
	if w.accepted.After(w.now) {
		return w.accepted
	}
	return w.now
}

// at schedules fn to run at t.
func (w *World) at(t time.Time, fn func(time.Time)) {
	w.seq++
	heap.Push(&w.events, &event{at: t, seq: w.seq, run: fn})
}

type event struct {
	at  time.Time
	seq uint64
	run func(time.Time)
}

type eventQueue []*event

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if q[i].at.Equal(q[j].at) {
		return q[i].seq < q[j].seq
	}
	return q[i].at.Before(q[j].at)
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(*event)) }
func (q *eventQueue) Pop() any {
	old := *q
	n := len(old)
	ev := old[n-1]
	old[n-1] = nil
	*q = old[:n-1]
	return ev
}

// view is one client's binding: the service, the account-region it acts
// in, and (unless it is a direct view) the credentials it signs with.
type view struct {
	w       *World
	service string
	account string
	region  string
	creds   aws.CredentialsProvider
}

// begin starts a call: it checks the context, resolves the credentials,
// records the call, applies fault rules and authentication, and advances
// the world. On success the world is locked and the caller must call
// w.mu.Unlock (end does).
func (v view) begin(ctx context.Context, op string) (*region, error) {
	if err := ctx.Err(); err != nil {
		return nil, opError(v.service, op, sendError(err))
	}
	var key string
	if v.creds != nil {
		c, err := v.creds.Retrieve(ctx)
		if err != nil {
			return nil, opError(v.service, op, fmt.Errorf("failed to retrieve credentials: %w", err))
		}
		key = c.AccessKeyID
	}
	w := v.w
	w.mu.Lock()
	w.advance(w.clk.Now())
	call := Call{Service: v.service, Op: op, Account: v.account, Region: v.region, At: w.now.Add(fanout.Offset(ctx)), Auth: defaultAuth(v.service, op)}
	if s := w.sessions[key]; v.creds != nil && s != nil {
		call.Principal, call.SessionTags, call.SourceIdentity = s.arn(), maps.Clone(s.tags), s.sourceIdentity
	}
	w.calls.record(call)
	if w.onCall != nil {
		w.onCall(ctx, call)
	}
	accepted, err := w.throttle(ctx, call)
	if err != nil {
		w.mu.Unlock()
		return nil, opError(v.service, op, err)
	}
	w.accepted = accepted
	if err := w.faults.match(call); err != nil {
		w.mu.Unlock()
		return nil, opError(v.service, op, err)
	}
	w.caller = nil
	if v.creds != nil {
		if err := w.authenticate(key, v.account); err != nil {
			w.mu.Unlock()
			return nil, opError(v.service, op, err)
		}
		w.caller = w.sessions[key]
	}
	r := w.region(v.account, v.region)
	if r == nil {
		w.mu.Unlock()
		return nil, opError(v.service, op, apiErr(codeAuthFailure, "AWS was not able to validate the provided access credentials (account "+v.account+" does not exist)"))
	}
	w.observeBefore(op)
	return r, nil
}

const codeAuthFailure = "AuthFailure"

// authenticate checks that an access key is a live session of an account.
func (w *World) authenticate(key, accountID string) error {
	s := w.sessions[key]
	switch {
	case s == nil:
		return apiErr("InvalidClientTokenId", "The security token included in the request is invalid.")
	case !w.now.Before(s.expires):
		return apiErr("ExpiredToken", "The security token included in the request is expired")
	case s.account != accountID:
		return apiErr("AccessDenied", fmt.Sprintf("User: arn:aws:sts::%s:assumed-role/%s/ferry is not authorized to act in account %s", s.account, s.role, accountID))
	}
	return nil
}

// end finishes a call: it unlocks the world and wraps an API error the way
// the SDK does.
func (v view) end(op string, err error) error {
	v.w.accepted = time.Time{}
	v.w.checkServing()
	v.w.observeCall()
	v.w.mu.Unlock()
	if err != nil {
		return opError(v.service, op, err)
	}
	return nil
}
