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
	"github.com/ferryhq/ferry/internal/fanout"
	"github.com/ferryhq/ferry/internal/tuning"
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

// DeregistrationInProgress is the Description a classic load balancer
// with connection draining gives, with State InService, for an instance
// deregistering: it sends the instance no new request while its
// in-flight ones complete (Configure connection draining, Classic Load
// Balancers User Guide). Read records such an instance Deregistering.
const DeregistrationInProgress = "Instance deregistration currently in progress."

// Deregistering is the state Read records for an instance a classic load
// balancer reports InService with DeregistrationInProgress: not in
// service for ferry, whatever State says.
const Deregistering = "Deregistering"

// Views are the states of the instances in some classic load balancers and
// target groups.
type Views struct {
	// ELB maps a classic load balancer's name to each instance's State
	// there (InService, OutOfService, Unknown; Deregistering for one
	// leaving with connection draining), by instance id.
	ELB map[string]map[string]string
	// TargetGroups maps a target group's ARN to each target's state there
	// (healthy, initial, unhealthy, unused, draining, ...), by instance id.
	TargetGroups map[string]map[string]string
	// notServed says, by instance id, why a load balancer never sends the
	// instance traffic.
	notServed map[string]string
}

// Read asks each classic load balancer of elbs and each target group of
// targetGroups (by ARN) for the states of its instances, up to
// tuning.BalancerReadsAtOnce at a time. A load balancer that does not route
// to an instance's zone (ZoneNotRouted), or a target group that reports a
// target unused because no load balancer sends it traffic
// (Target.NotInUse), marks the instance never served; where two say so
// of one instance, the first in sorted order (classic load balancers
// first) is the reason given. The first read is made alone, then the
// rest, none once one has failed; an error is the first in that order of
// the reads made.
func Read(ctx context.Context, classic ClassicAPI, v2 TargetGroupAPI, elbs, targetGroups []string) (Views, error) {
	lbs, tgs := sorted(elbs), sorted(targetGroups)
	reads := make([]read, len(lbs)+len(tgs))
	one := func(ctx context.Context, i int) (err error) {
		if i < len(lbs) {
			reads[i], err = readELB(ctx, classic, lbs[i])
		} else {
			reads[i], err = readTargetGroup(ctx, v2, tgs[i-len(lbs)])
		}
		return err
	}
	// The first read alone, then the rest in parallel: when the account's
	// Describe budget is spent, one throttled read fails the whole
	// without the others' load.
	if len(reads) > 0 {
		if err := one(ctx, 0); err != nil {
			return Views{}, err
		}
	}
	err := fanout.Each(ctx, tuning.BalancerReadsAtOnce, len(reads)-1, func(ctx context.Context, i int) error { return one(ctx, i+1) })
	if err != nil {
		return Views{}, err
	}
	v := Views{ELB: map[string]map[string]string{}, TargetGroups: map[string]map[string]string{}, notServed: map[string]string{}}
	for i, r := range reads {
		if i < len(lbs) {
			v.ELB[lbs[i]] = r.states
		} else {
			v.TargetGroups[tgs[i-len(lbs)]] = r.states
		}
		for _, ns := range r.notServed {
			if _, seen := v.notServed[ns.id]; !seen {
				v.notServed[ns.id] = ns.why
			}
		}
	}
	return v, nil
}

// read is what one load balancer or target group said: each instance's
// state, and the instances it never serves, in its order.
type read struct {
	states    map[string]string
	notServed []notServed
}

type notServed struct{ id, why string }

func readELB(ctx context.Context, api ClassicAPI, lb string) (read, error) {
	out, err := api.DescribeInstanceHealth(ctx, &elb.DescribeInstanceHealthInput{LoadBalancerName: aws.String(lb)})
	if err != nil {
		return read{}, cloud.ClassifyAs("elb:DescribeInstanceHealth "+lb, err, failure.AsDeploy)
	}
	r := read{states: map[string]string{}}
	for _, is := range out.InstanceStates {
		id := aws.ToString(is.InstanceId)
		r.states[id] = aws.ToString(is.State)
		switch aws.ToString(is.Description) {
		case DeregistrationInProgress:
			r.states[id] = Deregistering
		case ZoneNotRouted:
			r.notServed = append(r.notServed, notServed{id, fmt.Sprintf("classic load balancer %s does not route to the zone of instance %s: %s", lb, id, ZoneNotRouted)})
		}
	}
	return r, nil
}

func readTargetGroup(ctx context.Context, api TargetGroupAPI, tg string) (read, error) {
	out, err := api.DescribeTargetHealth(ctx, &elbv2.DescribeTargetHealthInput{TargetGroupArn: aws.String(tg)})
	if err != nil {
		return read{}, cloud.ClassifyAs("elbv2:DescribeTargetHealth "+tg, err, failure.AsDeploy)
	}
	r := read{states: map[string]string{}}
	for _, t := range out.TargetHealthDescriptions {
		if t.Target == nil || t.TargetHealth == nil {
			continue
		}
		id := aws.ToString(t.Target.Id)
		r.states[id] = string(t.TargetHealth.State)
		if t.TargetHealth.State == elbv2types.TargetHealthStateEnumUnused && t.TargetHealth.Reason == elbv2types.TargetHealthReasonEnumNotInUse {
			r.notServed = append(r.notServed, notServed{id, fmt.Sprintf("target group %s does not send traffic to instance %s (%s: %s)", tg, id,
				t.TargetHealth.Reason, aws.ToString(t.TargetHealth.Description))})
		}
	}
	return r, nil
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
