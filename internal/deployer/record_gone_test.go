package deployer

import (
	"encoding/json"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/naming"
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
