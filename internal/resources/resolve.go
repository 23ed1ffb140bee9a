package resources

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/fanout"
	"github.com/ferryhq/ferry/internal/fleet"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
)

// Resolved is everything a release names, resolved in its target.
type Resolved struct {
	// Images, Subnets and SecurityGroups map a reference (ID or name) to
	// its ID.
	Images map[string]string
	// RootDevices maps an image ID to its root device name.
	RootDevices    map[string]string
	Subnets        map[string]string
	SecurityGroups map[string]string
	// TargetGroups maps a target group name to its ARN.
	TargetGroups map[string]string
	// HookRoles maps a lifecycle hook's role reference to the role's ARN;
	// HookTopics a hook's topic reference to the topic's ARN.
	HookRoles  map[string]string
	HookTopics map[string]string
	// Previous maps a service to its previous group, as Groups shows it
	// (absent: a new service).
	Previous map[string]asgtypes.AutoScalingGroup
	// Groups are every group of the release's project-config AWS showed,
	// without their instances (fleet.Heads: a group's name, tags,
	// capacities, processes and attachments; at 50 services of 100
	// instances, its instances would be most of a deploy round's CPU),
	// Previous's source: the release's own too, so its caller need not
	// list them again.
	Groups []asgtypes.AutoScalingGroup

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

// Resolve resolves and checks every resource r names in the target c
// reaches (see the package documentation). AWS failures are returned as
// errors (transient ones *failure.RetryableError); problems with the
// resources, every one found, as one *failure.BadReleaseError.
func Resolve(ctx context.Context, c *cloud.Clients, r *release.Release) (*Resolved, error) {
	res := &Resolved{
		zoneOf: map[string]string{}, vpcOf: map[string]string{}, archOf: map[string]string{},
		elbZones: map[string][]string{}, tgZones: map[string][]string{},
	}
	p, q := &problems{}, &problems{}
	u := usesOf(r, p)
	// The network and placement checks, and the checks of what the
	// instances and hooks act as and what is there already, read nothing
	// of each other's: the two chains run side by side, their problems
	// reported in this order.
	err := fanout.Each(ctx, 2, 2, func(ctx context.Context, i int) error {
		if i == 0 {
			return resolveNetwork(ctx, c, r, u, res, p)
		}
		return resolveRest(ctx, c, r, u, res, q)
	})
	if err != nil {
		return nil, err
	}
	p.merge(q)
	if len(p.list) > 0 {
		return nil, failure.BadRelease(p.list...)
	}
	return res, nil
}

// resolveNetwork resolves r's images, subnets, security groups, load
// balancers and target groups into res, and reads the architectures of
// its instance types, then checks their placement. Its chains read
// nothing of each other's (nor write the same fields of res): the
// images; the subnets, then the security groups (by the subnets' VPCs);
// the classic load balancers; the target groups; the instance types
// (named by the release alone). They run side by side, their problems
// reported in this order, then the placement's, which reads nothing
// more: a release's network resolves in its longest chain's time (two
// calls), not in the sum of theirs.
func resolveNetwork(ctx context.Context, c *cloud.Clients, r *release.Release, u uses, res *Resolved, p *problems) error {
	var archs map[string][]string
	err := sideBySide(ctx, p,
		func(ctx context.Context, p *problems) error {
			var err error
			res.Images, res.RootDevices, err = resolveImages(ctx, c.EC2, r, u.amis, res, p)
			return err
		},
		func(ctx context.Context, p *problems) error {
			var err error
			if res.Subnets, err = resolveSubnets(ctx, c.EC2, r, u.subnets, res, p); err != nil {
				return err
			}
			res.SecurityGroups, err = resolveSecurityGroups(ctx, c.EC2, r, u.groups, res.Subnets, res, p)
			return err
		},
		func(ctx context.Context, p *problems) error { return checkLoadBalancers(ctx, c.ELB, r, u.elbs, res, p) },
		func(ctx context.Context, p *problems) error {
			var err error
			res.TargetGroups, err = resolveTargetGroups(ctx, c.ELBv2, r, u.targetGroups, res, p)
			return err
		},
		func(ctx context.Context, _ *problems) error {
			var err error
			archs, err = instanceArchitectures(ctx, c.EC2, r)
			return err
		},
	)
	if err != nil {
		return err
	}
	checkPlacement(r, u, res, archs, p)
	return nil
}

// beside runs a and b side by side (fanout.Each): a's error, else b's.
func beside(ctx context.Context, a, b func(ctx context.Context) error) error {
	fns := [2]func(ctx context.Context) error{a, b}
	return fanout.Each(ctx, len(fns), len(fns), func(ctx context.Context, i int) error { return fns[i](ctx) })
}

// sideBySide runs parts side by side, each with problems of its own, and
// adds their problems to p in the parts' order: the first error of the
// lowest part that failed (fanout.Each), else nil.
func sideBySide(ctx context.Context, p *problems, parts ...func(ctx context.Context, p *problems) error) error {
	found := make([]problems, len(parts))
	err := fanout.Each(ctx, len(parts), len(parts), func(ctx context.Context, i int) error {
		return parts[i](ctx, &found[i])
	})
	if err != nil {
		return err
	}
	for i := range found {
		p.merge(&found[i])
	}
	return nil
}

// resolveRest checks r's instance profiles, lifecycle hooks and alarms
// and lists the project-config's groups and its services' previous
// ones, into res's HookRoles, HookTopics, Groups and Previous (nothing
// resolveNetwork reads or writes). The four read nothing of each
// other's: they run side by side (a release's fifty profiles, its
// hooks' role and topic, its alarms and its groups in the time of the
// slowest), their problems reported in this order.
func resolveRest(ctx context.Context, c *cloud.Clients, r *release.Release, u uses, res *Resolved, p *problems) error {
	return sideBySide(ctx, p,
		func(ctx context.Context, p *problems) error { return checkProfiles(ctx, c.IAM, r, u.profiles, p) },
		func(ctx context.Context, p *problems) error {
			var err error
			res.HookRoles, res.HookTopics, err = checkHooks(ctx, c, r, p)
			return err
		},
		func(ctx context.Context, p *problems) error { return checkAlarms(ctx, c.CloudWatch, r, p) },
		func(ctx context.Context, p *problems) error {
			var err error
			if res.Groups, err = fleet.Heads(ctx, c.AutoScaling, fleet.Owner{Project: r.ProjectName, Config: r.ConfigName}); err != nil {
				return err
			}
			res.Previous = previousIn(res.Groups, r, p)
			return nil
		},
	)
}

// use is one place a release names a resource.
type use struct {
	path    string
	ref     string
	service string // "" for release-level references
}

// uses are the places a release names each kind of resource.
type uses struct {
	amis, subnets, groups, elbs, targetGroups []use
	// profiles maps an instance profile to the services that use it.
	profiles map[string][]string
}

// launchTemplateNameRe is what EC2 allows in a launch template name.
var launchTemplateNameRe = regexp.MustCompile(`^[a-zA-Z0-9().\-/_]+$`)

// usesOf lists where r names each resource, by service, and checks that
// each service's group name can name a launch template too.
func usesOf(r *release.Release, p *problems) uses {
	u := uses{profiles: map[string][]string{}}
	for _, name := range r.ServiceNames() {
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
		u.amis = append(u.amis, use{amiPath, r.ServiceAMI(name), name})
		subnetPath := "subnets"
		if len(s.Subnets) > 0 {
			subnetPath = sp + ".subnets"
		}
		u.subnets = appendUses(u.subnets, subnetPath, r.ServiceSubnets(name), name)
		u.groups = appendUses(u.groups, sp+".security_groups", s.SecurityGroups, name)
		u.elbs = appendUses(u.elbs, sp+".elbs", s.ELBs, name)
		u.targetGroups = appendUses(u.targetGroups, sp+".target_groups", s.TargetGroups, name)
		if s.Profile != "" {
			u.profiles[s.Profile] = append(u.profiles[s.Profile], name)
		}
	}
	return u
}

// appendUses appends a use of each of refs, at path[i], by service.
func appendUses(to []use, path string, refs []string, service string) []use {
	for i, ref := range refs {
		to = append(to, use{fmt.Sprintf("%s[%d]", path, i), ref, service})
	}
	return to
}

// Previous finds the previous group of each service of r: the groups of
// its project-config another release made, not being deleted
// (fleet.Previous), each described without its instances (fleet.Heads).
// More than one for a service of r is a problem naming them, in the
// problems it returns.
func Previous(ctx context.Context, api cloud.AutoScaling, r *release.Release) (map[string]asgtypes.AutoScalingGroup, []string, error) {
	p := &problems{}
	groups, err := previous(ctx, api, r, p)
	return groups, p.list, err
}

func previous(ctx context.Context, api cloud.AutoScaling, r *release.Release, p *problems) (map[string]asgtypes.AutoScalingGroup, error) {
	groups, err := fleet.Heads(ctx, api, fleet.Owner{Project: r.ProjectName, Config: r.ConfigName})
	if err != nil {
		return nil, err
	}
	return previousIn(groups, r, p), nil
}

// previousIn is previous of groups, the project-config's as fleet.Heads
// listed them.
func previousIn(groups []asgtypes.AutoScalingGroup, r *release.Release, p *problems) map[string]asgtypes.AutoScalingGroup {
	byService := fleet.PreviousIn(groups, r.ReleaseID)
	out := map[string]asgtypes.AutoScalingGroup{}
	services := r.ServiceNames()
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
		if slices.Contains(services, svc) {
			p.add("services."+svc, "%d previous Auto Scaling groups found (%s); there must be at most one", len(gs), strings.Join(names, ", "))
		}
	}
	return out
}

// problems collects "path: message" problems without duplicates.
type problems struct {
	list []string
	seen map[string]bool
}

func (p *problems) add(path, format string, args ...any) {
	p.note(path + ": " + fmt.Sprintf(format, args...))
}

// merge adds q's problems after p's, each once.
func (p *problems) merge(q *problems) {
	for _, msg := range q.list {
		p.note(msg)
	}
}

func (p *problems) note(msg string) {
	if p.seen == nil {
		p.seen = map[string]bool{}
	}
	if !p.seen[msg] {
		p.seen[msg] = true
		p.list = append(p.list, msg)
	}
}
