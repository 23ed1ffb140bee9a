package deployer

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"

	"github.com/ferryhq/ferry/internal/balancers"
	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/fanout"
	"github.com/ferryhq/ferry/internal/fleet"
	"github.com/ferryhq/ferry/internal/health"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/naming/tags"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/resources"
	"github.com/ferryhq/ferry/internal/tuning"
	"github.com/ferryhq/ferry/internal/tuning/pacing"
)

// activityReads says when healthReport reads a group's scaling
// activities.
type activityReads bool

// The activity reads.
const (
	// activitiesOnChange reads them when something suggests an instance
	// terminated or failed to launch since the previous check: the
	// group's instances changed, one is terminating, or it is short of
	// its launch count. A health check's cost then does not grow with a
	// group's history.
	activitiesOnChange activityReads = false
	// activitiesExact reads them on change too, for every group whose
	// activities were never read (an instance replaced before the first
	// check changed nothing a check saw), and for a group with an
	// activity in progress or begun since their last read
	// (fleet.ActivitySince: one record; an instance launched and
	// terminated between two checks, the group scaled out then in,
	// changes nothing a check sees either): the exact count of its
	// terminations, for the swap's gate.
	activitiesExact activityReads = true
)

// balancerReads says whose load balancers healthReport asks.
type balancerReads bool

// The balancer reads.
const (
	// balancersAll asks the load balancers of every new group with an
	// instance in service.
	balancersAll balancerReads = true
	// balancersUnsettled leaves out those of a service holding its
	// target mid-window, or confirmed stable, with the same instances as
	// at the previous check, none terminating (holding): its healthy
	// count is carried on. The first check at or after the window's end
	// asks them again, so a service is never judged stable on a count
	// carried on (Confirmed); a termination or a replaced instance still
	// shows in its group. A check at the end of the last window then asks
	// only the services whose windows ended since the previous check.
	balancersUnsettled balancerReads = false
)

// healthReport merges the views of every new group and of the classic
// load balancers and target groups the release names for its service
// (namedBalancers: not those the group is attached to now, which an
// outside detach changes; both described side by side) into one report
// per service at now, and
// carries each service's stability window on from the State's last
// report (see health.Track; a window it opens starts once its reads are
// done, after now). A new group AWS does not show is reported
// Missing. It reads a group's scaling activities (how many of its
// instances terminated, whether a launch failed for good) as reads says,
// a group at a time (readActivities), and its load balancers as lbs
// says. It also says which of the named
// load balancers a new group's instances in service are not registered
// with (judgement.outOf).
//
// The groups known (as a describe or listing moments before showed them;
// nil for none) are not described again (fleet.DescribeKnown).
func (d *Deployer) healthReport(ctx context.Context, c *cloud.Clients, st *execution.State, r *release.Release, now time.Time, reads activityReads, lbs balancerReads, known map[string]asgtypes.AutoScalingGroup) (judgement, error) {
	services, names := r.ServiceNames(), releaseGroups(r)
	var (
		groups map[string]asgtypes.AutoScalingGroup
		named  namedSet
	)
	// The groups and the target groups the release names, side by side:
	// neither read needs the other.
	err := fanout.Each(ctx, 2, 2, func(ctx context.Context, i int) error {
		var err error
		if i == 0 {
			groups, err = fleet.DescribeKnown(ctx, c.AutoScaling, names, known)
		} else {
			named, err = namedBalancers(ctx, c, r)
		}
		return err
	})
	if err != nil {
		return judgement{}, err
	}
	capacities, err := d.capacities(ctx, c, st, r)
	if err != nil {
		return judgement{}, err
	}
	ask, held := toAsk(st, services, names, groups, capacities, named, now, lbs)
	views, err := named.read(ctx, c, ask)
	if err != nil {
		return judgement{}, err
	}
	j := judgement{report: map[string]execution.ServiceHealth{}, outOf: map[string][]balancerRef{}, groups: map[string]string{}, reads: readsOf(named, ask)}
	mine := map[string]asgtypes.AutoScalingGroup{}
	for i, svc := range services {
		if g, found := groups[names[i]]; found && ownerOf(st).Made(tags.FromASG(g.Tags), st.ReleaseID) {
			mine[svc] = g
		}
	}
	acts, err := readActivities(ctx, c.AutoScaling, r, services, mine, capacities, reads)
	if err != nil {
		return judgement{}, err
	}
	// A window this report opens starts once its reads are done, not at
	// now, before them: AWS answered them in the meantime, and a window
	// stamped at now would count the reads' time (seconds, throttled)
	// as held. Stability is judged at now all the same: a window is never
	// shorter than its reads said.
	seen := d.now()
	for i, svc := range services {
		prev := capacities[svc]
		g, found := mine[svc]
		if !found {
			cur := prev
			cur.Launched, cur.Healthy, cur.Terminating, cur.Missing = 0, 0, 0, true
			j.report[svc] = health.Track(prev, cur, seen)
			continue
		}
		cur, err := assess(g, prev, named[svc], views, acts[svc], held[svc])
		if err != nil {
			return judgement{}, err
		}
		rep := health.Track(prev, cur, seen)
		// Its healthy count is this check's unless held; a held one is
		// confirmed only when carried on from a confirmed one.
		rep.Confirmed = health.Stable(rep, now) && (!held[svc] || prev.Confirmed)
		j.report[svc] = rep
		j.groups[svc] = names[i]
		if ask[svc] {
			j.outOf[svc] = named[svc].unregistered(g, views)
		}
	}
	j.dark = named.dark(groups, views)
	return j, nil
}

// releaseGroups are the names of release r's groups, in the order of its
// services (ServiceNames).
func releaseGroups(r *release.Release) []string {
	services := r.ServiceNames()
	names := make([]string, len(services))
	for i, svc := range services {
		names[i] = naming.GroupName(r.ProjectName, r.ConfigName, svc, r.ReleaseID)
	}
	return names
}

// toAsk says, by service, whose named load balancers a check asks (ask)
// and which services hold their target with their counts carried on
// (held, see holding): those of new groups this release made, with an
// instance in service (any, with balancersAll), but those held. With
// balancersUnsettled, a check makes at most readBudget load balancer
// reads (servedBy.reads: tuning.BalancerReadsPerCheck, more while its
// reads before left the account's Describe bucket full enough):
// those at their target first (to confirm them), then the nearest theirs
// (overBudget); the others' counts are carried on to a later check
// (below their target, never judged healthy on a carried count; at it,
// never confirmed stable on one). A check's load balancer reads then
// stay within an account's Describe refill at the checks' pace, where a
// throttled check would learn nothing and back off, and its cost does
// not grow with instances.
func toAsk(st *execution.State, services, names []string, groups map[string]asgtypes.AutoScalingGroup, capacities map[string]execution.ServiceHealth, named namedSet, now time.Time, lbs balancerReads) (ask, held map[string]bool) {
	ask, held = map[string]bool{}, map[string]bool{}
	var asked []string
	reads := 0
	for i, svc := range services {
		g, found := groups[names[i]]
		held[svc] = found && lbs == balancersUnsettled && holding(capacities[svc], g, now)
		ask[svc] = found && !held[svc] && ownerOf(st).Made(tags.FromASG(g.Tags), st.ReleaseID) && (lbs == balancersAll || inService(g))
		if ask[svc] {
			asked = append(asked, svc)
			reads += named[svc].reads()
		}
	}
	if budget := readBudget(st, now); lbs == balancersUnsettled && reads > budget {
		group := map[string]asgtypes.AutoScalingGroup{}
		for i, svc := range services {
			group[svc] = groups[names[i]]
		}
		for _, svc := range overBudget(st, asked, group, capacities, named, budget) {
			ask[svc], held[svc] = false, true
		}
	}
	return ask, held
}

// overBudget are the services of asked (whose reads exceed budget) a
// check leaves out. In order of how far
// they are from their target (short), in turns among equals (each check
// starts further along the list, so none waits on the others for long),
// a service is asked while its reads fit what is left of the budget (the
// first always, however many it names; one naming none, costing none,
// always); of the others, those that can
// wait are left out: below their target, or at it with the instances of
// the previous check and none terminating (only its confirmation waits).
// A service at its target whose instances changed is judged only on a
// fresh read: it is always asked, and its reads count first.
func overBudget(st *execution.State, asked []string, group map[string]asgtypes.AutoScalingGroup, capacities map[string]execution.ServiceHealth, named namedSet, budget int) []string {
	// short is how far a service is from its target: 0 at it; else, with
	// its target in service, the healthy instances it lacked at the
	// previous check; else more, by the instances in service it lacks.
	short := func(svc string) int {
		prev := capacities[svc]
		if health.Healthy(prev) {
			return 0
		}
		if lacking := prev.Target - inServiceUnits(group[svc]); lacking > 0 {
			return 1 + prev.Target + lacking
		}
		return 1 + max(0, prev.Target-prev.Healthy)
	}
	canWait := func(svc string) bool {
		prev := capacities[svc]
		return short(svc) > 0 || prev.Instances != "" && unchanged(prev, group[svc])
	}
	turn := map[string]int{}
	if st.Health != nil {
		for i, svc := range asked {
			turn[svc] = (i - st.Health.Checks*tuning.BalancerReadsPerCheck%len(asked) + len(asked)) % len(asked)
		}
	}
	order := slices.Clone(asked)
	slices.SortStableFunc(order, func(a, b string) int {
		if d := short(a) - short(b); d != 0 {
			return d
		}
		return turn[a] - turn[b]
	})
	left, none := budget, true
	for _, svc := range order {
		if !canWait(svc) {
			left, none = left-named[svc].reads(), false
		}
	}
	var out []string
	for _, svc := range order {
		if !canWait(svc) {
			continue
		}
		if n := named[svc].reads(); n == 0 || n <= left || none {
			left, none = left-n, false
			continue
		}
		out = append(out, svc)
	}
	return out
}

// assess is what the new group g and the load balancers and target
// groups the release names for its service (named, as views read them)
// say of its service now, given the service's previous report prev and
// its scaling activities when this report read them (read; nil when it
// did not: its count of terminations is the previous report's); for a
// group held (its load balancers not asked, see holding), the previous
// healthy count, or fewer when the group shows fewer InService and
// Healthy. It fails with a *failure.DeployError when the group can never
// become healthy: a launch that will fail again, or a load balancer that
// never sends one of its instances traffic.
func assess(g asgtypes.AutoScalingGroup, prev execution.ServiceHealth, named servedBy, views balancers.Views, read *fleet.Activities, held bool) (execution.ServiceHealth, error) {
	name := aws.ToString(g.AutoScalingGroupName)
	view, ids, live := groupView(g)
	view.LoadBalancers, view.TargetGroups = map[string]map[string]string{}, map[string]map[string]string{}
	for _, lb := range named.elbs {
		view.LoadBalancers[lb] = views.ELB[lb]
	}
	for _, tg := range named.tgs {
		view.TargetGroups[tg.arn] = views.TargetGroups[tg.arn]
	}
	cur := health.Assess(view, prev.Target)
	if held {
		// Carried on, but never above what the group shows healthy now:
		// an instance it no longer has InService and Healthy (moved to
		// Standby, found unhealthy) is healthy in no load balancer.
		cur.Healthy = min(prev.Healthy, health.Assess(health.View{Found: true, Instances: view.Instances}, prev.Target).Healthy)
	}
	cur.Desired, cur.Launch, cur.StableSeconds = prev.Desired, prev.Launch, prev.StableSeconds
	cur.Step, cur.Steps, cur.StepDesired, cur.ReadySeconds = prev.Step, prev.Steps, prev.StepDesired, prev.ReadySeconds
	cur.Instances, cur.Terminated, cur.ActivitiesAt = health.Digest(live), prev.Terminated, prev.ActivitiesAt
	if read != nil {
		var err error
		if cur, err = counted(name, prev, cur, *read); err != nil {
			return execution.ServiceHealth{}, err
		}
		cur.Rebalancing = rebalancing(view, *read)
	}
	if reason := views.NotServed(ids...); reason != "" {
		return execution.ServiceHealth{}, &failure.DeployError{Op: "route to " + name, Err: errors.New(reason)}
	}
	return cur, nil
}

// groupView is group g's instances as package health sees them (a View
// found, with no load balancer), with the ids of all of them and of those
// not terminating (live).
func groupView(g asgtypes.AutoScalingGroup) (view health.View, ids, live []string) {
	view.Found = true
	for _, inst := range g.Instances {
		hi := health.Instance{ID: aws.ToString(inst.InstanceId), LifecycleState: string(inst.LifecycleState), HealthStatus: aws.ToString(inst.HealthStatus),
			Weight: fleet.Weight(inst)}
		view.Instances = append(view.Instances, hi)
		ids = append(ids, hi.ID)
		if !hi.Terminating() {
			live = append(live, hi.ID)
		}
	}
	return view, ids, live
}

// readActivities reads the scaling activities of the groups of r's
// services a report needs (mine: the new groups AWS shows, by service;
// prevs their services' previous reports), as reads says (see
// activityNeed), one at a time: an account's Auto Scaling requests share
// one bucket of 40 (Amazon EC2 Auto Scaling API Reference, API request
// rate), which reads side by side would drain at once. It returns them
// by service (none for a group not read).
func readActivities(ctx context.Context, api cloud.AutoScaling, r *release.Release, services []string, mine map[string]asgtypes.AutoScalingGroup, prevs map[string]execution.ServiceHealth, reads activityReads) (map[string]*fleet.Activities, error) {
	type ask struct {
		svc, name string
		since     *time.Time // nil: read them all
	}
	var asks []ask
	for _, svc := range services {
		g, ok := mine[svc]
		if !ok {
			continue
		}
		prev := prevs[svc]
		stage, err := stageOf(r, svc, prev)
		if err != nil {
			return nil, err
		}
		view, _, live := groupView(g)
		cur := health.Assess(view, prev.Target)
		cur.Instances = health.Digest(live)
		switch needOf(reads, prev, cur, stage.Launch) {
		case needRead:
			asks = append(asks, ask{svc: svc, name: aws.ToString(g.AutoScalingGroupName)})
		case needProbe:
			asks = append(asks, ask{svc: svc, name: aws.ToString(g.AutoScalingGroupName), since: prev.ActivitiesAt})
		}
	}
	out := map[string]*fleet.Activities{}
	for _, a := range asks {
		read, err := readSince(ctx, api, a.name, a.since)
		if err != nil {
			return nil, err
		}
		if read != nil {
			out[a.svc] = read
		}
	}
	return out, nil
}

// readSince reads the scaling activities of group name: all of them when
// since is nil, else only when one is in progress or began after since
// (fleet.ActivitySince, one record first); nil when it did not read them.
func readSince(ctx context.Context, api cloud.AutoScaling, name string, since *time.Time) (*fleet.Activities, error) {
	if since != nil {
		began, err := fleet.ActivitySince(ctx, api, name, *since)
		if err != nil || !began {
			return nil, err
		}
	}
	read, err := fleet.ReadActivities(ctx, api, name)
	if err != nil {
		return nil, err
	}
	return &read, nil
}

// counted is cur, a report of group name's service (its previous prev),
// with what the group's scaling activities say (read): its terminations,
// and when the newest began; a failed launch that will fail again is a
// *failure.DeployError.
func counted(name string, prev, cur execution.ServiceHealth, read fleet.Activities) (execution.ServiceHealth, error) {
	if read.Failed != "" {
		return cur, &failure.DeployError{Op: "launch instances of " + name,
			Err: fmt.Errorf("Auto Scaling reports a failed launch that will fail again: %s", read.Failed)}
	}
	cur.Terminated, cur.ActivitiesAt = max(prev.Terminated, read.Terminated), aws.Time(read.Latest.UTC())
	return cur, nil
}

// activityNeed is what a report needs of a group's scaling activities.
type activityNeed int

// The activity needs.
const (
	needNone activityNeed = iota
	// needRead reads them all.
	needRead
	// needProbe asks whether one is in progress or began since their
	// last read (fleet.ActivitySince), and reads them all if so.
	needProbe
)

// needOf is what a report reading as reads says needs of the scaling
// activities of a group, given its service's previous report prev, this
// check's cur (its counts and live instances) and its launch count.
func needOf(reads activityReads, prev, cur execution.ServiceHealth, launch int) activityNeed {
	switch {
	case prev.Instances != "" && cur.Instances != prev.Instances || cur.Terminating > 0 || cur.Launched < launch:
		return needRead
	case reads != activitiesExact:
		return needNone
	case prev.ActivitiesAt == nil:
		return needRead
	}
	return needProbe
}

// holding says whether a service, its previous report prev and its group
// g now, holds its target mid-window or confirmed stable: at its target
// since HealthySince, its window not over at now (or over and Confirmed),
// the same live instances as then and none terminating (unchanged).
func holding(prev execution.ServiceHealth, g asgtypes.AutoScalingGroup, now time.Time) bool {
	if !health.Healthy(prev) || prev.HealthySince == nil || prev.Instances == "" {
		return false
	}
	if health.StableIn(prev, now) <= 0 && !prev.Confirmed {
		return false
	}
	return unchanged(prev, g)
}

// unchanged says whether group g has the live instances of the previous
// report prev, none terminating.
func unchanged(prev execution.ServiceHealth, g asgtypes.AutoScalingGroup) bool {
	var live []string
	for _, inst := range g.Instances {
		hi := health.Instance{ID: aws.ToString(inst.InstanceId), LifecycleState: string(inst.LifecycleState)}
		if hi.Terminating() {
			return false
		}
		live = append(live, hi.ID)
	}
	return health.Digest(live) == prev.Instances
}

// capacities returns what each service's report starts from: its healthy
// target, desired capacity, launch count and stability window, with the
// State's last report (Deploy computed the capacities from the previous
// groups, which clean up later deletes), or, when the State has none,
// computed again from the previous groups. A target is never below
// min_size (package capacity).
func (d *Deployer) capacities(ctx context.Context, c *cloud.Clients, st *execution.State, r *release.Release) (map[string]execution.ServiceHealth, error) {
	out := map[string]execution.ServiceHealth{}
	missing := false
	for _, svc := range r.ServiceNames() {
		if st.Health != nil {
			if s, ok := st.Health.Services[svc]; ok {
				stage, err := stageOf(r, svc, s)
				if err != nil {
					return nil, err
				}
				s.Target = max(s.Target, stage.Healthy)
				s.Desired = max(s.Desired, s.Target)
				s.Launch = max(s.Launch, s.Desired)
				s.StableSeconds = stepWindow(r, svc, s)
				out[svc] = s
				continue
			}
		}
		missing = true
	}
	if !missing {
		return out, nil
	}
	previous, problems, err := resources.Previous(ctx, c.AutoScaling, r)
	if err != nil {
		return nil, err
	}
	if len(problems) > 0 {
		return nil, &failure.DeployError{Op: "find previous groups", Err: failure.BadRelease(problems...)}
	}
	if previous, err = d.previousAnywhere(ctx, st, r, previous); err != nil {
		return nil, err
	}
	for _, svc := range r.ServiceNames() {
		if _, ok := out[svc]; ok {
			continue
		}
		plan, err := servicePlan(r, svc, previous)
		if err != nil {
			return nil, err
		}
		out[svc] = execution.ServiceHealth{Target: plan.Healthy, Desired: plan.Desired, Launch: plan.Launch, StableSeconds: r.ServiceStableSeconds(svc)}
	}
	return out, nil
}

// joinNames formats names for a message.
func joinNames(names []string) string { return strings.Join(names, ", ") }

// readsOf is how many load balancer reads asking ask makes.
func readsOf(named namedSet, ask map[string]bool) int {
	n := 0
	for svc, yes := range ask {
		if yes {
			n += named[svc].reads()
		}
	}
	return n
}

// readBudget is how many load balancer reads a check at now may make:
// tuning.BalancerReadsPerCheck, or more, up to tuning.BalancerReadBurst,
// once a service of the previous check held its target (targets are
// being reached: the others are near theirs, and each read may see one
// reached) and while the checks' own reads left that much of the
// account's Describe bucket (refilled at tuning.BalancerReadRate) by now:
// st.Health's ReadsRefill, a generic cell rate algorithm's theoretical
// arrival time. Beside k other deploys on their way (st.Health's
// Underway), whose checks read the same bucket, no more than its
// (k+1)-th of BalancerReadBurst, never fewer than
// tuning.BalancerReadsShared: the checks of deploys that meet in a
// second then stay within the bucket together.
func readBudget(st *execution.State, now time.Time) int {
	if st.Health == nil {
		return tuning.BalancerReadsPerCheck
	}
	budget := tuning.BalancerReadsPerCheck
	if slices.ContainsFunc(slices.Collect(maps.Values(st.Health.Services)), health.Healthy) {
		tokens := tuning.BalancerReadBurst
		if st.Health.ReadsRefill != nil {
			if owed := st.Health.ReadsRefill.Sub(now); owed > 0 {
				tokens -= int(math.Ceil(owed.Seconds() * tuning.BalancerReadRate))
			}
		}
		budget = max(budget, tokens)
	}
	if k := st.Health.Underway; k > 0 {
		budget = min(budget, max(tuning.BalancerReadsShared, tuning.BalancerReadBurst/(k+1)))
	}
	return budget
}

// readsShareWait is the least wait, in seconds, after the checks-th
// check made reads load balancer reads beside k other deploys on their
// way (Health.Underway), whose checks read the account's Describe bucket
// too: the time its (k+1)-th of the refill (tuning.BalancerReadRate a
// second) takes to bring them back, at most tuning.BootCheckInterval (no
// longer than a check waits while instances boot), jittered by a fifth
// so that the checks of deploys beside each other do not meet.
func readsShareWait(req execution.Request, checks, reads, k int) int {
	every := min(time.Duration(reads*(k+1))*time.Second/tuning.BalancerReadRate, tuning.BootCheckInterval)
	s := pacing.Schedule{Paces: []pacing.Pace{{Every: every}}, Jitter: 0.2}
	return s.Next(pacing.Situation{Checks: checks, Seed: req.Execution.ID + "/reads"})
}

// readsRefill is Health.ReadsRefill after a check at now made reads
// load balancer reads: the bucket full again that much later.
func readsRefill(st *execution.State, now time.Time, reads int) *time.Time {
	at := now
	if st.Health != nil && st.Health.ReadsRefill != nil && st.Health.ReadsRefill.After(now) {
		at = *st.Health.ReadsRefill
	}
	at = at.Add(time.Duration(float64(reads) / tuning.BalancerReadRate * float64(time.Second))).UTC()
	return &at
}
