package deployer

import (
	"context"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/events"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/store/ledger"
)

// head is what every deploy event of st's release says, as task req
// finds the fact: its id is events.NewID of the execution, the kind and
// facts, the same on every retry of the task.
func (d *Deployer) head(st *execution.State, req execution.Request, k events.Kind, facts ...string) events.Head {
	return events.Head{
		ID:      events.NewID(req.Execution.ID, k, facts...),
		Project: st.ProjectName, Config: st.ConfigName, ReleaseID: st.ReleaseID, Version: st.Version,
		ExecutionARN: req.Execution.ID, Task: req.Task,
		Account: st.Target.AccountID, Region: st.Target.Region, At: d.now(),
	}
}

// announce puts evs on the default event bus of st's target with c, the
// target's clients (nil: connected here, acting for st's release), and
// reports whether it reached the target. Best effort: a target it
// cannot reach, or events EventBridge does not take, are logged and
// never fail or hold up the task (events.Publish).
func (d *Deployer) announce(ctx context.Context, c *cloud.Clients, st *execution.State, evs ...events.Event) bool {
	if c == nil {
		var err error
		if c, err = d.connect(ctx, st, false); err != nil {
			d.log.Warn("deploy events not put: cannot reach the target", "release_id", st.ReleaseID, "error", err.Error())
			return false
		}
	}
	if c.EventBridge != nil {
		events.Publish(ctx, c.EventBridge, d.log.With("release_id", st.ReleaseID), evs...)
	}
	return true
}

// announceStarted puts Release Started for st's release, accepted by
// Validate in the execution req names (its id is the execution's, so a
// later put is the same event), and reports whether it reached the
// target (see State.StartUnannounced). l and c are the release with its
// run-once marker and the target's clients when the caller has them
// (read moments before: not read again), else nil.
func (d *Deployer) announceStarted(ctx context.Context, st *execution.State, req execution.Request, l *loaded, c *cloud.Clients) bool {
	var ev events.Event
	if l != nil {
		by, _, _ := authorOf(l.run, l.found, l.r.CreatedBy)
		ev = d.startedBy(st, req, by)
	} else {
		ev = d.started(ctx, st, req)
	}
	return d.announce(ctx, c, st, ev)
}

// started is Release Started for st's release, as task req puts it.
func (d *Deployer) started(ctx context.Context, st *execution.State, req execution.Request) events.Event {
	by, _, _ := d.createdBy(ctx, st)
	return d.startedBy(st, req, by)
}

// startedBy is Release Started for st's release, created by by.
func (d *Deployer) startedBy(st *execution.State, req execution.Request, by string) events.Event {
	return events.Event{Kind: events.Started, Body: events.StartedDetail{
		Head: d.head(st, req, events.Started), Services: strs(st.Services), CreatedBy: by}}
}

// announceHealthy puts Release Healthy when h is the last check: every
// service at its target, no canary step to take.
func (d *Deployer) announceHealthy(ctx context.Context, c *cloud.Clients, st *execution.State, req execution.Request, h *execution.Health) {
	if h.Healthy && !h.NextStep {
		d.announce(ctx, c, st, events.Event{Kind: events.Healthy, Body: events.HealthyDetail{
			Head: d.head(st, req, events.Healthy), Services: strs(st.Services), Checks: h.Checks}})
	}
}

// announceOutcome puts the events of an outcome just recorded: Release
// Succeeded, or Release Failed after Release Halted for a halt; after
// Release Started, in the same request, while st's start is unannounced
// (an end before ValidateResources put it: State.StartUnannounced);
// with c, the target's clients (nil: connected here, see announce).
func (d *Deployer) announceOutcome(ctx context.Context, c *cloud.Clients, st *execution.State, req execution.Request, o ledger.Outcome) {
	var evs []events.Event
	if st.StartUnannounced {
		evs = append(evs, d.started(ctx, st, req))
	}
	if o.End == execution.EndSuccess {
		d.announce(ctx, c, st, append(evs, events.Event{Kind: events.Succeeded, Body: events.SucceededDetail{
			Head: d.head(st, req, events.Succeeded), Images: nonNil(st.Images)}})...)
		return
	}
	if o.Error == failure.NameHalt {
		evs = append(evs, events.Event{Kind: events.Halted, Body: events.HaltedDetail{Head: d.head(st, req, events.Halted), Cause: o.Cause}})
	}
	evs = append(evs, events.Event{Kind: events.Failed, Body: events.FailedDetail{
		Head: d.head(st, req, events.Failed, o.End), End: o.End, Error: o.Error, Cause: o.Cause}})
	d.announce(ctx, c, st, evs...)
}

// nonNil is m, or an empty map for nil: a detail's objects are never null.
func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// strs is s, or an empty slice for nil: a detail's arrays are never null.
func strs(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// announceStage puts an event of kind k (Stage Reached, Approval
// Requested, Stage Approved) about stage i of promotion p, in the
// environment of the stage's first target, as the release it deploys
// there; approvedBy names who approved.
func (d *Deployer) announceStage(ctx context.Context, req execution.Request, p *promotion, i int, k events.Kind, approvedBy string) {
	r, err := d.promotedRelease(p, i, 0)
	if err != nil {
		d.log.Warn("deploy event not put: the stage's release", "promotion_id", p.st.PromotionID, "error", err.Error())
		return
	}
	st := &execution.State{ProjectName: r.ProjectName, ConfigName: r.ConfigName, ReleaseID: r.ReleaseID, Target: d.target(r), Version: r.Version}
	stage := p.rec.Stages[i].Config
	head := d.head(st, req, k, stage)
	var body any = events.StageDetail{Head: head, PromotionID: p.st.PromotionID, Stage: stage}
	if k.Name != events.StageReached.Name {
		body = events.ApprovalDetail{Head: head, PromotionID: p.st.PromotionID, Stage: stage, ApprovedBy: approvedBy}
	}
	d.announce(ctx, nil, st, events.Event{Kind: k, Body: body})
}
