package deployer

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/identity"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/pipeline"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/ledger"
	"github.com/ferryhq/ferry/internal/tuning"
)

// promotion is what every promotion task after Promote works on: its
// state document, its stored request (checked against the state's hash)
// and its record.
type promotion struct {
	st  *execution.Promotion
	q   *pipeline.Request
	rec ledger.PromotionRecord
}

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

// decodeRequest is pipeline.DecodeRequest with its problems as a
// *failure.BadReleaseError.
func decodeRequest(data []byte) (*pipeline.Request, error) {
	q, err := pipeline.DecodeRequest(data)
	if err != nil {
		return nil, failure.BadRelease(pipelineProblems(err)...)
	}
	return q, nil
}

func pipelineProblems(err error) []string {
	var invalid *pipeline.InvalidError
	if errors.As(err, &invalid) {
		return invalid.Problems
	}
	return []string{err.Error()}
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

// confirmPromotion checks that req runs for a running execution of the
// deployer's state machine whose input is the promotion request of
// canonical hash sum (see confirmExecution).
func (d *Deployer) confirmPromotion(ctx context.Context, req execution.Request, sum string) error {
	input, err := d.runningInput(ctx, req)
	if err != nil || d.cfg.Executions == nil {
		return err
	}
	var in execution.PromotionInput
	if err := json.Unmarshal(input, &in); err != nil || len(in.Promotion) == 0 {
		return refuseRequest(req, "its input is not a promotion")
	}
	q, err := pipeline.DecodeRequest(in.Promotion)
	if err != nil {
		return refuseRequest(req, "its input is not a promotion: %v", err)
	}
	if got, err := q.Hash(); err != nil || got != sum {
		return refuseRequest(req, "runs promotion request sha256 %s, not %s", got, sum)
	}
	return nil
}

// storedRequest reads the request stored for a promotion and checks that
// it is the one of canonical hash sum.
func (d *Deployer) storedRequest(ctx context.Context, project, first, id, sum string) (*pipeline.Request, error) {
	key := naming.PromotionRequestKey(project, first, id)
	raw, found, err := d.ledger.GetClientObject(ctx, key, pipeline.MaxRequestBytes)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, failure.BadRelease(fmt.Sprintf("request: not stored at %s: whoever starts a promotion stores it under the first stage's config", key))
	}
	q, err := decodeRequest(raw)
	if err != nil {
		return nil, err
	}
	if got, err := q.Hash(); err != nil || got != sum {
		return nil, failure.BadRelease(fmt.Sprintf("request: the one stored at %s is not the one the execution runs", key))
	}
	return q, nil
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

// unregistered says which configs of stage i do not have the pipeline of
// hash pipeSum registered (naming.PipelineKey): a promotion deploys a
// config only through the pipeline whoever may deploy it registered.
func (d *Deployer) unregistered(ctx context.Context, q *pipeline.Request, i int, pipeSum string) ([]string, error) {
	var held []string
	s := q.Pipeline.Stages[i]
	for _, t := range s.Targets {
		config := pipeline.TargetConfig(s, t)
		key := naming.PipelineKey(q.Pipeline.ProjectName, config)
		raw, found, err := d.ledger.GetClientObject(ctx, key, limits.MaxPipelineBytes)
		if err != nil {
			return nil, err
		}
		if !found {
			held = append(held, fmt.Sprintf("config %s has no pipeline registered (%s): register this one with ferry pipeline register", config, key))
			continue
		}
		if !pipeline.SamePipeline(raw, pipeSum) {
			held = append(held, fmt.Sprintf("config %s has another pipeline registered (%s): a promotion deploys a config only through its registered pipeline", config, key))
		}
	}
	return held, nil
}

// loadPromotion reads the promotion state a task is given, confirms it is
// its execution's, and reads the stored request and the record.
func (d *Deployer) loadPromotion(ctx context.Context, req execution.Request, st *execution.Promotion) (*promotion, error) {
	if st.ProjectName == "" || st.FirstConfig == "" || st.PromotionID == "" || st.RequestSHA256 == "" {
		return nil, &failure.InternalError{Msg: fmt.Sprintf("task %s: the state names no promotion", req.Task)}
	}
	if err := d.confirmPromotion(ctx, req, st.RequestSHA256); err != nil {
		return nil, err
	}
	q, err := d.storedRequest(ctx, st.ProjectName, st.FirstConfig, st.PromotionID, st.RequestSHA256)
	if err != nil {
		return nil, err
	}
	rec, found, err := d.ledger.GetPromotion(ctx, st.ProjectName, st.FirstConfig, st.PromotionID)
	switch {
	case err != nil:
		return nil, err
	case !found:
		return nil, &failure.InternalError{Msg: fmt.Sprintf("task %s: promotion %s has no record", req.Task, st.PromotionID)}
	case rec.RequestSHA256 != st.RequestSHA256 || rec.Execution != req.Execution.ID:
		return nil, refuseRequest(req, "promotion %s is recorded for another request or execution", st.PromotionID)
	case st.Stage < 0 || st.Stage >= len(rec.Stages) || len(rec.Stages) != len(q.Pipeline.Stages):
		return nil, &failure.InternalError{Msg: fmt.Sprintf("task %s: stage %d of %d", req.Task, st.Stage, len(rec.Stages))}
	}
	return &promotion{st: st, q: q, rec: rec}, nil
}

// promotionOf is how Gate, RequestApproval
// and EndStage start: the promotion's state document they are given,
// confirmed to be their execution's, with its request and record.
func (d *Deployer) promotionOf(ctx context.Context, req execution.Request) (*promotion, error) {
	var st execution.Promotion
	if err := json.Unmarshal(req.Input, &st); err != nil {
		return nil, &failure.InternalError{Msg: fmt.Sprintf("task %s: input is not a promotion's state: %v", req.Task, err)}
	}
	return d.loadPromotion(ctx, req, &st)
}

// checkGate checks the gates of the promotion's stage: a halt marker of the
// promotion ends it (HaltError); else the stage opens (its wave starts)
// once nothing holds it back, waits for a person's approval once only
// that does, or waits and is checked again.
func (d *Deployer) checkGate(ctx context.Context, req execution.Request) (any, error) {
	p, err := d.promotionOf(ctx, req)
	if err != nil {
		return nil, err
	}
	st := p.st
	now := d.now()
	stage := &p.rec.Stages[st.Stage]
	if key, err := d.promotionHalt(ctx, p); err != nil {
		return nil, err
	} else if key != "" {
		p.rec.Status, p.rec.EndedAt, p.rec.Why = ledger.PromotionHalted, now, "halted by "+key
		stage.Status, stage.ApprovalToken = ledger.PromotionHalted, "" // Held says what held it when halted
		if err := d.ledger.PutPromotion(ctx, st.FirstConfig, p.rec); err != nil {
			return nil, err
		}
		return nil, &failure.HaltError{Reason: "the promotion's halt marker " + key}
	}
	held, wait, err := d.gatesHeld(ctx, p, now)
	if err != nil {
		return nil, err
	}
	g := p.q.Pipeline.Stages[st.Stage].Gates
	approval := false
	if g != nil && g.Approval && stage.ApprovedBy == "" {
		approver, why, err := d.approval(ctx, p)
		switch {
		case err != nil:
			return nil, err
		case approver.ARN != "":
			stage.ApprovedBy, stage.ApprovedByID, stage.ApprovedAt = approver.ARN, approver.UserID, now
		default:
			approval = len(held) == 0
			held = append(held, why)
		}
	}
	stage.Held, stage.ApprovalToken = held, ""
	st.Gate, st.Targets, st.Wave, st.End, st.Error = &execution.Gate{Held: held}, nil, nil, nil, nil
	switch {
	case len(held) == 0:
		stage.Status, stage.ReleasedAt = ledger.PromotionDeploying, now
		st.Gate.Open = true
		for j := range stage.Targets {
			st.Targets = append(st.Targets, j)
		}
	case approval:
		stage.Status = ledger.PromotionApproval
		st.Gate.Approval = true
	default:
		stage.Status = ledger.PromotionWaiting
		st.Gate.WaitSeconds = int(wait / time.Second)
	}
	if err := d.ledger.PutPromotion(ctx, st.FirstConfig, p.rec); err != nil {
		return nil, err
	}
	return st, nil
}

// promotionHalt returns the key of a halt marker of the promotion under
// its first config or any stage's config, "" for none. A marker that
// cannot be read is an error: a halt read fails closed.
func (d *Deployer) promotionHalt(ctx context.Context, p *promotion) (string, error) {
	configs := []string{p.st.FirstConfig}
	for _, s := range p.q.Pipeline.Stages {
		configs = append(configs, s.ConfigName)
	}
	slices.Sort(configs)
	for _, c := range slices.Compact(configs) {
		key := naming.PromotionHaltKey(p.st.ProjectName, c, p.st.PromotionID)
		if _, found, err := d.ledger.GetClientObject(ctx, key, limits.MaxStateObjectBytes); err != nil || found {
			return key, err
		}
	}
	return "", nil
}

// gatesHeld lists what holds stage i of the promotion back besides an
// approval, and how long to wait before checking again: the configs of
// the stage without the pipeline registered; on a later stage, the
// stage before no longer running the promotion's release on every
// target, its soak, and a gate alarm in ALARM or missing in one of its
// targets (read as that target's deploy role session).
func (d *Deployer) gatesHeld(ctx context.Context, p *promotion, now time.Time) ([]string, time.Duration, error) {
	i := p.st.Stage
	held, err := d.unregistered(ctx, p.q, i, p.rec.PipelineSHA256)
	if err != nil {
		return nil, 0, err
	}
	wait := time.Duration(tuning.GateRecheckSeconds) * time.Second
	if i == 0 {
		return held, wait, nil
	}
	prev, g := p.rec.Stages[i-1], p.q.Pipeline.Stages[i].Gates
	for _, t := range prev.Targets {
		cur, found, err := d.ledger.GetCurrent(ctx, p.st.ProjectName, t.Config)
		if err != nil {
			return nil, 0, err
		}
		if !found || cur.ReleaseID != p.st.PromotionID {
			held = append(held, fmt.Sprintf("%s no longer runs the promotion's release %s", t.Config, p.st.PromotionID))
		}
	}
	if g == nil {
		return held, wait, nil
	}
	if left := prev.EndedAt.Add(time.Duration(g.SoakSeconds) * time.Second).Sub(now); left > 0 {
		held = append(held, fmt.Sprintf("soak: %s after the stage before succeeded, %s left",
			pipeline.FormatDuration(time.Duration(g.SoakSeconds)*time.Second), pipeline.FormatDuration(left)))
		// A soak is waited out in slices of at most the recheck: a halt
		// marker written meanwhile is read at the next check.
		wait = min(wait, left)
	}
	for _, t := range prev.Targets {
		states, err := d.alarmsOf(ctx, p.st.ProjectName, t.Config, g.Alarms)
		if err != nil {
			return nil, 0, err
		}
		for _, a := range states {
			if a.State == "ALARM" || a.State == execution.AlarmMissing {
				held = append(held, fmt.Sprintf("alarm %s is %s in %s", a.Name, a.State, t.Config))
			}
		}
	}
	return held, wait, nil
}

// alarmsOf reads the state of alarms in config's target as its current
// release's deploy role session (none: nothing to read).
func (d *Deployer) alarmsOf(ctx context.Context, project, config string, names []string) ([]execution.AlarmState, error) {
	if len(names) == 0 {
		return nil, nil
	}
	cur, found, err := d.ledger.GetCurrent(ctx, project, config)
	if err != nil || !found {
		return nil, err
	}
	r, err := d.ledger.GetRelease(ctx, project, config, cur.ReleaseID)
	if err != nil {
		r = nil // expired: the record names the target
	}
	st := &execution.State{ProjectName: project, ConfigName: config, ReleaseID: cur.ReleaseID, Target: d.currentTarget(cur, r)}
	c, err := d.connect(ctx, st, false)
	if err != nil {
		return nil, err
	}
	return alarmStates(ctx, c.CloudWatch, names)
}

// approval reads the approval of the promotion's stage: who approved it,
// or why it is not approved. An approval counts only with a valid
// identity proof bound to it, for this promotion, stage and artifact, by
// a principal the stage's gates let approve (pipeline.Gates.MayApprove;
// of an account the deployer accepts proofs from or its approvers name)
// and, with separate_approver, not the promotion's starter.
func (d *Deployer) approval(ctx context.Context, p *promotion) (approver identity.Caller, why string, err error) {
	stage := p.q.Pipeline.Stages[p.st.Stage].ConfigName
	key := naming.ApprovalKey(p.st.ProjectName, stage, p.st.PromotionID)
	raw, found, err := d.ledger.GetClientObject(ctx, key, limits.MaxStateObjectBytes)
	if err != nil {
		return approver, "", err
	}
	waiting := fmt.Sprintf("the stage needs a person's approval: ferry pipeline approve (stored at %s)", key)
	if !found {
		return approver, waiting, nil
	}
	var a pipeline.Approval
	if err := json.Unmarshal(raw, &a); err != nil {
		return approver, fmt.Sprintf("the approval at %s does not decode: %v", key, err), nil
	}
	if a.PromotionID != p.st.PromotionID || a.Stage != stage || a.Digest != p.rec.Digest {
		return approver, fmt.Sprintf("the approval at %s is of promotion %s, stage %s, artifact %s: not this one", key, a.PromotionID, a.Stage, pipeline.ShortDigest(a.Digest)), nil
	}
	if d.cfg.Identities == nil {
		return identity.Caller{ARN: cmp.Or(a.CreatedBy, "approved")}, "", nil
	}
	sum, err := a.IdentityHash()
	if err != nil {
		return approver, "", failure.BadRelease("approval: " + err.Error())
	}
	gates := p.q.Pipeline.Stages[p.st.Stage].Gates
	caller, err := d.verifyCaller(ctx, a.Identity, sum, gates.ApproverAccounts()...)
	if failure.IsRetryable(err) {
		return approver, "", err
	}
	if err != nil {
		return approver, fmt.Sprintf("the approval at %s has no valid identity proof: %v", key, err), nil
	}
	if why := mayApprove(gates, caller, p.rec); why != "" {
		return approver, fmt.Sprintf("the approval at %s is by %s, who %s", key, caller.ARN, why), nil
	}
	return caller, "", nil
}

// mayApprove is why the verified caller may not approve a stage of gates
// g of the promotion rec ("" when it may): not among g's approvers, or,
// with separate_approver, the principal who started the promotion (the
// same unique id, or the same ARN).
func mayApprove(g *pipeline.Gates, caller identity.Caller, rec ledger.PromotionRecord) string {
	switch {
	case !g.MayApprove(caller.ARN):
		return "is not among the stage's approvers (" + strings.Join(g.Approvers, ", ") + ")"
	case g.SeparateApprover && (caller.ARN == rec.StartedBy || caller.UserID != "" && caller.UserID == rec.StartedByID):
		return "started the promotion: the stage requires another approver (separate_approver)"
	}
	return ""
}

// requestApproval records the task token of the approval callback the
// stage waits for: `ferry pipeline approve` answers it.
func (d *Deployer) requestApproval(ctx context.Context, req execution.Request) (any, error) {
	if req.TaskToken == "" {
		return nil, &failure.InternalError{Msg: "task RequestApproval: no task token"}
	}
	p, err := d.promotionOf(ctx, req)
	if err != nil {
		return nil, err
	}
	stage := &p.rec.Stages[p.st.Stage]
	stage.Status, stage.ApprovalToken = ledger.PromotionApproval, req.TaskToken
	if err := d.ledger.PutPromotion(ctx, p.st.FirstConfig, p.rec); err != nil {
		return nil, err
	}
	return struct{}{}, nil
}

// startTarget makes the release target j of the promotion's stage
// deploys and stores it, with the assets it names copied into the
// target config's prefix: its release id is the promotion's, its
// created_at when the stage's gates held, so every attempt makes the
// same bytes (a nested execution of the same name and input is the same
// execution).
func (d *Deployer) startTarget(ctx context.Context, req execution.Request) (any, error) {
	var in execution.WaveTarget
	if err := json.Unmarshal(req.Input, &in); err != nil {
		return nil, &failure.InternalError{Msg: fmt.Sprintf("task StartTarget: input is not a wave's target: %v", err)}
	}
	p, err := d.loadPromotion(ctx, req, &in.Promotion)
	if err != nil {
		return nil, err
	}
	i, j := in.Promotion.Stage, in.Target
	stage := p.rec.Stages[i]
	if stage.Status != ledger.PromotionDeploying || j < 0 || j >= len(stage.Targets) {
		return nil, &failure.InternalError{Msg: fmt.Sprintf("task StartTarget: stage %d is %s, target %d of %d", i, stage.Status, j, len(stage.Targets))}
	}
	r, err := d.promotedRelease(p, i, j)
	if err != nil {
		return nil, err
	}
	raw, err := release.Canonical(r)
	if err != nil {
		return nil, failure.BadRelease("release: " + err.Error())
	}
	for _, name := range slices.Sorted(maps.Keys(r.Assets)) {
		if err := d.copyAsset(ctx, r.ProjectName, in.Promotion.FirstConfig, r.ConfigName, r.Assets[name]); err != nil {
			return nil, err
		}
	}
	if err := d.ledger.PutRelease(ctx, r.ProjectName, r.ConfigName, r.ReleaseID, raw); err != nil {
		return nil, err
	}
	return execution.TargetStart{Name: naming.ExecutionName(r.ProjectName, r.ConfigName, r.ReleaseID), Release: raw}, nil
}

// promotedRelease is the release target j of stage i deploys in the
// promotion: what the pipeline derives, named by the promotion.
func (d *Deployer) promotedRelease(p *promotion, i, j int) (*release.Release, error) {
	r, err := p.q.Pipeline.Release(p.q.Release, i, j)
	if err != nil {
		return nil, failure.BadRelease(err.Error())
	}
	r.ReleaseID, r.CreatedAt, r.Identity = p.st.PromotionID, p.rec.Stages[i].ReleasedAt.UTC().Truncate(time.Millisecond), nil
	r.CreatedBy = cmp.Or(p.rec.StartedByName, "promotion "+p.st.PromotionID)
	r.RollbackOf, r.HealOf, r.PromotionOf = "", "", p.st.FirstConfig
	return r, nil
}

// copyAsset copies an asset the client uploaded under the first stage's
// config to config's prefix, checked against its hash, unless it is
// there already.
func (d *Deployer) copyAsset(ctx context.Context, project, from, config string, a *release.Asset) error {
	if a == nil || from == config {
		return nil
	}
	dst := naming.AssetKey(project, config, a.SHA256)
	if body, found, err := d.ledger.GetClientObject(ctx, dst, limits.MaxAssetBytes); err != nil {
		return err
	} else if found && sha256Of(body) == a.SHA256 {
		return nil
	}
	src := naming.AssetKey(project, from, a.SHA256)
	body, found, err := d.ledger.GetClientObject(ctx, src, limits.MaxAssetBytes)
	switch {
	case err != nil:
		return err
	case !found:
		return failure.BadRelease(fmt.Sprintf("asset %s: not uploaded to the deployer bucket (%s)", a.SHA256, src))
	case sha256Of(body) != a.SHA256:
		return failure.BadRelease(fmt.Sprintf("asset %s: the deployer bucket's %s holds other bytes", a.SHA256, src))
	}
	return d.ledger.PutClientObject(ctx, dst, body)
}

func sha256Of(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// endStage records how each target of the stage's wave ended, from each
// deploy's own outcome record (the wave's view where there is none: a
// deploy refused before it recorded one). A stage whose every target
// succeeded ends the promotion when it is the last, else moves it on; any
// other ends the promotion: a CleanUpError when a target ended dirty,
// else, halted (a HaltError) when the promotion's halt marker is there
// (the halt rolled the stage back), else failed (a DeployError).
func (d *Deployer) endStage(ctx context.Context, req execution.Request) (any, error) {
	p, err := d.promotionOf(ctx, req)
	if err != nil {
		return nil, err
	}
	st := p.st
	now := d.now()
	stage := &p.rec.Stages[st.Stage]
	failed, dirty, err := d.stageOutcomes(ctx, st, stage)
	if err != nil {
		return nil, err
	}
	stage.EndedAt = now
	halted := ""
	if len(failed) > 0 && len(dirty) == 0 {
		if halted, err = d.promotionHalt(ctx, p); err != nil {
			return nil, err
		}
	}
	var endErr error
	switch {
	case halted != "":
		stage.Status = ledger.PromotionHalted
		endErr = &failure.HaltError{Reason: fmt.Sprintf("the promotion's halt marker %s: stage %s rolled back (%s)", halted, stage.Config, strings.Join(failed, ", "))}
	case len(dirty) > 0:
		stage.Status = ledger.PromotionFailed
		endErr = &failure.CleanUpError{Err: fmt.Errorf("stage %s: %s ended FailureDirty", stage.Config, strings.Join(dirty, ", "))}
	case len(failed) > 0:
		stage.Status = ledger.PromotionFailed
		endErr = &failure.DeployError{Op: "stage " + stage.Config, Err: fmt.Errorf("%s did not succeed; the stages after it are not deployed", strings.Join(failed, ", "))}
	default:
		stage.Status = ledger.PromotionSucceeded
	}
	last := st.Stage == len(p.rec.Stages)-1
	switch {
	case halted != "":
		p.rec.Status, p.rec.EndedAt, p.rec.Why = ledger.PromotionHalted, now, "halted by "+halted
	case endErr != nil:
		p.rec.Status, p.rec.EndedAt, p.rec.Why = ledger.PromotionFailed, now, endErr.Error()
	case last:
		p.rec.Status, p.rec.EndedAt = ledger.PromotionSucceeded, now
	}
	if err := d.ledger.PutPromotion(ctx, st.FirstConfig, p.rec); err != nil {
		return nil, err
	}
	if endErr != nil {
		return nil, endErr
	}
	d.log.Info("promotion stage succeeded", "project", st.ProjectName, "promotion_id", st.PromotionID, "stage", stage.Config)
	st.End, st.Gate, st.Targets, st.Wave = &execution.StageEnd{Done: last}, nil, nil, nil
	if !last {
		st.Stage++
	}
	return st, nil
}

// verifyPromotion accepts a promoted release (promotion_of set) without an
// identity proof only as the promotion's record says: its stage's gates
// held (the stage is deploying), and its content is exactly what the
// pipeline derives for its config from the stored request. The caller is
// the promotion's starter, for the records.
func (d *Deployer) verifyPromotion(ctx context.Context, r *release.Release) (identity.Caller, error) {
	rec, found, err := d.ledger.GetPromotion(ctx, r.ProjectName, r.PromotionOf, r.ReleaseID)
	switch {
	case err != nil:
		return identity.Caller{}, err
	case !found:
		return identity.Caller{}, failure.BadRelease(fmt.Sprintf("promotion_of: no promotion %s of %s %s is recorded", r.ReleaseID, r.ProjectName, r.PromotionOf))
	}
	q, err := d.storedRequest(ctx, r.ProjectName, r.PromotionOf, r.ReleaseID, rec.RequestSHA256)
	if err != nil {
		return identity.Caller{}, err
	}
	st := &execution.Promotion{ProjectName: r.ProjectName, FirstConfig: r.PromotionOf, PromotionID: r.ReleaseID}
	p := &promotion{st: st, q: q, rec: rec}
	for i, s := range q.Pipeline.Stages {
		for j, t := range s.Targets {
			if pipeline.TargetConfig(s, t) != r.ConfigName {
				continue
			}
			if rec.Stages[i].Status != ledger.PromotionDeploying {
				return identity.Caller{}, failure.BadRelease(fmt.Sprintf("promotion_of: stage %s of promotion %s is %s, not deploying", s.ConfigName, r.ReleaseID, rec.Stages[i].Status))
			}
			want, err := d.promotedRelease(p, i, j)
			if err != nil {
				return identity.Caller{}, err
			}
			if same, err := sameRelease(want, r); err != nil || !same {
				return identity.Caller{}, failure.BadRelease(fmt.Sprintf("promotion_of: the release is not what promotion %s deploys to %s", r.ReleaseID, r.ConfigName))
			}
			return identity.Caller{ARN: rec.StartedBy, UserID: rec.StartedByID}, nil
		}
	}
	return identity.Caller{}, failure.BadRelease(fmt.Sprintf("promotion_of: promotion %s deploys no config %s", r.ReleaseID, r.ConfigName))
}

// sameRelease reports whether a and b encode the same canonically.
func sameRelease(a, b *release.Release) (bool, error) {
	x, err := release.Canonical(a)
	if err != nil {
		return false, err
	}
	y, err := release.Canonical(b)
	if err != nil {
		return false, err
	}
	return bytes.Equal(x, y), nil
}

// stageOutcomes records in stage how each target's deploy ended, from its
// outcome record (the wave's view where there is none), and returns the
// targets that did not succeed: dirty those that ended FailureDirty,
// failed the others.
func (d *Deployer) stageOutcomes(ctx context.Context, st *execution.Promotion, stage *ledger.PromotionStage) (failed, dirty []string, err error) {
	for j := range stage.Targets {
		t := &stage.Targets[j]
		t.Execution = naming.ExecutionName(st.ProjectName, t.Config, st.PromotionID)
		o, found, err := d.ledger.GetOutcome(ctx, st.ProjectName, t.Config, st.PromotionID)
		switch {
		case err != nil:
			return nil, nil, err
		case found:
			t.Outcome, t.Error = o.End, o.Error
		case j < len(st.Wave):
			t.Outcome, t.Error = cmp.Or(st.Wave[j].Status, "FAILED"), st.Wave[j].Error
		default:
			t.Outcome = "unknown"
		}
		switch t.Outcome {
		case execution.EndSuccess:
		case execution.EndFailureDirty:
			dirty = append(dirty, t.Config)
		default:
			failed = append(failed, t.Config+" ("+t.Outcome+")")
		}
	}
	return failed, dirty, nil
}
