package reliability

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/ferryhq/ferry/client/submit"
	"github.com/ferryhq/ferry/internal/local/region"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
)

// Scenario is a reference deploy: a world, the release already deployed
// in it and the release to deploy over it. Every Run starts from the same
// state: a fresh region at Start on which Previous has been deployed.
type Scenario struct {
	// World is the simulated AWS.
	World sim.WorldSpec
	// Previous and Next are release files (with their assets next to
	// them).
	Previous, Next string
	// Start is the virtual time the region starts at.
	Start time.Time
	// Interval is the deployer's health-check interval.
	Interval time.Duration
	// By is the created_by of the releases.
	By string
	// Destroy makes the next release a destroy of the project-config
	// (ferry destroy, submit.PrepareDestroy) instead of Next: its swap
	// retires every group, so the previous release serves in full only up
	// to its point of no return.
	Destroy bool
}

// Reference file locations, relative to the repository root.
const (
	ReferenceWorld    = "testdata/worlds/reliability.json"
	ReferencePrevious = "testdata/reliability/v1.json"
	ReferenceNext     = "testdata/reliability/v2.json"
	// AnalysedNext is the next release of the analysis base: the
	// reference's with a canary analysis of the services' latency, no
	// bake, and a build (ubuntu-slower) whose latency is 60% above the
	// previous build's, far beyond the analysis's 10% tolerance.
	AnalysedNext = "testdata/reliability/v2-slower.json"
)

// referenceStart is the virtual time every reference run starts at.
var referenceStart = time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC)

// Reference returns the reference scenario of the repository at root: two
// services (one behind a classic ELB and a target group, with scaling
// alarms; one behind a target group), an asset, a lifecycle hook, and a
// previous release to replace.
func Reference(root string) (*Scenario, error) {
	spec, err := sim.Load(filepath.Join(root, ReferenceWorld))
	if err != nil {
		return nil, fmt.Errorf("reliability: %w", err)
	}
	return &Scenario{
		World:    spec,
		Previous: filepath.Join(root, ReferencePrevious),
		Next:     filepath.Join(root, ReferenceNext),
		Start:    referenceStart,
		Interval: 15 * time.Second,
		By:       "reliability",
	}, nil
}

// ReferenceDestroy is the reference scenario with a destroy of the
// project-config as the next release.
func ReferenceDestroy(root string) (*Scenario, error) {
	sc, err := Reference(root)
	if err != nil {
		return nil, err
	}
	sc.Destroy = true
	return sc, nil
}

// outsider names: resources in the deployer's account that are not the
// release's project-config. No run may touch them.
const (
	outsiderAccount = "111111111111"
	outsiderRegion  = "us-east-1"
	// OutsiderProject is a ferry-managed project that shares the account.
	OutsiderProject = "other/team"
	outsiderConfig  = "production"
	// OutsiderGroup is an ASG ferry did not make (no ferry tags).
	OutsiderGroup = "hand-made-fleet"
)

// seedOutsiders creates, with direct (unauthenticated) clients, an ASG of
// another ferry project-config and an ASG, launch template and alarm
// without ferry's tags.
func seedOutsiders(ctx context.Context, world *sim.World) error {
	c := world.Clients(outsiderAccount, outsiderRegion)
	other := naming.GroupName(OutsiderProject, outsiderConfig, "web", "20250101T000000Z-0f0f0f")
	type group struct {
		name string
		tags map[string]string
	}
	groups := []group{
		{other, map[string]string{
			naming.TagProjectName: OutsiderProject, naming.TagConfigName: outsiderConfig,
			naming.TagServiceName: "web", naming.TagReleaseID: "20250101T000000Z-0f0f0f",
			naming.TagDeployWith: "ferry", naming.TagName: other,
		}},
		{OutsiderGroup, map[string]string{"Team": "ops", naming.TagName: OutsiderGroup}},
	}
	for _, g := range groups {
		var ltTags []ec2types.Tag
		var asgTags []astypes.Tag
		for k, v := range g.tags {
			ltTags = append(ltTags, ec2types.Tag{Key: aws.String(k), Value: aws.String(v)})
			asgTags = append(asgTags, astypes.Tag{Key: aws.String(k), Value: aws.String(v), PropagateAtLaunch: aws.Bool(true)})
		}
		if _, err := c.EC2.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{
			LaunchTemplateName: aws.String(g.name),
			LaunchTemplateData: &ec2types.RequestLaunchTemplateData{
				ImageId:      aws.String("ami-0000000000000ee01"),
				InstanceType: ec2types.InstanceTypeT3Small,
				UserData:     aws.String(base64.StdEncoding.EncodeToString([]byte("#!/bin/sh\n"))),
			},
			TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeLaunchTemplate, Tags: ltTags}},
		}); err != nil {
			return fmt.Errorf("reliability: outsider launch template %s: %w", g.name, err)
		}
		if _, err := c.AutoScaling.CreateAutoScalingGroup(ctx, &autoscaling.CreateAutoScalingGroupInput{
			AutoScalingGroupName: aws.String(g.name),
			LaunchTemplate:       &astypes.LaunchTemplateSpecification{LaunchTemplateName: aws.String(g.name), Version: aws.String("$Latest")},
			MinSize:              aws.Int32(1), MaxSize: aws.Int32(2), DesiredCapacity: aws.Int32(1),
			VPCZoneIdentifier: aws.String("subnet-0000000000000ea01"),
			Tags:              asgTags,
		}); err != nil {
			return fmt.Errorf("reliability: outsider group %s: %w", g.name, err)
		}
	}
	if _, err := c.CloudWatch.PutMetricAlarm(ctx, &cloudwatch.PutMetricAlarmInput{
		AlarmName:          aws.String(OutsiderGroup + "-cpu"),
		ComparisonOperator: cwtypes.ComparisonOperatorGreaterThanThreshold,
		EvaluationPeriods:  aws.Int32(1), MetricName: aws.String("CPUUtilization"), Namespace: aws.String("AWS/EC2"),
		Period: aws.Int32(60), Statistic: cwtypes.StatisticAverage, Threshold: aws.Float64(90),
	}); err != nil {
		return fmt.Errorf("reliability: outsider alarm: %w", err)
	}
	return nil
}

// prepared is a release ready to upload, as ferry deploy prepares it.
type prepared struct {
	*submit.Prepared
	rel *release.Release
}

// prepare reads a release file and prepares it as ferry deploy does
// (submit.Prepare, its identity proof signed as reg's local caller), with a
// deterministic release id made from now and suffix.
func prepare(ctx context.Context, reg *region.Region, file string, now time.Time, by, suffix string) (*prepared, error) {
	r, err := release.ReadFile(file)
	if err != nil {
		return nil, err
	}
	id := now.UTC().Format("20060102T150405Z") + "-" + suffix
	p, err := submit.Prepare(ctx, reg.Signer(), r, file, now, by, id)
	if err != nil {
		return nil, err
	}
	return &prepared{Prepared: p, rel: p.Release}, nil
}

// prepareDestroy prepares a destroy of prev's project-config in prev's
// target as ferry destroy does (submit.PrepareDestroy), with a
// deterministic release id made from now and suffix.
func prepareDestroy(ctx context.Context, reg *region.Region, prev *prepared, now time.Time, by, suffix string) (*prepared, error) {
	id := now.UTC().Format("20060102T150405Z") + "-" + suffix
	p, err := submit.PrepareDestroy(ctx, reg.Signer(), prev.rel, now, by, id)
	if err != nil {
		return nil, err
	}
	return &prepared{Prepared: p, rel: p.Release}, nil
}

// start uploads the release's assets and the release, and starts its
// execution, as ferry deploy does (submit.Deployer), through the region's
// APIs.
func (p *prepared) start(ctx context.Context, reg *region.Region) (string, error) {
	d := submit.Deployer{Bucket: reg.Bucket(), StateMachineARN: reg.StateMachineARN(), S3: reg.S3(), SFN: reg.SFN()}
	if err := d.Upload(ctx, p.Prepared); err != nil {
		return "", err
	}
	return d.Start(ctx, p.Prepared)
}

// errNoRepo is returned by FindRoot when no go.mod of ferry is found.
var errNoRepo = errors.New("reliability: not inside the ferry repository (no go.mod found upwards)")

// FindRoot returns the repository root: the nearest directory upwards
// from dir holding a go.mod.
func FindRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errNoRepo
		}
		dir = parent
	}
}
