package deployer

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/fleet"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/tags"
)

// resources is everything a release names, resolved in its target.
type resources struct {
	// images, subnets and groups map a reference (ID or name) to its ID.
	images map[string]string
	// rootDevices maps an image ID to its root device name.
	rootDevices map[string]string
	subnets     map[string]string
	groups      map[string]string
	// targetGroups maps a target group name to its ARN.
	targetGroups map[string]string
	// hookRoles maps a lifecycle hook's role reference to the role's ARN;
	// hookTopics a hook's topic reference to the topic's ARN.
	hookRoles  map[string]string
	hookTopics map[string]string
	// previous maps a service to its previous ASG (absent: a new service).
	previous map[string]asgtypes.AutoScalingGroup

	// Where things are, for the placement checks (placement.go): the
	// zone of each subnet, the VPC of each subnet and security group, by
	// id; each image's architecture; the zones each classic load balancer
	// routes to, by name; the zones the load balancers of each target
	// group enable, by ARN (none: no load balancer uses it).
	zoneOf, vpcOf map[string]string
	archOf        map[string]string
	elbZones      map[string][]string
	tgZones       map[string][]string
}

// loadAndConnect is how a task that works in the target starts: the
// release the State names (loadRelease) and the clients of its target
// (connect, with badRelease), the first error as it is.
func (d *Deployer) loadAndConnect(ctx context.Context, st *execution.State, badRelease bool) (*release.Release, *cloud.Clients, error) {
	r, err := d.loadRelease(ctx, st)
	if err != nil {
		return nil, nil, err
	}
	c, err := d.connect(ctx, st, badRelease)
	if err != nil {
		return nil, nil, err
	}
	return r, c, nil
}

// connect returns the clients of the State's target. A target that cannot
// be reached because its roles are missing is a bad release when
// badRelease is set (the release names the target), else a deploy error.
func (d *Deployer) connect(ctx context.Context, st *execution.State, badRelease bool) (*cloud.Clients, error) {
	clients, err := d.connector.Connect(ctx, st.Target, cloud.Session{Project: st.ProjectName, Config: st.ConfigName, ReleaseID: st.ReleaseID})
	if err == nil {
		return clients, nil
	}
	err = cloud.Classify("connect", err)
	if failure.IsRetryable(err) {
		return nil, err
	}
	if badRelease {
		return nil, failure.BadRelease(fmt.Sprintf("target %s/%s: %v", st.Target.AccountID, st.Target.Region, err))
	}
	return nil, &failure.DeployError{Op: "connect to " + st.Target.AccountID + "/" + st.Target.Region, Err: err}
}

// problems collects "path: message" problems without duplicates.
type problems struct {
	list []string
	seen map[string]bool
}

func (p *problems) add(path, format string, args ...any) {
	msg := path + ": " + fmt.Sprintf(format, args...)
	if p.seen == nil {
		p.seen = map[string]bool{}
	}
	if !p.seen[msg] {
		p.seen[msg] = true
		p.list = append(p.list, msg)
	}
}

// use is one place a release names a resource.
type use struct {
	path    string
	ref     string
	service string // "" for release-level references
}

// launchTemplateNameRe is what EC2 allows in a launch template name.
var launchTemplateNameRe = regexp.MustCompile(`^[a-zA-Z0-9().\-/_]+$`)

// resolve resolves and checks every resource of r in the target. AWS
// failures are returned as errors (transient ones retryable); problems with
// the resources as one *failure.BadReleaseError.
func (d *Deployer) resolve(ctx context.Context, c *cloud.Clients, st *execution.State, r *release.Release) (*resources, error) {
	res := &resources{
		zoneOf: map[string]string{}, vpcOf: map[string]string{}, archOf: map[string]string{},
		elbZones: map[string][]string{}, tgZones: map[string][]string{},
	}
	p := &problems{}
	services := r.ServiceNames()

	var amiUses, subnetUses, sgUses, elbUses, tgUses []use
	profiles := map[string][]string{} // profile -> services
	for _, name := range services {
		s := r.Services[name]
		sp := "services." + name
		group := naming.GroupName(r.ProjectName, r.ConfigName, name, r.ReleaseID)
		if len(group) > limits.LaunchTemplateNameLen || !launchTemplateNameRe.MatchString(group) {
			p.add(sp, "the group name %q is not a valid launch template name (at most %d of a-z A-Z 0-9 ( ) . - / _)", group, limits.LaunchTemplateNameLen)
		}
		amiPath := "ami"
		if s.AMI != "" {
			amiPath = sp + ".ami"
		}
		amiUses = append(amiUses, use{amiPath, r.ServiceAMI(name), name})
		subnetPath := "subnets"
		if len(s.Subnets) > 0 {
			subnetPath = sp + ".subnets"
		}
		for i, ref := range r.ServiceSubnets(name) {
			subnetUses = append(subnetUses, use{fmt.Sprintf("%s[%d]", subnetPath, i), ref, name})
		}
		for i, ref := range s.SecurityGroups {
			sgUses = append(sgUses, use{fmt.Sprintf("%s.security_groups[%d]", sp, i), ref, name})
		}
		for i, ref := range s.ELBs {
			elbUses = append(elbUses, use{fmt.Sprintf("%s.elbs[%d]", sp, i), ref, name})
		}
		for i, ref := range s.TargetGroups {
			tgUses = append(tgUses, use{fmt.Sprintf("%s.target_groups[%d]", sp, i), ref, name})
		}
		if s.Profile != "" {
			profiles[s.Profile] = append(profiles[s.Profile], name)
		}
	}

	var err error
	if res.images, res.rootDevices, err = d.resolveImages(ctx, c.EC2, r, amiUses, res, p); err != nil {
		return nil, err
	}
	if res.subnets, err = d.resolveSubnets(ctx, c.EC2, r, subnetUses, res, p); err != nil {
		return nil, err
	}
	if res.groups, err = d.resolveSecurityGroups(ctx, c.EC2, r, sgUses, res, p); err != nil {
		return nil, err
	}
	if err = d.checkLoadBalancers(ctx, c.ELB, r, elbUses, res, p); err != nil {
		return nil, err
	}
	if res.targetGroups, err = d.resolveTargetGroups(ctx, c.ELBv2, r, tgUses, res, p); err != nil {
		return nil, err
	}
	if err = d.checkPlacement(ctx, c.EC2, r, placementUses{subnets: subnetUses, groups: sgUses, elbs: elbUses, targetGroups: tgUses}, res, p); err != nil {
		return nil, err
	}
	if err = d.checkProfiles(ctx, c.IAM, r, profiles, p); err != nil {
		return nil, err
	}
	if res.hookRoles, res.hookTopics, err = d.checkHooks(ctx, c, r, p); err != nil {
		return nil, err
	}
	if res.previous, err = d.previousGroups(ctx, c.AutoScaling, st, p); err != nil {
		return nil, err
	}
	if len(p.list) > 0 {
		return nil, failure.BadRelease(p.list...)
	}
	return res, nil
}

// tagged is a resource found by a describe call.
type tagged struct {
	id   string
	name string // the name a reference may use besides the id
	tags map[string]string
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
func (d *Deployer) resolveImages(ctx context.Context, api cloud.EC2, r *release.Release, uses []use, res *resources, p *problems) (images, rootDevices map[string]string, err error) {
	ids, names := split(uses, "ami-")
	var found []tagged
	rootDevices = map[string]string{}
	for _, f := range []ec2types.Filter{filter("image-id", ids...), filter("tag:Name", names...)} {
		if len(f.Values) == 0 {
			continue
		}
		in := &ec2.DescribeImagesInput{Filters: []ec2types.Filter{f}}
		for {
			out, err := api.DescribeImages(ctx, in)
			if err != nil {
				return nil, nil, cloud.Classify("ec2:DescribeImages", err)
			}
			for _, img := range out.Images {
				t := tags.FromEC2(img.Tags)
				found = append(found, tagged{id: aws.ToString(img.ImageId), name: t[naming.TagName], tags: t})
				rootDevices[aws.ToString(img.ImageId)] = aws.ToString(img.RootDeviceName)
				res.archOf[aws.ToString(img.ImageId)] = string(img.Architecture)
			}
			if aws.ToString(out.NextToken) == "" {
				break
			}
			in.NextToken = out.NextToken
		}
	}
	out := map[string]string{}
	for _, u := range uses {
		t, ok := one(p, u, "image", match(u.ref, strings.HasPrefix(u.ref, "ami-"), found))
		if ok && checkDeployWith(p, r, u, "image", t) {
			out[u.ref] = t.id
		}
	}
	return out, rootDevices, nil
}

// resolveSubnets resolves subnets by ID or Name tag: each found once,
// tagged DeployWith=ferry. At most two DescribeSubnets calls.
func (d *Deployer) resolveSubnets(ctx context.Context, api cloud.EC2, r *release.Release, uses []use, res *resources, p *problems) (map[string]string, error) {
	ids, names := split(uses, "subnet-")
	var found []tagged
	for _, f := range []ec2types.Filter{filter("subnet-id", ids...), filter("tag:Name", names...)} {
		if len(f.Values) == 0 {
			continue
		}
		in := &ec2.DescribeSubnetsInput{Filters: []ec2types.Filter{f}}
		for {
			out, err := api.DescribeSubnets(ctx, in)
			if err != nil {
				return nil, cloud.Classify("ec2:DescribeSubnets", err)
			}
			for _, s := range out.Subnets {
				t := tags.FromEC2(s.Tags)
				found = append(found, tagged{id: aws.ToString(s.SubnetId), name: t[naming.TagName], tags: t})
				res.zoneOf[aws.ToString(s.SubnetId)] = aws.ToString(s.AvailabilityZone)
				res.vpcOf[aws.ToString(s.SubnetId)] = aws.ToString(s.VpcId)
			}
			if aws.ToString(out.NextToken) == "" {
				break
			}
			in.NextToken = out.NextToken
		}
	}
	out := map[string]string{}
	for _, u := range uses {
		t, ok := one(p, u, "subnet", match(u.ref, strings.HasPrefix(u.ref, "subnet-"), found))
		if ok && checkDeployWith(p, r, u, "subnet", t) {
			out[u.ref] = t.id
		}
	}
	return out, nil
}

// resolveSecurityGroups resolves security groups by ID, group name or Name
// tag: each found once, tagged with the release's project, config and the
// using service. At most three DescribeSecurityGroups calls.
func (d *Deployer) resolveSecurityGroups(ctx context.Context, api cloud.EC2, r *release.Release, uses []use, res *resources, p *problems) (map[string]string, error) {
	if len(uses) == 0 {
		return map[string]string{}, nil
	}
	ids, names := split(uses, "sg-")
	var found []tagged
	for _, f := range []ec2types.Filter{filter("group-id", ids...), filter("group-name", names...), filter("tag:Name", names...)} {
		if len(f.Values) == 0 {
			continue
		}
		in := &ec2.DescribeSecurityGroupsInput{Filters: []ec2types.Filter{f}}
		for {
			out, err := api.DescribeSecurityGroups(ctx, in)
			if err != nil {
				return nil, cloud.Classify("ec2:DescribeSecurityGroups", err)
			}
			for _, g := range out.SecurityGroups {
				found = append(found, tagged{id: aws.ToString(g.GroupId), name: aws.ToString(g.GroupName), tags: tags.FromEC2(g.Tags)})
				res.vpcOf[aws.ToString(g.GroupId)] = aws.ToString(g.VpcId)
			}
			if aws.ToString(out.NextToken) == "" {
				break
			}
			in.NextToken = out.NextToken
		}
	}
	out := map[string]string{}
	for _, u := range uses {
		t, ok := one(p, u, "security group", match(u.ref, strings.HasPrefix(u.ref, "sg-"), found))
		if ok && checkOwner(p, r, u, "security group", t) {
			out[u.ref] = t.id
		}
	}
	return out, nil
}

// checkLoadBalancers checks classic load balancers by name: each exists
// and is tagged with the release's project, config and the using service.
// One DescribeLoadBalancers call for all (per name only to find which are
// missing when some are), and DescribeTags in batches.
func (d *Deployer) checkLoadBalancers(ctx context.Context, api cloud.ELB, r *release.Release, uses []use, res *resources, p *problems) error {
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
	tags := map[string]map[string]string{}
	for batch := range slices.Chunk(present, limits.DescribeBatch) {
		out, err := api.DescribeTags(ctx, &elb.DescribeTagsInput{LoadBalancerNames: batch})
		if err != nil {
			return cloud.Classify("elb:DescribeTags", err)
		}
		for _, td := range out.TagDescriptions {
			m := map[string]string{}
			for _, t := range td.Tags {
				m[aws.ToString(t.Key)] = aws.ToString(t.Value)
			}
			tags[aws.ToString(td.LoadBalancerName)] = m
		}
	}
	for _, u := range uses {
		if !exists[u.ref] {
			p.add(u.path, "load balancer %q not found", u.ref)
			continue
		}
		checkOwner(p, r, u, "load balancer", tagged{id: u.ref, tags: tags[u.ref]})
	}
	return nil
}

// resolveTargetGroups resolves target groups by name to their ARNs: each
// exists and is tagged with the release's project, config and the using
// service. One DescribeTargetGroups call for all (per name only to find
// which are missing when some are), and DescribeTags in batches.
func (d *Deployer) resolveTargetGroups(ctx context.Context, api cloud.ELBv2, r *release.Release, uses []use, res *resources, p *problems) (map[string]string, error) {
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
	tags := map[string]map[string]string{}
	for batch := range slices.Chunk(present, limits.DescribeBatch) {
		out, err := api.DescribeTags(ctx, &elbv2.DescribeTagsInput{ResourceArns: batch})
		if err != nil {
			return nil, cloud.Classify("elbv2:DescribeTags", err)
		}
		for _, td := range out.TagDescriptions {
			m := map[string]string{}
			for _, t := range td.Tags {
				m[aws.ToString(t.Key)] = aws.ToString(t.Value)
			}
			tags[byARN[aws.ToString(td.ResourceArn)]] = m
		}
	}
	for _, u := range uses {
		arn, ok := arns[u.ref]
		if !ok {
			p.add(u.path, "target group %q not found", u.ref)
			continue
		}
		checkOwner(p, r, u, "target group", tagged{id: arn, tags: tags[u.ref]})
	}
	return arns, d.targetGroupZones(ctx, api, lbsOf, res)
}

// targetGroupZones records, for each target group, the zones its load
// balancers enable (res.tgZones; none for a target group no load balancer
// uses). DescribeLoadBalancers in batches of 20 load balancers.
func (d *Deployer) targetGroupZones(ctx context.Context, api cloud.ELBv2, lbsOf map[string][]string, res *resources) error {
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

// checkProfiles checks that each instance profile exists and that its path,
// and the path of each of its roles, is the using service's
// /<project>/<config>/<service>/. One GetInstanceProfile per distinct
// profile.
func (d *Deployer) checkProfiles(ctx context.Context, api cloud.IAM, r *release.Release, profiles map[string][]string, p *problems) error {
	for _, name := range slices.Sorted(maps.Keys(profiles)) {
		out, err := api.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)})
		if cloud.IsNotFoundCode(err, cloud.CodeNoSuchEntity) {
			for _, svc := range profiles[name] {
				p.add("services."+svc+".profile", "instance profile %q not found", name)
			}
			continue
		}
		if err != nil {
			return cloud.Classify("iam:GetInstanceProfile", err)
		}
		path := ""
		var roles []iamtypes.Role
		if out.InstanceProfile != nil {
			path = aws.ToString(out.InstanceProfile.Path)
			roles = out.InstanceProfile.Roles
		}
		for _, svc := range profiles[name] {
			want := naming.InstanceProfilePath(r.ProjectName, r.ConfigName, svc)
			if path != want {
				p.add("services."+svc+".profile", "instance profile %q has path %q, not %q", name, path, want)
			}
			// The role is what the instances act as: its path scopes it to
			// the service too (the design's rule).
			for _, role := range roles {
				if rp := aws.ToString(role.Path); rp != want {
					p.add("services."+svc+".profile", "role %q of instance profile %q has path %q, not %q", aws.ToString(role.RoleName), name, rp, want)
				}
			}
		}
	}
	return nil
}

// checkHooks checks the role and topic of every lifecycle hook, and
// returns their ARNs. The role must exist, be under the project-config's
// path (/<project>/<config>/, naming.ProjectConfigPath: the hook serves
// every group of the project-config, and the deploy role passes only
// roles under a path) and trust Auto Scaling (naming.HookRoleTrust), which
// assumes it to publish the hook's notifications; the topic must exist
// and carry the project-config's ProjectName and ConfigName tags. One
// GetRole per distinct role, one GetTopicAttributes and
// ListTagsForResource per distinct topic.
func (d *Deployer) checkHooks(ctx context.Context, c *cloud.Clients, r *release.Release, p *problems) (roles, topics map[string]string, err error) {
	roles, topics = map[string]string{}, map[string]string{}
	checked := map[string]bool{}
	for _, n := range slices.Sorted(maps.Keys(r.Lifecycle)) {
		h := r.Lifecycle[n]
		if h == nil {
			continue
		}
		path := "lifecycle." + n
		if !checked["role "+h.Role] {
			checked["role "+h.Role] = true
			arn, err := d.checkHookRole(ctx, c.IAM, r, path+".role", h.Role, p)
			if err != nil {
				return nil, nil, err
			}
			if arn != "" {
				roles[h.Role] = arn
			}
		}
		if !checked["topic "+h.SNS] {
			checked["topic "+h.SNS] = true
			arn, err := d.checkHookTopic(ctx, c, r, path+".sns", h.SNS, p)
			if err != nil {
				return nil, nil, err
			}
			if arn != "" {
				topics[h.SNS] = arn
			}
		}
	}
	return roles, topics, nil
}

// checkHookRole checks a lifecycle hook's role (see checkHooks) and
// returns its ARN ("" when it is not usable).
func (d *Deployer) checkHookRole(ctx context.Context, api cloud.IAM, r *release.Release, path, ref string, p *problems) (string, error) {
	out, err := api.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(naming.RoleNameOf(ref))})
	switch {
	case cloud.IsNotFoundCode(err, cloud.CodeNoSuchEntity):
		p.add(path, "role %q not found", ref)
		return "", nil
	case err != nil:
		return "", cloud.Classify("iam:GetRole", err)
	case out.Role == nil:
		p.add(path, "role %q not found", ref)
		return "", nil
	}
	ok := true
	if want, got := naming.ProjectConfigPath(r.ProjectName, r.ConfigName), aws.ToString(out.Role.Path); !strings.HasPrefix(got, want) {
		p.add(path, "role %q has path %q, not one under %q: a hook's role serves every group of the project-config", ref, got, want)
		ok = false
	}
	if !trusts(aws.ToString(out.Role.AssumeRolePolicyDocument), naming.HookRoleTrust) {
		p.add(path, "role %q does not trust %s, which assumes it to publish the hook's notifications", ref, naming.HookRoleTrust)
		ok = false
	}
	if !ok {
		return "", nil
	}
	return aws.ToString(out.Role.Arn), nil
}

// checkHookTopic checks a lifecycle hook's topic (see checkHooks) and
// returns its ARN ("" when it is not usable).
func (d *Deployer) checkHookTopic(ctx context.Context, c *cloud.Clients, r *release.Release, path, ref string, p *problems) (string, error) {
	arn := naming.TopicARN(c.Target.Region, c.Target.AccountID, ref)
	_, err := c.SNS.GetTopicAttributes(ctx, &sns.GetTopicAttributesInput{TopicArn: aws.String(arn)})
	switch {
	case cloud.IsNotFoundCode(err):
		p.add(path, "topic %q not found", ref)
		return "", nil
	case err != nil:
		return "", cloud.Classify("sns:GetTopicAttributes", err)
	}
	out, err := c.SNS.ListTagsForResource(ctx, &sns.ListTagsForResourceInput{ResourceArn: aws.String(arn)})
	if err != nil {
		return "", cloud.Classify("sns:ListTagsForResource", err)
	}
	tags := map[string]string{}
	for _, t := range out.Tags {
		tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	ok := true
	for _, w := range [][2]string{{naming.TagProjectName, r.ProjectName}, {naming.TagConfigName, r.ConfigName}} {
		if tags[w[0]] != w[1] {
			p.add(path, "topic %q is tagged %s=%q, not %q", ref, w[0], tags[w[0]], w[1])
			ok = false
		}
	}
	if !ok {
		return "", nil
	}
	return arn, nil
}

// previousGroups finds the previous ASG of each service: the groups of the
// project-config made by another release and not being deleted. More than
// one for a service is a problem naming them.
func (d *Deployer) previousGroups(ctx context.Context, api cloud.AutoScaling, st *execution.State, p *problems) (map[string]asgtypes.AutoScalingGroup, error) {
	byService, err := fleet.Previous(ctx, api, fleet.Owner{Project: st.ProjectName, Config: st.ConfigName}, st.ReleaseID)
	if err != nil {
		return nil, err
	}
	out := map[string]asgtypes.AutoScalingGroup{}
	for svc, gs := range byService {
		if len(gs) == 1 {
			out[svc] = gs[0]
			continue
		}
		names := make([]string, len(gs))
		for i, g := range gs {
			names[i] = aws.ToString(g.AutoScalingGroupName)
		}
		sort.Strings(names)
		if slices.Contains(st.Services, svc) {
			p.add("services."+svc, "%d previous Auto Scaling groups found (%s); there must be at most one", len(gs), strings.Join(names, ", "))
		}
	}
	return out, nil
}
