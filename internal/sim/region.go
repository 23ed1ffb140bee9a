package sim

import (
	"encoding/base64"
	"fmt"
	"sort"
	"strings"
	"time"

	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// region is the state of one account-region.
type region struct {
	w       *World
	account *account
	name    string

	amis    map[string]*ami
	subnets map[string]*subnet
	sgs     map[string]*securityGroup
	elbs    map[string]*classicLB
	tgs     map[string]*targetGroup // by name
	tgARNs  map[string]*targetGroup
	topics  map[string]string // ARN -> name

	lts    map[string]*launchTemplate // by name
	ltIDs  map[string]*launchTemplate
	groups map[string]*group
	hidden []*group
	alarms map[string]*alarm
}

type ami struct {
	id, name string
	tags     map[string]string
	behavior Behavior
	timings  Timings
}

type subnet struct {
	id, az, vpc string
	tags        map[string]string
}

type securityGroup struct {
	id, name, vpc string
	tags          map[string]string
}

type classicLB struct {
	name      string
	tags      map[string]string
	created   time.Time
	instances map[string]*instance
}

type targetGroup struct {
	name, arn string
	port      int32
	tags      map[string]string
	targets   map[string]*target
}

type target struct {
	inst       *instance
	drainingAt time.Time
}

type launchTemplate struct {
	id, name  string
	created   time.Time
	tags      []ec2types.Tag
	versions  []*ec2types.RequestLaunchTemplateData
	deflt     int64
	token     string
	createdBy string
}

type alarm struct {
	input   cloudwatch.PutMetricAlarmInput
	arn     string
	updated time.Time
	tags    []cwtypes.Tag
}

func (w *World) newRegion(a *account, rs RegionSpec) *region {
	r := &region{
		w: w, account: a, name: rs.Name,
		amis: map[string]*ami{}, subnets: map[string]*subnet{}, sgs: map[string]*securityGroup{},
		elbs: map[string]*classicLB{}, tgs: map[string]*targetGroup{}, tgARNs: map[string]*targetGroup{},
		topics: map[string]string{}, lts: map[string]*launchTemplate{}, ltIDs: map[string]*launchTemplate{},
		groups: map[string]*group{}, alarms: map[string]*alarm{},
	}
	for _, s := range rs.AMIs {
		tags := copyTags(s.Tags)
		if _, ok := tags["Name"]; !ok {
			tags["Name"] = s.Name
		}
		b := s.Behavior
		if b == "" {
			b = Healthy
		}
		r.amis[s.ID] = &ami{id: s.ID, name: s.Name, tags: tags, behavior: b, timings: w.timings.over(s.Timings)}
	}
	for _, s := range rs.Subnets {
		vpc := s.VPCID
		if vpc == "" {
			vpc = "vpc-00000000000000001"
		}
		r.subnets[s.ID] = &subnet{id: s.ID, az: s.AvailabilityZone, vpc: vpc, tags: copyTags(s.Tags)}
	}
	for _, s := range rs.SecurityGroups {
		vpc := s.VPCID
		if vpc == "" {
			vpc = "vpc-00000000000000001"
		}
		r.sgs[s.ID] = &securityGroup{id: s.ID, name: s.Name, vpc: vpc, tags: copyTags(s.Tags)}
	}
	for _, s := range rs.ELBs {
		r.elbs[s.Name] = &classicLB{name: s.Name, tags: copyTags(s.Tags), created: w.now, instances: map[string]*instance{}}
	}
	for _, s := range rs.TargetGroups {
		port := s.Port
		if port == 0 {
			port = 80
		}
		arn := fmt.Sprintf("arn:aws:elasticloadbalancing:%s:%s:targetgroup/%s/%016x", rs.Name, a.id, s.Name, seed(a.id+rs.Name, s.Name))
		tg := &targetGroup{name: s.Name, arn: arn, port: port, tags: copyTags(s.Tags), targets: map[string]*target{}}
		r.tgs[s.Name] = tg
		r.tgARNs[arn] = tg
	}
	for _, s := range rs.Topics {
		r.topics[r.topicARN(s.Name)] = s.Name
	}
	return r
}

func (r *region) topicARN(name string) string {
	return fmt.Sprintf("arn:aws:sns:%s:%s:%s", r.name, r.account.id, name)
}

func copyTags(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// instance is one EC2 instance launched by an ASG.
type instance struct {
	id           string
	g            *group
	subnet       *subnet
	imageID      string
	instanceType string
	behavior     Behavior
	launched     time.Time
	bootAt       time.Time
	healthyAt    time.Time // when it passes LB health checks (never for never-healthy)
	terminating  time.Time // zero while alive
	lbs          []*classicLB
	tgs          []*targetGroup
}

func (i *instance) dying(now time.Time) bool {
	return !i.terminating.IsZero() && !now.Before(i.terminating)
}

// lifecycle is the instance's Auto Scaling lifecycle state at now.
func (i *instance) lifecycle(now time.Time) astypes.LifecycleState {
	switch {
	case i.dying(now):
		if i.g.termHook {
			return astypes.LifecycleStateTerminatingWait
		}
		return astypes.LifecycleStateTerminating
	case now.Before(i.bootAt):
		return astypes.LifecycleStatePending
	}
	return astypes.LifecycleStateInService
}

// healthStatus is the instance's Auto Scaling health status at now.
func (i *instance) healthStatus(now time.Time) string {
	if i.dying(now) {
		return "Unhealthy"
	}
	return "Healthy"
}

// lbHealth is what a load balancer health check says at now: "healthy",
// "initial" (still registering or checking) or "unhealthy".
func (i *instance) lbHealth(now time.Time) string {
	switch {
	case i.dying(now):
		return "unhealthy"
	case now.Before(i.healthyAt):
		return "initial"
	case i.behavior == NeverHealthy:
		return "unhealthy"
	}
	return "healthy"
}

// behaviorOf decides how an instance launched from image with user data
// behaves: the user data marker wins over the AMI's behavior.
func behaviorOf(a *ami, userData string) Behavior {
	b := a.behavior
	raw, err := base64.StdEncoding.DecodeString(userData)
	if err != nil {
		return b
	}
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, UserDataMarker); ok {
			if m := Behavior(strings.TrimSpace(rest)); m.valid() {
				b = m
			}
		}
	}
	return b
}

// launch starts one instance of g at t and schedules its life.
func (r *region) launch(g *group, t time.Time) {
	w := r.w
	data := g.lt.versions[g.ltVersion-1]
	a := r.amis[deref(data.ImageId)]
	id := w.newID("i-", 17)
	sn := g.subnets[g.nextSubnet%len(g.subnets)]
	g.nextSubnet++
	inst := &instance{
		id: id, g: g, subnet: sn, imageID: a.id, instanceType: string(data.InstanceType),
		behavior: behaviorOf(a, deref(data.UserData)), launched: t,
	}
	tm := a.timings
	boot := tm.Boot
	if inst.behavior == SlowBoot {
		boot = tm.SlowBoot
	}
	inst.bootAt = t.Add(boot.pick(seed(id, "boot")))
	inst.healthyAt = inst.bootAt.Add(tm.Health.pick(seed(id, "health")))
	g.instances = append(g.instances, inst)
	for _, lb := range g.lbs {
		lb.instances[id] = inst
		inst.lbs = append(inst.lbs, lb)
	}
	for _, tg := range g.tgs {
		tg.targets[id] = &target{inst: inst}
		inst.tgs = append(inst.tgs, tg)
	}
	if inst.behavior == CrashLoop {
		dieAt := inst.bootAt.Add(tm.CrashAfter.pick(seed(id, "crash")))
		w.at(dieAt, func(at time.Time) { r.terminate(inst, at, true) })
	}
}

// terminate starts terminating inst at t: it leaves its load balancers,
// drains from its target groups and is gone after the terminate time. With
// replace, the group launches a replacement to stay at desired capacity.
func (r *region) terminate(inst *instance, t time.Time, replace bool) {
	if !inst.terminating.IsZero() {
		return
	}
	w := r.w
	inst.terminating = t
	a := r.amis[inst.imageID]
	tm := w.timings
	if a != nil {
		tm = a.timings
	}
	for _, lb := range inst.lbs {
		delete(lb.instances, inst.id)
	}
	for _, tg := range inst.tgs {
		if tr := tg.targets[inst.id]; tr != nil && tr.drainingAt.IsZero() {
			tr.drainingAt = t
			w.at(t.Add(tm.Deregistration.pick(seed(inst.id, "drain"))), func(time.Time) {
				if tg.targets[inst.id] == tr {
					delete(tg.targets, inst.id)
				}
			})
		}
	}
	g := inst.g
	w.at(t.Add(tm.Terminate.pick(seed(inst.id, "terminate"))), func(at time.Time) { r.gone(inst, at) })
	if replace && !g.deleting && g.live() < int(g.desired) {
		r.launch(g, t)
	}
}

// gone removes a terminated instance from its group.
func (r *region) gone(inst *instance, t time.Time) {
	g := inst.g
	for k, i := range g.instances {
		if i == inst {
			g.instances = append(g.instances[:k], g.instances[k+1:]...)
			break
		}
	}
	if g.deleting && len(g.instances) == 0 {
		r.scheduleGroupGone(g, t)
	}
}

func (r *region) scheduleGroupGone(g *group, t time.Time) {
	d := r.w.timings.GroupDelete.pick(seed(g.name, "delete"))
	r.w.at(t.Add(d), func(time.Time) {
		if r.groups[g.name] == g {
			delete(r.groups, g.name)
		}
	})
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func sortedInstances(m map[string]*instance) []*instance {
	out := make([]*instance, 0, len(m))
	for _, i := range m {
		out = append(out, i)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].id < out[b].id })
	return out
}
