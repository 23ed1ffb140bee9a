package health_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ferryhq/ferry/internal/health"
)

// TestAssessCountsWeightedUnits: in a group whose mixed instances policy
// weighs its types, Launched, InService and Healthy are capacity units,
// as Auto Scaling counts the group's desired capacity ("Configure an
// Auto Scaling group to use instance weights", Auto Scaling User Guide);
// Terminating stays a count of instances (max_terms counts instances).
func TestAssessCountsWeightedUnits(t *testing.T) {
	v := health.View{Found: true, Instances: []health.Instance{
		{ID: "i-1", LifecycleState: health.LifecycleInService, HealthStatus: health.HealthHealthy, Weight: 2},
		{ID: "i-2", LifecycleState: health.LifecycleInService, HealthStatus: health.HealthHealthy, Weight: 1},
		{ID: "i-3", LifecycleState: "Pending", HealthStatus: health.HealthHealthy, Weight: 2},
		{ID: "i-4", LifecycleState: "Terminating", HealthStatus: "Unhealthy", Weight: 2},
		{ID: "i-5", LifecycleState: health.LifecycleInService, HealthStatus: health.HealthHealthy}, // unweighted: 1
	}}
	got := health.Assess(v, 4)
	assert.Equal(t, 6, got.Launched)
	assert.Equal(t, 4, got.InService)
	assert.Equal(t, 4, got.Healthy)
	assert.Equal(t, 1, got.Terminating)
	assert.True(t, health.Healthy(got), "4 units in service meet a target of 4 with 3 instances")
}
