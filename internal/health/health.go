package health

import (
	"slices"
	"strings"

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
}

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
// instances make the service healthy (see package capacity).
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
		r.Launched++
		if healthy(inst, v) {
			r.Healthy++
		}
	}
	return r
}

func healthy(inst Instance, v View) bool {
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
// Target healthy instances. A service whose target is 0 is healthy at once.
func Healthy(s execution.ServiceHealth) bool {
	return s.Healthy >= s.Target
}

// AllHealthy reports whether every service in report is healthy. An empty
// report is healthy.
func AllHealthy(report map[string]execution.ServiceHealth) bool {
	for _, s := range report {
		if !Healthy(s) {
			return false
		}
	}
	return true
}

// Unhealthy returns the sorted names of the services in report that are
// not healthy.
func Unhealthy(report map[string]execution.ServiceHealth) []string {
	var names []string
	for name, s := range report {
		if !Healthy(s) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}
