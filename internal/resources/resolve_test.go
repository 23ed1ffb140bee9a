package resources_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/fanout"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/resources"
)

func newRelease() *release.Release {
	return &release.Release{
		ProjectName: "coinbase/deploy-test", ConfigName: "development", ReleaseID: "r1",
		Subnets: []string{"test_private_subnet_a", "subnet-00000000000000b01"},
		AMI:     "ubuntu",
		Services: map[string]*release.Service{
			"web": {
				InstanceType:   "t2.nano",
				SecurityGroups: []string{"ec2::coinbase/deploy-test::development"},
				ELBs:           []string{"coinbase-deploy-test-web-elb"},
				TargetGroups:   []string{"coinbase-deploy-test-web-tg"},
				Profile:        "coinbase-deploy-test",
			},
		},
	}
}

func TestResolve(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*release.Release)
		want   []string // problems, each a prefix; none: it resolves
	}{
		{"everything resolves", func(*release.Release) {}, nil},
		{"an image not opted in", func(r *release.Release) { r.AMI = "ubuntu-untagged" }, []string{
			`ami: image "ubuntu-untagged" (ami-0000000000000ab04) is not tagged DeployWith=ferry`,
		}},
		{"every problem at once", func(r *release.Release) {
			r.Subnets = []string{"no-such-subnet"}
			s := r.Services["web"]
			s.ELBs = []string{"no-such-elb"}
			s.TargetGroups = []string{"no-such-tg"}
			s.Profile = "no-such-profile"
		}, []string{
			`subnets[0]: subnet "no-such-subnet" not found`,
			`services.web.elbs[0]: load balancer "no-such-elb" not found`,
			`services.web.target_groups[0]: target group "no-such-tg" not found`,
			`services.web.profile: instance profile "no-such-profile" not found`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := testWorld(t, 0)
			r := newRelease()
			tt.mutate(r)

			res, err := resources.Resolve(t.Context(), w.Clients("111111111111", "us-east-1"), r)
			if tt.want == nil {
				require.NoError(t, err)
				assert.Equal(t, "ami-0000000000000ab01", res.Images["ubuntu"])
				assert.Equal(t, map[string]string{
					"test_private_subnet_a": "subnet-00000000000000a01", "subnet-00000000000000b01": "subnet-00000000000000b01",
				}, res.Subnets)
				assert.Contains(t, res.TargetGroups["coinbase-deploy-test-web-tg"], "arn:")
				assert.Len(t, res.SecurityGroups, 1)
				assert.Empty(t, res.Previous, "a first deploy")
				return
			}
			var bad *failure.BadReleaseError
			require.ErrorAs(t, err, &bad)
			require.Len(t, bad.Problems, len(tt.want), "%q", bad.Problems)
			for i, w := range tt.want {
				assert.Contains(t, bad.Problems[i], w)
			}
		})
	}
}

// TestResolveSecurityGroupsInOneCall: a release's security groups are
// found with one DescribeSecurityGroups call (by group-id when every
// reference is an ID, else every group of its subnets' VPC: filters of
// different names AND together, API Reference, DescribeSecurityGroups,
// so one call cannot ask for ids OR names OR Name tags); only a
// reference that call does not find is looked for account-wide, so the
// problem names what is wrong with the group it names.
func TestResolveSecurityGroupsInOneCall(t *testing.T) {
	tests := []struct {
		name    string
		groups  []string
		calls   int
		problem string
	}{
		{"by name", []string{"ec2::coinbase/deploy-test::development"}, 1, ""},
		{"by id", []string{"sg-000000000000d0001"}, 1, ""},
		{"by name and id", []string{"ec2::coinbase/deploy-test::development", "sg-000000000000d0001"}, 1, ""},
		{"in another VPC", []string{"ec2::coinbase/deploy-test::development", "ec2::coinbase/deploy-test::other-vpc"}, 3,
			`services.web.security_groups[1]: security group "ec2::coinbase/deploy-test::other-vpc" (sg-000000000000d0003) is in vpc-0000000000000c002`},
		{"nowhere", []string{"no-such-group"}, 3, `services.web.security_groups[0]: security group "no-such-group" not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := testWorld(t, 0)
			r := newRelease()
			r.Services["web"].SecurityGroups = tt.groups

			res, err := resources.Resolve(t.Context(), w.Clients("111111111111", "us-east-1"), r)
			assert.Equal(t, tt.calls, w.Calls()["DescribeSecurityGroups"])
			if tt.problem == "" {
				require.NoError(t, err)
				for _, g := range tt.groups {
					assert.Equal(t, "sg-000000000000d0001", res.SecurityGroups[g])
				}
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.problem)
		})
	}
}

// TestResolveReadsSideBySide: the checks of what a release's instances
// and hooks act as and the listing of its groups read nothing of each
// other's, so lifecycle hooks (each role beside each topic, a topic's
// tags after it: two calls' time for these two) add no time to Resolve
// beside the instance profile and the group listing: the network's
// chain (subnets, then security groups) takes as long. Each call costs
// the same modelled time (package fanout's Timeline).
func TestResolveReadsSideBySide(t *testing.T) {
	const call = 30 * time.Millisecond
	elapsed := func(t *testing.T, hooks bool) (time.Duration, error) {
		w := testWorld(t, call)
		r := newRelease()
		web := r.Services["web"]
		web.ELBs, web.TargetGroups, web.SecurityGroups = nil, nil, []string{"sg-000000000000d0001"}
		if hooks {
			r.Lifecycle = map[string]*release.LifecycleHook{
				"a": {Transition: release.TransitionLaunching, Role: "asg_lifecycle_hooks", SNS: "asg_lifecycle_hooks", HeartbeatTimeout: 60},
				"b": {Transition: release.TransitionTerminating, Role: "no-such-role", SNS: "no-such-topic", HeartbeatTimeout: 60},
			}
		}
		ctx, tl := fanout.WithTimeline(t.Context())
		_, err := resources.Resolve(ctx, w.Clients("111111111111", "us-east-1"), r)
		return tl.Elapsed(), err
	}
	without, err := elapsed(t, false)
	require.NoError(t, err)
	with, err := elapsed(t, true)
	var bad *failure.BadReleaseError
	require.ErrorAs(t, err, &bad)
	assert.Equal(t, []string{`lifecycle.b.role: role "no-such-role" not found`, `lifecycle.b.sns: topic "no-such-topic" not found`}, bad.Problems)
	assert.Equal(t, without, with, "the hooks' checks are read beside the profiles and the groups")
}

// TestResolveTakesItsLongestChain: a release that names every kind of
// resource resolves in its longest chain's time, two calls: the subnets
// then the security groups of their VPC (by name); the target groups
// then, side by side, their tags and their load balancers' zones; the
// classic load balancer then, side by side, its tags and its attributes;
// the images, the instance types (named by the release alone), the
// instance profile, the group listing and the hooks' role and topic (its
// attributes then its tags) beside them. Each call costs the same
// modelled time (package fanout's Timeline); the placement checks read
// nothing more.
func TestResolveTakesItsLongestChain(t *testing.T) {
	const call = 30 * time.Millisecond
	w := testWorld(t, call)
	r := newRelease()
	r.Lifecycle = map[string]*release.LifecycleHook{
		"a": {Transition: release.TransitionLaunching, Role: "asg_lifecycle_hooks", SNS: "asg_lifecycle_hooks", HeartbeatTimeout: 60},
	}
	ctx, tl := fanout.WithTimeline(t.Context())
	res, err := resources.Resolve(ctx, w.Clients("111111111111", "us-east-1"), r)
	require.NoError(t, err)
	assert.Contains(t, res.HookRoles["asg_lifecycle_hooks"], "arn:")
	assert.Contains(t, res.HookTopics["asg_lifecycle_hooks"], "arn:")
	calls := w.Calls()
	for _, op := range []string{"DescribeImages", "DescribeSubnets", "DescribeSecurityGroups", "DescribeInstanceTypes",
		"DescribeTargetGroups", "DescribeLoadBalancerAttributes", "GetRole", "GetTopicAttributes", "ListTagsForResource"} {
		assert.Positive(t, calls[op], "%s is read", op)
	}
	assert.Equal(t, 2*call, tl.Elapsed(), "calls %v", calls)
}

// TestResolveReadsProfilesWithinItsLongestChain: the instance profiles
// of a release's most services, each its own (IAM's GetInstanceProfile,
// one per profile), are read tuning.ProfileParallel at a time, within
// the two calls' time of the resolution's longest chain.
func TestResolveReadsProfilesWithinItsLongestChain(t *testing.T) {
	const call = 30 * time.Millisecond
	w := testWorld(t, call)
	r := newRelease()
	web := r.Services["web"]
	for i := range limits.MaxServices {
		s := *web
		s.Profile = fmt.Sprintf("profile-%02d", i)
		r.Services[fmt.Sprintf("svc%02d", i)] = &s
	}
	delete(r.Services, "web")
	ctx, tl := fanout.WithTimeline(t.Context())
	_, _ = resources.Resolve(ctx, w.Clients("111111111111", "us-east-1"), r)
	assert.Equal(t, limits.MaxServices, w.Calls()["GetInstanceProfile"])
	assert.Equal(t, 2*call, tl.Elapsed())
}

// TestResolveReadsClassicLoadBalancersSideBySide: a release's classic
// load balancers are described in one call, then their tags and each
// one's attributes (connection draining: one DescribeLoadBalancerAttributes
// each) are read side by side: two calls' time, however many it names.
func TestResolveReadsClassicLoadBalancersSideBySide(t *testing.T) {
	const call = 30 * time.Millisecond
	w := testWorld(t, call)
	r := newRelease()
	r.Services["web"].ELBs = []string{"coinbase-deploy-test-web-elb", "other-project-web-elb", "cdt-staging-web"}
	ctx, tl := fanout.WithTimeline(t.Context())
	_, _ = resources.Resolve(ctx, w.Clients("111111111111", "us-east-1"), r)
	assert.Equal(t, 3, w.Calls()["DescribeLoadBalancerAttributes"])
	assert.Equal(t, 2*call, tl.Elapsed())
}

// testWorld is the deploy test world, each call taking call of modelled
// time (package fanout's Timeline; none when 0).
func testWorld(t *testing.T, call time.Duration) *sim.World {
	t.Helper()
	spec, err := sim.Load(filepath.Join("..", "..", "testdata", "worlds", "deploy-test.json"))
	require.NoError(t, err)
	w, err := sim.New(clock.NewVirtual(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)), spec)
	require.NoError(t, err)
	if call > 0 {
		w.OnCall(func(ctx context.Context, _ sim.Call) { fanout.Spend(ctx, call) })
	}
	return w
}

// TestResolveListsGroupsWithoutInstances: Resolve (every Deploy round,
// ValidateResources, plan) and Previous list the project-config's groups
// without their instances (IncludeInstances false,
// DescribeAutoScalingGroups, Auto Scaling API Reference): what they read
// of a group is its name, tags, capacities and attachments, and at 50
// services of 100 instances the instances would be most of a round's
// CPU at a 512 MB Lambda's share.
func TestResolveListsGroupsWithoutInstances(t *testing.T) {
	w := testWorld(t, 0)
	c := w.Clients("111111111111", "us-east-1")
	asked := &includes{AutoScaling: c.AutoScaling}
	c.AutoScaling = asked
	_, err := resources.Resolve(t.Context(), c, newRelease())
	require.NoError(t, err)
	_, _, err = resources.Previous(t.Context(), c.AutoScaling, newRelease())
	require.NoError(t, err)
	assert.Equal(t, []bool{false, false}, asked.instances, "IncludeInstances of each describe")
}

// includes records the IncludeInstances of each DescribeAutoScalingGroups
// (true when unset: AWS's default).
type includes struct {
	cloud.AutoScaling
	instances []bool
}

func (a *includes) DescribeAutoScalingGroups(ctx context.Context, in *autoscaling.DescribeAutoScalingGroupsInput, optFns ...func(*autoscaling.Options)) (*autoscaling.DescribeAutoScalingGroupsOutput, error) {
	a.instances = append(a.instances, in.IncludeInstances == nil || *in.IncludeInstances)
	return a.AutoScaling.DescribeAutoScalingGroups(ctx, in, optFns...)
}
