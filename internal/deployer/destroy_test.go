package deployer

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
)

// destroyRelease is a destroy of the harness's project-config, as ferry
// destroy makes it.
func (h *harness) destroyRelease() *release.Release {
	r := h.baseRelease()
	r.Destroy = true
	r.Services, r.Subnets, r.AMI, r.UserData = nil, nil, "", ""
	return r
}

// TestDestroy: a destroy goes the way of a release with nothing to
// deploy: it takes the lock, and at its swap retires every group of the
// project-config (drained, scaled to zero, deleted with its launch
// template, alarms and policies), records its outcome, removes the
// current record and releases the lock. Destroying again finds nothing
// to do and succeeds.
func TestDestroy(t *testing.T) {
	h := newHarness(t)
	r1 := h.baseRelease()
	r1.Services["worker"] = &release.Service{InstanceType: "t3.small", SecurityGroups: []string{"ec2::coinbase/deploy-test::development-worker"}}
	h.start(r1).succeed()
	require.Len(t, h.groups(), 2)
	require.NotEmpty(t, h.account().LaunchTemplates)

	h.clk.Advance(time.Hour)
	d := h.destroyRelease()
	x := h.start(d)
	x.succeed()
	h.clk.Advance(10 * time.Minute)
	assert.Empty(t, h.groups(), "every group of the config is retired")
	assert.Empty(t, h.account().LaunchTemplates)
	assert.Equal(t, []string{naming.GroupName(project, config, "web", r1.ReleaseID), naming.GroupName(project, config, "worker", r1.ReleaseID)}, x.state.Retired)
	_, found, err := h.ledger.GetCurrent(t.Context(), project, config)
	require.NoError(t, err)
	assert.False(t, found, "nothing is deployed")
	o, found, err := h.ledger.GetOutcome(t.Context(), project, config, d.ReleaseID)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, execution.EndSuccess, o.End)
	assert.Empty(t, h.account().Alarms)
	_, held, err := h.locks.Get(t.Context(), project, config)
	require.NoError(t, err)
	assert.False(t, held, "the lock is released")

	h.clk.Advance(time.Hour)
	again := h.destroyRelease()
	h.start(again).succeed()
	assert.Empty(t, h.groups())
}
