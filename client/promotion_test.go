package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/naming/tags"
	"github.com/ferryhq/ferry/internal/pipeline"
	"github.com/ferryhq/ferry/internal/store/ledger"
)

// addStagingAlarm puts production's gate alarm in staging's account.
func addStagingAlarm(t *testing.T, tr *testRegion) {
	t.Helper()
	_, err := tr.World().Clients("111111111111", "us-east-1").CloudWatch.PutMetricAlarm(t.Context(), &cloudwatch.PutMetricAlarmInput{
		AlarmName: aws.String("coinbase-deploy-test-staging-errors"), Namespace: aws.String("AWS/EC2"), MetricName: aws.String("CPUUtilization"),
		Statistic: cwtypes.StatisticAverage, Period: aws.Int32(60), EvaluationPeriods: aws.Int32(1), Threshold: aws.Float64(99),
		ComparisonOperator: cwtypes.ComparisonOperatorGreaterThanThreshold,
		Tags:               tags.CloudWatch(map[string]string{naming.TagProjectName: "coinbase/deploy-test", naming.TagConfigName: "staging"}),
	})
	require.NoError(t, err)
}

var startedExecution = regexp.MustCompile(`started execution (\S+)`)

// startPromotion runs ferry pipeline start and returns the promotion's
// execution ARN.
func startPromotion(t *testing.T, tr *testRegion) string {
	t.Helper()
	s := startPipeline(t, tr)
	require.Equal(t, exitOK, s.code, "stdout:\n%s\nstderr:\n%s", s.stdout, s.stderr)
	assert.Contains(t, s.stdout, "through 3 stages")
	assert.Contains(t, s.stdout, "follow it with ferry pipeline status --local "+deployTestPipeline, "a hint that pastes")
	m := startedExecution.FindStringSubmatch(s.stdout)
	require.Len(t, m, 2, s.stdout)
	return m[1]
}

// holdAtApprovals holds the region's time each time an execution submits
// a task token (a promotion's approval wait): the channel gives, per
// wait, the function that lets time run again.
func holdAtApprovals(tr *testRegion, waits int) <-chan func() {
	approvals := make(chan func(), waits)
	tr.observe(func(_ string, ev asl.Event) {
		if ev.Type == asl.EventTaskSubmitted {
			approvals <- tr.Hold()
		}
	})
	return approvals
}

// startPipeline runs ferry pipeline start, with args before the files.
// It waits for the promotion's record between events of the region's
// executions (tr.sleeper), not by passing the region's time: a test may
// hold the region (at a wave, an approval) before the record is read.
func startPipeline(t *testing.T, tr *testRegion, args ...string) result {
	t.Helper()
	args = append(append([]string{"pipeline", "start", "--local"}, args...), deployTestPipeline, deployTestRelease)
	return tr.ferryAt(t.Context(), func(e *Env) { e.Sleep = tr.sleeper() }, args...)
}

// approveStage runs ferry pipeline approve, with args. Like start, it
// waits for the deployer's verdict between events of the region's
// executions (tr.sleeper): a test may hold the region at the approval's
// wait while the approval wakes it.
func approveStage(t *testing.T, tr *testRegion, args ...string) result {
	t.Helper()
	return tr.ferryAt(t.Context(), func(e *Env) { e.Sleep = tr.sleeper() }, append([]string{"pipeline", "approve", "--local"}, args...)...)
}

func promotionStatus(t *testing.T, tr *testRegion) *ledger.PromotionRecord {
	t.Helper()
	s := tr.ferry(t, "pipeline", "status", "--local", "--json", deployTestPipeline)
	require.Equal(t, exitOK, s.code, s.stderr)
	var ps pipelineStatus
	require.NoError(t, json.Unmarshal([]byte(s.stdout), &ps))
	require.NotNil(t, ps.Promotion)
	return ps.Promotion
}

// TestPipelineStartApproveHalt: promotion without a laptop, driven by the
// CLI on the local region. register puts the pipeline in every config;
// start stores the request and starts the promotion, which deploys
// development, then staging after its soak, and waits for production's
// approval; approve (as the caller, proved) lets production's two
// targets deploy. A second promotion, halted while it waits for
// production's approval, ends halted and deploys nothing more.
func TestPipelineStartApproveHalt(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	addStagingAlarm(t, tr)
	approvals := make(chan func(), 2)
	observe := func(_ string, ev asl.Event) {
		if ev.Type == asl.EventTaskSubmitted {
			approvals <- tr.Hold()
		}
	}
	tr.observer.Store(&observe)

	reg := tr.ferry(t, "pipeline", "register", "--local", deployTestPipeline)
	require.Equal(t, exitOK, reg.code, reg.stderr)
	assert.Contains(t, reg.stdout, "registered in development, staging, production-use1, production-euw1")

	arn := startPromotion(t, tr)
	release := <-approvals
	rec := promotionStatus(t, tr)
	assert.Equal(t, ledger.PromotionRunning, rec.Status)
	assert.Equal(t, []string{ledger.PromotionSucceeded, ledger.PromotionSucceeded, ledger.PromotionApproval},
		[]string{rec.Stages[0].Status, rec.Stages[1].Status, rec.Stages[2].Status})
	assert.Empty(t, rec.Stages[2].ApprovalToken, "status shows no token")
	text := tr.ferry(t, "pipeline", "status", "--local", deployTestPipeline)
	assert.Contains(t, text.stdout, "production: approval (the stage needs a person's approval: ferry pipeline approve)")

	bad := tr.ferry(t, "pipeline", "approve", "--local", deployTestPipeline, "prod")
	assert.Equal(t, exitFailure, bad.code)
	assert.Contains(t, bad.stderr, `has no stage "prod"`)
	ok := approveStage(t, tr, deployTestPipeline, "production")
	require.Equal(t, exitOK, ok.code, "stdout:\n%s\nstderr:\n%s", ok.stdout, ok.stderr)
	assert.Contains(t, ok.stdout, "into production approved")
	assert.Contains(t, ok.stdout, "approved by arn:aws:iam::111111111111:user/ferry-local, verified by the deployer", "the verdict, when given")
	st := tr.ferry(t, "status", "--local", "--json", "coinbase/deploy-test")
	require.Equal(t, exitOK, st.code, st.stderr)
	var ps projectStatus
	require.NoError(t, json.Unmarshal([]byte(st.stdout), &ps))
	var configs []string
	for _, c := range ps.Configs {
		configs = append(configs, c.Config)
	}
	assert.Equal(t, []string{"development", "production-euw1", "production-use1", "staging"}, configs, "the approval of stage production is no config")
	release()

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	d, err := tr.Wait(ctx, arn)
	require.NoError(t, err)
	require.Equal(t, asl.StatusSucceeded, d.Status, "%s: %s", d.Error, d.Cause)
	rec = promotionStatus(t, tr)
	assert.Equal(t, ledger.PromotionSucceeded, rec.Status)
	assert.NotEmpty(t, rec.Stages[2].ApprovedBy)
	for _, s := range rec.Stages {
		for _, tg := range s.Targets {
			assert.Equal(t, "Success", tg.Outcome, tg.Config)
		}
	}
	hist := tr.ferry(t, "history", "--local", "coinbase/deploy-test", "staging")
	require.Equal(t, exitOK, hist.code, hist.stderr)
	assert.Contains(t, hist.stdout, "promoted from development", "history names a stage's deploy of a promotion")

	tr.clk.Advance(time.Minute) // a second promotion, a new id
	arn = startPromotion(t, tr)
	release = <-approvals
	h := tr.ferry(t, "pipeline", "halt", "--local", "--reason", "not today", deployTestPipeline)
	require.Equal(t, exitOK, h.code, "stdout:\n%s\nstderr:\n%s", h.stdout, h.stderr)
	assert.Contains(t, h.stdout, "halted: no stage after this one deploys")
	release()
	d, err = tr.Wait(ctx, arn)
	require.NoError(t, err)
	assert.Equal(t, "HaltError", d.Error)
	rec = promotionStatus(t, tr)
	assert.Equal(t, ledger.PromotionHalted, rec.Status)
	again := tr.ferry(t, "pipeline", "halt", "--local", deployTestPipeline)
	assert.Contains(t, again.stdout, "is halted already")

	// A record whose last write S3 refused still says running after its
	// execution ended: status says how the execution ended.
	stale := *rec
	stale.Status = ledger.PromotionRunning
	require.NoError(t, ledger.New(tr.S3(), tr.Bucket()).PutPromotion(t.Context(), "development", stale))
	rec = promotionStatus(t, tr)
	assert.Equal(t, "ended", rec.Status)
	assert.Contains(t, rec.Why, "its execution ended FAILED (HaltError")
}

// TestPipelineHaltWhileDeploying: ferry pipeline halt while staging's
// deploy runs writes staging's halt marker too: the deploy rolls back
// (FailureClean, HaltError), and the promotion ends halted (not failed)
// with the stage, production never deployed.
func TestPipelineHaltWhileDeploying(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	addStagingAlarm(t, tr)
	deploying := make(chan func(), 1)
	var once sync.Once
	observe := func(arn string, ev asl.Event) {
		if ev.StateEntered != nil && ev.StateEntered.Name == "CheckHealthy" && strings.Contains(arn, "_staging_") {
			once.Do(func() { deploying <- tr.Hold() }) // the first check only: time stands still until the test resumes it
		}
	}
	tr.observer.Store(&observe)
	require.Equal(t, exitOK, tr.ferry(t, "pipeline", "register", "--local", deployTestPipeline).code)
	arn := startPromotion(t, tr)
	resume := <-deploying
	h := tr.ferry(t, "pipeline", "halt", "--local", deployTestPipeline)
	require.Equal(t, exitOK, h.code, "stdout:\n%s\nstderr:\n%s", h.stdout, h.stderr)
	assert.Contains(t, h.stdout, "halt marker written for coinbase/deploy-test staging: its deploy rolls back")
	resume()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	d, err := tr.Wait(ctx, arn)
	require.NoError(t, err)
	assert.Equal(t, "HaltError", d.Error)
	rec := promotionStatus(t, tr)
	assert.Equal(t, ledger.PromotionHalted, rec.Status)
	assert.Equal(t, ledger.PromotionHalted, rec.Stages[1].Status)
	assert.Equal(t, "FailureClean", rec.Stages[1].Targets[0].Outcome)
	assert.Equal(t, "HaltError", rec.Stages[1].Targets[0].Error)
	assert.Equal(t, ledger.PromotionPending, rec.Stages[2].Status)
}

// TestPipelineStartRefused: ferry pipeline start before the pipeline is
// registered starts nothing and says why (exit 1; under --json deploy's
// error event); registered, it returns once the promotion is recorded,
// which status then lists.
func TestPipelineStartRefused(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	s := tr.ferry(t, "pipeline", "start", "--local", deployTestPipeline, deployTestRelease)
	assert.Equal(t, exitFailure, s.code)
	assert.Contains(t, s.stderr, "nothing started: development has no pipeline registered")
	assert.NotContains(t, s.stdout, "started execution")
	j := tr.ferry(t, "pipeline", "start", "--local", "--json", deployTestPipeline, deployTestRelease)
	assert.Equal(t, exitFailure, j.code)
	var f struct {
		Event string `json:"event"`
		jsonFailure
	}
	require.NoError(t, json.Unmarshal([]byte(j.stdout), &f), j.stdout)
	assert.Equal(t, "error", f.Event)
	assert.Contains(t, f.Message, "has no pipeline registered")

	require.Equal(t, exitOK, tr.ferry(t, "pipeline", "register", "--local", deployTestPipeline).code)
	startPromotion(t, tr)
	rec := promotionStatus(t, tr)
	assert.Equal(t, ledger.PromotionRunning, rec.Status, "recorded before start returned")
}

// jsonLines decodes each line of out as one JSON object.
func jsonLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var evs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &ev), "not a JSON line: %q in\n%s", line, out)
		evs = append(evs, ev)
	}
	return evs
}

// TestPipelineJSON: register, start, approve and halt print JSON events
// under --json, one a line, the last naming what happened; a second
// promotion while one runs is refused by the rule help states; status
// lists every promotion and --promotion ID shows one.
func TestPipelineJSON(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	addStagingAlarm(t, tr)
	approvals := holdAtApprovals(tr, 2)
	reg := tr.ferry(t, "pipeline", "register", "--local", "--json", deployTestPipeline)
	require.Equal(t, exitOK, reg.code, reg.stderr)
	evs := jsonLines(t, reg.stdout)
	assert.Equal(t, "pipeline_registered", evs[len(evs)-1]["event"])

	st := startPipeline(t, tr, "--json")
	require.Equal(t, exitOK, st.code, st.stderr)
	evs = jsonLines(t, st.stdout)
	started := evs[len(evs)-1]
	assert.Equal(t, "promotion_started", started["event"])
	assert.Equal(t, ledger.PromotionRunning, started["status"])
	id, _ := started["promotion_id"].(string)
	require.NotEmpty(t, id)
	release := <-approvals

	tr.clk.Advance(time.Minute) // a new id
	again := tr.ferry(t, "pipeline", "start", "--local", deployTestPipeline, deployTestRelease)
	assert.Equal(t, exitFailure, again.code)
	assert.Contains(t, again.stderr, "promotion "+id+" of this pipeline runs")
	assert.Contains(t, again.stderr, pipeline.OnePromotionRule)
	help := tr.ferry(t, "help", "pipeline")
	assert.Contains(t, strings.Join(strings.Fields(help.stdout+help.stderr), " "), pipeline.OnePromotionRule)

	ap := approveStage(t, tr, "--json", deployTestPipeline, "production")
	require.Equal(t, exitOK, ap.code, ap.stderr)
	evs = jsonLines(t, ap.stdout)
	assert.Equal(t, "promotion_approved", evs[len(evs)-1]["event"])
	assert.Equal(t, "production", evs[len(evs)-1]["stage"])
	assert.Equal(t, "arn:aws:iam::111111111111:user/ferry-local", evs[len(evs)-1]["approved_by"])
	release()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	_, err := tr.Wait(ctx, started["execution"].(string))
	require.NoError(t, err)

	tr.clk.Advance(time.Minute)
	second := startPromotion(t, tr)
	release = <-approvals
	h := tr.ferry(t, "pipeline", "halt", "--local", "--json", deployTestPipeline)
	require.Equal(t, exitOK, h.code, h.stderr)
	evs = jsonLines(t, h.stdout)
	assert.Equal(t, "promotion_halted", evs[len(evs)-1]["event"])
	release()
	_, err = tr.Wait(ctx, second)
	require.NoError(t, err)

	s := tr.ferry(t, "pipeline", "status", "--local", "--json", deployTestPipeline)
	require.Equal(t, exitOK, s.code, s.stderr)
	var ps pipelineStatus
	require.NoError(t, json.Unmarshal([]byte(s.stdout), &ps))
	require.Len(t, ps.Promotions, 2, "every promotion")
	assert.Equal(t, ledger.PromotionHalted, ps.Promotions[0].Status)
	assert.Equal(t, ledger.PromotionSucceeded, ps.Promotions[1].Status)
	one := tr.ferry(t, "pipeline", "status", "--local", "--json", "--promotion", id, deployTestPipeline)
	require.Equal(t, exitOK, one.code, one.stderr)
	ps = pipelineStatus{}
	require.NoError(t, json.Unmarshal([]byte(one.stdout), &ps))
	require.Len(t, ps.Promotions, 1)
	assert.Equal(t, id, ps.Promotion.PromotionID)
	text := tr.ferry(t, "pipeline", "status", "--local", deployTestPipeline)
	assert.Contains(t, text.stdout, "promotion "+id+" of artifact")
}

// TestPipelineHaltDuringSoak: ferry pipeline halt while the promotion
// waits out staging's 30m soak ends it halted at the next gate check,
// within the recheck (5m), not at the soak's end.
func TestPipelineHaltDuringSoak(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	soaking := make(chan func(), 1)
	var once sync.Once
	tr.observe(func(arn string, ev asl.Event) {
		if ev.StateEntered != nil && ev.StateEntered.Name == "WaitForGate" && strings.HasSuffix(arn, "-promotion") {
			once.Do(func() { soaking <- tr.Hold() })
		}
	})
	require.Equal(t, exitOK, tr.ferry(t, "pipeline", "register", "--local", deployTestPipeline).code)
	arn := startPromotion(t, tr)
	resume := <-soaking
	rec := promotionStatus(t, tr)
	require.Equal(t, ledger.PromotionWaiting, rec.Stages[1].Status, "%v", rec.Stages[1].Held)
	haltAt := tr.clk.Now()
	h := tr.ferry(t, "pipeline", "halt", "--local", deployTestPipeline)
	require.Equal(t, exitOK, h.code, h.stderr)
	assert.Contains(t, h.stdout, "staging waits for its gates: the promotion ends at their next check, within 5m")
	resume()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	d, err := tr.Wait(ctx, arn)
	require.NoError(t, err)
	assert.Equal(t, "HaltError", d.Error)
	rec = promotionStatus(t, tr)
	assert.Equal(t, ledger.PromotionHalted, rec.Status)
	assert.LessOrEqual(t, rec.EndedAt.Sub(haltAt), 5*time.Minute+time.Second, "the soak's wait was cut short")
}
