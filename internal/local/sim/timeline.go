package sim

import (
	"maps"
	"slices"
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

// GroupRecord is the life of one Auto Scaling group, as the world
// recorded it: when it was created and deleted, its tags and load
// balancers, and every instance it ever had.
type GroupRecord struct {
	Account, Region, Name string
	Tags                  map[string]string
	// LoadBalancers and TargetGroups are the names of the group's classic
	// load balancers and target groups.
	LoadBalancers, TargetGroups []string
	Created                     time.Time
	// DeleteRequested is when DeleteAutoScalingGroup was accepted, Gone
	// when the group vanished (zero: not yet).
	DeleteRequested, Gone time.Time
	Instances             []InstanceRecord
}

// InstanceRecord is the life of one instance.
type InstanceRecord struct {
	ID, Zone string
	Launched time.Time
	// Serving is when the instance began to serve: in service in its
	// group and healthy in every load balancer and target group of the
	// group that routes to its zone; zero when it never does (a
	// never-healthy instance, or one in a zone some load balancer of its
	// group does not route to). Until is when it stopped (it started
	// terminating), zero while it lives.
	Serving, Until time.Time
	// Terminating is when it started terminating, Gone when it left its
	// group; zero while not.
	Terminating, Gone time.Time
}

// ServesAt reports whether the instance serves at t.
func (i InstanceRecord) ServesAt(t time.Time) bool {
	return !i.Serving.IsZero() && !t.Before(i.Serving) && (i.Until.IsZero() || t.Before(i.Until))
}

// Fleet brings the world up to the clock's now and returns the life of
// every group the world has had (gone groups included) in every
// account-region, sorted by account, region and name: the record a test
// checks at every instant (how many instances of each group served at
// each moment), not only at the end. Like Snapshot, it is not an API call.
func (w *World) Fleet() []GroupRecord {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.advance(w.clk.Now())
	var out []GroupRecord
	for _, aid := range slices.Sorted(maps.Keys(w.accounts)) {
		a := w.accounts[aid]
		for _, rname := range slices.Sorted(maps.Keys(a.regions)) {
			r := a.regions[rname]
			groups := append(slices.Clone(r.retired), r.liveGroups()...)
			byGroup := map[*group][]*instance{}
			for _, i := range r.history {
				byGroup[i.g] = append(byGroup[i.g], i)
			}
			for _, g := range groups {
				rec := GroupRecord{
					Account: aid, Region: rname, Name: g.name, Tags: map[string]string{}, Created: g.created,
					DeleteRequested: g.deleteRequested, Gone: g.goneAt,
				}
				for _, t := range g.tags {
					rec.Tags[deref(t.Key)] = deref(t.Value)
				}
				for _, lb := range g.lbs {
					rec.LoadBalancers = append(rec.LoadBalancers, lb.name)
				}
				for _, tg := range g.tgs {
					rec.TargetGroups = append(rec.TargetGroups, tg.name)
				}
				for _, i := range byGroup[g] {
					rec.Instances = append(rec.Instances, i.record(g))
				}
				out = append(out, rec)
			}
		}
	}
	sort.SliceStable(out, func(x, y int) bool {
		if out[x].Account != out[y].Account {
			return out[x].Account < out[y].Account
		}
		if out[x].Region != out[y].Region {
			return out[x].Region < out[y].Region
		}
		return out[x].Name < out[y].Name
	})
	return out
}

// record is the instance's life as an InstanceRecord.
func (i *instance) record(g *group) InstanceRecord {
	rec := InstanceRecord{ID: i.id, Zone: i.subnet.az, Launched: i.launched, Terminating: i.terminating, Gone: i.gone, Until: i.terminating}
	serves := i.behavior != NeverHealthy
	for _, lb := range g.lbs {
		serves = serves && lb.routes(i)
	}
	for _, tg := range g.tgs {
		serves = serves && tg.notInUse(i) == ""
	}
	if serves {
		rec.Serving = i.bootAt
		if len(g.lbs)+len(g.tgs) > 0 && i.healthyAt.After(rec.Serving) {
			rec.Serving = i.healthyAt
		}
		if !rec.Until.IsZero() && !rec.Serving.Before(rec.Until) {
			rec.Serving = time.Time{}
		}
	}
	return rec
}
