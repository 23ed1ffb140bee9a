package chaos

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/ledger"
)

var at = time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC)

// ferryCall is a call made with a role session of ferry's; ownerCall one
// of the world's owner (no principal).
var (
	ferryCall = &sim.Call{Service: "AutoScaling", Op: "DetachLoadBalancers", Principal: "arn:aws:sts::111111111111:assumed-role/ferry-deploy/s"}
	ownerCall = &sim.Call{Service: "AutoScaling", Op: "DetachLoadBalancers"}
)

func lb(name string, drains bool, attached []string, targets map[string]string) sim.BalancerState {
	return sim.BalancerState{Account: "1", Region: "r", Name: name, Kind: "elb", Drains: drains, Attached: attached, Targets: targets}
}

func grp(name string, deleting bool, instances map[string]string) sim.GroupState {
	return sim.GroupState{Account: "1", Region: "r", Name: name, Deleting: deleting, Instances: instances}
}

// TestObserveEachPredicateCanFail feeds the checker changes of the world
// where (a) or (b) breaks, and the same changes made by the world's owner
// or kept within the rules, which must pass.
func TestObserveEachPredicateCanFail(t *testing.T) {
	two := map[string]string{"i-1": "healthy", "i-2": "healthy"}
	old := grp("old", false, map[string]string{"i-1": "InService", "i-2": "InService"})
	cases := []struct {
		name          string
		call          *sim.Call
		before, after sim.Instant
		want          string // the predicate broken; "" none
	}{
		{"a: a call of ferry's takes a load balancer below its target", ferryCall,
			sim.Instant{Balancers: []sim.BalancerState{lb("web", false, []string{"old"}, two)}},
			sim.Instant{Balancers: []sim.BalancerState{lb("web", false, []string{"new"}, map[string]string{"i-1": "healthy"})}},
			PredServing},
		{"a: the world taking it below is the world's", ownerCall,
			sim.Instant{Balancers: []sim.BalancerState{lb("web", false, []string{"old"}, two)}},
			sim.Instant{Balancers: []sim.BalancerState{lb("web", false, []string{"new"}, map[string]string{"i-1": "healthy"})}},
			""},
		{"a: dark with no group attached", ferryCall,
			sim.Instant{Balancers: []sim.BalancerState{lb("misc", false, []string{"old"}, map[string]string{"i-1": "healthy"})}},
			sim.Instant{Balancers: []sim.BalancerState{lb("misc", false, nil, map[string]string{})}},
			PredServing},
		{"a: a drop that keeps the target", ferryCall,
			sim.Instant{Balancers: []sim.BalancerState{lb("web", false, []string{"old", "new"}, map[string]string{"i-1": "healthy", "i-2": "healthy", "i-3": "healthy"})}},
			sim.Instant{Balancers: []sim.BalancerState{lb("web", false, []string{"new"}, two)}},
			""},
		{"b: a healthy instance out of a draining load balancer at once", ferryCall,
			sim.Instant{Balancers: []sim.BalancerState{lb("misc", true, []string{"old"}, two)}},
			sim.Instant{Balancers: []sim.BalancerState{lb("misc", true, []string{"old"}, map[string]string{"i-2": "healthy"})}},
			PredDrain},
		{"b: draining first is fine", ferryCall,
			sim.Instant{Balancers: []sim.BalancerState{lb("misc", true, []string{"old"}, two)}},
			sim.Instant{Balancers: []sim.BalancerState{lb("misc", true, []string{"old"}, map[string]string{"i-1": "draining", "i-2": "healthy"})}},
			""},
		{"b: a group deleted with an instance still healthy in a load balancer", ferryCall,
			sim.Instant{Groups: []sim.GroupState{old}, Balancers: []sim.BalancerState{lb("spare", false, nil, map[string]string{"i-1": "healthy"})}},
			sim.Instant{Groups: []sim.GroupState{grp("old", true, old.Instances)}, Balancers: []sim.BalancerState{lb("spare", false, nil, map[string]string{})}},
			PredDrain},
		{"b: a group deleted once drained", ferryCall,
			sim.Instant{Groups: []sim.GroupState{old}, Balancers: []sim.BalancerState{lb("spare", false, nil, map[string]string{})}},
			sim.Instant{Groups: []sim.GroupState{grp("old", true, old.Instances)}},
			""},
		{"b: a pending termination hook ended", ferryCall,
			sim.Instant{Groups: []sim.GroupState{grp("g", false, map[string]string{"i-1": "Terminating:Wait"})}},
			sim.Instant{Groups: []sim.GroupState{grp("g", true, map[string]string{"i-1": "Terminating:Proceed"})}},
			PredDrain},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := NewChecker("r1", Served{"r/web": 2, "r/misc": 1})
			c.Observe(sim.Change{At: at, Call: tc.call, Before: tc.before, After: tc.after})
			v := c.Violations()
			if tc.want == "" {
				assert.Empty(t, v)
				return
			}
			require.NotEmpty(t, v)
			assert.Equal(t, tc.want, v[0].Pred, v[0].What)
			assert.True(t, v[0].Cut())
		})
	}
}

// TestPendingNeverServes: an instance waiting on a launching hook, or
// proceeding from it, healthy in a load balancer breaks PredPending
// whoever changed the world (Auto Scaling registers it only as it goes
// into service: "How lifecycle hooks work", Auto Scaling User Guide),
// once per instance and load balancer; registered but not yet healthy,
// or healthy once in service, it does not.
func TestPendingNeverServes(t *testing.T) {
	for _, tc := range []struct {
		name             string
		call             *sim.Call
		lifecycle, state string
		want             int
	}{
		{"Pending:Wait healthy, by the world's own event", nil, "Pending:Wait", "healthy", 1},
		{"Pending:Proceed healthy, by ferry's call", ferryCall, "Pending:Proceed", "healthy", 1},
		{"Pending:Wait healthy, by the owner's call", ownerCall, "Pending:Wait", "healthy", 1},
		{"Pending:Wait registered, not healthy", nil, "Pending:Wait", "initial", 0},
		{"InService healthy", ferryCall, "InService", "healthy", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewChecker("r1", Served{"r/web": 1})
			after := sim.Instant{Groups: []sim.GroupState{grp("new", false, map[string]string{"i-1": tc.lifecycle})},
				Balancers: []sim.BalancerState{lb("web", false, []string{"new"}, map[string]string{"i-1": tc.state})}}
			for range 2 {
				c.Observe(sim.Change{At: at, Call: tc.call, Before: after, After: after})
			}
			v := c.Violations()
			require.Len(t, v, tc.want)
			for _, v := range v {
				assert.Equal(t, PredPending, v.Pred)
				assert.Contains(t, v.What, "i-1 in "+tc.lifecycle)
				assert.False(t, v.Cut())
			}
		})
	}
}

// TestNeedFollowsExecutions: a release being deployed may lower what a
// load balancer needs (the least of the two), a destroy needs nothing,
// and a release serves once its execution succeeds, not when it fails.
func TestNeedFollowsExecutions(t *testing.T) {
	ready := map[string]bool{"r4": true}
	need := func(c *Checker, name string) int { n, _, _ := c.need(name, ready); return n }
	c := NewChecker("r1", Served{"web": 3})
	assert.Equal(t, 3, need(c, "web"))
	c.Started("x2", "r2", Served{"web": 2, "new": 1})
	assert.Equal(t, 2, need(c, "web"))
	_, named, withdrawn := c.need("new", ready)
	assert.False(t, named, "a load balancer only the release being deployed names serves no one yet")
	assert.False(t, withdrawn)
	c.Ended("x2", false)
	assert.Equal(t, "r1", c.Serving())
	c.Started("x4", "r4", Served{"web": Retired})
	_, named, withdrawn = c.need("web", ready)
	assert.False(t, named, "a release removing the service retires its load balancer")
	assert.True(t, withdrawn)
	c.Ended("x4", true)
	_, named, withdrawn = c.need("web", ready)
	assert.False(t, named, "nor does it name it once it serves")
	assert.False(t, withdrawn, "nor withdraws it: nothing serves it")
	c.Started("x5", "r5", Served{"web": 3})
	c.Ended("x5", true)
	c.Lower("r5", []string{"web"}, 1)
	assert.Equal(t, 1, need(c, "web"), "the world's owner set the serving group to 1 instance")
	c.Started("x3", "r3", nil)
	_, named, withdrawn = c.need("web", ready)
	assert.False(t, named, "a destroy retires the fleet")
	assert.True(t, withdrawn)
	c.Ended("x3", true)
	assert.Equal(t, "r3", c.Serving())
	assert.Equal(t, 0, need(c, "web"))
}

// TestWithdrawalDetachesFirst: a destroy needs nothing of the load
// balancers of its config, but takes them out of service only by
// detaching (draining) its groups: a call of ferry's that leaves one dark
// with a group still attached (scaled in under it) breaks (a).
func TestWithdrawalDetachesFirst(t *testing.T) {
	one := map[string]string{"i-1": "healthy"}
	for _, tc := range []struct {
		name  string
		after sim.BalancerState
		want  []string
	}{
		{"detached, draining", lb("web", true, nil, map[string]string{"i-1": "draining"}), nil},
		{"scaled in, still attached", lb("web", true, []string{"old"}, map[string]string{"i-1": "draining"}),
			[]string{"serving at 09:00:00.000: AutoScaling DetachLoadBalancers left elb web dark with group old still attached: a withdrawal detaches (drains) first"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewChecker("r1", Served{"r/web": 1})
			c.Started("x2", "r2", nil)
			c.Observe(sim.Change{At: at, Call: ferryCall,
				Before: sim.Instant{Balancers: []sim.BalancerState{lb("web", true, []string{"old"}, one)}},
				After:  sim.Instant{Balancers: []sim.BalancerState{tc.after}}})
			var got []string
			for _, v := range c.Violations() {
				got = append(got, v.String())
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestRetiredWaitsForTheNewFleet: a release that drops load balancer b
// and keeps a may take b out of service only once its own groups alone
// hold what it needs of a, as the world shows (the ReleaseID tags of the
// groups whose instances are healthy there); until then, and through a
// rollback, b keeps the serving release's need.
func TestRetiredWaitsForTheNewFleet(t *testing.T) {
	c := NewChecker("r1", Served{"r/a": 2, "r/b": 2})
	c.Started("x2", "r2", Served{"r/a": 2, "r/b": Retired})
	group := func(release string, ids ...string) sim.GroupState {
		g := sim.GroupState{Region: "r", Name: "g-" + release, Tags: map[string]string{naming.TagReleaseID: release}, Instances: map[string]string{}}
		for _, id := range ids {
			g.Instances[id] = "InService"
		}
		return g
	}
	balancer := func(name string, ids ...string) sim.BalancerState {
		b := sim.BalancerState{Region: "r", Name: name, Targets: map[string]string{}}
		for _, id := range ids {
			b.Targets[id] = "healthy"
		}
		return b
	}
	for _, tc := range []struct {
		name    string
		in      sim.Instant
		need    int
		retired bool
	}{
		{"old fleet only", sim.Instant{Groups: []sim.GroupState{group("r1", "i-1", "i-2")},
			Balancers: []sim.BalancerState{balancer("a", "i-1", "i-2"), balancer("b", "i-1", "i-2")}}, 2, false},
		{"new fleet short of a's need", sim.Instant{Groups: []sim.GroupState{group("r1", "i-1", "i-2"), group("r2", "i-3")},
			Balancers: []sim.BalancerState{balancer("a", "i-1", "i-2", "i-3"), balancer("b", "i-1", "i-2")}}, 2, false},
		{"new fleet holds a", sim.Instant{Groups: []sim.GroupState{group("r1", "i-1", "i-2"), group("r2", "i-3", "i-4")},
			Balancers: []sim.BalancerState{balancer("a", "i-1", "i-2", "i-3", "i-4"), balancer("b", "i-1", "i-2")}}, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, named, withdrawn := c.need("r/b", c.ready(tc.in))
			assert.Equal(t, tc.retired, !named)
			assert.Equal(t, tc.retired, withdrawn)
			assert.Equal(t, tc.need, n)
		})
	}
}

func snapshot(groups ...sim.GroupSnapshot) sim.Snapshot {
	return sim.Snapshot{Accounts: []sim.AccountSnapshot{{Account: "1", Region: "r", Groups: groups,
		LaunchTemplates: []sim.LaunchTemplateSnapshot{{Name: "p/c/web/r0", Tags: tagsOf("r0")}},
		Alarms:          []sim.AlarmSnapshot{{Name: "p/c/web/r0/cpu_scale_up", Tags: tagsOf("r0")}}}}}
}

func tagsOf(id string) map[string]string {
	return map[string]string{"DeployWith": "ferry", "ProjectName": "p", "ConfigName": "c", "ReleaseID": id}
}

// TestEndPredicatesCanFail: (c) finds a ferry group, template and alarm no
// record names; (d) a current record naming a release the executions do
// not say serves, a group that is gone, and one detached from a load
// balancer its release names.
func TestEndPredicatesCanFail(t *testing.T) {
	serving := sim.GroupSnapshot{Name: "p/c/web/r1", Tags: tagsOf("r1"), LoadBalancers: []string{"web"},
		Instances: []sim.InstanceSnapshot{{ID: "i-1", Lifecycle: "InService", LB: map[string]string{"web": "healthy"}}}}
	orphan := sim.GroupSnapshot{Name: "p/c/web/r0", Tags: tagsOf("r0")}
	cur := &ledger.Current{ReleaseID: "r1", Groups: []ledger.CurrentGroup{{Service: "web", Group: "p/c/web/r1"}}}
	rel := &release.Release{Services: map[string]*release.Service{"web": {ELBs: []string{"web"}}}}
	rec := Records{Project: "p", Config: "c", Current: cur, Named: map[string]string{"p/c/web/r1": "current"}}

	assert.Empty(t, CheckNamed(at, snapshot(serving), Records{Project: "p", Config: "c", Current: cur,
		Named: map[string]string{"p/c/web/r1": "current"}, Leftovers: []string{"launch template p/c/web/r0", "alarms p/c/web/r0/*"}}))
	named := CheckNamed(at, snapshot(serving, orphan), rec)
	require.Len(t, named, 3, "the group, its template and its alarm")
	assert.Equal(t, PredNamed, named[0].Pred)
	assert.False(t, named[0].Cut())

	assert.Empty(t, CheckClaims(at, snapshot(serving), rec, []string{"r1"}, rel, nil))
	for name, tc := range map[string]struct {
		snap    sim.Snapshot
		serving []string
		meddled map[string]bool
	}{
		"another release serves": {snapshot(serving), []string{"r2"}, nil},
		"the group is gone":      {snapshot(), []string{"r1"}, nil},
		"detached":               {snapshot(sim.GroupSnapshot{Name: serving.Name, Tags: serving.Tags, Instances: serving.Instances}), []string{"r1"}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			v := CheckClaims(at, tc.snap, rec, tc.serving, rel, tc.meddled)
			require.NotEmpty(t, v)
			assert.Equal(t, PredClaims, v[0].Pred)
		})
	}
	assert.Empty(t, CheckClaims(at, snapshot(serving), rec, []string{"r0", "r1"}, rel, nil), "r1 ended FailureDirty past its point of no return")
	assert.Empty(t, CheckClaims(at, snapshot(sim.GroupSnapshot{Name: serving.Name, Tags: serving.Tags}), rec, []string{"r1"}, rel,
		map[string]bool{serving.Name: true}), "a group the world detached is the world's doing")
}

// TestBalancersOfAGroupTheWorldDetached: a group the world detached from
// a load balancer its service names still serves there for what the
// world's capacity choice lowers (a rollback attaches it back at that
// capacity); one its release does not name is left as attached.
func TestBalancersOfAGroupTheWorldDetached(t *testing.T) {
	rel := &release.Release{Services: map[string]*release.Service{
		"web": {ELBs: []string{"web-elb"}, TargetGroups: []string{"web-tg"}},
	}}
	detached := placed{"r", sim.GroupSnapshot{Tags: map[string]string{naming.TagServiceName: "web"}, TargetGroups: []string{"web-tg"}}}
	assert.ElementsMatch(t, []string{"r/web-elb", "r/web-tg"}, balancersOf(detached, rel))
	other := placed{"r", sim.GroupSnapshot{Tags: map[string]string{naming.TagServiceName: "web"}, LoadBalancers: []string{"misc"}}}
	assert.ElementsMatch(t, []string{"r/misc", "r/web-elb", "r/web-tg"}, balancersOf(other, rel))
	assert.Equal(t, []string{"r/misc"}, balancersOf(other, nil), "a release the harness did not submit: as attached")
}

// TestMayServe: the current record may name the release the model says
// serves (none once a destroy succeeded) or one that ended FailureDirty,
// past its point of no return perhaps; a destroy that did clears the
// record, so it may name none.
func TestMayServe(t *testing.T) {
	subs := map[string]*release.Release{
		"x1": {ReleaseID: "r1"}, "x2": {ReleaseID: "r2"}, "x3": {ReleaseID: "r3", Destroy: true},
	}
	assert.Equal(t, []string{"r1"}, mayServe("r1", subs, map[string]string{"x2": "FailureClean", "x3": "FailureClean"}))
	assert.Equal(t, []string{"r1", "r2", ""}, mayServe("r1", subs, map[string]string{"x2": "FailureDirty", "x3": "FailureDirty"}))
	assert.Equal(t, []string{""}, mayServe("r3", subs, map[string]string{"x3": "Success"}))
}

// TestCheckStageCanFail: a promotion's stage deploy starting while the
// stage before serves the promotion's release healthy, its gate alarm
// OK and its approval given passes; each of those missing breaks the
// promotion predicate, naming it.
func TestCheckStageCanFail(t *testing.T) {
	base, err := release.ReadFile("../../../testdata/reliability/v2.json")
	require.NoError(t, err)
	base.ConfigName = ""
	pl, err := pipelineOf(base, Step{Kind: KindPromote, D: 60, P: GateApproval})
	require.NoError(t, err)
	qa, err := pl.Release(base, 0, 0)
	require.NoError(t, err)
	const id = "20250602T090000Z-000002"
	group := func(service, rel string, lb map[string]string) sim.GroupSnapshot {
		return sim.GroupSnapshot{Name: service + "-" + rel, Tags: map[string]string{naming.TagDeployWith: "ferry", naming.TagProjectName: project,
			naming.TagConfigName: qaConfig, naming.TagServiceName: service, naming.TagReleaseID: rel},
			Instances: []sim.InstanceSnapshot{{ID: "i-" + service, Lifecycle: "InService", LB: lb}}}
	}
	world := func(rel, state, health string) sim.Snapshot {
		acct := sim.AccountSnapshot{Account: account, Region: awsRegion, Groups: []sim.GroupSnapshot{
			group("web", rel, map[string]string{"acme-shop-qa-web-elb": health, "acme-shop-qa-web-tg": "healthy"}),
			group("worker", rel, map[string]string{"acme-shop-qa-worker-tg": "healthy"}),
		}}
		if state != "" {
			acct.Alarms = []sim.AlarmSnapshot{{Name: gateAlarm, State: state}}
		}
		return sim.Snapshot{Accounts: []sim.AccountSnapshot{acct}}
	}
	for _, tc := range []struct {
		name     string
		snap     sim.Snapshot
		approved bool
		want     string
	}{
		{"every gate holds", world(id, "OK", "healthy"), true, ""},
		{"the stage before runs another release", world("20250601T000000Z-000001", "OK", "healthy"), true, "has no group of release"},
		{"the stage before is not healthy", world(id, "OK", "unhealthy"), true, "acme-shop-qa-web-elb has no healthy instance"},
		{"the gate alarm is in ALARM", world(id, "ALARM", "healthy"), true, "gate alarm acme-shop-qa-errors is ALARM"},
		{"the gate alarm is missing", world(id, "", "healthy"), true, "is missing"},
		{"no approval", world(id, "OK", "healthy"), false, "its approval was not given"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := CheckStage(at, tc.snap, id, qa, pl.Stages[1], tc.approved)
			if tc.want == "" {
				assert.Empty(t, vs)
				return
			}
			require.NotEmpty(t, vs)
			assert.Equal(t, PredPromotion, vs[0].Pred)
			assert.Contains(t, vs[0].What, tc.want)
		})
	}
}

// TestWindowOf: a release's window is its services' shortest (a
// service's own, else the release's, else the default); a destroy's is 0:
// it judges nothing.
func TestWindowOf(t *testing.T) {
	seconds := func(n int) *int { return &n }
	r := &release.Release{StableSeconds: seconds(90), Services: map[string]*release.Service{"web": {StableSeconds: seconds(45)}, "worker": {}}}
	assert.Equal(t, 45*time.Second, windowOf(r))
	r.Services["web"].StableSeconds = nil
	assert.Equal(t, 90*time.Second, windowOf(r))
	r.StableSeconds = nil
	assert.Equal(t, time.Duration(release.DefaultStableSeconds)*time.Second, windowOf(r), "the default, the timeout's default applied")
	r.Destroy = true
	assert.Zero(t, windowOf(r))
}

// TestSwapWaitsForTheWindow: a release's own role session takes the
// serving release's instances out of service only once its fleet has
// stood ready for its window, counted from the world's change before the
// one that first showed it ready, and from the change before one that
// took an instance of its groups away (the earliest each can have
// happened); a call of another session, or one that leaves the serving
// instances in service, is no swap.
func TestSwapWaitsForTheWindow(t *testing.T) {
	tags := func(id string) map[string]string {
		return map[string]string{naming.TagDeployWith: "ferry", naming.TagProjectName: project, naming.TagConfigName: config, naming.TagReleaseID: id}
	}
	instant := func(newIDs map[string]string, old, web map[string]string) sim.Instant {
		return sim.Instant{
			Groups: []sim.GroupState{
				{Account: "1", Region: "r", Name: "old", Tags: tags("r1"), Instances: old},
				{Account: "1", Region: "r", Name: "new", Tags: tags("r2"), Instances: newIDs},
			},
			Balancers: []sim.BalancerState{lb("web", true, []string{"old", "new"}, web)},
		}
	}
	inService := map[string]string{"i-1": "InService", "i-2": "InService"}
	booting := instant(map[string]string{"i-3": "Pending", "i-4": "Pending"}, inService,
		map[string]string{"i-1": "healthy", "i-2": "healthy", "i-3": "initial", "i-4": "initial"})
	ready := instant(map[string]string{"i-3": "InService", "i-4": "InService"}, inService,
		map[string]string{"i-1": "healthy", "i-2": "healthy", "i-3": "healthy", "i-4": "healthy"})
	lost := instant(map[string]string{"i-3": "InService", "i-4": "Terminating", "i-5": "Pending"}, inService,
		map[string]string{"i-1": "healthy", "i-2": "healthy", "i-3": "healthy", "i-5": "initial"})
	scaledIn := instant(ready.Groups[1].Instances, map[string]string{"i-1": "Terminating", "i-2": "InService"}, ready.Balancers[0].Targets)
	gone := instant(map[string]string{"i-3": "InService", "i-5": "Pending"}, inService,
		map[string]string{"i-1": "healthy", "i-2": "healthy", "i-3": "healthy", "i-5": "initial"})
	swapped := instant(ready.Groups[1].Instances, inService,
		map[string]string{"i-1": "draining", "i-2": "draining", "i-3": "healthy", "i-4": "healthy"})
	qaLost := lost
	qaLost.Groups = []sim.GroupState{ready.Groups[0], ready.Groups[1], {Account: "1", Region: "r", Name: "qa-new", Tags: tags("r2"), Instances: map[string]string{}}}
	qaLost.Groups[2].Tags[naming.TagConfigName] = "qa"
	qaReady := qaLost
	qaReady.Groups = append(slices.Clone(qaLost.Groups[:2]), sim.GroupState{Account: "1", Region: "r", Name: "qa-new", Tags: qaLost.Groups[2].Tags, Instances: map[string]string{"i-9": "InService"}})
	qaReady.Balancers = ready.Balancers
	qaLost.Balancers = ready.Balancers
	mine := &sim.Call{Service: "Auto Scaling", Op: "DetachLoadBalancers",
		Principal: "arn:aws:sts::111111111111:assumed-role/ferry-deploy/" + naming.RoleSessionName(project, config, "r2")}
	other := &sim.Call{Service: "Auto Scaling", Op: "DetachLoadBalancers",
		Principal: "arn:aws:sts::111111111111:assumed-role/ferry-deploy/" + naming.RoleSessionName(project, config, "r1")}
	type change struct {
		at       int
		call     *sim.Call
		from, to sim.Instant
	}
	world := func(at int, in sim.Instant) change { return change{at: at, to: in} } // an event reports no Before
	for _, tc := range []struct {
		name    string
		changes []change
		want    string // the violation's start; "" none
	}{
		{"a whole window after the change before ready", []change{world(0, booting), world(10, ready), {60, mine, ready, swapped}}, ""},
		{"within the window", []change{world(0, booting), world(10, ready), {59, mine, ready, swapped}},
			"stable at 09:00:59.000: Auto Scaling DetachLoadBalancers, for release r2, took the serving release's instances out of service 59s after its fleet was first ready"},
		{"before ever ready", []change{world(0, booting), {5, mine, booting, swapped}},
			"stable at 09:00:05.000: Auto Scaling DetachLoadBalancers, for release r2, took the serving release's instances out of service before its own fleet was ever ready"},
		{"within the window after an instance went", []change{world(0, booting), world(10, ready), world(40, ready), world(45, lost), {90, mine, ready, swapped}},
			"stable at 09:01:30.000: Auto Scaling DetachLoadBalancers, for release r2, took the serving release's instances out of service 50s after an instance of its own fleet went"},
		{"an instance going at the swap's own instant, after its reads", []change{world(0, booting), world(10, ready), world(40, ready), world(100, lost), {100, mine, ready, swapped}}, ""},
		{"an earlier loss still counts beside one at the swap's instant", []change{world(0, booting), world(10, ready), world(40, ready), world(45, lost), world(50, ready), world(90, lost), {90, mine, ready, swapped}},
			// i-5 went between 45 and 50 (the change at 50 shows the group without it): 45s
			"stable at 09:01:30.000: Auto Scaling DetachLoadBalancers, for release r2, took the serving release's instances out of service 45s after an instance of its own fleet went"},
		{"a termination's end is no new loss", []change{world(0, booting), world(10, ready), world(20, lost), world(80, lost), world(85, gone), {100, mine, ready, swapped}}, ""},
		{"a whole window after an instance went", []change{world(0, booting), world(10, ready), world(40, ready), world(45, lost), {100, mine, ready, swapped}}, ""},
		{"a promotion's other stage (same release, config qa) losing an instance", []change{world(0, booting), world(10, ready), world(40, qaReady), world(45, qaLost), {90, mine, ready, swapped}}, ""},
		{"the serving group scaled in (a service in no load balancer)", []change{world(0, booting), {5, mine, booting, scaledIn}},
			"stable at 09:00:05.000: Auto Scaling DetachLoadBalancers, for release r2, took the serving release's instances out of service before its own fleet was ever ready"},
		{"another release's session", []change{world(0, booting), {5, other, booting, swapped}}, ""},
		{"the serving instances stay", []change{world(0, booting), {5, mine, booting, ready}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewChecker("r1", Served{"r/web": 2})
			c.Started("x2", "r2", Served{"r/web": 2})
			c.Window("x2", time.Minute)
			for _, ch := range tc.changes {
				c.Observe(sim.Change{At: at.Add(time.Duration(ch.at) * time.Second), Call: ch.call, Before: ch.from, After: ch.to})
			}
			var got []string
			for _, v := range c.Violations() {
				if v.Pred == PredStable {
					got = append(got, v.String())
				}
			}
			if tc.want == "" {
				assert.Empty(t, got)
				return
			}
			require.Len(t, got, 1)
			assert.Contains(t, got[0], tc.want)
		})
	}
}
