package region

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/local/s3server"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/ledger"
	"github.com/ferryhq/ferry/statemachine/shape"
)

var update = flag.Bool("update", false, "rewrite internal/local/region/testdata/*.golden")

var epoch0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const (
	testProject = "coinbase/deploy-test"
	testConfig  = "development"
)

func testWorld(t *testing.T) sim.WorldSpec {
	t.Helper()
	spec, err := sim.Load(filepath.Join("..", "..", "..", "testdata", "worlds", "deploy-test.json"))
	require.NoError(t, err)
	return spec
}

// newTestRegion is a region of the deploy-test world on discrete-event
// time, closed when the test ends.
func newTestRegion(t *testing.T, opts Options) (*Region, *clock.Virtual) {
	t.Helper()
	clk := clock.NewVirtual(epoch0)
	opts.World = testWorld(t)
	opts.Clock = clk
	r, err := New(context.Background(), opts)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, r.Close()) })
	return r, clk
}

// releaseJSON is testdata/deploy-test-release.json as the client uploads
// it: user data filled in, release_id and created_at set.
func releaseJSON(t *testing.T, clk clock.Clock, id string, mutate ...func(*release.Release)) []byte {
	t.Helper()
	rel, err := release.ReadFile(filepath.Join("..", "..", "..", "testdata", "deploy-test-release.json"))
	require.NoError(t, err)
	rel.ReleaseID = id
	rel.CreatedAt = clk.Now().Add(-time.Minute).UTC()
	rel.CreatedBy = "arn:aws:iam::111111111111:user/alice"
	for _, m := range mutate {
		m(rel)
	}
	raw, err := json.Marshal(rel)
	require.NoError(t, err)
	return raw
}

// proved is raw with an identity proof, as a client uploads it.
func proved(t *testing.T, r *Region, raw []byte) []byte {
	t.Helper()
	p, err := r.Prove(context.Background(), raw)
	require.NoError(t, err)
	return p
}

// serve serves r on a free loopback port until the test ends and returns
// its base URL.
func serve(t *testing.T, r *Region) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-done, "graceful shutdown")
	})
	return "http://" + ln.Addr().String()
}

func sfnClient(url string) *sfn.Client {
	return sfn.New(sfn.Options{
		Region:           DefaultRegion,
		BaseEndpoint:     aws.String(url),
		Credentials:      credentials.NewStaticCredentialsProvider("local", "local-secret", ""),
		RetryMaxAttempts: 1,
		HTTPClient:       HTTPClient(),
	})
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing %s (run go test -update)", path)
	assert.Equal(t, string(want), got)
}

// utcHistory normalises SDK history events for comparison: timestamps in
// UTC (the SDK decodes epoch seconds with millisecond precision).
func utcHistory(events []sfntypes.HistoryEvent) []sfntypes.HistoryEvent {
	out := make([]sfntypes.HistoryEvent, len(events))
	for i, ev := range events {
		if ev.Timestamp != nil {
			ts := ev.Timestamp.UTC().Truncate(time.Millisecond)
			ev.Timestamp = &ts
		}
		out[i] = ev
	}
	return out
}

// TestLocalDeployOverAPIs runs a whole deploy of the deploy-test release
// through the real SDK clients pointed at the region's one port: the
// release uploaded with S3, the execution started, described, listed and
// its history read with Step Functions, the world read at /_ferry/world.
func TestLocalDeployOverAPIs(t *testing.T) {
	ctx := context.Background()
	r, clk := newTestRegion(t, Options{})
	url := serve(t, r)
	s3c := s3server.NewClient(url)
	sfc := sfnClient(url)

	const id = "r20260301-1"
	raw := proved(t, r, releaseJSON(t, clk, id))
	_, err := s3c.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(r.Bucket()), Key: aws.String(naming.ReleaseKey(testProject, testConfig, id)),
		Body: bytes.NewReader(raw), ContentLength: aws.Int64(int64(len(raw))),
	})
	require.NoError(t, err)

	started, err := sfc.StartExecution(ctx, &sfn.StartExecutionInput{
		StateMachineArn: aws.String(r.StateMachineARN()), Name: aws.String(id), Input: aws.String(string(raw)),
	})
	require.NoError(t, err)
	arn := aws.ToString(started.ExecutionArn)
	assert.Equal(t, asl.ExecutionARN(r.StateMachineARN(), id), arn)
	assert.Equal(t, epoch0, started.StartDate.UTC())

	d, err := r.Wait(ctx, arn)
	require.NoError(t, err)
	require.Equal(t, asl.StatusSucceeded, d.Status, "error %s: %s", d.Error, d.Cause)

	x, err := r.Execution(arn)
	require.NoError(t, err)
	checkGolden(t, "deploy-path.golden", strings.Join(x.Path(), "\n")+"\n")

	desc, err := sfc.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
	require.NoError(t, err)
	assert.Equal(t, sfntypes.ExecutionStatusSucceeded, desc.Status)
	assert.Equal(t, id, aws.ToString(desc.Name))
	assert.Equal(t, r.StateMachineARN(), aws.ToString(desc.StateMachineArn))
	assert.Equal(t, string(raw), aws.ToString(desc.Input), "the input as given")
	assert.Equal(t, d.Output, aws.ToString(desc.Output))
	assert.Equal(t, d.StartDate, desc.StartDate.UTC())
	assert.Equal(t, d.StopDate, desc.StopDate.UTC())
	assert.True(t, desc.StopDate.After(*desc.StartDate))

	// The history through the SDK, in pages of 7, forwards and backwards,
	// is the interpreter's history.
	want := utcHistory(asl.ToSFNHistory(x.History()))
	for _, reverse := range []bool{false, true} {
		var got []sfntypes.HistoryEvent
		pages := 0
		p := sfn.NewGetExecutionHistoryPaginator(sfc, &sfn.GetExecutionHistoryInput{
			ExecutionArn: aws.String(arn), MaxResults: 7, ReverseOrder: reverse,
		})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			require.NoError(t, err)
			assert.LessOrEqual(t, len(page.Events), 7)
			got = append(got, page.Events...)
			pages++
		}
		if reverse {
			for i, j := 0, len(got)-1; i < j; i, j = i+1, j-1 {
				got[i], got[j] = got[j], got[i]
			}
		}
		assert.Equal(t, want, utcHistory(got), "reverse=%v", reverse)
		assert.Equal(t, (len(want)+6)/7, pages)
	}
	last := want[len(want)-1]
	assert.Equal(t, sfntypes.HistoryEventTypeExecutionSucceeded, last.Type)

	// The execution is listed, under its status and not under another.
	list, err := sfc.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(r.StateMachineARN())})
	require.NoError(t, err)
	require.Len(t, list.Executions, 1)
	assert.Equal(t, arn, aws.ToString(list.Executions[0].ExecutionArn))
	assert.Equal(t, sfntypes.ExecutionStatusSucceeded, list.Executions[0].Status)
	running, err := sfc.ListExecutions(ctx, &sfn.ListExecutionsInput{
		StateMachineArn: aws.String(r.StateMachineARN()), StatusFilter: sfntypes.ExecutionStatusRunning})
	require.NoError(t, err)
	assert.Empty(t, running.Executions)

	sm, err := sfc.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(r.StateMachineARN())})
	require.NoError(t, err)
	assert.Equal(t, string(r.Definition()), aws.ToString(sm.Definition))
	assert.Equal(t, sfntypes.StateMachineTypeStandard, sm.Type)
	assert.Equal(t, naming.StateMachineName, aws.ToString(sm.Name))

	// The world view shows the new ASG with its instances healthy.
	var snap sim.Snapshot
	getJSON(t, url+WorldPath, &snap)
	group := naming.GroupName(testProject, testConfig, "web", id)
	var found *sim.GroupSnapshot
	for _, a := range snap.Accounts {
		for i, g := range a.Groups {
			if g.Name == group {
				found = &a.Groups[i]
			}
		}
	}
	require.NotNil(t, found, "group %s in %s", group, WorldPath)
	assert.Equal(t, id, found.Tags[naming.TagReleaseID])
	assert.Positive(t, found.Desired)
	assert.Len(t, found.Instances, int(found.Desired))

	// The deployer bucket is versioned, as DeployerStack creates it; the
	// asset buckets are not. Releasing the lock with a conditional delete
	// left a delete marker over the lock's one version: in a versioned
	// bucket a DeleteObject without a version "inserts a delete marker,
	// which becomes the current version of the object" (DeleteObject,
	// https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteObject.html).
	versioning, err := s3c.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: aws.String(r.Bucket())})
	require.NoError(t, err)
	assert.Equal(t, s3types.BucketVersioningStatusEnabled, versioning.Status)
	assets, err := s3c.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: aws.String(naming.AssetBucketName("222222222222", DefaultRegion, ""))})
	require.NoError(t, err)
	assert.Empty(t, assets.Status)
	lockVersions, err := s3c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{
		Bucket: aws.String(r.Bucket()), Prefix: aws.String(naming.LockKey(testProject, testConfig))})
	require.NoError(t, err)
	assert.Len(t, lockVersions.Versions, 1, "the lock was taken once")
	require.Len(t, lockVersions.DeleteMarkers, 1, "and released once")
	assert.True(t, aws.ToBool(lockVersions.DeleteMarkers[0].IsLatest))

	var info Info
	getJSON(t, url+InfoPath, &info)
	assert.Equal(t, r.StateMachineARN(), info.StateMachineARN)
	assert.Equal(t, naming.DeployerBucketName("111111111111", DefaultRegion), info.Bucket)
	assert.Equal(t, "111111111111", info.Account)
	assert.Contains(t, info.AssetBuckets, naming.AssetBucketName("222222222222", DefaultRegion, ""))
	assert.Equal(t, clk.Now(), info.Now)
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(v))
}

// TestLocalAPIErrors checks that the SDK surfaces the region's errors as
// its typed errors.
func TestLocalAPIErrors(t *testing.T) {
	ctx := context.Background()
	r, clk := newTestRegion(t, Options{})
	url := serve(t, r)
	sfc := sfnClient(url)
	release := r.Hold()
	defer release()
	smARN := aws.String(r.StateMachineARN())
	raw := proved(t, r, releaseJSON(t, clk, "r1"))
	x, err := r.StartRelease(ctx, raw)
	require.NoError(t, err)

	var doesNotExist *sfntypes.ExecutionDoesNotExist
	_, err = sfc.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(asl.ExecutionARN(r.StateMachineARN(), "nope"))})
	assert.ErrorAs(t, err, &doesNotExist)
	_, err = sfc.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(asl.ExecutionARN(r.StateMachineARN(), "nope"))})
	assert.ErrorAs(t, err, &doesNotExist)
	_, err = sfc.StopExecution(ctx, &sfn.StopExecutionInput{ExecutionArn: aws.String("arn:aws:states:us-east-1:111111111111:execution:other:r1")})
	assert.ErrorAs(t, err, &doesNotExist)

	var invalidArn *sfntypes.InvalidArn
	_, err = sfc.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String("not-an-arn")})
	assert.ErrorAs(t, err, &invalidArn)
	_, err = sfc.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String("arn:aws:states:us-east-1")})
	assert.ErrorAs(t, err, &invalidArn)

	var noMachine *sfntypes.StateMachineDoesNotExist
	_, err = sfc.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String("arn:aws:states:us-east-1:111111111111:stateMachine:other"), Name: aws.String("a")})
	assert.ErrorAs(t, err, &noMachine)

	var already *sfntypes.ExecutionAlreadyExists
	_, err = sfc.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: smARN, Name: aws.String("r1"), Input: aws.String(`{"other": true}`)})
	assert.ErrorAs(t, err, &already)

	var invalidName *sfntypes.InvalidName
	_, err = sfc.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: smARN, Name: aws.String("has space")})
	assert.ErrorAs(t, err, &invalidName)

	var invalidInput *sfntypes.InvalidExecutionInput
	_, err = sfc.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: smARN, Name: aws.String("bad-input"), Input: aws.String(`{`)})
	assert.ErrorAs(t, err, &invalidInput)

	var validation *sfntypes.ValidationException
	_, err = sfc.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: smARN, MaxResults: 1001})
	assert.ErrorAs(t, err, &validation)

	var invalidToken *sfntypes.InvalidToken
	_, err = sfc.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(x.ARN()), NextToken: aws.String("garbage!")})
	assert.ErrorAs(t, err, &invalidToken)

	// Same name and input while running: the same execution.
	again, err := sfc.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: smARN, Name: aws.String("r1"), Input: aws.String(string(raw))})
	require.NoError(t, err)
	assert.Equal(t, x.ARN(), aws.ToString(again.ExecutionArn))

	// Stopping through the API aborts it.
	stopped, err := sfc.StopExecution(ctx, &sfn.StopExecutionInput{ExecutionArn: aws.String(x.ARN()), Error: aws.String("Operator"), Cause: aws.String("test")})
	require.NoError(t, err)
	<-x.Done()
	assert.Equal(t, x.Describe().StopDate, stopped.StopDate.UTC())
	desc, err := sfc.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(x.ARN())})
	require.NoError(t, err)
	assert.Equal(t, sfntypes.ExecutionStatusAborted, desc.Status)
	assert.Equal(t, "Operator", aws.ToString(desc.Error))
	assert.Nil(t, desc.Output)

	// Unknown operations and views.
	resp, err := http.Post(url+"/", jsonContentType, strings.NewReader("{}"))
	require.NoError(t, err)
	resp.Body.Close()
	req, err := http.NewRequest(http.MethodPost, url+"/", strings.NewReader("{}"))
	require.NoError(t, err)
	req.Header.Set("X-Amz-Target", "AWSStepFunctions.CreateStateMachine")
	req.Header.Set("Content-Type", jsonContentType)
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	var body map[string]string
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Equal(t, CodeUnknownOperation, body["__type"])
	resp, err = http.Get(url + "/_ferry/nope")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	resp, err = http.Post(url+InfoPath, "application/json", nil)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, "the info view is read-only")
	resp, err = http.Post(url+WorldPath, "application/json", nil)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "a POST to the world is a meddling, and nothing is none")
}

// TestLocalConcurrentSameConfig starts two releases of one project-config
// at once: exactly one deploys, the other finds the lock taken and ends in
// FailureClean with LockExistsError.
func TestLocalConcurrentSameConfig(t *testing.T) {
	ctx := context.Background()
	r, clk := newTestRegion(t, Options{})
	hold := r.Hold()
	a, err := r.StartRelease(ctx, releaseJSON(t, clk, "r-a"))
	require.NoError(t, err)
	b, err := r.StartRelease(ctx, releaseJSON(t, clk, "r-b"))
	require.NoError(t, err)
	hold()
	require.NoError(t, a.Wait(ctx))
	require.NoError(t, b.Wait(ctx))

	byStatus := map[asl.Status]*asl.Execution{}
	for _, x := range []*asl.Execution{a, b} {
		byStatus[x.Describe().Status] = x
	}
	require.Contains(t, byStatus, asl.StatusSucceeded)
	require.Contains(t, byStatus, asl.StatusFailed)
	won, lost := byStatus[asl.StatusSucceeded], byStatus[asl.StatusFailed]
	assert.Equal(t, execution.EndSuccess, last(won.Path()))
	assert.Equal(t, []string{shape.StateQuery, execution.TaskValidate, execution.TaskLock, execution.EndFailureClean}, lost.Path())
	assert.Equal(t, "LockExistsError", lost.Describe().Error)

	// The cause is the function's error payload, as AWS's Lambda service
	// reports a function error to Step Functions ("Handling error
	// conditions using a Step Functions state machine").
	var payload struct {
		Message string `json:"errorMessage"`
		Type    string `json:"errorType"`
	}
	require.NoError(t, json.Unmarshal([]byte(lost.Describe().Cause), &payload), "cause %q", lost.Describe().Cause)
	assert.Equal(t, "LockExistsError", payload.Type)
	assert.Contains(t, payload.Message, "is held by release")

	// The release that lost still has an outcome, written by Lock: ferry
	// status never shows it as running or without an end (issue #17).
	lostID := map[*asl.Execution]string{a: "r-a", b: "r-b"}[lost]
	o, found, err := ledger.New(r.S3(), r.Bucket()).GetOutcome(ctx, "coinbase/deploy-test", "development", lostID)
	require.NoError(t, err)
	require.True(t, found, "no outcome for release %s", lostID)
	assert.Equal(t, execution.EndFailureClean, o.End)
	assert.Equal(t, failure.NameLockExists, o.Error)
	assert.Contains(t, o.Cause, "is held by release")
	assert.Equal(t, lost.ARN(), o.Execution)

	assert.Len(t, r.Executions(""), 2)
	assert.Equal(t, []*asl.Execution{lost}, r.Executions(asl.StatusFailed))
	assert.Equal(t, []*asl.Execution{b, a}, r.Executions(""), "newest first")
}

func last(path []string) string {
	if len(path) == 0 {
		return ""
	}
	return path[len(path)-1]
}

// TestLocalStartIdempotent: the same name and input while running is the
// same execution; a different input, or the same once it has ended, is
// ExecutionAlreadyExists.
func TestLocalStartIdempotent(t *testing.T) {
	ctx := context.Background()
	r, clk := newTestRegion(t, Options{})
	hold := r.Hold()
	raw := proved(t, r, releaseJSON(t, clk, "r1"))
	x, err := r.StartRelease(ctx, raw)
	require.NoError(t, err)
	y, existed, err := r.Start("r1", raw)
	require.NoError(t, err)
	assert.True(t, existed)
	assert.Same(t, x, y)
	_, _, err = r.Start("r1", json.RawMessage(`{}`))
	assertCode(t, CodeExecutionAlreadyExists, err)
	hold()
	d, err := r.Wait(ctx, x.ARN())
	require.NoError(t, err)
	require.Equal(t, asl.StatusSucceeded, d.Status, "%s: %s", d.Error, d.Cause)
	_, _, err = r.Start("r1", raw)
	assertCode(t, CodeExecutionAlreadyExists, err)
	assert.Len(t, r.Executions(""), 1)
}

func assertCode(t *testing.T, code string, err error) {
	t.Helper()
	var apiErr *APIError
	if assert.ErrorAs(t, err, &apiErr) {
		assert.Equal(t, code, apiErr.ErrorCode(), apiErr.Error())
	}
}

// TestLocalStop stops an execution while it waits for its instances: it
// ends ABORTED in the wait state, and stopping it again changes nothing.
func TestLocalStop(t *testing.T) {
	ctx := context.Background()
	waiting := make(chan string, 100)
	r, clk := newTestRegion(t, Options{Observer: func(arn string, ev asl.Event) {
		if ev.Type == asl.EventWaitStateEntered {
			waiting <- arn
		}
	}})
	hold := r.Hold()
	defer hold()
	x, err := r.StartRelease(ctx, releaseJSON(t, clk, "r1"))
	require.NoError(t, err)
	assert.Equal(t, x.ARN(), <-waiting, "the execution reached its first wait")
	before := clk.Now()
	d, err := r.Stop(x.ARN(), "Operator", "stopped by the test")
	require.NoError(t, err)
	assert.Equal(t, asl.StatusAborted, d.Status)
	assert.Equal(t, "Operator", d.Error)
	assert.Equal(t, before, d.StopDate, "no time passed")
	<-x.Done()
	assert.Equal(t, "WaitForHealthy", last(x.Path()))
	h := x.History()
	assert.Equal(t, asl.EventWaitStateAborted, h[len(h)-2].Type)
	assert.Equal(t, asl.EventExecutionAborted, h[len(h)-1].Type)

	again, err := r.Stop(x.ARN(), "Other", "")
	require.NoError(t, err)
	assert.Equal(t, d, again, "stopping an ended execution changes nothing")
	_, err = r.Stop("arn:aws:states:us-east-1:111111111111:execution:ferry-deployer:nope", "", "")
	assertCode(t, CodeExecutionDoesNotExist, err)
}

// TestLocalIntercept: an Intercept sees every task and may fail one after
// running it (a Lambda that dies after its work): the state machine
// retries it.
func TestLocalIntercept(t *testing.T) {
	ctx := context.Background()
	var tasks []string
	failed := false
	r, clk := newTestRegion(t, Options{Intercept: func(ctx context.Context, req execution.Request, next Invoke) (json.RawMessage, error) {
		tasks = append(tasks, req.Task)
		out, err := next(ctx, req)
		if req.Task == execution.TaskDeploy && !failed {
			failed = true
			return nil, &lambdaError{name: "Lambda.ServiceException", msg: "the function died"}
		}
		return out, err
	}})
	x, err := r.StartRelease(ctx, releaseJSON(t, clk, "r1"))
	require.NoError(t, err)
	d, err := r.Wait(ctx, x.ARN())
	require.NoError(t, err)
	assert.Equal(t, asl.StatusSucceeded, d.Status, "%s: %s", d.Error, d.Cause)
	assert.Equal(t, []string{execution.TaskValidate, execution.TaskLock, execution.TaskValidateResources,
		execution.TaskPublish, execution.TaskDeploy, execution.TaskDeploy}, tasks[:6], "Deploy retried")
	assert.Equal(t, execution.TaskCleanUpSuccess, tasks[len(tasks)-1])
}

func TestLocalNewOptions(t *testing.T) {
	world := testWorld(t)
	tests := []struct {
		name string
		opts Options
		err  string
	}{
		{"no world", Options{}, "the world has no account"},
		{"unknown account", Options{World: world, Account: "999999999999"}, "account 999999999999 is not an account of the world"},
		{"clock and speed", Options{World: world, Clock: clock.NewVirtual(epoch0), Speed: 2}, "set Clock or Speed, not both"},
		{"negative speed", Options{World: world, Speed: -1}, "must not be negative"},
		{"NaN speed", Options{World: world, Speed: math.NaN()}, "speed NaN must be a number from 0 to 10000"},
		{"infinite speed", Options{World: world, Speed: math.Inf(1)}, "speed +Inf must be a number from 0 to 10000"},
		{"huge speed", Options{World: world, Speed: 1e300}, "speed 1e+300 must be a number from 0 to 10000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(context.Background(), tt.opts)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.err)
		})
	}

	// Scaled and own-clock regions: coordinates, no waiting.
	for _, speed := range []float64{0, 60} {
		r, err := New(context.Background(), Options{World: world, Account: "222222222222", Region: "us-west-2", Speed: speed})
		require.NoError(t, err)
		info := r.Info()
		assert.Equal(t, "arn:aws:states:us-west-2:222222222222:stateMachine:ferry-deployer", info.StateMachineARN)
		assert.Equal(t, naming.DeployerBucketName("222222222222", "us-west-2"), info.Bucket)
		assert.Equal(t, speed, info.Speed)
		_, isScaled := r.Clock().(*clock.Scaled)
		assert.Equal(t, speed > 0, isScaled)
		assert.WithinDuration(t, time.Now(), info.Now, 24*time.Hour, "starts at the wall clock's now")
		require.NoError(t, r.Close())
		require.NoError(t, r.Close(), "closing twice")
		_, _, err = r.Start("late", nil)
		assertCode(t, CodeInternal, err)
	}
}

func TestValidateName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"r20260301-120000-abc", true},
		{"Release_1.2", true},
		{strings.Repeat("a", 80), true},
		{"", false},
		{strings.Repeat("a", 81), false},
		{"a b", false},
		{"a\tb", false},
		{"a/b", false},
		{"a:b", false},
		{"a{b}", false},
		{"a*", false},
		{"a\x00", false},
		{"a\u0085", false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.name), func(t *testing.T) {
			err := validateName(tt.name)
			if tt.ok {
				assert.NoError(t, err)
			} else {
				assertCode(t, CodeInvalidName, err)
			}
		})
	}
}

func TestSplitExecutionARN(t *testing.T) {
	sm, name, ok := splitExecutionARN("arn:aws:states:us-east-1:111111111111:execution:ferry-deployer:r1")
	assert.True(t, ok)
	assert.Equal(t, "arn:aws:states:us-east-1:111111111111:stateMachine:ferry-deployer", sm)
	assert.Equal(t, "r1", name)
	for _, bad := range []string{"", "arn", "arn:aws:states:us-east-1:111111111111:stateMachine:ferry-deployer",
		"arn:aws:states:us-east-1:111111111111:execution:ferry-deployer:", "arn:aws:lambda:us-east-1:1:execution:a:b"} {
		_, _, ok := splitExecutionARN(bad)
		assert.False(t, ok, bad)
	}
}

func TestAPIErrorShape(t *testing.T) {
	err := error(apiErrorf(CodeExecutionDoesNotExist, "Execution Does Not Exist: '%s'", "x"))
	var apiErr *APIError
	require.True(t, errors.As(err, &apiErr))
	assert.Equal(t, "ExecutionDoesNotExist: Execution Does Not Exist: 'x'", err.Error())
	assert.Equal(t, http.StatusBadRequest, apiErr.status())
	assert.Equal(t, http.StatusInternalServerError, apiErrorf(CodeInternal, "x").status())
}

// TestColdStart: after ColdStart the next task that works in the target
// runs as in a new Lambda container, with no role credentials cached: it
// assumes the deploy role again. Without it, one session serves them all.
func TestColdStart(t *testing.T) {
	var r *Region
	cold := false
	r, clk := newTestRegion(t, Options{Intercept: func(ctx context.Context, req execution.Request, next Invoke) (json.RawMessage, error) {
		if cold && req.Task == execution.TaskCheckHealthy {
			require.NoError(t, r.ColdStart())
		}
		return next(ctx, req)
	}})
	run := func(id string) int {
		before := r.World().Sessions()
		x, err := r.StartRelease(context.Background(), releaseJSON(t, clk, id))
		require.NoError(t, err)
		d, err := r.Wait(context.Background(), x.ARN())
		require.NoError(t, err)
		require.Equal(t, asl.StatusSucceeded, d.Status, "%s: %s", d.Error, d.Cause)
		return r.World().Sessions() - before
	}
	warm := run("r20260301-1")
	cold = true
	clk.Advance(time.Hour)
	assert.Greater(t, run("r20260301-2"), warm+10, "every health check assumed the role again")
}

// TestCrashingFleetIsNeverDeployed is issue #13's first defect as it was
// found: testdata/deploy-test-release.json deployed with the built-in
// world's ubuntu-crashing image (its instances pass their health checks,
// then die) and min_size 1 or 2. One healthy reading once ended Success
// and retired the previous release; with the stability window the
// release halts at the first termination (max_terms 0), ends FailureClean
// through CleanUpFailure, and the previous release still serves.
func TestCrashingFleetIsNeverDeployed(t *testing.T) {
	for _, minSize := range []int{1, 2} {
		t.Run(fmt.Sprintf("min_size %d", minSize), func(t *testing.T) {
			ctx := context.Background()
			r, clk := newTestRegion(t, Options{})
			deploy := func(id string, mutate ...func(*release.Release)) *asl.Execution {
				x, err := r.StartRelease(ctx, releaseJSON(t, clk, id, mutate...))
				require.NoError(t, err)
				require.NoError(t, x.Wait(ctx))
				return x
			}
			good := deploy("r-good")
			require.Equal(t, execution.EndSuccess, last(good.Path()))
			clk.Advance(time.Hour)
			bad := deploy("r-crashing", func(rel *release.Release) {
				rel.AMI = "ubuntu-crashing"
				rel.Services["web"].Autoscaling = &release.Autoscaling{MinSize: minSize, MaxSize: minSize + 2}
			})
			d := bad.Describe()
			assert.Equal(t, []string{execution.TaskCleanUpFailure, shape.StateCleanedUp, execution.TaskReleaseLock, execution.EndFailureClean}, bad.Path()[len(bad.Path())-4:])
			assert.Equal(t, "HaltError", d.Error)
			assert.Contains(t, d.Cause, "terminated during the deploy")
			// The execution's cause is the function error payload; the
			// outcome ferry records is the message people read.
			o, found, err := ledger.New(r.S3(), r.Bucket()).GetOutcome(ctx, testProject, testConfig, "r-crashing")
			require.NoError(t, err)
			require.True(t, found)
			want, err := json.Marshal(map[string]string{"errorType": "HaltError", "errorMessage": o.Cause})
			require.NoError(t, err)
			assert.JSONEq(t, string(want), d.Cause)

			groups := map[string]sim.GroupSnapshot{}
			for _, a := range r.World().Snapshot().Accounts {
				for _, g := range a.Groups {
					groups[g.Name] = g
				}
			}
			serving := groups[naming.GroupName(testProject, testConfig, "web", "r-good")]
			assert.Empty(t, serving.Status, "the previous group is not being deleted")
			assert.NotEmpty(t, serving.Instances)
			if g, ok := groups[naming.GroupName(testProject, testConfig, "web", "r-crashing")]; ok {
				assert.Equal(t, "Delete in progress", g.Status)
			}
		})
	}
}

// TestIdentityIsVerified: the region's deployer verifies every release's
// identity proof as the Lambda does, by replaying it to the region's STS,
// and records the caller STS names, with the name the client gave itself.
func TestIdentityIsVerified(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		raw   func(r *Region, clk clock.Clock) []byte
		cause string // "" for Success
	}{
		{name: "proved", raw: func(r *Region, clk clock.Clock) []byte { return proved(t, r, releaseJSON(t, clk, "r1")) }},
		{name: "no proof", raw: func(r *Region, clk clock.Clock) []byte { return releaseJSON(t, clk, "r1") },
			cause: "identity: required"},
		{name: "a proof of another release", raw: func(r *Region, clk clock.Clock) []byte {
			var other, mine release.Release
			require.NoError(t, json.Unmarshal(proved(t, r, releaseJSON(t, clk, "r0")), &other))
			require.NoError(t, json.Unmarshal(releaseJSON(t, clk, "r1"), &mine))
			mine.Identity = other.Identity
			raw, err := json.Marshal(&mine)
			require.NoError(t, err)
			return raw
		}, cause: "SignatureDoesNotMatch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, clk := newTestRegion(t, Options{})
			raw := tt.raw(r, clk)
			require.NoError(t, ledger.New(r.S3(), r.Bucket()).PutRelease(ctx, testProject, testConfig, "r1", raw))
			x, _, err := r.Start("r1", raw)
			require.NoError(t, err)
			require.NoError(t, x.Wait(ctx))
			d := x.Describe()
			if tt.cause != "" {
				assert.Equal(t, asl.StatusFailed, d.Status)
				assert.Equal(t, "BadReleaseError", d.Error)
				assert.Contains(t, failure.Message(d.Cause), tt.cause)
				for _, a := range r.World().Snapshot().Accounts {
					assert.Empty(t, a.Groups, "nothing was deployed")
				}
				return
			}
			require.Equal(t, asl.StatusSucceeded, d.Status, d.Cause)
			o, found, err := ledger.New(r.S3(), r.Bucket()).GetOutcome(ctx, testProject, testConfig, "r1")
			require.NoError(t, err)
			require.True(t, found)
			assert.Equal(t, "arn:aws:iam::111111111111:user/ferry-local", o.CreatedBy, "the caller the region's STS names")
			assert.Equal(t, "arn:aws:iam::111111111111:user/alice", o.CreatedByName, "the name the client gave itself")
		})
	}
}

// TestConsoleAtTheRoot: a browser's GET / is the console; an SDK's signed
// GET / is still S3's ListBuckets.
func TestConsoleAtTheRoot(t *testing.T) {
	r, _ := newTestRegion(t, Options{})
	srv := httptest.NewServer(r.Handler())
	t.Cleanup(srv.Close)

	req, err := http.NewRequest(http.MethodGet, srv.URL+"/", nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/html,application/xhtml+xml")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	page, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, resp.Header.Get("Content-Type"), "text/html")
	assert.Contains(t, string(page), "ferry local console")

	req, err = http.NewRequest(http.MethodGet, srv.URL+"/", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=test/20250101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=0")
	req.Header.Set("X-Amz-Date", "20250101T000000Z")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	buckets, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(buckets), "ListAllMyBucketsResult")
	assert.Contains(t, string(buckets), r.Bucket())
}
