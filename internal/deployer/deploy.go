package deployer

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/ferryhq/ferry/internal/capacity"
	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/fleet"
	"github.com/ferryhq/ferry/internal/ledger"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
)

// Scaling policy types a release may use.
const (
	policyCPUScaleUp   = "cpu_scale_up"
	policyCPUScaleDown = "cpu_scale_down"
)

// deploy is the Deploy task. It refuses to start when a fresh halt marker
// exists (*failure.HaltError). It re-resolves the release's resources (a
// problem is a *failure.BadReleaseError, before anything is created),
// records the groups it may create (ledger.PutDeploying: CleanUpFailure
// deletes them by name even when AWS does not show them yet), then for
// each service creates a launch template and an ASG, both named
// naming.GroupName, tagged with the service's tags and the reserved ones,
// sized by package capacity from the previous ASG, with the release's load
// balancers, target groups and lifecycle hooks; suspends the group's
// AlarmNotification and AZRebalance processes, so that neither its scaling
// policies nor a rebalance terminates a new instance during the deploy
// (CleanUpSuccess resumes them after the swap); then puts its scaling
// policies and their CloudWatch alarms.
//
// Idempotent: what this release already made is found by its name and
// tags and left as it is (a name taken by anything else is a
// *failure.DeployError); the launch template is created with a
// deterministic client token, so a retry gets the template it made;
// policies and alarms are upserts. Something this release made moments ago
// that AWS does not show yet is a *failure.RetryableError.
//
// It returns the State with Deployed set and Health holding each service's
// healthy target, desired capacity, launch count and stability window, and
// the wait before the first health check.
func (d *Deployer) deploy(ctx context.Context, req execution.Request) (any, error) {
	st, err := d.verify(ctx, req)
	if err != nil {
		return nil, err
	}
	if err := d.checkHalt(ctx, st, req); err != nil {
		return nil, err
	}
	r, c, err := d.loadAndConnect(ctx, st, false)
	if err != nil {
		return nil, err
	}
	res, err := d.resolve(ctx, c, st, r)
	if err != nil {
		return nil, err
	}
	if err := d.ledger.PutDeploying(ctx, st.ProjectName, st.ConfigName, ledger.Intent{
		ReleaseID: st.ReleaseID, Execution: req.Execution.ID, Since: d.now(), Groups: groupNames(st),
	}); err != nil {
		return nil, err
	}
	owner := fleet.Owner{Project: st.ProjectName, Config: st.ConfigName}
	templates, err := fleet.Templates(ctx, c.EC2, owner)
	if err != nil {
		return nil, deployErr("ec2:DescribeLaunchTemplates", err)
	}
	groups, err := fleet.Groups(ctx, c.AutoScaling, owner)
	if err != nil {
		return nil, err
	}
	made := map[string]*asgtypes.AutoScalingGroup{}
	for i, g := range groups {
		if fleet.ReleaseOf(g) == st.ReleaseID {
			made[aws.ToString(g.AutoScalingGroupName)] = &groups[i]
		}
	}

	last := req.Execution.RetryCount >= limits.TaskRetryMaxAttempts
	report := map[string]execution.ServiceHealth{}
	for _, svc := range r.ServiceNames() {
		plan, err := servicePlan(r, svc, res)
		if err != nil {
			return nil, err
		}
		name := naming.GroupName(r.ProjectName, r.ConfigName, svc, r.ReleaseID)
		log := d.log.With("release_id", r.ReleaseID, "asg", name)
		if tags, ok := templates[name]; !ok || tags[naming.TagReleaseID] != r.ReleaseID {
			if err := d.createTemplate(ctx, c.EC2, r, st, svc, res); err != nil {
				return nil, err
			}
			log.Info("launch template created")
		}
		g := made[name]
		if g == nil {
			if err := d.createGroup(ctx, c, r, svc, res, plan, last); err != nil {
				return nil, err
			}
			log.Info("auto scaling group created", "desired", plan.Desired, "launch", plan.Launch, "healthy_target", plan.Healthy)
		}
		if err := suspendScaling(ctx, c.AutoScaling, name, g, last); err != nil {
			return nil, err
		}
		if err := d.putPolicies(ctx, c, r, svc, last); err != nil {
			return nil, err
		}
		report[svc] = execution.ServiceHealth{Target: plan.Healthy, Desired: plan.Desired, Launch: plan.Launch, StableSeconds: r.ServiceStableSeconds(svc)}
	}
	st.Deployed = true
	st.Previous = othersOf(st.ReleaseID, groups, templates)
	st.Health = &execution.Health{WaitSeconds: d.waitSeconds(st, req), Services: report}
	return st, nil
}

// groupNames are the names of the groups (and launch templates) of a
// release's services.
func groupNames(st *execution.State) []string {
	names := make([]string, len(st.Services))
	for i, svc := range st.Services {
		names[i] = naming.GroupName(st.ProjectName, st.ConfigName, svc, st.ReleaseID)
	}
	return names
}

// deployProcesses are the processes a new group has suspended from its
// creation to the swap: its scaling policies must not scale it in (an idle
// fresh fleet is what a cpu_scale_down alarm fires on), nor a rebalance
// terminate one of its instances, while it is being judged.
var deployProcesses = []string{"AlarmNotification", "AZRebalance"}

// suspendScaling suspends deployProcesses of the group name, unless g (the
// group as last described) shows them suspended already. A group AWS does
// not show yet is a *failure.RetryableError (see notVisibleYet).
func suspendScaling(ctx context.Context, api cloud.AutoScaling, name string, g *asgtypes.AutoScalingGroup, last bool) error {
	if g != nil && !slices.ContainsFunc(deployProcesses, func(p string) bool {
		return !slices.ContainsFunc(g.SuspendedProcesses, func(s asgtypes.SuspendedProcess) bool { return aws.ToString(s.ProcessName) == p })
	}) {
		return nil
	}
	_, err := api.SuspendProcesses(ctx, &autoscaling.SuspendProcessesInput{AutoScalingGroupName: aws.String(name), ScalingProcesses: deployProcesses})
	return notVisibleYet("autoscaling:SuspendProcesses "+name, err, last)
}

// notVisibleYet classifies the error of a call that names what this
// release made moments ago (a group, the launch template of a group): a
// ValidationError is how Auto Scaling says "not found" (the group, or the
// launch template, "does not exist"), which is what AWS answers while it
// does not show a new resource yet (eventual consistency: "if you run a
// command to modify or describe the resource that you just created ... you
// will get an error responding that the resource does not exist"). It is
// a *failure.RetryableError until the last attempt (ferry checked every
// parameter it sends before, so a ValidationError is almost always that);
// then, and for any other failure, a *failure.DeployError unless
// transient.
func notVisibleYet(op string, err error, last bool) error {
	if err == nil {
		return nil
	}
	if cloud.IsCode(err, cloud.CodeValidation) && !last {
		return &failure.RetryableError{Op: op, Err: fmt.Errorf("what it names was created moments ago and may not be visible yet: %w", err)}
	}
	return deployErr(op, err)
}

// bounds are a service's autoscaling settings (defaults applied).
func bounds(s *release.Service) capacity.Bounds {
	a := s.Autoscaling
	if a == nil {
		a = &release.Autoscaling{MinSize: release.DefaultMinSize, MaxSize: release.DefaultMinSize}
	}
	return capacity.Bounds{MinSize: a.MinSize, MaxSize: a.MaxSize, Spread: a.Spread, MaxTerms: a.MaxTerms}
}

// servicePlan is the capacity of a service's new ASG given its previous
// ASG (if any).
func servicePlan(r *release.Release, svc string, res *resources) (capacity.Plan, error) {
	var previous *int
	if g, ok := res.previous[svc]; ok && g.DesiredCapacity != nil {
		v := int(*g.DesiredCapacity)
		previous = &v
	}
	plan, err := capacity.Compute(bounds(r.Services[svc]), previous)
	if err != nil {
		return capacity.Plan{}, failure.BadRelease(fmt.Sprintf("services.%s.autoscaling: %v", svc, err))
	}
	return plan, nil
}

// groupTags are the tags of everything made for one service of a release:
// the service's own tags, then the reserved ones (which win).
func groupTags(r *release.Release, svc string) map[string]string {
	tags := map[string]string{}
	for k, v := range r.Services[svc].Tags {
		tags[k] = v
	}
	tags[naming.TagProjectName] = r.ProjectName
	tags[naming.TagConfigName] = r.ConfigName
	tags[naming.TagServiceName] = svc
	tags[naming.TagReleaseID] = r.ReleaseID
	tags[naming.TagDeployWith] = naming.DeployWithValue
	tags[naming.TagName] = naming.GroupName(r.ProjectName, r.ConfigName, svc, r.ReleaseID)
	return tags
}

func ec2TagList(m map[string]string) []ec2types.Tag {
	var out []ec2types.Tag
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, ec2types.Tag{Key: aws.String(k), Value: aws.String(m[k])})
	}
	return out
}

// ours reports whether tags mark a resource of this release.
func ours(tags map[string]string, st *execution.State) bool {
	return fleet.Owner{Project: st.ProjectName, Config: st.ConfigName}.Marks(tags) && tags[naming.TagReleaseID] == st.ReleaseID
}

// createTemplate creates the launch template of one service, with a client
// token made of its name and the release's hash: a retry of the same
// request gets the template it made, as EC2's idempotency promises. A
// template of that name that already exists must be this release's; one
// AWS says exists but does not show yet is a *failure.RetryableError.
func (d *Deployer) createTemplate(ctx context.Context, api cloud.EC2, r *release.Release, st *execution.State, svc string, res *resources) error {
	s := r.Services[svc]
	name := naming.GroupName(r.ProjectName, r.ConfigName, svc, r.ReleaseID)
	script, err := userData(r, st.Target, svc)
	if err != nil {
		return err
	}
	tags := groupTags(r, svc)
	data := &ec2types.RequestLaunchTemplateData{
		ImageId:      aws.String(res.images[r.ServiceAMI(svc)]),
		InstanceType: ec2types.InstanceType(s.InstanceType),
		UserData:     aws.String(base64.StdEncoding.EncodeToString(script)),
		MetadataOptions: &ec2types.LaunchTemplateInstanceMetadataOptionsRequest{
			HttpTokens:   ec2types.LaunchTemplateHttpTokensStateRequired,
			HttpEndpoint: ec2types.LaunchTemplateInstanceMetadataEndpointStateEnabled,
		},
		TagSpecifications: []ec2types.LaunchTemplateTagSpecificationRequest{
			{ResourceType: ec2types.ResourceTypeVolume, Tags: ec2TagList(tags)},
		},
	}
	for _, ref := range s.SecurityGroups {
		data.SecurityGroupIds = append(data.SecurityGroupIds, res.groups[ref])
	}
	if s.Profile != "" {
		data.IamInstanceProfile = &ec2types.LaunchTemplateIamInstanceProfileSpecificationRequest{Name: aws.String(s.Profile)}
	}
	if s.EBSVolumeSize > 0 {
		// Without a device name the volume is the image's root device, so
		// ebs_volume_size resizes the root volume rather than adding one.
		device := s.EBSDeviceName
		if device == "" {
			device = res.rootDevices[aws.ToString(data.ImageId)]
		}
		data.BlockDeviceMappings = []ec2types.LaunchTemplateBlockDeviceMappingRequest{{
			DeviceName: aws.String(device),
			Ebs: &ec2types.LaunchTemplateEbsBlockDeviceRequest{
				VolumeSize:          aws.Int32(int32(s.EBSVolumeSize)),
				VolumeType:          ec2types.VolumeType(s.EBSVolumeType),
				DeleteOnTermination: aws.Bool(true),
				Encrypted:           aws.Bool(true),
			},
		}}
	}
	_, err = api.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String(name),
		LaunchTemplateData: data,
		ClientToken:        aws.String(clientToken(name, st.ReleaseSHA256)),
		TagSpecifications:  []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeLaunchTemplate, Tags: ec2TagList(tags)}},
	})
	if err == nil {
		return nil
	}
	if !cloud.IsCode(err, cloud.CodeLaunchTemplateNameAlreadyExists, cloud.CodeAlreadyExists) {
		return deployErr("ec2:CreateLaunchTemplate "+name, err)
	}
	out, derr := api.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{name}})
	switch {
	case cloud.IsNotFoundCode(derr, cloud.CodeLaunchTemplateNameNotFound):
		return &failure.RetryableError{Op: "ec2:CreateLaunchTemplate " + name, Err: errors.New("the launch template exists but is not visible yet")}
	case derr != nil:
		return deployErr("ec2:DescribeLaunchTemplates "+name, derr)
	}
	for _, lt := range out.LaunchTemplates {
		if aws.ToString(lt.LaunchTemplateName) == name && ours(fleet.EC2Tags(lt.Tags), st) {
			return nil
		}
	}
	return &failure.DeployError{Op: "ec2:CreateLaunchTemplate " + name, Err: errors.New("a launch template of that name exists and was not made by this release")}
}

// launchTemplateVersion pins a group to the version of its launch
// template that ferry created: CreateLaunchTemplate makes version 1, and
// ferry never adds one. "$Latest" or "$Default" would let anyone allowed
// CreateLaunchTemplateVersion (or ModifyLaunchTemplate) change what the
// group's next launch runs, since Auto Scaling resolves them at each
// launch (LaunchTemplateSpecification, Auto Scaling API Reference).
const launchTemplateVersion = "1"

// clientToken is the CreateLaunchTemplate client token of a template of a
// release: the same for every attempt of the same request, different for
// another release (EC2 allows 64 ASCII characters; this is 32).
func clientToken(name, releaseSHA256 string) string {
	sum := sha256.Sum256([]byte("ferry launch template\x00" + name + "\x00" + releaseSHA256))
	return hex.EncodeToString(sum[:16])
}

// createGroup creates the ASG of one service. A group of that name that
// already exists must be this release's; a launch template or group AWS
// does not show yet is retryable (see notVisibleYet).
func (d *Deployer) createGroup(ctx context.Context, c *cloud.Clients, r *release.Release, svc string, res *resources, plan capacity.Plan, last bool) error {
	s := r.Services[svc]
	name := naming.GroupName(r.ProjectName, r.ConfigName, svc, r.ReleaseID)
	var subnets []string
	for _, ref := range r.ServiceSubnets(svc) {
		subnets = append(subnets, res.subnets[ref])
	}
	var tgs []string
	for _, ref := range s.TargetGroups {
		tgs = append(tgs, res.targetGroups[ref])
	}
	checkType := "EC2"
	if len(s.ELBs) > 0 || len(tgs) > 0 {
		checkType = "ELB"
	}
	tags := groupTags(r, svc)
	var asgTagList []asgtypes.Tag
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		asgTagList = append(asgTagList, asgtypes.Tag{
			Key: aws.String(k), Value: aws.String(tags[k]), PropagateAtLaunch: aws.Bool(true),
			ResourceId: aws.String(name), ResourceType: aws.String("auto-scaling-group"),
		})
	}
	var hooks []asgtypes.LifecycleHookSpecification
	for _, n := range slices.Sorted(maps.Keys(r.Lifecycle)) {
		h := r.Lifecycle[n]
		if h == nil {
			continue
		}
		hooks = append(hooks, asgtypes.LifecycleHookSpecification{
			LifecycleHookName:     aws.String(n),
			LifecycleTransition:   aws.String(h.Transition),
			RoleARN:               aws.String(res.hookRoles[h.Role]),
			NotificationTargetARN: aws.String(res.hookTopics[h.SNS]),
			HeartbeatTimeout:      aws.Int32(int32(h.HeartbeatTimeout)),
			DefaultResult:         aws.String("CONTINUE"),
		})
	}
	_, err := c.AutoScaling.CreateAutoScalingGroup(ctx, &autoscaling.CreateAutoScalingGroupInput{
		AutoScalingGroupName: aws.String(name),
		LaunchTemplate: &asgtypes.LaunchTemplateSpecification{
			LaunchTemplateName: aws.String(name),
			Version:            aws.String(launchTemplateVersion),
		},
		MinSize:                        aws.Int32(int32(bounds(s).MinSize)),
		MaxSize:                        aws.Int32(int32(bounds(s).MaxSize)),
		DesiredCapacity:                aws.Int32(int32(plan.Launch)),
		VPCZoneIdentifier:              aws.String(strings.Join(subnets, ",")),
		LoadBalancerNames:              s.ELBs,
		TargetGroupARNs:                tgs,
		HealthCheckType:                aws.String(checkType),
		HealthCheckGracePeriod:         aws.Int32(int32(d.cfg.HealthCheckGracePeriod / time.Second)),
		LifecycleHookSpecificationList: hooks,
		Tags:                           asgTagList,
	})
	if err == nil {
		return nil
	}
	if !cloud.IsCode(err, cloud.CodeAlreadyExists) {
		return notVisibleYet("autoscaling:CreateAutoScalingGroup "+name, err, last)
	}
	out, derr := c.AutoScaling.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{name}})
	if derr != nil {
		return deployErr("autoscaling:DescribeAutoScalingGroups "+name, derr)
	}
	st := &execution.State{ProjectName: r.ProjectName, ConfigName: r.ConfigName, ReleaseID: r.ReleaseID}
	for _, g := range out.AutoScalingGroups {
		if aws.ToString(g.AutoScalingGroupName) == name && ours(fleet.ASGTags(g.Tags), st) {
			return nil
		}
	}
	if len(out.AutoScalingGroups) == 0 {
		// AWS says it exists but does not show it yet (eventual
		// consistency): a retry will find it.
		return &failure.RetryableError{Op: "autoscaling:CreateAutoScalingGroup " + name, Err: errors.New("the group exists but is not visible yet")}
	}
	return &failure.DeployError{Op: "autoscaling:CreateAutoScalingGroup " + name, Err: errors.New("an Auto Scaling group of that name exists and was not made by this release")}
}

// putPolicies puts the service's scaling policies and their alarms
// (upserts: a retry rewrites the same). A group AWS does not show yet is
// retryable (see notVisibleYet).
func (d *Deployer) putPolicies(ctx context.Context, c *cloud.Clients, r *release.Release, svc string, last bool) error {
	s := r.Services[svc]
	if s.Autoscaling == nil {
		return nil
	}
	name := naming.GroupName(r.ProjectName, r.ConfigName, svc, r.ReleaseID)
	tags := groupTags(r, svc)
	var cwTags []cwtypes.Tag
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		cwTags = append(cwTags, cwtypes.Tag{Key: aws.String(k), Value: aws.String(tags[k])})
	}
	for _, p := range s.Autoscaling.Policies {
		var cmp cwtypes.ComparisonOperator
		switch p.Type {
		case policyCPUScaleUp:
			cmp = cwtypes.ComparisonOperatorGreaterThanThreshold
		case policyCPUScaleDown:
			cmp = cwtypes.ComparisonOperatorLessThanThreshold
		default:
			return failure.BadRelease(fmt.Sprintf("services.%s.autoscaling.policies: unknown type %q", svc, p.Type))
		}
		out, err := c.AutoScaling.PutScalingPolicy(ctx, &autoscaling.PutScalingPolicyInput{
			AutoScalingGroupName: aws.String(name),
			PolicyName:           aws.String(naming.PolicyName(p.Type)),
			PolicyType:           aws.String("SimpleScaling"),
			AdjustmentType:       aws.String("ChangeInCapacity"),
			ScalingAdjustment:    aws.Int32(int32(p.ScalingAdjustment)),
			Cooldown:             aws.Int32(int32(p.Cooldown)),
		})
		if err != nil {
			return notVisibleYet("autoscaling:PutScalingPolicy "+name, err, last)
		}
		_, err = c.CloudWatch.PutMetricAlarm(ctx, &cloudwatch.PutMetricAlarmInput{
			AlarmName:          aws.String(naming.AlarmName(name, p.Type)),
			AlarmDescription:   aws.String(fmt.Sprintf("%s of %s", p.Type, name)),
			Namespace:          aws.String("AWS/EC2"),
			MetricName:         aws.String("CPUUtilization"),
			Statistic:          cwtypes.StatisticAverage,
			Dimensions:         []cwtypes.Dimension{{Name: aws.String("AutoScalingGroupName"), Value: aws.String(name)}},
			Period:             aws.Int32(int32(p.Period)),
			EvaluationPeriods:  aws.Int32(int32(p.EvaluationPeriods)),
			Threshold:          aws.Float64(p.Threshold),
			ComparisonOperator: cmp,
			AlarmActions:       []string{aws.ToString(out.PolicyARN)},
			Tags:               cwTags,
		})
		if err != nil {
			return deployErr("cloudwatch:PutMetricAlarm "+name, err)
		}
	}
	return nil
}
