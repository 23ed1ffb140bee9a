package sim

import (
	"cmp"
	"encoding/base64"
	"fmt"
	"math"
	"slices"
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
	lbs     map[string]*loadBalancer // ELBv2, by name
	lbARNs  map[string]*loadBalancer
	tgs     map[string]*targetGroup // by name
	tgARNs  map[string]*targetGroup
	topics  map[string]*topic // by ARN
	// servingPass counts checkServing's passes: a classic load balancer
	// or target group a live group claimed in the pass has its claimedIn
	// set to it.
	servingPass uint64
	// bus is what was put on the default event bus, in order.
	bus []BusEvent
	// impaired maps a zone short of capacity to when it recovers
	// (Faults.ImpairZone).
	impaired map[string]time.Time
	// reclaimed maps an instance type to when its Spot pools have
	// capacity again after EC2 interrupted an instance of it.
	reclaimed map[string]time.Time
	// failLaunches is how many launches still fail with failMessage
	// (Faults.FailLaunches).
	failLaunches int
	failMessage  string

	lts    map[string]*launchTemplate // by name
	ltIDs  map[string]*launchTemplate
	groups map[string]*group
	alarms map[string]*alarm
	// history is every instance ever launched in the region, in launch
	// order (World.Fleet).
	history []*instance
	// retired are the groups that are gone, for World.Fleet;
	// deletedLTs the launch templates deleted, for World.Lookups.
	retired    []*group
	deletedLTs []*launchTemplate
}

type ami struct {
	id, name string
	tags     map[string]string
	behavior Behavior
	arch     string
	cpu      float64
	// errorsBP is the share of requests its instances answer with a 5xx,
	// in basis points.
	errorsBP int
	// metrics are the custom metrics its instances publish, by
	// namespace and name; networkOut its NetworkOut bytes a minute.
	metrics    map[[2]string]float64
	networkOut float64
	timings    Timings
}

type topic struct {
	name string
	tags map[string]string
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
	zones     []string // enabled availability zones, sorted
	created   time.Time
	instances map[string]*instance
	// drain is its connection draining timeout (0: disabled).
	drain time.Duration
	// leaving says, by instance id, when the connection draining of a
	// deregistered instance ends (it is still registered until then).
	leaving map[string]time.Time
	// passesFrom says, by instance id, when an instance registered while
	// running (a group attached to the load balancer again) passes its
	// health check: until then it is OutOfService, registration in
	// progress.
	passesFrom map[string]time.Time
	// serving counts what cuts the traffic it serves (see World.CutConnections).
	serving servingCounter
	// claimedIn is the last checkServing pass a live group claimed it in.
	claimedIn uint64
	// traffic is what it sent its instances.
	traffic traffic
}

// routes reports whether the load balancer routes to inst's zone.
func (lb *classicLB) routes(inst *instance) bool { return slices.Contains(lb.zones, inst.subnet.az) }

// state is a registered instance's state in the load balancer, for
// snapshots: unused when the load balancer does not route to its zone,
// draining while it deregisters, else its health check's answer.
func (lb *classicLB) state(inst *instance, now time.Time) string {
	switch {
	case !lb.routes(inst):
		return "unused"
	case lb.deregistering(inst):
		return "draining"
	}
	return lb.health(inst, now)
}

// deregistering says inst is deregistering with connection draining: the
// load balancer sends it no new request but keeps its connections open
// ("To ensure that a Classic Load Balancer stops sending requests to
// instances that are de-registering", Configure connection draining,
// Classic Load Balancers User Guide).
func (lb *classicLB) deregistering(inst *instance) bool {
	_, leaving := lb.leaving[inst.id]
	return leaving
}

// sends says lb sends inst new requests at now: an instance it routes
// to, not deregistering, passing its health check.
func (lb *classicLB) sends(inst *instance, now time.Time) bool {
	return lb.routes(inst) && !lb.deregistering(inst) && lb.health(inst, now) == "healthy"
}

// health is the load balancer's health check's answer for a registered
// instance at now: "initial" until it passes its checks after its
// registration, else the instance's own (see instance.lbHealth).
func (lb *classicLB) health(inst *instance, now time.Time) string {
	return inst.registeredHealth(lb.passesFrom[inst.id], now)
}

// state is a registered target's state, for snapshots: draining, unused
// (Target.NotInUse), or its health check's answer.
func (tg *targetGroup) state(t *target, now time.Time) string {
	switch {
	case !t.drainingAt.IsZero():
		return "draining"
	case tg.notInUse(t.inst) != "":
		return "unused"
	}
	return t.health(now)
}

// loadBalancer is an ELBv2 load balancer.
type loadBalancer struct {
	name, arn, typ string
	zones          []string // enabled availability zones, sorted
	tags           map[string]string
	created        time.Time
}

type targetGroup struct {
	name, arn string
	port      int32
	// delay is its deregistration delay; nil: the image's
	// deregistration timing (see drainFor).
	delay   *time.Duration
	lbs     []*loadBalancer
	tags    map[string]string
	targets map[string]*target
	serving servingCounter
	// claimedIn is the last checkServing pass a live group claimed it in.
	claimedIn uint64
	// traffic is what each of its load balancers sent it, by load
	// balancer ARN.
	traffic map[string]*traffic
}

// notInUse says why a registered target of tg gets no traffic
// (Target.NotInUse), or "" when a load balancer routes to its zone.
func (tg *targetGroup) notInUse(inst *instance) string {
	if len(tg.lbs) == 0 {
		return "Target group is not configured to receive traffic from the load balancer"
	}
	for _, lb := range tg.lbs {
		if slices.Contains(lb.zones, inst.subnet.az) {
			return ""
		}
	}
	return "Target is in an Availability Zone that is not enabled for the load balancer"
}

type target struct {
	inst       *instance
	drainingAt time.Time
	// passesFrom is when a target registered while running (a group
	// attached to the target group again) passes its health checks:
	// until then it is initial.
	passesFrom time.Time
}

// health is the target group's health check's answer for t at now:
// "initial" until it passes its checks after its registration, else the
// instance's own (see instance.lbHealth).
func (t *target) health(now time.Time) string { return t.inst.registeredHealth(t.passesFrom, now) }

type launchTemplate struct {
	id, name  string
	created   time.Time
	tags      []ec2types.Tag
	versions  []*ec2types.RequestLaunchTemplateData
	deflt     int64
	token     string
	createdBy string
	vis       visibility
}

type alarm struct {
	input   cloudwatch.PutMetricAlarmInput
	arn     string
	updated time.Time
	tags    []cwtypes.Tag
	state   alarmState
}

func (w *World) newRegion(a *account, rs RegionSpec) *region {
	r := &region{
		w: w, account: a, name: rs.Name,
		amis: map[string]*ami{}, subnets: map[string]*subnet{}, sgs: map[string]*securityGroup{},
		elbs: map[string]*classicLB{}, lbs: map[string]*loadBalancer{}, lbARNs: map[string]*loadBalancer{},
		tgs: map[string]*targetGroup{}, tgARNs: map[string]*targetGroup{},
		topics: map[string]*topic{}, lts: map[string]*launchTemplate{}, ltIDs: map[string]*launchTemplate{},
		groups: map[string]*group{}, alarms: map[string]*alarm{}, impaired: map[string]time.Time{}, reclaimed: map[string]time.Time{},
	}
	for _, s := range rs.AMIs {
		r.amis[s.ID] = w.newAMI(s)
	}
	r.addNetwork(rs)
	r.addBalancers(rs)
	for _, s := range rs.Topics {
		r.topics[r.topicARN(s.Name)] = &topic{name: s.Name, tags: copyTags(s.Tags)}
	}
	for _, s := range rs.Alarms {
		r.addAlarm(s)
	}
	return r
}

// newAMI is the image of s with its defaults: named by a Name tag, Healthy,
// x86_64, DefaultCPUPercent, the world's timings.
func (w *World) newAMI(s AMISpec) *ami {
	tags := copyTags(s.Tags)
	if _, ok := tags["Name"]; !ok {
		tags["Name"] = s.Name
	}
	b := s.Behavior
	if b == "" {
		b = Healthy
	}
	arch := s.Architecture
	if arch == "" {
		arch = "x86_64"
	}
	cpu := DefaultCPUPercent
	if s.CPUPercent != nil {
		cpu = *s.CPUPercent
	}
	metrics := map[[2]string]float64{}
	for _, m := range s.Metrics {
		metrics[[2]string{m.Namespace, m.Name}] = m.Value
	}
	networkOut := float64(DefaultNetworkOutBytes)
	if s.NetworkOutBytes != nil {
		networkOut = *s.NetworkOutBytes
	}
	return &ami{id: s.ID, name: s.Name, tags: tags, behavior: b, arch: arch, cpu: cpu, errorsBP: int(math.Round(s.ErrorPercent * 100)),
		metrics: metrics, networkOut: networkOut, timings: w.timings.over(s.Timings)}
}

// defaultVPC is the VPC of a subnet or security group whose spec names
// none.
const defaultVPC = "vpc-00000000000000001"

// addNetwork adds the region's subnets and security groups.
func (r *region) addNetwork(rs RegionSpec) {
	for _, s := range rs.Subnets {
		r.subnets[s.ID] = &subnet{id: s.ID, az: s.AvailabilityZone, vpc: cmp.Or(s.VPCID, defaultVPC), tags: copyTags(s.Tags)}
	}
	for _, s := range rs.SecurityGroups {
		r.sgs[s.ID] = &securityGroup{id: s.ID, name: s.Name, vpc: cmp.Or(s.VPCID, defaultVPC), tags: copyTags(s.Tags)}
	}
}

// addBalancers adds the region's classic load balancers, v2 load
// balancers and target groups. A load balancer that names no zones routes
// to every zone of the region's subnets.
func (r *region) addBalancers(rs RegionSpec) {
	var allZones []string
	for _, s := range rs.Subnets {
		if !slices.Contains(allZones, s.AvailabilityZone) {
			allZones = append(allZones, s.AvailabilityZone)
		}
	}
	slices.Sort(allZones)
	zonesOr := func(azs []string) []string {
		if len(azs) == 0 {
			return slices.Clone(allZones)
		}
		out := slices.Clone(azs)
		slices.Sort(out)
		return slices.Compact(out)
	}
	a, now := r.account, r.w.now
	for _, s := range rs.ELBs {
		r.elbs[s.Name] = &classicLB{name: s.Name, tags: copyTags(s.Tags), zones: zonesOr(s.AvailabilityZones), created: now,
			instances: map[string]*instance{}, leaving: map[string]time.Time{}, passesFrom: map[string]time.Time{}, drain: time.Duration(s.ConnectionDrainingSeconds) * time.Second}
	}
	for _, s := range rs.LoadBalancers {
		typ := cmp.Or(s.Type, "application")
		kind := "app"
		if typ == "network" {
			kind = "net"
		}
		arn := fmt.Sprintf("arn:aws:elasticloadbalancing:%s:%s:loadbalancer/%s/%s/%016x", rs.Name, a.id, kind, s.Name, seed(a.id+rs.Name, "lb/"+s.Name))
		lb := &loadBalancer{name: s.Name, arn: arn, typ: typ, zones: zonesOr(s.AvailabilityZones), tags: copyTags(s.Tags), created: now}
		r.lbs[s.Name] = lb
		r.lbARNs[arn] = lb
	}
	for _, s := range rs.TargetGroups {
		arn := fmt.Sprintf("arn:aws:elasticloadbalancing:%s:%s:targetgroup/%s/%016x", rs.Name, a.id, s.Name, seed(a.id+rs.Name, s.Name))
		tg := &targetGroup{name: s.Name, arn: arn, port: cmp.Or(s.Port, 80), tags: copyTags(s.Tags), targets: map[string]*target{}, traffic: map[string]*traffic{}}
		if d := s.DeregistrationDelaySeconds; d != nil {
			delay := time.Duration(*d) * time.Second
			tg.delay = &delay
		}
		for _, n := range s.LoadBalancers {
			tg.lbs = append(tg.lbs, r.lbs[n])
		}
		r.tgs[s.Name] = tg
		r.tgARNs[arn] = tg
	}
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
	ltVersion    int64 // the launch template version it was launched from
	behavior     Behavior
	cpu          float64
	errorsBP     int // the share of requests it answers with a 5xx, in basis points
	launched     time.Time
	// detailed says EC2 publishes its metrics every minute (its launch
	// template enables detailed monitoring), else every five.
	detailed    bool
	bootAt      time.Time
	healthyAt   time.Time // when it passes LB health checks (never for never-healthy)
	terminating time.Time // zero while alive
	gone        time.Time // when it left its group; zero while in it
	// goneDue is when it is due to leave its group (a ForceDelete brings
	// it forward); hookFrom and hookUntil bound its Terminating:Wait
	// (zero: no termination hook wait).
	goneDue             time.Time
	hookFrom, hookUntil time.Time
	// workerDone is when a worker completes its own termination action
	// (zero: it is no worker, or not terminating).
	workerDone time.Time
	// launch are its launching lifecycle actions (nil: its group has no
	// launching hook), booted when its own boot is over, proceedAt when
	// its last action continued (Pending:Proceed until bootAt).
	launch         []*launchAction
	booted         time.Time
	proceedAt      time.Time
	launchActivity *activity
	// onReady are what waits on it coming into service (atReady) while
	// its launching actions are pending.
	onReady []readyWait
	lbs     []*classicLB
	tgs     []*targetGroup
	// protected is its scale-in protection (ProtectedFromScaleIn);
	// standby says it is in Standby (EnterStandby).
	protected, standby bool
	// weight is what it counts toward its group's capacity (its
	// override's WeightedCapacity; 0 counts 1); spot says it is a Spot
	// instance; interruptAt is when EC2 interrupts it (zero: never);
	// atRisk says Capacity Rebalancing is replacing it.
	weight       int
	spot, atRisk bool
	interruptAt  time.Time
}

func (i *instance) dying(now time.Time) bool {
	return !i.terminating.IsZero() && !now.Before(i.terminating)
}

// lifecycle is the instance's Auto Scaling lifecycle state at now.
func (i *instance) lifecycle(now time.Time) astypes.LifecycleState {
	switch {
	case i.dying(now) && !i.hookFrom.IsZero():
		switch {
		case now.Before(i.hookFrom):
			return astypes.LifecycleStateTerminating
		case now.Before(i.hookUntil):
			return astypes.LifecycleStateTerminatingWait
		}
		return astypes.LifecycleStateTerminatingProceed
	case i.dying(now):
		if i.g.termHook {
			return astypes.LifecycleStateTerminatingWait
		}
		return astypes.LifecycleStateTerminating
	case now.Before(i.bootAt) && i.launch != nil:
		if i.proceedAt.IsZero() {
			return astypes.LifecycleStatePendingWait
		}
		return astypes.LifecycleStatePendingProceed
	case now.Before(i.bootAt):
		return astypes.LifecycleStatePending
	case i.standby:
		return astypes.LifecycleStateStandby
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
// "initial" (still registering or checking) or "unhealthy". Whether the
// load balancer routes to the instance's zone at all is the load
// balancer's to say (classicLB.routes, targetGroup.notInUse).
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

// registeredHealth is what a load balancer that registered i while it
// ran says at now: "initial" before passesFrom (its checks after the
// registration not passed yet), else lbHealth.
func (i *instance) registeredHealth(passesFrom, now time.Time) string {
	if h := i.lbHealth(now); h != "healthy" || !now.Before(passesFrom) {
		return h
	}
	return "initial"
}

// behaviorOf decides how an instance launched from image with user data
// behaves: the user data marker wins over the AMI's behavior.
func behaviorOf(a *ami, userData string) Behavior {
	b := a.behavior
	for _, line := range strings.Split(decodeUserData(userData), "\n") {
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, UserDataMarker); ok {
			if m := Behavior(strings.TrimSpace(rest)); m.valid() {
				b = m
			}
		}
	}
	return b
}

// decodeUserData is a launch template's base64 user data decoded ("" when
// it is not base64).
func decodeUserData(userData string) string {
	raw, err := base64.StdEncoding.DecodeString(userData)
	if err != nil {
		return ""
	}
	return string(raw)
}

// InsufficientCapacityMessage is the StatusMessage of a launch that failed
// because a zone is short of capacity (EC2's InsufficientInstanceCapacity).
func InsufficientCapacityMessage(instanceType, zone string) string {
	return fmt.Sprintf("We currently do not have sufficient %s capacity in the Availability Zone you requested (%s). "+
		"Our system will be working on provisioning additional capacity. Launching EC2 instance failed.", instanceType, zone)
}

// launchRetry is how long a group waits after a failed launch before it
// tries again to reach its desired capacity. AWS retries failed launches
// with a backoff of its own that it does not document; a fixed minute
// keeps the simulation deterministic.
const launchRetry = time.Minute

// stamp formats a time as Auto Scaling's activity causes do.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05Z") }

// fill launches instances until g runs its desired capacity, unless the
// group is being deleted or its Launch process is suspended. why begins
// each launch activity's cause ("At ... a user request created an
// AutoScalingGroup ..."). A launch that fails records a Failed activity
// and the group tries again launchRetry later.
func (r *region) fill(g *group, t time.Time, why string) {
	if g.deleting || g.suspended[ProcessLaunch] {
		return
	}
	for n := g.live(); n < int(g.desired); n = g.live() {
		cause := fmt.Sprintf("%sAt %s an instance was started in response to a difference between desired and actual capacity, increasing the capacity from %d to %d.",
			why, stamp(t), n, g.desired)
		if !r.launch(g, t, cause) {
			r.retryFill(g, t)
			return
		}
	}
}

// retryFill schedules one more fill of g launchRetry after t, unless one
// is already due.
func (r *region) retryFill(g *group, t time.Time) {
	if !g.retryAt.IsZero() {
		return
	}
	g.retryAt = t.Add(launchRetry)
	r.w.at(g.retryAt, func(at time.Time) {
		g.retryAt = time.Time{}
		if r.groups[g.name] == g {
			r.fill(g, at, "")
		}
	})
}

// placement returns the subnets a launch of g may use, best first: the
// zones with the fewest live instances of the group first (Auto Scaling
// keeps a group balanced across its zones), ties in the group's subnet
// order rotated by its launch count.
func (r *region) placement(g *group) []*subnet {
	count := map[string]int{}
	for _, i := range g.instances {
		if i.terminating.IsZero() {
			count[i.subnet.az]++
		}
	}
	n := len(g.subnets)
	order := make([]*subnet, n)
	for k := range n {
		order[k] = g.subnets[(g.nextSubnet+k)%n]
	}
	slices.SortStableFunc(order, func(a, b *subnet) int { return count[a.az] - count[b.az] })
	return order
}

// launch starts one instance of g at t in the best zone that has
// capacity, or records why it cannot: a Failed launch activity with
// EC2's message (the image's architecture does not match the instance
// type, a security group is not in the subnet's VPC, the instance
// profile does not exist, no zone of the group has capacity, or a fault).
// It reports whether an instance was launched.
func (r *region) launch(g *group, t time.Time, cause string) bool {
	w := r.w
	version := g.launchVersion()
	data := g.lt.versions[version-1]
	a := r.amis[deref(data.ImageId)]
	fail := func(sn *subnet, msg string) bool {
		g.record(&activity{
			id: w.newActivityID(), description: "Launching a new EC2 instance.  Status Reason: " + msg,
			cause: cause, details: activityDetails(sn), start: t, end: t, failed: true, message: msg,
		})
		return false
	}
	pick, ok := r.pick(g, data, t)
	if !ok {
		return fail(r.placement(g)[0], NoSpotCapacityMessage)
	}
	sn := r.zoneFor(g, pick.instanceType, t, fail)
	switch {
	case sn == nil:
		return false
	case a == nil:
		return fail(sn, fmt.Sprintf("The image id '[%s]' does not exist. Launching EC2 instance failed.", deref(data.ImageId)))
	case r.failLaunches > 0:
		r.failLaunches--
		return fail(sn, r.failMessage)
	}
	if msg := r.launchProblem(data, pick.instanceType, a, sn); msg != "" {
		return fail(sn, msg)
	}
	g.nextSubnet++
	id := w.newID("i-", 17)
	inst := &instance{
		id: id, g: g, subnet: sn, imageID: a.id, instanceType: pick.instanceType, weight: pick.weight, spot: pick.spot,
		behavior: behaviorOf(a, deref(data.UserData)), cpu: a.cpu, errorsBP: a.errorsBP, launched: t, ltVersion: version,
		protected: g.newProtected, detailed: data.Monitoring != nil && deref(data.Monitoring.Enabled),
	}
	tm := a.timings
	boot := tm.Boot
	if inst.behavior == SlowBoot {
		boot = tm.SlowBoot
	}
	booted := t.Add(w.draw(*boot, id, "boot"))
	if hooks := g.launchHooks(); len(hooks) > 0 {
		r.holdLaunch(inst, hooks, t, booted, deref(data.UserData))
	}
	g.instances = append(g.instances, inst)
	r.history = append(r.history, inst)
	for _, lb := range g.lbs {
		lb.instances[id] = inst
		inst.lbs = append(inst.lbs, lb)
	}
	for _, tg := range g.tgs {
		tg.targets[id] = &target{inst: inst}
		inst.tgs = append(inst.tgs, tg)
	}
	inst.launchActivity = &activity{
		id: w.newActivityID(), description: "Launching a new EC2 instance: " + id, cause: cause,
		details: activityDetails(sn), start: t, end: later(booted, inst.bootAt), // in progress while a hook holds it
	}
	g.record(inst.launchActivity)
	if inst.launch == nil {
		r.inService(inst, booted)
	}
	return true
}

// inService puts inst in service at t (its launch activity ends then):
// it passes its health checks after its health time, and a crash-loop or
// crash-after-healthy instance dies after its time.
func (r *region) inService(inst *instance, t time.Time) {
	tm := r.timingsOf(inst)
	inst.bootAt = t
	inst.healthyAt = t.Add(r.w.draw(*tm.Health, inst.id, "health"))
	inst.launchActivity.end = t
	var dieAt time.Time
	switch inst.behavior {
	case CrashLoop:
		dieAt = inst.bootAt.Add(tm.CrashAfter.pick(seed(inst.id, "crash")))
	case CrashAfterHealthy:
		dieAt = inst.healthyAt.Add(tm.HealthyFor.pick(seed(inst.id, "crash")))
	}
	if !dieAt.IsZero() {
		r.w.at(dieAt, func(at time.Time) {
			r.terminate(inst, at, true, fmt.Sprintf("At %s an instance was taken out of service in response to an EC2 instance status checks failure.", stamp(at)))
		})
	}
}

// zoneFor is the subnet a launch of instanceType in g at t goes to: a
// zone short of capacity fails the launch there (fail records a Failed
// activity) and the group tries its next zone, as Auto Scaling does; nil
// when none has capacity.
func (r *region) zoneFor(g *group, instanceType string, t time.Time, fail func(*subnet, string) bool) *subnet {
	for _, c := range r.placement(g) {
		if until, ok := r.impaired[c.az]; ok && t.Before(until) {
			fail(c, InsufficientCapacityMessage(instanceType, c.az))
			continue
		}
		return c
	}
	return nil
}

// launchProblem is EC2's reason an instance of data cannot launch in sn
// ("" when it can): what RunInstances checks that CreateLaunchTemplate
// does not.
func (r *region) launchProblem(data *ec2types.RequestLaunchTemplateData, instanceType string, a *ami, sn *subnet) string {
	if arch := instanceTypeArch(instanceType); arch != nil && !slices.Contains(arch, a.arch) {
		return fmt.Sprintf("The architecture '%s' of the specified instance type does not match the architecture '%s' of the specified AMI. "+
			"Specify an instance type and an AMI that have matching architectures, and try again. Launching EC2 instance failed.", arch[len(arch)-1], a.arch)
	}
	for _, id := range data.SecurityGroupIds {
		sg := r.sgs[id]
		switch {
		case sg == nil:
			return fmt.Sprintf("The security group '%s' does not exist in VPC '%s'. Launching EC2 instance failed.", id, sn.vpc)
		case sg.vpc != sn.vpc:
			return fmt.Sprintf("Security group %s and subnet %s belong to different networks. Launching EC2 instance failed.", id, sn.id)
		}
	}
	if p := data.IamInstanceProfile; p != nil {
		name := deref(p.Name)
		if name == "" {
			name = deref(p.Arn)[strings.LastIndex(deref(p.Arn), "/")+1:]
		}
		if r.account.profiles[name] == nil {
			return fmt.Sprintf("Value (%s) for parameter iamInstanceProfile.name is invalid. Invalid IAM Instance Profile name. Launching EC2 instance failed.", name)
		}
	}
	return ""
}

// terminate starts terminating inst at t: it leaves its load balancers,
// drains from its target groups and is gone after the terminate time. With
// replace, the group launches a replacement to stay at desired capacity
// (unless ReplaceUnhealthy or Launch is suspended). cause is the
// activity's.
func (r *region) terminate(inst *instance, t time.Time, replace bool, cause string) {
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
			w.at(t.Add(r.drainFor(tg, inst)), func(time.Time) {
				if tg.targets[inst.id] == tr {
					delete(tg.targets, inst.id)
				}
			})
		}
	}
	g := inst.g
	goneAt := t.Add(tm.Terminate.pick(seed(inst.id, "terminate")))
	g.record(&activity{
		id: w.newActivityID(), description: "Terminating EC2 instance: " + inst.id, cause: cause,
		details: activityDetails(inst.subnet), start: t, end: goneAt,
	})
	r.goneAt(inst, goneAt)
	if replace && !g.suspended[ProcessReplaceUnhealthy] {
		r.fill(g, t, "")
	}
}

// goneAt schedules inst to leave its group at t, unless it is due sooner;
// a later event for an earlier due time does nothing.
func (r *region) goneAt(inst *instance, t time.Time) {
	if !inst.goneDue.IsZero() && !t.Before(inst.goneDue) {
		return
	}
	inst.goneDue = t
	r.w.at(t, func(at time.Time) {
		if inst.gone.IsZero() && at.Equal(inst.goneDue) {
			r.gone(inst, at)
		}
	})
}

// gone removes a terminated instance from its group.
func (r *region) gone(inst *instance, t time.Time) {
	g := inst.g
	inst.gone = t
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
	r.w.at(t.Add(d), func(at time.Time) {
		if r.groups[g.name] == g {
			delete(r.groups, g.name)
			g.goneAt = at
			r.retired = append(r.retired, g)
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
