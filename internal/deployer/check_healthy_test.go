package deployer

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/fanout"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/store/halt"
	"github.com/ferryhq/ferry/internal/store/ledger"
	"github.com/ferryhq/ferry/internal/store/lock"
	"github.com/ferryhq/ferry/internal/target"
)

// slowStore is a Store whose every read and write takes a second on the
// task's Timeline (package fanout), as S3 calls take their time in AWS.
type slowStore struct{ Store }

func (s slowStore) GetObject(ctx context.Context, in *s3.GetObjectInput, optFns ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	fanout.Spend(ctx, time.Second)
	return s.Store.GetObject(ctx, in, optFns...)
}

func (s slowStore) PutObject(ctx context.Context, in *s3.PutObjectInput, optFns ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	fanout.Spend(ctx, time.Second)
	return s.Store.PutObject(ctx, in, optFns...)
}

func (s slowStore) DeleteObject(ctx context.Context, in *s3.DeleteObjectInput, optFns ...func(*s3.Options)) (*s3.DeleteObjectOutput, error) {
	fanout.Spend(ctx, time.Second)
	return s.Store.DeleteObject(ctx, in, optFns...)
}

// checkStart is a run after Deploy, its deployer's calls to the
// deployer bucket a second each, and the CheckHealthy request it is at.
func checkStart(t *testing.T) (*harness, *Deployer, *execution.State, execution.Request) {
	return slowAfter(t, execution.TaskCheckHealthy, upToDeploy...)
}

// slowAfter is a run of a release with an asset after tasks, its
// deployer's calls to the deployer bucket a second each, and the request
// of task it is at.
func slowAfter(t *testing.T, task string, tasks ...string) (*harness, *Deployer, *execution.State, execution.Request) {
	h := newHarness(t)
	r := h.baseRelease()
	h.addAsset(r, "app-config", []byte("workers = 8\n"))
	x := h.start(r)
	require.NoError(t, x.steps(tasks...))
	d := *h.d
	slow := slowStore{h.store}
	d.store, d.locks, d.halts, d.ledger = slow, lock.New(slow, bucket, h.clk), halt.New(slow, bucket), ledger.New(slow, bucket)
	in, err := json.Marshal(x.state)
	require.NoError(t, err)
	return h, &d, x.state, execution.Request{Task: task, Input: in, Execution: x.ctx}
}

// TestPublishSideBySide: Publish stores the user data while it publishes
// the assets (their URLs are known before): the user data's writes take
// no time of their own beside the assets'.
func TestPublishSideBySide(t *testing.T) {
	before := []string{execution.TaskValidate, execution.TaskLock, execution.TaskValidateResources}
	_, d, _, req := slowAfter(t, execution.TaskPublish, before...)
	ctx, tl := fanout.WithTimeline(t.Context())
	_, err := d.publish(ctx, req)
	require.NoError(t, err)

	_, d, st, req := slowAfter(t, execution.TaskPublish, before...)
	ctx, one := fanout.WithTimeline(t.Context())
	_, err = d.verify(ctx, req)
	require.NoError(t, err)
	var known []target.Target
	l, err := d.loadBeside(ctx, st, func(ctx context.Context) error {
		var err error
		known, err = d.knownTargets(ctx, project, config)
		return err
	})
	require.NoError(t, err)
	require.NoError(t, d.publishAssets(ctx, st, l, known))
	assets := one.Elapsed()
	require.NoError(t, d.putUserData(ctx, l.r, st.Target))
	require.Greater(t, one.Elapsed(), assets, "the user data's writes take time")
	assert.Equal(t, assets, tl.Elapsed(), "Publish takes its assets' time (one after the other: %v)", one.Elapsed())
}

// TestBeginCheckReadsSideBySide: a health check reads the halt marker,
// the release and the lock's run side by side: its S3 reads take one
// read's time, not three, and the check sees its release's target sooner.
func TestBeginCheckReadsSideBySide(t *testing.T) {
	_, d, st, req := checkStart(t)
	ctx, tl := fanout.WithTimeline(t.Context())
	r, c, err := d.beginCheck(ctx, st, req)
	require.NoError(t, err)
	assert.NotNil(t, r)
	assert.NotNil(t, c)
	assert.Equal(t, time.Second, tl.Elapsed())
}

// TestHealthyReachedSideBySide: the check that finds the release healthy
// puts Release Healthy and clears the deploy's start marker side by side,
// in one call's time; a check that does not, neither.
func TestHealthyReachedSideBySide(t *testing.T) {
	h, d, st, req := checkStart(t)
	d.starts = lock.NewStarts(slowStore{h.store}, bucket)
	_, c, err := d.loadAndConnect(t.Context(), st, false)
	require.NoError(t, err)
	var ops []string
	h.world.OnCall(func(ctx context.Context, call sim.Call) {
		ops = append(ops, call.Op)
		fanout.Spend(ctx, time.Second)
	})
	marker := naming.StartKey(account, region, naming.StartStamp(req.Execution.StartTime), req.Execution.Name)
	_, err = h.store.HeadObject(t.Context(), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(marker)})
	require.NoError(t, err, "Deploy's start marker")

	ctx, tl := fanout.WithTimeline(t.Context())
	d.healthyReached(ctx, c, st, req, &execution.Health{Checks: 3})
	assert.Empty(t, ops, "not healthy: nothing put")
	assert.Zero(t, tl.Elapsed())

	d.healthyReached(ctx, c, st, req, &execution.Health{Checks: 4, Healthy: true})
	assert.Equal(t, []string{"PutEvents"}, ops, "Release Healthy")
	_, err = h.store.HeadObject(t.Context(), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(marker)})
	require.Error(t, err, "the start marker cleared")
	assert.Equal(t, time.Second, tl.Elapsed(), "one call's time for both")
}

// TestBeginCheckFailsInOrder: read side by side, a check still fails
// with a halt before a timeout.
func TestBeginCheckFailsInOrder(t *testing.T) {
	h, d, st, req := checkStart(t)
	h.clk.Advance(time.Duration(st.Timeout+1) * time.Second)
	_, _, err := d.beginCheck(t.Context(), st, req)
	var timeout *failure.TimeoutError
	require.ErrorAs(t, err, &timeout)

	require.NoError(t, h.halts.Put(t.Context(), project, config, halt.Marker{By: "oncall", Reason: "errors up", At: h.clk.Now()}))
	_, _, err = d.beginCheck(t.Context(), st, req)
	var halted *failure.HaltError
	require.ErrorAs(t, err, &halted)
	assert.Contains(t, halted.Reason, "errors up")
}

// TestHealthReportReadsSideBySide: a health report reads the groups and
// the target groups the release names side by side: two calls' time, one
// of each, take one.
func TestHealthReportReadsSideBySide(t *testing.T) {
	h, d, st, _ := checkStart(t)
	r, c, err := d.loadAndConnect(t.Context(), st, false)
	require.NoError(t, err)
	var ops []string
	h.world.OnCall(func(ctx context.Context, call sim.Call) {
		ops = append(ops, call.Op)
		fanout.Spend(ctx, time.Second)
	})
	ctx, tl := fanout.WithTimeline(t.Context())
	_, err = d.healthReport(ctx, c, st, r, h.clk.Now(), activitiesOnChange, balancersUnsettled, nil)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"DescribeAutoScalingGroups", "DescribeTargetGroups"}, ops, "no instance in service yet: no load balancer read")
	assert.Equal(t, time.Second, tl.Elapsed())
}

// TestWindowOpensOnceTheReadsAreDone: in a Lambda the clock runs while
// a check's reads wait for AWS (here each AWS call takes two seconds of
// the clock, throttled as it may be), so the stability window a check
// opens starts once its reads are done, never at the check's start: a
// window stamped before them would count their time as held. And the
// check that finds the release stable comes a whole window after the
// reads that first saw each service at its target.
func TestWindowOpensOnceTheReadsAreDone(t *testing.T) {
	h := newHarness(t)
	r := h.baseRelease()
	x := h.start(r)
	require.NoError(t, x.steps(upToDeploy...))
	var lastRead time.Time
	h.world.OnCall(func(_ context.Context, call sim.Call) {
		h.clk.Advance(2 * time.Second)
		if strings.HasPrefix(call.Op, "Describe") {
			lastRead = h.clk.Now()
		}
	})
	opened := map[string]time.Time{} // the reads' end of the check that opened each window
	for checks := 1; ; checks++ {
		require.LessOrEqual(t, checks, 40, "not healthy: %+v", x.state.Health)
		h.clk.Advance(time.Duration(x.state.Health.WaitSeconds) * time.Second)
		prev := x.state.Health.Services
		start := h.clk.Now()
		require.NoError(t, x.step(execution.TaskCheckHealthy))
		for svc, s := range x.state.Health.Services {
			if s.HealthySince == nil || (prev[svc].HealthySince != nil && prev[svc].HealthySince.Equal(*s.HealthySince)) {
				continue
			}
			require.Greater(t, lastRead, start, "the check's reads took time")
			assert.False(t, s.HealthySince.Before(lastRead), "%s: the window opens once the reads that saw it are done (%s), not at the check's start (%s): %s",
				svc, lastRead.Format(time.TimeOnly), start.Format(time.TimeOnly), s.HealthySince.Format(time.TimeOnly))
			opened[svc] = lastRead
		}
		if x.state.Health.Healthy {
			for svc, s := range x.state.Health.Services {
				window := time.Duration(s.StableSeconds) * time.Second
				assert.GreaterOrEqual(t, start.Sub(opened[svc]), window, "%s: stable a whole window after the reads that saw it at its target", svc)
			}
			return
		}
		if x.state.Health.NextStep {
			require.NoError(t, x.step(execution.TaskNextStep))
		}
	}
}
