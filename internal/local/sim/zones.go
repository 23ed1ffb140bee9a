package sim

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// zoneCounts counts g's live instances per zone of the group, every zone
// of its subnets listed (zero when empty).
func (g *group) zoneCounts() map[string]int {
	counts := map[string]int{}
	for _, s := range g.subnets {
		counts[s.az] += 0
	}
	for _, i := range g.instances {
		if i.terminating.IsZero() {
			counts[i.subnet.az]++
		}
	}
	return counts
}

// rebalance evens g out between its zones, as Auto Scaling's AZRebalance
// does when a group is unbalanced (a zone that was short of capacity
// recovered, say): it launches an instance in the zone with the fewest
// (one that has capacity) before it terminates one in the zone with the
// most, once the new instance is in service, and goes on until no two
// zones differ by more than one; a step whose new instance is gone before
// it is in service terminates none. Nothing happens while AZRebalance,
// Launch or Terminate is suspended, or while a rebalance step is under
// way.
func (r *region) rebalance(g *group, t time.Time) {
	if g.deleting || g.rebalancing || g.suspended[ProcessAZRebalance] || g.suspended[ProcessLaunch] || g.suspended[ProcessTerminate] {
		return
	}
	counts := g.zoneCounts()
	zones := slices.Sorted(maps.Keys(counts))
	var low, high string
	for _, z := range zones {
		if until, ok := r.impaired[z]; ok && t.Before(until) {
			continue
		}
		if low == "" || counts[z] < counts[low] {
			low = z
		}
	}
	for _, z := range zones {
		if high == "" || counts[z] > counts[high] {
			high = z
		}
	}
	if low == "" || counts[high]-counts[low] <= 1 {
		return
	}
	live := g.live()
	cause := fmt.Sprintf("At %s instances were launched to balance instances in zones %s %s with other zones resulting in more than desired number of instances in the group.  "+
		"At %s an instance was started in response to a difference between desired and actual capacity, increasing the capacity from %d to %d.",
		stamp(t), low, high, stamp(t), live, live+1)
	if !r.launch(g, t, cause) {
		return
	}
	fresh := g.instances[len(g.instances)-1]
	g.rebalancing = true
	r.atReady(fresh, false, func(at time.Time) { r.endRebalanceStep(g, fresh, high, at) })
}

// endRebalanceStep ends the rebalance step of g that launched fresh, at
// fresh's boot: it terminates the oldest instance of zone high, then
// rebalances on. A step whose new instance is gone (scaled in, killed)
// before it came into service, or whose group is no longer above its
// desired capacity, terminates none: rebalancing launches before it
// terminates, so it never takes the group below its capacity.
func (r *region) endRebalanceStep(g *group, fresh *instance, high string, at time.Time) {
	g.rebalancing = false
	if r.groups[g.name] != g || g.deleting {
		return
	}
	if !fresh.terminating.IsZero() || g.live() <= int(g.desired) {
		r.rebalance(g, at)
		return
	}
	var victim *instance
	for _, i := range g.instances {
		if i.terminating.IsZero() && i.subnet.az == high && i != fresh && (victim == nil || i.launched.Before(victim.launched)) {
			victim = i
		}
	}
	if victim != nil && !g.suspended[ProcessTerminate] && !g.suspended[ProcessAZRebalance] {
		n := g.live()
		r.terminate(victim, at, false, fmt.Sprintf("At %s an instance was taken out of service in response to a difference between desired and actual capacity, shrinking the capacity from %d to %d.  At %s instance %s was selected for termination.",
			stamp(at), n, n-1, stamp(at), victim.id))
	}
	r.rebalance(g, at)
}

// SetLoadBalancerZones changes the zones a load balancer of an
// account-region routes to (a classic load balancer, or a v2 one, by name),
// as a person changing it in the console would: instances already
// registered in other zones stop being served. It is not an API call.
func (w *World) SetLoadBalancerZones(account, regionName, name string, zones []string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.advance(w.clk.Now())
	r := w.region(account, regionName)
	if r == nil {
		return fmt.Errorf("sim: no account %s", account)
	}
	zones = slices.Clone(zones)
	slices.Sort(zones)
	switch {
	case r.elbs[name] != nil:
		r.elbs[name].zones = zones
	case r.lbs[name] != nil:
		r.lbs[name].zones = zones
	default:
		return fmt.Errorf("sim: no load balancer %s in %s/%s", name, account, regionName)
	}
	return nil
}
