package deployer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/pipeline"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/ledger"
)

// The promotion tasks' own tests drive one promotion of the deploy-test
// pipeline (testdata/pipelines/deploy-test.json: development; staging
// after a 30m soak; production in two regions after a 1h soak, a gate
// alarm in staging and an approval) by hand, task by task, as the state
// machine would, over the harness's deployer. What a stage's deploys do
// is written as their records say it (current records, outcomes): the
// deploys themselves are the deploy tasks' tests. The gate also reads
// whether the stage before serves, so a stage before is deployed for
// real once (serve), its records then written as the test says.

// promotionID is the promotion's id (a release id: every target's
// release has it).
const promotionID = "20260301T115900Z-p1"

// promo is one promotion's execution, driven by hand.
type promo struct {
	h   *harness
	p   *pipeline.Pipeline
	raw []byte // the pipeline file, as registered
	rel *release.Release
	x   *run
	// served is how many stages serve the promotion's release (serve).
	served int
	// st is the promotion's state document, as the last task left it.
	st *execution.Promotion
}

// newPromo stores the request of a promotion of the deploy-test release
// through the pipeline (changed by mutate) under the first stage's
// config, as ferry pipeline start does, and registers its execution
// RUNNING. The pipeline is registered nowhere yet.
func newPromo(t *testing.T, mutate ...func(*pipeline.Pipeline)) *promo {
	t.Helper()
	h := newHarness(t)
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "pipelines", "deploy-test.json"))
	require.NoError(t, err)
	p, err := pipeline.Decode(raw)
	require.NoError(t, err)
	if len(mutate) > 0 {
		for _, m := range mutate {
			m(p)
		}
		raw, err = json.Marshal(p)
		require.NoError(t, err)
	}
	rel, err := release.ReadFile(filepath.Join("..", "..", "testdata", "deploy-test-release.json"))
	require.NoError(t, err)
	rel.ConfigName = ""
	q := &pipeline.Request{PromotionID: promotionID, CreatedAt: h.clk.Now().Add(-time.Minute).UTC(), CreatedBy: "alice", Pipeline: p, Release: rel}
	body, err := json.Marshal(q)
	require.NoError(t, err)
	require.NoError(t, h.ledger.PutClientObject(t.Context(), naming.PromotionRequestKey(project, "development", promotionID), body))
	input, err := json.Marshal(map[string]json.RawMessage{"promotion": body})
	require.NoError(t, err)
	name := "coinbase_deploy-test_" + promotionID + "-promotion"
	arn := asl.ExecutionARN(naming.StateMachineARN(account, region), name)
	h.executions.register(arn, input, h.clk.Now())
	return &promo{h: h, p: p, raw: raw, rel: rel, x: &run{h: h, input: input, ctx: execution.Context{ID: arn, Name: name, StartTime: h.clk.Now()}}}
}

// register registers the pipeline in configs (every config of the
// pipeline when none is named), as ferry pipeline register does.
func (pr *promo) register(configs ...string) {
	if len(configs) == 0 {
		for _, s := range pr.p.Stages {
			for _, tg := range s.Targets {
				configs = append(configs, pipeline.TargetConfig(s, tg))
			}
		}
	}
	for _, c := range configs {
		require.NoError(pr.h.t, pr.h.ledger.PutClientObject(pr.h.t.Context(), naming.PipelineKey(project, c), pr.raw))
	}
}

// task runs a promotion task on the state document (Promote on the
// execution's input) and keeps its result as the state document.
func (pr *promo) task(task string) error {
	var input any = pr.st
	if task == execution.TaskPromote {
		input = pr.x.input
	}
	out, err := pr.x.invoke(task, input)
	if err != nil {
		return err
	}
	var st execution.Promotion
	require.NoError(pr.h.t, json.Unmarshal(out, &st))
	pr.st = &st
	return nil
}

// started registers the pipeline everywhere and runs Promote.
func (pr *promo) started() *promo {
	pr.register()
	require.NoError(pr.h.t, pr.task(execution.TaskPromote))
	return pr
}

// atStage records every stage before stage i as succeeded, each target
// running the promotion's release since a swap at swapped, and moves the
// state document to stage i.
func (pr *promo) atStage(i int, swapped time.Time) *promo {
	pr.serve(i)
	rec := pr.record()
	for k := range i {
		rec.Stages[k].Status, rec.Stages[k].EndedAt = ledger.PromotionSucceeded, swapped
		for _, tg := range rec.Stages[k].Targets {
			pr.swap(tg.Config, swapped)
		}
	}
	require.NoError(pr.h.t, pr.h.ledger.PutPromotion(pr.h.t.Context(), "development", rec))
	pr.st.Stage = i
	return pr
}

// serve deploys, through the deploy tasks, the release the promotion
// derives for each target of the stages before stage i not deployed yet:
// each then serves the promotion's release, healthy in every load
// balancer and target group it names. It moves the clock on.
func (pr *promo) serve(i int) {
	for ; pr.served < i; pr.served++ {
		s := pr.p.Stages[pr.served]
		for j, tg := range s.Targets {
			r, err := pr.p.Release(pr.rel, pr.served, j)
			require.NoError(pr.h.t, err)
			r.ConfigName, r.ReleaseID = pipeline.TargetConfig(s, tg), promotionID
			r.CreatedAt, r.CreatedBy = pr.h.clk.Now().Add(-time.Minute), caller
			pr.h.start(r).succeed()
		}
	}
}

// swap records config as running the promotion's release since at.
func (pr *promo) swap(config string, at time.Time) {
	require.NoError(pr.h.t, pr.h.ledger.PutCurrent(pr.h.t.Context(), project, config, ledger.Current{
		ReleaseID: promotionID, Execution: "x", ReleaseSHA256: "ab", DeployedAt: at, AccountID: account, Region: region}))
}

// record reads the promotion's record.
func (pr *promo) record() ledger.PromotionRecord {
	rec, found, err := pr.h.ledger.GetPromotion(pr.h.t.Context(), project, "development", promotionID)
	require.NoError(pr.h.t, err)
	require.True(pr.h.t, found, "the promotion is recorded")
	return rec
}

// approve stores an approval of stage for the promotion's artifact,
// changed by mutate, as ferry pipeline approve does (the harness's
// identities verify any proof as alice, unless a test sets others).
func (pr *promo) approve(stage string, mutate ...func(*pipeline.Approval)) pipeline.Approval {
	a := pipeline.Approval{PromotionID: promotionID, Stage: stage, Digest: pr.record().Digest, CreatedAt: pr.h.clk.Now().UTC(), CreatedBy: "bob"}
	for _, m := range mutate {
		m(&a)
	}
	body, err := json.Marshal(a)
	require.NoError(pr.h.t, err)
	require.NoError(pr.h.t, pr.h.ledger.PutClientObject(pr.h.t.Context(), naming.ApprovalKey(project, stage, promotionID), body))
	return a
}

// halt writes the promotion's halt marker, as ferry pipeline halt does.
func (pr *promo) halt() {
	require.NoError(pr.h.t, pr.h.ledger.PutClientObject(pr.h.t.Context(), naming.PromotionHaltKey(project, "development", promotionID), []byte("{}")))
}
