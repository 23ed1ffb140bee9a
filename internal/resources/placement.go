package resources

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/release"
)

// checkPlacement checks, before anything is created, that each service's
// instances could ever serve, so that a release that cannot become healthy
// fails at once instead of waiting out its timeout:
//
//   - its subnets are in one VPC, and its security groups in that VPC
//     (EC2 refuses to launch otherwise: "Security group ... and subnet ...
//     belong to different networks");
//   - every zone of its subnets is one each of its classic load balancers
//     routes to, and one the load balancers of each of its target groups
//     enable; a target group no load balancer uses is refused (its targets
//     would stay unused, Target.NotInUse);
//   - its image's architecture is one its instance type runs (one
//     DescribeInstanceTypes call for every distinct type).
//
// Resources that did not resolve are not checked again (they are problems
// already).
func checkPlacement(ctx context.Context, api cloud.EC2, r *release.Release, u uses, res *Resolved, p *problems) error {
	for _, svc := range r.ServiceNames() {
		var subnets []use
		for _, u := range u.subnets {
			if u.service == svc && res.Subnets[u.ref] != "" {
				subnets = append(subnets, u)
			}
		}
		vpcs := map[string]bool{}
		for _, u := range subnets {
			vpcs[res.vpcOf[res.Subnets[u.ref]]] = true
		}
		if len(vpcs) > 1 {
			p.add(subnets[0].path[:strings.LastIndex(subnets[0].path, "[")], "the subnets of service %s are in %d VPCs (%s); an Auto Scaling group's subnets must be in one",
				svc, len(vpcs), strings.Join(slices.Sorted(maps.Keys(vpcs)), ", "))
			continue
		}
		vpc := ""
		for v := range vpcs {
			vpc = v
		}
		for _, u := range u.groups {
			id := res.SecurityGroups[u.ref]
			if u.service == svc && id != "" && vpc != "" && res.vpcOf[id] != vpc {
				p.add(u.path, "security group %q (%s) is in %s, not in %s, the VPC of the service's subnets", u.ref, id, res.vpcOf[id], vpc)
			}
		}
		for _, lb := range u.elbs {
			zones, ok := res.elbZones[lb.ref]
			if lb.service != svc || !ok {
				continue
			}
			for _, u := range subnets {
				if zone := res.zoneOf[res.Subnets[u.ref]]; !slices.Contains(zones, zone) {
					p.add(u.path, "subnet %q is in %s, which load balancer %q does not route to (it routes to %s): instances there would never serve",
						u.ref, zone, lb.ref, strings.Join(zones, ", "))
				}
			}
		}
		for _, tg := range u.targetGroups {
			arn := res.TargetGroups[tg.ref]
			if tg.service != svc || arn == "" {
				continue
			}
			zones := res.tgZones[arn]
			if len(zones) == 0 {
				p.add(tg.path, "target group %q is used by no load balancer: its targets would stay unused (Target.NotInUse)", tg.ref)
				continue
			}
			for _, u := range subnets {
				if zone := res.zoneOf[res.Subnets[u.ref]]; !slices.Contains(zones, zone) {
					p.add(u.path, "subnet %q is in %s, which no load balancer of target group %q enables (they enable %s): instances there would never serve",
						u.ref, zone, tg.ref, strings.Join(zones, ", "))
				}
			}
		}
	}
	return checkArchitectures(ctx, api, r, res, p)
}

// checkArchitectures checks that each service's image has an architecture
// its instance type runs. An instance type EC2 does not know is a problem
// too.
func checkArchitectures(ctx context.Context, api cloud.EC2, r *release.Release, res *Resolved, p *problems) error {
	types := map[string]bool{}
	for _, svc := range r.ServiceNames() {
		types[r.Services[svc].InstanceType] = true
	}
	archs := map[string][]string{}
	collect := func(out *ec2.DescribeInstanceTypesOutput) {
		for _, it := range out.InstanceTypes {
			for _, a := range it.ProcessorInfo.SupportedArchitectures {
				archs[string(it.InstanceType)] = append(archs[string(it.InstanceType)], string(a))
			}
		}
	}
	names := slices.Sorted(maps.Keys(types))
	in := func(names ...string) *ec2.DescribeInstanceTypesInput {
		out := &ec2.DescribeInstanceTypesInput{}
		for _, n := range names {
			out.InstanceTypes = append(out.InstanceTypes, ec2types.InstanceType(n))
		}
		return out
	}
	out, err := api.DescribeInstanceTypes(ctx, in(names...))
	switch {
	case err == nil:
		collect(out)
	case cloud.IsCode(err, cloud.CodeInvalidInstanceType):
		// One unknown type fails the call: ask one by one to name it.
		for _, n := range names {
			one, err := api.DescribeInstanceTypes(ctx, in(n))
			switch {
			case err == nil:
				collect(one)
			case !cloud.IsCode(err, cloud.CodeInvalidInstanceType):
				return cloud.Classify("ec2:DescribeInstanceTypes", err)
			}
		}
	default:
		return cloud.Classify("ec2:DescribeInstanceTypes", err)
	}
	for _, svc := range r.ServiceNames() {
		it := r.Services[svc].InstanceType
		supported, known := archs[it]
		if !known {
			p.add("services."+svc+".instance_type", "instance type %q does not exist in the target region", it)
			continue
		}
		image := res.Images[r.ServiceAMI(svc)]
		if arch := res.archOf[image]; image != "" && arch != "" && !slices.Contains(supported, arch) {
			p.add("services."+svc+".instance_type", "instance type %q runs %s, but image %q (%s) is %s: no instance could launch",
				it, strings.Join(supported, ", "), r.ServiceAMI(svc), image, arch)
		}
	}
	return nil
}
