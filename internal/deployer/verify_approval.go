package deployer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/identity"
	"github.com/ferryhq/ferry/internal/pipeline"
	"github.com/ferryhq/ferry/internal/store/ledger"
)

// verifyApproval answers an approval query (execution.ApprovalInput): it
// verifies the approval given (checkApproval: its identity proof, now,
// while it is valid; the approver against the stage's gates) of a stage
// that waits at its gates for one, and records it verified, once
// (ledger.VerifiedApproval, under the deployer's own prefix), with who
// approved and when. The gate counts that record later without the
// proof, once the approver has stored the same approval where the
// stage's approvers may write (naming.ApprovalKey): the deployer decides
// who the approver is, IAM who may approve. An approval that does not count, of a stage that does not wait
// for one, or of a stage approved already, is a *failure.BadReleaseError
// naming why, and nothing is written.
func (d *Deployer) verifyApproval(ctx context.Context, req execution.Request) (any, error) {
	var in execution.ApprovalInput
	if err := json.Unmarshal(req.Input, &in); err != nil {
		return nil, failure.BadRelease("approval: the query does not decode: " + err.Error())
	}
	q := in.Approval
	var a pipeline.Approval
	dec := json.NewDecoder(bytes.NewReader(q.Given))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return nil, failure.BadRelease("approval: the approval given does not decode: " + err.Error())
	}
	if q.ProjectName == "" || q.FirstConfig == "" || a.PromotionID == "" || a.Stage == "" {
		return nil, failure.BadRelease("approval: the query names no project, first config, promotion or stage")
	}
	p, err := d.givenPromotion(ctx, q.ProjectName, q.FirstConfig, &a)
	if err != nil {
		return nil, err
	}
	if why := awaitsApproval(p); why != "" {
		return nil, failure.BadRelease("approval: " + why + "; nothing written")
	}
	caller, why, err := d.checkApproval(ctx, p, &a, "the approval")
	if err != nil {
		return nil, err
	}
	if why != "" {
		return nil, failure.BadRelease("approval: " + why + "; nothing written")
	}
	sum, err := a.Hash()
	if err != nil {
		return nil, failure.BadRelease("approval: " + err.Error())
	}
	return d.recordApproval(ctx, p, &a, sum, caller)
}

// recordApproval records that the deployer verified a, the approval of
// the promotion's stage whose bytes have the hex SHA-256 sum, by caller,
// once (the same approval asked again gets the record written first).
func (d *Deployer) recordApproval(ctx context.Context, p *promotion, a *pipeline.Approval, sum string, caller identity.Caller) (ledger.VerifiedApproval, error) {
	v := ledger.VerifiedApproval{PromotionID: a.PromotionID, Stage: a.Stage, Digest: a.Digest, ApprovalSHA256: sum,
		ApprovedBy: caller.ARN, ApprovedByID: caller.UserID, ApprovedByName: a.CreatedBy,
		Verified: d.cfg.Identities != nil, GivenAt: a.CreatedAt.UTC(), VerifiedAt: d.now()}
	got, _, err := d.ledger.CreateVerifiedApproval(ctx, p.st.ProjectName, p.st.FirstConfig, v)
	if err != nil {
		return got, err
	}
	d.log.Info("promotion stage approval verified", "project", p.st.ProjectName, "promotion_id", a.PromotionID,
		"stage", a.Stage, "approved_by", got.ApprovedBy, "verified", got.Verified)
	return got, nil
}

// givenPromotion reads the promotion an approval given names: its record
// (under project and its first config), its stored request, and the
// stage the approval is of. A promotion not recorded, or a stage it does
// not have, is a *failure.BadReleaseError.
func (d *Deployer) givenPromotion(ctx context.Context, project, first string, a *pipeline.Approval) (*promotion, error) {
	rec, found, err := d.ledger.GetPromotion(ctx, project, first, a.PromotionID)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, failure.BadRelease(fmt.Sprintf("approval: no promotion %s of %s is recorded (under its first stage %s); nothing written", a.PromotionID, project, first))
	}
	q, err := d.storedRequest(ctx, project, first, a.PromotionID, rec.RequestSHA256)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(q.Pipeline.Stages, func(s *pipeline.Stage) bool { return s.ConfigName == a.Stage })
	if i < 0 || len(rec.Stages) != len(q.Pipeline.Stages) {
		return nil, failure.BadRelease(fmt.Sprintf("approval: promotion %s has no stage %q; nothing written", a.PromotionID, a.Stage))
	}
	st := &execution.Promotion{ProjectName: project, FirstConfig: first, PromotionID: a.PromotionID,
		RequestSHA256: rec.RequestSHA256, Stage: i, Stages: len(rec.Stages)}
	return &promotion{st: st, q: q, rec: rec}, nil
}

// awaitsApproval is why the promotion's stage takes no approval now (""
// when it does): the promotion ended, the stage has no approval gate, it
// is approved already, or it does not wait at its gates (not reached, or
// past them). An approval is given while its stage waits, so that the
// deployer verifies it within its proof's 15 minutes.
func awaitsApproval(p *promotion) string {
	g := p.q.Pipeline.Stages[p.st.Stage].Gates
	s := p.rec.Stages[p.st.Stage]
	switch {
	case p.rec.Status != ledger.PromotionRunning:
		return fmt.Sprintf("promotion %s is %s: nothing to approve", p.rec.PromotionID, p.rec.Status)
	case g == nil || !g.Approval:
		return fmt.Sprintf("stage %s has no approval gate (gates.approval): there is nothing to approve", s.Config)
	case s.ApprovedBy != "":
		return fmt.Sprintf("stage %s of promotion %s is approved already, by %s", s.Config, p.rec.PromotionID, s.ApprovedBy)
	case s.Status != ledger.PromotionWaiting && s.Status != ledger.PromotionApproval:
		return fmt.Sprintf("stage %s of promotion %s is %s: an approval is given while the stage waits at its gates", s.Config, p.rec.PromotionID, s.Status)
	}
	return ""
}
