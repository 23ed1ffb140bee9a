package deployer

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/store/ledger"
)

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
