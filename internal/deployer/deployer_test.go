package deployer

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/ledger"
)

func TestHappyPath(t *testing.T) {
	h := newHarness(t)
	ctx := t.Context()

	// First release: a new service launches min_size*(1+spread).
	r1 := h.baseRelease()
	x1 := h.start(r1)
	require.NoError(t, x1.steps(upToDeploy...))
	assert.True(t, x1.state.Deployed)
	require.NotNil(t, x1.state.Health)
	assert.Equal(t, 5, x1.state.Health.WaitSeconds)
	assert.Equal(t, execution.ServiceHealth{Target: 2, Desired: 2, Launch: 3, StableSeconds: 60}, x1.state.Health.Services["web"])

	name1 := naming.GroupName(project, config, "web", r1.ReleaseID)
	g := h.groups()[name1]
	assert.Equal(t, int32(3), g.Desired, "launch = ceil(2*1.5)")
	assert.Equal(t, int32(2), g.Min)
	assert.Equal(t, int32(4), g.Max)
	assert.Equal(t, name1, g.LaunchTemplate)
	assert.Equal(t, r1.ReleaseID, g.Tags[naming.TagReleaseID])
	assert.Equal(t, "ferry", g.Tags[naming.TagDeployWith])
	assert.Equal(t, "infra", g.Tags["Team"])
	assert.Equal(t, name1, g.Tags[naming.TagName])
	assert.Len(t, g.Policies, 2)
	assert.Len(t, h.account().Alarms, 2)

	checks, err := x1.untilHealthy(100)
	require.NoError(t, err)
	assert.Greater(t, checks, 1)
	web := x1.state.Health.Services["web"]
	assert.GreaterOrEqual(t, web.Healthy, 2)
	require.NoError(t, x1.step(execution.TaskCleanUpSuccess))
	assert.Equal(t, int32(2), h.groups()[name1].Desired, "the spread is for the deploy only: back to desired")

	cur, found, err := h.ledger.GetCurrent(ctx, project, config)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, r1.ReleaseID, cur.ReleaseID)
	assert.Equal(t, []string{"web"}, cur.Services)
	assert.Len(t, cur.UserDataSHA256["web"], 64)
	assert.Equal(t, harnessVersion, cur.DeployerVersion)
	assert.Equal(t, account, cur.AccountID)
	assert.Equal(t, region, cur.Region)
	require.Len(t, cur.Groups, 1)
	lts := h.account().LaunchTemplates
	require.Len(t, lts, 1)
	assert.Positive(t, cur.Groups[0].ReadySeconds, "the boot seen, for the next deploy's pacing")
	assert.Equal(t, ledger.CurrentGroup{Service: "web", Group: name1, ImageID: lts[0].ImageID, Desired: 2, ReadySeconds: cur.Groups[0].ReadySeconds}, cur.Groups[0])
	assert.Regexp(t, `^ami-[0-9a-f]+$`, cur.Groups[0].ImageID, "the AMI id, not the release's Name tag")
	assert.Empty(t, x1.state.Retired, "nothing to retire on a first deploy")
	out, found, err := h.ledger.GetOutcome(ctx, project, config, r1.ReleaseID)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, execution.EndSuccess, out.End)
	assert.Equal(t, harnessVersion, out.DeployerVersion)
	_, held, err := h.locks.Get(ctx, project, config)
	require.NoError(t, err)
	assert.False(t, held, "the lock is released")

	// Second release: desired comes from the previous group (2, settled
	// back from its launch count, so capacity does not creep up from one
	// release to the next); the previous group goes.
	h.clk.Advance(time.Hour)
	r2 := h.baseRelease()
	x2 := h.start(r2)
	require.NoError(t, x2.steps(upToDeploy...))
	name2 := naming.GroupName(project, config, "web", r2.ReleaseID)
	assert.Equal(t, int32(3), h.groups()[name2].Desired, "launch = min(4, ceil(2*1.5))")
	assert.Equal(t, 2, x2.state.Health.Services["web"].Target, "healthy = max(2, ceil(2*0.5))")
	_, err = x2.untilHealthy(100)
	require.NoError(t, err)
	require.NoError(t, x2.step(execution.TaskCleanUpSuccess))
	assert.Equal(t, []string{name1}, x2.state.Retired, "CleanUpSuccess names what it retired")
	groups := h.groups()
	if old, ok := groups[name1]; ok {
		assert.Equal(t, "Delete in progress", old.Status)
	}
	h.clk.Advance(10 * time.Minute)
	groups = h.groups()
	assert.NotContains(t, groups, name1, "the previous group is deleted")
	assert.Contains(t, groups, name2)
	for _, lt := range h.account().LaunchTemplates {
		assert.Equal(t, name2, lt.Name, "only the new launch template is left")
	}
	for _, a := range h.account().Alarms {
		assert.Contains(t, a.Name, r2.ReleaseID, "only the new alarms are left")
	}
}

func TestStatePayload50Services(t *testing.T) {
	h := newHarness(t)
	r := h.baseRelease()
	web := r.Services["web"]
	r.Services = map[string]*release.Service{}
	for i := range 50 {
		s := *web
		s.ELBs, s.TargetGroups, s.Profile = nil, nil, ""
		r.Services[fmt.Sprintf("service-with-a-long-name-%02d", i)] = &s
	}
	x := h.start(r)
	require.NoError(t, x.step(execution.TaskValidate))
	x.state.Deployed = true
	x.state.Health = &execution.Health{WaitSeconds: 5, Services: map[string]execution.ServiceHealth{}}
	for _, s := range x.state.Services {
		x.state.Health.Services[s] = execution.ServiceHealth{Launched: 1000, Healthy: 1000, Terminating: 1000, Target: 1000}
	}
	x.state.Images = map[string]string{}
	for _, s := range x.state.Services {
		x.state.Images[s] = "ami-0123456789abcdef0"
		x.state.Retired = append(x.state.Retired, naming.GroupName(r.ProjectName, r.ConfigName, s, "20250101T000000Z-abcdef"))
	}
	x.state.Error = &execution.Error{Error: "HaltError", Cause: strings.Repeat("x", 2000)}
	b, err := json.Marshal(x.state)
	require.NoError(t, err)
	assert.LessOrEqual(t, len(b), limits.MaxStatePayloadBytes, "state of a 50-service release")
	assert.Len(t, x.state.Services, 50)
}

func TestHealthTargetsWithoutDeployReport(t *testing.T) {
	// A State that lost Deploy's health report (or a tampered one) still
	// gets the capacity targets: recomputed from the previous group, and
	// never below min_size.
	h := newHarness(t)
	h.start(h.baseRelease()).succeed()
	h.clk.Advance(time.Hour)
	x := h.start(h.baseRelease())
	require.NoError(t, x.steps(upToDeploy...))
	h.clk.Advance(10 * time.Minute)
	x.state.Health = nil
	require.NoError(t, x.step(execution.TaskCheckHealthy))
	assert.Equal(t, 2, x.state.Health.Services["web"].Target, "max(2, ceil(3*0.5))")
	x.state.Health = &execution.Health{Services: map[string]execution.ServiceHealth{"web": {Target: -5}}}
	require.NoError(t, x.step(execution.TaskCheckHealthy))
	assert.Equal(t, 2, x.state.Health.Services["web"].Target, "min_size")
}

// ebs_volume_size without a device name resizes the AMI's root device
// (the seed's ubuntu AMI has /dev/sda1); a device name is used as given.
func TestEBSVolumeDevice(t *testing.T) {
	tests := []struct {
		name   string
		device string
		want   map[string]int32
	}{
		{"the image's root device", "", map[string]int32{"/dev/sda1": 20}},
		{"as given", "/dev/xvdb", map[string]int32{"/dev/xvdb": 20}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			r := h.baseRelease()
			r.Services["web"].EBSDeviceName = tt.device
			x := h.start(r)
			require.NoError(t, x.steps(upToDeploy...))
			lts := h.account().LaunchTemplates
			require.Len(t, lts, 1)
			assert.Equal(t, tt.want, lts[0].Volumes)
		})
	}
}
