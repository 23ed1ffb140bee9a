package balancers

import (
	"context"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbv2types "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/failure"
)

// ClassicAPI is the classic Elastic Load Balancing API Read calls.
type ClassicAPI interface {
	DescribeInstanceHealth(ctx context.Context, in *elb.DescribeInstanceHealthInput, optFns ...func(*elb.Options)) (*elb.DescribeInstanceHealthOutput, error)
}

// TargetGroupAPI is the Elastic Load Balancing v2 API Read calls.
type TargetGroupAPI interface {
	DescribeTargetHealth(ctx context.Context, in *elbv2.DescribeTargetHealthInput, optFns ...func(*elbv2.Options)) (*elbv2.DescribeTargetHealthOutput, error)
}

var (
	_ ClassicAPI     = (*elb.Client)(nil)
	_ TargetGroupAPI = (*elbv2.Client)(nil)
)

// ZoneNotRouted is the Description a classic load balancer gives (with
// State OutOfService, ReasonCode ELB) for an instance in an Availability
// Zone it does not route to: the instance never serves through it. The
// API has no code for it: ReasonCode says only whether the load balancer
// or the instance is the cause (ELB | Instance | N/A), and this is one of
// the messages Description lists (InstanceState, Elastic Load Balancing
// API Reference, 2012-06-01), so it is read as text.
const ZoneNotRouted = "Instance is in the EC2 Availability Zone for which LoadBalancer is not configured to route traffic to."

// Views are the states of the instances in some classic load balancers and
// target groups.
type Views struct {
	// ELB maps a classic load balancer's name to each instance's State
	// there (InService, OutOfService, Unknown), by instance id.
	ELB map[string]map[string]string
	// TargetGroups maps a target group's ARN to each target's state there
	// (healthy, initial, unhealthy, unused, draining, ...), by instance id.
	TargetGroups map[string]map[string]string
	// notServed says, by instance id, why a load balancer never sends the
	// instance traffic.
	notServed map[string]string
}

// Read asks each classic load balancer of elbs and each target group of
// targetGroups (by ARN), in sorted order, for the states of its instances.
// A load balancer that does not route to an instance's zone (ZoneNotRouted),
// or a target group that reports a target unused because no load balancer
// sends it traffic (Target.NotInUse), marks the instance never served.
func Read(ctx context.Context, classic ClassicAPI, v2 TargetGroupAPI, elbs, targetGroups []string) (Views, error) {
	v := Views{ELB: map[string]map[string]string{}, TargetGroups: map[string]map[string]string{}, notServed: map[string]string{}}
	for _, lb := range sorted(elbs) {
		if err := v.readELB(ctx, classic, lb); err != nil {
			return Views{}, err
		}
	}
	for _, tg := range sorted(targetGroups) {
		if err := v.readTargetGroup(ctx, v2, tg); err != nil {
			return Views{}, err
		}
	}
	return v, nil
}

func (v Views) readELB(ctx context.Context, api ClassicAPI, lb string) error {
	out, err := api.DescribeInstanceHealth(ctx, &elb.DescribeInstanceHealthInput{LoadBalancerName: aws.String(lb)})
	if err != nil {
		return cloud.ClassifyAs("elb:DescribeInstanceHealth "+lb, err, failure.AsDeploy)
	}
	m := map[string]string{}
	for _, is := range out.InstanceStates {
		id := aws.ToString(is.InstanceId)
		m[id] = aws.ToString(is.State)
		if aws.ToString(is.Description) == ZoneNotRouted {
			v.notServed[id] = fmt.Sprintf("classic load balancer %s does not route to the zone of instance %s: %s", lb, id, ZoneNotRouted)
		}
	}
	v.ELB[lb] = m
	return nil
}

func (v Views) readTargetGroup(ctx context.Context, api TargetGroupAPI, tg string) error {
	out, err := api.DescribeTargetHealth(ctx, &elbv2.DescribeTargetHealthInput{TargetGroupArn: aws.String(tg)})
	if err != nil {
		return cloud.ClassifyAs("elbv2:DescribeTargetHealth "+tg, err, failure.AsDeploy)
	}
	m := map[string]string{}
	for _, t := range out.TargetHealthDescriptions {
		if t.Target == nil || t.TargetHealth == nil {
			continue
		}
		id := aws.ToString(t.Target.Id)
		m[id] = string(t.TargetHealth.State)
		if t.TargetHealth.State == elbv2types.TargetHealthStateEnumUnused && t.TargetHealth.Reason == elbv2types.TargetHealthReasonEnumNotInUse {
			v.notServed[id] = fmt.Sprintf("target group %s does not send traffic to instance %s (%s: %s)", tg, id,
				t.TargetHealth.Reason, aws.ToString(t.TargetHealth.Description))
		}
	}
	v.TargetGroups[tg] = m
	return nil
}

// NotServed is why a load balancer never sends traffic to the first of
// ids it never serves, or "" when it serves them all (as far as it says).
func (v Views) NotServed(ids ...string) string {
	for _, id := range ids {
		if why := v.notServed[id]; why != "" {
			return why
		}
	}
	return ""
}

// sorted is names, sorted, without repeats.
func sorted(names []string) []string {
	out := slices.Clone(names)
	slices.Sort(out)
	return slices.Compact(out)
}
