package deployer

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/health"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
)

// checkHealthy is the CheckHealthy task. In order it fails with:
//   - a *failure.HaltError when a halt marker was written after the
//     execution started;
//   - a *failure.TimeoutError when more than the release's timeout has
//     passed since the execution started;
//   - a *failure.HaltError when a service has more terminating instances
//     than its max_terms tolerates (see capacity.Bounds.ShouldHalt).
//
// Otherwise it returns the Health: whether every service has at least its
// healthy target of healthy instances, the per-service counts, and the
// wait before the next check. The AWS calls of one check are one
// DescribeAutoScalingGroups per 50 services, one DescribeInstanceHealth per
// classic load balancer and one DescribeTargetHealth per target group in
// use: they never grow with instances. It changes nothing.
func (d *Deployer) checkHealthy(ctx context.Context, req execution.Request) (any, error) {
	st, err := decodeState(req)
	if err != nil {
		return nil, err
	}
	if err := d.checkHalt(ctx, st, req); err != nil {
		return nil, err
	}
	if err := d.checkTimeout(st, req); err != nil {
		return nil, err
	}
	r, c, err := d.loadAndConnect(ctx, st, false)
	if err != nil {
		return nil, err
	}
	report, err := d.healthReport(ctx, c, st, r)
	if err != nil {
		return nil, err
	}
	for _, svc := range r.ServiceNames() {
		b := bounds(r.Services[svc])
		if n := report[svc].Terminating; b.ShouldHalt(n) {
			return nil, &failure.HaltError{Reason: fmt.Sprintf("service %s has %d terminating instances, more than its max_terms of %d",
				svc, n, b.MaxTerms)}
		}
	}
	h := &execution.Health{
		Healthy:     health.AllHealthy(report),
		WaitSeconds: d.waitSeconds(st, req),
		Services:    report,
	}
	d.log.Info("health checked", "release_id", st.ReleaseID, "healthy", h.Healthy, "unhealthy_services", health.Unhealthy(report))
	return h, nil
}

// checkTimeout fails with a *failure.TimeoutError when the release's
// timeout, measured from the execution's start, has passed.
func (d *Deployer) checkTimeout(st *execution.State, req execution.Request) error {
	if req.Execution.StartTime.IsZero() || st.Timeout <= 0 {
		return nil
	}
	timeout := time.Duration(st.Timeout) * time.Second
	if elapsed := d.now().Sub(req.Execution.StartTime); elapsed > timeout {
		return &failure.TimeoutError{Timeout: timeout, Elapsed: elapsed}
	}
	return nil
}

// healthReport merges the views of every new group, its load balancers and
// target groups into one report per service.
func (d *Deployer) healthReport(ctx context.Context, c *cloud.Clients, st *execution.State, r *release.Release) (map[string]execution.ServiceHealth, error) {
	services := r.ServiceNames()
	names := make([]string, len(services))
	for i, svc := range services {
		names[i] = naming.GroupName(r.ProjectName, r.ConfigName, svc, r.ReleaseID)
	}
	groups, err := describeGroups(ctx, c.AutoScaling, names)
	if err != nil {
		return nil, err
	}
	capacities, err := d.capacities(ctx, c, st, r)
	if err != nil {
		return nil, err
	}

	// Load balancers and target groups are asked only when some instance
	// of a group using them is InService: before that, none is healthy.
	elbStates := map[string]map[string]string{}
	tgStates := map[string]map[string]string{}
	for _, g := range groups {
		if !ours(asgTags(g.Tags), st) || !slices.ContainsFunc(g.Instances, func(i asgtypes.Instance) bool {
			return i.LifecycleState == asgtypes.LifecycleStateInService
		}) {
			continue
		}
		for _, lb := range g.LoadBalancerNames {
			elbStates[lb] = nil
		}
		for _, tg := range g.TargetGroupARNs {
			tgStates[tg] = nil
		}
	}
	for _, lb := range sortedKeys(elbStates) {
		out, err := c.ELB.DescribeInstanceHealth(ctx, &elb.DescribeInstanceHealthInput{LoadBalancerName: aws.String(lb)})
		if err != nil {
			return nil, deployErr("elb:DescribeInstanceHealth "+lb, err)
		}
		m := map[string]string{}
		for _, s := range out.InstanceStates {
			m[aws.ToString(s.InstanceId)] = aws.ToString(s.State)
		}
		elbStates[lb] = m
	}
	for _, tg := range sortedKeys(tgStates) {
		out, err := c.ELBv2.DescribeTargetHealth(ctx, &elbv2.DescribeTargetHealthInput{TargetGroupArn: aws.String(tg)})
		if err != nil {
			return nil, deployErr("elbv2:DescribeTargetHealth "+tg, err)
		}
		m := map[string]string{}
		for _, t := range out.TargetHealthDescriptions {
			if t.Target == nil || t.TargetHealth == nil {
				continue
			}
			m[aws.ToString(t.Target.Id)] = string(t.TargetHealth.State)
		}
		tgStates[tg] = m
	}

	report := map[string]execution.ServiceHealth{}
	for i, svc := range services {
		view := health.View{}
		if g, ok := groups[names[i]]; ok && ours(asgTags(g.Tags), st) {
			view.Found = true
			for _, inst := range g.Instances {
				view.Instances = append(view.Instances, health.Instance{
					ID:             aws.ToString(inst.InstanceId),
					LifecycleState: string(inst.LifecycleState),
					HealthStatus:   aws.ToString(inst.HealthStatus),
				})
			}
			view.LoadBalancers = map[string]map[string]string{}
			for _, lb := range g.LoadBalancerNames {
				view.LoadBalancers[lb] = elbStates[lb]
			}
			view.TargetGroups = map[string]map[string]string{}
			for _, tg := range g.TargetGroupARNs {
				view.TargetGroups[tg] = tgStates[tg]
			}
		}
		sh := health.Assess(view, capacities[svc].Target)
		sh.Desired = capacities[svc].Desired
		report[svc] = sh
	}
	return report, nil
}

// capacities returns each service's healthy target and desired capacity:
// from the State's last health report (Deploy computed them from the
// previous groups, which clean up later deletes), or, when the State has
// none, computed again from the previous groups. A target is never below
// min_size (package capacity).
func (d *Deployer) capacities(ctx context.Context, c *cloud.Clients, st *execution.State, r *release.Release) (map[string]execution.ServiceHealth, error) {
	out := map[string]execution.ServiceHealth{}
	missing := false
	for _, svc := range r.ServiceNames() {
		if st.Health != nil {
			if s, ok := st.Health.Services[svc]; ok {
				target := max(s.Target, bounds(r.Services[svc]).MinSize)
				out[svc] = execution.ServiceHealth{Target: target, Desired: max(s.Desired, target)}
				continue
			}
		}
		missing = true
	}
	if !missing {
		return out, nil
	}
	p := &problems{}
	previous, err := d.previousGroups(ctx, c.AutoScaling, st, p)
	if err != nil {
		return nil, err
	}
	if len(p.list) > 0 {
		return nil, &failure.DeployError{Op: "find previous groups", Err: failure.BadRelease(p.list...)}
	}
	res := &resources{previous: previous}
	for _, svc := range r.ServiceNames() {
		if _, ok := out[svc]; ok {
			continue
		}
		plan, err := servicePlan(r, svc, res)
		if err != nil {
			return nil, err
		}
		out[svc] = execution.ServiceHealth{Target: plan.Healthy, Desired: plan.Desired}
	}
	return out, nil
}

// describeGroups describes ASGs by name, in batches, and returns those
// found by name.
func describeGroups(ctx context.Context, api cloud.AutoScaling, names []string) (map[string]asgtypes.AutoScalingGroup, error) {
	out := map[string]asgtypes.AutoScalingGroup{}
	for batch := range slices.Chunk(names, limits.DescribeGroupsBatch) {
		in := &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: batch, MaxRecords: aws.Int32(100)}
		for {
			page, err := api.DescribeAutoScalingGroups(ctx, in)
			if err != nil {
				return nil, cloud.Classify("autoscaling:DescribeAutoScalingGroups", err)
			}
			for _, g := range page.AutoScalingGroups {
				out[aws.ToString(g.AutoScalingGroupName)] = g
			}
			if aws.ToString(page.NextToken) == "" {
				break
			}
			in.NextToken = page.NextToken
		}
	}
	return out, nil
}

// joinNames formats names for a message.
func joinNames(names []string) string { return strings.Join(names, ", ") }
