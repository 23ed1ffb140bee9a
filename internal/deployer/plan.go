package deployer

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/fleet"
	"github.com/ferryhq/ferry/internal/identity"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/naming/tags"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/resources"
	"github.com/ferryhq/ferry/internal/store/ledger"
)

// plan is the Plan task: what a deploy of the release in the plan
// execution's input (execution.PlanInput) would do if it started now,
// computed with the deploy's own code and changing nothing. Its steps:
//
//  1. Read the release and check it as Validate does (a bad one is a
//     *failure.BadReleaseError, the plan's failure); confirm the request
//     is its execution's; verify its identity proof (the caller becomes
//     the source identity in the target, as for a deploy).
//  2. The lock: held by another release, that release is deploying, and
//     the plan is refused for that one reason, planning nothing else
//     (planInFlight).
//  3. In the target, as ValidateResources does: resolve every resource,
//     the removals, the headroom. Each problem is a refusal, not a
//     failure: the plan lists every reason at once.
//  4. Per service, the group Deploy would create: its capacity from the
//     previous group (package capacity), the first canary step, the
//     image, subnets and load balancers resolved, the user data digest.
//  5. The groups the swap would retire, in the release's target and in
//     every other its config has deployed to (a move's old one:
//     planElsewhere), the services it removes, the load balancers it
//     takes a service out of (detach), and how the release differs from
//     the one deployed now. A move its release does not ask for
//     (checkMove) is a refusal. A refused plan retires, removes and
//     detaches nothing: its refusals say why.
//
// It writes nothing: no lock, no run-once marker, no record, nothing in
// the target. A throttled or failed read is the task's error (retried as
// any task's).
func (d *Deployer) plan(ctx context.Context, req execution.Request) (any, error) {
	r, sum, caller, err := d.planRequest(ctx, req)
	if err != nil {
		return nil, err
	}
	st := &execution.State{
		ProjectName: r.ProjectName, ConfigName: r.ConfigName, ReleaseID: r.ReleaseID, ReleaseSHA256: sum,
		Target: d.target(r), Services: r.ServiceNames(), Timeout: r.Timeout, BakeSeconds: r.BakeSeconds,
	}
	p := &execution.Plan{ProjectName: r.ProjectName, ConfigName: r.ConfigName, Target: st.Target,
		Refusals: []string{}, Groups: []execution.PlannedGroup{}, Retire: []string{}, Remove: []string{}, Changes: []execution.Change{}}
	if inFlight, err := d.planRecords(ctx, r, p); err != nil || inFlight {
		return p, err
	}
	session := cloud.Session{Project: r.ProjectName, Config: r.ConfigName, ReleaseID: r.ReleaseID, SourceIdentity: naming.SourceIdentity(caller.ARN, caller.UserID)}
	c, err := d.connectAs(ctx, st, session, true)
	if refused(p, err) {
		return p, nil
	} else if err != nil {
		return nil, err
	}
	res, err := resources.Resolve(ctx, c, r)
	if refused(p, err) {
		res = nil
	} else if err != nil {
		return nil, err
	}
	others, err := d.fleetElsewhere(ctx, st, session, true)
	if !refused(p, err) && err != nil {
		return nil, err
	}
	if res != nil {
		res.Previous = withElsewhere(r, res.Previous, others)
	}
	for _, check := range []func() error{
		func() error { return checkRemovals(ctx, c, st, r, others) },
		func() error { return resources.CheckHeadroom(ctx, c.AutoScaling, r) },
	} {
		if err := check(); !refused(p, err) && err != nil {
			return nil, err
		}
	}
	if err := d.planGroups(ctx, c, st, r, res, p); err != nil {
		return nil, err
	}
	planElsewhere(r, others, p)
	if err := d.planChanges(ctx, st, r, p); err != nil {
		return nil, err
	}
	return concluded(p), nil
}

// concluded is p with its verdict: it proceeds without a refusal; a
// refused deploy never reaches its swap, so it retires (here or
// elsewhere), removes and detaches nothing.
func concluded(p *execution.Plan) *execution.Plan {
	p.Proceed = len(p.Refusals) == 0
	if !p.Proceed {
		p.Retire, p.Remove, p.Elsewhere, p.Detach = []string{}, []string{}, nil, nil
	}
	return p
}

// planRecords adds to p the refusals the deployer's records say: a
// deploy under way (planInFlight: then it is the one reason, and inFlight
// true), a move r does not ask for (checkMove).
func (d *Deployer) planRecords(ctx context.Context, r *release.Release, p *execution.Plan) (inFlight bool, err error) {
	if inFlight, err := d.planInFlight(ctx, r, p); err != nil || inFlight {
		return inFlight, err
	}
	why, err := d.checkMove(ctx, r, p.Target)
	if why != "" {
		p.Refusals = append(p.Refusals, why)
	}
	return false, err
}

// planInFlight refuses the plan of r, with the one reason, while another
// release holds the lock: that release is deploying (or ended
// FailureDirty, keeping the lock, which its outcome says), and the groups it is
// creating, baking or retiring are no previous groups of r's. Nothing else
// is planned (what r would retire and resize depends on how that deploy
// ends); p says what is deployed now. inFlight reports whether it refused.
func (d *Deployer) planInFlight(ctx context.Context, r *release.Release, p *execution.Plan) (inFlight bool, err error) {
	h, held, err := d.locks.Get(ctx, r.ProjectName, r.ConfigName)
	if err != nil || !held || h.ReleaseID == r.ReleaseID {
		return false, err
	}
	o, ended, err := d.ledger.GetOutcome(ctx, r.ProjectName, r.ConfigName, h.ReleaseID)
	if err != nil {
		return true, err
	}
	since := h.Since.UTC().Format("2006-01-02 15:04:05Z")
	why := fmt.Sprintf("release %s is deploying to %s %s (locked since %s): plan again when it ends", h.ReleaseID, r.ProjectName, r.ConfigName, since)
	if ended && o.End == execution.EndFailureDirty {
		why = fmt.Sprintf("release %s ended FailureDirty and keeps the lock of %s %s (since %s): see ferry status, deal with what it left, then ferry unlock",
			h.ReleaseID, r.ProjectName, r.ConfigName, since)
	}
	p.Refusals = []string{"lock: " + why}
	cur, found, err := d.ledger.GetCurrent(ctx, r.ProjectName, r.ConfigName)
	if found {
		p.Deployed = cur.ReleaseID
	}
	return true, err
}

// planRequest is the release req plans (planRelease), its canonical
// hash and its verified caller, once req is confirmed to be its
// execution's (confirmPlan) (step 1 of plan).
func (d *Deployer) planRequest(ctx context.Context, req execution.Request) (*release.Release, string, identity.Caller, error) {
	r, sum, err := planRelease(req)
	if err != nil {
		return nil, "", identity.Caller{}, err
	}
	if err := d.confirmPlan(ctx, req, r, sum); err != nil {
		return nil, "", identity.Caller{}, err
	}
	caller, err := d.verifyIdentity(ctx, r)
	return r, sum, caller, err
}

// planRelease is the release a plan's request carries, checked as
// Validate checks a release, and its canonical hash.
func planRelease(req execution.Request) (*release.Release, string, error) {
	var in execution.PlanInput
	if err := json.Unmarshal(req.Input, &in); err != nil || len(in.Plan) == 0 {
		return nil, "", &failure.InternalError{Msg: fmt.Sprintf("task %s: input is not a plan: {\"plan\": release}", req.Task)}
	}
	return checkedRelease(in.Plan)
}

// confirmPlan checks req runs for a RUNNING plan execution of the
// deployer's state machine whose input plans release r (canonical hash
// sum): a forged request learns nothing of another release.
func (d *Deployer) confirmPlan(ctx context.Context, req execution.Request, r *release.Release, sum string) error {
	input, err := d.runningInput(ctx, req)
	if err != nil || d.cfg.Executions == nil {
		return err
	}
	var in execution.PlanInput
	if err := json.Unmarshal(input, &in); err != nil || len(in.Plan) == 0 {
		return refuseRequest(req, "its input is not a plan")
	}
	return d.confirmRelease(req, in.Plan, r.ProjectName, r.ConfigName, r.ReleaseID, sum)
}

// refused adds the problems of a *failure.BadReleaseError err to p's
// refusals and reports whether err was one.
func refused(p *execution.Plan, err error) bool {
	var bad *failure.BadReleaseError
	if !errors.As(err, &bad) {
		return false
	}
	p.Refusals = append(p.Refusals, bad.Problems...)
	return true
}

// planGroups fills in the groups Deploy would create, the groups the swap
// would retire, the services it removes and the load balancers it takes
// a service out of. res is nil when the release's
// resources did not resolve: the groups then say what they can.
func (d *Deployer) planGroups(ctx context.Context, c *cloud.Clients, st *execution.State, r *release.Release, res *resources.Resolved, p *execution.Plan) error {
	groups, err := fleet.Groups(ctx, c.AutoScaling, ownerOf(st))
	if err != nil {
		return err
	}
	for _, g := range groups {
		t := tags.FromASG(g.Tags)
		if fleet.Deleting(g) || t[naming.TagReleaseID] == r.ReleaseID {
			continue
		}
		p.Retire = append(p.Retire, aws.ToString(g.AutoScalingGroupName))
		if svc := t[naming.TagServiceName]; r.Services[svc] == nil && !slices.Contains(p.Remove, svc) {
			p.Remove = append(p.Remove, svc)
		}
	}
	slices.Sort(p.Retire)
	slices.Sort(p.Remove)
	for _, d := range dropped(r, groups) {
		if d.explicit {
			p.Detach = append(p.Detach, d.String())
		}
	}
	for _, svc := range r.ServiceNames() {
		pg, err := plannedGroup(r, st, svc, res)
		if refused(p, err) {
			continue
		} else if err != nil {
			return err
		}
		p.Groups = append(p.Groups, pg)
	}
	return nil
}

// planElsewhere adds to p the groups the swap would retire in the other
// environments of the config (others: a move's old one), every group of
// the config not being deleted there, and the services among them r
// does not deploy.
func planElsewhere(r *release.Release, others []targetFleet, p *execution.Plan) {
	for _, o := range others {
		tg := execution.TargetGroups{Target: o.target}
		for _, g := range o.groups {
			if fleet.Deleting(g) {
				continue
			}
			tg.Groups = append(tg.Groups, aws.ToString(g.AutoScalingGroupName))
			if svc := tags.FromASG(g.Tags)[naming.TagServiceName]; r.Services[svc] == nil && !slices.Contains(p.Remove, svc) {
				p.Remove = append(p.Remove, svc)
			}
		}
		if len(tg.Groups) > 0 {
			slices.Sort(tg.Groups)
			p.Elsewhere = append(p.Elsewhere, tg)
			p.Retire = append(p.Retire, tg.Groups...)
		}
	}
	slices.Sort(p.Remove)
}

// plannedGroup is the group Deploy would create for service svc.
func plannedGroup(r *release.Release, st *execution.State, svc string, res *resources.Resolved) (execution.PlannedGroup, error) {
	s := r.Services[svc]
	b := bounds(s)
	pg := execution.PlannedGroup{
		Service: svc, Group: naming.GroupName(r.ProjectName, r.ConfigName, svc, r.ReleaseID),
		Min: b.MinSize, Max: b.MaxSize, InstanceType: s.Runs(),
		Subnets: slices.Clone(r.ServiceSubnets(svc)), LoadBalancers: slices.Clone(s.ELBs), TargetGroups: slices.Clone(s.TargetGroups),
	}
	data, err := userData(r, st.Target, svc)
	if err != nil {
		return pg, err
	}
	digest := sha256.Sum256(data)
	pg.UserDataSHA256 = hex.EncodeToString(digest[:])
	var previous = map[string]int{}
	if res != nil {
		pg.ImageID = res.Images[r.ServiceAMI(svc)]
		for i, ref := range pg.Subnets {
			pg.Subnets[i] = res.Subnets[ref]
		}
		for i, ref := range pg.TargetGroups {
			pg.TargetGroups[i] = res.TargetGroups[ref]
		}
		for name, g := range res.Previous {
			previous[name] = int(aws.ToInt32(g.DesiredCapacity))
		}
	}
	var desired *int
	if v, ok := previous[svc]; ok {
		desired = &v
	}
	plan, err := planOf(r, svc, desired)
	if err != nil {
		return pg, err
	}
	first, _, err := firstStage(r, svc, plan)
	if err != nil {
		return pg, err
	}
	pg.Desired, pg.Launch, pg.HealthyTarget, pg.Steps = plan.Desired, plan.Launch, first.Target, first.Steps
	if first.Steps > 1 {
		pg.Launch = first.StepDesired
	}
	return pg, nil
}

// planChanges fills in how r differs from the release deployed now (from
// its record and its stored release; one whose release expired is
// compared by its record alone).
func (d *Deployer) planChanges(ctx context.Context, st *execution.State, r *release.Release, p *execution.Plan) error {
	cur, found, err := d.ledger.GetCurrent(ctx, st.ProjectName, st.ConfigName)
	if err != nil || !found {
		return err
	}
	p.Deployed = cur.ReleaseID
	prev, err := d.ledger.GetRelease(ctx, st.ProjectName, st.ConfigName, cur.ReleaseID)
	var bad *failure.BadReleaseError
	switch {
	case errors.As(err, &bad):
		prev = nil
	case err != nil:
		return err
	default:
		prev.ApplyDefaults()
	}
	p.Changes = changes(cur, prev, r, p.Groups)
	return nil
}

// changes are how r (its planned groups) differs from the release
// deployed now: its record cur and, when still stored, prev.
func changes(cur ledger.Current, prev, r *release.Release, planned []execution.PlannedGroup) []execution.Change {
	var out []execution.Change
	add := func(svc, field, from, to string) {
		if from != to {
			out = append(out, execution.Change{Service: svc, Field: field, From: from, To: to})
		}
	}
	images := map[string]string{}
	for _, g := range cur.Groups {
		images[g.Service] = g.ImageID
	}
	for _, pg := range planned {
		if from, ok := images[pg.Service]; ok && pg.ImageID != "" {
			add(pg.Service, "image_id", from, pg.ImageID)
		}
	}
	if prev == nil {
		return out
	}
	add("", "version", prev.Version, r.Version)
	add("", "reconcile", cmp.Or(prev.Reconcile, release.ReconcileRecord), cmp.Or(r.Reconcile, release.ReconcileRecord))
	add("", "alarms", strings.Join(prev.AlarmNames(), ","), strings.Join(r.AlarmNames(), ","))
	all := maps.Clone(prev.Services)
	maps.Copy(all, r.Services)
	for _, svc := range slices.Sorted(maps.Keys(all)) {
		was, is := prev.Services[svc], r.Services[svc]
		switch {
		case was == nil:
			add(svc, "service", "", "added")
			continue
		case is == nil:
			add(svc, "service", "deployed", "removed")
			continue
		}
		add(svc, "ami", prev.ServiceAMI(svc), r.ServiceAMI(svc))
		add(svc, "instance_type", was.Runs(), is.Runs())
		add(svc, "user_data_sha256", digestOf(prev.ServiceUserData(svc)), digestOf(r.ServiceUserData(svc)))
		wb, ib := bounds(was), bounds(is)
		add(svc, "min_size", strconv.Itoa(wb.MinSize), strconv.Itoa(ib.MinSize))
		add(svc, "max_size", strconv.Itoa(wb.MaxSize), strconv.Itoa(ib.MaxSize))
		add(svc, "elbs", strings.Join(was.ELBs, ","), strings.Join(is.ELBs, ","))
		add(svc, "target_groups", strings.Join(was.TargetGroups, ","), strings.Join(is.TargetGroups, ","))
		add(svc, "alarms", strings.Join(was.Alarms, ","), strings.Join(is.Alarms, ","))
	}
	return out
}

// digestOf is the hex SHA-256 of a user data template, "" for none.
func digestOf(s string) string {
	if s == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
