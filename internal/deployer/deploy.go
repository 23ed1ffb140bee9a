package deployer

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"

	"github.com/ferryhq/ferry/internal/capacity"
	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/fanout"
	"github.com/ferryhq/ferry/internal/fleet"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/resources"
	"github.com/ferryhq/ferry/internal/store/ledger"
	"github.com/ferryhq/ferry/internal/target"
)

// Scaling policy types a release may use.
const (
	policyCPUScaleUp   = "cpu_scale_up"
	policyCPUScaleDown = "cpu_scale_down"
)

// deploy is the Deploy task. It refuses to start when a fresh halt marker
// exists (*failure.HaltError). It re-resolves the release's resources (a
// problem is a *failure.BadReleaseError, before anything is created),
// records, in its first round, its target among its config's
// (recordTarget) and the groups it may create (ledger.PutDeploying:
// CleanUpFailure deletes them by name even when AWS does not show them
// yet; recordIntent), then makes, in the order that
// launches instances first (makeGroups), a round's creates side by side
// (tuning.MakeParallel): each service's launch template and ASG, both
// named naming.GroupName, the
// group tagged with the service's tags and the reserved ones, sized by
// package capacity from the previous ASG, with the release's load
// balancers, target groups and lifecycle hooks, all given in its one
// CreateAutoScalingGroup call (the hooks are in place before its first
// instance launches); once every group is created, suspends each one's
// AlarmNotification and AZRebalance processes, so that neither its
// scaling policies nor a rebalance terminates a new instance during the
// deploy (CleanUpSuccess resumes them after the swap); once every group's
// are suspended, puts each one's scaling policies and their CloudWatch
// alarms. The creates and suspends of a round stay within
// tuning.AutoScalingCallsPerRound (Auto Scaling's one shared bucket; a
// first round alone, the whole bucket: share.budget): the rest is made
// by the next round, after the bucket's refill (pace).
//
// Idempotent: what this release already made is found by its name and
// tags and left as it is (a name taken by anything else is a
// *failure.DeployError; a create AWS made but whose answer was lost is
// found so when retried); the launch template is created with a
// deterministic client token, so a retry gets the template it made;
// policies and alarms are upserts. Something this release made moments
// ago that AWS does not show yet is a *failure.RetryableError.
//
// A deploy AWS throttles (every failure throttling: cloud.Throttled) is
// no failure: it returns the State with Deploy's report asking for a
// wait (progress; pace when the round made something), and the state
// machine runs it again to make the rest; the release's timeout bounds it
// too (a *failure.TimeoutError).
//
// It returns the State with Deployed set, Deploy's report done, and Health holding each service's
// healthy target, desired capacity, launch count and stability window, and
// the wait before the first health check: none before the fastest boot
// the current record saw for the same images may end (readyAfter).
func (d *Deployer) deploy(ctx context.Context, req execution.Request) (any, error) {
	st, err := d.verify(ctx, req)
	if err != nil {
		return nil, err
	}
	// The halt check needs nothing of the release and its run-once
	// marker: they are read beside it (loadBeside), its refusal first;
	// so is, in the first round, the count of the deploys on their way
	// beside it (see make).
	var (
		halted   error
		underway int
	)
	l, loadErr := d.loadBeside(ctx, st, func(ctx context.Context) error {
		return allOf(ctx, func(ctx context.Context) error {
			halted = d.checkHalt(ctx, st, req)
			return halted
		}, func(ctx context.Context) error {
			if st.Deploy == nil {
				underway = d.underway(ctx, st)
			}
			return nil
		})
	})
	if halted != nil {
		return nil, halted
	}
	if err := d.checkTimeout(st, req); err != nil {
		return nil, err
	}
	if loadErr != nil {
		return nil, loadErr
	}
	round, err := d.make(ctx, st, req, l, underway)
	if err == nil && round.wait > 0 {
		st.Deploy, err = d.pace(st, round)
	} else {
		st.Deploy, err = d.progress(st, req, execution.TaskDeploy, err)
	}
	if err != nil {
		return nil, err
	}
	return st, nil
}

// pace is the report of a round of Deploy that left Auto Scaling calls
// for the next (makeGroups): a wait of the bucket's refill, not a
// throttled round's (tuning.ThrottledSteps), even when AWS throttled
// some of its calls; such a round counts as throttled all the same
// (limits.MaxThrottledSteps at most, then its throttling error).
func (d *Deployer) pace(st *execution.State, round paced) (*execution.Progress, error) {
	n := throttledRounds(st)
	if round.throttled != nil {
		if n >= limits.MaxThrottledSteps {
			return nil, round.throttled
		}
		n++
	}
	d.log.Info("deploy paced: it makes the rest after the wait", "release_id", st.ReleaseID, "wait_seconds", round.wait, "throttled", n)
	return &execution.Progress{WaitSeconds: round.wait, Throttled: n, Paced: round.throttled == nil, Turn: round.turn}, nil
}

// progress is the report of task, which runs once unless AWS throttles
// it, after a round that ended with err: done when err is nil; when
// every failure of err is throttling (cloud.Throttled) and fewer than
// limits.MaxThrottledSteps rounds of ValidateResources and Deploy
// together were, a wait (tuning.ThrottledSteps, jittered) before the task
// runs again to do the rest; otherwise err.
func (d *Deployer) progress(st *execution.State, req execution.Request, task string, err error) (*execution.Progress, error) {
	n := throttledRounds(st)
	switch {
	case err == nil:
		return &execution.Progress{Done: true, Throttled: n}, nil
	case !cloud.Throttled(err) || n >= limits.MaxThrottledSteps:
		return nil, err
	}
	p := &execution.Progress{Throttled: n + 1, WaitSeconds: throttledWait(req, n+1)}
	d.log.Warn("task throttled: it runs again after the wait", "task", task, "release_id", st.ReleaseID, "wait_seconds", p.WaitSeconds, "throttled", p.Throttled, "error", err.Error())
	return p, nil
}

// throttledRounds are the rounds of ValidateResources and Deploy AWS
// throttled so far.
func throttledRounds(st *execution.State) int {
	n := 0
	for _, p := range []*execution.Progress{st.Resources, st.Deploy} {
		if p != nil {
			n = max(n, p.Throttled)
		}
	}
	return n
}

// make makes what the release deploys (see deploy), the release and its
// run-once marker l read (and, in the first round, the deploys on their
// way beside it counted: underway), and sets st's Deployed, Previous,
// Images and first Health. It returns, when this round left groups to create or
// suspend for the next (makeGroups: Auto Scaling's one bucket paces
// them), the round paced, with no scaling policy put yet.
func (d *Deployer) make(ctx context.Context, st *execution.State, req execution.Request, l *loaded, underway int) (paced, error) {
	elapsed := int(d.now().Sub(req.Execution.StartTime) / time.Second)
	first := st.Deploy == nil
	if first && underway > 0 {
		// The first round beside deploys on their way only waits its
		// place in their share: counted beside its halt check, they
		// cost it no session and no resolution, and its wait asks the
		// account's request buckets for nothing (100 deploys starting
		// together would otherwise each resolve every resource once for
		// no use).
		wait := shareOf(underway, req.Execution.ID+"/share", elapsed).first()
		d.log.Info("deploys on their way beside it: its first round waits its place in their share", "release_id", st.ReleaseID, "underway", underway, "wait_seconds", wait)
		return paced{wait: wait}, nil
	}
	r := l.r
	c, err := d.connectAs(ctx, st, l.session(st), false)
	if err != nil {
		return paced{}, err
	}
	b, err := d.resolveBeside(ctx, st, c, r, !first)
	if err != nil {
		return paced{}, err
	}
	res, k, templates := b.res, b.underway, b.templates
	share := shareOf(k, req.Execution.ID+"/share", elapsed)
	if res.Previous, err = d.previousAnywhere(ctx, st, r, res.Previous); err != nil {
		return paced{}, err
	}
	if err := d.recordIntent(ctx, st, req, b.known); err != nil {
		return paced{}, err
	}
	st.Deployed = true
	groups := res.Groups // listed by Resolve moments ago: nothing made since
	rel := d.fleetRelease(c, st, req)
	report := map[string]execution.ServiceHealth{}
	st.Images = map[string]string{}
	var work []making
	for _, svc := range r.ServiceNames() {
		st.Images[svc] = res.Images[r.ServiceAMI(svc)]
		m, h, err := d.planService(r, st, svc, res, templates, groups)
		if err != nil {
			return paced{}, err
		}
		report[svc], work = h, append(work, m)
	}
	budget := share.budget(st)
	turn := stepTurn{now: true}
	if k > 0 {
		// A later round beside deploys on their way takes its turn, for
		// the calls it makes: known once its work is. A lone deploy's
		// rounds wait behind no turn.
		turn = d.turnAt(ctx, st, st.Deploy.Turn, 1+roundCalls(work, budget, r))
	}
	if !turn.now {
		return paced{wait: turn.wait, turn: turn.held}, nil
	}
	round, err := makeGroups(ctx, rel, work, within(budget, turn.calls, 1), share, d.log.With("release_id", st.ReleaseID))
	if err != nil || round.wait > 0 {
		return round, err
	}
	// The scaling policies and their alarms come once every group is
	// made (each with its AlarmNotification suspended): CloudWatch's
	// PutMetricAlarm quota (3 a second per account: CloudWatch service
	// quotas) is the first an account's deploys exhaust, and a round it
	// throttles then delays no launch.
	made := d.alarmsMade(ctx, c, r)
	if rest, err := d.putPoliciesWithin(ctx, rel, r, made, within(0, turn.calls, 1+round.calls)); err != nil || rest.wait > 0 {
		return rest, err
	}
	st.Previous = fleet.Others(st.ReleaseID, fleet.Summaries(groups), templates)
	d.recordedReady(ctx, st, report)
	st.Health = &execution.Health{WaitSeconds: d.nextCheck(st, req, r, 0, d.readyAfter(report, req), report, false), Services: report, Underway: k}
	return paced{}, nil
}

// recordIntent records, before Deploy creates anything, the release's
// target among its config's (recordTarget, known: the config's
// environments as the round read them) and the groups it may create
// (ledger.PutDeploying). A later round (st.Deployed: a round before it
// recorded both) writes neither again: its creates wait for no write.
func (d *Deployer) recordIntent(ctx context.Context, st *execution.State, req execution.Request, known []target.Target) error {
	if st.Deployed {
		return nil
	}
	if err := d.recordTarget(ctx, st, known); err != nil {
		return err
	}
	return d.ledger.PutDeploying(ctx, st.ProjectName, st.ConfigName, ledger.Intent{
		ReleaseID: st.ReleaseID, Execution: req.Execution.ID, Since: d.now(), Groups: groupNames(st),
	})
}

// resolvedBeside is what a round of Deploy reads beside its resolution of the
// release's resources (resolveBeside).
type resolvedBeside struct {
	res *resources.Resolved
	// underway counts the deploys on their way beside it.
	underway int
	// templates are the project-config's launch templates
	// (fleet.Templates).
	templates map[string]map[string]string
	// known are the config's environments (knownTargets), read by the
	// round that records the release's intent (recordIntent) only.
	known []target.Target
}

// resolveBeside resolves the release's resources and, side by side (a
// lone deploy waits for no listing), counts the deploys on their way
// beside it (underway; when count says so: the first round counted them
// beside its halt check), lists the project-config's launch templates
// (fleet.Templates: what this release made already is not made again)
// and, in the round that records the release's intent, reads the
// config's environments (knownTargets): its creates wait for no read
// that could have run beside the resolution.
func (d *Deployer) resolveBeside(ctx context.Context, st *execution.State, c *cloud.Clients, r *release.Release, count bool) (resolvedBeside, error) {
	var b resolvedBeside
	err := fanout.Each(ctx, 4, 4, func(ctx context.Context, i int) error {
		var err error
		switch i {
		case 0:
			b.res, err = resources.Resolve(ctx, c, r)
		case 1:
			if count {
				b.underway = d.underway(ctx, st)
			}
		case 2:
			if b.templates, err = fleet.Templates(ctx, c.EC2, ownerOf(st)); err != nil {
				err = deployErr("ec2:DescribeLaunchTemplates", err)
			}
		default:
			if !st.Deployed {
				b.known, err = d.knownTargets(ctx, st.ProjectName, st.ConfigName)
			}
		}
		return err
	})
	return b, err
}

// alarmsMade are the alarms of the release's scaling policies that exist
// already (an earlier attempt of Deploy put them), by name, in one
// DescribeAlarms call per 100: their policies are not put again. A read
// that fails leaves none known (every policy is put: an upsert).
func (d *Deployer) alarmsMade(ctx context.Context, c *cloud.Clients, r *release.Release) map[string]bool {
	var names []string
	for _, svc := range r.ServiceNames() {
		policies, err := policiesOf(r, svc)
		if err != nil {
			continue
		}
		for _, p := range policies {
			names = append(names, naming.AlarmName(naming.GroupName(r.ProjectName, r.ConfigName, svc, r.ReleaseID), p.Type))
		}
	}
	made := map[string]bool{}
	if len(names) == 0 {
		return made
	}
	alarms, err := resources.DescribeAlarms(ctx, c.CloudWatch, names)
	if err != nil {
		d.log.Warn("the release's alarms could not be read: every scaling policy is put", "release_id", r.ReleaseID, "error", err)
		return made
	}
	for _, a := range alarms {
		made[aws.ToString(a.AlarmName)] = true
	}
	return made
}

// planService is what a round makes for service svc (see deploy): its
// launch template unless AWS shows this release made it (templates), its
// group unless listed as this release's (groups: the project-config's),
// and the service's first report.
func (d *Deployer) planService(r *release.Release, st *execution.State, svc string, res *resources.Resolved,
	templates map[string]map[string]string, groups []asgtypes.AutoScalingGroup) (making, execution.ServiceHealth, error) {
	plan, err := servicePlan(r, svc, res.Previous)
	if err != nil {
		return making{}, execution.ServiceHealth{}, err
	}
	name := naming.GroupName(r.ProjectName, r.ConfigName, svc, r.ReleaseID)
	m := making{name: name, listed: madeGroup(groups, name, r.ReleaseID)}
	if !ownerOf(st).Made(templates[name], r.ReleaseID) {
		t, err := templateOf(r, st, svc, res)
		if err != nil {
			return making{}, execution.ServiceHealth{}, err
		}
		m.template = &t
	}
	report, first, err := firstStage(r, svc, plan)
	if err != nil {
		return making{}, execution.ServiceHealth{}, err
	}
	if m.listed == nil {
		g := d.groupOf(r, svc, res, first)
		m.group = &g
		m.logArgs = []any{"desired", plan.Desired, "launch", first.Launch, "healthy_target", first.Healthy, "steps", max(1, report.Steps)}
	}
	return m, report, nil
}

// putPolicies puts the scaling policies of service svc's new group and
// their alarms, but those made already (made).
func putPolicies(ctx context.Context, rel *fleet.Release, r *release.Release, svc string, made map[string]bool) error {
	policies, err := policiesOf(r, svc)
	if err != nil {
		return err
	}
	name := naming.GroupName(r.ProjectName, r.ConfigName, svc, r.ReleaseID)
	return rel.PutPolicies(ctx, name, groupTags(r, svc), policies, made)
}

// roundCalls is how many Auto Scaling calls a round of work makes at
// most within budget (makeGroups): its creates, then its suspends, then,
// when it makes every group and suspends every one, the release's
// scaling policies (putPoliciesWithin; those put already counted too).
func roundCalls(work []making, budget int, r *release.Release) int {
	creates, suspends := 0, 0
	for _, m := range work {
		if m.group != nil {
			creates++
		}
		if m.listed == nil || !fleet.DeploySuspended(*m.listed) {
			suspends++
		}
	}
	if creates+suspends > budget {
		return budget
	}
	n := creates + suspends
	for _, svc := range r.ServiceNames() {
		n += policyCalls(r, svc, nil)
	}
	return n
}

// putPoliciesWithin puts the scaling policies of r's services (putPolicies)
// that made does not show put already, a service's at a time, in the
// services' order, until the next service's would take the round over
// budget Auto Scaling calls (0: no bound; one service's at least): the
// rest are put by the next round, after the bucket refilled what these
// took (a wait of their calls over limits.AutoScalingRefill, a second at
// least), at its own turn.
func (d *Deployer) putPoliciesWithin(ctx context.Context, rel *fleet.Release, r *release.Release, made map[string]bool, budget int) (paced, error) {
	spent := 0
	for _, svc := range r.ServiceNames() {
		n := policyCalls(r, svc, made)
		if budget > 0 && spent > 0 && spent+n > budget {
			d.log.Info("scaling policies paced: the rest at the next round's turn", "release_id", r.ReleaseID, "calls", spent)
			return paced{wait: max(1, (spent+limits.AutoScalingRefill-1)/limits.AutoScalingRefill)}, nil
		}
		if err := putPolicies(ctx, rel, r, svc, made); err != nil {
			return paced{}, err
		}
		spent += n
	}
	return paced{}, nil
}

// policyCalls is how many Auto Scaling calls putting svc's scaling
// policies makes: one PutScalingPolicy a policy whose alarm made does
// not show.
func policyCalls(r *release.Release, svc string, made map[string]bool) int {
	policies, err := policiesOf(r, svc)
	if err != nil {
		return 0
	}
	name := naming.GroupName(r.ProjectName, r.ConfigName, svc, r.ReleaseID)
	n := 0
	for _, p := range policies {
		if !made[naming.AlarmName(name, p.Type)] {
			n++
		}
	}
	return n
}

// madeGroup is the group name among groups if release releaseID made
// it, else nil.
func madeGroup(groups []asgtypes.AutoScalingGroup, name, releaseID string) *asgtypes.AutoScalingGroup {
	for i, g := range groups {
		if aws.ToString(g.AutoScalingGroupName) == name && fleet.ReleaseOf(g) == releaseID {
			return &groups[i]
		}
	}
	return nil
}

// fleetRelease is what the State's release makes in its target.
func (d *Deployer) fleetRelease(c *cloud.Clients, st *execution.State, req execution.Request) *fleet.Release {
	return &fleet.Release{
		Clients: c, Owner: ownerOf(st), ID: st.ReleaseID, SHA256: st.ReleaseSHA256,
		LastAttempt: lastAttempt(req),
		Log:         d.log.With("release_id", st.ReleaseID),
	}
}

// ownerOf is the State's project-config.
func ownerOf(st *execution.State) fleet.Owner {
	return fleet.Owner{Project: st.ProjectName, Config: st.ConfigName}
}

// groupNames are the names of the groups (and launch templates) of a
// release's services.
func groupNames(st *execution.State) []string {
	names := make([]string, len(st.Services))
	for i, svc := range st.Services {
		names[i] = naming.GroupName(st.ProjectName, st.ConfigName, svc, st.ReleaseID)
	}
	return names
}

// bounds are a service's autoscaling settings (defaults applied).
func bounds(s *release.Service) capacity.Bounds {
	a := s.Autoscaling
	if a == nil {
		a = &release.Autoscaling{MinSize: release.DefaultMinSize, MaxSize: release.DefaultMinSize}
	}
	return capacity.Bounds{MinSize: a.MinSize, MaxSize: a.MaxSize, Spread: a.Spread, MaxTerms: a.MaxTerms}
}

// servicePlan is the capacity of a service's new ASG given the previous
// group of each service (resources.Previous).
func servicePlan(r *release.Release, svc string, previous map[string]asgtypes.AutoScalingGroup) (capacity.Plan, error) {
	var desired *int
	if g, ok := previous[svc]; ok && g.DesiredCapacity != nil {
		v := int(*g.DesiredCapacity)
		desired = &v
	}
	return planOf(r, svc, desired)
}

// planOf is the capacity of service svc's new ASG given its previous
// desired capacity (nil: a new service). Bounds capacity cannot use are a
// *failure.BadReleaseError.
func planOf(r *release.Release, svc string, desired *int) (capacity.Plan, error) {
	plan, err := capacity.Compute(bounds(r.Services[svc]), desired)
	if err != nil {
		return capacity.Plan{}, failure.BadRelease(fmt.Sprintf("services.%s.autoscaling: %v", svc, err))
	}
	return plan, nil
}

// groupTags are the tags of everything made for one service of a release:
// the service's own tags, then the reserved ones (which win).
func groupTags(r *release.Release, svc string) map[string]string {
	tags := map[string]string{}
	for k, v := range r.Services[svc].Tags {
		tags[k] = v
	}
	tags[naming.TagProjectName] = r.ProjectName
	tags[naming.TagConfigName] = r.ConfigName
	tags[naming.TagServiceName] = svc
	tags[naming.TagReleaseID] = r.ReleaseID
	tags[naming.TagDeployWith] = naming.DeployWithValue
	tags[naming.TagName] = naming.GroupName(r.ProjectName, r.ConfigName, svc, r.ReleaseID)
	return tags
}

// templateOf is the launch template of service svc: the release's image,
// instance type and security groups as res resolved them, its instance
// profile and volume, the user data rendered from the verified release
// (userData), and detailed monitoring when its analysis reads EC2's
// metrics in periods under five minutes.
func templateOf(r *release.Release, st *execution.State, svc string, res *resources.Resolved) (fleet.Template, error) {
	s := r.Services[svc]
	script, err := userData(r, st.Target, svc)
	if err != nil {
		return fleet.Template{}, err
	}
	t := fleet.Template{
		Name:         naming.GroupName(r.ProjectName, r.ConfigName, svc, r.ReleaseID),
		ImageID:      res.Images[r.ServiceAMI(svc)],
		InstanceType: s.InstanceType,
		UserData:     script,
		Profile:      s.Profile,
		Tags:         groupTags(r, svc),
		// EC2 publishes a sample every five minutes without it: too few
		// for an analysis in one-minute periods.
		DetailedMonitoring: r.Analysis.NeedsDetailedMonitoring(),
	}
	for _, ref := range s.SecurityGroups {
		t.SecurityGroups = append(t.SecurityGroups, res.SecurityGroups[ref])
	}
	if s.EBSVolumeSize > 0 {
		// Without a device name the volume is the image's root device, so
		// ebs_volume_size resizes the root volume rather than adding one.
		device := s.EBSDeviceName
		if device == "" {
			device = res.RootDevices[t.ImageID]
		}
		t.Volume = &fleet.Volume{Device: device, SizeGiB: s.EBSVolumeSize, Type: s.EBSVolumeType}
	}
	return t, nil
}

// groupOf is the group of service svc: its maximum size, the minimum size
// and launch count of its first stage (the whole plan without a rollout),
// its subnets and target groups as res resolved them, its classic
// load balancers and the release's lifecycle hooks.
func (d *Deployer) groupOf(r *release.Release, svc string, res *resources.Resolved, first capacity.Stage) fleet.Group {
	s := r.Services[svc]
	g := fleet.Group{
		Name:    naming.GroupName(r.ProjectName, r.ConfigName, svc, r.ReleaseID),
		MinSize: first.MinSize, MaxSize: bounds(s).MaxSize, Desired: first.Launch,
		LoadBalancers:          s.ELBs,
		HealthCheckGracePeriod: d.cfg.HealthCheckGracePeriod,
		Tags:                   groupTags(r, svc),
		Mixed:                  mixedOf(s),
	}
	for _, ref := range r.ServiceSubnets(svc) {
		g.Subnets = append(g.Subnets, res.Subnets[ref])
	}
	for _, ref := range s.TargetGroups {
		g.TargetGroups = append(g.TargetGroups, res.TargetGroups[ref])
	}
	for _, n := range slices.Sorted(maps.Keys(r.Lifecycle)) {
		if h := r.Lifecycle[n]; h != nil {
			g.Hooks = append(g.Hooks, fleet.Hook{
				Name: n, Transition: h.Transition, RoleARN: res.HookRoles[h.Role], TopicARN: res.HookTopics[h.SNS],
				HeartbeatTimeout: h.HeartbeatTimeout,
			})
		}
	}
	return g
}

// policiesOf are the scaling policies of service svc. A type ferry does
// not know is a *failure.BadReleaseError.
func policiesOf(r *release.Release, svc string) ([]fleet.Policy, error) {
	a := r.Services[svc].Autoscaling
	if a == nil {
		return nil, nil
	}
	var out []fleet.Policy
	for _, p := range a.Policies {
		if p.Type != policyCPUScaleUp && p.Type != policyCPUScaleDown {
			return nil, failure.BadRelease(fmt.Sprintf("services.%s.autoscaling.policies: unknown type %q", svc, p.Type))
		}
		out = append(out, fleet.Policy{
			Type: p.Type, Above: p.Type == policyCPUScaleUp, Threshold: p.Threshold,
			Adjustment: p.ScalingAdjustment, EvaluationPeriods: p.EvaluationPeriods, Period: p.Period, Cooldown: p.Cooldown,
		})
	}
	return out, nil
}
