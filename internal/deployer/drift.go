package deployer

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"

	"github.com/ferryhq/ferry/internal/balancers"
	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/events"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/fleet"
	"github.com/ferryhq/ferry/internal/health"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/naming/tags"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/resources"
	"github.com/ferryhq/ferry/internal/store/ledger"
	"github.com/ferryhq/ferry/internal/target"
	"github.com/ferryhq/ferry/internal/tuning"
)

// drift is the Drift task: how what runs in a project-config differs
// from its current record (execution.Drift). Its steps:
//
//  1. Read the query (execution.DriftInput) and confirm the request is its
//     execution's; read the current record (nothing deployed: nothing to
//     compare) and the release it names (expired: its record alone).
//  2. In the release's target, as the release's own session: every group
//     tagged with the project-config, and the load balancers of the
//     current groups.
//  3. The deploy under way, if a release holds the lock (inFlight): the
//     groups it acts on, from its records, are reported as what it does
//     with them (deploying, standing_by, retiring), not compared. A lock
//     or record that cannot be read leaves it unknown, and every group
//     compared.
//  4. Compare (driftOf): a current group missing or being deleted; an
//     extra group, here or in another environment the config has
//     deployed to (driftElsewhere: what a move left); min or max not the
//     release's, or, for a service without scaling policies, desired
//     not what the deploy settled; a group launching from another
//     template or version; an instance not healthy (in its group, its
//     load balancers, its target groups); load balancers or target
//     groups not the release's; a mixed instances policy not the
//     release's (mixedDrift).
//  5. Date each difference from the drift record (the first time a query
//     saw it; now for a new one), keep an unhealthy instance settling
//     until tuning.DriftUnhealthyAfter, and write the record: the one
//     thing it writes.
//  6. The states of the alarms the query names and, when it asks,
//     whether the current release serves as the promotion gate reads it
//     (servesStill; a failure is the reading's, which holds the gate).
//
// It changes nothing in AWS. A read that fails is the task's error.
func (d *Deployer) drift(ctx context.Context, req execution.Request) (any, error) {
	q, err := driftQuery(req)
	if err != nil {
		return nil, err
	}
	if err := d.confirmQuery(ctx, req); err != nil {
		return nil, err
	}
	out, _, err := d.checkDrift(ctx, req, q)
	return out, err
}

// checkDrift compares what runs in q's project-config with its current
// record (steps 1 to 5 of drift) and returns the report and the current
// release (nil when nothing is deployed, or when it expired).
func (d *Deployer) checkDrift(ctx context.Context, req execution.Request, q execution.DriftQuery) (*execution.Drift, *release.Release, error) {
	now := d.now()
	out := &execution.Drift{ProjectName: q.ProjectName, ConfigName: q.ConfigName, CheckedAt: now, Drifts: []execution.DriftItem{}}
	cur, found, err := d.ledger.GetCurrent(ctx, q.ProjectName, q.ConfigName)
	if err != nil || !found {
		return out, nil, err
	}
	out.Deployed = cur.ReleaseID
	r, err := d.ledger.GetRelease(ctx, q.ProjectName, q.ConfigName, cur.ReleaseID)
	var expired *failure.BadReleaseError
	switch {
	case errors.As(err, &expired):
		r = nil // compare with the record alone
	case err != nil:
		return nil, nil, err
	default:
		r.ApplyDefaults()
	}
	st := &execution.State{ProjectName: q.ProjectName, ConfigName: q.ConfigName, ReleaseID: cur.ReleaseID, Target: d.currentTarget(cur, r)}
	out.Target = st.Target
	c, err := d.connect(ctx, st, false)
	if err != nil {
		return nil, nil, err
	}
	groups, err := fleet.Groups(ctx, c.AutoScaling, ownerOf(st))
	if err != nil {
		return nil, nil, err
	}
	var elbs, tgs []string
	for _, g := range groups {
		elbs, tgs = append(elbs, g.LoadBalancerNames...), append(tgs, g.TargetGroupARNs...)
	}
	views, err := balancers.Read(ctx, c.ELB, c.ELBv2, compact(elbs), compact(tgs))
	if err != nil {
		return nil, nil, err
	}
	var a acting
	if out.InFlight, a, err = d.inFlight(ctx, q.ProjectName, q.ConfigName, groups); err != nil {
		return nil, nil, err
	}
	items := driftOf(cur, r, groups, views, a)
	left, err := d.driftElsewhere(ctx, st, a)
	if err != nil {
		return nil, nil, err
	}
	items = append(items, left...)
	if err := d.dateDrift(ctx, q, cur.ReleaseID, now, items, out); err != nil {
		return nil, nil, err
	}
	if out.Alarms, err = alarmStates(ctx, c.CloudWatch, q.Alarms); err != nil {
		return nil, nil, err
	}
	if q.Serving {
		out.Serving = servesStill(ctx, c, r, cur.ReleaseID, nil)
	}
	d.announceDrift(ctx, c, st, req, out, now)
	return out, r, nil
}

// announceDrift puts Drift Found when out has differences no check saw
// before now (each is dated from the first that saw it): once per new
// difference, however many queries and passes see it after.
func (d *Deployer) announceDrift(ctx context.Context, c *cloud.Clients, st *execution.State, req execution.Request, out *execution.Drift, now time.Time) {
	var problems, keys []string
	for _, it := range out.Drifts {
		if it.Since.Equal(now) {
			problems, keys = append(problems, it.Group+": "+it.What), append(keys, it.Key())
		}
	}
	if len(problems) == 0 {
		return
	}
	facts := append([]string{st.ReleaseID}, keys...)
	d.announce(ctx, c, st, events.Event{Kind: events.DriftFound, Body: events.DriftDetail{
		Head: d.head(st, req, events.DriftFound, facts...), Problems: problems}})
}

// alarmStates reads the state of each alarm of names, in order; one
// CloudWatch does not describe is execution.AlarmMissing.
func alarmStates(ctx context.Context, api cloud.CloudWatch, names []string) ([]execution.AlarmState, error) {
	if len(names) == 0 {
		return nil, nil
	}
	alarms, err := resources.DescribeAlarms(ctx, api, names)
	if err != nil {
		return nil, err
	}
	state := map[string]string{}
	for _, a := range alarms {
		state[aws.ToString(a.AlarmName)] = string(a.StateValue)
	}
	out := make([]execution.AlarmState, len(names))
	for i, n := range names {
		out[i] = execution.AlarmState{Name: n, State: cmp.Or(state[n], execution.AlarmMissing)}
	}
	return out, nil
}

// driftQuery is the project-config a drift query names.
func driftQuery(req execution.Request) (execution.DriftQuery, error) {
	var in execution.DriftInput
	if err := json.Unmarshal(req.Input, &in); err != nil {
		return execution.DriftQuery{}, &failure.InternalError{Msg: fmt.Sprintf("task %s: input is not a drift query: %v", req.Task, err)}
	}
	q := in.Drift
	var problems []string
	if err := release.ValidateProjectName(q.ProjectName); err != nil {
		problems = append(problems, "drift.project_name: "+err.Error())
	}
	if err := release.ValidateConfigName(q.ConfigName); err != nil {
		problems = append(problems, "drift.config_name: "+err.Error())
	}
	if len(q.Alarms) > limits.MaxListLen {
		problems = append(problems, fmt.Sprintf("drift.alarms: at most %d, not %d", limits.MaxListLen, len(q.Alarms)))
	}
	for i, a := range q.Alarms {
		if why := release.CheckRef(a); why != "" {
			problems = append(problems, fmt.Sprintf("drift.alarms[%d]: %s", i, why))
		}
	}
	if len(problems) > 0 {
		return q, failure.BadRelease(problems...)
	}
	return q, nil
}

// confirmQuery checks req runs for a RUNNING execution of the deployer's
// state machine whose input is req's: a query is answered only for the
// execution that asks it.
func (d *Deployer) confirmQuery(ctx context.Context, req execution.Request) error {
	input, err := d.runningInput(ctx, req)
	if err != nil || d.cfg.Executions == nil {
		return err
	}
	var a, b any
	if json.Unmarshal(input, &a) != nil || json.Unmarshal(req.Input, &b) != nil || !reflect.DeepEqual(a, b) {
		return refuseRequest(req, "its input is not the query the task was given")
	}
	return nil
}

// currentTarget is where the current release runs: its release's target,
// else (the release expired) its record's account and region.
func (d *Deployer) currentTarget(cur ledger.Current, r *release.Release) target.Target {
	if r != nil {
		return d.target(r)
	}
	return d.target(&release.Release{AccountID: cur.AccountID, Region: cur.Region, Qualifier: cur.Qualifier})
}

// driftElsewhere is every group of st's project-config left in the other
// environments it has deployed to, not being deleted, but those a deploy
// under way acts on (a move's): an extra group, each with its
// environment.
func (d *Deployer) driftElsewhere(ctx context.Context, st *execution.State, a acting) ([]execution.DriftItem, error) {
	session, err := d.session(ctx, st)
	if err != nil {
		return nil, err
	}
	others, err := d.fleetElsewhere(ctx, st, session, false)
	if err != nil {
		return nil, err
	}
	var items []execution.DriftItem
	for _, o := range others {
		t := o.target
		for _, g := range o.groups {
			gt := tags.FromASG(g.Tags)
			if fleet.Deleting(g) || a.state(aws.ToString(g.AutoScalingGroupName), gt) != "" {
				continue
			}
			items = append(items, execution.DriftItem{Kind: execution.DriftExtraGroup, Service: gt[naming.TagServiceName], Group: aws.ToString(g.AutoScalingGroupName), Target: &t,
				What: fmt.Sprintf("a group of the config left in %s, where release %s, deployed now in %s, does not run (release %s)",
					t.Describe(), st.ReleaseID, st.Target.Describe(), cmp.Or(gt[naming.TagReleaseID], "unknown"))})
		}
	}
	return items, nil
}

// driftOf compares the current record cur (and its release r, nil when
// expired) with the project-config's groups and their load balancers'
// views. The groups a deploy under way acts on (a) are not compared:
// standing by out of their load balancers, retiring or gone, deploying,
// they are that deploy's, not drift. Items are in group order, then
// kind.
func driftOf(cur ledger.Current, r *release.Release, groups []asgtypes.AutoScalingGroup, views balancers.Views, a acting) []execution.DriftItem {
	var items []execution.DriftItem
	byName := map[string]asgtypes.AutoScalingGroup{}
	for _, g := range groups {
		byName[aws.ToString(g.AutoScalingGroupName)] = g
	}
	current := map[string]bool{}
	for _, cg := range cur.Groups {
		current[cg.Group] = true
		g, found := byName[cg.Group]
		if a.state(cg.Group, tags.FromASG(g.Tags)) != "" {
			continue
		}
		item := func(kind, what string) {
			items = append(items, execution.DriftItem{Kind: kind, Service: cg.Service, Group: cg.Group, What: what})
		}
		if !found || fleet.Deleting(g) {
			item(execution.DriftGroupMissing, "the group is gone")
			continue
		}
		if why := fleet.LaunchDrift(g); why != "" {
			item(execution.DriftLaunchTemplate, why)
		}
		var svc *release.Service
		if r != nil {
			svc = r.Services[cg.Service]
		}
		for _, what := range capacityDrift(g, cg, svc) {
			item(execution.DriftCapacity, what)
		}
		for _, d := range serviceDrift(g, svc) {
			item(d.Kind, d.What)
		}
		for _, u := range unhealthy(g, views, r.LaunchHold()) {
			items = append(items, execution.DriftItem{Kind: execution.DriftUnhealthy, Service: cg.Service, Group: cg.Group, What: u.what, Settle: u.settle})
		}
	}
	for _, g := range groups {
		name := aws.ToString(g.AutoScalingGroupName)
		t := tags.FromASG(g.Tags)
		if current[name] || fleet.Deleting(g) || a.state(name, t) != "" {
			continue
		}
		items = append(items, execution.DriftItem{Kind: execution.DriftExtraGroup, Service: t[naming.TagServiceName], Group: name,
			What: fmt.Sprintf("a group of the config that release %s, deployed now, did not make (release %s)", cur.ReleaseID, cmp.Or(t[naming.TagReleaseID], "unknown"))})
	}
	return items
}

// capacityDrift says how group g's capacity differs from what its
// service svc (nil: its release expired) asks and what the deploy
// settled (cg).
func capacityDrift(g asgtypes.AutoScalingGroup, cg ledger.CurrentGroup, svc *release.Service) []string {
	lo, hi, desired := int(aws.ToInt32(g.MinSize)), int(aws.ToInt32(g.MaxSize)), int(aws.ToInt32(g.DesiredCapacity))
	var out []string
	if svc != nil {
		b := bounds(svc)
		if lo != b.MinSize || hi != b.MaxSize {
			out = append(out, fmt.Sprintf("min %d max %d, not the release's min %d max %d", lo, hi, b.MinSize, b.MaxSize))
		}
	}
	// Scaling policies move desired; without them only a person does.
	if (svc == nil || svc.Autoscaling == nil || len(svc.Autoscaling.Policies) == 0) && cg.Desired > 0 && desired != cg.Desired {
		out = append(out, fmt.Sprintf("desired %d, not %d as deployed", desired, cg.Desired))
	}
	return out
}

// serviceDrift says how group g differs from what its service svc (nil:
// its release expired) asks of it beyond its capacity: its load
// balancers, its mixed instances policy. Each item has its kind and what.
func serviceDrift(g asgtypes.AutoScalingGroup, svc *release.Service) []execution.DriftItem {
	if svc == nil {
		return nil
	}
	var out []execution.DriftItem
	for _, what := range balancerDrift(g, svc) {
		out = append(out, execution.DriftItem{Kind: execution.DriftLoadBalancers, What: what})
	}
	for _, what := range mixedDrift(g, svc) {
		out = append(out, execution.DriftItem{Kind: execution.DriftMixedInstances, What: what})
	}
	return out
}

// balancerDrift says how group g's classic load balancers and target
// groups differ from those its service svc names.
func balancerDrift(g asgtypes.AutoScalingGroup, svc *release.Service) []string {
	var out []string
	if got, want := sorted(g.LoadBalancerNames), sorted(svc.ELBs); !slices.Equal(got, want) {
		out = append(out, fmt.Sprintf("classic load balancers [%s], not the release's [%s]", strings.Join(got, " "), strings.Join(want, " ")))
	}
	var names []string
	for _, arn := range g.TargetGroupARNs {
		names = append(names, targetGroupName(arn))
	}
	if got, want := sorted(names), sorted(svc.TargetGroups); !slices.Equal(got, want) {
		out = append(out, fmt.Sprintf("target groups [%s], not the release's [%s]", strings.Join(got, " "), strings.Join(want, " ")))
	}
	return out
}

// targetGroupName is the name in a target group's ARN
// (arn:...:targetgroup/NAME/ID), or the ARN when it is not one.
func targetGroupName(arn string) string {
	_, rest, ok := strings.Cut(arn, ":targetgroup/")
	if !ok {
		return arn
	}
	name, _, _ := strings.Cut(rest, "/")
	return name
}

// unwell is a live instance that is not healthy: why, one line, and how
// much longer than usual it settles (DriftItem.Settle).
type unwell struct {
	what   string
	settle time.Duration
}

// unhealthy says which live instances of group g are not healthy; one
// that Auto Scaling holds on a launching lifecycle hook (Pending:Wait, or
// Pending:Proceed after it) settles for hold more.
func unhealthy(g asgtypes.AutoScalingGroup, views balancers.Views, hold time.Duration) []unwell {
	v := health.View{Found: true, LoadBalancers: map[string]map[string]string{}, TargetGroups: map[string]map[string]string{}}
	for _, lb := range g.LoadBalancerNames {
		v.LoadBalancers[lb] = views.ELB[lb]
	}
	for _, tg := range g.TargetGroupARNs {
		v.TargetGroups[tg] = views.TargetGroups[tg]
	}
	var out []unwell
	for _, inst := range g.Instances {
		hi := health.Instance{ID: aws.ToString(inst.InstanceId), LifecycleState: string(inst.LifecycleState), HealthStatus: aws.ToString(inst.HealthStatus)}
		if hi.Terminating() || v.Healthy(hi) {
			continue
		}
		u := unwell{what: fmt.Sprintf("instance %s is not healthy (%s, %s)", hi.ID, hi.LifecycleState, hi.HealthStatus)}
		if inst.LifecycleState == asgtypes.LifecycleStatePendingWait || inst.LifecycleState == asgtypes.LifecycleStatePendingProceed {
			u.settle = hold
		}
		out = append(out, u)
	}
	return out
}

// dateDrift dates each item from the drift record (when a query first saw
// it; now for a new one), sorts them into out's drifts and settling ones
// (an unhealthy instance younger than tuning.DriftUnhealthyAfter), and
// writes the record of them all.
func (d *Deployer) dateDrift(ctx context.Context, q execution.DriftQuery, releaseID string, now time.Time, items []execution.DriftItem, out *execution.Drift) error {
	seen := map[string]time.Time{}
	rec, found, err := d.ledger.GetDrift(ctx, q.ProjectName, q.ConfigName)
	if err != nil {
		return err
	}
	if found && rec.ReleaseID == releaseID {
		for _, it := range rec.Items {
			seen[it.Key()] = it.Since
		}
	}
	for i := range items {
		items[i].Since = now
		if at, ok := seen[items[i].Key()]; ok && at.Before(now) {
			items[i].Since = at
		}
		if items[i].Kind == execution.DriftUnhealthy && now.Sub(items[i].Since) < tuning.DriftUnhealthyAfter+items[i].Settle {
			out.Settling = append(out.Settling, items[i])
			continue
		}
		out.Drifts = append(out.Drifts, items[i])
	}
	if items == nil {
		items = []execution.DriftItem{}
	}
	return d.ledger.PutDrift(ctx, q.ProjectName, q.ConfigName, ledger.DriftRecord{ReleaseID: releaseID, CheckedAt: now, Items: items})
}

// sorted is a sorted copy of s.
func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// compact is s sorted without duplicates.
func compact(s []string) []string { return slices.Compact(sorted(s)) }
