package chaos

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
)

// Predicates, as a Violation names them.
const (
	// PredServing (a): from the moment a release serves, every load
	// balancer and target group it names keeps its healthy target, and
	// no call of ferry's takes it below that or leaves it dark with no
	// group attached; one a release withdraws (a destroy) it leaves dark
	// only by detaching its groups.
	PredServing = "serving"
	// PredDrain (b): ferry never deregisters a healthy instance without
	// its draining, never deletes a group whose instances still carry
	// connections, never ends an instance's pending termination hook.
	PredDrain = "drain"
	// PredNamed (c): at the end, every ferry-tagged group, launch
	// template and alarm of the project-config is named by a record.
	PredNamed = "named"
	// PredClaims (d): at the end, every record's claims hold in the
	// world.
	PredClaims = "claims"
	// PredEnds (e): every execution reaches an end state.
	PredEnds = "ends"
	// PredPromotion: a promotion deploys a stage only while the stage
	// before serves its release healthy, no gate alarm is in ALARM and a
	// required approval was given (judged when the stage's deploy starts).
	PredPromotion = "promotion"
	// PredPending: no instance waiting on a launching hook (Pending:Wait)
	// or proceeding from it (Pending:Proceed) is ever healthy in a load
	// balancer or target group, by the world's own registrations, whoever
	// changed the world (Auto Scaling registers it only as it goes into
	// service).
	PredPending = "pending"
)

// Violation is one predicate broken.
type Violation struct {
	Pred string    `json:"pred"`
	At   time.Time `json:"at"`
	What string    `json:"what"`
}

func (v Violation) String() string {
	return fmt.Sprintf("%s at %s: %s", v.Pred, v.At.UTC().Format("15:04:05.000"), v.What)
}

// Cut says whether v counts as a cut connection: (a) or (b).
func (v Violation) Cut() bool { return v.Pred == PredServing || v.Pred == PredDrain }

// Served is what a release needs of the load balancers and target groups
// it names while it serves: the sum of the healthy targets of its
// services naming each, by Where; Retired for those of the services it
// removes. A destroy needs nothing.
type Served map[string]int

// Where is the key of a Served: the load balancer or target group name
// in region (the same name may be used in two regions a config moves
// between).
func Where(region, name string) string { return region + "/" + name }

// Retired marks, in a Served, a load balancer or target group the release
// takes out of service (it removes every service naming it).
const Retired = -1

// Checker judges every Change of the world (predicates a and b) against
// its own model of which release serves each project-config: the
// releases the harness submitted (and those a promotion it started
// deploys) and how each execution ended, as Step Functions reports it.
// It never reads ferry's records to decide what should serve. It is safe
// for concurrent use; Observe runs with the world locked and never calls
// it.
type Checker struct {
	mu sync.Mutex
	// models are what serves each config, by name; running the
	// releases whose executions run, by execution name.
	models     map[string]*model
	running    map[string]running
	violations []Violation
	changes    int
	// pending are the instances PredPending found serving, by load
	// balancer and instance (each is reported once).
	pending map[string]bool
	// lastAt is when the world last changed, last how it was then
	// (PredStable); swaps how many swaps PredStable judged.
	lastAt time.Time
	last   sim.Instant
	swaps  int
}

// model is what serves one config: the release (its id) and its needs.
type model struct {
	serving Served
	servID  string
}

type running struct {
	config, id string
	served     Served
	stable     stability
}

// NewChecker returns a Checker whose serving release of the scenario's
// config is id, needing served.
func NewChecker(id string, served Served) *Checker {
	return &Checker{models: map[string]*model{config: {serving: served, servID: id}}, running: map[string]running{}, pending: map[string]bool{}}
}

// Started records that the execution name runs release id of the
// scenario's config (StartedIn).
func (c *Checker) Started(name, id string, served Served) { c.StartedIn(config, name, id, served) }

// StartedIn records that the execution name runs release id of cfg,
// which needs served once it serves (nil for a destroy, or a release
// that changes nothing that serves).
func (c *Checker) StartedIn(cfg, name, id string, served Served) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.models[cfg] == nil {
		c.models[cfg] = &model{}
	}
	c.running[name] = running{config: cfg, id: id, served: served}
}

// Ended records how the execution name ended: a succeeded release serves
// its config from now on (a destroy: nothing does).
func (c *Checker) Ended(name string, succeeded bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.running[name]
	if !ok {
		return
	}
	delete(c.running, name)
	if !succeeded {
		return
	}
	m := c.models[r.config]
	m.serving, m.servID = Served{}, r.id
	for lb, n := range r.served {
		if n != Retired {
			m.serving[lb] = n
		}
	}
	if r.served == nil {
		m.serving = nil
	}
}

// Lower records that the world's owner set a group of release id to n
// instances: it needs at most n of each of lbs from now on (an operator's
// choice of capacity is the world's, not ferry's, to answer for).
func (c *Checker) Lower(id string, lbs []string, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	lower := func(s Served) {
		for _, lb := range lbs {
			if m, ok := s[lb]; ok && m > n {
				s[lb] = n
			}
		}
	}
	for _, m := range c.models {
		if m.servID == id {
			lower(m.serving)
		}
	}
	for _, r := range c.running {
		if r.id == id {
			lower(r.served)
		}
	}
}

// Serving is the id of the release the model says serves the scenario's
// config.
func (c *Checker) Serving() string { return c.ServingIn(config) }

// ServingIn is the id of the release the model says serves cfg ("":
// none).
func (c *Checker) ServingIn(cfg string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m := c.models[cfg]; m != nil {
		return m.servID
	}
	return ""
}

// need is what load balancer or target group name must keep healthy now,
// and whether the release serving a config names it at all (only then
// may it not go dark): the least any release that may serve needs of it
// (the serving one, or one of the same config being deployed over it).
// withdrawn says a running release takes it out of service on purpose:
// a destroy of the config, or a release that retires it (Retired) once
// its own fleet stands ready (ready[id]: its groups alone hold what it
// needs of every load balancer it keeps, as the world shows); until
// then, as when it rolls back, the serving release's need holds. A
// withdrawn load balancer needs nothing, but may go dark only as its
// groups are detached (drained out), never under a group still attached
// to it. A load balancer only a release being deployed names serves no
// one yet. The caller holds c.mu.
func (c *Checker) need(name string, ready map[string]bool) (n int, named, withdrawn bool) {
	for cfg, m := range c.models {
		if n, named = m.serving[name]; named {
			return c.lowered(cfg, name, n, ready)
		}
	}
	return 0, false, false
}

// lowered is need's for a load balancer the release serving cfg names,
// needing n. The caller holds c.mu.
func (c *Checker) lowered(cfg, name string, n int, ready map[string]bool) (int, bool, bool) {
	for _, r := range c.running {
		if r.config != cfg {
			continue
		}
		m, ok := r.served[name]
		switch {
		case r.served == nil, m == Retired && ready[r.id]:
			return 0, false, true
		case ok && m != Retired && m < n:
			n = m
		}
	}
	return n, true, false
}

// servingOf is the id of the release serving the config whose serving
// release names load balancer name. The caller holds c.mu.
func (c *Checker) servingOf(name string) string {
	for _, m := range c.models {
		if _, ok := m.serving[name]; ok {
			return m.servID
		}
	}
	return ""
}

// ready says, for each running release, whether its own fleet stands
// ready at in: in every load balancer and target group it keeps, the
// instances of its groups (by their ReleaseID tag) alone are at least
// healthy as it needs. A release that keeps none is ready. The caller
// holds c.mu.
func (c *Checker) ready(in sim.Instant) map[string]bool {
	release := map[string]string{} // instance id -> its group's release
	for _, g := range in.Groups {
		for id := range g.Instances {
			release[id] = g.Tags[naming.TagReleaseID]
		}
	}
	healthy := map[string]map[string]int{} // Where -> release -> healthy
	for _, b := range in.Balancers {
		w := Where(b.Region, b.Name)
		for id, state := range b.Targets {
			if state != "healthy" {
				continue
			}
			if healthy[w] == nil {
				healthy[w] = map[string]int{}
			}
			healthy[w][release[id]]++
		}
	}
	ready := map[string]bool{}
	for _, r := range c.running {
		ready[r.id] = true
		for w, m := range r.served {
			if m != Retired && healthy[w][r.id] < m {
				ready[r.id] = false
			}
		}
	}
	return ready
}

func (c *Checker) violate(pred string, at time.Time, format string, args ...any) {
	c.violations = append(c.violations, Violation{Pred: pred, At: at, What: fmt.Sprintf(format, args...)})
}

// Add records violations found outside Observe (the end checks).
func (c *Checker) Add(vs ...Violation) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.violations = append(c.violations, vs...)
}

// Violations are the predicates broken so far, in the order they broke.
func (c *Checker) Violations() []Violation {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.violations)
}

// Changes is how many changes of the world the checker judged.
func (c *Checker) Changes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changes
}

// ferrys says whether a call is ferry's: made with a role session (the
// harness's world events use the owner's unauthenticated clients).
func ferrys(call *sim.Call) bool { return call != nil && call.Principal != "" }

// Observe judges one change of the world: a call of ferry's must not
// break (a) or (b); a change of the world's own (an event, the owner's
// call) is the world's, and only moves the model's picture on.
func (c *Checker) Observe(ch sim.Change) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.changes++
	c.checkPending(ch)
	c.observeStability(ch)
	if !ferrys(ch.Call) {
		return
	}
	what := ch.Call.Service + " " + ch.Call.Op
	c.checkServing(ch, what)
	c.checkDrain(ch, what)
	c.checkDeletes(ch, what)
	c.checkHooks(ch, what)
}

// checkServing is (a) for one call of ferry's. The caller holds c.mu.
func (c *Checker) checkServing(ch sim.Change, what string) {
	before := balancers(ch.Before)
	ready := c.ready(ch.Before)
	for _, b := range ch.After.Balancers {
		need, named, withdrawn := c.need(Where(b.Region, b.Name), ready)
		was, now := before[key(b.Account, b.Region, b.Name)].Healthy(), b.Healthy()
		switch {
		case withdrawn && now == 0 && was > 0 && len(b.Attached) > 0:
			c.violate(PredServing, ch.At, "%s left %s %s dark with group %s still attached: a withdrawal detaches (drains) first", what, b.Kind, b.Name, strings.Join(b.Attached, ", "))
		case !named:
		case now == 0 && was > 0 && len(b.Attached) == 0:
			c.violate(PredServing, ch.At, "%s left %s %s dark with no group attached", what, b.Kind, b.Name)
		case now < was && now < need:
			c.violate(PredServing, ch.At, "%s took %s %s from %d to %d healthy instances, below the %d release %s needs", what, b.Kind, b.Name, was, now, need, c.servingOf(Where(b.Region, b.Name)))
		}
	}
}

// checkDrain is (b): no healthy instance leaves a load balancer that
// drains without draining. The caller holds c.mu.
func (c *Checker) checkDrain(ch sim.Change, what string) {
	after := balancers(ch.After)
	for _, b := range ch.Before.Balancers {
		if !b.Drains {
			continue
		}
		a := after[key(b.Account, b.Region, b.Name)]
		for _, id := range slices.Sorted(maps.Keys(b.Targets)) {
			if _, still := a.Targets[id]; b.Targets[id] == "healthy" && !still {
				c.violate(PredDrain, ch.At, "%s took healthy instance %s out of %s %s without draining", what, id, b.Kind, b.Name)
			}
		}
	}
}

// checkDeletes is (b): no group is deleted while an instance of it is
// healthy or draining in a load balancer or target group. The caller
// holds c.mu.
func (c *Checker) checkDeletes(ch sim.Change, what string) {
	after := groups(ch.After)
	for _, g := range ch.Before.Groups {
		if g.Deleting {
			continue
		}
		if a, ok := after[key(g.Account, g.Region, g.Name)]; ok && !a.Deleting {
			continue
		}
		for _, b := range ch.Before.Balancers {
			for _, id := range slices.Sorted(maps.Keys(b.Targets)) {
				if _, mine := g.Instances[id]; mine && (b.Targets[id] == "healthy" || b.Targets[id] == "draining") {
					c.violate(PredDrain, ch.At, "%s deleted group %s while its instance %s was %s in %s %s", what, g.Name, id, b.Targets[id], b.Kind, b.Name)
				}
			}
		}
	}
}

// checkHooks is (b): no instance in Terminating:Wait (its termination
// hook pending) leaves that state by ferry's call. The caller holds c.mu.
func (c *Checker) checkHooks(ch sim.Change, what string) {
	after := groups(ch.After)
	for _, g := range ch.Before.Groups {
		a := after[key(g.Account, g.Region, g.Name)]
		for _, id := range slices.Sorted(maps.Keys(g.Instances)) {
			if g.Instances[id] == lifecycleWait && a.Instances[id] != lifecycleWait {
				c.violate(PredDrain, ch.At, "%s ended instance %s's pending termination hook (group %s)", what, id, g.Name)
			}
		}
	}
}

const lifecycleWait = "Terminating:Wait"

// checkPending is PredPending for the world after ch, a change of ferry's
// or of the world's own. The caller holds c.mu.
func (c *Checker) checkPending(ch sim.Change) {
	lifecycle := map[string]string{} // instance id -> its lifecycle state
	for _, g := range ch.After.Groups {
		for id, state := range g.Instances {
			if state == "Pending:Wait" || state == "Pending:Proceed" {
				lifecycle[id] = state
			}
		}
	}
	if len(lifecycle) == 0 {
		return
	}
	for _, b := range ch.After.Balancers {
		for _, id := range slices.Sorted(maps.Keys(b.Targets)) {
			k := key(b.Account, b.Region, b.Name) + "/" + id
			if state, waits := lifecycle[id]; waits && b.Targets[id] == "healthy" && !c.pending[k] {
				c.pending[k] = true
				c.violate(PredPending, ch.At, "instance %s in %s is healthy in %s %s", id, state, b.Kind, b.Name)
			}
		}
	}
}

func key(account, region, name string) string { return account + "/" + region + "/" + name }

func balancers(in sim.Instant) map[string]sim.BalancerState {
	out := make(map[string]sim.BalancerState, len(in.Balancers))
	for _, b := range in.Balancers {
		out[key(b.Account, b.Region, b.Name)] = b
	}
	return out
}

func groups(in sim.Instant) map[string]sim.GroupState {
	out := make(map[string]sim.GroupState, len(in.Groups))
	for _, g := range in.Groups {
		out[key(g.Account, g.Region, g.Name)] = g
	}
	return out
}

// ours says whether tags mark a resource ferry made for project/config.
func ours(tags map[string]string, project, config string) bool {
	return tags[naming.TagDeployWith] == "ferry" && tags[naming.TagProjectName] == project && tags[naming.TagConfigName] == config
}

// groupOfAlarm is the group an alarm ferry made is named after
// (naming.AlarmName: "<group>/<policy type>").
func groupOfAlarm(name string) string {
	if i := strings.LastIndex(name, "/"); i >= 0 {
		return name[:i]
	}
	return name
}
