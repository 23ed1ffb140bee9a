package reliability

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/naming"
)

// destroyScenario is the reference scenario with a destroy as its next
// release.
func destroyScenario(t *testing.T) *Scenario {
	t.Helper()
	sc, err := ReferenceDestroy("../../..")
	require.NoError(t, err)
	return sc
}

// TestDestroyCleanRun: a destroy over the reference's previous release
// retires every group of the config, removes the current record and keeps
// every invariant: the previous release serves in full up to the point
// of no return.
func TestDestroyCleanRun(t *testing.T) {
	res, err := destroyScenario(t).Run(context.Background(), RunOptions{})
	require.NoError(t, err)
	require.Equal(t, execution.EndSuccess, res.End, "%s: %s", res.Error, res.Cause)
	assert.Empty(t, res.Violations)
	require.NotEmpty(t, groupsOf(res.Before, "acme/shop", "production"), "the previous release served")
	assert.Empty(t, groupsOf(res.After, "acme/shop", "production"), "every group of the config is gone")
	assert.NotContains(t, res.Objects, naming.CurrentKey("acme/shop", "production"))
	assert.Contains(t, res.Objects, naming.DeletingKey("acme/shop", "production", res.ReleaseID), "it passed its point of no return")
	assert.Empty(t, res.LockHolder)
}

// TestDestroyMatrixSample runs a sample of every family of the destroy's
// matrix (no bake: no rollback base, no behaviours; no new group: no
// consistency schedules) and asserts zero violations.
func TestDestroyMatrixSample(t *testing.T) {
	if testing.Short() {
		t.Skip("the matrix sample deploys many times")
	}
	m := runSample(t, destroyScenario(t), 5, []Family{Single, Pair, Race})
	assert.Zero(t, m.Counts()[Consistency], "a destroy creates no group to hide")
}
