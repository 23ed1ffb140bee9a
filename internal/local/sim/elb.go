package sim

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/aws/aws-sdk-go-v2/aws"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbtypes "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing/types"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbv2types "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"

	"github.com/ferryhq/ferry/internal/balancers"
	"github.com/ferryhq/ferry/internal/cloud"
)

// ELB is the simulated classic Elastic Load Balancing API of one
// account-region.
type ELB struct{ view }

// ELBv2 is the simulated Elastic Load Balancing v2 API (target groups) of
// one account-region.
type ELBv2 struct{ view }

var (
	_ cloud.ELB   = (*ELB)(nil)
	_ cloud.ELBv2 = (*ELBv2)(nil)
)

const (
	serviceELB   = "Elastic Load Balancing"
	serviceELBv2 = "Elastic Load Balancing v2"
)

func (r *region) classicLB(name string) (*classicLB, error) {
	lb := r.elbs[name]
	if lb == nil {
		return nil, apiErrf(cloud.CodeLoadBalancerNotFound, "There is no ACTIVE Load Balancer named '%s'", name)
	}
	return lb, nil
}

// DescribeLoadBalancers returns load balancers by name (an unknown name is
// LoadBalancerNotFound), or all of them, sorted by name, with the
// instances registered now.
func (c *ELB) DescribeLoadBalancers(ctx context.Context, in *elb.DescribeLoadBalancersInput, _ ...func(*elb.Options)) (*elb.DescribeLoadBalancersOutput, error) {
	const op = "DescribeLoadBalancers"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	out, err := r.describeLoadBalancers(in)
	return out, c.end(op, err)
}

func (r *region) describeLoadBalancers(in *elb.DescribeLoadBalancersInput) (*elb.DescribeLoadBalancersOutput, error) {
	names := in.LoadBalancerNames
	if len(names) == 0 {
		names = slices.Sorted(maps.Keys(r.elbs))
	}
	out := &elb.DescribeLoadBalancersOutput{LoadBalancerDescriptions: []elbtypes.LoadBalancerDescription{}}
	for _, n := range names {
		lb, err := r.classicLB(n)
		if err != nil {
			return nil, err
		}
		d := elbtypes.LoadBalancerDescription{
			LoadBalancerName: aws.String(lb.name), CreatedTime: aws.Time(lb.created), Scheme: aws.String("internal"),
			DNSName:           aws.String(fmt.Sprintf("internal-%s-%d.%s.elb.amazonaws.com", lb.name, seed(lb.name, "dns")%1e9, r.name)),
			AvailabilityZones: slices.Clone(lb.zones), Subnets: r.subnetsIn(lb.zones),
			Instances: []elbtypes.Instance{},
		}
		for _, i := range sortedInstances(lb.instances) {
			d.Instances = append(d.Instances, elbtypes.Instance{InstanceId: aws.String(i.id)})
		}
		out.LoadBalancerDescriptions = append(out.LoadBalancerDescriptions, d)
	}
	return out, nil
}

// DescribeTags returns the tags of up to 20 load balancers (an unknown
// name is LoadBalancerNotFound).
func (c *ELB) DescribeTags(ctx context.Context, in *elb.DescribeTagsInput, _ ...func(*elb.Options)) (*elb.DescribeTagsOutput, error) {
	const op = "DescribeTags"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	out, err := r.describeELBTags(in)
	return out, c.end(op, err)
}

func (r *region) describeELBTags(in *elb.DescribeTagsInput) (*elb.DescribeTagsOutput, error) {
	if len(in.LoadBalancerNames) == 0 || len(in.LoadBalancerNames) > 20 {
		return nil, apiErr(cloud.CodeValidation, "LoadBalancerNames must have between 1 and 20 members")
	}
	out := &elb.DescribeTagsOutput{TagDescriptions: []elbtypes.TagDescription{}}
	for _, n := range in.LoadBalancerNames {
		lb, err := r.classicLB(n)
		if err != nil {
			return nil, err
		}
		d := elbtypes.TagDescription{LoadBalancerName: aws.String(lb.name), Tags: []elbtypes.Tag{}}
		for _, k := range slices.Sorted(maps.Keys(lb.tags)) {
			d.Tags = append(d.Tags, elbtypes.Tag{Key: aws.String(k), Value: aws.String(lb.tags[k])})
		}
		out.TagDescriptions = append(out.TagDescriptions, d)
	}
	return out, nil
}

// DescribeInstanceHealth returns the state of the instances registered with
// a load balancer (or of the listed ones, which must be registered:
// InvalidInstance otherwise): InService once the health check passes,
// OutOfService before (reason ELB: registration in progress) and when it
// fails (reason Instance), and OutOfService (reason ELB) whatever its
// health when the instance is in a zone the load balancer does not route
// to, with the description AWS gives.
func (c *ELB) DescribeInstanceHealth(ctx context.Context, in *elb.DescribeInstanceHealthInput, _ ...func(*elb.Options)) (*elb.DescribeInstanceHealthOutput, error) {
	const op = "DescribeInstanceHealth"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	out, err := r.describeInstanceHealth(in)
	return out, c.end(op, err)
}

func (r *region) describeInstanceHealth(in *elb.DescribeInstanceHealthInput) (*elb.DescribeInstanceHealthOutput, error) {
	lb, err := r.classicLB(deref(in.LoadBalancerName))
	if err != nil {
		return nil, err
	}
	now := r.w.now
	var insts []*instance
	for _, i := range sortedInstances(lb.instances) {
		if !i.unregistered(now) {
			insts = append(insts, i)
		}
	}
	if len(in.Instances) > 0 {
		insts = insts[:0]
		for _, want := range in.Instances {
			i := lb.instances[deref(want.InstanceId)]
			if i == nil || i.unregistered(now) {
				return nil, apiErrf("InvalidInstance", "Could not find EC2 instance %s registered with load balancer %s", deref(want.InstanceId), lb.name)
			}
			insts = append(insts, i)
		}
	}
	out := &elb.DescribeInstanceHealthOutput{InstanceStates: make([]elbtypes.InstanceState, 0, len(insts))}
	for _, i := range insts {
		s := elbtypes.InstanceState{InstanceId: aws.String(i.id)}
		switch health := lb.health(i, now); {
		case !lb.routes(i):
			s.State, s.ReasonCode, s.Description = aws.String("OutOfService"), aws.String("ELB"), aws.String(balancers.ZoneNotRouted)
		case lb.deregistering(i):
			// Configure connection draining, Classic Load Balancers User
			// Guide: "the load balancer reports the state of a
			// de-registering instance as InService: Instance deregistration
			// currently in progress".
			s.State, s.ReasonCode, s.Description = aws.String("InService"), aws.String("N/A"), aws.String(balancers.DeregistrationInProgress)
		case health == "healthy":
			s.State, s.ReasonCode, s.Description = aws.String("InService"), aws.String("N/A"), aws.String("N/A")
		case health == "initial":
			s.State, s.ReasonCode, s.Description = aws.String("OutOfService"), aws.String("ELB"), aws.String("Instance registration is still in progress.")
		default:
			s.State, s.ReasonCode, s.Description = aws.String("OutOfService"), aws.String("Instance"), aws.String("Instance has failed at least the UnhealthyThreshold number of health checks consecutively.")
		}
		out.InstanceStates = append(out.InstanceStates, s)
	}
	return out, nil
}

// subnetsIn returns the region's subnets in the given zones, sorted.
func (r *region) subnetsIn(zones []string) []string {
	var out []string
	for _, id := range slices.Sorted(maps.Keys(r.subnets)) {
		if slices.Contains(zones, r.subnets[id].az) {
			out = append(out, id)
		}
	}
	return out
}

// DescribeLoadBalancers returns v2 load balancers by name or ARN (an
// unknown one is LoadBalancerNotFound), or all of them, sorted by name,
// with their enabled zones.
func (c *ELBv2) DescribeLoadBalancers(ctx context.Context, in *elbv2.DescribeLoadBalancersInput, _ ...func(*elbv2.Options)) (*elbv2.DescribeLoadBalancersOutput, error) {
	const op = "DescribeLoadBalancers"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	out, err := r.describeV2LoadBalancers(in)
	return out, c.end(op, err)
}

func (r *region) describeV2LoadBalancers(in *elbv2.DescribeLoadBalancersInput) (*elbv2.DescribeLoadBalancersOutput, error) {
	if len(in.Names) > 0 && len(in.LoadBalancerArns) > 0 {
		return nil, apiErr(cloud.CodeValidation, "Load balancer names and load balancer ARNs cannot be specified at the same time")
	}
	var lbs []*loadBalancer
	notFound := apiErr(cloud.CodeLoadBalancerNotFound, "One or more load balancers not found")
	switch {
	case len(in.Names) > 0:
		for _, n := range in.Names {
			if r.lbs[n] == nil {
				return nil, notFound
			}
			lbs = append(lbs, r.lbs[n])
		}
	case len(in.LoadBalancerArns) > 0:
		for _, a := range in.LoadBalancerArns {
			if r.lbARNs[a] == nil {
				return nil, notFound
			}
			lbs = append(lbs, r.lbARNs[a])
		}
	default:
		for _, n := range slices.Sorted(maps.Keys(r.lbs)) {
			lbs = append(lbs, r.lbs[n])
		}
	}
	out := &elbv2.DescribeLoadBalancersOutput{LoadBalancers: []elbv2types.LoadBalancer{}}
	for _, lb := range lbs {
		d := elbv2types.LoadBalancer{
			LoadBalancerArn: aws.String(lb.arn), LoadBalancerName: aws.String(lb.name), CreatedTime: aws.Time(lb.created),
			Type: elbv2types.LoadBalancerTypeEnum(lb.typ), Scheme: elbv2types.LoadBalancerSchemeEnumInternal,
			State: &elbv2types.LoadBalancerState{Code: elbv2types.LoadBalancerStateEnumActive},
		}
		for _, z := range lb.zones {
			az := elbv2types.AvailabilityZone{ZoneName: aws.String(z)}
			if ids := r.subnetsIn([]string{z}); len(ids) > 0 {
				az.SubnetId = aws.String(ids[0])
			}
			d.AvailabilityZones = append(d.AvailabilityZones, az)
		}
		out.LoadBalancers = append(out.LoadBalancers, d)
	}
	return out, nil
}

func (r *region) targetGroupByARN(arn string) (*targetGroup, error) {
	tg := r.tgARNs[arn]
	if tg == nil {
		return nil, apiErr(cloud.CodeTargetGroupNotFound, "One or more target groups not found")
	}
	return tg, nil
}

// DescribeTargetGroups returns target groups by name or ARN (an unknown
// one is TargetGroupNotFound), or all of them, sorted by name.
func (c *ELBv2) DescribeTargetGroups(ctx context.Context, in *elbv2.DescribeTargetGroupsInput, _ ...func(*elbv2.Options)) (*elbv2.DescribeTargetGroupsOutput, error) {
	const op = "DescribeTargetGroups"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	out, err := r.describeTargetGroups(in)
	return out, c.end(op, err)
}

func (r *region) describeTargetGroups(in *elbv2.DescribeTargetGroupsInput) (*elbv2.DescribeTargetGroupsOutput, error) {
	if len(in.Names) > 0 && len(in.TargetGroupArns) > 0 {
		return nil, apiErr(cloud.CodeValidation, "Target group names and target group ARNs cannot be specified at the same time")
	}
	var tgs []*targetGroup
	switch {
	case len(in.Names) > 0:
		for _, n := range in.Names {
			tg := r.tgs[n]
			if tg == nil {
				return nil, apiErrf(cloud.CodeTargetGroupNotFound, "One or more target groups not found")
			}
			tgs = append(tgs, tg)
		}
	case len(in.TargetGroupArns) > 0:
		for _, a := range in.TargetGroupArns {
			tg, err := r.targetGroupByARN(a)
			if err != nil {
				return nil, err
			}
			tgs = append(tgs, tg)
		}
	default:
		for _, n := range slices.Sorted(maps.Keys(r.tgs)) {
			tgs = append(tgs, r.tgs[n])
		}
	}
	out := &elbv2.DescribeTargetGroupsOutput{TargetGroups: []elbv2types.TargetGroup{}}
	for _, tg := range tgs {
		lbs := []string{}
		for _, lb := range tg.lbs {
			lbs = append(lbs, lb.arn)
		}
		out.TargetGroups = append(out.TargetGroups, elbv2types.TargetGroup{
			TargetGroupArn: aws.String(tg.arn), TargetGroupName: aws.String(tg.name), LoadBalancerArns: lbs,
			Port: aws.Int32(tg.port), Protocol: elbv2types.ProtocolEnumHttp, TargetType: elbv2types.TargetTypeEnumInstance,
			HealthCheckPath: aws.String("/"), HealthCheckProtocol: elbv2types.ProtocolEnumHttp,
			HealthyThresholdCount: aws.Int32(5), UnhealthyThresholdCount: aws.Int32(2),
			HealthCheckIntervalSeconds: aws.Int32(30), HealthCheckTimeoutSeconds: aws.Int32(5),
		})
	}
	return out, nil
}

// DescribeTags returns the tags of up to 20 target groups by ARN (an
// unknown ARN is TargetGroupNotFound).
func (c *ELBv2) DescribeTags(ctx context.Context, in *elbv2.DescribeTagsInput, _ ...func(*elbv2.Options)) (*elbv2.DescribeTagsOutput, error) {
	const op = "DescribeTags"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	out, err := r.describeTGTags(in)
	return out, c.end(op, err)
}

func (r *region) describeTGTags(in *elbv2.DescribeTagsInput) (*elbv2.DescribeTagsOutput, error) {
	if len(in.ResourceArns) == 0 || len(in.ResourceArns) > 20 {
		return nil, apiErr(cloud.CodeValidation, "ResourceArns must have between 1 and 20 members")
	}
	out := &elbv2.DescribeTagsOutput{TagDescriptions: []elbv2types.TagDescription{}}
	for _, a := range in.ResourceArns {
		tg, err := r.targetGroupByARN(a)
		if err != nil {
			return nil, err
		}
		d := elbv2types.TagDescription{ResourceArn: aws.String(tg.arn), Tags: []elbv2types.Tag{}}
		for _, k := range slices.Sorted(maps.Keys(tg.tags)) {
			d.Tags = append(d.Tags, elbv2types.Tag{Key: aws.String(k), Value: aws.String(tg.tags[k])})
		}
		out.TagDescriptions = append(out.TagDescriptions, d)
	}
	return out, nil
}

// DescribeTargetHealth returns the health of a target group's targets (or
// of the listed ones; an unregistered one is "unused"): initial while it
// registers and is first checked, healthy once the check passes, unhealthy
// when it fails, draining after deregistration until the deregistration
// delay has passed, and unused (Target.NotInUse) when no load balancer
// routes to the target group, or none of them to the target's zone.
func (c *ELBv2) DescribeTargetHealth(ctx context.Context, in *elbv2.DescribeTargetHealthInput, _ ...func(*elbv2.Options)) (*elbv2.DescribeTargetHealthOutput, error) {
	const op = "DescribeTargetHealth"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	out, err := r.describeTargetHealth(in)
	return out, c.end(op, err)
}

func (r *region) describeTargetHealth(in *elbv2.DescribeTargetHealthInput) (*elbv2.DescribeTargetHealthOutput, error) {
	tg, err := r.targetGroupByARN(deref(in.TargetGroupArn))
	if err != nil {
		return nil, err
	}
	now := r.w.now
	port := fmt.Sprint(tg.port)
	var ids []string
	if len(in.Targets) > 0 {
		for _, t := range in.Targets {
			ids = append(ids, deref(t.Id))
		}
	} else {
		ids = make([]string, 0, len(tg.targets))
		for id, t := range tg.targets {
			if !t.inst.unregistered(now) {
				ids = append(ids, id)
			}
		}
		sort.Strings(ids)
	}
	out := &elbv2.DescribeTargetHealthOutput{TargetHealthDescriptions: make([]elbv2types.TargetHealthDescription, 0, len(ids))}
	for _, id := range ids {
		h := &elbv2types.TargetHealth{}
		t := tg.targets[id]
		switch {
		case t == nil || t.inst.unregistered(now):
			h.State, h.Reason, h.Description = elbv2types.TargetHealthStateEnumUnused, elbv2types.TargetHealthReasonEnumNotRegistered, aws.String("Target is not registered to the target group")
		case !t.drainingAt.IsZero():
			h.State, h.Reason, h.Description = elbv2types.TargetHealthStateEnumDraining, elbv2types.TargetHealthReasonEnumDeregistrationInProgress, aws.String("Target deregistration is in progress")
		case tg.notInUse(t.inst) != "":
			h.State, h.Reason, h.Description = elbv2types.TargetHealthStateEnumUnused, elbv2types.TargetHealthReasonEnumNotInUse, aws.String(tg.notInUse(t.inst))
		default:
			switch t.health(now) {
			case "healthy":
				h.State = elbv2types.TargetHealthStateEnumHealthy
			case "initial":
				h.State = elbv2types.TargetHealthStateEnumInitial
				if now.Before(t.inst.bootAt) || now.Before(t.passesFrom) {
					h.Reason, h.Description = elbv2types.TargetHealthReasonEnumRegistrationInProgress, aws.String("Target registration is in progress")
				} else {
					h.Reason, h.Description = elbv2types.TargetHealthReasonEnumInitialHealthChecking, aws.String("Initial health checks in progress")
				}
			default:
				h.State, h.Reason, h.Description = elbv2types.TargetHealthStateEnumUnhealthy, elbv2types.TargetHealthReasonEnumFailedHealthChecks, aws.String("Health checks failed")
			}
		}
		out.TargetHealthDescriptions = append(out.TargetHealthDescriptions, elbv2types.TargetHealthDescription{
			Target: &elbv2types.TargetDescription{Id: aws.String(id), Port: aws.Int32(tg.port)}, HealthCheckPort: aws.String(port), TargetHealth: h,
		})
	}
	return out, nil
}

// DescribeLoadBalancerAttributes returns a classic load balancer's
// attributes (DescribeLoadBalancerAttributes, Elastic Load Balancing API
// Reference, 2012-06-01): of them the sim models ConnectionDraining, from
// the world spec's connection_draining_seconds (0: disabled, the default
// of a load balancer created with the API or CLI; "Configure connection
// draining for your Classic Load Balancer", User Guide for Classic Load
// Balancers). An unknown name is LoadBalancerNotFound.
func (c *ELB) DescribeLoadBalancerAttributes(ctx context.Context, in *elb.DescribeLoadBalancerAttributesInput, _ ...func(*elb.Options)) (*elb.DescribeLoadBalancerAttributesOutput, error) {
	const op = "DescribeLoadBalancerAttributes"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	lb, err := r.classicLB(deref(in.LoadBalancerName))
	if err != nil {
		return nil, c.end(op, err)
	}
	draining := &elbtypes.ConnectionDraining{Enabled: lb.drain > 0}
	if lb.drain > 0 {
		draining.Timeout = aws.Int32(int32(lb.drain.Seconds()))
	}
	return &elb.DescribeLoadBalancerAttributesOutput{LoadBalancerAttributes: &elbtypes.LoadBalancerAttributes{ConnectionDraining: draining}}, c.end(op, nil)
}
