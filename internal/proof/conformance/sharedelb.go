package conformance

import (
	"context"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbtypes "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing/types"

	"github.com/ferryhq/ferry/internal/cloud"
)

// elbRegistrar registers instances with a classic load balancer: what
// sharedELBFix needs of moto beyond cloud.ELB.
type elbRegistrar interface {
	RegisterInstancesWithLoadBalancer(ctx context.Context, in *elasticloadbalancing.RegisterInstancesWithLoadBalancerInput, optFns ...func(*elasticloadbalancing.Options)) (*elasticloadbalancing.RegisterInstancesWithLoadBalancerOutput, error)
}

var _ elbRegistrar = (*elasticloadbalancing.Client)(nil)

// sharedELBFix works around moto 5.2.1's Auto Scaling, which keeps a
// classic load balancer's instances equal to those of the one group it
// last updated: it deregisters every instance of the load balancer that
// is not that group's (moto autoscaling/models.py update_attached_elbs),
// so a new group attached to a load balancer takes the previous group's
// instances out of it. AWS registers each attached group's instances
// beside the others' ("Use Elastic Load Balancing to distribute incoming
// application traffic in your Auto Scaling group", Auto Scaling User
// Guide: several groups may be attached to one load balancer). Before
// each DescribeInstanceHealth it registers again the InService instances
// of every group moto shows attached to the load balancer, so the
// deployer reads the registrations AWS would have.
type sharedELBFix struct {
	cloud.ELB
	register elbRegistrar
	groups   cloud.AutoScaling
}

var _ cloud.ELB = sharedELBFix{}

func (f sharedELBFix) DescribeInstanceHealth(ctx context.Context, in *elasticloadbalancing.DescribeInstanceHealthInput, optFns ...func(*elasticloadbalancing.Options)) (*elasticloadbalancing.DescribeInstanceHealthOutput, error) {
	if err := f.reregister(ctx, aws.ToString(in.LoadBalancerName)); err != nil {
		return nil, err
	}
	return f.ELB.DescribeInstanceHealth(ctx, in, optFns...)
}

// reregister registers with the load balancer name the InService
// instances of every group attached to it.
func (f sharedELBFix) reregister(ctx context.Context, name string) error {
	var ids []elbtypes.Instance
	in := &autoscaling.DescribeAutoScalingGroupsInput{}
	for {
		out, err := f.groups.DescribeAutoScalingGroups(ctx, in)
		if err != nil {
			return err
		}
		for _, g := range out.AutoScalingGroups {
			if !slices.Contains(g.LoadBalancerNames, name) {
				continue
			}
			for _, i := range g.Instances {
				if i.LifecycleState == asgtypes.LifecycleStateInService {
					ids = append(ids, elbtypes.Instance{InstanceId: i.InstanceId})
				}
			}
		}
		if aws.ToString(out.NextToken) == "" {
			break
		}
		in.NextToken = out.NextToken
	}
	if len(ids) == 0 {
		return nil
	}
	_, err := f.register.RegisterInstancesWithLoadBalancer(ctx, &elasticloadbalancing.RegisterInstancesWithLoadBalancerInput{
		LoadBalancerName: aws.String(name), Instances: ids,
	})
	return err
}
