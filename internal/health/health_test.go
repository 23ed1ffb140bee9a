package health

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
			want:   execution.ServiceHealth{Launched: 2, Healthy: 2, InService: 2, Target: 2},
		},
		{
			name: "pending and unhealthy are launched, not healthy",
			view: View{Found: true, Instances: []Instance{
				{ID: "i-1", LifecycleState: "Pending", HealthStatus: "Healthy"},
				{ID: "i-2", LifecycleState: "InService", HealthStatus: "Unhealthy"},
				inService("i-3"),
			}},
			target: 2,
			want:   execution.ServiceHealth{Launched: 3, Healthy: 1, InService: 2, Target: 2},
		},
		{
			// Standby instances "do not actively handle load balancer
			// traffic" ("Temporarily remove instances from your Auto
			// Scaling group", Auto Scaling User Guide): never healthy.
			name: "standby is launched, not healthy",
			view: View{Found: true, Instances: []Instance{
				{ID: "i-1", LifecycleState: "Standby", HealthStatus: "Healthy"},
				inService("i-2"),
			}},
			target: 2,
			want:   execution.ServiceHealth{Launched: 2, Healthy: 1, InService: 1, Target: 2},
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
			want:   execution.ServiceHealth{Launched: 1, Healthy: 1, Terminating: 3, InService: 1, Target: 1},
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
			want:   execution.ServiceHealth{Launched: 4, Healthy: 1, InService: 4, Target: 2},
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
			want:   execution.ServiceHealth{Launched: 2, Healthy: 1, InService: 2, Target: 1},
		},
		{
			name: "old instances in the load balancer do not count",
			view: View{
				Found:         true,
				Instances:     []Instance{inService("i-new")},
				LoadBalancers: map[string]map[string]string{"elb": {"i-old-1": "InService", "i-old-2": "InService"}},
			},
			target: 1,
			want:   execution.ServiceHealth{Launched: 1, Healthy: 0, InService: 1, Target: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Assess(tt.view, tt.target))
		})
	}
}

func TestHealthy(t *testing.T) {
	assert.True(t, Healthy(execution.ServiceHealth{Healthy: 3, Target: 3}))
	assert.True(t, Healthy(execution.ServiceHealth{Healthy: 0, Target: 0}))
	assert.False(t, Healthy(execution.ServiceHealth{Healthy: 1, Target: 2}))
	assert.False(t, Healthy(execution.ServiceHealth{Missing: true}), "a group not seen is not healthy")
}

// TestTrack walks a service through the checks of a deploy: the window
// opens when it reaches its target, goes on while nothing changes,
// restarts when an instance terminates (or one more has terminated since
// the last check, even if gone already), closes below the target, and
// neither advances nor restarts when the group is not visible.
func TestTrack(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	since := func(s int) *time.Time { v := at(s); return &v }
	steps := []struct {
		name     string
		now      int
		cur      execution.ServiceHealth
		since    *time.Time
		stable   bool
		stableIn time.Duration
	}{
		{"booting", 0, execution.ServiceHealth{Launched: 2, Healthy: 0}, nil, false, 60 * time.Second},
		{"at target", 10, execution.ServiceHealth{Launched: 2, Healthy: 2}, since(10), false, 60 * time.Second},
		{"holding", 40, execution.ServiceHealth{Launched: 2, Healthy: 2}, since(10), false, 30 * time.Second},
		{"group not visible", 50, execution.ServiceHealth{Missing: true}, since(10), false, 60 * time.Second},
		{"one terminating", 60, execution.ServiceHealth{Launched: 2, Healthy: 2, Terminating: 1, Terminated: 1}, since(60), false, 60 * time.Second},
		{"replaced", 70, execution.ServiceHealth{Launched: 2, Healthy: 2, Terminated: 1}, since(60), false, 50 * time.Second},
		{"another gone between checks", 80, execution.ServiceHealth{Launched: 2, Healthy: 2, Terminated: 2}, since(80), false, 60 * time.Second},
		{"below target", 90, execution.ServiceHealth{Launched: 2, Healthy: 1, Terminated: 2}, nil, false, 60 * time.Second},
		{"back", 100, execution.ServiceHealth{Launched: 2, Healthy: 2, Terminated: 2}, since(100), false, 60 * time.Second},
		{"stable", 160, execution.ServiceHealth{Launched: 2, Healthy: 2, Terminated: 2}, since(100), true, 0},
	}
	prev := execution.ServiceHealth{Target: 2, StableSeconds: 60}
	for _, st := range steps {
		cur := st.cur
		cur.Target, cur.StableSeconds = 2, 60
		got := Track(prev, cur, at(st.now))
		assert.Equal(t, st.since, got.HealthySince, st.name)
		assert.Equal(t, st.stable, Stable(got, at(st.now)), st.name)
		assert.Equal(t, st.stableIn, StableIn(got, at(st.now)), st.name)
		if st.cur.Missing {
			assert.Equal(t, prev.Terminated, got.Terminated, "%s: what was seen before is kept", st.name)
		}
		prev = got
	}
	report := map[string]execution.ServiceHealth{
		"web": prev, "cron": {Target: 0, HealthySince: since(0)}, "api": {Healthy: 1, Target: 1},
	}
	assert.Equal(t, []string{"api"}, Unstable(report, at(160)))
	assert.False(t, AllStable(report, at(160)))
	delete(report, "api")
	assert.True(t, AllStable(report, at(160)))
	assert.True(t, AllStable(nil, at(0)))
}

// TestStableFromTheReads: a window opened by a check whose reads ended
// after its start (now) is held from the reads' end: the check that
// opened it is not stable at its start, and a later one is once the
// window has passed since the reads, not since the start. A window of 0
// is held at once.
func TestStableFromTheReads(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	for _, tc := range []struct {
		window      int
		start, read int
		stableAt    []int
		notStableAt []int
		leftAtStart time.Duration
	}{
		{window: 60, start: 10, read: 14, stableAt: []int{74, 90}, notStableAt: []int{10, 70, 73}, leftAtStart: 64 * time.Second},
		{window: 0, start: 10, read: 14, stableAt: []int{10, 14}, leftAtStart: 0},
	} {
		prev := execution.ServiceHealth{Target: 2, StableSeconds: tc.window}
		cur := execution.ServiceHealth{Launched: 2, Healthy: 2, Target: 2, StableSeconds: tc.window}
		got := Track(prev, cur, at(tc.read))
		require.NotNil(t, got.HealthySince)
		assert.Equal(t, at(tc.read), *got.HealthySince, "window %d: opened once read", tc.window)
		for _, s := range tc.stableAt {
			assert.True(t, Stable(got, at(s)), "window %d: stable at %d", tc.window, s)
		}
		for _, s := range tc.notStableAt {
			assert.False(t, Stable(got, at(s)), "window %d: not stable at %d", tc.window, s)
		}
		assert.Equal(t, tc.leftAtStart, StableIn(got, at(tc.start)), "window %d: what is left, from the check's start", tc.window)
	}
}

func TestDigest(t *testing.T) {
	assert.Equal(t, Digest([]string{"i-2", "i-1"}), Digest([]string{"i-1", "i-2"}))
	assert.NotEqual(t, Digest([]string{"i-1", "i-2"}), Digest([]string{"i-1", "i-3"}))
	assert.Len(t, Digest(nil), 16)
}

// Imminent: every service below its target has enough instances in
// service; a service at its target does not count, one not seen stops it.
func TestImminent(t *testing.T) {
	tests := []struct {
		name   string
		report map[string]execution.ServiceHealth
		want   bool
	}{
		{"waiting for the load balancers", map[string]execution.ServiceHealth{"web": {InService: 2, Healthy: 1, Target: 2}}, true},
		{"still booting", map[string]execution.ServiceHealth{"web": {InService: 1, Healthy: 1, Target: 2}}, false},
		{"one at its target, one waiting", map[string]execution.ServiceHealth{
			"web": {InService: 2, Healthy: 2, Target: 2}, "api": {InService: 3, Healthy: 0, Target: 3}}, true},
		{"every one at its target", map[string]execution.ServiceHealth{"web": {InService: 2, Healthy: 2, Target: 2}}, false},
		{"one not seen", map[string]execution.ServiceHealth{
			"web": {InService: 2, Healthy: 1, Target: 2}, "api": {Target: 1, Missing: true}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Imminent(tt.report))
		})
	}
}
