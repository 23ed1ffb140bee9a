package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release/textpos"
)

// WorldSpec is the starting contents of a simulated AWS: a world file. See
// the package documentation for the field reference.
type WorldSpec struct {
	// Defaults are the instance timings of every AMI that does not
	// override them.
	Defaults Timings `json:"defaults"`
	// Limits are the quotas the simulation enforces, per account-region.
	Limits   Quotas        `json:"limits"`
	Accounts []AccountSpec `json:"accounts"`
	// Seed varies the boot and health times drawn from their ranges (0:
	// the default draw, the same as every world's).
	Seed uint64 `json:"seed,omitempty"`
	// Subsecond draws boot and health times to the millisecond rather
	// than in whole seconds.
	Subsecond bool `json:"subsecond,omitempty"`
	// Throttle enforces AWS's request rates per account and region (its
	// documented token buckets, see Rate and ThrottleModel), retrying a throttled call as the
	// SDK's standard retryer does before answering it with the throttling
	// error.
	Throttle bool `json:"throttle,omitempty"`
}

// Quotas are per account-region service quotas. Zero means the AWS default.
type Quotas struct {
	// AutoScalingGroups is the most ASGs of a region (AWS default 500).
	AutoScalingGroups int `json:"auto_scaling_groups,omitempty"`
	// LaunchTemplates is the most launch templates of a region (AWS
	// default 5000).
	LaunchTemplates int `json:"launch_templates,omitempty"`
	// Alarms is the most CloudWatch alarms of a region.
	Alarms int `json:"alarms,omitempty"`
}

// AccountSpec is one AWS account.
type AccountSpec struct {
	ID string `json:"id"`
	// Bootstrap creates ferry's deploy and publish roles of an environment
	// (names from package naming), trusting the listed accounts.
	Bootstrap        []BootstrapSpec       `json:"bootstrap,omitempty"`
	Roles            []RoleSpec            `json:"roles,omitempty"`
	InstanceProfiles []InstanceProfileSpec `json:"instance_profiles,omitempty"`
	Regions          []RegionSpec          `json:"regions"`
}

// BootstrapSpec is one bootstrapped environment of an account.
type BootstrapSpec struct {
	Region    string   `json:"region"`
	Qualifier string   `json:"qualifier,omitempty"`
	Trust     []string `json:"trust"`
	// Projects are the patterns of the projects the environment accepts
	// (the template's Projects parameter; default naming.AllProjects).
	Projects []string `json:"projects,omitempty"`
}

// RoleSpec is an IAM role. Trust lists the accounts allowed to assume it,
// TrustServices the AWS service principals ("autoscaling.amazonaws.com"
// for a lifecycle hook's role).
type RoleSpec struct {
	Name          string   `json:"name"`
	Path          string   `json:"path,omitempty"`
	Trust         []string `json:"trust,omitempty"`
	TrustServices []string `json:"trust_services,omitempty"`
}

// InstanceProfileSpec is an IAM instance profile and the roles in it.
type InstanceProfileSpec struct {
	Name  string   `json:"name"`
	Path  string   `json:"path,omitempty"`
	Roles []string `json:"roles,omitempty"`
}

// RegionSpec is what exists in one region of an account.
type RegionSpec struct {
	Name           string              `json:"name"`
	AMIs           []AMISpec           `json:"amis,omitempty"`
	Subnets        []SubnetSpec        `json:"subnets,omitempty"`
	SecurityGroups []SecurityGroupSpec `json:"security_groups,omitempty"`
	ELBs           []ELBSpec           `json:"elbs,omitempty"`
	// LoadBalancers are Elastic Load Balancing v2 load balancers
	// (application or network), which target groups route from.
	LoadBalancers []LoadBalancerSpec `json:"load_balancers,omitempty"`
	TargetGroups  []TargetGroupSpec  `json:"target_groups,omitempty"`
	Topics        []TopicSpec        `json:"topics,omitempty"`
	// Alarms are CloudWatch alarms that exist from the start.
	Alarms []AlarmSpec `json:"alarms,omitempty"`
}

// AMISpec is a machine image and how instances launched from it behave.
type AMISpec struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Tags of the image (a Name tag defaults to Name).
	Tags     map[string]string `json:"tags,omitempty"`
	Behavior Behavior          `json:"behavior,omitempty"`
	// Architecture of the image: x86_64 (the default), arm64 or i386. An
	// instance type that cannot run it fails to launch.
	Architecture string `json:"architecture,omitempty"`
	// CPUPercent is the average CPUUtilization its instances report once
	// in service (default DefaultCPUPercent): what CPU alarms see.
	CPUPercent *float64 `json:"cpu_percent,omitempty"`
	// ErrorPercent is the share of the requests its instances answer
	// with an HTTP 5xx once they serve (default 0): what a load
	// balancer's HTTPCode_Target_5XX_Count (classic: HTTPCode_Backend_5XX)
	// counts against its RequestCount.
	ErrorPercent float64 `json:"error_percent,omitempty"`
	// Metrics are the custom metrics its instances publish (an
	// application's, the CloudWatch agent's), with the
	// AutoScalingGroupName dimension, once a minute while they run: a
	// slower build declares a higher latency than the build before it.
	Metrics []MetricSpec `json:"metrics,omitempty"`
	// NetworkOutBytes is how many bytes a minute each of its instances
	// sends (AWS/EC2 NetworkOut; default DefaultNetworkOutBytes).
	NetworkOutBytes *float64 `json:"network_out_bytes,omitempty"`
	// Timings override the world's defaults for this image.
	Timings *Timings `json:"timings,omitempty"`
}

// MetricSpec is a custom metric an image's instances publish: each
// datapoint is Value, spread by up to MetricJitter either way
// (deterministically, per instance and minute).
type MetricSpec struct {
	Namespace string  `json:"namespace"`
	Name      string  `json:"name"`
	Value     float64 `json:"value"`
}

// DefaultNetworkOutBytes is the NetworkOut a minute of an instance whose
// image sets none.
const DefaultNetworkOutBytes = 1 << 20

// MetricJitter is how far, as a fraction, each datapoint an instance
// publishes strays from its image's value.
const MetricJitter = 0.05

// AlarmSpec is a CloudWatch alarm that exists when the world starts, a
// stand-in for the error-rate alarm a team keeps on its service. It goes
// to ALARM either once instances launched from Image (an AMI's id or
// name) have been in service for Minutes whole minutes (a bad build that
// errors once it takes traffic), and is OK while none is; or, with
// AtMinutes instead of Image, once the world has run AtMinutes minutes
// (an incident at a time), within 20 seconds. Tags say whose it is.
type AlarmSpec struct {
	Name      string            `json:"name"`
	Tags      map[string]string `json:"tags,omitempty"`
	Image     string            `json:"image,omitempty"`
	Minutes   int               `json:"minutes,omitempty"`
	AtMinutes int               `json:"at_minutes,omitempty"`
}

// DefaultCPUPercent is the CPUUtilization of an image that sets none.
const DefaultCPUPercent = 40.0

// SubnetSpec is a VPC subnet.
type SubnetSpec struct {
	ID               string            `json:"id"`
	AvailabilityZone string            `json:"availability_zone"`
	VPCID            string            `json:"vpc_id,omitempty"`
	Tags             map[string]string `json:"tags,omitempty"`
}

// SecurityGroupSpec is a VPC security group.
type SecurityGroupSpec struct {
	ID    string            `json:"id"`
	Name  string            `json:"name"`
	VPCID string            `json:"vpc_id,omitempty"`
	Tags  map[string]string `json:"tags,omitempty"`
}

// ELBSpec is a classic load balancer. AvailabilityZones are the zones it
// routes to (default: every zone of the region's subnets); an instance in
// another zone stays OutOfService.
type ELBSpec struct {
	Name              string            `json:"name"`
	AvailabilityZones []string          `json:"availability_zones,omitempty"`
	Tags              map[string]string `json:"tags,omitempty"`
	// ConnectionDrainingSeconds is the load balancer's connection
	// draining timeout: how long a deregistered instance keeps its
	// in-flight requests (0, the API's default: draining disabled).
	ConnectionDrainingSeconds int `json:"connection_draining_seconds,omitempty"`
}

// LoadBalancerSpec is an Elastic Load Balancing v2 load balancer.
// AvailabilityZones are its enabled zones (default: every zone of the
// region's subnets); a target in another zone is unused
// (Target.NotInUse).
type LoadBalancerSpec struct {
	Name              string            `json:"name"`
	Type              string            `json:"type,omitempty"` // application (default) or network
	AvailabilityZones []string          `json:"availability_zones,omitempty"`
	Tags              map[string]string `json:"tags,omitempty"`
}

// TargetGroupSpec is an ELBv2 target group (instance targets).
// LoadBalancers names the v2 load balancers that route to it (through
// their listeners); a target group no load balancer uses has every target
// unused (Target.NotInUse), as in AWS.
type TargetGroupSpec struct {
	Name          string            `json:"name"`
	Port          int32             `json:"port,omitempty"`
	LoadBalancers []string          `json:"load_balancers,omitempty"`
	Tags          map[string]string `json:"tags,omitempty"`
	// DeregistrationDelaySeconds is its deregistration_delay.timeout_seconds
	// attribute: how long a deregistering target stays draining, 0 to
	// 3600 (AWS's default is 300: TargetGroupAttribute, Elastic Load
	// Balancing API Reference). Unset, a target drains for its image's
	// deregistration_seconds, the simulation's shorter stand-in.
	DeregistrationDelaySeconds *int `json:"deregistration_delay_seconds,omitempty"`
}

// TopicSpec is an SNS topic and its tags.
type TopicSpec struct {
	Name string            `json:"name"`
	Tags map[string]string `json:"tags,omitempty"`
}

// Behavior is how the instances of an AMI behave.
type Behavior string

// Behaviors.
const (
	// Healthy instances boot, then pass their health checks.
	Healthy Behavior = "healthy"
	// NeverHealthy instances boot and never pass a load balancer health
	// check.
	NeverHealthy Behavior = "never-healthy"
	// CrashLoop instances die a while after booting; the ASG replaces
	// them, so terminating instances show up.
	CrashLoop Behavior = "crash-loop"
	// SlowBoot instances are healthy but take SlowBoot to boot.
	SlowBoot Behavior = "slow-boot"
	// CrashAfterHealthy instances pass their health checks, serve for
	// HealthyFor, then die; the ASG replaces them with instances that do
	// the same (an application that starts, then crashes under load).
	CrashAfterHealthy Behavior = "crash-after-healthy"
	// Worker instances are healthy, and finish their job when asked to
	// terminate: in Terminating:Wait (a termination lifecycle hook), each
	// completes its lifecycle action by itself (CONTINUE) Finish after
	// the wait began.
	Worker Behavior = "worker"
)

// Behaviors returns every behavior.
func Behaviors() []Behavior {
	return []Behavior{Healthy, NeverHealthy, CrashLoop, SlowBoot, CrashAfterHealthy, Worker}
}

func (b Behavior) valid() bool {
	for _, v := range Behaviors() {
		if b == v {
			return true
		}
	}
	return false
}

// UserDataMarker, on a line of its own in an instance's user data followed
// by a behavior ("#ferry-sim: never-healthy"), overrides its AMI's behavior.
const UserDataMarker = "#ferry-sim:"

// Timings are how long things take, each a Range of seconds.
type Timings struct {
	// Boot is from launch to InService.
	Boot *Range `json:"boot_seconds,omitempty"`
	// SlowBoot replaces Boot for the slow-boot behavior.
	SlowBoot *Range `json:"slow_boot_seconds,omitempty"`
	// Health is from InService to passing the load balancer health check.
	Health *Range `json:"health_seconds,omitempty"`
	// CrashAfter is from InService to dying, for the crash-loop behavior.
	CrashAfter *Range `json:"crash_after_seconds,omitempty"`
	// HealthyFor is from passing the health checks to dying, for the
	// crash-after-healthy behavior.
	HealthyFor *Range `json:"healthy_for_seconds,omitempty"`
	// Terminate is how long an instance stays Terminating.
	Terminate *Range `json:"terminate_seconds,omitempty"`
	// Deregistration is how long a target drains in a target group.
	Deregistration *Range `json:"deregistration_seconds,omitempty"`
	// GroupDelete is how long a deleted ASG stays "Delete in progress"
	// after its last instance is gone.
	GroupDelete *Range `json:"group_delete_seconds,omitempty"`
	// Finish is how long a worker instance takes to finish its job in
	// Terminating:Wait before it completes its lifecycle action.
	Finish *Range `json:"finish_seconds,omitempty"`
}

// DefaultTimings are the timings of a world file that sets none.
func DefaultTimings() Timings {
	return Timings{
		Boot:           &Range{60, 120},
		SlowBoot:       &Range{300, 600},
		Health:         &Range{20, 40},
		CrashAfter:     &Range{30, 90},
		HealthyFor:     &Range{10, 50},
		Terminate:      &Range{20, 40},
		Deregistration: &Range{30, 30},
		GroupDelete:    &Range{10, 30},
		Finish:         &Range{20, 40},
	}
}

// over returns t with every field o sets replaced.
func (t Timings) over(o *Timings) Timings {
	if o == nil {
		return t
	}
	pick := func(a, b *Range) *Range {
		if b != nil {
			return b
		}
		return a
	}
	return Timings{
		Boot: pick(t.Boot, o.Boot), SlowBoot: pick(t.SlowBoot, o.SlowBoot),
		Health: pick(t.Health, o.Health), CrashAfter: pick(t.CrashAfter, o.CrashAfter), HealthyFor: pick(t.HealthyFor, o.HealthyFor),
		Terminate: pick(t.Terminate, o.Terminate), Deregistration: pick(t.Deregistration, o.Deregistration),
		GroupDelete: pick(t.GroupDelete, o.GroupDelete), Finish: pick(t.Finish, o.Finish),
	}
}

func (t Timings) validate(where string) []string {
	var problems []string
	for name, r := range map[string]*Range{
		"boot_seconds": t.Boot, "slow_boot_seconds": t.SlowBoot, "health_seconds": t.Health,
		"crash_after_seconds": t.CrashAfter, "healthy_for_seconds": t.HealthyFor, "terminate_seconds": t.Terminate,
		"deregistration_seconds": t.Deregistration, "group_delete_seconds": t.GroupDelete, "finish_seconds": t.Finish,
	} {
		if r != nil && (r.Min < 0 || r.Max < r.Min) {
			problems = append(problems, fmt.Sprintf("%s.%s: range [%d, %d] must have 0 <= min <= max", where, name, r.Min, r.Max))
		}
	}
	return problems
}

// Range is a duration range in whole seconds. In JSON it is a number (a
// fixed duration) or [min, max]. A value in the range is picked per
// instance, deterministically from the instance id.
type Range struct {
	Min, Max int
}

// UnmarshalJSON reads 90 or [60, 120].
func (r *Range) UnmarshalJSON(b []byte) error {
	var n int
	if err := json.Unmarshal(b, &n); err == nil {
		*r = Range{n, n}
		return nil
	}
	var pair []int
	if err := json.Unmarshal(b, &pair); err != nil || len(pair) != 2 {
		return fmt.Errorf("a duration range is a number of seconds or [min, max], not %s", b)
	}
	*r = Range{pair[0], pair[1]}
	return nil
}

// MarshalJSON writes [min, max].
func (r Range) MarshalJSON() ([]byte, error) { return json.Marshal([]int{r.Min, r.Max}) }

// pickMS returns a duration in the range, to the millisecond, chosen by
// seed.
func (r Range) pickMS(seed uint64) time.Duration {
	ms := r.Min * 1000
	if r.Max > r.Min {
		ms += int(seed % uint64((r.Max-r.Min)*1000+1))
	}
	return time.Duration(ms) * time.Millisecond
}

// pick returns a duration in the range chosen by seed.
func (r Range) pick(seed uint64) time.Duration {
	n := r.Min
	if r.Max > r.Min {
		n += int(seed % uint64(r.Max-r.Min+1))
	}
	return time.Duration(n) * time.Second
}

// Load reads and checks a world file.
func Load(path string) (WorldSpec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return WorldSpec{}, fmt.Errorf("world file: %w", err)
	}
	return parseWorld(path, b)
}

// ParseWorld decodes and checks a world file. Unknown fields, trailing
// data, duplicate ids or names and references to things that do not exist
// are errors naming where they are (as parseWorld says, the file called
// "world").
func ParseWorld(b []byte) (WorldSpec, error) { return parseWorld("world", b) }

// parseWorld decodes and checks the world file name holding b. A file
// that does not decode is one error at its place, "NAME:LINE:COLUMN:
// what", as compilers write it; a world that decodes but is wrong is
// "NAME: N problems:" and every problem on a line of its own, each as
// "where: what".
func parseWorld(name string, b []byte) (WorldSpec, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var spec WorldSpec
	if err := dec.Decode(&spec); err != nil {
		return WorldSpec{}, fmt.Errorf("%s: %s", textpos.At(b, decodeOffset(b, dec, err)).In(name), decodeMessage(err))
	}
	if dec.More() {
		off := dec.InputOffset()
		for off < int64(len(b)) && strings.ContainsRune(" \t\r\n", rune(b[off])) {
			off++
		}
		return WorldSpec{}, fmt.Errorf("%s: trailing data after the world object", textpos.At(b, off).In(name))
	}
	if problems := spec.Validate(); len(problems) > 0 {
		noun := "problems"
		if len(problems) == 1 {
			noun = "problem"
		}
		return WorldSpec{}, fmt.Errorf("%s: %d %s:\n  %s", name, len(problems), noun, strings.Join(problems, "\n  "))
	}
	return spec, nil
}

// decodeMessage says what is wrong in err, a decoding error, in the world
// file's terms: a value of the wrong type names its field and what it
// should be, not Go's types.
func decodeMessage(err error) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) || te.Type == nil {
		return strings.TrimPrefix(err.Error(), "json: ")
	}
	want := "a " + te.Type.Kind().String()
	switch te.Type.Kind() {
	case reflect.Slice, reflect.Array:
		want = "an array"
	case reflect.Struct, reflect.Map:
		want = "an object"
	case reflect.Bool:
		want = "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		want = "a whole number"
	case reflect.Float32, reflect.Float64:
		want = "a number"
	}
	return fmt.Sprintf("%s: want %s, not a %s", te.Field, want, te.Value)
}

// unknownFieldRe is encoding/json's message for a field a struct lacks.
var unknownFieldRe = regexp.MustCompile(`^json: unknown field ("(?:[^"\\]|\\.)*")$`)

// decodeOffset is the byte offset of b that err, dec's error decoding it,
// is about: the offset a syntax or type error carries, the end for a file
// cut short, the first place the key is used for an unknown field
// (encoding/json does not say where it was).
func decodeOffset(b []byte, dec *json.Decoder, err error) int64 {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return se.Offset
	case errors.As(err, &te):
		return te.Offset
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return int64(len(b))
	}
	if m := unknownFieldRe.FindStringSubmatch(err.Error()); m != nil {
		key := regexp.MustCompile(regexp.QuoteMeta(m[1]) + `\s*:`)
		if loc := key.FindIndex(b); loc != nil {
			return int64(loc[0])
		}
	}
	return dec.InputOffset()
}

var (
	accountRE = regexp.MustCompile(`^[0-9]{12}$`)
	regionRE  = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]+$`)
	pathRE    = regexp.MustCompile(`^/([\x21-\x7e]+/)*$`)
	// servicePrincipalRE is an AWS service principal.
	servicePrincipalRE = regexp.MustCompile(`^[a-z0-9-]+(\.[a-z0-9-]+)*\.amazonaws\.com$`)
)

// Architectures an image may have (EC2's ArchitectureValues a launch can
// use).
var architectures = []string{"x86_64", "arm64", "i386"}

// Validate lists every problem of the spec, each as "where: what".
func (s WorldSpec) Validate() []string {
	p := &problems{}
	p.list = append(p.list, s.Defaults.validate("defaults")...)
	accounts := map[string]bool{}
	for i, a := range s.Accounts {
		where := fmt.Sprintf("accounts[%d]", i)
		if !accountRE.MatchString(a.ID) {
			p.add("%s.id: %q is not a 12-digit account id", where, a.ID)
		}
		if accounts[a.ID] {
			p.add("%s.id: account %s appears twice", where, a.ID)
		}
		accounts[a.ID] = true
		roles := a.validateRoles(p, where)
		a.validateProfiles(p, where, roles)
		regions := map[string]bool{}
		for j, r := range a.Regions {
			w := fmt.Sprintf("%s.regions[%d]", where, j)
			if !regionRE.MatchString(r.Name) {
				p.add("%s.name: %q is not a region name", w, r.Name)
			}
			if regions[r.Name] {
				p.add("%s.name: region %s appears twice", w, r.Name)
			}
			regions[r.Name] = true
			p.list = append(p.list, r.validate(w)...)
		}
	}
	return p.list
}

// problems gathers a spec's problems, each as "where: what", and the ids
// seen so far for unique.
type problems struct {
	list []string
	seen map[string]string
}

func (p *problems) add(format string, args ...any) {
	p.list = append(p.list, fmt.Sprintf(format, args...))
}

// unique adds a problem when id is missing, or was already defined as a
// kind (recording where it is defined first).
func (p *problems) unique(w, kind, id string) {
	if id == "" {
		p.add("%s: missing %s", w, kind)
		return
	}
	if p.seen == nil {
		p.seen = map[string]string{}
	}
	if prev, ok := p.seen[kind+"\x00"+id]; ok {
		p.add("%s: %s %q already defined at %s", w, kind, id, prev)
	}
	p.seen[kind+"\x00"+id] = w
}

// validateRoles checks the account's roles, its bootstraps' deploy and
// publish roles among them, and returns the names defined.
func (a AccountSpec) validateRoles(p *problems, where string) map[string]bool {
	roles := map[string]bool{}
	role := func(where, name, path string, trust []string) {
		if name == "" {
			p.add("%s.name: missing", where)
		}
		if roles[name] {
			p.add("%s.name: role %q appears twice", where, name)
		}
		roles[name] = true
		if path != "" && !pathRE.MatchString(path) {
			p.add("%s.path: %q must start and end with /", where, path)
		}
		for k, t := range trust {
			if !accountRE.MatchString(t) {
				p.add("%s.trust[%d]: %q is not a 12-digit account id", where, k, t)
			}
		}
	}
	for j, b := range a.Bootstrap {
		w := fmt.Sprintf("%s.bootstrap[%d]", where, j)
		if !regionRE.MatchString(b.Region) {
			p.add("%s.region: %q is not a region name", w, b.Region)
		}
		role(w, naming.DeployRoleName(a.ID, b.Region, b.Qualifier), "/", b.Trust)
		role(w, naming.PublishRoleName(a.ID, b.Region, b.Qualifier), "/", b.Trust)
	}
	for j, r := range a.Roles {
		w := fmt.Sprintf("%s.roles[%d]", where, j)
		role(w, r.Name, r.Path, r.Trust)
		for k, svc := range r.TrustServices {
			if !servicePrincipalRE.MatchString(svc) {
				p.add("%s.trust_services[%d]: %q is not an AWS service principal (name.amazonaws.com)", w, k, svc)
			}
		}
	}
	return roles
}

// validateProfiles checks the account's instance profiles: named once,
// on a path, holding roles the account defines.
func (a AccountSpec) validateProfiles(p *problems, where string, roles map[string]bool) {
	profiles := map[string]bool{}
	for j, ip := range a.InstanceProfiles {
		w := fmt.Sprintf("%s.instance_profiles[%d]", where, j)
		if ip.Name == "" {
			p.add("%s.name: missing", w)
		}
		if profiles[ip.Name] {
			p.add("%s.name: instance profile %q appears twice", w, ip.Name)
		}
		profiles[ip.Name] = true
		if ip.Path != "" && !pathRE.MatchString(ip.Path) {
			p.add("%s.path: %q must start and end with /", w, ip.Path)
		}
		for k, r := range ip.Roles {
			if !roles[r] {
				p.add("%s.roles[%d]: role %q is not defined in account %s", w, k, r, a.ID)
			}
		}
	}
}

// validate lists the region's problems: its images, network and load
// balancers, and topics, every id defined once.
func (r RegionSpec) validate(where string) []string {
	p := &problems{}
	r.validateAMIs(p, where)
	r.validateNetwork(p, where)
	r.validateBalancers(p, where)
	for i, t := range r.Topics {
		p.unique(fmt.Sprintf("%s.topics[%d].name", where, i), "topic", t.Name)
	}
	r.validateAlarms(p, where)
	return p.list
}

// validateAlarms: each alarm named once, 1 to 255 characters, watching
// an image of the region, for 0 to 60 minutes.
func (r RegionSpec) validateAlarms(p *problems, where string) {
	for i, a := range r.Alarms {
		w := fmt.Sprintf("%s.alarms[%d]", where, i)
		p.unique(w+".name", "alarm", a.Name)
		if a.Name == "" || len(a.Name) > 255 {
			p.add("%s.name: must be 1 to 255 characters", w)
		}
		switch {
		case a.AtMinutes != 0 && a.Image != "":
			p.add("%s: image and at_minutes are two kinds of alarm: set one", w)
		case a.AtMinutes < 0 || a.AtMinutes > 10080:
			p.add("%s.at_minutes: %d must be between 1 and 10080 (a week)", w, a.AtMinutes)
		case a.AtMinutes == 0 && !slices.ContainsFunc(r.AMIs, func(m AMISpec) bool { return m.ID == a.Image || m.Name == a.Image }):
			p.add("%s.image: %q is not an AMI of the region (by id or name)", w, a.Image)
		}
		if a.Minutes < 0 || a.Minutes > 60 {
			p.add("%s.minutes: %d must be between 0 and 60", w, a.Minutes)
		}
	}
}

func (r RegionSpec) validateAMIs(p *problems, where string) {
	for i, a := range r.AMIs {
		w := fmt.Sprintf("%s.amis[%d]", where, i)
		p.unique(w+".id", "AMI id", a.ID)
		if !strings.HasPrefix(a.ID, "ami-") {
			p.add("%s.id: %q must start with ami-", w, a.ID)
		}
		if a.Name == "" {
			p.add("%s.name: missing", w)
		}
		if a.Behavior != "" && !a.Behavior.valid() {
			p.add("%s.behavior: %q is not one of %v", w, a.Behavior, Behaviors())
		}
		if a.Architecture != "" && !slices.Contains(architectures, a.Architecture) {
			p.add("%s.architecture: %q is not one of %v", w, a.Architecture, architectures)
		}
		if c := a.CPUPercent; c != nil && !(*c >= 0 && *c <= 100) {
			p.add("%s.cpu_percent: %v must be between 0 and 100", w, *c)
		}
		if e := a.ErrorPercent; !(e >= 0 && e <= 100) {
			p.add("%s.error_percent: %v must be between 0 and 100", w, e)
		}
		if a.Timings != nil {
			p.list = append(p.list, a.Timings.validate(w+".timings")...)
		}
		if b := a.NetworkOutBytes; b != nil && !(*b >= 0 && !math.IsInf(*b, 0)) {
			p.add("%s.network_out_bytes: %v must be a number of bytes, 0 or more", w, *b)
		}
		validateMetrics(p, w, a.Metrics)
	}
}

// validateMetrics lists the problems of an image's custom metrics: each
// named, in a namespace CloudWatch accepts for PutMetricData (none
// starting with "AWS/": CloudWatch API Reference, PutMetricData), with a
// finite value, none twice.
func validateMetrics(p *problems, where string, ms []MetricSpec) {
	seen := map[[2]string]bool{}
	for j, m := range ms {
		w := fmt.Sprintf("%s.metrics[%d]", where, j)
		switch {
		case m.Namespace == "" || m.Name == "":
			p.add("%s: namespace and name are required", w)
		case strings.HasPrefix(m.Namespace, "AWS/"):
			p.add("%s.namespace: %q: custom metrics may not use a namespace starting with AWS/", w, m.Namespace)
		case seen[[2]string{m.Namespace, m.Name}]:
			p.add("%s: %s/%s is declared twice", w, m.Namespace, m.Name)
		}
		seen[[2]string{m.Namespace, m.Name}] = true
		if math.IsNaN(m.Value) || math.IsInf(m.Value, 0) {
			p.add("%s.value: %v must be a finite number", w, m.Value)
		}
	}
}

func (r RegionSpec) validateNetwork(p *problems, where string) {
	for i, s := range r.Subnets {
		w := fmt.Sprintf("%s.subnets[%d]", where, i)
		p.unique(w+".id", "subnet id", s.ID)
		if !strings.HasPrefix(s.ID, "subnet-") {
			p.add("%s.id: %q must start with subnet-", w, s.ID)
		}
		if !strings.HasPrefix(s.AvailabilityZone, r.Name) {
			p.add("%s.availability_zone: %q is not a zone of %s", w, s.AvailabilityZone, r.Name)
		}
	}
	for i, g := range r.SecurityGroups {
		w := fmt.Sprintf("%s.security_groups[%d]", where, i)
		p.unique(w+".id", "security group id", g.ID)
		p.unique(w+".name", "security group name", g.Name)
		if !strings.HasPrefix(g.ID, "sg-") {
			p.add("%s.id: %q must start with sg-", w, g.ID)
		}
	}
}

func (r RegionSpec) validateBalancers(p *problems, where string) {
	zones := func(w string, azs []string) {
		for k, az := range azs {
			if !strings.HasPrefix(az, r.Name) {
				p.add("%s.availability_zones[%d]: %q is not a zone of %s", w, k, az, r.Name)
			}
		}
	}
	for i, e := range r.ELBs {
		w := fmt.Sprintf("%s.elbs[%d]", where, i)
		p.unique(w+".name", "load balancer", e.Name)
		zones(w, e.AvailabilityZones)
		// A classic ELB's connection draining timeout is 1 to 3600 s when
		// enabled (ConnectionDraining, Elastic Load Balancing API Reference).
		if d := e.ConnectionDrainingSeconds; d < 0 || d > 3600 {
			p.add("%s.connection_draining_seconds: %d is not 0 (disabled) to 3600", w, d)
		}
	}
	v2 := map[string]bool{}
	for i, lb := range r.LoadBalancers {
		w := fmt.Sprintf("%s.load_balancers[%d]", where, i)
		p.unique(w+".name", "v2 load balancer", lb.Name)
		v2[lb.Name] = true
		if lb.Type != "" && lb.Type != "application" && lb.Type != "network" {
			p.add("%s.type: %q is not application or network", w, lb.Type)
		}
		zones(w, lb.AvailabilityZones)
	}
	r.validateTargetGroups(p, where, v2)
}

// validateTargetGroups checks the region's target groups; v2 holds the
// names of its v2 load balancers.
func (r RegionSpec) validateTargetGroups(p *problems, where string, v2 map[string]bool) {
	for i, t := range r.TargetGroups {
		w := fmt.Sprintf("%s.target_groups[%d]", where, i)
		p.unique(w+".name", "target group", t.Name)
		if len(t.Name) > 32 {
			p.add("%s.name: %q is longer than 32 characters", w, t.Name)
		}
		for k, lb := range t.LoadBalancers {
			if !v2[lb] {
				p.add("%s.load_balancers[%d]: v2 load balancer %q is not defined in this region", w, k, lb)
			}
		}
		if d := t.DeregistrationDelaySeconds; d != nil && (*d < 0 || *d > 3600) {
			p.add("%s.deregistration_delay_seconds: %d is not 0 to 3600", w, *d)
		}
	}
}

// CopyRegion adds to account a region named to: a copy of its region
// from, whatever names from appears in (availability zones, ARNs)
// renamed, bootstrapped as from is. A second environment for a test of
// a config that moves between regions.
func (s *WorldSpec) CopyRegion(account, from, to string) error {
	for i := range s.Accounts {
		a := &s.Accounts[i]
		if a.ID != account {
			continue
		}
		for _, r := range a.Regions {
			if r.Name != from {
				continue
			}
			b, err := json.Marshal(r)
			if err != nil {
				return err
			}
			var c RegionSpec
			if err := json.Unmarshal(bytes.ReplaceAll(b, []byte(from), []byte(to)), &c); err != nil {
				return err
			}
			a.Regions = append(a.Regions, c)
			for _, bs := range a.Bootstrap {
				if bs.Region == from {
					bs.Region = to
					a.Bootstrap = append(a.Bootstrap, bs)
				}
			}
			return nil
		}
	}
	return fmt.Errorf("world: account %s has no region %s to copy", account, from)
}
