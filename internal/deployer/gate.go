package deployer

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/pipeline"
	"github.com/ferryhq/ferry/internal/store/ledger"
	"github.com/ferryhq/ferry/internal/tuning"
)

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
