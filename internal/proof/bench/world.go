package bench

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
)

// The benchmark's world: one account and region, bootstrapped for itself.
const (
	Account = "111111111111"
	Region  = "us-east-1"
	Project = "ferry/bench"
	Config  = "grid"

	amiID   = "ami-00000000000be0001"
	amiName = "bench-base"
)

// subnetNames are the Name tags of the world's subnets, one per zone.
var subnetNames = []string{"bench_subnet_a", "bench_subnet_b", "bench_subnet_c"}

// Timings are the instances' timings: healthy (booted and passing the
// target group's health check) 60 to 120 simulated seconds after launch,
// picked per instance, deterministically from its id.
var Timings = sim.Timings{
	Boot:           &sim.Range{Min: 50, Max: 100},
	Health:         &sim.Range{Min: 10, Max: 20},
	Terminate:      &sim.Range{Min: 20, Max: 40},
	Deregistration: &sim.Range{Min: 30, Max: 30},
	GroupDelete:    &sim.Range{Min: 10, Max: 30},
}

// Cell is one cell of the grid: Services services of Instances instances
// each.
type Cell struct {
	Services  int `json:"services"`
	Instances int `json:"instances"`
	// Timeout is the releases' timeout (0: 30 minutes); Boot, when set,
	// how long an instance takes to boot (default Timings.Boot), in
	// seconds; Behavior, when set, how the measured release's instances
	// behave (a sim.UserDataMarker in its user data): a release that can
	// never be healthy runs to its timeout and fails.
	Timeout  time.Duration `json:"-"`
	Boot     *sim.Range    `json:"-"`
	Behavior sim.Behavior  `json:"-"`
	// Project is which project of a world deploys (projectOf; 0 is
	// Project).
	Project int `json:"-"`
}

func (c Cell) String() string {
	s := fmt.Sprintf("S=%d,N=%d", c.Services, c.Instances)
	if c.Timeout > 0 {
		s += fmt.Sprintf(",timeout=%v", c.Timeout)
	}
	if c.Boot != nil {
		s += fmt.Sprintf(",boot=%d-%ds", c.Boot.Min, c.Boot.Max)
	}
	if c.Behavior != "" {
		s += "," + string(c.Behavior)
	}
	return s
}

// fails says whether the cell's measured release ends in a failure.
func (c Cell) fails() bool { return c.Behavior == sim.NeverHealthy }

// Grid is the benchmark's grid: S in {1, 10, 50} x N in {1, 10, 100}.
func Grid() []Cell {
	var cells []Cell
	for _, s := range []int{1, 10, 50} {
		for _, n := range []int{1, 10, 100} {
			cells = append(cells, Cell{Services: s, Instances: n})
		}
	}
	return cells
}

// ServiceName is the name of service i (0-based) of a cell.
func ServiceName(i int) string { return fmt.Sprintf("svc%02d", i) }

// project is one project of a world: its name, and the prefix of its
// resources' names (names an account or region holds once).
type project struct{ name, prefix string }

// projectOf is project i of a world: Project itself first, then
// Project-001 and so on.
func projectOf(i int) project {
	if i == 0 {
		return project{name: Project, prefix: "bench"}
	}
	return project{name: fmt.Sprintf("%s-%03d", Project, i), prefix: fmt.Sprintf("bench%03d", i)}
}

func (p project) securityGroupName(svc string) string {
	return "ec2::" + p.name + "::" + Config + "::" + svc
}
func (p project) targetGroupName(svc string) string  { return p.prefix + "-" + svc + "-tg" }
func (p project) loadBalancerName(svc string) string { return p.prefix + "-" + svc + "-alb" }
func (p project) profileName(svc string) string      { return p.prefix + "-" + svc }
func (p project) hooksName() string                  { return p.prefix + "_lifecycle_hooks" }

// ownerTags are the tags that let a release of the project-config use a
// load balancer or security group of service svc.
func (p project) ownerTags(svc string, extra map[string]string) map[string]string {
	tags := map[string]string{
		naming.TagProjectName: p.name,
		naming.TagConfigName:  Config,
		naming.TagServiceName: svc,
	}
	for k, v := range extra {
		tags[k] = v
	}
	return tags
}

// World is the simulated AWS of a cell with c.Services services of
// project c.Project (see Worlds).
func World(c Cell) sim.WorldSpec { return Worlds(c, c.Project) }

// Worlds is the simulated AWS of projects 0 to k-1 (k 1: of project
// from; see projectOf), each with c.Services services: for each service a
// security group, a target group routed by an application load balancer,
// and an instance profile (with its role) owned by the service; for each
// project the lifecycle hooks' role and topic; an AMI and three subnets
// tagged for ferry; the bootstrap roles. Every instance boots healthy
// after Timings (c.Boot's boot when set). The world throttles as AWS
// documents (sim.ThrottleModel: a token bucket per API, the SDK's retries
// modelled), in every cell as in RunMulti.
func Worlds(c Cell, projects ...int) sim.WorldSpec {
	acct := sim.AccountSpec{
		ID:        Account,
		Bootstrap: []sim.BootstrapSpec{{Region: Region, Trust: []string{Account}}},
	}
	reg := sim.RegionSpec{
		Name: Region,
		AMIs: []sim.AMISpec{{ID: amiID, Name: amiName,
			Tags: map[string]string{naming.TagName: amiName, naming.TagDeployWith: naming.DeployWithValue}, Behavior: sim.Healthy}},
	}
	for i, name := range subnetNames {
		reg.Subnets = append(reg.Subnets, sim.SubnetSpec{
			ID:               fmt.Sprintf("subnet-%017x", 0xa01+i),
			AvailabilityZone: Region + string(rune('a'+i)),
			VPCID:            "vpc-00000000000000be0",
			Tags:             map[string]string{naming.TagName: name, naming.TagDeployWith: naming.DeployWithValue},
		})
	}
	sg := 0
	for _, k := range projects {
		p := projectOf(k)
		acct.Roles = append(acct.Roles, sim.RoleSpec{Name: p.hooksName(), Path: naming.ProjectConfigPath(p.name, Config),
			TrustServices: []string{naming.HookRoleTrust}})
		reg.Topics = append(reg.Topics, sim.TopicSpec{Name: p.hooksName(), Tags: map[string]string{naming.TagProjectName: p.name, naming.TagConfigName: Config}})
		for i := range c.Services {
			svc := ServiceName(i)
			path := naming.InstanceProfilePath(p.name, Config, svc)
			acct.Roles = append(acct.Roles, sim.RoleSpec{Name: p.profileName(svc), Path: path})
			acct.InstanceProfiles = append(acct.InstanceProfiles, sim.InstanceProfileSpec{
				Name: p.profileName(svc), Path: path, Roles: []string{p.profileName(svc)}})
			reg.SecurityGroups = append(reg.SecurityGroups, sim.SecurityGroupSpec{
				ID: fmt.Sprintf("sg-%017x", 0xd000+sg), Name: p.securityGroupName(svc), VPCID: "vpc-00000000000000be0",
				Tags: p.ownerTags(svc, map[string]string{naming.TagName: p.securityGroupName(svc)}),
			})
			sg++
			reg.LoadBalancers = append(reg.LoadBalancers, sim.LoadBalancerSpec{Name: p.loadBalancerName(svc), Tags: p.ownerTags(svc, nil)})
			reg.TargetGroups = append(reg.TargetGroups, sim.TargetGroupSpec{
				Name: p.targetGroupName(svc), Port: 8000, LoadBalancers: []string{p.loadBalancerName(svc)}, Tags: p.ownerTags(svc, nil)})
		}
	}
	acct.Regions = []sim.RegionSpec{reg}
	timings := Timings
	if c.Boot != nil {
		timings.Boot = c.Boot
	}
	return sim.WorldSpec{Defaults: timings, Accounts: []sim.AccountSpec{acct}, Subsecond: true, Throttle: true}
}

// StableWindow is the stability window of the benchmark's releases
// (stable_seconds): the deploy-added latency is measured beyond it.
const StableWindow = 60 * time.Second

// AssetName is the one asset of the benchmark's releases.
const AssetName = "app-config"

// AssetContent is its content.
var AssetContent = []byte("# the benchmark's application configuration\nlisten = 8000\nworkers = 8\n")

// ReleaseFile is the release file of a cell, as a person writes it (no id,
// no created_at, the asset named by its path, AssetFile next to the
// release file; the benchmark submits it as ferry deploy does): every service with c.Instances instances (min_size N,
// max_size 2N, spread 0.1, so the new group launches ceil(1.1 N) and needs
// N healthy), its security group and target group, CPU scaling policies,
// tags, a termination lifecycle hook, and user data naming the asset.
func ReleaseFile(c Cell, version int) ([]byte, error) {
	return json.MarshalIndent(newRelease(c, version), "", "  ")
}

// AssetFile is the path of the asset's file, relative to the release file.
const AssetFile = "app.conf"

func newRelease(c Cell, version int) *release.Release {
	p := projectOf(c.Project)
	r := &release.Release{
		ProjectName:   p.name,
		ConfigName:    Config,
		AccountID:     Account,
		Region:        Region,
		Subnets:       subnetNames,
		AMI:           amiName,
		Timeout:       1800,
		StableSeconds: ptrTo(int(StableWindow / time.Second)),
		UserData: fmt.Sprintf("#cloud-config\nwrite_files:\n  - path: /etc/app/release\n    content: |\n      {{RELEASE_ID}} {{SERVICE_NAME}} v%d\n"+
			"runcmd:\n  - curl -fsS -o /etc/app/app.conf '{{ASSET_URL:%s}}'\n  - echo '{{ASSET_SHA256:%s}}  /etc/app/app.conf' | sha256sum -c\n  - systemctl start app-{{SERVICE_NAME}}\n",
			version, AssetName, AssetName),
		Lifecycle: map[string]*release.LifecycleHook{
			"termhook": {Transition: "autoscaling:EC2_INSTANCE_TERMINATING", Role: p.hooksName(), SNS: p.hooksName(), HeartbeatTimeout: 300},
		},
		Assets:   map[string]*release.Asset{AssetName: {Path: AssetFile}},
		Services: map[string]*release.Service{},
	}
	if c.Timeout > 0 {
		r.Timeout = int(c.Timeout / time.Second)
	}
	if c.Behavior != "" && version > 1 {
		r.UserData += sim.UserDataMarker + " " + string(c.Behavior) + "\n"
	}
	for i := range c.Services {
		svc := ServiceName(i)
		r.Services[svc] = &release.Service{
			InstanceType:   "c5.large",
			SecurityGroups: []string{p.securityGroupName(svc)},
			TargetGroups:   []string{p.targetGroupName(svc)},
			Profile:        p.profileName(svc),
			EBSVolumeSize:  20,
			Autoscaling: &release.Autoscaling{
				MinSize: c.Instances, MaxSize: 2 * c.Instances, Spread: 0.1, MaxTerms: 1,
				Policies: []release.Policy{
					{Type: "cpu_scale_up", Threshold: 60, ScalingAdjustment: 2},
					{Type: "cpu_scale_down", Threshold: 20, ScalingAdjustment: -1, EvaluationPeriods: 5, Period: 60, Cooldown: 600},
				},
			},
			Tags: map[string]string{"Team": "bench", "CostCenter": "cc-0000"},
		}
	}
	return r
}

// ReleaseID is the id of the k-th release made at t (the client's format:
// UTC time to the second and six hex digits).
func ReleaseID(t time.Time, k int) string {
	return fmt.Sprintf("%s-%06x", t.UTC().Format("20060102T150405Z"), 0xbe0000+k)
}

func ptrTo[T any](v T) *T { return &v }
