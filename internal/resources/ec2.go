package resources

import (
	"context"
	"slices"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/fanout"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/naming/tags"
	"github.com/ferryhq/ferry/internal/release"
)

// tagged is a resource found by a describe call.
type tagged struct {
	id   string
	name string // the name a reference may use besides the id
	tags map[string]string
	// What the call showed of where it is, for the placement checks: an
	// image's root device and architecture, a subnet's zone, a subnet's
	// or a security group's VPC.
	rootDevice, arch, zone, vpc string
}

// match returns the resources a reference names: by ID when isID, else by
// name.
func match(ref string, isID bool, found []tagged) []tagged {
	var out []tagged
	for _, f := range found {
		if (isID && f.id == ref) || (!isID && (f.name == ref || f.tags[naming.TagName] == ref)) {
			if !slices.ContainsFunc(out, func(o tagged) bool { return o.id == f.id }) {
				out = append(out, f)
			}
		}
	}
	return out
}

// one checks that a reference names exactly one resource and returns it.
func one(p *problems, u use, kind string, matches []tagged) (tagged, bool) {
	switch len(matches) {
	case 0:
		p.add(u.path, "%s %q not found", kind, u.ref)
		return tagged{}, false
	case 1:
		return matches[0], true
	}
	ids := make([]string, len(matches))
	for i, m := range matches {
		ids[i] = m.id
	}
	sort.Strings(ids)
	p.add(u.path, "%s %q matches %d resources (%s); it must match exactly one", kind, u.ref, len(ids), strings.Join(ids, ", "))
	return tagged{}, false
}

// checkDeployWith checks the DeployWith opt-in tag, and the projects a
// DeployProjects tag restricts the resource to (naming.ProjectListed).
func checkDeployWith(p *problems, r *release.Release, u use, kind string, t tagged) bool {
	if t.tags[naming.TagDeployWith] != naming.DeployWithValue {
		p.add(u.path, "%s %q (%s) is not tagged %s=%s", kind, u.ref, t.id, naming.TagDeployWith, naming.DeployWithValue)
		return false
	}
	if listed, restricted := t.tags[naming.TagDeployProjects]; restricted && !naming.ProjectListed(listed, r.ProjectName) {
		p.add(u.path, "%s %q (%s) is tagged %s=%q, which does not list project %s", kind, u.ref, t.id, naming.TagDeployProjects, listed, r.ProjectName)
		return false
	}
	return true
}

// checkOwner checks the ProjectName, ConfigName and ServiceName tags of a
// service's resource.
func checkOwner(p *problems, r *release.Release, u use, kind string, t tagged) bool {
	ok := true
	want := [][2]string{
		{naming.TagProjectName, r.ProjectName},
		{naming.TagConfigName, r.ConfigName},
		{naming.TagServiceName, u.service},
	}
	for _, w := range want {
		got, has := t.tags[w[0]]
		switch {
		case !has:
			p.add(u.path, "%s %q (%s) has no %s tag (it must be %q)", kind, u.ref, t.id, w[0], w[1])
			ok = false
		case got != w[1]:
			p.add(u.path, "%s %q (%s) is tagged %s=%q, not %q", kind, u.ref, t.id, w[0], got, w[1])
			ok = false
		}
	}
	return ok
}

// split separates references by ID (with prefix) from references by name.
func split(uses []use, prefix string) (ids, names []string) {
	for _, u := range uses {
		if strings.HasPrefix(u.ref, prefix) {
			if !slices.Contains(ids, u.ref) {
				ids = append(ids, u.ref)
			}
		} else if !slices.Contains(names, u.ref) {
			names = append(names, u.ref)
		}
	}
	sort.Strings(ids)
	sort.Strings(names)
	return ids, names
}

// refs returns the distinct references of uses, sorted.
func refs(uses []use) []string {
	var out []string
	for _, u := range uses {
		if !slices.Contains(out, u.ref) {
			out = append(out, u.ref)
		}
	}
	sort.Strings(out)
	return out
}

func filter(name string, values ...string) ec2types.Filter {
	return ec2types.Filter{Name: aws.String(name), Values: values}
}

// resolveImages resolves AMIs by ID or Name tag: exactly one image each,
// tagged DeployWith=ferry, and returns each found image's root device name.
// At most two DescribeImages calls (IDs, names).
// Filters are used rather than ImageIds so that a missing image is a
// problem to report, not an error for the whole call.
func resolveImages(ctx context.Context, api cloud.EC2, r *release.Release, uses []use, res *Resolved, p *problems) (images, rootDevices map[string]string, err error) {
	ids, names := split(uses, "ami-")
	found, err := describeEach(ctx, "ec2:DescribeImages", []ec2types.Filter{filter("image-id", ids...), filter("tag:Name", names...)},
		func(ctx context.Context, f ec2types.Filter, token *string) ([]tagged, *string, error) {
			out, err := api.DescribeImages(ctx, &ec2.DescribeImagesInput{Filters: []ec2types.Filter{f}, NextToken: token})
			if err != nil {
				return nil, nil, err
			}
			var found []tagged
			for _, img := range out.Images {
				t := tags.FromEC2(img.Tags)
				found = append(found, tagged{id: aws.ToString(img.ImageId), name: t[naming.TagName], tags: t,
					rootDevice: aws.ToString(img.RootDeviceName), arch: string(img.Architecture)})
			}
			return found, out.NextToken, nil
		})
	if err != nil {
		return nil, nil, err
	}
	rootDevices = map[string]string{}
	for _, f := range found {
		rootDevices[f.id], res.archOf[f.id] = f.rootDevice, f.arch
	}
	return pick(p, r, uses, "ami-", "image", found, checkDeployWith), rootDevices, nil
}

// resolveSubnets resolves subnets by ID or Name tag: each found once,
// tagged DeployWith=ferry. At most two DescribeSubnets calls.
func resolveSubnets(ctx context.Context, api cloud.EC2, r *release.Release, uses []use, res *Resolved, p *problems) (map[string]string, error) {
	ids, names := split(uses, "subnet-")
	found, err := describeEach(ctx, "ec2:DescribeSubnets", []ec2types.Filter{filter("subnet-id", ids...), filter("tag:Name", names...)},
		func(ctx context.Context, f ec2types.Filter, token *string) ([]tagged, *string, error) {
			out, err := api.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{Filters: []ec2types.Filter{f}, NextToken: token})
			if err != nil {
				return nil, nil, err
			}
			var found []tagged
			for _, s := range out.Subnets {
				t := tags.FromEC2(s.Tags)
				found = append(found, tagged{id: aws.ToString(s.SubnetId), name: t[naming.TagName], tags: t,
					zone: aws.ToString(s.AvailabilityZone), vpc: aws.ToString(s.VpcId)})
			}
			return found, out.NextToken, nil
		})
	if err != nil {
		return nil, err
	}
	for _, f := range found {
		res.zoneOf[f.id], res.vpcOf[f.id] = f.zone, f.vpc
	}
	return pick(p, r, uses, "subnet-", "subnet", found, checkDeployWith), nil
}

// resolveSecurityGroups resolves security groups by ID, group name or Name
// tag: each found once, tagged with the release's project, config and the
// using service. One DescribeSecurityGroups call when every reference is
// found by it: by group-id when every reference is an ID, else every
// group of the VPCs of the release's subnets (subnets, resolved already;
// a group name is unique in its VPC, and a group elsewhere fails the
// placement check anyway), matched here by ID, group name or Name tag.
// The references that finds nothing for (none of those VPCs'), and every
// one when no subnet resolved, are looked for account-wide by group-id,
// group-name and tag:Name, up to three calls more, so that a problem
// names what is wrong with the group they find.
func resolveSecurityGroups(ctx context.Context, api cloud.EC2, r *release.Release, uses []use, subnets map[string]string, res *Resolved, p *problems) (map[string]string, error) {
	if len(uses) == 0 {
		return map[string]string{}, nil
	}
	describe := func(ctx context.Context, f ec2types.Filter, token *string) ([]tagged, *string, error) {
		out, err := api.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{Filters: []ec2types.Filter{f}, NextToken: token})
		if err != nil {
			return nil, nil, err
		}
		var found []tagged
		for _, g := range out.SecurityGroups {
			found = append(found, tagged{id: aws.ToString(g.GroupId), name: aws.ToString(g.GroupName), tags: tags.FromEC2(g.Tags), vpc: aws.ToString(g.VpcId)})
		}
		return found, out.NextToken, nil
	}
	ids, names := split(uses, "sg-")
	first := filter("group-id", ids...)
	if len(names) > 0 {
		first = filter("vpc-id", vpcsOf(subnets, res.vpcOf)...)
	}
	found, err := describeEach(ctx, "ec2:DescribeSecurityGroups", []ec2types.Filter{first}, describe)
	if err != nil {
		return nil, err
	}
	var missing []use
	for _, u := range uses {
		if len(match(u.ref, strings.HasPrefix(u.ref, "sg-"), found)) == 0 {
			missing = append(missing, u)
		}
	}
	if len(missing) > 0 {
		ids, names := split(missing, "sg-")
		more, err := describeEach(ctx, "ec2:DescribeSecurityGroups",
			[]ec2types.Filter{filter("group-id", ids...), filter("group-name", names...), filter("tag:Name", names...)}, describe)
		if err != nil {
			return nil, err
		}
		found = append(found, more...)
	}
	for _, f := range found {
		res.vpcOf[f.id] = f.vpc
	}
	return pick(p, r, uses, "sg-", "security group", found, checkOwner), nil
}

// vpcsOf are the VPCs of the resolved subnets (by reference), sorted.
func vpcsOf(subnets, vpcOf map[string]string) []string {
	var out []string
	for _, id := range subnets {
		if v := vpcOf[id]; v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out
}

// describeEach calls describe with each filter that has values, the
// filters side by side (each following every page: describe returns the
// next page's token, empty after the last), and returns what they found,
// in the filters' order. A failure is classified as op (cloud.Classify).
func describeEach(ctx context.Context, op string, filters []ec2types.Filter,
	describe func(ctx context.Context, f ec2types.Filter, token *string) ([]tagged, *string, error)) ([]tagged, error) {
	filters = slices.DeleteFunc(slices.Clone(filters), func(f ec2types.Filter) bool { return len(f.Values) == 0 })
	found := make([][]tagged, len(filters))
	err := fanout.Each(ctx, len(filters), len(filters), func(ctx context.Context, i int) error {
		var token *string
		for {
			page, next, err := describe(ctx, filters[i], token)
			if err != nil {
				return cloud.Classify(op, err)
			}
			found[i] = append(found[i], page...)
			if aws.ToString(next) == "" {
				return nil
			}
			token = next
		}
	})
	if err != nil {
		return nil, err
	}
	return slices.Concat(found...), nil
}

// pick resolves each use to the one resource of found it names (by ID
// when it has prefix, else by name) that check accepts, and returns the
// IDs by reference; what it cannot resolve is a problem.
func pick(p *problems, r *release.Release, uses []use, prefix, kind string, found []tagged,
	check func(p *problems, r *release.Release, u use, kind string, t tagged) bool) map[string]string {
	out := map[string]string{}
	for _, u := range uses {
		t, ok := one(p, u, kind, match(u.ref, strings.HasPrefix(u.ref, prefix), found))
		if ok && check(p, r, u, kind, t) {
			out[u.ref] = t.id
		}
	}
	return out
}
