package sim

import (
	"maps"
	"slices"
	"strings"
	"time"
)

// Change is one instant at which the world may have changed, as an
// observer (World.Observe) sees it: after an event of the world's own ran
// (Call nil: an instance booted or died, a draining ended, an alarm
// scaled a group), or after a call that may change the world was answered
// (Before is the world at the call's instant just before it ran, After
// just after). Calls whose operation only reads (Describe*, Get*, List*)
// are not reported.
type Change struct {
	At time.Time
	// Call is the call answered: its Principal says who made it (a role
	// session of ferry's, or "" for the world's owner).
	Call          *Call
	Before, After Instant
}

// Instant is what serves at one instant: every group with its instances'
// lifecycle states, and every classic load balancer and target group with
// the state of each registered instance and the groups attached to it.
type Instant struct {
	Groups    []GroupState
	Balancers []BalancerState
}

// GroupState is one Auto Scaling group at an instant.
type GroupState struct {
	Account, Region, Name string
	Tags                  map[string]string
	// Deleting is true once DeleteAutoScalingGroup was accepted.
	Deleting bool
	// Instances maps each instance id to its lifecycle state (Pending,
	// InService, Terminating, Terminating:Wait, Terminating:Proceed).
	Instances map[string]string
}

// BalancerState is one classic load balancer (Kind "elb") or target group
// (Kind "target-group") at an instant.
type BalancerState struct {
	Account, Region, Name, Kind string
	// Drains says whether a deregistered instance drains before it leaves
	// (a classic load balancer's connection draining; a target group
	// always drains for its deregistration delay).
	Drains bool
	// Attached are the groups attached to it (not being deleted).
	Attached []string
	// Targets maps each registered instance to its state: healthy,
	// initial, unhealthy, draining (deregistered, finishing its
	// requests), or unused (in a zone no load balancer routes to).
	Targets map[string]string
}

// Healthy is how many registered instances pass the health check and
// receive traffic.
func (b BalancerState) Healthy() int {
	n := 0
	for _, s := range b.Targets {
		if s == "healthy" {
			n++
		}
	}
	return n
}

// Observe makes fn see every Change from now on (nil: none), in the order
// the world makes them, while the world is locked: fn must not call the
// world. It is how a checker judges every instant the world changes, not
// only the ones a handler looks at.
func (w *World) Observe(fn func(Change)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.observer = fn
}

// mutating says whether op may change the world (it does not only read).
func mutating(op string) bool {
	return !strings.HasPrefix(op, "Describe") && !strings.HasPrefix(op, "Get") && !strings.HasPrefix(op, "List")
}

// observeEvent reports the world after an event. The caller holds w.mu.
func (w *World) observeEvent() {
	if w.observer != nil {
		w.observer(Change{At: w.now, After: w.instant()})
	}
}

// observeBefore keeps the world before a mutating call runs. The caller
// holds w.mu.
func (w *World) observeBefore(op string) {
	w.before = nil
	if w.observer != nil && mutating(op) {
		in := w.instant()
		w.before = &in
	}
}

// observeCall reports a mutating call once answered. The caller holds w.mu.
func (w *World) observeCall() {
	if w.observer == nil || w.before == nil {
		return
	}
	before := *w.before
	w.before = nil
	var call *Call
	if c := w.calls.current(); c != nil {
		cc := *c
		call = &cc
	}
	w.observer(Change{At: w.now, Call: call, Before: before, After: w.instant()})
}

// instant is the world's Instant at w.now. The caller holds w.mu.
func (w *World) instant() Instant {
	var in Instant
	now := w.now
	for _, aid := range slices.Sorted(maps.Keys(w.accounts)) {
		a := w.accounts[aid]
		for _, rname := range slices.Sorted(maps.Keys(a.regions)) {
			r := a.regions[rname]
			attachedELB, attachedTG := map[*classicLB][]string{}, map[*targetGroup][]string{}
			for _, gname := range slices.Sorted(maps.Keys(r.groups)) {
				g := r.groups[gname]
				gs := GroupState{Account: aid, Region: rname, Name: g.name, Tags: map[string]string{}, Deleting: g.deleting, Instances: map[string]string{}}
				for _, t := range g.tags {
					gs.Tags[deref(t.Key)] = deref(t.Value)
				}
				for _, i := range g.instances {
					gs.Instances[i.id] = string(i.lifecycle(now))
				}
				in.Groups = append(in.Groups, gs)
				if g.deleting {
					continue
				}
				for _, lb := range g.lbs {
					attachedELB[lb] = append(attachedELB[lb], g.name)
				}
				for _, tg := range g.tgs {
					attachedTG[tg] = append(attachedTG[tg], g.name)
				}
			}
			for _, n := range slices.Sorted(maps.Keys(r.elbs)) {
				lb := r.elbs[n]
				b := BalancerState{Account: aid, Region: rname, Name: n, Kind: "elb", Drains: lb.drain > 0, Attached: attachedELB[lb], Targets: map[string]string{}}
				for id, i := range lb.instances {
					b.Targets[id] = lb.state(i, now)
					if _, leaving := lb.leaving[id]; leaving {
						b.Targets[id] = "draining"
					}
				}
				in.Balancers = append(in.Balancers, b)
			}
			for _, n := range slices.Sorted(maps.Keys(r.tgs)) {
				tg := r.tgs[n]
				b := BalancerState{Account: aid, Region: rname, Name: n, Kind: "target-group", Drains: true, Attached: attachedTG[tg], Targets: map[string]string{}}
				for id, t := range tg.targets {
					b.Targets[id] = tg.state(t, now)
				}
				in.Balancers = append(in.Balancers, b)
			}
		}
	}
	return in
}
