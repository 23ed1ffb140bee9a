package sim

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/naming"
)

// AutoScaling is the simulated Auto Scaling API of one account-region.
type AutoScaling struct{ view }

var _ cloud.AutoScaling = (*AutoScaling)(nil)

const serviceAutoScaling = "Auto Scaling"

type group struct {
	name, arn string
	created   time.Time
	lt        *launchTemplate
	ltSpec    astypes.LaunchTemplateSpecification
	min, max  int32
	desired   int32
	subnets   []*subnet
	lbs       []*classicLB
	tgs       []*targetGroup
	// removing are the load balancers and target groups detached from it
	// that are still deregistering its instances.
	removing    []*removal
	healthCheck string
	grace       int32
	// newProtected is NewInstancesProtectedFromScaleIn: the scale-in
	// protection each instance it launches starts with.
	newProtected bool
	tags         []astypes.TagDescription
	hooks        []astypes.LifecycleHookSpecification
	termHook     bool
	instances    []*instance
	nextSubnet   int
	deleting     bool
	policies     map[string]*policy
	// suspended are the suspended processes, suspendedAt when each was.
	suspended   map[string]bool
	suspendedAt map[string]time.Time
	activities  []*activity
	// mixed is its mixed instances policy (nil: it launches its launch
	// template's instance type On-Demand).
	mixed *mixedPolicy
	// lastScaling is when a policy or a user last changed the desired
	// capacity (simple scaling's cooldown runs from it).
	lastScaling time.Time
	// retryAt is when a fill after a failed launch is due (zero: none).
	retryAt     time.Time
	rebalancing bool
	vis         visibility
	// deleteRequested is when DeleteAutoScalingGroup was accepted, goneAt
	// when the group vanished.
	deleteRequested, goneAt time.Time
}

type policy struct {
	name, arn string
	input     autoscaling.PutScalingPolicyInput
}

// live is the capacity of the instances that are not terminating, in
// Standby or being replaced by Capacity Rebalancing: those its desired
// capacity counts, each by its weight (1 without a weighted mixed
// instances policy).
func (g *group) live() int {
	n := 0
	for _, i := range g.instances {
		if i.counts() {
			n += i.weightOf()
		}
	}
	return n
}

// CreateAutoScalingGroup creates a group from a launch template and
// launches its desired capacity.
func (c *AutoScaling) CreateAutoScalingGroup(ctx context.Context, in *autoscaling.CreateAutoScalingGroupInput, _ ...func(*autoscaling.Options)) (*autoscaling.CreateAutoScalingGroupOutput, error) {
	const op = "CreateAutoScalingGroup"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	return &autoscaling.CreateAutoScalingGroupOutput{}, c.end(op, r.createGroup(in))
}

// createGroup is CreateAutoScalingGroup as the API reference describes
// it: the request's name and sizes are checked, the caller is authorized
// for the group and for what its instances launch with, the group's
// subnets, load balancers, health check, tags and hooks are checked in
// turn, and the group launches its desired capacity.
func (r *region) createGroup(in *autoscaling.CreateAutoScalingGroupInput) error {
	name := deref(in.AutoScalingGroupName)
	minSize, maxSize, desired, err := r.checkNewGroup(name, in)
	if err != nil {
		return err
	}
	arn := fmt.Sprintf("arn:aws:autoscaling:%s:%s:autoScalingGroup:%s:autoScalingGroupName/%s",
		r.name, r.account.id, uuidFrom(seed(r.account.id+r.name, name+r.w.now.String())), name)
	lt, err := r.authorizeNewGroup(arn, in)
	if err != nil {
		return err
	}
	in = withMixedTemplate(in)
	now := r.w.requestTime()
	g := &group{
		name: name, arn: arn, created: now, lt: lt, ltSpec: *in.LaunchTemplate,
		min: minSize, max: maxSize, desired: desired, healthCheck: "EC2", grace: deref(in.HealthCheckGracePeriod),
		policies: map[string]*policy{}, suspended: map[string]bool{}, suspendedAt: map[string]time.Time{},
		newProtected: deref(in.NewInstancesProtectedFromScaleIn),
	}
	for _, step := range []func(*group, *autoscaling.CreateAutoScalingGroupInput) error{
		r.mixGroup, r.placeGroup, r.balanceGroup, healthCheckOf, tagGroup, r.hookGroup,
	} {
		if err := step(g, in); err != nil {
			return err
		}
	}
	r.groups[name] = g
	g.vis = r.w.faults.visibilityOf(HideGroups, name)
	r.fill(g, now, fmt.Sprintf("At %s a user request created an AutoScalingGroup changing the desired capacity from 0 to %d.  ", stamp(now), desired))
	return nil
}

// checkNewGroup checks a new group's name (unique, within the quota), its
// sizes (min <= desired <= max, desired defaulting to min) and that it
// launches from a launch template, and returns the sizes.
func (r *region) checkNewGroup(name string, in *autoscaling.CreateAutoScalingGroupInput) (minSize, maxSize, desired int32, err error) {
	if name == "" || len(name) > 255 {
		return 0, 0, 0, apiErrf(cloud.CodeValidation, "1 validation error detected: Value '%s' at 'autoScalingGroupName' failed to satisfy constraint: Member must have length between 1 and 255", name)
	}
	if in.MinSize == nil || in.MaxSize == nil {
		return 0, 0, 0, apiErr(cloud.CodeValidation, "MinSize and MaxSize are required")
	}
	if _, ok := r.groups[name]; ok {
		return 0, 0, 0, apiErrf(cloud.CodeAlreadyExists, "AutoScalingGroup by this name already exists - A group with the name %s already exists", name)
	}
	if len(r.groups) >= r.w.quotas.AutoScalingGroups {
		return 0, 0, 0, apiErrf(cloud.CodeLimitExceeded, "You have reached your quota of %d Auto Scaling groups in this Region", r.w.quotas.AutoScalingGroups)
	}
	minSize, maxSize = *in.MinSize, *in.MaxSize
	desired = minSize
	if in.DesiredCapacity != nil {
		desired = *in.DesiredCapacity
	}
	switch {
	case minSize < 0 || maxSize < 0:
		return 0, 0, 0, apiErr(cloud.CodeValidation, "MinSize and MaxSize must not be negative")
	case maxSize < minSize:
		return 0, 0, 0, apiErrf(cloud.CodeValidation, "Max bound, %d, must be greater than or equal to min bound, %d", maxSize, minSize)
	case desired < minSize || desired > maxSize:
		return 0, 0, 0, apiErrf(cloud.CodeValidation, "Desired capacity:%d must be between the specified min size:%d and max size:%d", desired, minSize, maxSize)
	}
	return minSize, maxSize, desired, launchSource(in)
}

// launchSource checks the group launches from one launch template, or
// from one mixed instances policy.
func launchSource(in *autoscaling.CreateAutoScalingGroupInput) error {
	switch {
	case in.LaunchConfigurationName != nil || in.InstanceId != nil:
		return apiErr(cloud.CodeValidation, "the simulation supports only LaunchTemplate and MixedInstancesPolicy (launch configurations are deprecated)")
	case (in.LaunchTemplate == nil) == (in.MixedInstancesPolicy == nil):
		return apiErr(cloud.CodeValidation, "Valid requests must contain either LaunchTemplate, LaunchConfigurationName, InstanceId or MixedInstancesPolicy parameter.")
	}
	return nil
}

// authorizeNewGroup authorizes the caller to create the group of arn with
// its tags and hooks, resolves its launch template, authorizes what its
// instances launch with, and checks the template's image exists and that
// the group names a subnet. It returns the launch template.
func (r *region) authorizeNewGroup(arn string, in *autoscaling.CreateAutoScalingGroupInput) (*launchTemplate, error) {
	in = withMixedTemplate(in)
	req := &createGroupRequest{spec: *in.LaunchTemplate, tags: in.Tags, hooks: in.LifecycleHookSpecificationList,
		elbs: in.LoadBalancerNames, tgARNs: in.TargetGroupARNs}
	if err := r.w.authorize(r.createGroupAuths(arn, req)...); err != nil {
		return nil, err
	}
	lt, version, err := r.resolveLaunchTemplate(*in.LaunchTemplate)
	if err != nil {
		return nil, err
	}
	data := lt.versions[version-1]
	req.lt, req.data = lt, data
	for _, id := range strings.Split(deref(in.VPCZoneIdentifier), ",") {
		if s := r.subnets[strings.TrimSpace(id)]; s != nil {
			req.subnets = append(req.subnets, s)
		}
	}
	if err := r.w.authorize(r.launchAuths(req)...); err != nil {
		return nil, err
	}
	if _, ok := r.amis[deref(data.ImageId)]; !ok {
		return nil, apiErrf(cloud.CodeValidation, "You must use a valid fully-formed launch template. The image id '[%s]' does not exist", deref(data.ImageId))
	}
	if deref(in.VPCZoneIdentifier) == "" {
		return nil, apiErr(cloud.CodeValidation, "At least one Availability Zone or VPC Subnet is required.")
	}
	return lt, nil
}

// withMixedTemplate is in with, for a mixed instances policy, its
// launch template as the group's LaunchTemplate (the template every
// override launches from).
func withMixedTemplate(in *autoscaling.CreateAutoScalingGroupInput) *autoscaling.CreateAutoScalingGroupInput {
	if in.MixedInstancesPolicy == nil || in.MixedInstancesPolicy.LaunchTemplate == nil || in.MixedInstancesPolicy.LaunchTemplate.LaunchTemplateSpecification == nil {
		return in
	}
	c := *in
	c.LaunchTemplate = in.MixedInstancesPolicy.LaunchTemplate.LaunchTemplateSpecification
	return &c
}

// mixGroup sets g's mixed instances policy, checked as
// CreateAutoScalingGroup checks it. CapacityRebalance on a group without
// one is accepted and does nothing: the sim's launch template groups run
// On-Demand.
func (r *region) mixGroup(g *group, in *autoscaling.CreateAutoScalingGroupInput) error {
	if in.MixedInstancesPolicy == nil {
		return nil
	}
	m, err := newMixedPolicy(in.MixedInstancesPolicy, deref(in.CapacityRebalance), r.archOf(g))
	if err != nil {
		return err
	}
	g.mixed = m
	return nil
}

// archOf is the architecture of the image g launches ("" for an image
// the region does not know).
func (r *region) archOf(g *group) string {
	if a := r.amis[deref(g.lt.versions[g.launchVersion()-1].ImageId)]; a != nil {
		return a.arch
	}
	return ""
}

// placeGroup sets g's subnets: every one VPCZoneIdentifier names must
// exist.
func (r *region) placeGroup(g *group, in *autoscaling.CreateAutoScalingGroupInput) error {
	for _, id := range strings.Split(*in.VPCZoneIdentifier, ",") {
		id = strings.TrimSpace(id)
		s := r.subnets[id]
		if s == nil {
			return apiErrf(cloud.CodeValidation, "The subnet ID '%s' does not exist", id)
		}
		g.subnets = append(g.subnets, s)
	}
	return nil
}

// balanceGroup sets g's classic load balancers and target groups: every
// one named must exist.
func (r *region) balanceGroup(g *group, in *autoscaling.CreateAutoScalingGroupInput) error {
	for _, n := range in.LoadBalancerNames {
		lb := r.elbs[n]
		if lb == nil {
			return apiErr(cloud.CodeValidation, "Provided Load Balancers may not be valid. Please ensure they exist and try again.")
		}
		g.lbs = append(g.lbs, lb)
	}
	for _, a := range in.TargetGroupARNs {
		tg := r.tgARNs[a]
		if tg == nil {
			return apiErr(cloud.CodeValidation, "Provided Target Groups may not be valid. Please ensure they exist and try again.")
		}
		g.tgs = append(g.tgs, tg)
	}
	return nil
}

// healthCheckOf sets g's health check type: EC2 (the default) or ELB.
func healthCheckOf(g *group, in *autoscaling.CreateAutoScalingGroupInput) error {
	if in.HealthCheckType == nil {
		return nil
	}
	switch *in.HealthCheckType {
	case "EC2", "ELB":
		g.healthCheck = *in.HealthCheckType
		return nil
	}
	return apiErrf(cloud.CodeValidation, "Invalid health check type: %s", *in.HealthCheckType)
}

// tagGroup sets g's tags, sorted by key: at most 50, keys of 1 to 128
// characters and values of at most 256, unique keys, each naming the
// group as its resource.
func tagGroup(g *group, in *autoscaling.CreateAutoScalingGroupInput) error {
	if len(in.Tags) > 50 {
		return apiErr(cloud.CodeValidation, "The number of tags exceeds the limit of 50")
	}
	seen := map[string]bool{}
	for _, t := range in.Tags {
		k := deref(t.Key)
		if k == "" || len(k) > 128 || len(deref(t.Value)) > 256 {
			return apiErrf(cloud.CodeValidation, "Invalid tag key or value: %q", k)
		}
		if t.ResourceId != nil && *t.ResourceId != g.name {
			return apiErrf(cloud.CodeValidation, "Tag ResourceId %q does not match the group name %q", *t.ResourceId, g.name)
		}
		if t.ResourceType != nil && *t.ResourceType != "auto-scaling-group" {
			return apiErrf(cloud.CodeValidation, "Tag ResourceType %q is not auto-scaling-group", *t.ResourceType)
		}
		if seen[k] {
			return apiErrf(cloud.CodeValidation, "Duplicate tag key: %s", k)
		}
		seen[k] = true
		g.tags = append(g.tags, astypes.TagDescription{
			Key: aws.String(k), Value: aws.String(deref(t.Value)), PropagateAtLaunch: aws.Bool(deref(t.PropagateAtLaunch)),
			ResourceId: aws.String(g.name), ResourceType: aws.String("auto-scaling-group"),
		})
	}
	sort.Slice(g.tags, func(a, b int) bool { return *g.tags[a].Key < *g.tags[b].Key })
	return nil
}

// hookGroup checks and sets g's lifecycle hooks, noting a termination
// hook.
func (r *region) hookGroup(g *group, in *autoscaling.CreateAutoScalingGroupInput) error {
	for _, h := range in.LifecycleHookSpecificationList {
		if err := r.checkHook(h); err != nil {
			return err
		}
		if deref(h.LifecycleTransition) == transitionTerminating {
			g.termHook = true
		}
		g.hooks = append(g.hooks, h)
	}
	return nil
}

func (r *region) checkHook(h astypes.LifecycleHookSpecification) error {
	name := deref(h.LifecycleHookName)
	if name == "" || len(name) > 255 {
		return apiErr(cloud.CodeValidation, "LifecycleHookName must have length between 1 and 255")
	}
	switch deref(h.LifecycleTransition) {
	case transitionLaunching, transitionTerminating:
	default:
		return apiErrf(cloud.CodeValidation, "Invalid Lifecycle Transition: %s", deref(h.LifecycleTransition))
	}
	if t := h.HeartbeatTimeout; t != nil && (*t < 30 || *t > 7200) {
		return apiErrf(cloud.CodeValidation, "HeartbeatTimeout %d must be between 30 and 7200", *t)
	}
	if d := deref(h.DefaultResult); d != "" && d != resultContinue && d != resultAbandon {
		return apiErrf(cloud.CodeValidation, "DefaultResult %s must be CONTINUE or ABANDON", d)
	}
	if arn := deref(h.NotificationTargetARN); arn != "" {
		if _, ok := r.topics[arn]; !ok {
			return apiErrf(cloud.CodeValidation, "Unable to publish test message to notification target %s using IAM role %s. Please check your target and role configuration and try to put lifecycle hook again.", arn, deref(h.RoleARN))
		}
		if deref(h.RoleARN) == "" {
			return apiErr(cloud.CodeValidation, "RoleARN is required with a NotificationTargetARN")
		}
	}
	if arn := deref(h.RoleARN); arn != "" {
		// Auto Scaling publishes a test message as the role when the
		// hook is put: a role it cannot assume fails the same way as a
		// missing one.
		acct, name, ok := parseRoleARN(arn)
		if !ok || acct != r.account.id || r.account.roles[name] == nil || !r.account.roles[name].services[naming.HookRoleTrust] {
			return apiErrf(cloud.CodeValidation, "Unable to publish test message to notification target %s using IAM role %s. Please check your target and role configuration and try to put lifecycle hook again.", deref(h.NotificationTargetARN), arn)
		}
	}
	return nil
}

// launchVersion is the version of its launch template a group launches
// from now. "$Latest" and "$Default" are resolved at each launch, not when
// the group is made: "If you specify $Latest, Amazon EC2 Auto Scaling
// selects the latest version of the launch template when launching
// instances" (LaunchTemplateSpecification, Auto Scaling API Reference).
// The version was checked when the group was made, and versions are never
// deleted here.
func (g *group) launchVersion() int64 {
	switch v := deref(g.ltSpec.Version); v {
	case "", "$Default":
		return g.lt.deflt
	case "$Latest":
		return int64(len(g.lt.versions))
	default:
		n, _ := strconv.ParseInt(v, 10, 64)
		return n
	}
}

// resolveLaunchTemplate finds the template and version a group uses.
func (r *region) resolveLaunchTemplate(spec astypes.LaunchTemplateSpecification) (*launchTemplate, int64, error) {
	var lt *launchTemplate
	switch {
	case spec.LaunchTemplateId != nil && spec.LaunchTemplateName != nil:
		return nil, 0, apiErr(cloud.CodeValidation, "Specify either LaunchTemplateId or LaunchTemplateName, not both")
	case spec.LaunchTemplateId != nil:
		lt = r.ltIDs[*spec.LaunchTemplateId]
	case spec.LaunchTemplateName != nil:
		lt = r.lts[*spec.LaunchTemplateName]
	default:
		return nil, 0, apiErr(cloud.CodeValidation, "A launch template needs a LaunchTemplateId or LaunchTemplateName")
	}
	if lt == nil || !r.ltVisible(lt) {
		return nil, 0, apiErrf(cloud.CodeValidation, "The specified launch template, with template name %s and id %s, does not exist.", deref(spec.LaunchTemplateName), deref(spec.LaunchTemplateId))
	}
	switch v := deref(spec.Version); v {
	case "", "$Default":
		return lt, lt.deflt, nil
	case "$Latest":
		return lt, int64(len(lt.versions)), nil
	default:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 || n > int64(len(lt.versions)) {
			return nil, 0, apiErrf(cloud.CodeValidation, "The specified launch template version %s of %s does not exist.", v, lt.name)
		}
		return lt, n, nil
	}
}

// DescribeAutoScalingGroups returns groups by name (a map lookup) or by
// tag filters, sorted by name, paginated by MaxRecords (default 50, at most
// 100) and NextToken. Names that do not exist are left out, not an error.
func (c *AutoScaling) DescribeAutoScalingGroups(ctx context.Context, in *autoscaling.DescribeAutoScalingGroupsInput, _ ...func(*autoscaling.Options)) (*autoscaling.DescribeAutoScalingGroupsOutput, error) {
	const op = "DescribeAutoScalingGroups"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	out, err := r.describeGroups(in)
	return out, c.end(op, err)
}

func (r *region) describeGroups(in *autoscaling.DescribeAutoScalingGroupsInput) (*autoscaling.DescribeAutoScalingGroupsOutput, error) {
	limit := int(deref(in.MaxRecords))
	if limit == 0 {
		limit = 50
	}
	if limit < 1 || limit > 100 {
		return nil, apiErr(cloud.CodeValidation, "MaxRecords must be between 1 and 100")
	}
	if len(in.AutoScalingGroupNames) > limit {
		// "By default, you can only specify up to 50 names. You can
		// optionally increase this limit using the MaxRecords property"
		// (DescribeAutoScalingGroups, Auto Scaling API Reference).
		return nil, apiErr(cloud.CodeValidation, fmt.Sprintf("%d AutoScalingGroupNames: at most %d (MaxRecords)", len(in.AutoScalingGroupNames), limit))
	}
	var names []string
	if len(in.AutoScalingGroupNames) > 0 {
		names = append(names, in.AutoScalingGroupNames...)
		slices.Sort(names)
		names = slices.Compact(names)
	} else {
		names = slices.Sorted(maps.Keys(r.groups))
	}
	var filters []tagFilter
	for _, f := range in.Filters {
		tf, err := newTagFilter(deref(f.Name), f.Values)
		if err != nil {
			return nil, err
		}
		filters = append(filters, tf)
	}
	start, ok := pageStart(names, deref(in.NextToken))
	if !ok {
		return nil, apiErr("InvalidNextToken", "The token is not valid")
	}
	out := &autoscaling.DescribeAutoScalingGroupsOutput{AutoScalingGroups: []astypes.AutoScalingGroup{}}
	for _, n := range names[start:] {
		g := r.groups[n]
		if g == nil || !matchGroup(g, filters) || !r.visible(g) {
			continue
		}
		if len(out.AutoScalingGroups) == limit {
			out.NextToken = pageToken(*out.AutoScalingGroups[limit-1].AutoScalingGroupName)
			break
		}
		out.AutoScalingGroups = append(out.AutoScalingGroups, r.describeGroup(g, in.IncludeInstances == nil || *in.IncludeInstances))
	}
	return out, nil
}

// The simulated Describe calls page through names in order: a page's
// token is "after:" and the last name on it.

// pageStart returns where in sorted names the page that token continues
// starts: 0 for no token, else just after the token's name (or where it
// would be, if it is gone). ok is false for a token of another form.
func pageStart(names []string, token string) (start int, ok bool) {
	if token == "" {
		return 0, true
	}
	after, ok := strings.CutPrefix(token, "after:")
	if !ok {
		return 0, false
	}
	start = sort.SearchStrings(names, after)
	if start < len(names) && names[start] == after {
		start++
	}
	return start, true
}

// pageToken is the token of the page after the one that ends with name.
func pageToken(name string) *string { return aws.String("after:" + name) }

type tagFilter struct {
	kind   string // "tag", "tag-key", "tag-value"
	key    string
	values map[string]bool
}

func newTagFilter(name string, values []string) (tagFilter, error) {
	f := tagFilter{values: map[string]bool{}}
	for _, v := range values {
		f.values[v] = true
	}
	switch {
	case strings.HasPrefix(name, "tag:"):
		f.kind, f.key = "tag", strings.TrimPrefix(name, "tag:")
	case name == "tag-key" || name == "tag-value":
		f.kind = name
	default:
		return f, apiErrf(cloud.CodeValidation, "Filter name %q is not valid", name)
	}
	return f, nil
}

func matchGroup(g *group, filters []tagFilter) bool {
	for _, f := range filters {
		ok := false
		for _, t := range g.tags {
			switch f.kind {
			case "tag":
				ok = *t.Key == f.key && f.values[*t.Value]
			case "tag-key":
				ok = f.values[*t.Key]
			case "tag-value":
				ok = f.values[*t.Value]
			}
			if ok {
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// describeGroup is g as DescribeAutoScalingGroups shows it, its
// instances included or not: IncludeInstances "Specifies whether to
// include information about Amazon EC2 instances in the response. When
// set to true (default), the response includes instance details"
// (DescribeAutoScalingGroups, Auto Scaling API Reference); without them
// the group has no Instances element at all.
func (r *region) describeGroup(g *group, instances bool) astypes.AutoScalingGroup {
	now := r.w.now
	lt := g.ltSpec
	lt.LaunchTemplateId, lt.LaunchTemplateName = aws.String(g.lt.id), aws.String(g.lt.name)
	if lt.Version == nil {
		lt.Version = aws.String("$Default")
	}
	out := astypes.AutoScalingGroup{
		AutoScalingGroupName: aws.String(g.name), AutoScalingGroupARN: aws.String(g.arn),
		CreatedTime: aws.Time(g.created), LaunchTemplate: &lt,
		MinSize: aws.Int32(g.min), MaxSize: aws.Int32(g.max), DesiredCapacity: aws.Int32(g.desired),
		DefaultCooldown: aws.Int32(300), HealthCheckType: aws.String(g.healthCheck),
		HealthCheckGracePeriod: aws.Int32(g.grace), Tags: append([]astypes.TagDescription(nil), g.tags...),
		LoadBalancerNames: []string{}, TargetGroupARNs: []string{},
		SuspendedProcesses:               g.suspendedProcesses(),
		NewInstancesProtectedFromScaleIn: aws.Bool(g.newProtected), ServiceLinkedRoleARN: aws.String(fmt.Sprintf("arn:aws:iam::%s:role/aws-service-role/autoscaling.amazonaws.com/AWSServiceRoleForAutoScaling", r.account.id)),
	}
	g.describeMixed(&out)
	var subnetIDs []string
	zones := map[string]bool{}
	for _, s := range g.subnets {
		subnetIDs = append(subnetIDs, s.id)
		if !zones[s.az] {
			zones[s.az] = true
			out.AvailabilityZones = append(out.AvailabilityZones, s.az)
		}
	}
	out.VPCZoneIdentifier = aws.String(strings.Join(subnetIDs, ","))
	for _, lb := range g.lbs {
		out.LoadBalancerNames = append(out.LoadBalancerNames, lb.name)
	}
	for _, tg := range g.tgs {
		out.TargetGroupARNs = append(out.TargetGroupARNs, tg.arn)
	}
	if g.deleting {
		out.Status = aws.String("Delete in progress")
	}
	if !instances {
		return out
	}
	out.Instances = make([]astypes.Instance, 0, len(g.instances))
	for _, i := range g.instances {
		// An instance shows the version it was launched from.
		ltRef := &astypes.LaunchTemplateSpecification{LaunchTemplateId: aws.String(g.lt.id), LaunchTemplateName: aws.String(g.lt.name), Version: aws.String(strconv.FormatInt(i.ltVersion, 10))}
		out.Instances = append(out.Instances, astypes.Instance{
			InstanceId: aws.String(i.id), AvailabilityZone: aws.String(i.subnet.az),
			LifecycleState: i.lifecycle(now), HealthStatus: aws.String(i.healthStatus(now)),
			InstanceType: aws.String(i.instanceType), ImageId: aws.String(i.imageID),
			LaunchTemplate: ltRef, ProtectedFromScaleIn: aws.Bool(i.protected), WeightedCapacity: i.weightedCapacity(),
		})
	}
	return out
}

// DeleteAutoScalingGroup deletes a group. Without ForceDelete a group that
// still has instances is refused (ResourceInUse); with it, its instances
// are terminated and deregistered from their load balancers. The group
// shows Status "Delete in progress" until its instances are gone, then
// vanishes. Its scaling policies are deleted at once, with every alarm
// whose actions were only those policies. Deleting a group already being
// deleted succeeds; a group that does not exist is a ValidationError.
func (c *AutoScaling) DeleteAutoScalingGroup(ctx context.Context, in *autoscaling.DeleteAutoScalingGroupInput, _ ...func(*autoscaling.Options)) (*autoscaling.DeleteAutoScalingGroupOutput, error) {
	const op = "DeleteAutoScalingGroup"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	return &autoscaling.DeleteAutoScalingGroupOutput{}, c.end(op, r.deleteGroup(deref(in.AutoScalingGroupName), deref(in.ForceDelete)))
}

func (r *region) deleteGroup(name string, force bool) error {
	g := r.groups[name]
	if g == nil || !r.visible(g) {
		return apiErrf(cloud.CodeValidation, "AutoScalingGroup name not found - AutoScalingGroup '%s' not found", name)
	}
	if err := r.w.authorize(groupAuth("DeleteAutoScalingGroup", g)); err != nil {
		return err
	}
	if len(g.instances) > 0 && !force {
		if g.deleting {
			return apiErr(cloud.CodeScalingActivityInProgress, "An activity is currently in progress. Wait for the activity to complete.")
		}
		return apiErr(cloud.CodeResourceInUse, "You cannot delete an AutoScalingGroup while there are instances or pending Spot instance request(s) still in the group.")
	}
	if g.deleting {
		return nil
	}
	now := r.w.requestTime()
	g.deleting, g.deleteRequested = true, now
	g.desired, g.min = 0, 0
	policyARNs := map[string]bool{}
	for _, p := range g.policies {
		policyARNs[p.arn] = true
	}
	g.policies = map[string]*policy{}
	for name, a := range r.alarms {
		in := a.input
		if len(in.AlarmActions) == 0 {
			continue
		}
		onlyGroup := true
		for _, act := range in.AlarmActions {
			if !policyARNs[act] {
				onlyGroup = false
			}
		}
		if onlyGroup {
			delete(r.alarms, name)
		}
	}
	r.forceTerminate(g, now)
	if len(g.instances) == 0 {
		r.scheduleGroupGone(g, now)
	}
	return nil
}

// forceTerminate terminates g's instances as ForceDelete does: it deletes
// the group "without waiting for all instances to be terminated" and
// "also deletes any outstanding lifecycle actions" (DeleteAutoScalingGroup,
// Auto Scaling API Reference): no draining, no hook; an instance a load
// balancer still routes to is cut off.
func (r *region) forceTerminate(g *group, now time.Time) {
	for _, i := range append([]*instance(nil), g.instances...) {
		r.cutForce(i, now)
		if !i.terminating.IsZero() {
			r.proceed(i, now)
			continue
		}
		r.terminate(i, now, false, fmt.Sprintf("At %s a user request deleted the AutoScalingGroup %s (ForceDelete).  At %s an instance was taken out of service in response to a user request.", stamp(now), g.name, stamp(now)))
	}
}

// UpdateAutoScalingGroup changes a group's size. MinSize, MaxSize and
// DesiredCapacity are optional; the result must keep min <= desired <= max
// (ValidationError otherwise, with nothing changed). A lower desired
// capacity terminates the surplus, choosing instances that are not yet
// healthy first, then the newest (the sim's stand-in for the default
// termination policy); a higher one launches instances. Other fields of
// the input are ignored. A group that does not exist, or is being
// deleted, is a ValidationError.
func (c *AutoScaling) UpdateAutoScalingGroup(ctx context.Context, in *autoscaling.UpdateAutoScalingGroupInput, _ ...func(*autoscaling.Options)) (*autoscaling.UpdateAutoScalingGroupOutput, error) {
	const op = "UpdateAutoScalingGroup"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	return &autoscaling.UpdateAutoScalingGroupOutput{}, c.end(op, r.updateGroup(in))
}

func (r *region) updateGroup(in *autoscaling.UpdateAutoScalingGroupInput) error {
	g, err := r.lookupGroup(deref(in.AutoScalingGroupName))
	if err != nil {
		return err
	}
	if err := r.w.authorize(groupAuth("UpdateAutoScalingGroup", g)); err != nil {
		return err
	}
	minSize, maxSize, desired := g.min, g.max, g.desired
	if in.MinSize != nil {
		minSize = *in.MinSize
	}
	if in.MaxSize != nil {
		maxSize = *in.MaxSize
	}
	if in.DesiredCapacity != nil {
		desired = *in.DesiredCapacity
	}
	if minSize < 0 || maxSize < minSize || desired < minSize || desired > maxSize {
		return apiErrf(cloud.CodeValidation, "Desired capacity:%d must be between the specified min size:%d and max size:%d", desired, minSize, maxSize)
	}
	if err := r.updateMixed(g, in); err != nil {
		return err
	}
	g.min, g.max = minSize, maxSize
	if in.NewInstancesProtectedFromScaleIn != nil {
		g.newProtected = *in.NewInstancesProtectedFromScaleIn
	}
	now := r.w.requestTime()
	why := ""
	if desired != g.desired {
		why = fmt.Sprintf("At %s a user request explicitly set group desired capacity changing the desired capacity from %d to %d.  ", stamp(now), g.desired, desired)
	}
	r.setDesired(g, desired, now, why)
	return nil
}

// setDesired sets g's desired capacity at t and acts on it: a lower one
// terminates the surplus, choosing instances that are not yet healthy
// first, then the newest (the sim's stand-in for the default termination
// policy), unless Terminate is suspended; a higher one launches instances.
// Instances in Standby are not counted and never chosen; instances
// protected from scale-in are counted and never chosen, so a group of
// protected instances keeps them all ("Use instance scale-in protection",
// Auto Scaling User Guide). why begins the activities' cause.
func (r *region) setDesired(g *group, desired int32, t time.Time, why string) {
	if desired != g.desired {
		g.lastScaling = t
	}
	g.desired = desired
	live := make([]*instance, 0, len(g.instances))
	for _, i := range g.instances {
		if i.counts() {
			live = append(live, i)
		}
	}
	units := g.live()
	if units <= int(desired) {
		r.fill(g, t, why)
		return
	}
	if g.suspended[ProcessTerminate] {
		return
	}
	live = slices.DeleteFunc(live, func(i *instance) bool { return i.protected })
	// Not yet healthy first, then newest first.
	sort.SliceStable(live, func(a, b int) bool {
		ha, hb := !t.Before(live[a].healthyAt), !t.Before(live[b].healthyAt)
		if ha != hb {
			return !ha
		}
		return live[a].launched.After(live[b].launched)
	})
	// A weighted group terminates an instance only when what is left
	// still meets its desired capacity.
	for _, victim := range live {
		if units <= int(desired) || units-victim.weightOf() < int(desired) {
			continue
		}
		r.retire(victim, t, fmt.Sprintf("%sAt %s an instance was taken out of service in response to a difference between desired and actual capacity, shrinking the capacity from %d to %d.  At %s instance %s was selected for termination.",
			why, stamp(t), units, units-victim.weightOf(), stamp(t), victim.id))
		units -= victim.weightOf()
	}
}

// TerminateInstanceInAutoScalingGroup terminates one instance of a group,
// as a person or another tool may: with ShouldDecrementDesiredCapacity the
// group's desired capacity drops by one (refused below its minimum size),
// else the group launches a replacement (unless ReplaceUnhealthy is
// suspended). The termination is a scaling activity, returned. An
// instance no group manages (or one already terminating) is a
// ValidationError, as Auto Scaling answers.
func (c *AutoScaling) TerminateInstanceInAutoScalingGroup(ctx context.Context, in *autoscaling.TerminateInstanceInAutoScalingGroupInput, _ ...func(*autoscaling.Options)) (*autoscaling.TerminateInstanceInAutoScalingGroupOutput, error) {
	const op = "TerminateInstanceInAutoScalingGroup"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	out, err := r.terminateInGroup(deref(in.InstanceId), deref(in.ShouldDecrementDesiredCapacity))
	return out, c.end(op, err)
}

func (r *region) terminateInGroup(id string, decrement bool) (*autoscaling.TerminateInstanceInAutoScalingGroupOutput, error) {
	var inst *instance
	for _, g := range r.liveGroups() {
		for _, i := range g.instances {
			if i.id == id && i.terminating.IsZero() && !g.deleting {
				inst = i
			}
		}
	}
	if inst == nil {
		return nil, apiErrf(cloud.CodeValidation, "Instance Id not found - No managed instance found for instance ID: %s", id)
	}
	g, now := inst.g, r.w.now
	if err := r.w.authorize(groupAuth("TerminateInstanceInAutoScalingGroup", g)); err != nil {
		return nil, err
	}
	cause := fmt.Sprintf("At %s instance %s was taken out of service in response to a user request.", stamp(now), id)
	if decrement {
		if g.desired <= g.min {
			return nil, apiErrf(cloud.CodeValidation, "Currently, desiredSize equals minSize (%d). Terminating instance without replacement will violate group's min size constraint. Either set shouldDecrementDesiredCapacity flag to false or lower group's min size.", g.min)
		}
		cause = fmt.Sprintf("At %s instance %s was taken out of service in response to a user request, shrinking the capacity from %d to %d.", stamp(now), id, g.desired, g.desired-1)
		g.desired--
		g.lastScaling = now
	}
	n := len(g.activities)
	r.terminate(inst, now, !decrement, cause) // records the termination, then any replacement
	act := g.activities[n].describe(g, now)
	return &autoscaling.TerminateInstanceInAutoScalingGroupOutput{Activity: &act}, nil
}

// PutScalingPolicy creates or replaces a scaling policy of a group and
// returns its ARN (the same ARN when it replaces one).
func (c *AutoScaling) PutScalingPolicy(ctx context.Context, in *autoscaling.PutScalingPolicyInput, _ ...func(*autoscaling.Options)) (*autoscaling.PutScalingPolicyOutput, error) {
	const op = "PutScalingPolicy"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	out, err := r.putPolicy(in)
	return out, c.end(op, err)
}

func (r *region) putPolicy(in *autoscaling.PutScalingPolicyInput) (*autoscaling.PutScalingPolicyOutput, error) {
	gname, pname := deref(in.AutoScalingGroupName), deref(in.PolicyName)
	g, err := r.lookupGroup(gname)
	if err != nil {
		return nil, err
	}
	if err := r.w.authorize(groupAuth("PutScalingPolicy", g)); err != nil {
		return nil, err
	}
	if pname == "" || len(pname) > 255 {
		return nil, apiErr(cloud.CodeValidation, "PolicyName must have length between 1 and 255")
	}
	switch pt := deref(in.PolicyType); pt {
	case "", "SimpleScaling":
		switch deref(in.AdjustmentType) {
		case "ChangeInCapacity", "ExactCapacity", "PercentChangeInCapacity":
		default:
			return nil, apiErrf(cloud.CodeValidation, "Invalid adjustment type %q", deref(in.AdjustmentType))
		}
		if in.ScalingAdjustment == nil {
			return nil, apiErr(cloud.CodeValidation, "ScalingAdjustment is required for a SimpleScaling policy")
		}
	case "StepScaling", "TargetTrackingScaling", "PredictiveScaling":
	default:
		return nil, apiErrf(cloud.CodeValidation, "Invalid policy type %q", pt)
	}
	p := g.policies[pname]
	if p == nil {
		p = &policy{name: pname, arn: fmt.Sprintf("arn:aws:autoscaling:%s:%s:scalingPolicy:%s:autoScalingGroupName/%s:policyName/%s",
			r.name, r.account.id, uuidFrom(seed(g.arn, pname)), gname, pname)}
		g.policies[pname] = p
	}
	p.input = *in
	return &autoscaling.PutScalingPolicyOutput{PolicyARN: aws.String(p.arn), Alarms: []astypes.Alarm{}}, nil
}

// uuidFrom formats a number as a UUID-shaped id.
func uuidFrom(n uint64) string {
	m := n*0x9e3779b97f4a7c15 + 1
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", uint32(n>>32), uint16(n>>16), uint16(n), uint16(m>>48), m&0xffffffffffff)
}

// CreateOrUpdateTags adds or overwrites tags of groups (each tag's
// ResourceId, ResourceType auto-scaling-group). ferry never calls it: it
// is what someone else, or a deploy role session trying to take over
// another project's group, may do. Each group is authorized with its
// current tags as resource tags and the request's as request tags; a
// group that does not exist is a ValidationError.
func (c *AutoScaling) CreateOrUpdateTags(ctx context.Context, in *autoscaling.CreateOrUpdateTagsInput, _ ...func(*autoscaling.Options)) (*autoscaling.CreateOrUpdateTagsOutput, error) {
	const op = "CreateOrUpdateTags"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	return &autoscaling.CreateOrUpdateTagsOutput{}, c.end(op, r.tagGroups(in.Tags))
}

func (r *region) tagGroups(tags []astypes.Tag) error {
	if len(tags) == 0 || len(tags) > 25 {
		return apiErr(cloud.CodeValidation, "Tags must have between 1 and 25 members")
	}
	byGroup := map[string][]astypes.Tag{}
	for _, t := range tags {
		if deref(t.ResourceType) != "auto-scaling-group" || deref(t.Key) == "" {
			return apiErrf(cloud.CodeValidation, "Invalid tag: ResourceType must be auto-scaling-group and Key must be set (key %q)", deref(t.Key))
		}
		byGroup[deref(t.ResourceId)] = append(byGroup[deref(t.ResourceId)], t)
	}
	var auths []Auth
	groups := map[string]*group{}
	for _, name := range slices.Sorted(maps.Keys(byGroup)) {
		g, err := r.lookupGroup(name)
		if err != nil {
			return err
		}
		groups[name] = g
		a := groupAuth("CreateOrUpdateTags", g)
		a.RequestTags = asgRequestTags(byGroup[name])
		auths = append(auths, a)
	}
	if err := r.w.authorize(auths...); err != nil {
		return err
	}
	for name, ts := range byGroup {
		g := groups[name]
		for _, t := range ts {
			d := astypes.TagDescription{Key: t.Key, Value: aws.String(deref(t.Value)), PropagateAtLaunch: aws.Bool(deref(t.PropagateAtLaunch)),
				ResourceId: aws.String(name), ResourceType: aws.String("auto-scaling-group")}
			if i := slices.IndexFunc(g.tags, func(x astypes.TagDescription) bool { return deref(x.Key) == deref(t.Key) }); i >= 0 {
				g.tags[i] = d
			} else {
				g.tags = append(g.tags, d)
			}
		}
		sort.Slice(g.tags, func(a, b int) bool { return *g.tags[a].Key < *g.tags[b].Key })
	}
	return nil
}
