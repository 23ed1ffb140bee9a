package deployer

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/identity"
	"github.com/ferryhq/ferry/internal/pipeline"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/ledger"
)

// promote starts a promotion: it checks the request the execution was
// started with is the one stored under the first stage's config (so
// whoever may deploy that config asked for it), its pipeline and every
// release it derives, its created_at, who made it (the identity proof,
// bound to the request), and that the first stage's configs have this
// pipeline registered; then it records the promotion, once.
func (d *Deployer) promote(ctx context.Context, req execution.Request) (any, error) {
	var in execution.PromotionInput
	if err := json.Unmarshal(req.Input, &in); err != nil || len(in.Promotion) == 0 {
		return nil, &failure.InternalError{Msg: "task Promote: its input is not a promotion"}
	}
	q, err := decodeRequest(in.Promotion)
	if err != nil {
		return nil, err
	}
	sum, caller, err := d.checkRequest(ctx, req, q)
	if err != nil {
		return nil, err
	}
	project, first := q.Pipeline.ProjectName, q.FirstConfig()
	digest, err := pipeline.Digest(q.Release)
	if err != nil {
		return nil, failure.BadRelease("release: " + err.Error())
	}
	pipeSum, err := pipeline.PipelineHash(q.Pipeline)
	if err != nil {
		return nil, failure.BadRelease("pipeline: " + err.Error())
	}
	if held, err := d.unregistered(ctx, q, 0, pipeSum); err != nil {
		return nil, err
	} else if len(held) > 0 {
		return nil, failure.BadRelease(held...)
	}
	if err := d.takeTurn(ctx, req, project, first, q.PromotionID); err != nil {
		return nil, err
	}
	rec := ledger.PromotionRecord{
		PromotionID: q.PromotionID, ProjectName: project, Digest: digest, PipelineSHA256: pipeSum, RequestSHA256: sum,
		StartedBy: caller.ARN, StartedByID: caller.UserID, StartedByName: q.CreatedBy, StartedAt: d.now(), Execution: req.Execution.ID,
		Status: ledger.PromotionRunning, Stages: promotionStages(q.Pipeline),
	}
	got, wrote, err := d.ledger.CreatePromotion(ctx, first, rec)
	if err != nil {
		return nil, err
	}
	if !wrote && got.Execution != req.Execution.ID {
		return nil, failure.BadRelease(fmt.Sprintf("promotion_id: promotion %s was started by execution %s: a promotion runs once", q.PromotionID, got.Execution))
	}
	d.log.Info("promotion started", "project", project, "promotion_id", q.PromotionID, "digest", digest, "started_by", caller.ARN)
	return execution.Promotion{ProjectName: project, FirstConfig: first, PromotionID: q.PromotionID,
		RequestSHA256: sum, Stages: len(q.Pipeline.Stages)}, nil
}

// takeTurn lets promotion id of execution req run only if no other
// promotion recorded under project's first config runs, and it is the one
// that claims the turn after the newest of them (a conditional write,
// ledger.ClaimPromotionTurn): of two promotions started at once, one
// runs and the other is refused. A promotion already recorded for req's
// execution took its turn; one recorded as running whose execution has
// ended (its last write failed) runs no more.
func (d *Deployer) takeTurn(ctx context.Context, req execution.Request, project, first, id string) error {
	if rec, found, err := d.ledger.GetPromotion(ctx, project, first, id); err != nil || (found && rec.Execution == req.Execution.ID) {
		return err
	}
	ids, err := d.ledger.Promotions(ctx, project, first)
	if err != nil {
		return err
	}
	after := ""
	for _, other := range ids {
		if other == id {
			continue
		}
		rec, found, err := d.ledger.GetPromotion(ctx, project, first, other)
		if err != nil {
			return err
		}
		if !found {
			continue
		}
		if running, err := d.promotionRuns(ctx, rec); err != nil {
			return err
		} else if running {
			return failure.BadRelease(fmt.Sprintf("promotion_id: promotion %s of this pipeline runs (execution %s). %s", other, rec.Execution, pipeline.OnePromotionRule))
		}
		after = cmp.Or(after, other)
	}
	return d.claimTurn(ctx, req, project, first, id, after)
}

// maxTurnClaims bounds the turns claimTurn follows past promotions whose
// execution ended.
const maxTurnClaims = 16

// claimTurn claims the turn after promotion after for promotion id of
// req's execution. A turn already claimed by a promotion whose execution
// still runs refuses id; one whose execution ended (it never recorded
// itself, or ended without its record saying so) is followed: id claims
// the turn after it.
func (d *Deployer) claimTurn(ctx context.Context, req execution.Request, project, first, id, after string) error {
	for range maxTurnClaims {
		got, _, err := d.ledger.ClaimPromotionTurn(ctx, project, first, after, ledger.PromotionTurn{PromotionID: id, Execution: req.Execution.ID})
		if err != nil {
			return err
		}
		if got.PromotionID == id && got.Execution == req.Execution.ID {
			return nil
		}
		if runs, err := d.executionRuns(ctx, got.Execution); err != nil {
			return err
		} else if runs {
			return failure.BadRelease(fmt.Sprintf("promotion_id: promotion %s (execution %s) started at the same time and runs. %s", got.PromotionID, got.Execution, pipeline.OnePromotionRule))
		}
		after = got.PromotionID
	}
	return &failure.InternalError{Msg: fmt.Sprintf("task Promote: more than %d ended promotions claimed turns after %s", maxTurnClaims, after)}
}

// promotionRuns reports whether the promotion rec records runs: its
// record says so and its execution does.
func (d *Deployer) promotionRuns(ctx context.Context, rec ledger.PromotionRecord) (bool, error) {
	if rec.Status != ledger.PromotionRunning {
		return false, nil
	}
	return d.executionRuns(ctx, rec.Execution)
}

// executionRuns reports whether execution arn is RUNNING; true when the
// deployer does not describe executions (tests of single handlers), so
// that it never lets two promotions run.
func (d *Deployer) executionRuns(ctx context.Context, arn string) (bool, error) {
	if d.cfg.Executions == nil || arn == "" {
		return true, nil
	}
	out, err := d.cfg.Executions.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
	if err != nil {
		return false, cloud.Classify("describe execution "+arn, err)
	}
	return out.Status == sfntypes.ExecutionStatusRunning, nil
}

// checkRequest checks q, the request req's execution runs: that it is its
// execution's input, the one stored under the first stage's config, recent
// (created_at as a release's), and proved; it returns the request's hash
// and who made it.
func (d *Deployer) checkRequest(ctx context.Context, req execution.Request, q *pipeline.Request) (sum string, caller identity.Caller, err error) {
	if sum, err = q.Hash(); err != nil {
		return "", caller, failure.BadRelease("request: " + err.Error())
	}
	if err := d.confirmPromotion(ctx, req, sum); err != nil {
		return "", caller, err
	}
	if _, err := d.storedRequest(ctx, q.Pipeline.ProjectName, q.FirstConfig(), q.PromotionID, sum); err != nil {
		return "", caller, err
	}
	if why := d.checkCreatedAt(&release.Release{CreatedAt: q.CreatedAt}, req); why != "" {
		return "", caller, failure.BadRelease("request." + why)
	}
	caller, err = d.verifyRequest(ctx, q)
	return sum, caller, err
}

// promotionStages are a promotion's stages before any is reached.
func promotionStages(p *pipeline.Pipeline) []ledger.PromotionStage {
	out := make([]ledger.PromotionStage, len(p.Stages))
	for i, s := range p.Stages {
		out[i] = ledger.PromotionStage{Config: s.ConfigName, Status: ledger.PromotionPending}
		for _, t := range s.Targets {
			out[i].Targets = append(out[i].Targets, ledger.PromotionTarget{
				Config: pipeline.TargetConfig(s, t), AccountID: t.AccountID, Region: t.Region})
		}
	}
	return out
}

// verifyRequest returns who made the request, as its identity proof says;
// zero when the deployer verifies no proofs.
func (d *Deployer) verifyRequest(ctx context.Context, q *pipeline.Request) (identity.Caller, error) {
	if d.cfg.Identities == nil {
		return identity.Caller{}, nil
	}
	sum, err := q.IdentityHash()
	if err != nil {
		return identity.Caller{}, failure.BadRelease("request: " + err.Error())
	}
	return d.verifyCaller(ctx, q.Identity, sum)
}
