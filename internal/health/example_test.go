package health_test

import (
	"fmt"
	"time"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/health"
)

// An instance counts as healthy only when every source says so: its Auto
// Scaling group, every classic load balancer and every target group the
// release names for the service.
func ExampleAssess() {
	v := health.View{
		Found: true,
		Instances: []health.Instance{
			{ID: "i-1", LifecycleState: health.LifecycleInService, HealthStatus: health.HealthHealthy},
			{ID: "i-2", LifecycleState: health.LifecycleInService, HealthStatus: health.HealthHealthy},
			{ID: "i-3", LifecycleState: "Pending", HealthStatus: health.HealthHealthy},
			{ID: "i-4", LifecycleState: "Terminating:Wait", HealthStatus: "Unhealthy"},
		},
		LoadBalancers: map[string]map[string]string{"web-elb": {"i-1": health.ELBInService, "i-2": health.ELBInService}},
		// i-2 is still in its target group's health checks.
		TargetGroups: map[string]map[string]string{"web-tg": {"i-1": health.TargetHealthy, "i-2": "initial"}},
	}
	s := health.Assess(v, 2)
	fmt.Printf("launched %d, in service %d, healthy %d of %d, terminating %d\n", s.Launched, s.InService, s.Healthy, s.Target, s.Terminating)
	fmt.Println("healthy:", health.Healthy(s))
	// Output:
	// launched 3, in service 2, healthy 1 of 2, terminating 1
	// healthy: false
}

// A service is stable once it has held its healthy target, with nothing
// terminated or replaced, for its stable_seconds: Track carries the
// window from one check to the next, and a terminating instance restarts
// it.
func ExampleTrack() {
	start := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	check := func(prev execution.ServiceHealth, healthy, terminating int, at time.Duration) execution.ServiceHealth {
		cur := execution.ServiceHealth{Target: 2, Healthy: healthy, Launched: 2, Terminating: terminating, StableSeconds: 60}
		cur = health.Track(prev, cur, start.Add(at))
		fmt.Printf("at %v: healthy %v, stable %v, stable in %v\n", at, health.Healthy(cur), health.Stable(cur, start.Add(at)), health.StableIn(cur, start.Add(at)))
		return cur
	}
	s := check(execution.ServiceHealth{}, 1, 0, 0)
	s = check(s, 2, 0, 30*time.Second)
	s = check(s, 2, 1, 60*time.Second) // an instance terminating: the window restarts
	s = check(s, 2, 0, 100*time.Second)
	check(s, 2, 0, 120*time.Second)
	// Output:
	// at 0s: healthy false, stable false, stable in 1m0s
	// at 30s: healthy true, stable false, stable in 1m0s
	// at 1m0s: healthy true, stable false, stable in 1m0s
	// at 1m40s: healthy true, stable false, stable in 20s
	// at 2m0s: healthy true, stable true, stable in 0s
}
