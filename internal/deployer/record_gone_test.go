package deployer

import (
	"encoding/json"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/store/halt"
)

// TestCleanUpWithoutTheDeployingRecord: Deploy made the release's launch
// template, group and alarms, then failed without answering (its
// invocation timed out: the state machine's Catch hands CleanUpFailure
// the State Deploy was given, without Deployed), and the deploying record
// is gone (deleted by someone). The clean-up finds what AWS shows
// tagged with the release and removes it: FailureClean leaves nothing of
// the release running.
func TestCleanUpWithoutTheDeployingRecord(t *testing.T) {
	h := newHarness(t)
	r := h.baseRelease()
	x := h.start(r)
	require.NoError(t, x.steps(upToDeploy[:4]...))
	given, err := json.Marshal(x.state)
	require.NoError(t, err)
	require.NoError(t, x.step(execution.TaskDeploy))
	require.NotEmpty(t, h.groups()[naming.GroupName(project, config, "web", r.ReleaseID)].Instances, "Deploy made the group")

	_, err = h.s3.DeleteObject(t.Context(), &s3.DeleteObjectInput{Bucket: aws.String(bucket),
		Key: aws.String(naming.DeployingKey(project, config, r.ReleaseID))})
	require.NoError(t, err)
	x.state = nil
	require.NoError(t, json.Unmarshal(given, &x.state))
	x.state.Error = &execution.Error{Error: "States.Timeout", Cause: "Task timed out after 60.00 seconds"}
	require.NoError(t, x.stepRetrying(execution.TaskCleanUpFailure))
	require.NoError(t, x.stepRetrying(execution.TaskReleaseLock))
	assertFailedClean(t, h, r, "States.Timeout")
}

// TestCleanUpAfterARefusedDeploy: Deploy refused at its start (a halt
// marker) made nothing and recorded nothing: CleanUpFailure asks AWS,
// finds nothing of the release, and is done at its first invocation,
// with no retry waiting for groups that were never made.
func TestCleanUpAfterARefusedDeploy(t *testing.T) {
	h := newHarness(t)
	r := h.baseRelease()
	x := h.start(r)
	require.NoError(t, x.steps(upToDeploy[:4]...))
	require.NoError(t, h.halts.Put(t.Context(), project, config, halt.Marker{By: "oncall", Reason: "stop"}))
	err := x.step(execution.TaskDeploy)
	var he *failure.HaltError
	require.ErrorAs(t, err, &he)
	x.state.Error = &execution.Error{Error: failure.NameOf(err), Cause: failure.Cause(err)}
	require.NoError(t, x.once(execution.TaskCleanUpFailure), "nothing to wait for")
	assert.True(t, x.state.Retire.Done)
}
