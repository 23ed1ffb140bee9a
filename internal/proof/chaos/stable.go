package chaos

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
)

// PredStable: the serving release's fleet starts to leave (the first
// call of a release's own role session that takes one of its instances
// out of service: healthy in a load balancer or target group before, not
// after; in service in its group before, gone or terminating after) only
// once the release's own fleet has stood ready (see Checker.ready) for
// the release's stability window, counted from the first moment the
// world showed it ready and from the last moment an instance of its
// groups terminated or went. The world alone decides: when the release
// was ready and when its instances went are what the world showed, and
// whose call it was is its role session (naming.RoleSessionName, as
// CloudTrail shows it). A termination seen at the very instant of the
// swap may have come after the reads that judged it (a Lambda's calls
// share that instant here), and is not held against it.
const PredStable = "stable"

// stability is what the checker follows of a running release for
// PredStable.
type stability struct {
	// window is the release's shortest stability window (Window): 0
	// judges nothing.
	window time.Duration
	// readyAt is the first moment the world showed the release's fleet
	// ready (zero: not yet); lostAt the last moment an instance of its
	// groups terminated or went, seen at the change of lostSeen, and
	// lostBefore the last seen at an earlier instant than that.
	readyAt, lostAt, lostSeen, lostBefore time.Time
	// swapped says its swap was judged.
	swapped bool
}

// lose records a loss at (the earliest it can have been) seen at the
// change of instant seen.
func (s *stability) lose(at, seen time.Time) {
	if !s.lostSeen.Equal(seen) {
		s.lostBefore = s.lostAt
	}
	s.lostAt, s.lostSeen = at, seen
}

// lostBy is the last loss seen at an instant before t (zero: none): a
// loss seen at t itself may have come after a read at t.
func (s stability) lostBy(t time.Time) time.Time {
	if s.lostSeen.Equal(t) {
		return s.lostBefore
	}
	return s.lostAt
}

// Window records the stability window of the release the execution name
// runs: the shortest of its services' (stable_seconds, defaults
// applied). Without one, PredStable judges nothing of it.
func (c *Checker) Window(name string, w time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.running[name]; ok {
		r.stable.window = w
		c.running[name] = r
	}
}

// Swaps is how many swaps PredStable judged: releases whose own role
// session took the serving release's instances out of service.
func (c *Checker) Swaps() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.swaps
}

// windowOf is rel's shortest stability window over its services, its
// defaults applied as the deployer applies them (0 for a destroy, or a
// release of no service).
func windowOf(rel *release.Release) time.Duration {
	if rel.Destroy {
		return 0
	}
	rel = rel.Clone()
	rel.ApplyDefaults()
	var w time.Duration
	for i, svc := range rel.ServiceNames() {
		s := time.Duration(rel.ServiceStableSeconds(svc)) * time.Second
		if i == 0 || s < w {
			w = s
		}
	}
	return w
}

// observeStability moves each running release's readiness and losses on
// with ch, a change of the world's or of ferry's, and judges PredStable
// on a call of ferry's: on the world as the call found it, before what
// the call itself changed. The caller holds c.mu.
func (c *Checker) observeStability(ch sim.Change) {
	// The world's health is a function of time between its changes (an
	// instance passes its checks at a moment no change reports): what a
	// change shows became so after the change before it (c.lastAt), the
	// earliest it can have been so. An event of the world's reports no
	// Before: what it took away shows against the last change's After.
	since, last := c.lastAt, c.last
	if since.IsZero() {
		since = ch.At
	}
	c.lastAt, c.last = ch.At, ch.After
	before, after := readiness{c: c, in: ch.Before}, readiness{c: c, in: ch.After}
	for name, r := range c.running {
		if r.stable.window <= 0 {
			continue
		}
		if ch.Call != nil {
			before.see(&r, since)
		}
		if !r.stable.swapped && ferrys(ch.Call) && actsFor(ch.Call, r) && c.takesServing(ch, r) {
			r.stable.swapped = true
			c.swaps++
			c.judgeSwap(ch, r)
		}
		after.see(&r, since)
		if lostFrom(last, ch.After, r) {
			r.stable.lose(since, ch.At)
		}
		c.running[name] = r
	}
}

// readiness is Checker.ready of one instant, worked out once, when a
// release not yet ready asks.
type readiness struct {
	c     *Checker
	in    sim.Instant
	ready map[string]bool
}

// see sets r's readyAt to since if r was never ready before and is at
// the instant.
func (x *readiness) see(r *running, since time.Time) {
	if !r.stable.readyAt.IsZero() {
		return
	}
	if x.ready == nil {
		x.ready = x.c.ready(x.in)
	}
	if x.ready[r.id] {
		r.stable.readyAt = since
	}
}

// judgeSwap is PredStable at the swap ch of r. The caller holds c.mu.
func (c *Checker) judgeSwap(ch sim.Change, r running) {
	what := ch.Call.Service + " " + ch.Call.Op
	s := r.stable
	switch {
	case s.readyAt.IsZero():
		c.violate(PredStable, ch.At, "%s, for release %s, took the serving release's instances out of service before its own fleet was ever ready", what, r.id)
	case ch.At.Sub(s.readyAt) < s.window:
		c.violate(PredStable, ch.At, "%s, for release %s, took the serving release's instances out of service %s after its fleet was first ready, within its %s stability window",
			what, r.id, ch.At.Sub(s.readyAt), s.window)
	case !s.lostBy(ch.At).IsZero() && ch.At.Sub(s.lostBy(ch.At)) < s.window:
		c.violate(PredStable, ch.At, "%s, for release %s, took the serving release's instances out of service %s after an instance of its own fleet went, within its %s stability window",
			what, r.id, ch.At.Sub(s.lostBy(ch.At)), s.window)
	}
}

// actsFor says whether call was made by a role session of release r
// (naming.RoleSessionName ends an assumed-role session's ARN).
func actsFor(call *sim.Call, r running) bool {
	return strings.HasSuffix(call.Principal, "/"+naming.RoleSessionName(project, r.config, r.id))
}

// takesServing says whether ch takes an instance of the release serving
// r's config out of service: healthy in a load balancer or target group
// before and not after, or in service in its group before and gone or
// terminating after. The caller holds c.mu.
func (c *Checker) takesServing(ch sim.Change, r running) bool {
	m := c.models[r.config]
	if m == nil || m.servID == "" || m.servID == r.id {
		return false
	}
	serving, after := map[string]bool{}, groups(ch.After)
	for _, g := range ch.Before.Groups {
		if g.Tags[naming.TagReleaseID] == m.servID && ours(g.Tags, project, r.config) {
			for id, state := range g.Instances {
				serving[id] = true
				if state == "InService" && !inService(after, g, id) {
					return true
				}
			}
		}
	}
	lbs := balancers(ch.After)
	for _, b := range ch.Before.Balancers {
		a := lbs[key(b.Account, b.Region, b.Name)]
		for id, state := range b.Targets {
			if serving[id] && state == "healthy" && a.Targets[id] != "healthy" {
				return true
			}
		}
	}
	return false
}

// inService says whether instance id of group g is still in its group
// among after (groups), and not terminating.
func inService(after map[string]sim.GroupState, g sim.GroupState, id string) bool {
	a, ok := after[key(g.Account, g.Region, g.Name)]
	if !ok {
		return false
	}
	state, ok := a.Instances[id]
	return ok && !strings.HasPrefix(state, "Terminating")
}

// lostFrom says whether an instance of a group of release r not
// terminating at last (the world's previous change) is gone, or
// terminating, at now: a termination counts from its start. The group is r's config's: a promotion deploys one release id to
// each of its stages' configs.
func lostFrom(last, now sim.Instant, r running) bool {
	after := groups(now)
	for _, g := range last.Groups {
		if g.Tags[naming.TagReleaseID] != r.id || !ours(g.Tags, project, r.config) {
			continue
		}
		a := after[key(g.Account, g.Region, g.Name)]
		for _, inst := range slices.Sorted(maps.Keys(g.Instances)) {
			if strings.HasPrefix(g.Instances[inst], "Terminating") {
				continue // went already: its termination's end is no new loss
			}
			if state, still := a.Instances[inst]; !still || strings.HasPrefix(state, "Terminating") {
				return true
			}
		}
	}
	return false
}
