package deployer

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/sim"
	"github.com/ferryhq/ferry/internal/target"
)

// TestForgedRequestsChangeNothing invokes the deployer directly, as anyone
// allowed lambda:InvokeFunction could, with a State it did not make: the
// victim's release is serving, and every forged request must fail with an
// InternalError (nothing a state machine execution sends fails so) and
// leave the fleet, the lock and every record as they were. Step Functions
// keeps an execution's input immutable and reports it with
// DescribeExecution (AWS Step Functions API Reference: DescribeExecution,
// "input": the string that contains the JSON input data of the
// execution); that is what the deployer checks a request against.
func TestForgedRequestsChangeNothing(t *testing.T) {
	tasks := []string{
		execution.TaskLock, execution.TaskValidateResources, execution.TaskPublish, execution.TaskDeploy,
		execution.TaskCleanUpSuccess, execution.TaskCleanUpFailure, execution.TaskReleaseLock,
	}
	tests := []struct {
		name string
		// forge returns the request's execution context and State, given
		// the victim's serving release and a running execution of another
		// release the attacker controls.
		forge func(h *harness, victim *run, mine *run) (execution.Context, *execution.State)
		want  string
	}{
		{
			name: "the victim's release under the attacker's running execution",
			forge: func(h *harness, victim, mine *run) (execution.Context, *execution.State) {
				st := *victim.state
				return mine.ctx, &st
			},
			want: "runs release " + project + "/" + config + "/",
		},
		{
			name: "the victim's execution, which has ended",
			forge: func(h *harness, victim, mine *run) (execution.Context, *execution.State) {
				h.executions.byARN[victim.ctx.ID].Status = sfntypes.ExecutionStatusSucceeded
				st := *victim.state
				return victim.ctx, &st
			},
			want: "is SUCCEEDED, not RUNNING",
		},
		{
			name: "an execution that does not exist",
			forge: func(h *harness, victim, mine *run) (execution.Context, *execution.State) {
				ctx := victim.ctx
				ctx.ID += "-forged"
				st := *victim.state
				return ctx, &st
			},
			want: "cannot be described",
		},
		{
			name: "an execution of another state machine",
			forge: func(h *harness, victim, mine *run) (execution.Context, *execution.State) {
				h.executions.byARN[victim.ctx.ID].StateMachineArn = aws.String("arn:aws:states:us-east-1:111111111111:stateMachine:mine")
				h.executions.byARN[victim.ctx.ID].Status = sfntypes.ExecutionStatusRunning
				st := *victim.state
				return victim.ctx, &st
			},
			want: "not to the deployer's state machine",
		},
		{
			name: "a redriven execution",
			forge: func(h *harness, victim, mine *run) (execution.Context, *execution.State) {
				h.executions.byARN[victim.ctx.ID].Status = sfntypes.ExecutionStatusRunning
				h.executions.byARN[victim.ctx.ID].RedriveCount = aws.Int32(1)
				st := *victim.state
				return victim.ctx, &st
			},
			want: "was redriven",
		},
	}
	for _, tt := range tests {
		for _, task := range tasks {
			t.Run(tt.name+"/"+task, func(t *testing.T) {
				h := newHarness(t)
				victim := h.start(h.baseRelease())
				victim.succeed()
				// The attacker's own release, running: it has passed
				// Validate and holds nothing else.
				mine := h.start(h.baseRelease())
				require.NoError(t, mine.step(execution.TaskValidate))

				before := h.snapshot()
				objects := h.objects(t)
				ctx, st := tt.forge(h, victim, mine)
				st.Deployed = true
				st.Error = &execution.Error{Error: failure.NameDeploy, Cause: "forged"}
				raw, err := json.Marshal(st)
				require.NoError(t, err)
				_, err = h.d.Invoke(t.Context(), execution.Request{Task: task, Input: raw, Execution: ctx})

				var internal *failure.InternalError
				require.ErrorAs(t, err, &internal)
				assert.Contains(t, err.Error(), tt.want)
				assert.Equal(t, before, h.snapshot(), "the fleet changed")
				assert.Equal(t, objects, h.objects(t), "the deployer bucket changed")
			})
		}
	}
}

// TestStateTargetIsNeverTrusted: a State whose target names another
// account (as a State altered in flight would) deploys into the release's
// own target, never into the one the State names.
func TestStateTargetIsNeverTrusted(t *testing.T) {
	h := newHarness(t)
	x := h.start(h.baseRelease())
	require.NoError(t, x.steps(execution.TaskValidate, execution.TaskLock, execution.TaskValidateResources, execution.TaskPublish))
	x.state.Target = target.Target{AccountID: "222222222222", Region: region}
	x.state.Services = []string{"web", "db"}
	require.NoError(t, x.step(execution.TaskDeploy))
	assert.Equal(t, target.Target{AccountID: account, Region: region}, x.state.Target)
	assert.Equal(t, []string{"web"}, x.state.Services)
	assert.Contains(t, h.groups(), naming.GroupName(project, config, "web", x.state.ReleaseID))
	for _, a := range h.world.Snapshot().Accounts {
		if a.Account == "222222222222" {
			assert.Empty(t, a.Groups, "nothing reached the account the State named")
		}
	}
}

// TestUserDataSwappedAfterPublishIsNotLaunched: someone who may write the
// deployer bucket replaces a service's rendered user data between Publish
// and Deploy. Deploy renders the user data from the verified release, so
// what launches is the release's.
func TestUserDataSwappedAfterPublishIsNotLaunched(t *testing.T) {
	h := newHarness(t)
	r := h.baseRelease()
	x := h.start(r)
	require.NoError(t, x.steps(execution.TaskValidate, execution.TaskLock, execution.TaskValidateResources, execution.TaskPublish))
	_, err := h.s3.PutObject(t.Context(), &s3.PutObjectInput{
		Bucket: aws.String(bucket), Key: aws.String(naming.UserDataKey(project, config, r.ReleaseID, "web")),
		Body: strings.NewReader("#!/bin/sh\n" + sim.UserDataMarker + " " + string(sim.NeverHealthy) + "\n"),
	})
	require.NoError(t, err)
	require.NoError(t, x.step(execution.TaskDeploy))
	_, err = x.untilHealthy(200)
	require.NoError(t, err, "the release's own user data runs, and is healthy")
	group := h.groups()[naming.GroupName(project, config, "web", r.ReleaseID)]
	require.NotEmpty(t, group.Instances)
	for _, i := range group.Instances {
		assert.NotEqual(t, sim.NeverHealthy, i.Behavior, "instance %s runs the swapped user data", i.ID)
	}
}

// TestReleaseConsumedAtFirstSight: a release is consumed by the first
// execution that validates it, whatever becomes of that execution; another
// execution of it is refused at Validate, before it takes the lock.
func TestReleaseConsumedAtFirstSight(t *testing.T) {
	h := newHarness(t)
	r := h.baseRelease()
	first := h.start(r)
	require.NoError(t, first.step(execution.TaskValidate))
	// The first execution dies before Lock; the same input is started
	// again under another name.
	replay := h.startAs(r, "replayed")
	err := replay.step(execution.TaskValidate)
	var bad *failure.BadReleaseError
	require.ErrorAs(t, err, &bad)
	assert.Contains(t, err.Error(), "already ran (execution "+first.ctx.ID+")")

	// The first execution itself goes on: a retry of its Validate and its
	// Lock accept the marker it wrote.
	require.NoError(t, first.step(execution.TaskValidate))
	require.NoError(t, first.step(execution.TaskLock))
}

// objects returns the deployer bucket's keys and ETags.
func (h *harness) objects(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	p := s3.NewListObjectsV2Paginator(h.s3, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	for p.HasMorePages() {
		page, err := p.NextPage(t.Context())
		require.NoError(t, err)
		for _, o := range page.Contents {
			out[aws.ToString(o.Key)] = aws.ToString(o.ETag)
		}
	}
	return out
}

// TestTargetCallsNameTheVerifiedCaller: every call the deployer makes in
// the target account, from the role sessions of a release, carries the
// source identity of the caller Validate verified (naming.SourceIdentity),
// as CloudTrail records it (userIdentity.sessionContext.sourceIdentity,
// "Monitor and control actions taken with assumed roles", IAM User
// Guide).
func TestTargetCallsNameTheVerifiedCaller(t *testing.T) {
	h := newHarness(t)
	x := h.start(h.baseRelease())
	require.NoError(t, x.steps(execution.TaskValidate, execution.TaskLock, execution.TaskValidateResources, execution.TaskPublish, execution.TaskDeploy))
	_, err := x.untilHealthy(200)
	require.NoError(t, err)
	require.NoError(t, x.step(execution.TaskCleanUpSuccess))

	want := naming.SourceIdentity(caller)
	require.Equal(t, "alice@"+account, want)
	assumes, calls := 0, 0
	for _, c := range h.world.CallLog() {
		switch {
		case c.Op == "AssumeRole":
			assumes++
			assert.Equal(t, want, c.SourceIdentity, "AssumeRole sets the source identity")
			var actions []string
			for _, a := range c.Auth {
				actions = append(actions, a.Action)
			}
			assert.Contains(t, actions, "sts:SetSourceIdentity")
		case c.Principal != "":
			calls++
			assert.Equal(t, want, c.SourceIdentity, "%s %s", c.Service, c.Op)
		}
	}
	assert.Positive(t, assumes)
	assert.Positive(t, calls)
}
