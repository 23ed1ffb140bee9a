package deployer

import (
	"context"
	"errors"
	"slices"
	"time"

	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/smithy-go"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/events"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/fleet"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/naming/tags"
	"github.com/ferryhq/ferry/internal/pipeline"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/ledger"
	"github.com/ferryhq/ferry/internal/tuning"
)

// checkGate checks the gates of the promotion's stage: a halt marker of
// the promotion ends it (HaltError); else the stage opens (its wave
// starts) once nothing holds it back, waits for a person's approval once
// only that does, or waits and is checked again. The rules are the
// pipeline's (pipeline.Pipeline.Holds) over what gateReadings reads;
// the configs of the stage without the pipeline registered hold it too.
func (d *Deployer) checkGate(ctx context.Context, req execution.Request) (any, error) {
	p, err := d.promotionOf(ctx, req)
	if err != nil {
		return nil, err
	}
	st, now := p.st, d.now()
	stage := &p.rec.Stages[st.Stage]
	if err := d.endIfHalted(ctx, p, now); err != nil {
		return nil, err
	}
	held, err := d.unregistered(ctx, p.q, st.Stage, p.rec.PipelineSHA256)
	if err != nil {
		return nil, err
	}
	approvedBefore := stage.ApprovedBy
	r, err := d.gateReadings(ctx, p, now)
	if err != nil {
		return nil, err
	}
	holds := p.q.Pipeline.Holds(st.Stage, r)
	held = append(held, pipeline.Messages(holds)...)
	stage.Held, stage.ApprovalToken = held, ""
	st.Gate, st.Targets, st.Wave, st.End, st.Error = &execution.Gate{Held: held}, nil, nil, nil, nil
	switch {
	case len(held) == 0:
		stage.Status, stage.ReleasedAt = ledger.PromotionDeploying, now
		st.Gate.Open = true
		for j := range stage.Targets {
			st.Targets = append(st.Targets, j)
		}
	case len(holds) == 1 && len(held) == 1 && holds[0].Gate == pipeline.GateApproval:
		stage.Status = ledger.PromotionApproval
		st.Gate.Approval = true
	default:
		stage.Status = ledger.PromotionWaiting
		st.Gate.WaitSeconds = waitSeconds(holds)
	}
	if err := d.ledger.PutPromotion(ctx, st.FirstConfig, p.rec); err != nil {
		return nil, err
	}
	if approvedBefore == "" && stage.ApprovedBy != "" {
		d.announceStage(ctx, req, p, st.Stage, events.ApprovalReceived, stage.ApprovedBy)
	}
	if st.Gate.Open {
		d.announceStage(ctx, req, p, st.Stage, events.StageReached, "")
	}
	return st, nil
}

// recheck is how long a stage held by holds waits before its gates are
// checked again: tuning.GateRecheckSeconds, or less when a soak ends
// sooner. A soak is waited out in slices of at most the recheck, so a
// halt marker written meanwhile is read at the next check.
func recheck(holds []pipeline.Hold) time.Duration {
	wait := time.Duration(tuning.GateRecheckSeconds) * time.Second
	for _, h := range holds {
		if h.Left > 0 {
			wait = min(wait, h.Left)
		}
	}
	return wait
}

// waitSeconds is recheck in the whole seconds of the Wait state, rounded
// up: a soak with less than a second left waits a second. Rounded down it
// would wait 0 s, and Gate would check again at the same instant, the
// soak not over, for as long as the clock does not move on.
func waitSeconds(holds []pipeline.Hold) int {
	return int((recheck(holds) + time.Second - 1) / time.Second)
}

// endIfHalted ends the promotion halted, recorded so, when a halt marker
// of it is there: a *failure.HaltError.
func (d *Deployer) endIfHalted(ctx context.Context, p *promotion, now time.Time) error {
	key, err := d.promotionHalt(ctx, p)
	if err != nil || key == "" {
		return err
	}
	stage := &p.rec.Stages[p.st.Stage]
	p.rec.Status, p.rec.EndedAt, p.rec.Why = ledger.PromotionHalted, now, "halted by "+key
	stage.Status, stage.ApprovalToken = ledger.PromotionHalted, "" // Held says what held it when halted
	if err := d.ledger.PutPromotion(ctx, p.st.FirstConfig, p.rec); err != nil {
		return err
	}
	return &failure.HaltError{Reason: "the promotion's halt marker " + key}
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

// gateReadings reads what the gates of the promotion's stage are checked
// against (pipeline.Readings): the promotion's artifact; on a later stage,
// each target of the stage before as its current record says (it runs
// the artifact only while it runs the promotion's release; its swap), and
// as that target's deploy role session whether the promotion's release
// still serves there (servesStill) and its gate alarms' states (a target
// with no current record: not read); and the stage's approval, verified
// once (approval) and then as recorded.
func (d *Deployer) gateReadings(ctx context.Context, p *promotion, now time.Time) (pipeline.Readings, error) {
	r := pipeline.Readings{Now: now, Artifact: p.rec.Digest}
	i := p.st.Stage
	g := p.q.Pipeline.Stages[i].Gates
	if i > 0 {
		for _, t := range p.rec.Stages[i-1].Targets {
			tr, err := d.targetReading(ctx, p, t.Config, g)
			if err != nil {
				return r, err
			}
			r.Before = append(r.Before, tr)
		}
	}
	if g == nil || !g.Approval {
		return r, nil
	}
	a, err := d.approvalReading(ctx, p, now)
	r.Approval = a
	return r, err
}

// targetReading reads config, a target of the stage before the
// promotion's stage of gates g (see gateReadings). A failure to read
// whether the release serves is its reading (it holds the gate); a
// failure to read the alarms is the task's.
func (d *Deployer) targetReading(ctx context.Context, p *promotion, config string, g *pipeline.Gates) (pipeline.TargetReading, error) {
	tr := pipeline.TargetReading{Config: config}
	cur, found, err := d.ledger.GetCurrent(ctx, p.st.ProjectName, config)
	if err != nil || !found {
		return tr, err
	}
	tr.DeployedAt = cur.DeployedAt
	ours, alarms := cur.ReleaseID == p.st.PromotionID, g != nil && len(g.Alarms) > 0
	if ours {
		tr.Digest = p.rec.Digest
	}
	if !ours && !alarms {
		return tr, nil
	}
	r, c, err := d.currentSession(ctx, p.st.ProjectName, config, cur)
	if err != nil && alarms {
		return tr, err
	}
	if ours {
		tr.Serving = servesStill(ctx, c, r, cur.ReleaseID, err)
	}
	if !alarms {
		return tr, nil
	}
	states, err := alarmStates(ctx, c.CloudWatch, g.Alarms)
	if err != nil {
		return tr, err
	}
	tr.Alarms = map[string]string{}
	for _, a := range states {
		tr.Alarms[a.Name] = a.State
	}
	return tr, nil
}

// currentSession connects to config's target as the deploy role session
// of its current release, cur, and returns that release (nil when its
// record cannot be read: expired, the current record names the target).
func (d *Deployer) currentSession(ctx context.Context, project, config string, cur ledger.Current) (*release.Release, *cloud.Clients, error) {
	r, err := d.ledger.GetRelease(ctx, project, config, cur.ReleaseID)
	if err != nil {
		r = nil
	}
	st := &execution.State{ProjectName: project, ConfigName: config, ReleaseID: cur.ReleaseID, Target: d.currentTarget(cur, r)}
	c, err := d.connect(ctx, st, false)
	return r, c, err
}

// servesStill is whether release id, r (nil: its record not read), serves
// in its target, read with c (connectErr: the connection failed): its
// services without a group of it, and the load balancers and target
// groups it names without a healthy instance of its groups
// (servingGaps). Every failure is the reading's Unread, a hold: whether
// the stage before serves fails closed, throttled or not, and is read
// again at the gate's next check.
func servesStill(ctx context.Context, c *cloud.Clients, r *release.Release, id string, connectErr error) *pipeline.ServingReading {
	s := &pipeline.ServingReading{Release: id}
	var err error
	switch {
	case connectErr != nil:
		err = connectErr
	case r == nil:
		err = errors.New("its release record could not be read")
	default:
		s.NoGroup, s.Dark, err = servingGaps(ctx, c, r)
	}
	if err != nil {
		s.NoGroup, s.Dark, s.Unread = nil, nil, briefly(err)
	}
	return s
}

// briefly is err as a gate's reading says it, the same at every check:
// AWS's code and message when AWS refused the call ("Throttling: Rate
// exceeded"), without the request's id; else err.
func briefly(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) {
		return api.ErrorCode() + ": " + api.ErrorMessage()
	}
	return err.Error()
}

// servingGaps are release r's services without a group of it (tagged
// with it) in its target, and the load balancers and target groups it
// names in which no instance in service of its groups is healthy, as
// each says (DescribeInstanceHealth, DescribeTargetHealth): one
// DescribeAutoScalingGroups, one DescribeTargetGroups and one describe
// per load balancer and target group, as c.
func servingGaps(ctx context.Context, c *cloud.Clients, r *release.Release) (noGroup, dark []string, err error) {
	services, names := r.ServiceNames(), releaseGroups(r)
	groups, err := fleet.Describe(ctx, c.AutoScaling, names)
	if err != nil {
		return nil, nil, err
	}
	named, err := namedBalancers(ctx, c, r)
	if err != nil {
		return nil, nil, err
	}
	all := map[string]bool{}
	for _, svc := range services {
		all[svc] = true
	}
	views, err := named.read(ctx, c, all)
	if err != nil {
		return nil, nil, err
	}
	owner, mine := fleet.Owner{Project: r.ProjectName, Config: r.ConfigName}, map[string]asgtypes.AutoScalingGroup{}
	for i, svc := range services {
		if g, found := groups[names[i]]; found && owner.Made(tags.FromASG(g.Tags), r.ReleaseID) {
			mine[svc] = g
		} else {
			noGroup = append(noGroup, svc)
			delete(named, svc) // NoGroup says it
		}
	}
	return noGroup, named.unserved(mine, views), nil
}
