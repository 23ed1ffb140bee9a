package deployer

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	elbv2types "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"

	"github.com/ferryhq/ferry/internal/balancers"
	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/health"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/resources"
)

// A release is judged on the load balancers it names, never on those a
// group is attached to now: a group taken out of one of them (by an
// operator, another tool) no longer serves there, and its attachments as
// DescribeAutoScalingGroups lists them are no evidence of what a load
// balancer routes to (whether a detached one is still listed while it is
// Removing is not documented). Each load balancer's own view
// (DescribeInstanceHealth, DescribeTargetHealth) says which instances it
// serves.

// balancerRef is one load balancer a release names: a classic load
// balancer by name (arn empty), or a target group by name and ARN.
type balancerRef struct{ name, arn string }

func (b balancerRef) String() string {
	if b.arn == "" {
		return "classic load balancer " + b.name
	}
	return "target group " + b.name
}

// kind orders classic load balancers (0) before target groups (1).
func (b balancerRef) kind() int {
	if b.arn == "" {
		return 0
	}
	return 1
}

// servedBy are the load balancers a release names for one service.
type servedBy struct {
	elbs []string
	tgs  []balancerRef
}

// reads is how many calls asking sb's load balancers takes: one
// DescribeInstanceHealth per classic load balancer, one
// DescribeTargetHealth per target group.
func (sb servedBy) reads() int { return len(sb.elbs) + len(sb.tgs) }

// namedSet are the load balancers a release names, by service.
type namedSet map[string]servedBy

// judgement is one health check of a release: the per-service report;
// by service, the named load balancers one of its new group's instances
// in service is not registered with (taken out of them); the new groups
// by service; and the named load balancers no new instance is healthy in
// while another instance is (dark: retiring the previous groups would
// leave them without one).
type judgement struct {
	report map[string]execution.ServiceHealth
	outOf  map[string][]balancerRef
	groups map[string]string
	dark   []string
	// reads are the load balancer reads the report made.
	reads int
}

// namedBalancers are the load balancers the release names for each
// service, its target groups resolved to their ARNs (one
// DescribeTargetGroups for all). A target group that no longer exists is
// a *failure.DeployError: the service can never be healthy in it.
func namedBalancers(ctx context.Context, c *cloud.Clients, r *release.Release) (namedSet, error) {
	var names []string
	for _, svc := range r.ServiceNames() {
		names = append(names, r.Services[svc].TargetGroups...)
	}
	slices.Sort(names)
	arns, _, err := resources.TargetGroups(ctx, c.ELBv2, slices.Compact(names))
	if err != nil {
		return nil, err
	}
	out := namedSet{}
	for _, svc := range r.ServiceNames() {
		s := r.Services[svc]
		sb := servedBy{elbs: s.ELBs}
		for _, name := range s.TargetGroups {
			arn, ok := arns[name]
			if !ok {
				return nil, &failure.DeployError{Op: "judge service " + svc, Err: fmt.Errorf("target group %s, which the release names, no longer exists", name)}
			}
			sb.tgs = append(sb.tgs, balancerRef{name: name, arn: arn})
		}
		out[svc] = sb
	}
	return out, nil
}

// read asks the named load balancers of the services ask says for the
// states of their instances (balancers.Read).
func (n namedSet) read(ctx context.Context, c *cloud.Clients, ask map[string]bool) (balancers.Views, error) {
	var elbs, tgs []string
	for svc, sb := range n {
		if !ask[svc] {
			continue
		}
		elbs = append(elbs, sb.elbs...)
		for _, tg := range sb.tgs {
			tgs = append(tgs, tg.arn)
		}
	}
	return balancers.Read(ctx, c.ELB, c.ELBv2, elbs, tgs)
}

// unregistered are the load balancers of sb that one of g's instances in
// service is not registered with, as views say: absent from a classic
// load balancer or deregistering (connection draining), absent or
// draining from a target group. Auto Scaling "registers your instance
// with the load balancer before it marks the instance as InService"
// (Instance lifecycle, Auto Scaling User Guide), so the group was taken
// out of them.
func (sb servedBy) unregistered(g asgtypes.AutoScalingGroup, views balancers.Views) []balancerRef {
	ids := inServiceIDs(g)
	var out []balancerRef
	for _, lb := range sb.elbs {
		states := views.ELB[lb]
		if slices.ContainsFunc(ids, func(id string) bool { state, ok := states[id]; return !ok || state == balancers.Deregistering }) {
			out = append(out, balancerRef{name: lb})
		}
	}
	for _, tg := range sb.tgs {
		states := views.TargetGroups[tg.arn]
		if slices.ContainsFunc(ids, func(id string) bool {
			state, ok := states[id]
			return !ok || state == string(elbv2types.TargetHealthStateEnumDraining)
		}) {
			out = append(out, tg)
		}
	}
	return out
}

// dark names the load balancers of n, of those views read, in which no
// instance of the new groups (groups, by name) is healthy while another
// instance is: retiring the previous groups would leave them without a
// healthy instance.
func (n namedSet) dark(groups map[string]asgtypes.AutoScalingGroup, views balancers.Views) []string {
	ours := inServiceSet(groups)
	var out []string
	n.each(views, func(svc string, b balancerRef, states map[string]string, healthy string) {
		if mine, others := healthyOf(states, healthy, ours); others && !mine {
			out = append(out, fmt.Sprintf("%s (service %s)", b, svc))
		}
	})
	return slices.Compact(out)
}

// unserved names the load balancers of n in which no instance in
// service of a service's groups (groups, by service) is healthy, as
// views say: by name, each once, by service in order, classic load
// balancers first.
func (n namedSet) unserved(groups map[string]asgtypes.AutoScalingGroup, views balancers.Views) []string {
	var out []string
	n.each(views, func(svc string, b balancerRef, states map[string]string, healthy string) {
		ours := inServiceSet(map[string]asgtypes.AutoScalingGroup{svc: groups[svc]})
		if mine, _ := healthyOf(states, healthy, ours); !mine && !slices.Contains(out, b.name) {
			out = append(out, b.name)
		}
	})
	return out
}

// each calls f with each load balancer of n, by service in order,
// classic load balancers first: the states views read of its instances,
// and the state that is healthy there.
func (n namedSet) each(views balancers.Views, f func(svc string, b balancerRef, states map[string]string, healthy string)) {
	for _, svc := range slices.Sorted(maps.Keys(n)) {
		for _, lb := range n[svc].elbs {
			f(svc, balancerRef{name: lb}, views.ELB[lb], health.ELBInService)
		}
		for _, tg := range n[svc].tgs {
			f(svc, tg, views.TargetGroups[tg.arn], health.TargetHealthy)
		}
	}
}

// healthyOf says whether an instance of ours (mine) and an instance not
// of ours (others) are healthy in a load balancer's states, healthy being
// its healthy state.
func healthyOf(states map[string]string, healthy string, ours map[string]bool) (mine, others bool) {
	for id, state := range states {
		if state == healthy {
			mine, others = mine || ours[id], others || !ours[id]
		}
	}
	return mine, others
}

// inServiceSet are the ids of groups' instances in service.
func inServiceSet(groups map[string]asgtypes.AutoScalingGroup) map[string]bool {
	ours := map[string]bool{}
	for _, g := range groups {
		for _, id := range inServiceIDs(g) {
			ours[id] = true
		}
	}
	return ours
}

// checkOutOf fails with a *failure.HaltError when a new group is out of
// a load balancer its release names (j.outOf: taken out of it after
// Deploy attached it). The bake and the swap's gate call it: past
// CheckHealthy, an outside detach is a reason to roll back, not
// something to undo.
func checkOutOf(r *release.Release, j judgement) error {
	for _, svc := range r.ServiceNames() {
		if out := j.outOf[svc]; len(out) > 0 {
			return &failure.HaltError{Reason: fmt.Sprintf("service %s: its new group is not registered with %s, which the release names (taken out of it)", svc, joinRefs(out))}
		}
	}
	return nil
}

// checkDark fails with a *failure.HaltError when retiring the previous
// groups would leave a load balancer the release names without a
// healthy instance (j.dark), as the load balancers themselves see it.
// The swap's gate calls it last.
func checkDark(j judgement) error {
	if len(j.dark) > 0 {
		return &failure.HaltError{Reason: "retiring the previous groups would leave without a healthy instance: " + joinNames(j.dark)}
	}
	return nil
}

// attachAgain attaches each new group of j to the named load balancers it
// was taken out of (j.outOf): Deploy attached it to them, and the
// attachment is ferry's. Its instances then register anew and are healthy
// once they pass the load balancer's health checks, so the service's
// stability window starts again. Attaching a group attached already
// changes nothing.
func (d *Deployer) attachAgain(ctx context.Context, c *cloud.Clients, st *execution.State, j judgement) error {
	for _, svc := range slices.Sorted(maps.Keys(j.outOf)) {
		name := j.groups[svc]
		var elbs, tgs []string
		for _, b := range j.outOf[svc] {
			if b.arn == "" {
				elbs = append(elbs, b.name)
			} else {
				tgs = append(tgs, b.arn)
			}
		}
		for batch := range slices.Chunk(elbs, 10) {
			if _, err := c.AutoScaling.AttachLoadBalancers(ctx, &autoscaling.AttachLoadBalancersInput{AutoScalingGroupName: aws.String(name), LoadBalancerNames: batch}); err != nil {
				return cloud.ClassifyAs("autoscaling:AttachLoadBalancers "+name, err, failure.AsDeploy)
			}
		}
		for batch := range slices.Chunk(tgs, 10) {
			if _, err := c.AutoScaling.AttachLoadBalancerTargetGroups(ctx, &autoscaling.AttachLoadBalancerTargetGroupsInput{AutoScalingGroupName: aws.String(name), TargetGroupARNs: batch}); err != nil {
				return cloud.ClassifyAs("autoscaling:AttachLoadBalancerTargetGroups "+name, err, failure.AsDeploy)
			}
		}
		if len(j.outOf[svc]) > 0 {
			d.log.Warn("a new group was out of load balancers its release names: attached again", "release_id", st.ReleaseID, "service", svc, "asg", name, "load_balancers", joinRefs(j.outOf[svc]))
		}
	}
	return nil
}

// inService says whether an instance of g is in service.
func inService(g asgtypes.AutoScalingGroup) bool { return len(inServiceIDs(g)) > 0 }

// inServiceIDs are the ids of g's instances in service.
func inServiceIDs(g asgtypes.AutoScalingGroup) []string {
	var ids []string
	for _, i := range g.Instances {
		if i.LifecycleState == asgtypes.LifecycleStateInService {
			ids = append(ids, aws.ToString(i.InstanceId))
		}
	}
	return ids
}

// joinRefs formats load balancers for a message.
func joinRefs(refs []balancerRef) string {
	s := make([]string, len(refs))
	for i, r := range refs {
		s[i] = r.String()
	}
	return strings.Join(s, ", ")
}
