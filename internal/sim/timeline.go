package sim

import (
	"sort"
	"time"
)

// InstanceTimes are the moments of one instance's life, as the world
// scheduled them when it launched the instance. A moment may lie in the
// future of the world's clock.
type InstanceTimes struct {
	ID string `json:"id"`
	// Launched is when the group launched the instance.
	Launched time.Time `json:"launched"`
	// InService is when it leaves Pending (boots).
	InService time.Time `json:"in_service"`
	// HealthyAt is when its load balancer health checks pass; zero for a
	// never-healthy instance, whose checks never pass.
	HealthyAt time.Time `json:"healthy_at,omitzero"`
	// Terminating is when it started terminating; zero while it lives.
	Terminating time.Time `json:"terminating,omitzero"`
}

// InstanceTimes brings the world up to the clock's now and returns the
// life times of every instance the named group has now (terminating ones
// included), sorted by id. found is false when the account-region has no
// group of that name. Like Snapshot, it is for tests and benchmarks (when
// did the last needed instance become healthy?) and does not count as an
// API call.
func (w *World) InstanceTimes(account, region, group string) (times []InstanceTimes, found bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.advance(w.clk.Now())
	a := w.accounts[account]
	if a == nil {
		return nil, false
	}
	r := a.regions[region]
	if r == nil {
		return nil, false
	}
	g := r.groups[group]
	if g == nil {
		return nil, false
	}
	times = make([]InstanceTimes, 0, len(g.instances))
	for _, i := range g.instances {
		t := InstanceTimes{ID: i.id, Launched: i.launched, InService: i.bootAt, Terminating: i.terminating}
		if i.behavior != NeverHealthy {
			t.HealthyAt = i.healthyAt
		}
		times = append(times, t)
	}
	sort.Slice(times, func(a, b int) bool { return times[a].ID < times[b].ID })
	return times, true
}
