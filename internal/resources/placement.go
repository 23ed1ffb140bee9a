package resources

import (
	"context"
	"fmt"
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
//   - its image's architecture is one its instance type runs (archs,
//     instanceArchitectures).
//
// Resources that did not resolve are not checked again (they are problems
// already). It reads nothing: what it checks was read before.
func checkPlacement(r *release.Release, u uses, res *Resolved, archs map[string][]string, p *problems) {
	for _, svc := range r.ServiceNames() {
		var subnets []use
		for _, s := range u.subnets {
			if s.service == svc && res.Subnets[s.ref] != "" {
				subnets = append(subnets, s)
			}
		}
		vpc, ok := oneVPC(svc, subnets, res, p)
		if !ok {
			continue
		}
		checkGroupVPCs(svc, vpc, u.groups, res, p)
		checkELBZones(svc, subnets, u.elbs, res, p)
		checkTargetGroupZones(svc, subnets, u.targetGroups, res, p)
	}
	checkArchitectures(r, res, archs, p)
}

// oneVPC is the VPC of the resolved subnets of service svc ("" when none
// resolved); ok is false, and a problem added, when they are in more
// than one.
func oneVPC(svc string, subnets []use, res *Resolved, p *problems) (vpc string, ok bool) {
	vpcs := map[string]bool{}
	for _, u := range subnets {
		vpcs[res.vpcOf[res.Subnets[u.ref]]] = true
	}
	if len(vpcs) > 1 {
		p.add(subnets[0].path[:strings.LastIndex(subnets[0].path, "[")], "the subnets of service %s are in %d VPCs (%s); an Auto Scaling group's subnets must be in one",
			svc, len(vpcs), strings.Join(slices.Sorted(maps.Keys(vpcs)), ", "))
		return "", false
	}
	for v := range vpcs {
		vpc = v
	}
	return vpc, true
}

// checkGroupVPCs checks that the resolved security groups of service svc
// are in vpc, the VPC of its subnets.
func checkGroupVPCs(svc, vpc string, groups []use, res *Resolved, p *problems) {
	for _, u := range groups {
		id := res.SecurityGroups[u.ref]
		if u.service == svc && id != "" && vpc != "" && res.vpcOf[id] != vpc {
			p.add(u.path, "security group %q (%s) is in %s, not in %s, the VPC of the service's subnets", u.ref, id, res.vpcOf[id], vpc)
		}
	}
}

// checkELBZones checks that each classic load balancer of service svc
// routes to the zone of each of its subnets.
func checkELBZones(svc string, subnets, elbs []use, res *Resolved, p *problems) {
	for _, lb := range elbs {
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
}

// checkTargetGroupZones checks that each target group of service svc is
// used by some load balancer, and that its load balancers enable the zone
// of each of the service's subnets.
func checkTargetGroupZones(svc string, subnets, targetGroups []use, res *Resolved, p *problems) {
	for _, tg := range targetGroups {
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

// instanceArchitectures reads the architectures each instance type r
// names runs (instance_type, or each type its mixed instances policy
// names; types chosen by instance requirements are Auto Scaling's to
// match), by type: a type EC2 does not know is missing (architectures).
// It needs nothing resolved: it is read beside the images.
func instanceArchitectures(ctx context.Context, api cloud.EC2, r *release.Release) (map[string][]string, error) {
	types := map[string]bool{}
	for _, svc := range r.ServiceNames() {
		for _, t := range typesOf(r.Services[svc]) {
			types[t.name] = true
		}
	}
	if len(types) == 0 {
		return nil, nil
	}
	return architectures(ctx, api, slices.Sorted(maps.Keys(types)))
}

// checkArchitectures checks that each service's image has an architecture
// its instance types run (archs, instanceArchitectures). An instance type
// EC2 does not know is a problem too.
func checkArchitectures(r *release.Release, res *Resolved, archs map[string][]string, p *problems) {
	for _, svc := range r.ServiceNames() {
		for _, t := range typesOf(r.Services[svc]) {
			path := "services." + svc + "." + t.path
			supported, known := archs[t.name]
			if !known {
				p.add(path, "instance type %q does not exist in the target region", t.name)
				continue
			}
			image := res.Images[r.ServiceAMI(svc)]
			if arch := res.archOf[image]; image != "" && arch != "" && !slices.Contains(supported, arch) {
				p.add(path, "instance type %q runs %s, but image %q (%s) is %s: no instance could launch",
					t.name, strings.Join(supported, ", "), r.ServiceAMI(svc), image, arch)
			}
		}
	}
}

// namedType is an instance type a service names, and the path of the
// field that names it.
type namedType struct{ name, path string }

// typesOf are the instance types service s names.
func typesOf(s *release.Service) []namedType {
	if s.MixedInstances == nil {
		return []namedType{{s.InstanceType, "instance_type"}}
	}
	var out []namedType
	for i, o := range s.MixedInstances.Overrides {
		if o.InstanceType != "" {
			out = append(out, namedType{o.InstanceType, fmt.Sprintf("mixed_instances.overrides[%d].instance_type", i)})
		}
	}
	return out
}

// architectures returns the architectures each of the instance types
// names runs, by type; a type EC2 does not know is missing. One
// DescribeInstanceTypes call for all, and one per type only to find which
// is unknown when one is (it fails the whole call).
func architectures(ctx context.Context, api cloud.EC2, names []string) (map[string][]string, error) {
	archs := map[string][]string{}
	collect := func(out *ec2.DescribeInstanceTypesOutput) {
		for _, it := range out.InstanceTypes {
			for _, a := range it.ProcessorInfo.SupportedArchitectures {
				archs[string(it.InstanceType)] = append(archs[string(it.InstanceType)], string(a))
			}
		}
	}
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
		return archs, nil
	case !cloud.IsCode(err, cloud.CodeInvalidInstanceType):
		return nil, cloud.Classify("ec2:DescribeInstanceTypes", err)
	}
	for _, n := range names {
		one, err := api.DescribeInstanceTypes(ctx, in(n))
		switch {
		case err == nil:
			collect(one)
		case !cloud.IsCode(err, cloud.CodeInvalidInstanceType):
			return nil, cloud.Classify("ec2:DescribeInstanceTypes", err)
		}
	}
	return archs, nil
}
