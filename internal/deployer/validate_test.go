package deployer

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/events"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/fanout"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/resources"
	"github.com/ferryhq/ferry/internal/store/lock"
)

func TestValidateRefuses(t *testing.T) {
	tests := []struct {
		name string
		// prepare returns the execution input.
		prepare func(h *harness, x *run, r *release.Release) json.RawMessage
		want    string
	}{
		{
			name: "input differs from the S3 copy",
			prepare: func(h *harness, x *run, r *release.Release) json.RawMessage {
				r.Services["web"].InstanceType = "c4.8xlarge"
				b, _ := json.Marshal(r)
				return b
			},
			want: "release differs from the copy in the deployer bucket",
		},
		{
			name: "no S3 copy",
			prepare: func(h *harness, x *run, r *release.Release) json.RawMessage {
				r.ReleaseID = "never-uploaded"
				b, _ := json.Marshal(r)
				return b
			},
			want: "release never-uploaded not found in the deployer bucket",
		},
		{
			name: "created_at too old",
			prepare: func(h *harness, x *run, r *release.Release) json.RawMessage {
				h.clk.Advance(11 * time.Minute)
				return x.input
			},
			want: "created_at: 2026-03-01T11:59:00Z is 12m0s old, older than the 10m0s the deployer accepts",
		},
		{
			name: "created_at in the future",
			prepare: func(h *harness, x *run, r *release.Release) json.RawMessage {
				r.ReleaseID = "future"
				r.CreatedAt = h.clk.Now().Add(3 * time.Minute)
				return h.upload(r)
			},
			want: "is 3m0s in the future",
		},
		{
			name: "release already ran",
			prepare: func(h *harness, x *run, r *release.Release) json.RawMessage {
				require.NoError(t, h.locks.Acquire(t.Context(), project, config,
					lock.Holder{ReleaseID: r.ReleaseID, Execution: "an-earlier-execution", Since: h.clk.Now()}))
				require.NoError(t, h.locks.Release(t.Context(), project, config, r.ReleaseID))
				return x.input
			},
			want: "already ran (execution an-earlier-execution)",
		},
		{
			name: "invalid release",
			prepare: func(h *harness, x *run, r *release.Release) json.RawMessage {
				r.ReleaseID = "invalid"
				r.Services["web"].InstanceType = ""
				return h.upload(r)
			},
			want: "services.web.instance_type",
		},
		{
			name: "not a release",
			prepare: func(h *harness, x *run, r *release.Release) json.RawMessage {
				return json.RawMessage(`{"project_name": 7}`)
			},
			want: "project_name",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			r := h.baseRelease()
			x := h.start(r)
			x.input = tt.prepare(h, x, r)
			// The execution runs what Validate is given: Step Functions
			// passes the execution's input to its first state.
			h.executions.register(x.ctx.ID, x.input, x.ctx.StartTime)
			err := x.step(execution.TaskValidate)
			require.Error(t, err)
			var bad *failure.BadReleaseError
			require.ErrorAs(t, err, &bad, "%v", err)
			assert.Contains(t, err.Error(), tt.want)
			// A release that decodes is announced refused on its
			// target's default bus; one that does not names no target.
			put := h.world.BusEvents()
			if tt.name == "invalid release" || tt.name == "not a release" {
				assert.Empty(t, put)
				return
			}
			require.Len(t, put, 1)
			assert.Equal(t, events.Refused.DetailType, put[0].DetailType)
			assert.Contains(t, string(put[0].Detail), `"error":"BadReleaseError"`)
			assert.Contains(t, string(put[0].Detail), `"task":"Validate"`)
		})
	}
}

func TestValidateOutput(t *testing.T) {
	h := newHarness(t)
	r := h.baseRelease()
	r.Services["worker"] = &release.Service{InstanceType: "t3.small", SecurityGroups: []string{"ec2::coinbase/deploy-test::development-worker"}}
	x := h.start(r)
	require.NoError(t, x.step(execution.TaskValidate))
	sum, err := release.Hash(r)
	require.NoError(t, err)
	assert.Equal(t, &execution.State{
		ProjectName: project, ConfigName: config, ReleaseID: r.ReleaseID, ReleaseSHA256: sum,
		Target: x.state.Target, Timeout: 600, Services: []string{"web", "worker"}, StartUnannounced: true,
	}, x.state)
	assert.Equal(t, account, x.state.Target.AccountID)
	assert.Equal(t, region, x.state.Target.Region)
	// Validate is read-only: running it again gives the same.
	first := *x.state
	require.NoError(t, x.step(execution.TaskValidate))
	assert.Equal(t, &first, x.state)
}

// createForeignGroup makes an ASG tagged as a group of the project-config's
// service web, as an earlier release would have.
func createForeignGroup(t *testing.T, h *harness, releaseID string) {
	c := h.world.Clients(account, region)
	name := naming.GroupName(project, config, "web", releaseID)
	_, err := c.EC2.CreateLaunchTemplate(t.Context(), &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String(name),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String("ami-0000000000000ab01"), InstanceType: "t2.nano"},
	})
	require.NoError(t, err)
	tags := map[string]string{
		naming.TagProjectName: project, naming.TagConfigName: config, naming.TagServiceName: "web",
		naming.TagReleaseID: releaseID, naming.TagDeployWith: naming.DeployWithValue,
	}
	var list []astypes.Tag
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		list = append(list, astypes.Tag{Key: aws.String(k), Value: aws.String(tags[k]), PropagateAtLaunch: aws.Bool(true)})
	}
	_, err = c.AutoScaling.CreateAutoScalingGroup(t.Context(), &autoscaling.CreateAutoScalingGroupInput{
		AutoScalingGroupName: aws.String(name),
		LaunchTemplate:       &astypes.LaunchTemplateSpecification{LaunchTemplateName: aws.String(name)},
		MinSize:              aws.Int32(1), MaxSize: aws.Int32(1), DesiredCapacity: aws.Int32(1),
		VPCZoneIdentifier: aws.String("subnet-00000000000000a01"),
		Tags:              list,
	})
	require.NoError(t, err)
}

func TestValidateResourcesRefuses(t *testing.T) {
	tests := []struct {
		name    string
		world   func(*sim.WorldSpec)
		release func(*release.Release)
		before  func(*testing.T, *harness)
		want    []string
	}{
		{
			name:    "AMI not tagged DeployWith",
			release: func(r *release.Release) { r.AMI = "ubuntu-untagged" },
			want:    []string{`ami: image "ubuntu-untagged" (ami-0000000000000ab04) is not tagged DeployWith=ferry`},
		},
		{
			name:    "AMI not found",
			release: func(r *release.Release) { r.AMI = "ami-00000000000000fff" },
			want:    []string{`ami: image "ami-00000000000000fff" not found`},
		},
		{
			name: "subnet not tagged",
			release: func(r *release.Release) {
				r.Subnets = []string{"test_private_subnet_a", "test_private_subnet_untagged"}
			},
			want: []string{`subnets[1]: subnet "test_private_subnet_untagged" (subnet-00000000000000c01) is not tagged DeployWith=ferry`},
		},
		{
			name:    "subnet not found",
			release: func(r *release.Release) { r.Subnets = []string{"subnet-00000000000000fff"} },
			want:    []string{`subnets[0]: subnet "subnet-00000000000000fff" not found`},
		},
		{
			name: "security group of another project",
			release: func(r *release.Release) {
				r.Services["web"].SecurityGroups = []string{"ec2::other/project::development"}
			},
			want: []string{`services.web.security_groups[0]: security group "ec2::other/project::development" (sg-000000000000d0002) is tagged ProjectName="other/project", not "coinbase/deploy-test"`},
		},
		{
			name:    "load balancer of another project and one missing",
			release: func(r *release.Release) { r.Services["web"].ELBs = []string{"other-project-web-elb", "missing-elb"} },
			want: []string{
				`services.web.elbs[0]: load balancer "other-project-web-elb" (other-project-web-elb) is tagged ProjectName="other/project", not "coinbase/deploy-test"`,
				`services.web.elbs[1]: load balancer "missing-elb" not found`,
			},
		},
		{
			// Connection draining is disabled by default on a classic
			// load balancer made with the API or CLI ("Configure
			// connection draining for your Classic Load Balancer",
			// https://docs.aws.amazon.com/elasticloadbalancing/latest/classic/config-conn-drain.html;
			// DescribeLoadBalancerAttributes, Elastic Load Balancing API
			// Reference): every deregistration would cut requests.
			name: "load balancer without connection draining",
			world: func(w *sim.WorldSpec) {
				w.Accounts[0].Regions[0].ELBs[0].ConnectionDrainingSeconds = 0
			},
			release: func(*release.Release) {},
			want: []string{`services.web.elbs[0]: load balancer "coinbase-deploy-test-web-elb" has connection draining disabled (the default of one made with the API or CLI): ` +
				`every instance it deregisters, at a swap, a rollback or a scale-in, loses its in-flight requests. Enable it: ` +
				`aws elb modify-load-balancer-attributes --load-balancer-name coinbase-deploy-test-web-elb --load-balancer-attributes '{"ConnectionDraining":{"Enabled":true,"Timeout":300}}'`},
		},
		{
			name: "target group missing",
			release: func(r *release.Release) {
				r.Services["web"].TargetGroups = []string{"coinbase-deploy-test-web-tg", "missing-tg"}
			},
			want: []string{`services.web.target_groups[1]: target group "missing-tg" not found`},
		},
		{
			name:    "target group of another project",
			release: func(r *release.Release) { r.Services["web"].TargetGroups = []string{"other-project-web-tg"} },
			want:    []string{`services.web.target_groups[0]: target group "other-project-web-tg"`},
		},
		{
			name:    "AMI restricted to other projects",
			world:   restrict("ubuntu", "other/project acme/"),
			release: func(*release.Release) {},
			want:    []string{`ami: image "ubuntu" (ami-0000000000000ab01) is tagged DeployProjects="other/project acme/", which does not list project coinbase/deploy-test`},
		},
		{
			name:    "subnet restricted to no project",
			world:   restrict("test_private_subnet_b", ""),
			release: func(*release.Release) {},
			want:    []string{`subnets[1]: subnet "test_private_subnet_b" (subnet-00000000000000b01) is tagged DeployProjects="", which does not list project coinbase/deploy-test`},
		},
		{
			name:    "instance profile path",
			world:   func(w *sim.WorldSpec) { w.Accounts[0].InstanceProfiles[0].Path = "/" },
			release: func(*release.Release) {},
			want:    []string{`services.web.profile: instance profile "coinbase-deploy-test" has path "/", not "/coinbase/deploy-test/development/web/"`},
		},
		{
			name: "instance profile's role path",
			world: func(w *sim.WorldSpec) {
				for i := range w.Accounts[0].Roles {
					if w.Accounts[0].Roles[i].Name == "coinbase-deploy-test" {
						w.Accounts[0].Roles[i].Path = "/"
					}
				}
			},
			release: func(*release.Release) {},
			want:    []string{`services.web.profile: role "coinbase-deploy-test" of instance profile "coinbase-deploy-test" has path "/", not "/coinbase/deploy-test/development/web/"`},
		},
		{
			name:    "instance profile missing",
			release: func(r *release.Release) { r.Services["web"].Profile = "nobody" },
			want:    []string{`services.web.profile: instance profile "nobody" not found`},
		},
		{
			name: "lifecycle role and topic missing",
			release: func(r *release.Release) {
				r.Lifecycle = map[string]*release.LifecycleHook{
					"termhook": {Transition: "autoscaling:EC2_INSTANCE_TERMINATING", Role: "missing-role", SNS: "missing-topic"},
				}
			},
			want: []string{`lifecycle.termhook.role: role "missing-role" not found`, `lifecycle.termhook.sns: topic "missing-topic" not found`},
		},
		{
			// Fail fast rather than wait out the timeout: instances in a
			// zone the load balancers do not route to never serve.
			name: "subnet in a zone the load balancers do not route to",
			world: func(w *sim.WorldSpec) {
				r := &w.Accounts[0].Regions[0]
				r.ELBs[0].AvailabilityZones = []string{"us-east-1a"}
				r.LoadBalancers[0].AvailabilityZones = []string{"us-east-1a"}
			},
			release: func(*release.Release) {},
			want: []string{
				`subnets[1]: subnet "test_private_subnet_b" is in us-east-1b, which load balancer "coinbase-deploy-test-web-elb" does not route to (it routes to us-east-1a)`,
				`subnets[1]: subnet "test_private_subnet_b" is in us-east-1b, which no load balancer of target group "coinbase-deploy-test-web-tg" enables (they enable us-east-1a)`,
			},
		},
		{
			name:    "target group no load balancer uses",
			world:   func(w *sim.WorldSpec) { w.Accounts[0].Regions[0].TargetGroups[0].LoadBalancers = nil },
			release: func(*release.Release) {},
			want:    []string{`services.web.target_groups[0]: target group "coinbase-deploy-test-web-tg" is used by no load balancer: its targets would stay unused (Target.NotInUse)`},
		},
		{
			name: "security group of another VPC",
			release: func(r *release.Release) {
				r.Services["web"].SecurityGroups = []string{"ec2::coinbase/deploy-test::other-vpc"}
			},
			want: []string{`services.web.security_groups[0]: security group "ec2::coinbase/deploy-test::other-vpc" (sg-000000000000d0003) is in vpc-0000000000000c002, not in vpc-0000000000000c001, the VPC of the service's subnets`},
		},
		{
			name: "subnets in two VPCs",
			world: func(w *sim.WorldSpec) {
				w.Accounts[0].Regions[0].Subnets[1].VPCID = "vpc-0000000000000c002"
			},
			release: func(*release.Release) {},
			want:    []string{`subnets: the subnets of service web are in 2 VPCs (vpc-0000000000000c001, vpc-0000000000000c002); an Auto Scaling group's subnets must be in one`},
		},
		{
			name:    "image architecture the instance type cannot run",
			release: func(r *release.Release) { r.Services["web"].InstanceType = "t4g.nano" },
			want:    []string{`services.web.instance_type: instance type "t4g.nano" runs arm64, but image "ubuntu" (ami-0000000000000ab01) is x86_64: no instance could launch`},
		},
		{
			name:    "instance type that does not exist",
			release: func(r *release.Release) { r.Services["web"].InstanceType = "t9.enormous" },
			want:    []string{`services.web.instance_type: instance type "t9.enormous" does not exist in the target region`},
		},
		{
			// AWS refuses CreateAutoScalingGroup with a hook role the deploy
			// role may not pass (a root-path role), and one Auto Scaling
			// cannot assume; the topic must be the project-config's.
			name: "lifecycle role at the root path, not trusting Auto Scaling, and a topic of another project",
			world: func(w *sim.WorldSpec) {
				a := &w.Accounts[0]
				a.Roles = append(a.Roles, sim.RoleSpec{Name: "root-hooks", Path: "/"})
				a.Regions[0].Topics = append(a.Regions[0].Topics, sim.TopicSpec{Name: "their-topic",
					Tags: map[string]string{"ProjectName": "other/project", "ConfigName": "development"}})
			},
			release: func(r *release.Release) {
				r.Lifecycle = map[string]*release.LifecycleHook{
					"termhook": {Transition: "autoscaling:EC2_INSTANCE_TERMINATING", Role: "root-hooks", SNS: "their-topic"},
				}
			},
			want: []string{
				`lifecycle.termhook.role: role "root-hooks" has path "/", not one under "/coinbase/deploy-test/development/": a hook's role serves every group of the project-config`,
				`lifecycle.termhook.role: role "root-hooks" does not trust autoscaling.amazonaws.com, which assumes it to publish the hook's notifications`,
				`lifecycle.termhook.sns: topic "their-topic" is tagged ProjectName="other/project", not "coinbase/deploy-test"`,
			},
		},
		{
			name:    "two previous groups",
			release: func(*release.Release) {},
			before: func(t *testing.T, h *harness) {
				createForeignGroup(t, h, "old-a")
				createForeignGroup(t, h, "old-b")
			},
			want: []string{"services.web: 2 previous Auto Scaling groups found (coinbase/deploy-test/development/web/old-a, coinbase/deploy-test/development/web/old-b); there must be at most one"},
		},
		{
			name:    "target account does not trust the deployer",
			release: func(r *release.Release) { r.AccountID = "333333333333" },
			want:    []string{"target 333333333333/us-east-1: cannot assume role"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mutate []func(*sim.WorldSpec)
			if tt.world != nil {
				mutate = append(mutate, tt.world)
			}
			h := newHarness(t, mutate...)
			if tt.before != nil {
				tt.before(t, h)
			}
			r := h.baseRelease()
			tt.release(r)
			x := h.start(r)
			require.NoError(t, x.steps(execution.TaskValidate, execution.TaskLock))
			before := h.snapshot()
			err := x.step(execution.TaskValidateResources)
			var bad *failure.BadReleaseError
			require.ErrorAs(t, err, &bad, "%v", err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.Len(t, bad.Problems, len(tt.want), "%q", bad.Problems)
			assert.Equal(t, before, h.snapshot(), "ValidateResources creates nothing")
		})
	}
}

func TestValidateResourcesReportsEveryProblem(t *testing.T) {
	h := newHarness(t)
	r := h.baseRelease()
	r.AMI = "ubuntu-untagged"
	r.Subnets = []string{"test_private_subnet_untagged"}
	r.Services["web"].SecurityGroups = []string{"ec2::other/project::development"}
	r.Services["web"].ELBs = []string{"missing-elb"}
	r.Services["web"].TargetGroups = []string{"missing-tg"}
	x := h.start(r)
	require.NoError(t, x.steps(execution.TaskValidate, execution.TaskLock))
	h.world.ResetCalls()
	err := x.step(execution.TaskValidateResources)
	var bad *failure.BadReleaseError
	require.ErrorAs(t, err, &bad)
	assert.Len(t, bad.Problems, 5, "%q", bad.Problems)
}

func TestValidateResourcesCallsDoNotGrowWithServices(t *testing.T) {
	calls := func(services int) map[string]int {
		names := make([]string, services)
		for i := range names {
			names[i] = string(rune('a'+i)) + "svc"
		}
		// Each service's own security group, as every service needs one.
		h := newHarness(t, func(w *sim.WorldSpec) {
			reg := &w.Accounts[0].Regions[0]
			for i, n := range names {
				reg.SecurityGroups = append(reg.SecurityGroups, sim.SecurityGroupSpec{
					ID: fmt.Sprintf("sg-00000000000%06d", i), Name: "group-" + n, VPCID: "vpc-0000000000000c001",
					Tags: map[string]string{naming.TagProjectName: project, naming.TagConfigName: config, naming.TagServiceName: n},
				})
			}
		})
		r := h.baseRelease()
		web := r.Services["web"]
		r.Services = map[string]*release.Service{}
		for _, n := range names {
			s := *web
			s.SecurityGroups, s.ELBs, s.TargetGroups, s.Profile = []string{"group-" + n}, nil, nil, ""
			r.Services[n] = &s
		}
		x := h.start(r)
		require.NoError(t, x.steps(execution.TaskValidate, execution.TaskLock))
		h.world.ResetCalls()
		require.NoError(t, x.step(execution.TaskValidateResources))
		return h.world.Calls()
	}
	assert.Equal(t, calls(1), calls(10))
}

// restrict tags the deploy-test region's image or subnet named name with
// DeployProjects=value.
func restrict(name, value string) func(*sim.WorldSpec) {
	return func(w *sim.WorldSpec) {
		reg := &w.Accounts[0].Regions[0]
		for i := range reg.AMIs {
			if reg.AMIs[i].Name == name {
				reg.AMIs[i].Tags[naming.TagDeployProjects] = value
			}
		}
		for i := range reg.Subnets {
			if reg.Subnets[i].Tags[naming.TagName] == name {
				reg.Subnets[i].Tags[naming.TagDeployProjects] = value
			}
		}
	}
}

// TestDeployProjectsAllowsListedProjects: an image and subnets restricted
// to the project, or to its organization's prefix, serve a deploy.
func TestDeployProjectsAllowsListedProjects(t *testing.T) {
	h := newHarness(t, restrict("ubuntu", "other/project coinbase/deploy-test"),
		restrict("test_private_subnet_a", "coinbase/"), restrict("test_private_subnet_b", "acme/x coinbase/"))
	h.start(h.baseRelease()).succeed()
}

// TestValidateResourcesChecksGroupHeadroom: a region without room for the
// release's groups beside the previous release's refuses the release at
// ValidateResources, before anything is created, naming the quota (Auto
// Scaling's DescribeAccountLimits); with room for them it goes on.
func TestValidateResourcesChecksGroupHeadroom(t *testing.T) {
	for _, tc := range []struct {
		name  string
		quota int
		want  string
	}{
		{"room for one more", 2, ""},
		{"full", 1, "services: the region has 1 of its quota of 1 Auto Scaling groups, and the release adds 1 beside the previous release's until they are retired: ask for a higher quota (Service Quotas, Amazon EC2 Auto Scaling: Auto Scaling groups per region) or delete unused groups"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(w *sim.WorldSpec) { w.Limits.AutoScalingGroups = tc.quota })
			h.start(h.baseRelease()).succeed()
			h.clk.Advance(time.Hour)
			x := h.start(h.baseRelease())
			require.NoError(t, x.steps(execution.TaskValidate, execution.TaskLock))
			before := h.snapshot()
			err := x.step(execution.TaskValidateResources)
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			var bad *failure.BadReleaseError
			require.ErrorAs(t, err, &bad)
			assert.Equal(t, []string{tc.want}, bad.Problems)
			assert.Equal(t, before, h.snapshot(), "nothing created")
		})
	}
}

// TestValidateResourcesReadsSideBySide: ValidateResources reads the
// release once (its announcement reuses it, and the target's clients),
// lists the project-config's groups once (the resolution's listing
// serves the check of its removals) and reads the region's headroom
// (DescribeAccountLimits) and the config's other environments beside the
// resolution: its round takes the time of the resolution's calls, and of
// its announcement's (PutEvents) after them, nothing more. Each call
// costs the same modelled time (package fanout's Timeline).
func TestValidateResourcesReadsSideBySide(t *testing.T) {
	const call = 30 * time.Millisecond
	h := newHarness(t)
	r := h.baseRelease()
	x := h.start(r)
	require.NoError(t, x.steps(execution.TaskValidate, execution.TaskLock))
	h.world.OnCall(func(ctx context.Context, _ sim.Call) { fanout.Spend(ctx, call) })

	rctx, alone := fanout.WithTimeline(t.Context())
	_, err := resources.Resolve(rctx, h.world.Clients(account, region), r)
	require.NoError(t, err)

	from := len(h.world.CallLog())
	releaseReads := 0
	h.store.Deny = func(op, key string) bool {
		if op == "GetObject" && key == naming.ReleaseKey(project, config, r.ReleaseID) {
			releaseReads++
		}
		return false
	}
	ctx, tl := fanout.WithTimeline(t.Context())
	raw, err := json.Marshal(x.state)
	require.NoError(t, err)
	_, err = h.d.Invoke(ctx, execution.Request{Task: execution.TaskValidateResources, Input: raw, Execution: x.ctx})
	require.NoError(t, err)
	h.store.Deny = nil
	ops := map[string]int{}
	for _, c := range h.world.CallLog()[from:] {
		ops[c.Op]++
	}
	assert.Equal(t, 1, releaseReads, "the release read once: its announcement reuses it")
	assert.Equal(t, 1, ops["DescribeAutoScalingGroups"], "the groups listed once")
	assert.Equal(t, 1, ops["DescribeAccountLimits"])
	assert.Equal(t, 1, ops["PutEvents"])
	assert.Equal(t, alone.Elapsed()+call, tl.Elapsed(), "the resolution's time, then the announcement's")
}
