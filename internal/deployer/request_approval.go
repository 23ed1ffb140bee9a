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
// stored where approvers write it (naming.ApprovalKey): when the deployer
// verified it as it was given (VerifyApproval, a record of its sum), it
// counts as verified then (countVerified), without its proof, expired
// since; else it is verified now (approval). Its verdict is recorded in
// the stage (who approved, verified, or why it does not count, with when
// it was given). nil when none is stored.
func (d *Deployer) approvalReading(ctx context.Context, p *promotion, now time.Time) (*pipeline.ApprovalReading, error) {
	stage := &p.rec.Stages[p.st.Stage]
	if stage.ApprovedBy != "" {
		return &pipeline.ApprovalReading{By: stage.ApprovedBy}, nil
	}
	key := naming.ApprovalKey(p.st.ProjectName, stage.Config, p.st.PromotionID)
	raw, found, err := d.ledger.GetClientObject(ctx, key, limits.MaxStateObjectBytes)
	if err != nil || !found {
		return nil, err
	}
	a, sum, why := storedApproval(key, raw)
	var approver identity.Caller
	if a != nil {
		v, verified, err := d.ledger.GetVerifiedApproval(ctx, p.st.ProjectName, p.st.FirstConfig, p.st.PromotionID, stage.Config, sum)
		switch {
		case err != nil:
			return nil, err
		case verified:
			return countVerified(p, v), nil
		}
		if approver, why, err = d.checkApproval(ctx, p, a, "the approval at "+key); err != nil {
			return nil, err
		}
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

// storedApproval decodes raw, the approval of the promotion's stage
// stored at key; why is why it does not count when it does not decode.
func storedApproval(key string, raw []byte) (a *pipeline.Approval, sum, why string) {
	a = &pipeline.Approval{}
	if err := json.Unmarshal(raw, a); err != nil {
		return nil, "", fmt.Sprintf("the approval at %s does not decode: %v", key, err)
	}
	sum, err := a.Hash()
	if err != nil {
		return nil, "", fmt.Sprintf("the approval at %s: %v", key, err)
	}
	return a, sum, ""
}

// checkApproval verifies a, an approval of the promotion's stage (what
// names it in messages), and returns who approved it, or why it does not
// count. An approval counts only with a valid identity proof bound to it
// (unexpired: STS refuses a proof 15 minutes after it was signed), for
// this promotion, stage and artifact, by a principal the stage's gates let
// approve (pipeline.Gates.MayApprove; of an account the deployer accepts
// proofs from or its approvers name) and, with separate_approver, not the
// promotion's starter. Without an identity verifier (tests of single
// handlers) the name the approver gave counts, unverified. Errors are
// transient failures to ask STS.
func (d *Deployer) checkApproval(ctx context.Context, p *promotion, a *pipeline.Approval, what string) (identity.Caller, string, error) {
	stage := p.q.Pipeline.Stages[p.st.Stage].ConfigName
	if a.PromotionID != p.st.PromotionID || a.Stage != stage || a.Digest != p.rec.Digest {
		return identity.Caller{}, fmt.Sprintf("%s is of promotion %s, stage %s, artifact %s: not this one", what, a.PromotionID, a.Stage, pipeline.ShortDigest(a.Digest)), nil
	}
	if d.cfg.Identities == nil {
		return identity.Caller{ARN: cmp.Or(a.CreatedBy, "approved")}, "", nil
	}
	sum, err := a.IdentityHash()
	if err != nil {
		return identity.Caller{}, fmt.Sprintf("%s: %v", what, err), nil
	}
	gates := p.q.Pipeline.Stages[p.st.Stage].Gates
	caller, err := d.verifyCaller(ctx, a.Identity, sum, gates.ApproverAccounts()...)
	if failure.IsRetryable(err) {
		return identity.Caller{}, "", err
	}
	if err != nil {
		return identity.Caller{}, fmt.Sprintf("%s has no valid identity proof: %v", what, err), nil
	}
	if why := mayApprove(gates, caller, p.rec); why != "" {
		return identity.Caller{}, fmt.Sprintf("%s is by %s, who %s", what, caller.ARN, why), nil
	}
	return caller, "", nil
}

// countVerified is the verified approval v of the promotion's stage as
// the gate counts it, recorded in the stage: it counts for the promotion,
// stage and artifact it names, by an approver the stage's gates still let
// approve; its proof, checked when it was given, is not presented again.
func countVerified(p *promotion, v ledger.VerifiedApproval) *pipeline.ApprovalReading {
	stage := &p.rec.Stages[p.st.Stage]
	gates := p.q.Pipeline.Stages[p.st.Stage].Gates
	stage.ApprovalGivenAt = v.GivenAt
	why := ""
	switch {
	case v.PromotionID != p.st.PromotionID || v.Stage != stage.Config || v.Digest != p.rec.Digest:
		why = fmt.Sprintf("the verified approval is of promotion %s, stage %s, artifact %s: not this one", v.PromotionID, v.Stage, pipeline.ShortDigest(v.Digest))
	case v.Verified:
		if w := mayApprove(gates, identity.Caller{ARN: v.ApprovedBy, UserID: v.ApprovedByID}, p.rec); w != "" {
			why = "the verified approval is by " + v.ApprovedBy + ", who " + w
		}
	}
	if why != "" {
		stage.ApprovalRefused = why
		return &pipeline.ApprovalReading{Refused: why}
	}
	stage.ApprovedBy, stage.ApprovedByID, stage.ApprovedAt = v.ApprovedBy, v.ApprovedByID, v.VerifiedAt
	stage.ApprovalVerified, stage.ApprovalRefused = v.Verified, ""
	return &pipeline.ApprovalReading{By: v.ApprovedBy}
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
