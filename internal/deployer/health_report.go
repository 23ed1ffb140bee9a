package deployer

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbv2types "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/fleet"
	"github.com/ferryhq/ferry/internal/health"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/resources"
	"github.com/ferryhq/ferry/internal/tags"
)

// activityReads says when healthReport reads a group's scaling
// activities.
type activityReads bool

// The activity reads.
const (
	// activitiesOnChange reads them when something suggests an instance
	// terminated or failed to launch since the previous check: the
	// group's instances changed, one is terminating, or it is short of
	// its launch count. A health check's cost then does not grow with a
	// group's history.
	activitiesOnChange activityReads = false
	// activitiesAlways reads every group's: the exact count of its
	// terminations, for the swap's gate (an instance replaced before the
	// first check changed nothing a check saw).
	activitiesAlways activityReads = true
)

// healthReport merges the views of every new group, its load balancers and
// target groups into one report per service at now, and carries each
// service's stability window on from the State's last report (see
// health.Track). A new group AWS does not show is reported Missing. It
// reads a group's scaling activities (how many of its instances
// terminated, whether a launch failed for good) as reads says.
func (d *Deployer) healthReport(ctx context.Context, c *cloud.Clients, st *execution.State, r *release.Release, now time.Time, reads activityReads) (map[string]execution.ServiceHealth, error) {
	services := r.ServiceNames()
	names := make([]string, len(services))
	for i, svc := range services {
		names[i] = naming.GroupName(r.ProjectName, r.ConfigName, svc, r.ReleaseID)
	}
	groups, err := fleet.Describe(ctx, c.AutoScaling, names)
	if err != nil {
		return nil, err
	}
	capacities, err := d.capacities(ctx, c, st, r)
	if err != nil {
		return nil, err
	}
	states, err := loadBalancerStates(ctx, c, st, groups)
	if err != nil {
		return nil, err
	}

	report := map[string]execution.ServiceHealth{}
	for i, svc := range services {
		prev := capacities[svc]
		g, found := groups[names[i]]
		if !found || !ownerOf(st).Made(tags.FromASG(g.Tags), st.ReleaseID) {
			cur := prev
			cur.Launched, cur.Healthy, cur.Terminating, cur.Missing = 0, 0, 0, true
			report[svc] = health.Track(prev, cur, now)
			continue
		}
		view := health.View{Found: true, LoadBalancers: map[string]map[string]string{}, TargetGroups: map[string]map[string]string{}}
		var live []string
		for _, inst := range g.Instances {
			hi := health.Instance{ID: aws.ToString(inst.InstanceId), LifecycleState: string(inst.LifecycleState), HealthStatus: aws.ToString(inst.HealthStatus)}
			view.Instances = append(view.Instances, hi)
			if !hi.Terminating() {
				live = append(live, hi.ID)
			}
		}
		for _, lb := range g.LoadBalancerNames {
			view.LoadBalancers[lb] = states.elb[lb]
		}
		for _, tg := range g.TargetGroupARNs {
			view.TargetGroups[tg] = states.tg[tg]
		}
		cur := health.Assess(view, prev.Target)
		cur.Desired, cur.Launch, cur.StableSeconds = prev.Desired, prev.Launch, prev.StableSeconds
		cur.Instances, cur.Terminated = health.Digest(live), prev.Terminated
		changed := prev.Instances != "" && cur.Instances != prev.Instances
		if reads == activitiesAlways || changed || cur.Terminating > 0 || cur.Launched < prev.Launch {
			acts, err := fleet.ReadActivities(ctx, c.AutoScaling, names[i])
			if err != nil {
				return nil, err
			}
			if acts.Failed != "" {
				return nil, &failure.DeployError{Op: "launch instances of " + names[i],
					Err: fmt.Errorf("Auto Scaling reports a failed launch that will fail again: %s", acts.Failed)}
			}
			cur.Terminated = max(prev.Terminated, acts.Terminated)
		}
		if reason := states.unrouted(g); reason != "" {
			return nil, &failure.DeployError{Op: "route to " + names[i], Err: errors.New(reason)}
		}
		report[svc] = health.Track(prev, cur, now)
	}
	return report, nil
}

// lbStates are the states of the instances in the load balancers and
// target groups of the new groups: classic load balancer name, or target
// group ARN, to instance id to state; and why an instance cannot be
// served, by instance id.
type lbStates struct {
	elb, tg  map[string]map[string]string
	notInUse map[string]string
}

// unrouted is why some instance of g is never served (a load balancer
// that does not route to its zone), or "".
func (s lbStates) unrouted(g asgtypes.AutoScalingGroup) string {
	for _, inst := range g.Instances {
		if why := s.notInUse[aws.ToString(inst.InstanceId)]; why != "" {
			return why
		}
	}
	return ""
}

// loadBalancerStates asks the classic load balancers and target groups of
// the new groups for their instances' states. They are asked only when
// some instance of a group using them is InService: before that, none is
// healthy.
func loadBalancerStates(ctx context.Context, c *cloud.Clients, st *execution.State, groups map[string]asgtypes.AutoScalingGroup) (lbStates, error) {
	s := lbStates{elb: map[string]map[string]string{}, tg: map[string]map[string]string{}, notInUse: map[string]string{}}
	for _, g := range groups {
		if !ownerOf(st).Made(tags.FromASG(g.Tags), st.ReleaseID) || !slices.ContainsFunc(g.Instances, func(i asgtypes.Instance) bool {
			return i.LifecycleState == asgtypes.LifecycleStateInService
		}) {
			continue
		}
		for _, lb := range g.LoadBalancerNames {
			s.elb[lb] = nil
		}
		for _, tg := range g.TargetGroupARNs {
			s.tg[tg] = nil
		}
	}
	for _, lb := range slices.Sorted(maps.Keys(s.elb)) {
		out, err := c.ELB.DescribeInstanceHealth(ctx, &elb.DescribeInstanceHealthInput{LoadBalancerName: aws.String(lb)})
		if err != nil {
			return lbStates{}, deployErr("elb:DescribeInstanceHealth "+lb, err)
		}
		m := map[string]string{}
		for _, is := range out.InstanceStates {
			id := aws.ToString(is.InstanceId)
			m[id] = aws.ToString(is.State)
			if aws.ToString(is.Description) == cloud.ELBZoneNotRouted {
				s.notInUse[id] = fmt.Sprintf("classic load balancer %s does not route to the zone of instance %s: %s", lb, id, cloud.ELBZoneNotRouted)
			}
		}
		s.elb[lb] = m
	}
	for _, tg := range slices.Sorted(maps.Keys(s.tg)) {
		out, err := c.ELBv2.DescribeTargetHealth(ctx, &elbv2.DescribeTargetHealthInput{TargetGroupArn: aws.String(tg)})
		if err != nil {
			return lbStates{}, deployErr("elbv2:DescribeTargetHealth "+tg, err)
		}
		m := map[string]string{}
		for _, t := range out.TargetHealthDescriptions {
			if t.Target == nil || t.TargetHealth == nil {
				continue
			}
			id := aws.ToString(t.Target.Id)
			m[id] = string(t.TargetHealth.State)
			if t.TargetHealth.State == elbv2types.TargetHealthStateEnumUnused && t.TargetHealth.Reason == elbv2types.TargetHealthReasonEnumNotInUse {
				s.notInUse[id] = fmt.Sprintf("target group %s does not send traffic to instance %s (%s: %s)", tg, id,
					t.TargetHealth.Reason, aws.ToString(t.TargetHealth.Description))
			}
		}
		s.tg[tg] = m
	}
	return s, nil
}

// capacities returns what each service's report starts from: its healthy
// target, desired capacity, launch count and stability window, with the
// State's last report (Deploy computed the capacities from the previous
// groups, which clean up later deletes), or, when the State has none,
// computed again from the previous groups. A target is never below
// min_size (package capacity).
func (d *Deployer) capacities(ctx context.Context, c *cloud.Clients, st *execution.State, r *release.Release) (map[string]execution.ServiceHealth, error) {
	out := map[string]execution.ServiceHealth{}
	missing := false
	for _, svc := range r.ServiceNames() {
		if st.Health != nil {
			if s, ok := st.Health.Services[svc]; ok {
				s.Target = max(s.Target, bounds(r.Services[svc]).MinSize)
				s.Desired = max(s.Desired, s.Target)
				s.Launch = max(s.Launch, s.Desired)
				s.StableSeconds = r.ServiceStableSeconds(svc)
				out[svc] = s
				continue
			}
		}
		missing = true
	}
	if !missing {
		return out, nil
	}
	previous, problems, err := resources.Previous(ctx, c.AutoScaling, r)
	if err != nil {
		return nil, err
	}
	if len(problems) > 0 {
		return nil, &failure.DeployError{Op: "find previous groups", Err: failure.BadRelease(problems...)}
	}
	for _, svc := range r.ServiceNames() {
		if _, ok := out[svc]; ok {
			continue
		}
		plan, err := servicePlan(r, svc, previous)
		if err != nil {
			return nil, err
		}
		out[svc] = execution.ServiceHealth{Target: plan.Healthy, Desired: plan.Desired, Launch: plan.Launch, StableSeconds: r.ServiceStableSeconds(svc)}
	}
	return out, nil
}

// joinNames formats names for a message.
func joinNames(names []string) string { return strings.Join(names, ", ") }
