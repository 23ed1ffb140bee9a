package health

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"time"

	"github.com/ferryhq/ferry/internal/execution"
)

// The states each source reports for a healthy instance (AWS API values).
const (
	// LifecycleInService is the Auto Scaling lifecycle state of a running
	// instance.
	LifecycleInService = "InService"
	// HealthHealthy is the Auto Scaling health status of a healthy
	// instance.
	HealthHealthy = "Healthy"
	// ELBInService is the classic load balancer state of a healthy
	// instance.
	ELBInService = "InService"
	// TargetHealthy is the target group state of a healthy target.
	TargetHealthy = "healthy"
)

// Instance is one instance as its Auto Scaling group reports it.
type Instance struct {
	ID string
	// LifecycleState is the ASG's lifecycle state ("Pending", "InService",
	// "Terminating", "Terminating:Wait", ...).
	LifecycleState string
	// HealthStatus is the ASG's health status ("Healthy" or "Unhealthy").
	HealthStatus string
	// Weight is the capacity units the instance counts for: its
	// WeightedCapacity in a group with a weighted mixed instances policy;
	// 0 counts 1.
	Weight int
}

// Units is what the instance counts toward its group's capacity.
func (i Instance) Units() int { return max(i.Weight, 1) }

// Terminating reports whether the ASG is terminating (or has terminated)
// the instance: its lifecycle state is Terminating, Terminating:Wait,
// Terminating:Proceed or Terminated.
func (i Instance) Terminating() bool {
	return strings.HasPrefix(i.LifecycleState, "Terminat")
}

// View is everything known about one service's new group at one check.
type View struct {
	// Found is false when the group was not found (not yet visible, or
	// deleted): nothing is launched and nothing is healthy.
	Found     bool
	Instances []Instance
	// LoadBalancers maps each classic load balancer the service uses to
	// the state of each instance registered in it ("InService",
	// "OutOfService", "Unknown"). An instance absent from the map of a
	// load balancer is not healthy.
	LoadBalancers map[string]map[string]string
	// TargetGroups maps each target group the service uses to the state
	// of each target in it ("healthy", "initial", "unhealthy", ...). An
	// instance absent from the map of a target group is not healthy.
	TargetGroups map[string]map[string]string
}

// Assess merges v into the service's counts. target is how many healthy
// capacity units make the service healthy (see package capacity).
//
// Launched, InService and Healthy are capacity units, as Auto Scaling
// counts a group's desired capacity: an instance counts its weight (1
// unless the group's mixed instances policy weighs its type), so a
// service is healthy when the weighted capacity in service meets its
// target, however many instances make it up.
//
//   - Terminating counts the instances the ASG is terminating.
//   - Launched counts the other instances (pending or running).
//   - Healthy counts the instances that are InService and Healthy in the
//     ASG, InService in every classic load balancer and healthy in every
//     target group.
func Assess(v View, target int) execution.ServiceHealth {
	r := execution.ServiceHealth{Target: target}
	if !v.Found {
		return r
	}
	for _, inst := range v.Instances {
		if inst.Terminating() {
			r.Terminating++
			continue
		}
		r.Launched += inst.Units()
		if inst.LifecycleState == LifecycleInService {
			r.InService += inst.Units()
		}
		if v.Healthy(inst) {
			r.Healthy += inst.Units()
		}
	}
	return r
}

// Healthy reports whether inst is healthy in v: InService and Healthy in
// its group, InService in every classic load balancer and healthy in
// every target group of v.
func (v View) Healthy(inst Instance) bool {
	if inst.LifecycleState != LifecycleInService || inst.HealthStatus != HealthHealthy {
		return false
	}
	for _, states := range v.LoadBalancers {
		if states[inst.ID] != ELBInService {
			return false
		}
	}
	for _, states := range v.TargetGroups {
		if states[inst.ID] != TargetHealthy {
			return false
		}
	}
	return true
}

// Healthy reports whether a service's counts make it healthy: at least
// Target healthy instances, seen at this check. A service whose target is
// 0 is healthy at once; one whose group was not visible is not.
func Healthy(s execution.ServiceHealth) bool {
	return !s.Missing && s.Healthy >= s.Target
}

// Stable reports whether a service is healthy at now and has been for its
// stability window without a break: at its target since HealthySince,
// at least StableSeconds ago. A window of 0 is held once the service is
// at its target, whenever the check that saw it stamped HealthySince
// (which may be after now: see Track).
func Stable(s execution.ServiceHealth, now time.Time) bool {
	if !Healthy(s) || s.HealthySince == nil {
		return false
	}
	return s.StableSeconds <= 0 || !now.Before(s.HealthySince.Add(time.Duration(s.StableSeconds)*time.Second))
}

// Track carries a service's stability window from its previous check
// (prev) to this one (cur, whose counts, Terminated and Instances are
// this check's), whose reads were done at now (a window opened at the
// check's start would count its reads' time as held):
//
//   - below its target, the window is closed (HealthySince nil);
//   - an instance terminating, or one more terminated since the previous
//     check, restarts it at now (an instance replaced, a crash, a
//     scale-in);
//   - otherwise it goes on from the previous check, or starts at now.
//
// A check that could not see the group (Missing) keeps the previous
// window as it was: it is no evidence either way.
func Track(prev, cur execution.ServiceHealth, now time.Time) execution.ServiceHealth {
	if cur.Missing {
		cur.HealthySince, cur.Terminated, cur.Instances = prev.HealthySince, prev.Terminated, prev.Instances
		return cur
	}
	disturbed := cur.Terminating > 0 || cur.Terminated > prev.Terminated
	switch {
	case !Healthy(cur):
		cur.HealthySince = nil
	case disturbed || prev.HealthySince == nil:
		at := now.UTC()
		cur.HealthySince = &at
	default:
		cur.HealthySince = prev.HealthySince
	}
	return cur
}

// StableIn is how long a service must still hold its target to be
// stable at now: 0 when it is stable, its whole window when it is not
// healthy.
func StableIn(s execution.ServiceHealth, now time.Time) time.Duration {
	window := time.Duration(s.StableSeconds) * time.Second
	switch {
	case !Healthy(s) || s.HealthySince == nil:
		return window
	case Stable(s, now):
		return 0
	}
	return s.HealthySince.Add(window).Sub(now)
}

// Digest is a short digest of a set of instance ids, whatever their
// order: equal digests mean (all but surely) the same instances.
func Digest(ids []string) string {
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	sum := sha256.Sum256([]byte(strings.Join(sorted, "\n")))
	return hex.EncodeToString(sum[:8])
}

// Imminent reports whether every service of report below its target has
// as many instances in service in its group as its target: they wait
// only for their load balancers' health checks, so the target may be
// reached at any moment. It is false when every service is at its target
// (or one was not seen).
func Imminent(report map[string]execution.ServiceHealth) bool {
	below := false
	for _, s := range report {
		switch {
		case s.Missing:
			return false
		case Healthy(s):
		case s.InService < s.Target:
			return false
		default:
			below = true
		}
	}
	return below
}

// AllStable reports whether every service in report is stable at now. An
// empty report is.
func AllStable(report map[string]execution.ServiceHealth, now time.Time) bool {
	return len(Unstable(report, now)) == 0
}

// Unstable returns the sorted names of the services in report that are
// not stable at now.
func Unstable(report map[string]execution.ServiceHealth, now time.Time) []string {
	var names []string
	for name, s := range report {
		if !Stable(s, now) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}
