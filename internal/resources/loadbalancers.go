package resources

import (
	"context"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/fanout"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/naming/tags"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/tuning"
)

// checkLoadBalancers checks classic load balancers by name: each exists
// and is tagged with the release's project, config and the using service.
// One DescribeLoadBalancers call for all (per name only to find which are
// missing when some are), then, side by side, DescribeTags in batches and
// their attributes (withoutDraining).
func checkLoadBalancers(ctx context.Context, api cloud.ELB, r *release.Release, uses []use, res *Resolved, p *problems) error {
	if len(uses) == 0 {
		return nil
	}
	names := refs(uses)
	exists, err := describeELBs(ctx, api, names, res)
	if err != nil {
		return err
	}
	var present []string
	for _, n := range names {
		if exists[n] {
			present = append(present, n)
		}
	}
	// Their tags and their attributes read nothing of each other's.
	var (
		found     map[string]map[string]string
		undrained map[string]bool
	)
	err = beside(ctx, func(ctx context.Context) (err error) {
		found, err = elbTags(ctx, api, present)
		return err
	}, func(ctx context.Context) (err error) {
		undrained, err = withoutDraining(ctx, api, present)
		return err
	})
	if err != nil {
		return err
	}
	for _, u := range uses {
		if !exists[u.ref] {
			p.add(u.path, "load balancer %q not found", u.ref)
			continue
		}
		checkOwner(p, r, u, "load balancer", tagged{id: u.ref, tags: found[u.ref]})
		if undrained[u.ref] {
			p.add(u.path, "load balancer %q has connection draining disabled (the default of one made with the API or CLI): "+
				"every instance it deregisters, at a swap, a rollback or a scale-in, loses its in-flight requests. Enable it: "+
				"aws elb modify-load-balancer-attributes --load-balancer-name %s --load-balancer-attributes '{\"ConnectionDraining\":{\"Enabled\":true,\"Timeout\":300}}'",
				u.ref, u.ref)
		}
	}
	return nil
}

// withoutDraining reports which of the classic load balancers names have
// connection draining disabled (DescribeLoadBalancerAttributes, one call
// each, tuning.DescribeParallel at a time): deregistering an instance
// from one cuts its in-flight requests, so ferry refuses a release that
// names one.
func withoutDraining(ctx context.Context, api cloud.ELB, names []string) (map[string]bool, error) {
	undrained := make([]bool, len(names))
	err := fanout.Each(ctx, tuning.DescribeParallel, len(names), func(ctx context.Context, i int) error {
		attrs, err := api.DescribeLoadBalancerAttributes(ctx, &elb.DescribeLoadBalancerAttributesInput{LoadBalancerName: aws.String(names[i])})
		if err != nil {
			return cloud.Classify("elb:DescribeLoadBalancerAttributes", err)
		}
		a := attrs.LoadBalancerAttributes
		undrained[i] = a == nil || a.ConnectionDraining == nil || !a.ConnectionDraining.Enabled
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for i, name := range names {
		if undrained[i] {
			out[name] = true
		}
	}
	return out, nil
}

// describeELBs reports which of the classic load balancers names exist,
// recording the zones each routes to (res.elbZones): one
// DescribeLoadBalancers call for all, and one per name only to find which
// are missing when some are.
func describeELBs(ctx context.Context, api cloud.ELB, names []string, res *Resolved) (map[string]bool, error) {
	exists := map[string]bool{}
	out, err := api.DescribeLoadBalancers(ctx, &elb.DescribeLoadBalancersInput{LoadBalancerNames: names})
	switch {
	case err == nil:
		for _, lb := range out.LoadBalancerDescriptions {
			exists[aws.ToString(lb.LoadBalancerName)] = true
			res.elbZones[aws.ToString(lb.LoadBalancerName)] = lb.AvailabilityZones
		}
		return exists, nil
	case !cloud.IsNotFoundCode(err, cloud.CodeLoadBalancerNotFound):
		return nil, cloud.Classify("elb:DescribeLoadBalancers", err)
	}
	for _, name := range names {
		one, err := api.DescribeLoadBalancers(ctx, &elb.DescribeLoadBalancersInput{LoadBalancerNames: []string{name}})
		switch {
		case err == nil:
			exists[name] = len(one.LoadBalancerDescriptions) > 0
			for _, lb := range one.LoadBalancerDescriptions {
				res.elbZones[aws.ToString(lb.LoadBalancerName)] = lb.AvailabilityZones
			}
		case !cloud.IsNotFoundCode(err, cloud.CodeLoadBalancerNotFound):
			return nil, cloud.Classify("elb:DescribeLoadBalancers", err)
		}
	}
	return exists, nil
}

// elbTags returns the tags of the classic load balancers names, by name
// (DescribeTags in batches).
func elbTags(ctx context.Context, api cloud.ELB, names []string) (map[string]map[string]string, error) {
	found := map[string]map[string]string{}
	for batch := range slices.Chunk(names, tuning.DescribeBatch) {
		out, err := api.DescribeTags(ctx, &elb.DescribeTagsInput{LoadBalancerNames: batch})
		if err != nil {
			return nil, cloud.Classify("elb:DescribeTags", err)
		}
		for _, td := range out.TagDescriptions {
			found[aws.ToString(td.LoadBalancerName)] = tags.FromELB(td.Tags)
		}
	}
	return found, nil
}

// resolveTargetGroups resolves target groups by name to their ARNs: each
// exists and is tagged with the release's project, config and the using
// service. One DescribeTargetGroups call for all (per name only to find
// which are missing when some are), then, side by side, DescribeTags in
// batches and their load balancers' zones (targetGroupZones).
func resolveTargetGroups(ctx context.Context, api cloud.ELBv2, r *release.Release, uses []use, res *Resolved, p *problems) (map[string]string, error) {
	if len(uses) == 0 {
		return map[string]string{}, nil
	}
	names := refs(uses)
	arns, lbsOf, err := describeTargetGroups(ctx, api, names)
	if err != nil {
		return nil, err
	}
	// Their tags and their load balancers' zones read nothing of each
	// other's.
	var found map[string]map[string]string
	err = beside(ctx, func(ctx context.Context) (err error) {
		found, err = targetGroupTags(ctx, api, names, arns)
		return err
	}, func(ctx context.Context) error { return targetGroupZones(ctx, api, lbsOf, res) })
	if err != nil {
		return nil, err
	}
	for _, u := range uses {
		arn, ok := arns[u.ref]
		if !ok {
			p.add(u.path, "target group %q not found", u.ref)
			continue
		}
		checkOwner(p, r, u, "target group", tagged{id: arn, tags: found[u.ref]})
	}
	return arns, nil
}

// TargetGroups returns the ARN of each of the target groups names that
// exists, by name, and the load balancers that use each, by ARN (see
// describeTargetGroups). A name that is not found is left out.
func TargetGroups(ctx context.Context, api cloud.ELBv2, names []string) (arns map[string]string, lbsOf map[string][]string, err error) {
	if len(names) == 0 {
		return map[string]string{}, map[string][]string{}, nil
	}
	return describeTargetGroups(ctx, api, names)
}

// describeTargetGroups returns the ARN of each of the target groups names
// that exists, by name, and the load balancers that use each, by ARN: one
// DescribeTargetGroups call for all, and one per name only to find which
// are missing when some are.
func describeTargetGroups(ctx context.Context, api cloud.ELBv2, names []string) (arns map[string]string, lbsOf map[string][]string, err error) {
	arns, lbsOf = map[string]string{}, map[string][]string{}
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
		return arns, lbsOf, nil
	case !cloud.IsNotFoundCode(err, cloud.CodeTargetGroupNotFound):
		return nil, nil, cloud.Classify("elbv2:DescribeTargetGroups", err)
	}
	for _, name := range names {
		one, err := api.DescribeTargetGroups(ctx, &elbv2.DescribeTargetGroupsInput{Names: []string{name}})
		switch {
		case err == nil:
			collect(one)
		case !cloud.IsNotFoundCode(err, cloud.CodeTargetGroupNotFound):
			return nil, nil, cloud.Classify("elbv2:DescribeTargetGroups", err)
		}
	}
	return arns, lbsOf, nil
}

// targetGroupTags returns the tags of the target groups names that exist
// (arns), by name (DescribeTags in batches).
func targetGroupTags(ctx context.Context, api cloud.ELBv2, names []string, arns map[string]string) (map[string]map[string]string, error) {
	var present []string
	byARN := map[string]string{}
	for _, n := range names {
		if arn, ok := arns[n]; ok {
			present = append(present, arn)
			byARN[arn] = n
		}
	}
	batches := slices.Collect(slices.Chunk(present, tuning.DescribeBatch))
	outs := make([]*elbv2.DescribeTagsOutput, len(batches))
	err := fanout.Each(ctx, tuning.DescribeParallel, len(batches), func(ctx context.Context, i int) error {
		out, err := api.DescribeTags(ctx, &elbv2.DescribeTagsInput{ResourceArns: batches[i]})
		if err != nil {
			return cloud.Classify("elbv2:DescribeTags", err)
		}
		outs[i] = out
		return nil
	})
	if err != nil {
		return nil, err
	}
	found := map[string]map[string]string{}
	for _, out := range outs {
		for _, td := range out.TagDescriptions {
			found[byARN[aws.ToString(td.ResourceArn)]] = tags.FromELBv2(td.Tags)
		}
	}
	return found, nil
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
	batches := slices.Collect(slices.Chunk(all, limits.DescribeLoadBalancersBatch))
	outs := make([]*elbv2.DescribeLoadBalancersOutput, len(batches))
	err := fanout.Each(ctx, tuning.DescribeParallel, len(batches), func(ctx context.Context, i int) error {
		out, err := api.DescribeLoadBalancers(ctx, &elbv2.DescribeLoadBalancersInput{LoadBalancerArns: batches[i]})
		if err != nil {
			return cloud.Classify("elbv2:DescribeLoadBalancers", err)
		}
		outs[i] = out
		return nil
	})
	if err != nil {
		return err
	}
	zones := map[string][]string{}
	for _, out := range outs {
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
