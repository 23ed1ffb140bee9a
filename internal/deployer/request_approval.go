package deployer

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/ferryhq/ferry/internal/events"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/identity"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/pipeline"
	"github.com/ferryhq/ferry/internal/store/ledger"
)

// approvalReading is the approval of the promotion's stage as its gate
// reads it: the approver recorded, once one counted; else the approval
// stored, verified now (approval) and its verdict recorded in the stage
// (who approved, verified, or why it does not count, with when it was
// given); nil when none is stored.
func (d *Deployer) approvalReading(ctx context.Context, p *promotion, now time.Time) (*pipeline.ApprovalReading, error) {
	stage := &p.rec.Stages[p.st.Stage]
	if stage.ApprovedBy != "" {
		return &pipeline.ApprovalReading{By: stage.ApprovedBy}, nil
	}
	a, approver, why, err := d.approval(ctx, p)
	if err != nil || (a == nil && why == "") {
		return nil, err
	}
	if a != nil {
		stage.ApprovalGivenAt = a.CreatedAt
	}
	if why != "" {
		stage.ApprovalRefused = why
		return &pipeline.ApprovalReading{Refused: why}, nil
	}
	stage.ApprovedBy, stage.ApprovedByID, stage.ApprovedAt = approver.ARN, approver.UserID, now
	stage.ApprovalVerified, stage.ApprovalRefused = d.cfg.Identities != nil, ""
	d.log.Info("promotion stage approved", "project", p.st.ProjectName, "promotion_id", p.st.PromotionID,
		"stage", stage.Config, "approved_by", approver.ARN, "verified", stage.ApprovalVerified)
	return &pipeline.ApprovalReading{By: approver.ARN}, nil
}

// approval reads the approval of the promotion's stage (nil a and why ""
// for none stored) and verifies it: who approved it, or why it does not
// count. An approval counts only with a valid identity proof bound to it
// (unexpired: STS refuses a proof 15 minutes after it was signed), for
// this promotion, stage and artifact, by a principal the stage's gates let
// approve (pipeline.Gates.MayApprove; of an account the deployer accepts
// proofs from or its approvers name) and, with separate_approver, not the
// promotion's starter. Without an identity verifier (tests of single
// handlers) the name the approver gave counts, unverified.
func (d *Deployer) approval(ctx context.Context, p *promotion) (a *pipeline.Approval, approver identity.Caller, why string, err error) {
	stage := p.q.Pipeline.Stages[p.st.Stage].ConfigName
	key := naming.ApprovalKey(p.st.ProjectName, stage, p.st.PromotionID)
	raw, found, err := d.ledger.GetClientObject(ctx, key, limits.MaxStateObjectBytes)
	if err != nil || !found {
		return nil, approver, "", err
	}
	a = &pipeline.Approval{}
	if err := json.Unmarshal(raw, a); err != nil {
		return nil, approver, fmt.Sprintf("the approval at %s does not decode: %v", key, err), nil
	}
	if a.PromotionID != p.st.PromotionID || a.Stage != stage || a.Digest != p.rec.Digest {
		return a, approver, fmt.Sprintf("the approval at %s is of promotion %s, stage %s, artifact %s: not this one", key, a.PromotionID, a.Stage, pipeline.ShortDigest(a.Digest)), nil
	}
	if d.cfg.Identities == nil {
		return a, identity.Caller{ARN: cmp.Or(a.CreatedBy, "approved")}, "", nil
	}
	sum, err := a.IdentityHash()
	if err != nil {
		return a, approver, fmt.Sprintf("the approval at %s: %v", key, err), nil
	}
	gates := p.q.Pipeline.Stages[p.st.Stage].Gates
	caller, err := d.verifyCaller(ctx, a.Identity, sum, gates.ApproverAccounts()...)
	if failure.IsRetryable(err) {
		return a, approver, "", err
	}
	if err != nil {
		return a, approver, fmt.Sprintf("the approval at %s has no valid identity proof: %v", key, err), nil
	}
	if why := mayApprove(gates, caller, p.rec); why != "" {
		return a, approver, fmt.Sprintf("the approval at %s is by %s, who %s", key, caller.ARN, why), nil
	}
	return a, caller, "", nil
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
	d.announceStage(ctx, req, p, p.st.Stage, events.ApprovalWaiting, "")
	return struct{}{}, nil
}
