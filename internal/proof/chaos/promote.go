package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/ferryhq/ferry/client/submit"
	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/pipeline"
	"github.com/ferryhq/ferry/internal/proof/reliability"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/halt"
	"github.com/ferryhq/ferry/internal/store/ledger"
)

// qaConfig is the promotions' first stage: a copy of the scenario's
// config's resources (qaName), in the same account and region.
const qaConfig = "qa"

// gateAlarm is production's gate alarm, read in qa (KindAlarm flips it).
const gateAlarm = "acme-shop-qa-errors"

// giveUp is how long after the last step the operator waits for a
// promotion still running (a soak, an approval never given) before
// halting it (ferry pipeline halt): every promotion then reaches an end.
const giveUp = 2 * time.Hour

// qaName is the qa copy's name of a resource of the scenario's config.
func qaName(name string) string {
	if strings.HasPrefix(name, "acme-shop-") {
		return "acme-shop-qa-" + strings.TrimPrefix(name, "acme-shop-")
	}
	return name + "_qa"
}

// addQA adds to spec, next to the scenario's config, a copy of its roles,
// instance profiles, security groups, load balancers, target groups and
// topics for config qa (names by qaName, tags saying qa), and the gate
// alarm, OK (its metric is the world's minutes: PutMetricAlarm flips it).
func addQA(spec *sim.WorldSpec) {
	prefix := "/" + project + "/" + config + "/"
	qaPath := func(p string) string { return "/" + project + "/" + qaConfig + "/" + strings.TrimPrefix(p, prefix) }
	for i := range spec.Accounts {
		a := &spec.Accounts[i]
		for _, r := range slices.Clone(a.Roles) {
			if strings.HasPrefix(r.Path, prefix) {
				a.Roles = append(a.Roles, sim.RoleSpec{Name: qaName(r.Name), Path: qaPath(r.Path), Trust: r.Trust, TrustServices: r.TrustServices})
			}
		}
		for _, ip := range slices.Clone(a.InstanceProfiles) {
			if strings.HasPrefix(ip.Path, prefix) {
				roles := make([]string, len(ip.Roles))
				for k, r := range ip.Roles {
					roles[k] = qaName(r)
				}
				a.InstanceProfiles = append(a.InstanceProfiles, sim.InstanceProfileSpec{Name: qaName(ip.Name), Path: qaPath(ip.Path), Roles: roles})
			}
		}
		for j := range a.Regions {
			if a.Regions[j].Name == awsRegion {
				addQARegion(&a.Regions[j])
			}
		}
	}
}

// addQARegion is addQA's in one region.
func addQARegion(r *sim.RegionSpec) {
	mine := func(tags map[string]string) bool {
		return tags[naming.TagProjectName] == project && tags[naming.TagConfigName] == config
	}
	qaTags := func(tags map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range tags {
			out[k] = v
		}
		out[naming.TagConfigName] = qaConfig
		return out
	}
	for _, sg := range slices.Clone(r.SecurityGroups) {
		if mine(sg.Tags) {
			t := qaTags(sg.Tags)
			t["Name"] = qaName(sg.Name)
			r.SecurityGroups = append(r.SecurityGroups, sim.SecurityGroupSpec{ID: strings.Replace(sg.ID, "ee", "ea", 1), Name: qaName(sg.Name), VPCID: sg.VPCID, Tags: t})
		}
	}
	for _, e := range slices.Clone(r.ELBs) {
		if mine(e.Tags) {
			e.Name, e.Tags = qaName(e.Name), qaTags(e.Tags)
			r.ELBs = append(r.ELBs, e)
		}
	}
	for _, lb := range slices.Clone(r.LoadBalancers) {
		if mine(lb.Tags) {
			lb.Name, lb.Tags = qaName(lb.Name), qaTags(lb.Tags)
			r.LoadBalancers = append(r.LoadBalancers, lb)
		}
	}
	for _, tg := range slices.Clone(r.TargetGroups) {
		if mine(tg.Tags) {
			tg.Name, tg.Tags = qaName(tg.Name), qaTags(tg.Tags)
			lbs := make([]string, len(tg.LoadBalancers))
			for k, lb := range tg.LoadBalancers {
				lbs[k] = qaName(lb)
			}
			tg.LoadBalancers = lbs
			r.TargetGroups = append(r.TargetGroups, tg)
		}
	}
	for _, t := range slices.Clone(r.Topics) {
		if mine(t.Tags) {
			r.Topics = append(r.Topics, sim.TopicSpec{Name: qaName(t.Name), Tags: qaTags(t.Tags)})
		}
	}
	r.Alarms = append(r.Alarms, sim.AlarmSpec{Name: gateAlarm, AtMinutes: alarmNever,
		Tags: map[string]string{naming.TagProjectName: project, naming.TagConfigName: qaConfig}})
}

// alarmNever is the gate alarm's threshold while OK: the world's minutes
// never reach it in a run (a week: the most a world file may say).
const alarmNever = 10080

// promotion is one the harness started: its id, pipeline and execution,
// and whether the operator approved production.
type promotion struct {
	id       string
	pipeline *pipeline.Pipeline
	base     *release.Release
	arn      string
	approved bool
}

// pipelineOf is the pipeline a promote step starts: qa (base's facts
// renamed by qaName), then production (base's own), gated by a soak of
// s.D seconds, the gate alarm in qa, and an approval when s.P says so.
func pipelineOf(base *release.Release, s Step) (*pipeline.Pipeline, error) {
	qa := &pipeline.Overrides{Services: map[string]*pipeline.ServiceOverrides{}, Lifecycle: map[string]*pipeline.HookOverrides{}}
	for name, svc := range base.Services {
		qa.Services[name] = &pipeline.ServiceOverrides{SecurityGroups: mapNames(svc.SecurityGroups), ELBs: mapNames(svc.ELBs),
			TargetGroups: mapNames(svc.TargetGroups), Profile: qaName(svc.Profile)}
	}
	for name, h := range base.Lifecycle {
		qa.Lifecycle[name] = &pipeline.HookOverrides{Role: qaName(h.Role), SNS: qaName(h.SNS)}
	}
	gates := &pipeline.Gates{SoakSeconds: s.D, Alarms: []string{gateAlarm}, Approval: s.P == GateApproval}
	targets := func() []*pipeline.Target { return []*pipeline.Target{{AccountID: account, Region: awsRegion}} }
	p := &pipeline.Pipeline{ProjectName: project, Stages: []*pipeline.Stage{
		{ConfigName: qaConfig, Targets: targets(), Overrides: qa},
		{ConfigName: config, Targets: targets(), Gates: gates},
	}}
	raw, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	return pipeline.Decode(raw)
}

func mapNames(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = qaName(n)
	}
	return out
}

// promote registers the step's pipeline in qa and production and starts
// a promotion of its release (ferry pipeline register, ferry pipeline
// start). A second one while one runs is the deployer's to refuse.
func (p *player) promote(ctx context.Context, s Step) error {
	p.mu.Lock()
	cur := p.succeeded[len(p.succeeded)-1]
	p.mu.Unlock()
	base := p.variant(s.R, cur)
	base.ConfigName, base.Region, base.MoveFrom, base.Remove = "", "", nil, nil
	pl, err := pipelineOf(base, s)
	if err != nil {
		return err
	}
	raw, err := json.Marshal(pl)
	if err != nil {
		return err
	}
	for _, cfg := range []string{qaConfig, config} {
		if _, err := p.reg.S3().PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(p.reg.Bucket()),
			Key: aws.String(naming.PipelineKey(project, cfg)), Body: bytes.NewReader(raw)}); err != nil {
			return err
		}
	}
	pr, err := submit.PreparePromotion(ctx, p.reg.Signer(), pl, base, filepath.Join(p.root, reliability.ReferenceNext), p.clk.Now(), by, p.releaseID())
	if err != nil {
		return err
	}
	d := submit.Deployer{Bucket: p.reg.Bucket(), StateMachineARN: p.reg.StateMachineARN(), S3: p.reg.S3(), SFN: p.reg.SFN()}
	if err := d.UploadPromotion(ctx, pr); err != nil {
		return err
	}
	promo := &promotion{id: pr.Request.PromotionID, pipeline: pl, base: pr.Request.Release}
	p.mu.Lock()
	p.promos = append(p.promos, promo)
	p.mu.Unlock()
	arn, err := d.StartPromotion(ctx, pr)
	if err != nil {
		return err
	}
	p.mu.Lock()
	promo.arn = arn
	p.arns = append(p.arns, arn)
	p.mu.Unlock()
	return nil
}

// runningPromotions are the promotions the harness started whose
// executions run, newest first.
func (p *player) runningPromotions() []*promotion {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*promotion
	for _, promo := range slices.Backward(p.promos) {
		if promo.arn == "" {
			continue
		}
		if x, err := p.reg.Execution(promo.arn); err == nil && x.Describe().Status == asl.StatusRunning {
			out = append(out, promo)
		}
	}
	return out
}

// runningPromotion is the newest promotion running (nil: none), the one
// ferry pipeline approve and halt find.
func (p *player) runningPromotion() *promotion {
	if running := p.runningPromotions(); len(running) > 0 {
		return running[0]
	}
	return nil
}

// approve approves production for the running promotion as ferry
// pipeline approve does: an approval proved as the operator, then the
// wait's task token woken; refused (skipped) as approve refuses it.
func (p *player) approve(ctx context.Context) error {
	promo := p.runningPromotion()
	if promo == nil || !promo.pipeline.Stages[1].Gates.Approval {
		return nil
	}
	rec, found, err := ledger.New(p.reg.S3(), p.reg.Bucket()).GetPromotion(ctx, project, qaConfig, promo.id)
	if err != nil || !found || rec.Status != ledger.PromotionRunning || len(rec.Stages) < 2 {
		return err
	}
	st := rec.Stages[1]
	if st.ApprovedBy != "" || (st.Status != ledger.PromotionWaiting && st.Status != ledger.PromotionApproval) {
		return nil
	}
	a := pipeline.Approval{PromotionID: promo.id, Stage: config, Digest: rec.Digest, CreatedAt: p.clk.Now().UTC(), CreatedBy: by}
	sum, err := a.IdentityHash()
	if err != nil {
		return err
	}
	if a.Identity, err = p.reg.Signer().Prove(ctx, sum); err != nil {
		return err
	}
	body, err := json.Marshal(a)
	if err != nil {
		return err
	}
	if _, err := p.reg.S3().PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(p.reg.Bucket()),
		Key: aws.String(naming.ApprovalKey(project, config, promo.id)), Body: bytes.NewReader(body)}); err != nil {
		return err
	}
	p.mu.Lock()
	promo.approved = true
	p.mu.Unlock()
	if st.ApprovalToken != "" {
		_, _ = p.reg.SFN().SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(st.ApprovalToken), Output: aws.String("{}")})
	}
	return nil
}

// haltPromotion halts the running promotion as ferry pipeline halt does:
// its halt marker, halt markers of the stage deploying now, and a failure
// sent to an approval's wait.
func (p *player) haltPromotion(ctx context.Context, promo *promotion) error {
	if promo == nil {
		return nil
	}
	rec, found, err := ledger.New(p.reg.S3(), p.reg.Bucket()).GetPromotion(ctx, project, qaConfig, promo.id)
	if err != nil || !found || rec.Status != ledger.PromotionRunning {
		return err
	}
	m := halt.Marker{By: by, Reason: "chaos", At: p.clk.Now()}
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if _, err := p.reg.S3().PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(p.reg.Bucket()),
		Key: aws.String(naming.PromotionHaltKey(project, qaConfig, promo.id)), Body: bytes.NewReader(body)}); err != nil {
		return err
	}
	for _, s := range rec.Stages {
		switch {
		case s.Status == ledger.PromotionDeploying:
			for _, t := range s.Targets {
				if err := halt.New(p.reg.S3(), p.reg.Bucket()).Put(ctx, project, t.Config, m); err != nil {
					return err
				}
			}
		case s.Status == ledger.PromotionApproval && s.ApprovalToken != "":
			_, _ = p.reg.SFN().SendTaskFailure(ctx, &sfn.SendTaskFailureInput{TaskToken: aws.String(s.ApprovalToken),
				Error: aws.String("ferry.Halted"), Cause: aws.String("ferry pipeline halt by " + by)})
		}
	}
	return nil
}

// flipAlarm puts the gate alarm in ALARM for d, as the world's owner
// (PutMetricAlarm on its metric, the world's minutes: a threshold of 0
// breaches at its next evaluation, alarmNever no longer does).
func (p *player) flipAlarm(ctx context.Context, d time.Duration) error {
	if !p.sc.promotes() {
		return nil
	}
	if err := p.putAlarm(ctx, 0); err != nil {
		return err
	}
	p.mu.Lock()
	p.events++
	p.alarmOff = p.clk.Now().Add(d)
	p.mu.Unlock()
	return nil
}

// putAlarm sets the gate alarm's threshold as the world's owner
// (PutMetricAlarm on its metric, the world's minutes: 0 breaches at its
// next evaluation, alarmNever never does).
func (p *player) putAlarm(ctx context.Context, threshold float64) error {
	_, err := p.reg.World().Clients(account, awsRegion).CloudWatch.PutMetricAlarm(ctx, &cloudwatch.PutMetricAlarmInput{
		AlarmName: aws.String(gateAlarm), Namespace: aws.String("ferry/sim"), MetricName: aws.String("WorldMinutes"),
		Statistic: cwtypes.StatisticMaximum, Period: aws.Int32(10), EvaluationPeriods: aws.Int32(1),
		Threshold: aws.Float64(threshold), ComparisonOperator: cwtypes.ComparisonOperatorGreaterThanOrEqualToThreshold,
		Tags: []cwtypes.Tag{{Key: aws.String(naming.TagProjectName), Value: aws.String(project)}, {Key: aws.String(naming.TagConfigName), Value: aws.String(qaConfig)}},
	})
	return err
}

// passTo runs virtual time on to due, putting the gate alarm back to OK
// on the way when a KindAlarm's time is up.
func (p *player) passTo(ctx context.Context, due time.Time) error {
	p.mu.Lock()
	off := p.alarmOff
	p.mu.Unlock()
	if !off.IsZero() && !off.After(due) {
		if d := off.Sub(p.clk.Now()); d > 0 {
			if err := p.reg.Pass(ctx, d); err != nil {
				return err
			}
		}
		if err := p.putAlarm(ctx, alarmNever); err != nil {
			return err
		}
		p.mu.Lock()
		p.alarmOff = time.Time{}
		p.mu.Unlock()
	}
	if d := due.Sub(p.clk.Now()); d > 0 {
		return p.reg.Pass(ctx, d)
	}
	return nil
}

// endPromotions, after the last step, gives the running promotions
// giveUp to end (a soak, the gate alarm back to OK), then halts each
// still running as the operator would (one may wait for ever: a pipeline
// registered again since it started holds its gate): every promotion
// reaches an end.
func (p *player) endPromotions(ctx context.Context) error {
	if !p.sc.promotes() {
		return nil
	}
	deadline := p.clk.Now().Add(giveUp)
	for p.runningPromotion() != nil && p.clk.Now().Before(deadline) {
		if err := p.passTo(ctx, p.clk.Now().Add(5*time.Minute)); err != nil {
			return err
		}
	}
	for _, promo := range p.runningPromotions() {
		if err := p.haltPromotion(ctx, promo); err != nil {
			return err
		}
	}
	return nil
}

// stageStarted is told that execution name started: when it is the
// deploy of a stage of a promotion the harness started (the promotion's
// id, naming.ExecutionName), it becomes a release the checker follows,
// and the promotion predicate is judged on the world as it starts.
func (p *player) stageStarted(name, arn string, at time.Time) {
	p.mu.Lock()
	var promo *promotion
	stage := -1
	for _, pr := range p.promos {
		for i, s := range pr.pipeline.Stages {
			if naming.ExecutionName(project, s.ConfigName, pr.id) == name {
				promo, stage = pr, i
			}
		}
	}
	approved := promo != nil && promo.approved
	p.mu.Unlock()
	if promo == nil {
		return
	}
	rel, err := promo.pipeline.Release(promo.base, stage, 0)
	if err != nil {
		p.chk.Add(Violation{Pred: PredPromotion, At: at, What: "the promotion's stage release does not derive: " + err.Error()})
		return
	}
	rel.ReleaseID, rel.ConfigName = promo.id, promo.pipeline.Stages[stage].ConfigName
	snap := p.reg.World().Snapshot()
	served, err := servedBy(rel, snap, p.chk.ServingIn(rel.ConfigName))
	if err != nil {
		p.chk.Add(Violation{Pred: PredPromotion, At: at, What: err.Error()})
		return
	}
	p.chk.StartedIn(rel.ConfigName, name, rel.ReleaseID, served)
	p.chk.Window(name, windowOf(rel))
	p.mu.Lock()
	p.subs[name] = rel
	p.arns = append(p.arns, arn)
	p.mu.Unlock()
	if stage > 0 {
		before, err := promo.pipeline.Release(promo.base, stage-1, 0)
		if err != nil {
			return
		}
		p.chk.Add(CheckStage(at, snap, promo.id, before, promo.pipeline.Stages[stage], approved)...)
	}
}

// CheckStage is the promotion predicate at the instant a promotion's
// deploy of stage starts, judged on the world (snap) alone: the stage
// before (its release before, as the pipeline derives it) serves the
// promotion's release (id): each of its services has a group tagged with
// id, with a healthy instance in every load balancer and target group the
// service names; no gate alarm of stage is in ALARM or missing in the
// stage before's region; and a required approval was given (approved:
// the operator approved it before).
func CheckStage(at time.Time, snap sim.Snapshot, id string, before *release.Release, stage *pipeline.Stage, approved bool) []Violation {
	var out []Violation
	for _, why := range append(unserved(snap, id, before), ungated(snap, regionOf(before), stage.Gates, approved)...) {
		out = append(out, Violation{Pred: PredPromotion, At: at, What: "stage " + stage.ConfigName + " deployed while " + why})
	}
	return out
}

// unserved says how the stage before (its release, before) does not
// serve release id in snap: a service without a group of id, or one of
// its load balancers and target groups without a healthy instance of
// them.
func unserved(snap sim.Snapshot, id string, before *release.Release) []string {
	var out []string
	for _, name := range before.ServiceNames() {
		svc := before.Services[name]
		var mine []sim.GroupSnapshot
		for _, a := range snap.Accounts {
			for _, g := range a.Groups {
				if ours(g.Tags, before.ProjectName, before.ConfigName) && g.Status == "" && g.Tags[naming.TagReleaseID] == id && g.Tags[naming.TagServiceName] == name {
					mine = append(mine, g)
				}
			}
		}
		if len(mine) == 0 {
			out = append(out, fmt.Sprintf("%s's service %s has no group of release %s", before.ConfigName, name, id))
			continue
		}
		for _, lb := range append(slices.Clone(svc.ELBs), svc.TargetGroups...) {
			if !slices.ContainsFunc(mine, func(g sim.GroupSnapshot) bool { return servesIn(g, lb) }) {
				out = append(out, fmt.Sprintf("%s's %s has no healthy instance of release %s", before.ConfigName, lb, id))
			}
		}
	}
	return out
}

// ungated says which of gates g did not hold in snap: a gate alarm in
// ALARM or missing in region, an approval not given (approved).
func ungated(snap sim.Snapshot, region string, g *pipeline.Gates, approved bool) []string {
	if g == nil {
		return nil
	}
	var out []string
	for _, name := range g.Alarms {
		state := "missing"
		for _, a := range snap.Accounts {
			for _, al := range a.Alarms {
				if al.Name == name && a.Region == region {
					state = al.State
				}
			}
		}
		if state == "ALARM" || state == "missing" {
			out = append(out, fmt.Sprintf("gate alarm %s is %s", name, state))
		}
	}
	if g.Approval && !approved {
		out = append(out, "its approval was not given")
	}
	return out
}
