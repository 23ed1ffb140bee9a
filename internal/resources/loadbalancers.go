package resources

import (
	"context"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/tags"
)

// checkLoadBalancers checks classic load balancers by name: each exists
// and is tagged with the release's project, config and the using service.
// One DescribeLoadBalancers call for all (per name only to find which are
// missing when some are), and DescribeTags in batches.
func checkLoadBalancers(ctx context.Context, api cloud.ELB, r *release.Release, uses []use, res *Resolved, p *problems) error {
	if len(uses) == 0 {
		return nil
	}
	names := refs(uses)
	exists := map[string]bool{}
	out, err := api.DescribeLoadBalancers(ctx, &elb.DescribeLoadBalancersInput{LoadBalancerNames: names})
	switch {
	case err == nil:
		for _, lb := range out.LoadBalancerDescriptions {
			exists[aws.ToString(lb.LoadBalancerName)] = true
			res.elbZones[aws.ToString(lb.LoadBalancerName)] = lb.AvailabilityZones
		}
	case cloud.IsNotFoundCode(err, cloud.CodeLoadBalancerNotFound):
		for _, name := range names {
			one, err := api.DescribeLoadBalancers(ctx, &elb.DescribeLoadBalancersInput{LoadBalancerNames: []string{name}})
			switch {
			case err == nil:
				exists[name] = len(one.LoadBalancerDescriptions) > 0
				for _, lb := range one.LoadBalancerDescriptions {
					res.elbZones[aws.ToString(lb.LoadBalancerName)] = lb.AvailabilityZones
				}
			case !cloud.IsNotFoundCode(err, cloud.CodeLoadBalancerNotFound):
				return cloud.Classify("elb:DescribeLoadBalancers", err)
			}
		}
	default:
		return cloud.Classify("elb:DescribeLoadBalancers", err)
	}
	var present []string
	for _, n := range names {
		if exists[n] {
			present = append(present, n)
		}
	}
	found := map[string]map[string]string{}
	for batch := range slices.Chunk(present, limits.DescribeBatch) {
		out, err := api.DescribeTags(ctx, &elb.DescribeTagsInput{LoadBalancerNames: batch})
		if err != nil {
			return cloud.Classify("elb:DescribeTags", err)
		}
		for _, td := range out.TagDescriptions {
			found[aws.ToString(td.LoadBalancerName)] = tags.FromELB(td.Tags)
		}
	}
	for _, u := range uses {
		if !exists[u.ref] {
			p.add(u.path, "load balancer %q not found", u.ref)
			continue
		}
		checkOwner(p, r, u, "load balancer", tagged{id: u.ref, tags: found[u.ref]})
	}
	return nil
}

// resolveTargetGroups resolves target groups by name to their ARNs: each
// exists and is tagged with the release's project, config and the using
// service. One DescribeTargetGroups call for all (per name only to find
// which are missing when some are), and DescribeTags in batches.
func resolveTargetGroups(ctx context.Context, api cloud.ELBv2, r *release.Release, uses []use, res *Resolved, p *problems) (map[string]string, error) {
	arns := map[string]string{}
	if len(uses) == 0 {
		return arns, nil
	}
	names := refs(uses)
	lbsOf := map[string][]string{} // target group ARN -> load balancer ARNs
	collect := func(out *elbv2.DescribeTargetGroupsOutput) {
		for _, tg := range out.TargetGroups {
			arns[aws.ToString(tg.TargetGroupName)] = aws.ToString(tg.TargetGroupArn)
			lbsOf[aws.ToString(tg.TargetGroupArn)] = tg.LoadBalancerArns
		}
	}
	out, err := api.DescribeTargetGroups(ctx, &elbv2.DescribeTargetGroupsInput{Names: names})
	switch {
	case err == nil:
		collect(out)
	case cloud.IsNotFoundCode(err, cloud.CodeTargetGroupNotFound):
		for _, name := range names {
			one, err := api.DescribeTargetGroups(ctx, &elbv2.DescribeTargetGroupsInput{Names: []string{name}})
			switch {
			case err == nil:
				collect(one)
			case !cloud.IsNotFoundCode(err, cloud.CodeTargetGroupNotFound):
				return nil, cloud.Classify("elbv2:DescribeTargetGroups", err)
			}
		}
	default:
		return nil, cloud.Classify("elbv2:DescribeTargetGroups", err)
	}
	var present []string
	byARN := map[string]string{}
	for _, n := range names {
		if arn, ok := arns[n]; ok {
			present = append(present, arn)
			byARN[arn] = n
		}
	}
	found := map[string]map[string]string{}
	for batch := range slices.Chunk(present, limits.DescribeBatch) {
		out, err := api.DescribeTags(ctx, &elbv2.DescribeTagsInput{ResourceArns: batch})
		if err != nil {
			return nil, cloud.Classify("elbv2:DescribeTags", err)
		}
		for _, td := range out.TagDescriptions {
			found[byARN[aws.ToString(td.ResourceArn)]] = tags.FromELBv2(td.Tags)
		}
	}
	for _, u := range uses {
		arn, ok := arns[u.ref]
		if !ok {
			p.add(u.path, "target group %q not found", u.ref)
			continue
		}
		checkOwner(p, r, u, "target group", tagged{id: arn, tags: found[u.ref]})
	}
	return arns, targetGroupZones(ctx, api, lbsOf, res)
}

// targetGroupZones records, for each target group, the zones its load
// balancers enable (res.tgZones; none for a target group no load balancer
// uses). DescribeLoadBalancers in batches of 20 load balancers.
func targetGroupZones(ctx context.Context, api cloud.ELBv2, lbsOf map[string][]string, res *Resolved) error {
	var all []string
	for _, lbs := range lbsOf {
		all = append(all, lbs...)
	}
	slices.Sort(all)
	all = slices.Compact(all)
	zones := map[string][]string{}
	for batch := range slices.Chunk(all, limits.DescribeLoadBalancersBatch) {
		out, err := api.DescribeLoadBalancers(ctx, &elbv2.DescribeLoadBalancersInput{LoadBalancerArns: batch})
		if err != nil {
			return cloud.Classify("elbv2:DescribeLoadBalancers", err)
		}
		for _, lb := range out.LoadBalancers {
			for _, az := range lb.AvailabilityZones {
				zones[aws.ToString(lb.LoadBalancerArn)] = append(zones[aws.ToString(lb.LoadBalancerArn)], aws.ToString(az.ZoneName))
			}
		}
	}
	for tg, lbs := range lbsOf {
		var z []string
		for _, lb := range lbs {
			z = append(z, zones[lb]...)
		}
		slices.Sort(z)
		res.tgZones[tg] = slices.Compact(z)
	}
	return nil
}
