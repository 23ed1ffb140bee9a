package health

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ferryhq/ferry/internal/execution"
)

func inService(id string) Instance {
	return Instance{ID: id, LifecycleState: "InService", HealthStatus: "Healthy"}
}

func TestAssess(t *testing.T) {
	tests := []struct {
		name   string
		view   View
		target int
		want   execution.ServiceHealth
	}{
		{
			name:   "group not found",
			view:   View{Found: false, Instances: []Instance{inService("i-1")}},
			target: 1,
			want:   execution.ServiceHealth{Target: 1},
		},
		{
			name:   "no load balancers: the ASG decides",
			view:   View{Found: true, Instances: []Instance{inService("i-1"), inService("i-2")}},
			target: 2,
			want:   execution.ServiceHealth{Launched: 2, Healthy: 2, Target: 2},
		},
		{
			name: "pending and unhealthy are launched, not healthy",
			view: View{Found: true, Instances: []Instance{
				{ID: "i-1", LifecycleState: "Pending", HealthStatus: "Healthy"},
				{ID: "i-2", LifecycleState: "InService", HealthStatus: "Unhealthy"},
				inService("i-3"),
			}},
			target: 2,
			want:   execution.ServiceHealth{Launched: 3, Healthy: 1, Target: 2},
		},
		{
			name: "terminating states",
			view: View{Found: true, Instances: []Instance{
				{ID: "i-1", LifecycleState: "Terminating", HealthStatus: "Unhealthy"},
				{ID: "i-2", LifecycleState: "Terminating:Wait", HealthStatus: "Unhealthy"},
				{ID: "i-3", LifecycleState: "Terminated", HealthStatus: "Unhealthy"},
				inService("i-4"),
			}},
			target: 1,
			want:   execution.ServiceHealth{Launched: 1, Healthy: 1, Terminating: 3, Target: 1},
		},
		{
			name: "every source must agree",
			view: View{
				Found:     true,
				Instances: []Instance{inService("i-1"), inService("i-2"), inService("i-3"), inService("i-4")},
				LoadBalancers: map[string]map[string]string{
					"web-elb": {"i-1": "InService", "i-2": "OutOfService", "i-3": "InService", "i-4": "InService"},
				},
				TargetGroups: map[string]map[string]string{
					"web-tg": {"i-1": "healthy", "i-2": "healthy", "i-3": "initial"},
				},
			},
			target: 2,
			want:   execution.ServiceHealth{Launched: 4, Healthy: 1, Target: 2},
		},
		{
			name: "two target groups",
			view: View{
				Found:     true,
				Instances: []Instance{inService("i-1"), inService("i-2")},
				TargetGroups: map[string]map[string]string{
					"a": {"i-1": "healthy", "i-2": "healthy"},
					"b": {"i-1": "healthy", "i-2": "unhealthy"},
				},
			},
			target: 1,
			want:   execution.ServiceHealth{Launched: 2, Healthy: 1, Target: 1},
		},
		{
			name: "old instances in the load balancer do not count",
			view: View{
				Found:         true,
				Instances:     []Instance{inService("i-new")},
				LoadBalancers: map[string]map[string]string{"elb": {"i-old-1": "InService", "i-old-2": "InService"}},
			},
			target: 1,
			want:   execution.ServiceHealth{Launched: 1, Healthy: 0, Target: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Assess(tt.view, tt.target))
		})
	}
}

func TestHealthy(t *testing.T) {
	report := map[string]execution.ServiceHealth{
		"web":    {Healthy: 3, Target: 3},
		"worker": {Healthy: 1, Target: 2},
		"cron":   {Healthy: 0, Target: 0},
		"api":    {Healthy: 0, Target: 1},
	}
	assert.True(t, Healthy(report["web"]))
	assert.True(t, Healthy(report["cron"]))
	assert.False(t, Healthy(report["worker"]))
	assert.False(t, AllHealthy(report))
	assert.Equal(t, []string{"api", "worker"}, Unhealthy(report))
	delete(report, "worker")
	delete(report, "api")
	assert.True(t, AllHealthy(report))
	assert.Empty(t, Unhealthy(report))
	assert.True(t, AllHealthy(nil))
}
