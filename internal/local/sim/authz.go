package sim

import (
	"fmt"
	"slices"
	"strings"

	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/events"
	"github.com/ferryhq/ferry/internal/naming"
)

// Auth is one authorization AWS makes for a call: an IAM action on a
// resource, with the condition context the simulation knows. A call may
// need several (CreateAutoScalingGroup with a launch template is also
// ec2:RunInstances on the template's image, subnets and security groups,
// and iam:PassRole on its roles: "Amazon EC2 Auto Scaling API permissions",
// Auto Scaling User Guide). Every Call records its Auths, so an IAM engine
// can evaluate the real policies against what ferry really did.
type Auth struct {
	// Action is the IAM action, "service:Action".
	Action string `json:"action"`
	// Resource is the resource's ARN, or "*" for an action without
	// resource-level permissions.
	Resource string `json:"resource"`
	// ResourceTags are the resource's tags (aws:ResourceTag/...).
	ResourceTags map[string]string `json:"resource_tags,omitempty"`
	// RequestTags are the tags the request sets (aws:RequestTag/...; its
	// keys are aws:TagKeys).
	RequestTags map[string]string `json:"request_tags,omitempty"`
	// Context holds the other condition keys the request sets
	// (ec2:CreateAction, iam:PassedToService, cloudwatch:AlarmActions,
	// autoscaling:LaunchTemplateVersionSpecified, ec2:LaunchTemplate).
	Context map[string][]string `json:"context,omitempty"`
}

// iamPrefixes are the IAM service prefixes of the simulated services.
var iamPrefixes = map[string]string{
	serviceEC2: "ec2", serviceAutoScaling: "autoscaling", serviceELB: "elasticloadbalancing",
	serviceELBv2: "elasticloadbalancing", serviceIAM: "iam", serviceSNS: "sns",
	serviceCloudWatch: "cloudwatch", serviceSTS: "sts", serviceEventBridge: "events",
}

// defaultAuth is the authorization of a call whose handler names none:
// its own action on every resource.
func defaultAuth(service, op string) []Auth {
	return []Auth{{Action: iamPrefixes[service] + ":" + op, Resource: "*"}}
}

// authorize records the authorizations of the call in progress (the first
// replace its default, later ones add to them) and, for
// a session of a bootstrap deploy role, enforces the deploy role's rules
// on each (deployRoleAllows): the first refused one is AccessDenied, as
// IAM words it. Unauthenticated clients are not checked. The caller holds
// w.mu and calls it before the call changes anything.
func (w *World) authorize(auths ...Auth) error {
	if c := w.calls.current(); c != nil {
		if !w.calls.authorized {
			c.Auth = nil
		}
		c.Auth = append(c.Auth, auths...)
		w.calls.authorized = true
	}
	s := w.caller
	if s == nil || !s.deploy {
		return nil
	}
	for _, a := range auths {
		if !deployRoleAllows(s, a) {
			return apiErrf(cloud.CodeAccessDenied, "User: %s is not authorized to perform: %s on resource: %s because no identity-based policy allows the %s action",
				s.arn(), a.Action, a.Resource, a.Action)
		}
	}
	return nil
}

// deployRoleAllows is the bootstrap deploy role's policy
// (infra/stacks/deployrole.go) as the simulation enforces it, for a
// session tagged with its release's project and config (attribute-based
// access control: "Define permissions based on attributes with ABAC
// authorization", IAM User Guide). The iam test of infra/ evaluates the
// policy itself with an independent engine against the same Auths.
//
//   - Reads are allowed (the policy allows exactly the Describe and Get
//     calls ferry makes, the ones simulated).
//   - Groups: created only under the session's name prefix, tagged with
//     its ProjectName and ConfigName and DeployWith=ferry, from a launch
//     template version given by number; changed, scaled, given policies,
//     suspended, resumed or deleted only when tagged so; given target
//     groups (created or attached) only of their own account and region.
//   - Tags are never added to or changed on an existing group
//     (autoscaling:CreateOrUpdateTags, DeleteTags), and on EC2 resources
//     only as they are created (ec2:CreateAction), with the session's tags.
//   - Launch templates: created and deleted only tagged with the session's
//     project-config; never given a new version or a new default.
//   - Launches: only from images and subnets tagged DeployWith=ferry,
//     security groups tagged with the session's project-config, and the
//     session's launch templates.
//   - Roles passed only under the session's project-config path
//     (naming.Passable), to EC2 or Auto Scaling.
//   - Alarms: put, tagged and deleted only under the session's name prefix,
//     with the session's tags, acting only on the session's groups'
//     scaling policies.
//   - Events: put only on the account's default bus, with source ferry
//     (events:source).
func deployRoleAllows(s *session, a Auth) bool {
	project, config := s.tags[naming.TagProjectName], s.tags[naming.TagConfigName]
	if project == "" || config == "" {
		return false
	}
	prefix := naming.GroupPrefix(project, config)
	ours := func(tags map[string]string) bool {
		return tags[naming.TagProjectName] == project && tags[naming.TagConfigName] == config &&
			tags[naming.TagDeployWith] == naming.DeployWithValue
	}
	named := func(marker string) bool {
		_, name, ok := strings.Cut(a.Resource, marker)
		return ok && strings.HasPrefix(name, prefix)
	}
	has := func(key string, values ...string) bool {
		v := a.Context[key]
		return len(v) > 0 && !slices.ContainsFunc(v, func(x string) bool { return !slices.Contains(values, x) })
	}
	service, action, _ := strings.Cut(a.Action, ":")
	if strings.HasPrefix(action, "Describe") || strings.HasPrefix(action, "Get") || strings.HasPrefix(action, "List") {
		return !slices.Contains([]string{"DescribeInstanceAttribute", "DescribeLaunchTemplateVersions", "GetLaunchTemplateData"}, action)
	}
	switch service + ":" + action {
	case "events:PutEvents":
		return strings.HasPrefix(a.Resource, "arn:aws:events:") && strings.HasSuffix(a.Resource, ":"+s.account+":event-bus/default") &&
			has("events:source", events.Source)
	case "autoscaling:CreateAutoScalingGroup":
		return named(":autoScalingGroupName/") && ours(a.RequestTags) && has("autoscaling:LaunchTemplateVersionSpecified", "true") &&
			localTargetGroups(a)
	case "autoscaling:UpdateAutoScalingGroup", "autoscaling:DeleteAutoScalingGroup", "autoscaling:SetDesiredCapacity",
		"autoscaling:PutScalingPolicy", "autoscaling:SuspendProcesses", "autoscaling:ResumeProcesses",
		"autoscaling:DetachLoadBalancers", "autoscaling:DetachLoadBalancerTargetGroups",
		"autoscaling:AttachLoadBalancers", "autoscaling:AttachLoadBalancerTargetGroups", "autoscaling:CompleteLifecycleAction",
		"autoscaling:SetInstanceProtection":
		return named(":autoScalingGroupName/") && ours(a.ResourceTags) && localTargetGroups(a)
	case "ec2:CreateLaunchTemplate":
		return ours(a.RequestTags)
	case "ec2:CreateTags":
		return has("ec2:CreateAction", "CreateLaunchTemplate", "RunInstances") && ours(a.RequestTags)
	case "ec2:DeleteLaunchTemplate":
		return ours(a.ResourceTags)
	case "ec2:RunInstances":
		switch kind := resourceKind(a.Resource); kind {
		case "image", "subnet":
			return a.ResourceTags[naming.TagDeployWith] == naming.DeployWithValue
		case "security-group":
			return a.ResourceTags[naming.TagProjectName] == project && a.ResourceTags[naming.TagConfigName] == config
		case "launch-template":
			return ours(a.ResourceTags)
		case "instance", "volume", "network-interface":
			return len(a.Context["ec2:LaunchTemplate"]) > 0
		}
		return false
	case "iam:PassRole":
		_, res, _ := strings.Cut(a.Resource, ":role")
		i := strings.LastIndex(res, "/")
		return i >= 0 && naming.Passable(project, config, res[:i+1], res[i+1:]) &&
			has("iam:PassedToService", "ec2.amazonaws.com", "autoscaling.amazonaws.com")
	case "iam:CreateServiceLinkedRole":
		return has("iam:AWSServiceName", "autoscaling.amazonaws.com")
	case "cloudwatch:PutMetricAlarm":
		return named(":alarm:") && ours(a.RequestTags) && !slices.ContainsFunc(a.Context["cloudwatch:AlarmActions"], func(act string) bool {
			return !naming.WildcardMatch("arn:aws:autoscaling:*:scalingPolicy:*:autoScalingGroupName/"+prefix+"*", act)
		})
	case "cloudwatch:TagResource":
		return named(":alarm:") && ours(a.RequestTags)
	case "cloudwatch:DeleteAlarms":
		return named(":alarm:")
	}
	return false
}

// localTargetGroups reports whether every target group a's request names
// (autoscaling:TargetGroupARNs) is of the account and region of a's group.
func localTargetGroups(a Auth) bool {
	parts := strings.SplitN(a.Resource, ":", 6)
	if len(parts) < 6 {
		return false
	}
	local := "arn:" + parts[1] + ":elasticloadbalancing:" + parts[3] + ":" + parts[4] + ":targetgroup/"
	return !slices.ContainsFunc(a.Context["autoscaling:TargetGroupARNs"], func(tg string) bool { return !strings.HasPrefix(tg, local) })
}

// resourceKind is the resource type of an EC2 ARN ("image" of
// arn:aws:ec2:us-east-1::image/ami-1).
func resourceKind(arn string) string {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) < 6 {
		return ""
	}
	kind, _, _ := strings.Cut(parts[5], "/")
	return kind
}

// ARNs of the simulated resources, as IAM names them.

func (r *region) ec2ARN(kind, id string) string {
	return "arn:aws:ec2:" + r.name + ":" + r.account.id + ":" + kind + "/" + id
}

func (r *region) imageARN(id string) string { return "arn:aws:ec2:" + r.name + "::image/" + id }

func (r *region) alarmARN(name string) string {
	return "arn:aws:cloudwatch:" + r.name + ":" + r.account.id + ":alarm:" + name
}

func (r *region) roleARN(rl *role) string {
	return "arn:aws:iam::" + r.account.id + ":role" + rl.path + rl.name
}

func tagMap[T any](tags []T, kv func(T) (string, string)) map[string]string {
	if len(tags) == 0 {
		return nil
	}
	m := make(map[string]string, len(tags))
	for _, t := range tags {
		k, v := kv(t)
		m[k] = v
	}
	return m
}

func ec2TagMap(tags []ec2types.Tag) map[string]string {
	return tagMap(tags, func(t ec2types.Tag) (string, string) { return deref(t.Key), deref(t.Value) })
}

func asgTags(tags []astypes.TagDescription) map[string]string {
	return tagMap(tags, func(t astypes.TagDescription) (string, string) { return deref(t.Key), deref(t.Value) })
}

func asgRequestTags(tags []astypes.Tag) map[string]string {
	return tagMap(tags, func(t astypes.Tag) (string, string) { return deref(t.Key), deref(t.Value) })
}

func cwTags(tags []cwtypes.Tag) map[string]string {
	return tagMap(tags, func(t cwtypes.Tag) (string, string) { return deref(t.Key), deref(t.Value) })
}

// groupAuth is the authorization of an action on an existing group.
func groupAuth(action string, g *group) Auth {
	return Auth{Action: "autoscaling:" + action, Resource: g.arn, ResourceTags: asgTags(g.tags)}
}

// createGroupAuths are the authorizations of CreateAutoScalingGroup ("Amazon
// EC2 Auto Scaling API permissions", Auto Scaling User Guide): the action
// itself with the group's tags as request tags; ec2:RunInstances on the
// launch template and on what it launches from and into (its image, the
// group's subnets, its security groups, the instances, their volumes and
// network interfaces); ec2:CreateTags on the volumes its tag
// specifications tag at launch; iam:PassRole on the instance profile's
// roles and the lifecycle hooks' roles. Resources that do not exist are
// left out (the call fails on them anyway).
func (r *region) createGroupAuths(arn string, in *createGroupRequest) []Auth {
	versioned := "true"
	switch deref(in.spec.Version) {
	case "", "$Latest", "$Default":
		versioned = "false"
	}
	return []Auth{{
		Action: "autoscaling:CreateAutoScalingGroup", Resource: arn, RequestTags: asgRequestTags(in.tags),
		Context: withTraffic(map[string][]string{"autoscaling:LaunchTemplateVersionSpecified": {versioned}}, in.elbs, in.tgARNs),
	}}
}

// withTraffic adds to ctx the condition keys of the load balancers a
// request names: autoscaling:LoadBalancerNames and
// autoscaling:TargetGroupARNs (Service Authorization Reference, Amazon EC2
// Auto Scaling: CreateAutoScalingGroup and the Attach actions), each only
// when the request names some.
func withTraffic(ctx map[string][]string, elbs, tgARNs []string) map[string][]string {
	if len(elbs) > 0 {
		ctx["autoscaling:LoadBalancerNames"] = elbs
	}
	if len(tgARNs) > 0 {
		ctx["autoscaling:TargetGroupARNs"] = tgARNs
	}
	return ctx
}

// launchAuths are the authorizations of CreateAutoScalingGroup besides its
// own (createGroupAuths), once its launch template is resolved.
func (r *region) launchAuths(in *createGroupRequest) []Auth {
	var auths []Auth
	lt, data := in.lt, in.data
	ltARN := r.ec2ARN("launch-template", lt.id)
	launch := map[string][]string{"ec2:LaunchTemplate": {ltARN}}
	run := func(res string, tags map[string]string) {
		auths = append(auths, Auth{Action: "ec2:RunInstances", Resource: res, ResourceTags: tags, Context: launch})
	}
	run(ltARN, ec2TagMap(lt.tags))
	if img := r.amis[deref(data.ImageId)]; img != nil {
		run(r.imageARN(img.id), img.tags)
	}
	for _, s := range in.subnets {
		run(r.ec2ARN("subnet", s.id), s.tags)
	}
	for _, id := range data.SecurityGroupIds {
		if sg := r.sgs[id]; sg != nil {
			run(r.ec2ARN("security-group", sg.id), sg.tags)
		}
	}
	run(r.ec2ARN("instance", "*"), nil)
	run(r.ec2ARN("network-interface", "*"), nil)
	run(r.ec2ARN("volume", "*"), nil)
	for _, ts := range data.TagSpecifications {
		auths = append(auths, Auth{
			Action: "ec2:CreateTags", Resource: r.ec2ARN(string(ts.ResourceType), "*"), RequestTags: ec2TagMap(ts.Tags),
			Context: map[string][]string{"ec2:CreateAction": {"RunInstances"}},
		})
	}
	pass := func(rl *role, service string) {
		auths = append(auths, Auth{Action: "iam:PassRole", Resource: r.roleARN(rl),
			Context: map[string][]string{"iam:PassedToService": {service}}})
	}
	if p := data.IamInstanceProfile; p != nil {
		if ip := r.account.profiles[deref(p.Name)]; ip != nil {
			for _, n := range ip.roles {
				if rl := r.account.roles[n]; rl != nil {
					pass(rl, "ec2.amazonaws.com")
				}
			}
		}
	}
	for _, h := range in.hooks {
		if _, name, ok := parseRoleARN(deref(h.RoleARN)); ok {
			if rl := r.account.roles[name]; rl != nil {
				pass(rl, "autoscaling.amazonaws.com")
			}
		}
	}
	return auths
}

// createGroupRequest is what createGroupAuths reads of a
// CreateAutoScalingGroup request, resolved.
type createGroupRequest struct {
	spec    astypes.LaunchTemplateSpecification
	lt      *launchTemplate
	data    *ec2types.RequestLaunchTemplateData
	subnets []*subnet
	tags    []astypes.Tag
	hooks   []astypes.LifecycleHookSpecification
	elbs    []string
	tgARNs  []string
}

// describeAuth names an action for error messages of tests.
func (a Auth) String() string { return fmt.Sprintf("%s on %s", a.Action, a.Resource) }
