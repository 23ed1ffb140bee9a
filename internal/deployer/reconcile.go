package deployer

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/ferryhq/ferry/internal/events"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/ledger"
	"github.com/ferryhq/ferry/internal/tuning"
)

// Starter starts executions of the deployer's state machine
// (*sfn.Client): the heals a reconcile pass starts.
type Starter interface {
	StartExecution(ctx context.Context, in *sfn.StartExecutionInput, optFns ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error)
}

var _ Starter = (*sfn.Client)(nil)

// Reconciler is the name a heal release gives as its created_by: the
// deployer's own reconcile pass asked for it.
const Reconciler = "ferry-reconciler"

// reconcile is the Reconcile task: one page of a reconcile pass (the
// state machine loops over pages until the pass is done). For each
// project-config of the page, in ProjectConfigs' order after the last
// one checked:
//
//  1. Drift, as the Drift task finds and records it (checkDrift).
//
//  2. For a current release that opted in (reconcile "heal") and a fleet
//     gone or unhealthy past the threshold (a group seen missing for
//     tuning.HealAfter, an instance unhealthy for longer than
//     tuning.DriftUnhealthyAfter): unless a
//     deploy holds the lock, or the last heal of the same difference is
//     younger than its retry interval (tuning.HealRetry doubled per heal
//     in a row, at most tuning.MaxHealRetry), a heal: the current
//     release's content as a new release (heal_of naming it, created_by
//     Reconciler), uploaded and started through the deploy path, with
//     its heal record written before (naming.HealKey). The heals in a
//     row are those of one difference (a drift kind of one service,
//     healDifference), whether or not the last heal made the fleet well
//     for a while (a group deleted again after every heal is healed
//     less and less often); another difference starts a new row
//     (healRow).
//
//  3. The assets of the deployer bucket no recent release names, older
//     than a day, deleted (collectAssets).
//
// A project-config whose check fails is counted and named in the pass's
// report, and the pass goes on: one config never keeps the others from
// being checked. The pass itself changes nothing in AWS.
func (d *Deployer) reconcile(ctx context.Context, req execution.Request) (any, error) {
	var in execution.ReconcileInput
	if err := json.Unmarshal(req.Input, &in); err != nil {
		return nil, &failure.InternalError{Msg: fmt.Sprintf("task %s: input is not a reconcile pass: %v", req.Task, err)}
	}
	if err := d.confirmReconcile(ctx, req); err != nil {
		return nil, err
	}
	p := in.Reconcile
	pcs, err := d.ledger.ProjectConfigs(ctx)
	if err != nil {
		return nil, err
	}
	start := 0
	if p.After != "" {
		start = len(pcs)
		for i, pc := range pcs {
			if pc.Project+" "+pc.Config > p.After {
				start = i
				break
			}
		}
	}
	end := min(start+limits.ReconcilePage, len(pcs))
	for _, pc := range pcs[start:end] {
		if err := d.reconcileOne(ctx, req, pc, &p); err != nil {
			p.Failed++
			if len(p.Errors) < limits.MaxReconcileReport {
				p.Errors = append(p.Errors, pc.Project+" "+pc.Config+": "+err.Error())
			}
			d.log.Warn("reconcile: a project-config could not be reconciled", "project", pc.Project, "config", pc.Config, "error", err.Error())
		}
		p.After = pc.Project + " " + pc.Config
	}
	p.Done, p.WaitSeconds = end >= len(pcs), 0
	return execution.ReconcileInput{Reconcile: p}, nil
}

// confirmReconcile checks req runs for a RUNNING execution of the
// deployer's state machine whose input is a reconcile pass (its pages
// carry the pass on, so only the kind of input is compared).
func (d *Deployer) confirmReconcile(ctx context.Context, req execution.Request) error {
	input, err := d.runningInput(ctx, req)
	if err != nil || d.cfg.Executions == nil {
		return err
	}
	var in map[string]json.RawMessage
	if json.Unmarshal(input, &in) != nil || in["reconcile_pass"] == nil {
		return refuseRequest(req, "its input is not a reconcile pass")
	}
	return nil
}

// reconcileOne checks one project-config and heals it when it opted in
// (see reconcile).
func (d *Deployer) reconcileOne(ctx context.Context, req execution.Request, pc ledger.ProjectConfig, p *execution.Reconcile) error {
	q := execution.DriftQuery{ProjectName: pc.Project, ConfigName: pc.Config}
	drift, r, err := d.checkDrift(ctx, req, q)
	if err != nil {
		return err
	}
	p.Checked++
	if len(drift.Drifts) > 0 {
		p.Drifted++
	}
	collected, err := d.collectAssets(ctx, pc)
	p.Collected += collected
	if err != nil {
		return err
	}
	if r == nil || r.Reconcile != release.ReconcileHeal {
		return nil
	}
	return d.heal(ctx, req, pc, r, drift, p)
}

// heal starts a heal of the current release r of pc when its drift calls
// for one and its heal record lets it (see reconcile), and counts it in p.
func (d *Deployer) heal(ctx context.Context, req execution.Request, pc ledger.ProjectConfig, r *release.Release, drift *execution.Drift, p *execution.Reconcile) error {
	rec, found, err := d.ledger.GetHeal(ctx, pc.Project, pc.Config)
	if err != nil {
		return err
	}
	now := d.now()
	it, ill := healWhy(drift, now)
	if !ill {
		if found && rec.InARow > 0 && rec.WellAt == nil {
			rec.WellAt = &now // well again; the row goes on if the same difference comes back
			return d.ledger.PutHeal(ctx, pc.Project, pc.Config, rec)
		}
		return nil
	}
	if it == nil {
		return nil // a group missing, but not long enough to tell
	}
	rec = healRow(rec, found, drift.Deployed, healDifference(*it), now)
	if rec.InARow > 0 && now.Before(rec.LastAt.Add(healRetry(rec.InARow))) {
		return nil
	}
	if _, held, err := d.locks.Get(ctx, pc.Project, pc.Config); err != nil || held {
		return err // a deploy runs (perhaps the last heal): leave it be
	}
	// What is healed is the content Validate accepted, never release.json
	// as it is now (the client's prefix).
	if r, _, err = d.ledger.VerifiedRelease(ctx, pc.Project, pc.Config, r.ReleaseID); err != nil {
		return err
	}
	heal, err := d.startHeal(ctx, r, &rec, it.Group+": "+it.What, now)
	if err != nil {
		return err
	}
	if len(p.Healed) < limits.MaxReconcileReport {
		p.Healed = append(p.Healed, heal)
	}
	st := &execution.State{ProjectName: pc.Project, ConfigName: pc.Config, ReleaseID: heal.ReleaseID, Target: drift.Target, Version: r.Version}
	d.announce(ctx, nil, st, events.Event{Kind: events.Healed, Body: events.HealDetail{
		Head: d.head(st, req, events.Healed, heal.ReleaseID), HealExecution: heal.Execution, Reason: heal.Why}})
	return nil
}

// healRow is the heal record rec (found: one was written) as the next
// heal of difference diff in deployed, the release deployed now, counts
// it: the same row when the last heal healed diff too, in deployed or in
// the release deployed heals (that heal made it well, and diff came
// back), less than tuning.HealRowEnds ago; else a new row, its
// first heal waiting for nothing.
func healRow(rec ledger.HealRecord, found bool, deployed, diff string, now time.Time) ledger.HealRecord {
	same := found && rec.InARow > 0 && rec.Difference == diff &&
		(rec.Of == deployed || rec.LastHeal == deployed) && now.Sub(rec.LastAt) < tuning.HealRowEnds
	if same {
		return rec
	}
	return ledger.HealRecord{Of: deployed, Difference: diff}
}

// healDifference names the difference a drift item is for the heals in a
// row: its kind and its service (a group's name changes with every heal;
// its service does not), or its group when it has no service.
func healDifference(it execution.DriftItem) string {
	return it.Kind + " " + cmp.Or(it.Service, it.Group)
}

// healWhy is the drift that calls for a heal at now: the first group
// seen missing for tuning.HealAfter, or instance unhealthy past the
// threshold (settling ones are not drift); nil when there is none. ill
// says whether the fleet has any such drift, however young: a fleet
// without is well again.
func healWhy(d *execution.Drift, now time.Time) (it *execution.DriftItem, ill bool) {
	for i := range d.Drifts {
		switch d.Drifts[i].Kind {
		case execution.DriftGroupMissing:
			ill = true
			if now.Sub(d.Drifts[i].Since) >= tuning.HealAfter {
				return &d.Drifts[i], true
			}
		case execution.DriftUnhealthy:
			return &d.Drifts[i], true
		}
	}
	return nil, ill
}

// healRetry is how long after a heal the next may start when it was the
// n-th in a row: tuning.HealRetry doubled n-1 times, at most
// tuning.MaxHealRetry.
func healRetry(n int) time.Duration {
	wait := tuning.HealRetry
	for i := 1; i < n && wait < tuning.MaxHealRetry; i++ {
		wait *= 2
	}
	return min(wait, tuning.MaxHealRetry)
}

// startHeal deploys the content of the current release r again: a new
// release (heal_of naming r, created_by Reconciler, no identity proof),
// its heal record rec updated and written first, then the release
// uploaded and its execution started as a client does.
func (d *Deployer) startHeal(ctx context.Context, r *release.Release, rec *ledger.HealRecord, why string, now time.Time) (execution.Heal, error) {
	if d.cfg.Starts == nil {
		return execution.Heal{}, &failure.DeployError{Op: "heal " + r.ProjectName + " " + r.ConfigName, Err: fmt.Errorf("the deployer cannot start executions")}
	}
	h := r.Clone()
	h.ReleaseID = now.UTC().Format("20060102T150405Z") + "-heal"
	h.CreatedAt, h.CreatedBy, h.Identity, h.RollbackOf, h.HealOf = now.UTC().Truncate(time.Millisecond), Reconciler, nil, "", r.ReleaseID
	h.PromotionOf = "" // a heal is the reconciler's release, not the promotion's
	raw, err := release.Canonical(h)
	if err != nil {
		return execution.Heal{}, err
	}
	rec.Of, rec.InARow, rec.LastAt, rec.LastHeal, rec.WellAt = r.ReleaseID, rec.InARow+1, now, h.ReleaseID, nil
	if err := d.ledger.PutHeal(ctx, r.ProjectName, r.ConfigName, *rec); err != nil {
		return execution.Heal{}, err
	}
	if err := d.ledger.PutRelease(ctx, r.ProjectName, r.ConfigName, h.ReleaseID, raw); err != nil {
		return execution.Heal{}, err
	}
	name := naming.ExecutionName(r.ProjectName, r.ConfigName, h.ReleaseID)
	out, err := d.cfg.Starts.StartExecution(ctx, &sfn.StartExecutionInput{
		StateMachineArn: aws.String(d.cfg.StateMachineARN), Name: aws.String(name), Input: aws.String(string(raw)),
	})
	if err != nil {
		return execution.Heal{}, &failure.DeployError{Op: "start the heal " + name, Err: err}
	}
	d.log.Info("reconcile: heal started", "project", r.ProjectName, "config", r.ConfigName, "of", r.ReleaseID, "release_id", h.ReleaseID, "why", why)
	return execution.Heal{ProjectName: r.ProjectName, ConfigName: r.ConfigName, Of: r.ReleaseID, ReleaseID: h.ReleaseID,
		Execution: aws.ToString(out.ExecutionArn), Why: why}, nil
}

// verifyHeal accepts a heal release (heal_of set) without an identity
// proof only when the deployer started it and it deploys again exactly
// what is deployed:
//
//   - the deployer's own heal record (naming.HealKey, under _state/, which
//     only the deployer writes) names it as the last heal of the release
//     it heals: a reconcile pass writes that record before it starts the
//     heal's execution, so nobody else can start a heal the deployer did
//     not decide on (Step Functions does not say who started an
//     execution: DescribeExecution has no caller);
//   - created_by is Reconciler and heal_of names the current release;
//   - the heal, with its own fields (release_id, created_at, created_by,
//     the identity proof, rollback_of, heal_of, promotion_of) taken back
//     from the release it heals, hashes to the current record's
//     ReleaseSHA256: the content Validate accepted, never the mutable
//     release.json alone.
//
// Anything else is a *failure.BadReleaseError.
func (d *Deployer) verifyHeal(ctx context.Context, r *release.Release) error {
	rec, found, err := d.ledger.GetHeal(ctx, r.ProjectName, r.ConfigName)
	if err != nil {
		return err
	}
	if !found || rec.LastHeal != r.ReleaseID || rec.Of != r.HealOf || r.CreatedBy != Reconciler {
		return failure.BadRelease(fmt.Sprintf("heal_of: release %s is not a heal the deployer's reconcile pass started (its heal record names %q of %q)", r.ReleaseID, rec.LastHeal, rec.Of))
	}
	cur, found, err := d.ledger.GetCurrent(ctx, r.ProjectName, r.ConfigName)
	if err != nil {
		return err
	}
	if !found || cur.ReleaseID != r.HealOf {
		return failure.BadRelease(fmt.Sprintf("heal_of: release %s is not what is deployed to %s %s", r.HealOf, r.ProjectName, r.ConfigName))
	}
	of, err := d.ledger.GetRelease(ctx, r.ProjectName, r.ConfigName, r.HealOf)
	if err != nil {
		return err
	}
	got, err := release.Hash(release.AsOwn(r, of))
	if err != nil {
		return failure.BadRelease(fmt.Sprintf("release: %v", err))
	}
	if got != cur.ReleaseSHA256 {
		return failure.BadRelease(fmt.Sprintf("heal_of: the heal is not the content of release %s as deployed: it hashes to %s, the current record's release_sha256 is %s", r.HealOf, got, cur.ReleaseSHA256))
	}
	return nil
}
