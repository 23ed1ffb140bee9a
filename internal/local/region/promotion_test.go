package region

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/naming/tags"
	"github.com/ferryhq/ferry/internal/pipeline"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/ledger"
	"github.com/ferryhq/ferry/statemachine/shape"
)

// The promotion scenarios run the real definition's promotion branch with
// the real handlers on the local region: testdata/pipelines/deploy-test.json
// (development; staging after a 30 min soak; production in two regions of
// another account after an hour's soak, its staging alarm clear and a
// person's approval) promoting the deploy-test release, each stage's
// targets deployed by nested executions of the machine.

const promotionID = "20260301T120000Z-p1"

// promotion is one promotion scenario: its region, the pipeline, and the
// approval requests seen (the region held at each until the test acts).
type promotion struct {
	r        *Region
	clk      *clock.Virtual
	p        *pipeline.Pipeline
	raw      []byte
	approval chan func()
}

// newPromotion starts a region whose Observer holds time still at every
// approval request (the callback task's TaskSubmitted) and passes the
// release of that hold to the test; onEvent sees every other event.
func newPromotion(t *testing.T, onEvent func(r *Region, arn string, ev asl.Event), options ...func(*Options)) *promotion {
	t.Helper()
	pr := &promotion{approval: make(chan func(), 4)}
	var opts Options
	for _, o := range options {
		o(&opts)
	}
	opts.Observer = func(arn string, ev asl.Event) {
		if ev.Type == asl.EventTaskSubmitted {
			pr.approval <- pr.r.Hold()
		}
		if onEvent != nil {
			onEvent(pr.r, arn, ev)
		}
	}
	pr.r, pr.clk = newTestRegion(t, opts)
	var err error
	pr.raw, err = os.ReadFile(filepath.Join("..", "..", "..", "testdata", "pipelines", "deploy-test.json"))
	require.NoError(t, err)
	pr.p, err = pipeline.Decode(pr.raw)
	require.NoError(t, err)
	return pr
}

// configs are the configs of every target of the pipeline, stage by
// stage.
func (pr *promotion) configs() []string {
	var out []string
	for _, s := range pr.p.Stages {
		for _, tg := range s.Targets {
			out = append(out, pipeline.TargetConfig(s, tg))
		}
	}
	return out
}

// register registers the pipeline in configs, as whoever may deploy each
// does with ferry pipeline register.
func (pr *promotion) register(t *testing.T, configs ...string) {
	t.Helper()
	for _, c := range configs {
		pr.put(t, naming.PipelineKey(testProject, c), pr.raw)
	}
}

func (pr *promotion) put(t *testing.T, key string, body []byte) {
	t.Helper()
	_, err := pr.r.S3().PutObject(context.Background(), &s3.PutObjectInput{
		Bucket: aws.String(pr.r.Bucket()), Key: aws.String(key), Body: bytes.NewReader(body)})
	require.NoError(t, err)
}

// addStagingAlarm puts production's gate alarm in staging's account, OK.
func (pr *promotion) addStagingAlarm(t *testing.T) {
	t.Helper()
	_, err := pr.r.World().Clients("111111111111", "us-east-1").CloudWatch.PutMetricAlarm(context.Background(), &cloudwatch.PutMetricAlarmInput{
		AlarmName: aws.String("coinbase-deploy-test-staging-errors"), Namespace: aws.String("AWS/EC2"), MetricName: aws.String("CPUUtilization"),
		Statistic: cwtypes.StatisticAverage, Period: aws.Int32(60), EvaluationPeriods: aws.Int32(1), Threshold: aws.Float64(99),
		ComparisonOperator: cwtypes.ComparisonOperatorGreaterThanThreshold,
		Tags:               tags.CloudWatch(map[string]string{naming.TagProjectName: testProject, naming.TagConfigName: "staging"}),
	})
	require.NoError(t, err)
}

// start starts the promotion of the deploy-test release, changed by
// mutate.
func (pr *promotion) start(t *testing.T, mutate ...func(*release.Release)) *asl.Execution {
	t.Helper()
	return pr.startAs(t, promotionID, mutate...)
}

// startAs starts the promotion id of the deploy-test release, changed by
// mutate.
func (pr *promotion) startAs(t *testing.T, id string, mutate ...func(*release.Release)) *asl.Execution {
	t.Helper()
	rel, err := release.ReadFile(filepath.Join("..", "..", "..", "testdata", "deploy-test-release.json"))
	require.NoError(t, err)
	rel.ConfigName = ""
	for _, m := range mutate {
		m(rel)
	}
	q := &pipeline.Request{PromotionID: id, CreatedAt: pr.clk.Now().Add(-time.Minute).UTC(),
		CreatedBy: "alice", Pipeline: pr.p, Release: rel}
	x, err := pr.r.StartPromotion(context.Background(), q)
	require.NoError(t, err)
	return x
}

// record reads the promotion's record.
func (pr *promotion) record(t *testing.T) ledger.PromotionRecord {
	t.Helper()
	rec, found, err := ledger.New(pr.r.S3(), pr.r.Bucket()).GetPromotion(context.Background(), testProject, "development", promotionID)
	require.NoError(t, err)
	require.True(t, found)
	return rec
}

// approve stores an approval of stage, proved as the local caller,
// unless a mutation breaks it.
func (pr *promotion) approve(t *testing.T, stage string, mutate ...func(*pipeline.Approval)) {
	t.Helper()
	rec := pr.record(t)
	a := pipeline.Approval{PromotionID: promotionID, Stage: stage, Digest: rec.Digest, CreatedAt: pr.clk.Now().UTC(), CreatedBy: "bob"}
	sum, err := a.IdentityHash()
	require.NoError(t, err)
	a.Identity, err = pr.r.Signer().Prove(context.Background(), sum)
	require.NoError(t, err)
	for _, m := range mutate {
		m(&a)
	}
	body, err := json.Marshal(a)
	require.NoError(t, err)
	pr.put(t, naming.ApprovalKey(testProject, stage, promotionID), body)
}

// token is the approval token the stage's record holds.
func (pr *promotion) token(t *testing.T, stage int) string {
	t.Helper()
	tok := pr.record(t).Stages[stage].ApprovalToken
	require.NotEmpty(t, tok, "the stage waits for an approval")
	return tok
}

func (pr *promotion) wait(t *testing.T, x *asl.Execution) asl.Description {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, x.Wait(ctx), "the promotion ends")
	return x.Describe()
}

func (pr *promotion) current(t *testing.T, config string) string {
	t.Helper()
	cur, found, err := ledger.New(pr.r.S3(), pr.r.Bucket()).GetCurrent(context.Background(), testProject, config)
	require.NoError(t, err)
	if !found {
		return ""
	}
	return cur.ReleaseID
}

// TestPromotionThroughEveryStage: a promotion deploys development, then
// staging once its soak is over, then both production targets at once
// once the soak is over, the alarm clear and a person approved it; an
// approval of another artifact does not count, and the stage asks again.
func TestPromotionThroughEveryStage(t *testing.T) {
	pr := newPromotion(t, nil)
	pr.register(t, pr.configs()...)
	pr.addStagingAlarm(t)
	x := pr.start(t)

	release := <-pr.approval // production waits for its approval
	rec := pr.record(t)
	assert.Equal(t, ledger.PromotionApproval, rec.Stages[2].Status)
	assert.Equal(t, ledger.PromotionSucceeded, rec.Stages[1].Status)
	pr.approve(t, "production", func(a *pipeline.Approval) { a.Digest = "0123456789ab" })
	require.NoError(t, pr.r.SendTaskSuccess(pr.token(t, 2), json.RawMessage(`{}`)))
	release()

	release = <-pr.approval // the approval of another artifact did not count
	assert.Contains(t, pr.record(t).Stages[2].Held[0], "not this one")
	pr.approve(t, "production")
	require.NoError(t, pr.r.SendTaskSuccess(pr.token(t, 2), json.RawMessage(`{}`)))
	release()

	d := pr.wait(t, x)
	require.Equal(t, asl.StatusSucceeded, d.Status, "%s: %s", d.Error, d.Cause)
	rec = pr.record(t)
	assert.Equal(t, ledger.PromotionSucceeded, rec.Status)
	assert.Equal(t, "arn:aws:iam::"+pr.r.Info().Account+":user/ferry-local", rec.StartedBy, "the starter, as STS says")
	assert.Equal(t, rec.StartedBy, rec.Stages[2].ApprovedBy, "the approver, as STS says")
	for i, s := range rec.Stages {
		assert.Equal(t, ledger.PromotionSucceeded, s.Status, s.Config)
		for _, tg := range s.Targets {
			assert.Equal(t, execution.EndSuccess, tg.Outcome, tg.Config)
			assert.Equal(t, promotionID, pr.current(t, tg.Config), "%s runs the promotion's release", tg.Config)
		}
		if i > 0 {
			soak := time.Duration(pr.p.Stages[i].Gates.SoakSeconds) * time.Second
			assert.GreaterOrEqual(t, s.ReleasedAt.Sub(rec.Stages[i-1].EndedAt), soak, "%s waited out its soak", s.Config)
		}
	}
	assert.Len(t, rec.Stages[2].Targets, 2)
	path := x.Path()
	for _, s := range []string{execution.TaskPromote, execution.TaskGate, shape.StateWaitForGate, shape.StateAwaitApproval,
		shape.StateWave, execution.TaskStartTarget, shape.StateDeployTarget, execution.TaskEndStage, shape.StatePromoted, execution.EndSuccess} {
		assert.Contains(t, path, s)
	}
	assert.Equal(t, 3, count(path, shape.StateWave), "one wave a stage")
	assert.Equal(t, 4, count(path, execution.TaskStartTarget), "one nested deploy a target")
	assert.NotContains(t, path, shape.StateTargetFailed)

	// The promotion's deploy events: each stage reached, production's
	// approval asked for (twice, with one id: the first approval did not
	// count) and given.
	var stages []string
	for _, ev := range pr.r.World().BusEvents() {
		var d struct {
			Stage string `json:"stage"`
		}
		require.NoError(t, json.Unmarshal(ev.Detail, &d))
		if d.Stage != "" {
			stages = append(stages, ev.DetailType+" "+d.Stage)
		}
	}
	assert.Equal(t, []string{"Stage Reached development", "Stage Reached staging", "Approval Requested production",
		"Approval Requested production", "Stage Approved production", "Stage Reached production"}, stages)
}

func count(path []string, s string) int {
	return len(slices.DeleteFunc(slices.Clone(path), func(p string) bool { return p != s }))
}

// TestPromotionStopsAtAFailedStage: staging's deploy is halted by a
// person while it runs: it ends FailureClean, the promotion fails clean
// with it, and production is never deployed.
func TestPromotionStopsAtAFailedStage(t *testing.T) {
	staging := naming.ExecutionName(testProject, "staging", promotionID)
	pr := newPromotion(t, func(r *Region, arn string, ev asl.Event) {
		if ev.StateEntered != nil && ev.StateEntered.Name == execution.TaskDeploy && arn == asl.ExecutionARN(r.StateMachineARN(), staging) {
			_, err := r.S3().PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(r.Bucket()),
				Key: aws.String(naming.HaltKey(testProject, "staging")), Body: bytes.NewReader([]byte("stop"))})
			assert.NoError(t, err)
		}
	})
	pr.register(t, pr.configs()...)
	pr.addStagingAlarm(t)
	x := pr.start(t)
	d := pr.wait(t, x)
	assert.Equal(t, asl.StatusFailed, d.Status)
	assert.Equal(t, "DeployError", d.Error)
	assert.Contains(t, d.Cause, "staging (FailureClean) did not succeed")
	assert.Equal(t, execution.EndFailureClean, x.Path()[len(x.Path())-1])
	assert.Contains(t, x.Path(), shape.StateTargetFailed, "the wave stores staging's failed deploy as its result")

	rec := pr.record(t)
	assert.Equal(t, ledger.PromotionFailed, rec.Status)
	assert.Equal(t, ledger.PromotionSucceeded, rec.Stages[0].Status)
	assert.Equal(t, ledger.PromotionFailed, rec.Stages[1].Status)
	assert.Equal(t, execution.EndFailureClean, rec.Stages[1].Targets[0].Outcome)
	assert.Equal(t, ledger.PromotionPending, rec.Stages[2].Status, "production is never reached")
	assert.Equal(t, promotionID, pr.current(t, "development"))
	assert.Empty(t, pr.current(t, "staging"))
	assert.Empty(t, pr.current(t, "production-use1"))
	assert.Empty(t, pr.current(t, "production-euw1"))
	assert.Len(t, pr.approval, 0, "no approval was asked")
}

// TestPromotionHaltedWhileAwaitingApproval: ferry pipeline halt writes
// the promotion's halt marker and fails the approval's task token: the
// gates are checked again, the marker ends the promotion clean, and
// production is never deployed.
func TestPromotionHaltedWhileAwaitingApproval(t *testing.T) {
	pr := newPromotion(t, nil)
	pr.register(t, pr.configs()...)
	pr.addStagingAlarm(t)
	x := pr.start(t)
	release := <-pr.approval
	pr.put(t, naming.PromotionHaltKey(testProject, "production", promotionID), []byte("no"))
	require.NoError(t, pr.r.SendTaskFailure(pr.token(t, 2), "ferry.Halted", "halted by a person"))
	release()
	d := pr.wait(t, x)
	assert.Equal(t, asl.StatusFailed, d.Status)
	assert.Equal(t, "HaltError", d.Error)
	rec := pr.record(t)
	assert.Equal(t, ledger.PromotionHalted, rec.Status)
	assert.Equal(t, ledger.PromotionHalted, rec.Stages[2].Status)
	assert.Empty(t, pr.current(t, "production-use1"))
	assert.Equal(t, promotionID, pr.current(t, "staging"))
}

// TestPromotionNeedsItsPipelineRegistered: a config that does not have
// the promotion's pipeline registered is never deployed by it: the first
// stage's refuses the promotion at once; a later stage's holds it (here
// until a person halts it).
func TestPromotionNeedsItsPipelineRegistered(t *testing.T) {
	t.Run("first stage", func(t *testing.T) {
		pr := newPromotion(t, nil)
		pr.register(t, "staging", "production-use1", "production-euw1")
		d := pr.wait(t, pr.start(t))
		assert.Equal(t, asl.StatusFailed, d.Status)
		assert.Equal(t, "BadReleaseError", d.Error)
		assert.Contains(t, d.Cause, "config development has no pipeline registered")
		assert.Empty(t, pr.current(t, "development"))
	})
	t.Run("later stage", func(t *testing.T) {
		gates := 0
		pr := newPromotion(t, func(r *Region, arn string, ev asl.Event) {
			if ev.StateEntered != nil && ev.StateEntered.Name == shape.StateWaitForGate {
				if gates++; gates == 40 { // long after staging's soak
					_, err := r.S3().PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(r.Bucket()),
						Key: aws.String(naming.PromotionHaltKey(testProject, "development", promotionID)), Body: bytes.NewReader(nil)})
					assert.NoError(t, err)
				}
			}
		})
		pr.register(t, "development")
		d := pr.wait(t, pr.start(t))
		assert.Equal(t, "HaltError", d.Error)
		rec := pr.record(t)
		assert.Contains(t, rec.Stages[1].Held[0], "config staging has no pipeline registered")
		assert.Equal(t, promotionID, pr.current(t, "development"))
		assert.Empty(t, pr.current(t, "staging"))
	})
}

// TestPromotedReleaseIsHealed: a promoted release that opted into heal is
// healed as any release: the heal is the reconciler's release (no
// promotion_of: it is accepted as a heal of what runs), deployed through
// the deploy path.
func TestPromotedReleaseIsHealed(t *testing.T) {
	pr := newPromotion(t, nil, func(o *Options) { o.ReconcileEvery = 15 * time.Minute })
	pr.raw = []byte(`{"project_name": "coinbase/deploy-test", "stages": [
	  {"config_name": "development", "targets": [{"account_id": "111111111111", "region": "us-east-1"}]}]}`)
	var err error
	pr.p, err = pipeline.Decode(pr.raw)
	require.NoError(t, err)
	pr.register(t, "development")
	d := pr.wait(t, pr.start(t, func(r *release.Release) { r.Reconcile = release.ReconcileHeal }))
	require.Equal(t, asl.StatusSucceeded, d.Status, "%s: %s", d.Error, d.Cause)

	ctx := context.Background()
	_, err = pr.r.Meddle(ctx, Meddling{Action: MeddleDeleteGroup, Group: naming.GroupName(testProject, "development", "web", promotionID)})
	require.NoError(t, err)
	for range 2 { // the first pass sees the group missing, the second heals
		require.NoError(t, pr.r.Pass(ctx, 20*time.Minute))
		pass, err := pr.r.ReconcileIfDue()
		require.NoError(t, err)
		require.NotNil(t, pass)
		require.NoError(t, pass.Wait(ctx))
	}
	var heal *asl.Execution
	for _, x := range pr.r.Executions("") {
		if strings.HasSuffix(x.Describe().Name, "-heal") {
			heal = x
		}
	}
	require.NotNil(t, heal, "a heal started")
	hd := pr.wait(t, heal)
	require.Equal(t, asl.StatusSucceeded, hd.Status, "%s: %s", hd.Error, hd.Cause)
	assert.NotEqual(t, promotionID, pr.current(t, "development"), "the heal runs now")
}

// TestPromotedReleaseIsVerified: a release that claims to be a
// promotion's stage deploy (promotion_of) runs without an identity proof
// only as the promotion's record says. A release of a stage whose gates
// have not held (production, waiting for its approval) is refused, and so
// is one naming a promotion the deployer never recorded.
func TestPromotedReleaseIsVerified(t *testing.T) {
	pr := newPromotion(t, nil)
	pr.register(t, pr.configs()...)
	pr.addStagingAlarm(t)
	x := pr.start(t)
	resume := <-pr.approval // production waits for its approval; time stands still meanwhile

	forge := func(t *testing.T, id string) asl.Description {
		t.Helper()
		rel, err := release.ReadFile(filepath.Join("..", "..", "..", "testdata", "deploy-test-release.json"))
		require.NoError(t, err)
		rel.ConfigName = ""
		r, err := pr.p.Release(rel, 2, 0)
		require.NoError(t, err)
		r.ReleaseID, r.CreatedAt, r.CreatedBy, r.PromotionOf = id, pr.clk.Now().UTC().Truncate(time.Millisecond), "alice", "development"
		raw, err := release.Canonical(r)
		require.NoError(t, err)
		require.NoError(t, ledger.New(pr.r.S3(), pr.r.Bucket()).PutRelease(context.Background(), testProject, "production-use1", id, raw))
		forged, _, err := pr.r.Start(naming.ExecutionName(testProject, "production-use1", id), raw)
		require.NoError(t, err)
		return pr.wait(t, forged)
	}
	t.Run("stage not deploying", func(t *testing.T) {
		d := forge(t, promotionID)
		assert.Equal(t, "BadReleaseError", d.Error)
		assert.Contains(t, d.Cause, "stage production of promotion "+promotionID+" is approval, not deploying")
	})
	t.Run("no such promotion", func(t *testing.T) {
		d := forge(t, "20260301T120000Z-nobody")
		assert.Equal(t, "BadReleaseError", d.Error)
		assert.Contains(t, d.Cause, "no promotion 20260301T120000Z-nobody of coinbase/deploy-test development is recorded")
	})
	assert.Empty(t, pr.current(t, "production-use1"), "nothing forged runs")
	pr.put(t, naming.PromotionHaltKey(testProject, "development", promotionID), nil)
	require.NoError(t, pr.r.SendTaskFailure(pr.token(t, 2), "ferry.Halted", "the test is over"))
	resume()
	assert.Equal(t, "HaltError", pr.wait(t, x).Error)
}

// TestStoppingAPromotionStopsItsNestedDeploys: StopExecution of a
// promotion stops the deploys its wave runs, as Step Functions stops the
// execution a cancelled startExecution.sync task started (the reason the
// pipeline help page says to halt a promotion with ferry pipeline halt instead).
func TestStoppingAPromotionStopsItsNestedDeploys(t *testing.T) {
	deploying := make(chan func(), 1)
	var once sync.Once
	dev := naming.ExecutionName(testProject, "development", promotionID)
	pr := newPromotion(t, func(r *Region, arn string, ev asl.Event) {
		if ev.StateEntered != nil && ev.StateEntered.Name == execution.TaskCheckHealthy && arn == asl.ExecutionARN(r.StateMachineARN(), dev) {
			once.Do(func() { deploying <- r.Hold() }) // the first check only
		}
	})
	pr.register(t, pr.configs()...)
	x := pr.start(t)
	release := <-deploying
	_, err := pr.r.Stop(x.ARN(), "Stopped", "by hand")
	require.NoError(t, err)
	release()
	nested, err := pr.r.Execution(asl.ExecutionARN(pr.r.StateMachineARN(), dev))
	require.NoError(t, err)
	d := pr.wait(t, nested)
	assert.Equal(t, asl.StatusAborted, d.Status, "the nested deploy is stopped with its promotion")
}

// TestSendTaskAnswersRefused: an answer with a token that is no token,
// or one of no waiting task, is refused with Step Functions' error codes.
func TestSendTaskAnswersRefused(t *testing.T) {
	r, _ := newTestRegion(t, Options{})
	var e *APIError
	require.ErrorAs(t, r.SendTaskSuccess("not a token", json.RawMessage(`{}`)), &e)
	assert.Equal(t, CodeInvalidToken, e.Code)
	x, _, err := r.Start("some-query", json.RawMessage(`{"drift": {"project_name": "coinbase/deploy-test", "config_name": "development"}}`))
	require.NoError(t, err)
	token := strings.Repeat("0", 32)
	token = base64.RawURLEncoding.EncodeToString([]byte(x.ARN())) + "." + token
	require.ErrorAs(t, r.SendTaskFailure(token, "E", "c"), &e)
	assert.Equal(t, CodeTaskDoesNotExist, e.Code)
}

// TestApprovalIsAuthorization: a stage's approvers name who may approve
// it, and separate_approver refuses the promotion's starter; an approval
// by anyone else is not counted (the stage asks again, saying why),
// however valid its proof. Here every proof names the local region's one
// caller, who also started the promotion.
func TestApprovalIsAuthorization(t *testing.T) {
	for _, tc := range []struct {
		name  string
		gates func(g *pipeline.Gates, account string)
		want  string
	}{
		{"not an approver", func(g *pipeline.Gates, account string) {
			g.Approvers = []string{"arn:aws:iam::" + account + ":role/ReleaseManager*"}
		}, "who is not among the stage's approvers (arn:aws:iam::"},
		{"the starter", func(g *pipeline.Gates, account string) {
			g.Approvers, g.SeparateApprover = []string{"arn:aws:iam::" + account + ":user/ferry-*"}, true
		}, "who started the promotion: the stage requires another approver (separate_approver)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pr := newPromotion(t, nil)
			tc.gates(pr.p.Stages[2].Gates, pr.r.Info().Account)
			raw, err := json.Marshal(pr.p)
			require.NoError(t, err)
			pr.raw = raw
			pr.register(t, pr.configs()...)
			pr.addStagingAlarm(t)
			x := pr.start(t)

			release := <-pr.approval
			pr.approve(t, "production")
			require.NoError(t, pr.r.SendTaskSuccess(pr.token(t, 2), json.RawMessage(`{}`)))
			release()

			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			ended := make(chan struct{})
			go func() { _ = x.Wait(ctx); close(ended) }()
			select {
			case release = <-pr.approval: // the approval did not count: asked again
			case <-ended:
				t.Fatalf("the promotion went on without an authorized approval: %s", x.Describe().Status)
			}
			stage := pr.record(t).Stages[2]
			assert.Empty(t, stage.ApprovedBy)
			require.NotEmpty(t, stage.Held)
			assert.Contains(t, stage.Held[0], tc.want)
			pr.put(t, naming.PromotionHaltKey(testProject, "production", promotionID), []byte("no"))
			require.NoError(t, pr.r.SendTaskFailure(pr.token(t, 2), "ferry.Halted", "halted by a person"))
			release()
			d := pr.wait(t, x)
			assert.Equal(t, "HaltError", d.Error)
			assert.Empty(t, pr.current(t, "production-use1"), "production deployed without an authorized approval")
		})
	}
}

// TestOnePromotionAtATime: two promotions of one pipeline started at once
// (the client's check bypassed) never both run: the deployer's Promote
// lets one claim the turn (a conditional write) and refuses the other,
// which records nothing; the one that runs is not stranded.
func TestOnePromotionAtATime(t *testing.T) {
	pr := newPromotion(t, nil)
	pr.register(t, pr.configs()...)
	pr.addStagingAlarm(t)
	hold := pr.r.Hold()
	a, b := pr.startAs(t, promotionID), pr.startAs(t, "20260301T120000Z-p2")
	hold()
	release := <-pr.approval // the one that runs waits for production's approval
	var refused, runs *asl.Execution
	for _, x := range []*asl.Execution{a, b} {
		if d := x.Describe(); d.Status == asl.StatusFailed {
			refused = x
		} else {
			runs = x
		}
	}
	require.NotNil(t, refused, "one of the two is refused")
	require.NotNil(t, runs, "the other runs")
	d := refused.Describe()
	assert.Equal(t, "BadReleaseError", d.Error)
	assert.Contains(t, d.Cause, "One promotion of a pipeline")
	ids, err := ledger.New(pr.r.S3(), pr.r.Bucket()).Promotions(context.Background(), testProject, "development")
	require.NoError(t, err)
	assert.Len(t, ids, 1, "the refused promotion records nothing")
	pr.put(t, naming.PromotionHaltKey(testProject, "development", ids[0]), []byte("no"))
	rec, _, err := ledger.New(pr.r.S3(), pr.r.Bucket()).GetPromotion(context.Background(), testProject, "development", ids[0])
	require.NoError(t, err)
	require.NoError(t, pr.r.SendTaskFailure(rec.Stages[2].ApprovalToken, "ferry.Halted", "halted"))
	release()
	assert.Equal(t, "HaltError", pr.wait(t, runs).Error, "it ran to its approval, and ends halted")
}

// TestHeldGateFollowsTheWallOnOwnClock is issue #37's `ferry local
// --speed 0`: a promotion held at a gate (staging's 30 min soak) on a
// region that makes its own clock checks the gate again only as the
// wall clock passes (WaitForGate waits for the world outside, as an
// approval does), instead of jumping its discrete-event time through the
// soak, and its history, at once.
func TestHeldGateFollowsTheWallOnOwnClock(t *testing.T) {
	wall := clock.NewVirtual(epoch0)
	gates := make(chan func(), 8)
	r := newIdleRegion(t, wall, Options{Observer: func(arn string, ev asl.Event) {
		if ev.StateEntered != nil && ev.StateEntered.Name == shape.StateWaitForGate {
			gates <- nil
		}
	}})
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "pipelines", "deploy-test.json"))
	require.NoError(t, err)
	p, err := pipeline.Decode(raw)
	require.NoError(t, err)
	pr := &promotion{r: r, p: p, raw: raw}
	pr.register(t, pr.configs()...)
	rel, err := release.ReadFile(filepath.Join("..", "..", "..", "testdata", "deploy-test-release.json"))
	require.NoError(t, err)
	rel.ConfigName = ""
	q := &pipeline.Request{PromotionID: promotionID, CreatedAt: r.Clock().Now().UTC(), CreatedBy: "alice", Pipeline: p, Release: rel}
	_, err = r.StartPromotion(context.Background(), q)
	require.NoError(t, err)

	<-gates // staging's soak: the gate is held
	first := r.Clock().Now()
	wall.Advance(301 * time.Second)
	r.Clock().Now() // an idle region follows the wall clock when read
	<-gates         // checked again, still held
	assert.Greater(t, r.Clock().Now().Sub(first), 300*time.Second, "the wait passed with the wall clock, not as a jump of 300s")
	rec, _, err := ledger.New(r.S3(), r.Bucket()).GetPromotion(context.Background(), testProject, "development", promotionID)
	require.NoError(t, err)
	assert.Equal(t, ledger.PromotionWaiting, rec.Stages[1].Status, "staging still soaks")
}

// TestPromotionHeldWhileTheStageBeforeDoesNotServe: development's group
// taken out of its classic load balancer, or of its target group, while
// staging soaks holds staging's gate past the soak, saying which load
// balancer has no healthy instance of the release; once attached again
// and healthy there, the gate opens and the promotion succeeds.
func TestPromotionHeldWhileTheStageBeforeDoesNotServe(t *testing.T) {
	group := naming.GroupName(testProject, "development", "web", promotionID)
	for _, lb := range []string{"coinbase-deploy-test-web-elb", "coinbase-deploy-test-web-tg"} {
		t.Run(lb, func(t *testing.T) {
			var (
				gates    int
				held     []string
				attached time.Time
				mend     func() error
			)
			pr := newPromotion(t, func(r *Region, _ string, ev asl.Event) {
				if ev.StateEntered == nil || ev.StateEntered.Name != shape.StateWaitForGate {
					return
				}
				switch gates++; gates {
				case 1: // staging soaks: development's group is taken out of lb
					var err error
					mend, err = takeOut(r, group, lb)
					assert.NoError(t, err)
				case 9: // 10 minutes after the soak: attached again
					rec, _, err := ledger.New(r.S3(), r.Bucket()).GetPromotion(context.Background(), testProject, "development", promotionID)
					assert.NoError(t, err)
					held, attached = rec.Stages[1].Held, r.Clock().Now()
					assert.NoError(t, mend())
				}
			})
			pr.raw = []byte(`{"project_name": "coinbase/deploy-test", "stages": [
			  {"config_name": "development", "targets": [{"account_id": "111111111111", "region": "us-east-1"}]},
			  {"config_name": "staging", "targets": [{"account_id": "111111111111", "region": "us-east-1"}],
			   "overrides": {"services": {"web": {"security_groups": ["ec2::coinbase/deploy-test::{{CONFIG_NAME}}"],
			     "elbs": ["cdt-{{CONFIG_NAME}}-web"], "target_groups": ["cdt-{{CONFIG_NAME}}-web"],
			     "profile": "coinbase-deploy-test-{{CONFIG_NAME}}"}}},
			   "gates": {"soak_seconds": 1800}}]}`)
			var err error
			pr.p, err = pipeline.Decode(pr.raw)
			require.NoError(t, err)
			pr.register(t, "development", "staging")
			d := pr.wait(t, pr.start(t))
			require.Equal(t, asl.StatusSucceeded, d.Status, "%s: %s", d.Error, d.Cause)
			assert.Equal(t, []string{"development: " + lb + " has no healthy instance of release " + promotionID}, held,
				"held past its soak by the load balancer without a healthy instance")
			rec := pr.record(t)
			assert.True(t, rec.Stages[1].ReleasedAt.After(attached), "staging opened once development served again")
			assert.Equal(t, promotionID, pr.current(t, "staging"))
		})
	}
}

// takeOut detaches group from its classic load balancer or target group
// named lb, as an operator might, and returns what attaches it again.
func takeOut(r *Region, group, lb string) (func() error, error) {
	api := r.World().Clients("111111111111", "us-east-1").AutoScaling
	out, err := api.DescribeAutoScalingGroups(context.Background(), &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{group}})
	if err != nil || len(out.AutoScalingGroups) != 1 {
		return nil, fmt.Errorf("describing %s: %v", group, err)
	}
	arns := out.AutoScalingGroups[0].TargetGroupARNs
	if _, err := r.Meddle(context.Background(), Meddling{Action: MeddleDetach, Group: group, LoadBalancer: lb}); err != nil {
		return nil, err
	}
	return func() error {
		if !strings.HasSuffix(lb, "-tg") {
			_, err := api.AttachLoadBalancers(context.Background(), &autoscaling.AttachLoadBalancersInput{AutoScalingGroupName: aws.String(group), LoadBalancerNames: []string{lb}})
			return err
		}
		_, err := api.AttachLoadBalancerTargetGroups(context.Background(), &autoscaling.AttachLoadBalancerTargetGroupsInput{AutoScalingGroupName: aws.String(group), TargetGroupARNs: arns})
		return err
	}, nil
}
