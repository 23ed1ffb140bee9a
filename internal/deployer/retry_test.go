package deployer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/target"
)

// TestEveryHandlerIsIdempotent runs each task twice in a row (a Lambda or
// Step Functions retry) and checks that the second run changes nothing in
// the target and returns the same result.
func TestEveryHandlerIsIdempotent(t *testing.T) {
	twice := func(t *testing.T, h *harness, x *run, task string) {
		t.Helper()
		input := any(x.state)
		if task == execution.TaskValidate {
			input = x.input
		}
		first, err := x.invoke(task, input)
		require.NoError(t, err, task)
		after := h.snapshot()
		second, err := x.invoke(task, input)
		require.NoError(t, err, task)
		assert.Equal(t, after, h.snapshot(), "%s run twice changed the target", task)
		assert.JSONEq(t, string(first), string(second), task)
		require.NoError(t, x.step(task))
	}

	t.Run("success path", func(t *testing.T) {
		h := newHarness(t)
		h.start(h.baseRelease()).succeed()
		h.clk.Advance(time.Hour)
		r := h.baseRelease()
		h.addAsset(r, "app", []byte("the application"))
		r.UserData = "#cloud-config\n# {{ASSET_URL:app}}\n"
		x := h.start(r)
		for _, task := range upToDeploy {
			twice(t, h, x, task)
		}
		_, err := x.untilHealthy(100)
		require.NoError(t, err)
		twice(t, h, x, execution.TaskCheckHealthy)
		twice(t, h, x, execution.TaskCleanUpSuccess)
		assert.Len(t, h.groups(), 2, "the previous group is being deleted, not twice")
	})

	t.Run("failure path", func(t *testing.T) {
		h := newHarness(t)
		r := h.baseRelease()
		x := h.start(r)
		require.NoError(t, x.steps(upToDeploy...))
		x.state.Error = &execution.Error{Error: failure.NameTimeout, Cause: "timed out"}
		twice(t, h, x, execution.TaskCleanUpFailure)
		twice(t, h, x, execution.TaskReleaseLock)
		assertFailedClean(t, h, r, failure.NameTimeout)
	})
}

// TestRetryAfterPartialDeploy: Deploy fails half way (a 5xx on the
// second service); its retry finishes without duplicating anything.
func TestRetryAfterPartialDeploy(t *testing.T) {
	h := newHarness(t)
	r := h.baseRelease()
	r.Services["worker"] = &release.Service{InstanceType: "t3.small", SecurityGroups: []string{"ec2::coinbase/deploy-test::development-worker"}}
	x := h.start(r)
	require.NoError(t, x.steps(upToDeploy[:4]...))
	_, err := h.world.Faults().Add(sim.Rule{Op: "CreateAutoScalingGroup", Nth: 2, Err: sim.InternalError()})
	require.NoError(t, err)
	err = x.step(execution.TaskDeploy)
	var re *failure.RetryableError
	require.ErrorAs(t, err, &re)
	assert.Len(t, h.groups(), 1)
	require.NoError(t, x.step(execution.TaskDeploy))
	assert.Len(t, h.groups(), 2)
	assert.Len(t, h.account().LaunchTemplates, 2)
	_, err = x.untilHealthy(100)
	require.NoError(t, err)
}

func TestDeployWithHiddenNewGroups(t *testing.T) {
	// Eventual consistency: a new group is invisible to the next describes.
	h := newHarness(t)
	h.world.Faults().HideNewGroups(3)
	x := h.start(h.baseRelease())
	x.succeed()
}

func TestTransientErrorsAreRetryable(t *testing.T) {
	tests := []struct {
		op   string
		task string
	}{
		{"DescribeImages", execution.TaskValidateResources},
		{"DescribeTargetGroups", execution.TaskValidateResources},
		{"CreateLaunchTemplate", execution.TaskDeploy},
		{"PutMetricAlarm", execution.TaskDeploy},
		{"DescribeAutoScalingGroups", execution.TaskCheckHealthy},
		{"DescribeTargetHealth", execution.TaskCheckHealthy},
	}
	for _, tt := range tests {
		t.Run(tt.op, func(t *testing.T) {
			h := newHarness(t)
			x := h.start(h.baseRelease())
			for _, task := range upToDeploy {
				if task == tt.task {
					break
				}
				require.NoError(t, x.step(task))
			}
			if tt.task == execution.TaskCheckHealthy {
				require.NoError(t, x.step(execution.TaskDeploy))
				h.clk.Advance(5 * time.Minute)
			}
			_, err := h.world.Faults().Add(sim.Rule{Op: tt.op, Err: sim.InternalError()})
			require.NoError(t, err)
			err = x.step(tt.task)
			var re *failure.RetryableError
			require.ErrorAs(t, err, &re, "%v", err)
			h.world.Faults().Clear()
			require.NoError(t, x.step(tt.task), "the retry succeeds")
		})
	}
}

// TestHealthCheckCallsDoNotGrowWithInstances: the calls of one health
// check are the same for 1 and 40 instances.
func TestHealthCheckCallsDoNotGrowWithInstances(t *testing.T) {
	calls := func(instances int) map[string]int {
		h := newHarness(t)
		r := h.baseRelease()
		r.Services["web"].Autoscaling = &release.Autoscaling{MinSize: instances, MaxSize: instances}
		x := h.start(r)
		require.NoError(t, x.steps(upToDeploy...))
		h.clk.Advance(5 * time.Minute)
		require.NoError(t, x.step(execution.TaskCheckHealthy), "the first check reads the scaling activities")
		h.clk.Advance(time.Minute)
		h.world.ResetCalls()
		require.NoError(t, x.step(execution.TaskCheckHealthy))
		require.True(t, x.state.Health.Healthy, "stable: a minute at its target")
		assert.Equal(t, instances, x.state.Health.Services["web"].Healthy)
		return h.world.Calls()
	}
	one := calls(1)
	assert.Equal(t, one, calls(40))
	assert.Equal(t, 1, one["DescribeAutoScalingGroups"])
	assert.Equal(t, 1, one["DescribeInstanceHealth"])
	assert.Equal(t, 1, one["DescribeTargetHealth"])
	assert.Zero(t, one["DescribeScalingActivities"], "nothing changed since the last check")
}

// TestDeployAddedLatency: in the first minutes, a check comes at most 6
// simulated seconds after the one before (5 s, jittered by a fifth), so
// a service is seen at its target at most that long after it reached
// it, but while instances it needs are not in service yet behind its
// load balancers (at most 12 s: tuning.BootCheckInterval jittered, as
// its target cannot come before a check sees them in service); while it
// holds it, checks come 30 s apart, and the one that sees
// the release stable comes at most a second after the stability window
// ended. A redeploy of the same image makes its first check at half the
// boot the first deploy saw, and never after an instance was healthy.
func TestDeployAddedLatency(t *testing.T) {
	h := newHarness(t)
	for deploy := range 2 {
		x := h.start(h.baseRelease())
		require.NoError(t, x.steps(upToDeploy...))
		first := x.state.Health.WaitSeconds
		if deploy == 0 {
			assert.LessOrEqual(t, first, 6, "no boot seen yet: the first check at the interval")
		} else {
			assert.Greater(t, first, 6, "the boot seen before paces the first check")
		}
		for checks := 0; !x.state.Health.Healthy; checks++ {
			require.Less(t, checks, 200)
			s := x.state.Health.Services["web"]
			wait := time.Duration(x.state.Health.WaitSeconds) * time.Second
			switch {
			case s.HealthySince != nil || checks == 0:
			case s.InService < s.Target:
				assert.LessOrEqual(t, wait, 12*time.Second, "check %d, booting", checks)
			default:
				assert.LessOrEqual(t, wait, 6*time.Second, "check %d", checks)
			}
			h.clk.Advance(wait)
			require.NoError(t, x.step(execution.TaskCheckHealthy))
			if checks == 0 {
				assert.Less(t, x.state.Health.Services["web"].Healthy, 2, "the first check came before the fleet was healthy")
			}
		}
		s := x.state.Health.Services["web"]
		ended := s.HealthySince.Add(time.Duration(s.StableSeconds) * time.Second)
		assert.LessOrEqual(t, h.clk.Now().Sub(ended), time.Second, "deploy %d", deploy)
		require.NoError(t, x.stepRetrying(execution.TaskBake))
		require.NoError(t, x.stepRetrying(execution.TaskCleanUpSuccess))
		for !x.state.Retire.Done {
			h.clk.Advance(time.Duration(x.state.Retire.WaitSeconds) * time.Second)
			require.NoError(t, x.stepRetrying(execution.TaskCleanUpSuccess))
		}
	}
}

func TestPublish(t *testing.T) {
	ctx := t.Context()
	h := newHarness(t)
	r := h.baseRelease()
	h.addAsset(r, "app", []byte("the application, version 1"))
	r.UserData = "#cloud-config\n# {{ASSET_URL:app}} {{ASSET_SHA256:app}} {{SERVICE_NAME}}\n"
	x := h.start(r)
	require.NoError(t, x.steps(upToDeploy[:4]...))

	sum := r.Assets["app"].SHA256
	key := naming.TargetAssetKey(r.ProjectName, r.ConfigName, sum)
	obj, err := h.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(assetBucket), Key: aws.String(key)})
	require.NoError(t, err)
	body, err := io.ReadAll(obj.Body)
	require.NoError(t, err)
	assert.Equal(t, "the application, version 1", string(body))
	modified := aws.ToTime(obj.LastModified)

	ud, err := h.ledger.GetUserData(ctx, project, config, r.ReleaseID, "web")
	require.NoError(t, err)
	assert.Equal(t, "#cloud-config\n# s3://"+assetBucket+"/"+key+" "+sum+" web\n", string(ud))

	// A retry (or a later release with the same asset) does not copy it
	// again.
	h.clk.Advance(time.Minute)
	require.NoError(t, x.step(execution.TaskPublish))
	head, err := h.s3.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(assetBucket), Key: aws.String(key)})
	require.NoError(t, err)
	assert.Equal(t, modified, aws.ToTime(head.LastModified), "the asset was not copied again")

	// Deploy puts the rendered user data in the launch template.
	require.NoError(t, x.step(execution.TaskDeploy))
	require.Len(t, h.account().LaunchTemplates, 1)
}

func TestPublishRefusesTamperedAsset(t *testing.T) {
	ctx := t.Context()
	h := newHarness(t)
	r := h.baseRelease()
	h.addAsset(r, "app", []byte("the application"))
	sum := r.Assets["app"].SHA256
	_, err := h.s3.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(bucket), Key: aws.String(naming.AssetKey(project, config, sum)),
		Body: strings.NewReader("the applicatioN"), ContentLength: aws.Int64(15),
	})
	require.NoError(t, err)
	x := h.start(r)
	require.NoError(t, x.steps(upToDeploy[:3]...))
	err = x.step(execution.TaskPublish)
	var de *failure.DeployError
	require.ErrorAs(t, err, &de)
	assert.Contains(t, err.Error(), "not the release's 15 bytes with SHA-256 "+sum)
	_, err = h.s3.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(assetBucket), Key: aws.String(naming.TargetAssetKey(r.ProjectName, r.ConfigName, sum))})
	assert.True(t, cloud.IsNotFound(err), "nothing was published")
}

// TestPublishTrustsOnlyS3sChecksum: an object already at an asset's key
// in the target's asset bucket counts as the asset only when S3's own
// record says so: its size and the SHA-256 checksum S3 verified when it
// was written (HeadObject, ChecksumMode ENABLED). Metadata claiming the
// asset's hash, or the right bytes written without a checksum, do not
// count; and since published assets are never overwritten
// (If-None-Match), Publish then stops with a DeployError naming the key.
func TestPublishTrustsOnlyS3sChecksum(t *testing.T) {
	content := []byte("the application")
	forged := []byte("the applicatioN")
	tests := []struct {
		name      string
		put       func(key string) *s3.PutObjectInput
		published bool
	}{
		{"published by ferry", func(key string) *s3.PutObjectInput {
			sum := sha256.Sum256(content)
			return &s3.PutObjectInput{Key: aws.String(key), Body: bytes.NewReader(content),
				ChecksumSHA256: aws.String(base64.StdEncoding.EncodeToString(sum[:]))}
		}, true},
		{"other bytes, metadata claiming the hash", func(key string) *s3.PutObjectInput {
			sum := sha256.Sum256(content)
			return &s3.PutObjectInput{Key: aws.String(key), Body: bytes.NewReader(forged),
				Metadata: map[string]string{"sha256": hex.EncodeToString(sum[:])}}
		}, false},
		{"the bytes, without a checksum", func(key string) *s3.PutObjectInput {
			return &s3.PutObjectInput{Key: aws.String(key), Body: bytes.NewReader(content)}
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			h := newHarness(t)
			r := h.baseRelease()
			h.addAsset(r, "app", content)
			key := naming.TargetAssetKey(r.ProjectName, r.ConfigName, r.Assets["app"].SHA256)
			in := tt.put(key)
			in.Bucket = aws.String(assetBucket)
			before, err := h.s3.PutObject(ctx, in)
			require.NoError(t, err)
			x := h.start(r)
			require.NoError(t, x.steps(upToDeploy[:3]...))
			err = x.step(execution.TaskPublish)
			if tt.published {
				require.NoError(t, err)
			} else {
				var de *failure.DeployError
				require.ErrorAs(t, err, &de)
				assert.Contains(t, err.Error(), key+" exists and is not the asset's")
			}
			head, err := h.s3.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(assetBucket), Key: aws.String(key)})
			require.NoError(t, err)
			assert.Equal(t, aws.ToString(before.ETag), aws.ToString(head.ETag), "the object was never overwritten")
		})
	}
}

func TestPublishMissingAsset(t *testing.T) {
	h := newHarness(t)
	r := h.baseRelease()
	r.Assets = map[string]*release.Asset{"app": {SHA256: strings.Repeat("ab", 32), Size: 3}}
	x := h.start(r)
	require.NoError(t, x.steps(upToDeploy[:3]...))
	err := x.step(execution.TaskPublish)
	var bad *failure.BadReleaseError
	require.ErrorAs(t, err, &bad)
	assert.Contains(t, err.Error(), "assets.app: not uploaded to the deployer bucket")
}

type panicConnector struct{}

func (panicConnector) Connect(context.Context, target.Target, cloud.Session) (*cloud.Clients, error) {
	panic("connector exploded")
}

func TestInvokeDispatch(t *testing.T) {
	h := newHarness(t)
	var logs strings.Builder
	d, err := New(Config{
		Bucket: bucket, DefaultTarget: target.Target{AccountID: account, Region: region},
		Clock: h.clk, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	}, h.s3, panicConnector{})
	require.NoError(t, err)
	x := h.start(h.baseRelease())
	require.NoError(t, x.steps(execution.TaskValidate, execution.TaskLock))
	state, err := json.Marshal(x.state)
	require.NoError(t, err)

	tests := []struct {
		name     string
		req      execution.Request
		wantName string
		wantMsg  string
	}{
		{"unknown task", execution.Request{Task: "Dance"}, failure.NameUnknownTask, `unknown task "Dance"`},
		{"panic", execution.Request{Task: execution.TaskValidateResources, Input: state, Execution: x.ctx},
			failure.NameInternal, "internal error: task ValidateResources panicked: connector exploded"},
		{"state that is not a state", execution.Request{Task: execution.TaskDeploy, Input: json.RawMessage(`[1]`)},
			failure.NameInternal, "task Deploy: input is not a state document"},
		{"state without a release", execution.Request{Task: execution.TaskCheckHealthy, Input: json.RawMessage(`{}`)},
			failure.NameInternal, "state document names no release"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := d.Invoke(t.Context(), tt.req)
			require.Error(t, err)
			assert.Equal(t, tt.wantName, failure.NameOf(err))
			assert.Contains(t, err.Error(), tt.wantMsg)
			assert.NotContains(t, err.Error(), "goroutine", "no stack in the error")
		})
	}
	assert.Contains(t, logs.String(), "goroutine", "the stack is logged")
}

func TestNewRefusesBadConfig(t *testing.T) {
	h := newHarness(t)
	conn := h.world.Connector(account, nil, cloud.ConnectorOptions{})
	_, err := New(Config{DefaultTarget: target.Target{AccountID: account, Region: region}}, h.s3, conn)
	assert.EqualError(t, err, "deployer: config: bucket is required")
	_, err = New(Config{Bucket: bucket, DefaultTarget: target.Target{AccountID: "1", Region: region}}, h.s3, conn)
	assert.ErrorContains(t, err, "deployer: config: default target")
	_, err = New(Config{Bucket: bucket, DefaultTarget: target.Target{AccountID: account, Region: region}}, nil, conn)
	assert.Error(t, err)
}

func TestUnclassifiedErrorsAreNamed(t *testing.T) {
	for _, tt := range []struct {
		task, want string
	}{
		{execution.TaskLock, failure.NameLock},
		{execution.TaskReleaseLock, failure.NameLock},
		{execution.TaskCleanUpSuccess, failure.NameCleanUp},
		{execution.TaskCleanUpFailure, failure.NameCleanUp},
		{execution.TaskDeploy, failure.NameDeploy},
		{execution.TaskValidate, failure.NameDeploy},
	} {
		err := named(tt.task, errors.New("boom"))
		assert.Equal(t, tt.want, failure.NameOf(err), tt.task)
		already := &failure.HaltError{Reason: "x"}
		assert.Same(t, already, named(tt.task, already))
	}
}

func TestCleanUpSuccessRetriesAfterPartialDelete(t *testing.T) {
	h := newHarness(t)
	r1 := h.baseRelease()
	x := h.atSwap(r1, h.baseRelease())
	_, err := h.world.Faults().Add(sim.Rule{Op: "DeleteLaunchTemplate", Err: sim.Throttling()})
	require.NoError(t, err)
	err = x.step(execution.TaskCleanUpSuccess)
	var re *failure.RetryableError
	require.ErrorAs(t, err, &re)
	var ce *failure.CleanUpError
	require.ErrorAs(t, err, &ce)
	old := naming.GroupName(project, config, "web", r1.ReleaseID)
	assert.Equal(t, []string{"launch template " + old}, ce.Leftovers)
	_, held, err := h.locks.Get(t.Context(), project, config)
	require.NoError(t, err)
	assert.True(t, held, "the lock is kept until clean up succeeds")

	h.world.Faults().Clear()
	require.NoError(t, x.step(execution.TaskCleanUpSuccess))
	for _, lt := range h.account().LaunchTemplates {
		assert.NotEqual(t, old, lt.Name)
	}
	_, held, err = h.locks.Get(t.Context(), project, config)
	require.NoError(t, err)
	assert.False(t, held)
}

func TestTarget(t *testing.T) {
	d := &Deployer{cfg: Config{DefaultTarget: target.Target{AccountID: account, Region: region, Qualifier: "q1"}}}
	tests := []struct {
		name string
		r    release.Release
		want target.Target
	}{
		{"default", release.Release{}, target.Target{AccountID: account, Region: region, Qualifier: "q1"}},
		{"other account", release.Release{AccountID: "222222222222"}, target.Target{AccountID: "222222222222", Region: region}},
		{"other region", release.Release{Region: "eu-west-1"}, target.Target{AccountID: account, Region: "eu-west-1"}},
		{"qualifier", release.Release{Qualifier: "q2"}, target.Target{AccountID: account, Region: region, Qualifier: "q2"}},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, d.target(&tt.r), tt.name)
	}
}

// TestHoldingSkipsLoadBalancers: while a service holds its target with
// the same instances mid-window, a check does not ask its load balancers
// (its healthy count is carried on); the check that judges it stable,
// at the window's end, asks them again; a check that sees it below its
// target asks them too.
func TestHoldingSkipsLoadBalancers(t *testing.T) {
	h := newHarness(t)
	x := h.start(h.baseRelease())
	require.NoError(t, x.steps(upToDeploy...))
	asked := func(calls map[string]int) int { return calls["DescribeTargetHealth"] + calls["DescribeInstanceHealth"] }
	held := 0
	for checks := 0; !x.state.Health.Healthy; checks++ {
		require.Less(t, checks, 200)
		prev := x.state.Health.Services["web"]
		h.clk.Advance(time.Duration(x.state.Health.WaitSeconds) * time.Second)
		h.world.ResetCalls()
		require.NoError(t, x.step(execution.TaskCheckHealthy))
		n := asked(h.world.Calls())
		switch {
		case x.state.Health.Healthy:
			assert.Positive(t, n, "the check at the window's end asks the load balancers")
		case prev.HealthySince != nil && prev.Healthy >= prev.Target:
			assert.Zero(t, n, "check %d: the service holds its target mid-window", checks)
			assert.Equal(t, prev.Healthy, x.state.Health.Services["web"].Healthy, "its count carried on")
			held++
		case prev.Launched > 0 && x.state.Health.Services["web"].InService > 0:
			assert.Positive(t, n, "check %d: below its target, the load balancers are asked", checks)
		}
	}
	assert.Positive(t, held, "some check was mid-window")
}
