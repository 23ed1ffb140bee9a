package sim

import (
	"maps"
	"slices"
	"time"
)

// Snapshot is a read-only, JSON-serialisable picture of the world at one
// moment, for people and scripts (the local region serves it; tests
// compare it with golden files).
type Snapshot struct {
	Time     time.Time         `json:"time"`
	Accounts []AccountSnapshot `json:"accounts"`
}

// AccountSnapshot is one account-region of a Snapshot.
type AccountSnapshot struct {
	Account         string                   `json:"account"`
	Region          string                   `json:"region"`
	Groups          []GroupSnapshot          `json:"groups"`
	LaunchTemplates []LaunchTemplateSnapshot `json:"launch_templates"`
	LoadBalancers   []RegistrationSnapshot   `json:"load_balancers"`
	TargetGroups    []RegistrationSnapshot   `json:"target_groups"`
	Alarms          []AlarmSnapshot          `json:"alarms"`
}

// GroupSnapshot is one ASG.
type GroupSnapshot struct {
	Name           string            `json:"name"`
	Status         string            `json:"status,omitempty"`
	Tags           map[string]string `json:"tags"`
	Min            int32             `json:"min"`
	Max            int32             `json:"max"`
	Desired        int32             `json:"desired"`
	LaunchTemplate string            `json:"launch_template"`
	LoadBalancers  []string          `json:"load_balancers,omitempty"`
	TargetGroups   []string          `json:"target_groups,omitempty"`
	Policies       []string          `json:"policies,omitempty"`
	// Suspended are the group's suspended processes.
	Suspended []string           `json:"suspended,omitempty"`
	Instances []InstanceSnapshot `json:"instances"`
}

// InstanceSnapshot is one instance of a group. LB maps each load balancer
// or target group name to the instance's state there: healthy, initial,
// unhealthy, draining, or unused (the load balancer does not route to the
// instance's zone, or no load balancer uses the target group).
type InstanceSnapshot struct {
	ID        string            `json:"id"`
	Lifecycle string            `json:"lifecycle"`
	Health    string            `json:"health"`
	Behavior  Behavior          `json:"behavior"`
	Zone      string            `json:"zone"`
	LB        map[string]string `json:"lb,omitempty"`
}

// LaunchTemplateSnapshot is one launch template.
type LaunchTemplateSnapshot struct {
	ID      string            `json:"id"`
	Name    string            `json:"name"`
	ImageID string            `json:"image_id"`
	Tags    map[string]string `json:"tags,omitempty"`
	// Volumes maps the device name of each EBS block device mapping of the
	// default version to its size in GiB.
	Volumes map[string]int32 `json:"volumes,omitempty"`
}

// RegistrationSnapshot is a load balancer or target group and the state of
// each registered instance.
type RegistrationSnapshot struct {
	Name      string            `json:"name"`
	Instances map[string]string `json:"instances"`
	// CutConnections counts the cuts of the traffic it serves: in-flight
	// requests dropped (an instance stopped while it still routed to it,
	// or deregistered without draining), or it going dark while a group
	// or a registered instance still claimed it, or a gap between its
	// withdrawal and its serving again. A withdrawal (every instance
	// drained out, nothing attached: a destroy's end) is none. ferry keeps
	// it 0.
	CutConnections int `json:"cut_connections"`
	// WentDark counts the cuts among CutConnections that were it going
	// dark (or a gap), not connections dropped.
	WentDark int `json:"went_dark,omitempty"`
}

// AlarmSnapshot is one CloudWatch alarm and its state (OK, ALARM,
// INSUFFICIENT_DATA).
type AlarmSnapshot struct {
	Name    string            `json:"name"`
	State   string            `json:"state"`
	Actions []string          `json:"actions,omitempty"`
	Tags    map[string]string `json:"tags,omitempty"`
}

// Snapshot brings the world up to the clock's now and returns its picture:
// every account-region with something ferry made or registered, in sorted
// order. It does not count as an API call.
func (w *World) Snapshot() Snapshot {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.advance(w.clk.Now())
	now := w.now
	snap := Snapshot{Time: now, Accounts: []AccountSnapshot{}}
	for _, aid := range slices.Sorted(maps.Keys(w.accounts)) {
		a := w.accounts[aid]
		for _, rname := range slices.Sorted(maps.Keys(a.regions)) {
			r := a.regions[rname]
			as := AccountSnapshot{
				Account: aid, Region: rname, Groups: []GroupSnapshot{}, LaunchTemplates: []LaunchTemplateSnapshot{},
				LoadBalancers: []RegistrationSnapshot{}, TargetGroups: []RegistrationSnapshot{}, Alarms: []AlarmSnapshot{},
			}
			for _, gname := range slices.Sorted(maps.Keys(r.groups)) {
				as.Groups = append(as.Groups, r.snapGroup(r.groups[gname], now))
			}
			for _, n := range slices.Sorted(maps.Keys(r.lts)) {
				lt := r.lts[n]
				tags := map[string]string{}
				for _, t := range lt.tags {
					tags[deref(t.Key)] = deref(t.Value)
				}
				data := lt.versions[lt.deflt-1]
				var volumes map[string]int32
				for _, m := range data.BlockDeviceMappings {
					if m.Ebs != nil {
						if volumes == nil {
							volumes = map[string]int32{}
						}
						volumes[deref(m.DeviceName)] = deref(m.Ebs.VolumeSize)
					}
				}
				as.LaunchTemplates = append(as.LaunchTemplates, LaunchTemplateSnapshot{
					ID: lt.id, Name: lt.name, ImageID: deref(data.ImageId), Tags: tags, Volumes: volumes,
				})
			}
			for _, n := range slices.Sorted(maps.Keys(r.elbs)) {
				lb := r.elbs[n]
				rs := RegistrationSnapshot{Name: n, Instances: map[string]string{}, CutConnections: lb.serving.cuts, WentDark: lb.serving.dark}
				for id, i := range lb.instances {
					rs.Instances[id] = lb.state(i, now)
				}
				as.LoadBalancers = append(as.LoadBalancers, rs)
			}
			for _, n := range slices.Sorted(maps.Keys(r.tgs)) {
				tg := r.tgs[n]
				rs := RegistrationSnapshot{Name: n, Instances: map[string]string{}, CutConnections: tg.serving.cuts, WentDark: tg.serving.dark}
				for id, t := range tg.targets {
					rs.Instances[id] = tg.state(t, now)
				}
				as.TargetGroups = append(as.TargetGroups, rs)
			}
			for _, n := range slices.Sorted(maps.Keys(r.alarms)) {
				al := r.alarms[n]
				tags := map[string]string{}
				for _, t := range al.tags {
					tags[deref(t.Key)] = deref(t.Value)
				}
				as.Alarms = append(as.Alarms, AlarmSnapshot{Name: n, State: string(al.state.value), Actions: al.input.AlarmActions, Tags: tags})
			}
			if len(as.Groups)+len(as.LaunchTemplates)+len(as.Alarms) == 0 && !registered(as) {
				continue
			}
			snap.Accounts = append(snap.Accounts, as)
		}
	}
	return snap
}

func registered(as AccountSnapshot) bool {
	for _, rs := range append(append([]RegistrationSnapshot(nil), as.LoadBalancers...), as.TargetGroups...) {
		if len(rs.Instances) > 0 {
			return true
		}
	}
	return false
}

func (r *region) snapGroup(g *group, now time.Time) GroupSnapshot {
	gs := GroupSnapshot{
		Name: g.name, Tags: map[string]string{}, Min: g.min, Max: g.max, Desired: g.desired,
		LaunchTemplate: g.lt.name, Instances: []InstanceSnapshot{},
	}
	if g.deleting {
		gs.Status = "Delete in progress"
	}
	for _, t := range g.tags {
		gs.Tags[*t.Key] = *t.Value
	}
	for _, lb := range g.lbs {
		gs.LoadBalancers = append(gs.LoadBalancers, lb.name)
	}
	for _, tg := range g.tgs {
		gs.TargetGroups = append(gs.TargetGroups, tg.name)
	}
	gs.Policies = slices.Sorted(maps.Keys(g.policies))
	for _, p := range g.suspendedProcesses() {
		gs.Suspended = append(gs.Suspended, deref(p.ProcessName))
	}
	for _, i := range g.instances {
		gs.Instances = append(gs.Instances, InstanceSnapshot{
			ID: i.id, Lifecycle: string(i.lifecycle(now)), Health: i.healthStatus(now),
			Behavior: i.behavior, Zone: i.subnet.az, LB: i.lbStates(now),
		})
	}
	return gs
}

// lbStates is i's state at now in each load balancer and target group it
// is registered with (none while a launching hook holds it).
func (i *instance) lbStates(now time.Time) map[string]string {
	out := map[string]string{}
	if i.unregistered(now) {
		return out
	}
	for _, lb := range i.lbs {
		if _, ok := lb.instances[i.id]; ok {
			out[lb.name] = lb.state(i, now)
		}
	}
	for _, tg := range i.tgs {
		if t := tg.targets[i.id]; t != nil {
			out[tg.name] = tg.state(t, now)
		}
	}
	return out
}
