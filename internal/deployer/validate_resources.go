package deployer

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/fanout"
	"github.com/ferryhq/ferry/internal/fleet"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/naming/tags"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/resources"
	"github.com/ferryhq/ferry/internal/store/lock"
	"github.com/ferryhq/ferry/internal/tuning"
)

// validateResources is the ValidateResources task: it resolves every
// resource the release names in its target and checks that the release may
// use it, and reports every problem at once as a *failure.BadReleaseError;
// it checks again, under the lock, that a release moving its config says
// so (checkMove); then it checks that the region has room for the
// release's Auto Scaling groups beside the previous ones (resources.CheckHeadroom), and that
// its swap retires no service it leaves out unless it names it under
// remove, and takes no service out of a load balancer unless the service
// names it under detach (checkRemovals). It creates nothing. When AWS throttles it, it
// reports a wait and runs again after it (progress), as Deploy does.
// Its first round, before any call to AWS, takes the deploy's turn
// among those starting at once in its target (turn): it reports the wait
// for it, if any, and checks when it runs again. The round that checks
// puts Release Started (State.StartUnannounced), once: a burst of
// deploys announces its starts in turn, as it makes its first calls.
func (d *Deployer) validateResources(ctx context.Context, req execution.Request) (any, error) {
	st, err := d.verify(ctx, req)
	if err != nil {
		return nil, err
	}
	if err := d.checkTimeout(st, req); err != nil {
		return nil, err
	}
	// The turn needs nothing of the release and its run-once marker:
	// they are read beside it (loadBeside), and serve the round that
	// checks at once.
	wait := 0
	turn := func(ctx context.Context) error {
		if st.Resources == nil {
			wait = d.turn(ctx, st, req)
		}
		return nil
	}
	l, err := d.loadBeside(ctx, st, turn)
	if wait > 0 {
		st.Resources = &execution.Progress{WaitSeconds: wait}
		return st, nil
	}
	c, err := d.checkResources(ctx, st, l, err)
	if st.Resources, err = d.progress(st, req, execution.TaskValidateResources, err); err != nil {
		return nil, err
	}
	if st.StartUnannounced {
		st.StartUnannounced = !d.announceStarted(ctx, st, req, l, c)
	}
	return st, nil
}

// turn is how many seconds the deploy waits for its turn among the
// deploys to its target that started with it (lock.Starts, one every
// tuning.StartEvery): 0 for a deploy that finds none ahead. The account's
// request buckets are shared by every deploy to it; a burst of deploys
// that all made their first calls at once would ask them for more than
// they hold. A marker that cannot be written or listed costs the pacing,
// never the deploy: it waits 0.
func (d *Deployer) turn(ctx context.Context, st *execution.State, req execution.Request) int {
	now := d.now()
	at := req.Execution.StartTime
	if at.IsZero() {
		at = now
	}
	t, err := d.starts.Take(ctx, st.Target.AccountID, st.Target.Region, naming.ExecutionName(st.ProjectName, st.ConfigName, st.ReleaseID), at, now,
		lock.Queue{Every: tuning.StartEvery, Horizon: tuning.StartHorizon})
	if err != nil {
		d.log.Warn("the deploy's start could not be queued: it starts now", "release_id", st.ReleaseID, "error", err)
		return 0
	}
	if t.Wait > 0 {
		d.log.Info("deploys to the target started together: waiting for this one's turn", "release_id", st.ReleaseID, "ahead", t.Ahead, "wait_seconds", math.Ceil(t.Wait.Seconds()))
	}
	return int(math.Ceil(t.Wait.Seconds()))
}

// checkResources resolves and checks the release's resources, its
// removals and the region's headroom (see validateResources), with the
// release and its run-once marker l (loadBeside; loadErr its error), and
// returns the target's clients it read them with (nil when it could
// not). The move check, the resolution, the listing of the config's
// other environments and the headroom read nothing of each other's: they
// run side by side, and a release with problems in several is refused
// for the first of them in that order, the removals (which read the
// resolution's listing of the groups and the other environments') before
// the headroom.
func (d *Deployer) checkResources(ctx context.Context, st *execution.State, l *loaded, loadErr error) (*cloud.Clients, error) {
	if loadErr != nil {
		return nil, loadErr
	}
	r, session := l.r, l.session(st)
	clients, err := d.connectAs(ctx, st, session, true)
	if err != nil {
		return nil, err
	}
	var (
		res      *resources.Resolved
		others   []targetFleet
		headroom error
	)
	err = fanout.Each(ctx, 4, 4, func(ctx context.Context, i int) error {
		var err error
		switch i {
		case 0:
			var move string
			if move, err = d.checkMove(ctx, r, st.Target); err == nil && move != "" {
				err = failure.BadRelease(move)
			}
		case 1:
			res, err = resources.Resolve(ctx, clients, r)
		case 2:
			others, err = d.fleetElsewhere(ctx, st, session, true)
		default:
			headroom = resources.CheckHeadroom(ctx, clients.AutoScaling, r)
		}
		return err
	})
	if err == nil {
		err = removalsIn(st, r, res.Groups, others)
	}
	if err == nil {
		err = headroom
	}
	return clients, err
}

// checkRemovals refuses, as a *failure.BadReleaseError naming them, a
// release whose swap would retire the groups of services it neither
// deploys nor names under remove: the project-config's groups of other
// releases, not being deleted, of a service left out, in the release's
// target or in another environment of the config (others: a move's old
// one). A service dropped from a release by mistake so keeps serving.
// Likewise for a load balancer (dropped, in the release's target: a
// move leaves the old environment's load balancers with its groups): a
// service it deploys whose serving group is attached to a classic load
// balancer or target group the release no longer names for it, nor under
// its detach, is refused, naming the service, the load balancer and the
// field that makes it explicit. A destroy retires every group by
// definition: nothing to refuse.
func checkRemovals(ctx context.Context, c *cloud.Clients, st *execution.State, r *release.Release, others []targetFleet) error {
	if r.Destroy {
		return nil
	}
	groups, err := fleet.Heads(ctx, c.AutoScaling, ownerOf(st))
	if err != nil {
		return err
	}
	return removalsIn(st, r, groups, others)
}

// removalsIn is checkRemovals of groups, the project-config's in the
// release's environment as a listing showed them.
func removalsIn(st *execution.State, r *release.Release, groups []asgtypes.AutoScalingGroup, others []targetFleet) error {
	if r.Destroy {
		return nil
	}
	everywhere := slices.Clone(groups)
	for _, o := range others {
		everywhere = append(everywhere, o.groups...)
	}
	var unlisted, problems []string
	for _, g := range everywhere {
		t := tags.FromASG(g.Tags)
		svc := t[naming.TagServiceName]
		if fleet.Deleting(g) || t[naming.TagReleaseID] == r.ReleaseID || r.Services[svc] != nil || slices.Contains(r.Remove, svc) {
			continue
		}
		unlisted = append(unlisted, svc)
	}
	if len(unlisted) > 0 {
		slices.Sort(unlisted)
		problems = append(problems, fmt.Sprintf("remove: the deploy would delete the serving groups of %s, which the release does not deploy; "+
			"name them under \"remove\" to delete them, or deploy them", joinNames(slices.Compact(unlisted))))
	}
	for _, d := range dropped(r, groups) {
		if !d.explicit {
			problems = append(problems, d.refusal())
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return failure.BadRelease(problems...)
}

// droppedBalancer is a load balancer a service's serving group is
// attached to that the release no longer names for the service: the
// swap, retiring the group, takes the service out of it. explicit says
// the service's detach names it.
type droppedBalancer struct {
	service  string
	ref      balancerRef
	explicit bool
}

// refusal is the problem of a drop that is not explicit.
func (d droppedBalancer) refusal() string {
	key := "elbs"
	if d.ref.arn != "" {
		key = "target_groups"
	}
	return fmt.Sprintf("services.%s.%s: the deploy would take service %s out of %s, which its serving group is attached to and the release no longer names; "+
		"name it under services.%s.detach.%s to take the service out of it, or keep it in %s", d.service, key, d.service, d.ref, d.service, key, key)
}

// String is the drop as the plan shows it.
func (d droppedBalancer) String() string { return d.service + " leaves " + d.ref.String() }

// dropped are the load balancers the swap takes the services r deploys
// out of (see droppedBalancer), sorted by service, then classic load
// balancers before target groups, by name. They come from the serving
// groups (those of other releases, not being deleted) as Auto Scaling
// lists their attachments; a target group is known by its ARN there and
// named by its name (the ARN's "targetgroup/NAME/ID"). One Removing may
// or may not be listed still (the API Reference does not say): either
// way it is leaving.
func dropped(r *release.Release, groups []asgtypes.AutoScalingGroup) []droppedBalancer {
	seen := map[droppedBalancer]bool{}
	var out []droppedBalancer
	add := func(d droppedBalancer) {
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	for _, g := range groups {
		t := tags.FromASG(g.Tags)
		svc := t[naming.TagServiceName]
		s := r.Services[svc]
		if s == nil || fleet.Deleting(g) || t[naming.TagReleaseID] == r.ReleaseID {
			continue
		}
		for _, lb := range g.LoadBalancerNames {
			if !slices.Contains(s.ELBs, lb) {
				add(droppedBalancer{service: svc, ref: balancerRef{name: lb}, explicit: s.Detaches(lb, false)})
			}
		}
		for _, arn := range g.TargetGroupARNs {
			if name := targetGroupName(arn); !slices.Contains(s.TargetGroups, name) {
				add(droppedBalancer{service: svc, ref: balancerRef{name: name, arn: arn}, explicit: s.Detaches(name, true)})
			}
		}
	}
	slices.SortFunc(out, func(a, b droppedBalancer) int {
		return cmp.Or(cmp.Compare(a.service, b.service), cmp.Compare(a.ref.kind(), b.ref.kind()), cmp.Compare(a.ref.name, b.ref.name))
	})
	return out
}
