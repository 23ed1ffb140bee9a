package fleet_test

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/fleet"
)

// TestRestore: a group standing by (StandBy: out of its load balancers,
// AlarmNotification and ScheduledActions suspended) goes back as it
// served: attached again to its classic load balancer and target group,
// its desired capacity and minimum raised to what it served with (a
// scale-in while it stood by), its maximum raised when that needs it
// ("the desired capacity must be ... less than or equal to the maximum
// size", UpdateAutoScalingGroup, Auto Scaling API Reference), and the
// processes it names resumed; a capacity above the recorded one is left
// as it is. Its instances then pass their health checks and serve; a
// second Restore changes nothing. A group Owns refuses is left alone.
func TestRestore(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		min, desired, max      int32 // set while it stands by
		wantMin, wantDesired   int32
		wantMax                int32
		serveMin, serveDesired int
		// resume is what the group resumes (nil: what StandBy
		// suspended); running what runs after.
		resume, running []string
	}{
		{name: "scaled in to zero", min: 0, desired: 0, max: 4, wantMin: 2, wantDesired: 2, wantMax: 4, serveMin: 2, serveDesired: 2},
		{name: "maximum lowered below its capacity", min: 0, desired: 1, max: 1, wantMin: 2, wantDesired: 3, wantMax: 3, serveMin: 2, serveDesired: 3},
		{name: "scaled out while standing by", min: 2, desired: 3, max: 4, wantMin: 2, wantDesired: 3, wantMax: 4, serveMin: 2, serveDesired: 2},
		{name: "only its desired capacity lowered", min: 2, desired: 2, max: 4, wantMin: 2, wantDesired: 3, wantMax: 4, serveMin: 2, serveDesired: 3},
		{name: "only its minimum lowered", min: 0, desired: 2, max: 4, wantMin: 2, wantDesired: 2, wantMax: 4, serveMin: 2, serveDesired: 2},
		{name: "one instance", min: 0, desired: 0, max: 4, wantMin: 1, wantDesired: 1, wantMax: 4, serveMin: 1, serveDesired: 1},
		{name: "one process to resume (the other suspended before the bake)", min: 0, desired: 0, max: 4, wantMin: 2, wantDesired: 2, wantMax: 4, serveMin: 2, serveDesired: 2,
			resume: []string{"AlarmNotification"}, running: []string{"AlarmNotification"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			name := e.serving(t, "r1", nil)
			e.serving(t, "r2", nil)
			g, err := fleet.Describe(e.ctx, e.c.AutoScaling, []string{name})
			require.NoError(t, err)
			before := g[name]
			s := fleet.Serving{LoadBalancers: before.LoadBalancerNames, TargetGroups: before.TargetGroupARNs,
				Desired: tc.serveDesired, Min: tc.serveMin, Resume: tc.resume}
			if s.Resume == nil {
				s.Resume, tc.running = fleet.ToSuspend(before), fleet.StandbyProcesses
			}
			r := &fleet.Retirer{API: e.c.AutoScaling, Owner: owner, Owns: ofRelease("r1")}
			for range 2 { // idempotent
				require.NoError(t, r.StandBy(e.ctx, g[name]))
				g, err = fleet.Describe(e.ctx, e.c.AutoScaling, []string{name})
				require.NoError(t, err)
				assert.Empty(t, g[name].LoadBalancerNames, "standing by out of its load balancers")
				assert.Empty(t, g[name].TargetGroupARNs, "standing by out of its target groups")
				assert.Len(t, g[name].SuspendedProcesses, len(fleet.StandbyProcesses), "the standby processes suspended, no other")
				assert.Empty(t, fleet.ToSuspend(g[name]))
			}
			_, err = e.c.AutoScaling.UpdateAutoScalingGroup(e.ctx, &autoscaling.UpdateAutoScalingGroupInput{AutoScalingGroupName: aws.String(name),
				MinSize: aws.Int32(tc.min), DesiredCapacity: aws.Int32(tc.desired), MaxSize: aws.Int32(tc.max)})
			require.NoError(t, err)
			e.clk.Advance(2 * time.Minute)

			for call := range 2 { // each call whole; the second changes nothing
				g, err = fleet.Describe(e.ctx, e.c.AutoScaling, []string{name})
				require.NoError(t, err)
				require.NoError(t, r.Restore(e.ctx, g[name], s))
				e.clk.Advance(5 * time.Minute)
				assertRestored(t, e, name, before, tc.wantMin, tc.wantDesired, tc.wantMax, tc.running, call)
			}
			assert.Zero(t, e.world.CutConnections(), "nothing cut")
		})
	}
}

// TestRestoreLeavesAnotherReleasesGroup: Restore touches only a group
// Owns accepts: another release's group standing out of its load
// balancers stays as it is.
func TestRestoreLeavesAnotherReleasesGroup(t *testing.T) {
	e := newEnv(t)
	name := e.serving(t, "r1", nil)
	e.serving(t, "r2", nil)
	g, err := fleet.Describe(e.ctx, e.c.AutoScaling, []string{name})
	require.NoError(t, err)
	s := fleet.Serving{LoadBalancers: g[name].LoadBalancerNames, TargetGroups: g[name].TargetGroupARNs, Desired: 3, Min: 3, Resume: fleet.StandbyProcesses}
	require.NoError(t, (&fleet.Retirer{API: e.c.AutoScaling, Owner: owner, Owns: ofRelease("r1")}).StandBy(e.ctx, g[name]))
	g, err = fleet.Describe(e.ctx, e.c.AutoScaling, []string{name})
	require.NoError(t, err)
	require.NoError(t, (&fleet.Retirer{API: e.c.AutoScaling, Owner: owner, Owns: ofRelease("r2")}).Restore(e.ctx, g[name], s))
	g, err = fleet.Describe(e.ctx, e.c.AutoScaling, []string{name})
	require.NoError(t, err)
	assert.Empty(t, g[name].LoadBalancerNames, "not attached")
	assert.Empty(t, g[name].TargetGroupARNs, "not attached")
	assert.Equal(t, int32(2), aws.ToInt32(g[name].DesiredCapacity), "its capacity as it was")
	assert.Empty(t, fleet.ToSuspend(g[name]), "its processes still suspended")
}

// assertRestored checks group name after a Restore call: its capacity,
// its load balancers as before it stood by, the processes running, and
// its instances serving.
func assertRestored(t *testing.T, e *env, name string, before astypes.AutoScalingGroup, wantMin, wantDesired, wantMax int32, running []string, call int) {
	t.Helper()
	g, err := fleet.Describe(e.ctx, e.c.AutoScaling, []string{name})
	require.NoError(t, err)
	after := g[name]
	assert.Equal(t, wantMin, aws.ToInt32(after.MinSize), "min after call %d", call)
	assert.Equal(t, wantDesired, aws.ToInt32(after.DesiredCapacity), "desired after call %d", call)
	assert.Equal(t, wantMax, aws.ToInt32(after.MaxSize), "max after call %d", call)
	assert.ElementsMatch(t, before.LoadBalancerNames, after.LoadBalancerNames, "call %d", call)
	assert.ElementsMatch(t, before.TargetGroupARNs, after.TargetGroupARNs, "call %d", call)
	assert.Equal(t, running, fleet.ToSuspend(after), "the processes it names are resumed, no other (call %d)", call)
	for _, gs := range e.world.Snapshot().Accounts[0].Groups {
		if gs.Name != name {
			continue
		}
		n := 0
		for _, i := range gs.Instances {
			if i.Lifecycle == "InService" && i.LB["coinbase-deploy-test-web-elb"] == "healthy" {
				n++
			}
		}
		assert.Equal(t, int(wantDesired), n, "its instances serve again (call %d)", call)
	}
}
