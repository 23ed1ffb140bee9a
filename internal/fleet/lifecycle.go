package fleet

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
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

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/naming/tags"
)

// Release makes, and readies for the swap, what one release deploys for
// its project-config: a launch template and an Auto Scaling group per
// service, each named naming.GroupName, with the group's scaling policies
// and their alarms. Every method is idempotent: what the release made
// already is found by its name and tags and left as it is.
//
// Errors: a transient failure, or until the last attempt Auto Scaling's
// "not found" of what the release made moments ago (AWS is eventually
// consistent after a create), is a *failure.RetryableError; any other, a
// request AWS refuses among them, is a *failure.DeployError (a
// *failure.CleanUpError from Settle, which runs past the swap's point of
// no return).
type Release struct {
	// Clients are the target's.
	Clients *cloud.Clients
	// Owner is the project-config.
	Owner Owner
	// ID and SHA256 are the release's id and canonical hash.
	ID, SHA256 string
	// LastAttempt says no retry follows: "does not exist" is then taken
	// as it is.
	LastAttempt bool
	// Log receives what is settled.
	Log *slog.Logger
}

// Template is the launch template of one service of a release.
type Template struct {
	Name           string
	ImageID        string
	InstanceType   string
	UserData       []byte
	SecurityGroups []string
	// Profile is the instance profile's name ("" for none).
	Profile string
	// Volume, when not nil, is the EBS volume the instances get.
	Volume *Volume
	// Tags are the template's, and its volumes'.
	Tags map[string]string
	// DetailedMonitoring makes EC2 publish the instances' metrics every
	// minute instead of every five (Monitoring.Enabled).
	DetailedMonitoring bool
}

// Volume is an encrypted EBS volume, deleted with its instance.
type Volume struct {
	Device  string
	SizeGiB int
	Type    string
}

// Group is the Auto Scaling group of one service of a release; it
// launches from the launch template of its name.
type Group struct {
	Name                   string
	MinSize, MaxSize       int
	Desired                int
	Subnets                []string
	LoadBalancers          []string // classic, by name
	TargetGroups           []string // by ARN
	HealthCheckGracePeriod time.Duration
	Hooks                  []Hook
	// Tags are the group's, propagated to its instances.
	Tags map[string]string
	// Mixed, when not nil, is its mixed instances policy: MinSize,
	// MaxSize and Desired are then capacity units when it weighs its
	// instance types.
	Mixed *Mixed
}

// Hook is a lifecycle hook of a group.
type Hook struct {
	Name, Transition, RoleARN, TopicARN string
	HeartbeatTimeout                    int
}

// Policy is a simple scaling policy of a group on its average CPU, and
// the alarm that runs it (naming.PolicyName, naming.AlarmName).
type Policy struct {
	// Type names the policy and its alarm (cpu_scale_up).
	Type string
	// Above says the alarm fires above Threshold, else below it.
	Above                                           bool
	Threshold                                       float64
	Adjustment, EvaluationPeriods, Period, Cooldown int
}

// DeployProcesses are the processes a new group has suspended from its
// creation to the swap: its scaling policies must not scale it in (an idle
// fresh fleet is what a cpu_scale_down alarm fires on), nor a rebalance
// terminate one of its instances, while it is being judged.
var DeployProcesses = []string{"AlarmNotification", "AZRebalance"}

// launchTemplateVersion pins a group to the version of its launch
// template that ferry created: CreateLaunchTemplate makes version 1, and
// ferry never adds one. "$Latest" or "$Default" would let anyone allowed
// CreateLaunchTemplateVersion (or ModifyLaunchTemplate) change what the
// group's next launch runs, since Auto Scaling resolves them at each
// launch (LaunchTemplateSpecification, Auto Scaling API Reference).
const launchTemplateVersion = "1"

// LaunchDrift says how group g no longer launches from the launch
// template ferry made for it at the version ferry pinned ("" when it
// does): another template or version. A group with a mixed instances
// policy launches from the policy's launch template, and each override
// from it too (not from one of its own).
func LaunchDrift(g asgtypes.AutoScalingGroup) string {
	name := aws.ToString(g.AutoScalingGroupName)
	lt := g.LaunchTemplate
	if m := g.MixedInstancesPolicy; m != nil {
		switch {
		case lt != nil || m.LaunchTemplate == nil:
			return "launches from a mixed instances policy without its launch template " + name + " version " + launchTemplateVersion
		case slices.ContainsFunc(m.LaunchTemplate.Overrides, func(o asgtypes.LaunchTemplateOverrides) bool { return o.LaunchTemplateSpecification != nil }):
			return "launches an override of its mixed instances policy from another launch template, not from " + name + " version " + launchTemplateVersion
		}
		lt = m.LaunchTemplate.LaunchTemplateSpecification
	}
	switch {
	case lt == nil:
		return "launches from no launch template, not from " + name + " version " + launchTemplateVersion
	case aws.ToString(lt.LaunchTemplateName) != name || aws.ToString(lt.Version) != launchTemplateVersion:
		return fmt.Sprintf("launches from %s version %s, not from %s version %s",
			cmp.Or(aws.ToString(lt.LaunchTemplateName), aws.ToString(lt.LaunchTemplateId)), aws.ToString(lt.Version), name, launchTemplateVersion)
	}
	return ""
}

// Made reports whether tags mark a resource of the project-config made by
// release releaseID.
func (o Owner) Made(tags map[string]string, releaseID string) bool {
	return o.Marks(tags) && tags[naming.TagReleaseID] == releaseID
}

// CreateTemplate creates the launch template t, with a client token made
// of its name and the release's hash: a retry of the same request gets the
// template it made, as EC2's idempotency promises. A template of that name
// that already exists must be this release's; one AWS says exists but
// does not show yet is retryable.
func (r *Release) CreateTemplate(ctx context.Context, t Template) error {
	api := r.Clients.EC2
	_, err := api.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String(t.Name),
		LaunchTemplateData: t.data(),
		ClientToken:        aws.String(clientToken(t.Name, r.SHA256)),
		TagSpecifications:  []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeLaunchTemplate, Tags: tags.EC2(t.Tags)}},
	})
	if err == nil {
		return nil
	}
	op := "ec2:CreateLaunchTemplate " + t.Name
	if !cloud.IsCode(err, cloud.CodeLaunchTemplateNameAlreadyExists, cloud.CodeAlreadyExists) {
		return deployErr(op, err)
	}
	out, derr := api.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{t.Name}})
	switch {
	case cloud.IsNotFoundCode(derr, cloud.CodeLaunchTemplateNameNotFound):
		return &failure.RetryableError{Op: op, Err: errors.New("the launch template exists but is not visible yet")}
	case derr != nil:
		return deployErr("ec2:DescribeLaunchTemplates "+t.Name, derr)
	}
	for _, lt := range out.LaunchTemplates {
		if aws.ToString(lt.LaunchTemplateName) == t.Name && r.Owner.Made(tags.FromEC2(lt.Tags), r.ID) {
			return nil
		}
	}
	return &failure.DeployError{Op: op, Err: errors.New("a launch template of that name exists and was not made by this release")}
}

// data is what t launches: its image, type and user data, IMDSv2 only,
// its security groups and instance profile, its volume, and detailed
// monitoring when asked.
func (t Template) data() *ec2types.RequestLaunchTemplateData {
	data := &ec2types.RequestLaunchTemplateData{
		ImageId:      aws.String(t.ImageID),
		InstanceType: ec2types.InstanceType(t.InstanceType),
		UserData:     aws.String(base64.StdEncoding.EncodeToString(t.UserData)),
		MetadataOptions: &ec2types.LaunchTemplateInstanceMetadataOptionsRequest{
			HttpTokens:   ec2types.LaunchTemplateHttpTokensStateRequired,
			HttpEndpoint: ec2types.LaunchTemplateInstanceMetadataEndpointStateEnabled,
		},
		TagSpecifications: []ec2types.LaunchTemplateTagSpecificationRequest{
			{ResourceType: ec2types.ResourceTypeVolume, Tags: tags.EC2(t.Tags)},
		},
		SecurityGroupIds: t.SecurityGroups,
	}
	if t.DetailedMonitoring {
		data.Monitoring = &ec2types.LaunchTemplatesMonitoringRequest{Enabled: aws.Bool(true)}
	}
	if t.Profile != "" {
		data.IamInstanceProfile = &ec2types.LaunchTemplateIamInstanceProfileSpecificationRequest{Name: aws.String(t.Profile)}
	}
	if v := t.Volume; v != nil {
		data.BlockDeviceMappings = []ec2types.LaunchTemplateBlockDeviceMappingRequest{{
			DeviceName: aws.String(v.Device),
			Ebs: &ec2types.LaunchTemplateEbsBlockDeviceRequest{
				VolumeSize:          aws.Int32(int32(v.SizeGiB)),
				VolumeType:          ec2types.VolumeType(v.Type),
				DeleteOnTermination: aws.Bool(true),
				Encrypted:           aws.Bool(true),
			},
		}}
	}
	return data
}

// clientToken is the CreateLaunchTemplate client token of a template of a
// release: the same for every attempt of the same request, different for
// another release (EC2 allows 64 ASCII characters; this is 32).
func clientToken(name, releaseSHA256 string) string {
	sum := sha256.Sum256([]byte("ferry launch template\x00" + name + "\x00" + releaseSHA256))
	return hex.EncodeToString(sum[:16])
}

// CreateGroup creates the group g, pinned to version 1 of the launch
// template of its name. A group of that name that already exists must be
// this release's; a launch template or group AWS does not show yet is
// retryable.
func (r *Release) CreateGroup(ctx context.Context, g Group) error {
	api := r.Clients.AutoScaling
	checkType := "EC2"
	if len(g.LoadBalancers) > 0 || len(g.TargetGroups) > 0 {
		checkType = "ELB"
	}
	var hooks []asgtypes.LifecycleHookSpecification
	for _, h := range g.Hooks {
		hooks = append(hooks, asgtypes.LifecycleHookSpecification{
			LifecycleHookName:     aws.String(h.Name),
			LifecycleTransition:   aws.String(h.Transition),
			RoleARN:               aws.String(h.RoleARN),
			NotificationTargetARN: aws.String(h.TopicARN),
			HeartbeatTimeout:      aws.Int32(int32(h.HeartbeatTimeout)),
			DefaultResult:         aws.String("CONTINUE"),
		})
	}
	in := &autoscaling.CreateAutoScalingGroupInput{
		AutoScalingGroupName: aws.String(g.Name),
		LaunchTemplate: &asgtypes.LaunchTemplateSpecification{
			LaunchTemplateName: aws.String(g.Name),
			Version:            aws.String(launchTemplateVersion),
		},
		MinSize:                        aws.Int32(int32(g.MinSize)),
		MaxSize:                        aws.Int32(int32(g.MaxSize)),
		DesiredCapacity:                aws.Int32(int32(g.Desired)),
		VPCZoneIdentifier:              aws.String(strings.Join(g.Subnets, ",")),
		LoadBalancerNames:              g.LoadBalancers,
		TargetGroupARNs:                g.TargetGroups,
		HealthCheckType:                aws.String(checkType),
		HealthCheckGracePeriod:         aws.Int32(int32(g.HealthCheckGracePeriod / time.Second)),
		LifecycleHookSpecificationList: hooks,
		Tags:                           tags.ASG(g.Tags, g.Name),
	}
	if g.Mixed != nil {
		in.MixedInstancesPolicy, in.LaunchTemplate = g.Mixed.policy(in.LaunchTemplate), nil
		in.CapacityRebalance = aws.Bool(g.Mixed.CapacityRebalance)
	}
	_, err := api.CreateAutoScalingGroup(ctx, in)
	op := "autoscaling:CreateAutoScalingGroup " + g.Name
	if err == nil || !cloud.IsCode(err, cloud.CodeAlreadyExists) {
		return r.justMade(op, g.Name, err, failure.AsDeploy)
	}
	found, err := Describe(ctx, api, []string{g.Name})
	if err != nil {
		return deployErr("autoscaling:DescribeAutoScalingGroups "+g.Name, err)
	}
	existing, visible := found[g.Name]
	switch {
	case !visible:
		// AWS says it exists but does not show it yet (eventual
		// consistency): a retry will find it.
		return &failure.RetryableError{Op: op, Err: errors.New("the group exists but is not visible yet")}
	case !r.Owner.Made(tags.FromASG(existing.Tags), r.ID):
		return &failure.DeployError{Op: op, Err: errors.New("an Auto Scaling group of that name exists and was not made by this release")}
	}
	return nil
}

// DeploySuspended reports whether g, as described, has every one of
// DeployProcesses suspended.
func DeploySuspended(g asgtypes.AutoScalingGroup) bool {
	return !slices.ContainsFunc(DeployProcesses, func(p string) bool { return !suspended(g, p) })
}

// Suspend suspends DeployProcesses of the group name, unless g (the group
// as last described, nil when it was not) shows them suspended already.
func (r *Release) Suspend(ctx context.Context, name string, g *asgtypes.AutoScalingGroup) error {
	if g != nil && DeploySuspended(*g) {
		return nil
	}
	_, err := r.Clients.AutoScaling.SuspendProcesses(ctx, &autoscaling.SuspendProcessesInput{
		AutoScalingGroupName: aws.String(name), ScalingProcesses: DeployProcesses,
	})
	return r.justMade("autoscaling:SuspendProcesses "+name, name, err, failure.AsDeploy)
}

// Step sets the group name to one step of a canary: its minimum size and
// desired capacity (an absolute set, so a retry sets the same). A
// refusal is a *failure.DeployError: nothing of the previous release was
// touched yet.
func (r *Release) Step(ctx context.Context, name string, minSize, desired int) error {
	_, err := r.Clients.AutoScaling.UpdateAutoScalingGroup(ctx, &autoscaling.UpdateAutoScalingGroupInput{
		AutoScalingGroupName: aws.String(name), MinSize: aws.Int32(int32(minSize)), DesiredCapacity: aws.Int32(int32(desired)),
	})
	if err != nil {
		return r.justMade("autoscaling:UpdateAutoScalingGroup "+name, name, err, failure.AsDeploy)
	}
	r.log().Info("canary step taken", "asg", name, "min_size", minSize, "desired", desired)
	return nil
}

// PutPolicies puts the scaling policies of the group name and their
// alarms, tagged with tags (upserts: a retry rewrites the same), but for
// those whose alarm (naming.AlarmName) is in made: an earlier attempt of
// this release put the policy, then its alarm. A retry after a throttle
// so does not put everything again.
func (r *Release) PutPolicies(ctx context.Context, name string, alarmTags map[string]string, policies []Policy, made map[string]bool) error {
	for _, p := range policies {
		if made[naming.AlarmName(name, p.Type)] {
			continue
		}
		out, err := r.Clients.AutoScaling.PutScalingPolicy(ctx, &autoscaling.PutScalingPolicyInput{
			AutoScalingGroupName: aws.String(name),
			PolicyName:           aws.String(naming.PolicyName(p.Type)),
			PolicyType:           aws.String("SimpleScaling"),
			AdjustmentType:       aws.String("ChangeInCapacity"),
			ScalingAdjustment:    aws.Int32(int32(p.Adjustment)),
			Cooldown:             aws.Int32(int32(p.Cooldown)),
		})
		if err != nil {
			return r.justMade("autoscaling:PutScalingPolicy "+name, name, err, failure.AsDeploy)
		}
		cmp := cwtypes.ComparisonOperatorLessThanThreshold
		if p.Above {
			cmp = cwtypes.ComparisonOperatorGreaterThanThreshold
		}
		_, err = r.Clients.CloudWatch.PutMetricAlarm(ctx, &cloudwatch.PutMetricAlarmInput{
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
			Tags:               tags.CloudWatch(alarmTags),
		})
		if err != nil {
			return deployErr("cloudwatch:PutMetricAlarm "+name, err)
		}
	}
	return nil
}

// Settle readies the new group g for life after the swap: it scales it
// from ferry's launch count down to desired (the spread is extra capacity
// for the deploy only, and a next release sizes itself from this group's
// desired capacity) and resumes DeployProcesses. A group whose desired
// capacity is no longer launch (a person changed it, or an earlier attempt
// settled it) keeps its capacity. A refusal is a *failure.CleanUpError
// naming the group and what it kept. It makes SettleCalls(g, desired,
// launch) Auto Scaling calls: none for a group settled already.
func (r *Release) Settle(ctx context.Context, g asgtypes.AutoScalingGroup, desired, launch int) error {
	api := r.Clients.AutoScaling
	name := aws.ToString(g.AutoScalingGroupName)
	if scalesDown(g, desired, launch) {
		_, err := api.UpdateAutoScalingGroup(ctx, &autoscaling.UpdateAutoScalingGroupInput{
			AutoScalingGroupName: aws.String(name), DesiredCapacity: aws.Int32(int32(desired)),
		})
		if err != nil {
			return r.justMade("autoscaling:UpdateAutoScalingGroup "+name, name, err, left(fmt.Sprintf("%s: %d instances, desired %d", name, launch, desired)))
		}
		r.log().Info("scaled to desired capacity", "asg", name, "desired", desired)
	}
	if resumes(g) {
		_, err := api.ResumeProcesses(ctx, &autoscaling.ResumeProcessesInput{
			AutoScalingGroupName: aws.String(name), ScalingProcesses: DeployProcesses,
		})
		if err != nil {
			return r.justMade("autoscaling:ResumeProcesses "+name, name, err, left(fmt.Sprintf("%s: scaling processes %s still suspended", name, strings.Join(DeployProcesses, ", "))))
		}
	}
	return nil
}

// SettleCalls is how many Auto Scaling calls Settle makes for g, as
// described, sized for launch instances of which desired stay: one to
// scale it down, one to resume its processes, each only when needed.
func SettleCalls(g asgtypes.AutoScalingGroup, desired, launch int) int {
	n := 0
	for _, needed := range []bool{scalesDown(g, desired, launch), resumes(g)} {
		if needed {
			n++
		}
	}
	return n
}

// scalesDown says Settle scales g down from launch to desired: g is still
// at ferry's launch count, above desired.
func scalesDown(g asgtypes.AutoScalingGroup, desired, launch int) bool {
	return desired > 0 && launch > desired && int(aws.ToInt32(g.DesiredCapacity)) == launch
}

// resumes says Settle resumes g's DeployProcesses: one is suspended.
func resumes(g asgtypes.AutoScalingGroup) bool {
	return slices.ContainsFunc(DeployProcesses, func(p string) bool { return suspended(g, p) })
}

// left refuses with a *failure.CleanUpError naming what was left as it
// was.
func left(what string) func(op string, err error) error {
	return func(_ string, err error) error { return &failure.CleanUpError{Leftovers: []string{what}, Err: err} }
}

// suspended reports whether process is suspended in g.
func suspended(g asgtypes.AutoScalingGroup, process string) bool {
	return slices.ContainsFunc(g.SuspendedProcesses, func(s asgtypes.SuspendedProcess) bool { return aws.ToString(s.ProcessName) == process })
}

// justMade classifies the error of a call that names what this release
// made moments ago (the group name, or the launch template of its name):
// Auto Scaling's "not found" of that name (cloud.IsAutoScalingNotFound) is
// what AWS answers while it does not show a new resource yet (eventual
// consistency: "if you run a command to modify or describe the resource
// that you just created ... you will get an error responding that the
// resource does not exist"), a *failure.RetryableError until the last
// attempt. Any other ValidationError is AWS refusing the request, which
// it refuses again however often it is made: like any other failure, it
// is refuse's error (unless transient), now.
func (r *Release) justMade(op, name string, err error, refuse func(op string, err error) error) error {
	if err == nil {
		return nil
	}
	if cloud.IsAutoScalingNotFound(err, name) && !r.LastAttempt {
		return &failure.RetryableError{Op: op, Err: fmt.Errorf("what it names was created moments ago and may not be visible yet: %w", err)}
	}
	return cloud.ClassifyAs(op, err, refuse)
}

func (r *Release) log() *slog.Logger {
	if r.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Log
}

// deployErr classifies an AWS error of op: transient ones are retryable,
// the rest a *failure.DeployError.
func deployErr(op string, err error) error { return cloud.ClassifyAs(op, err, failure.AsDeploy) }
