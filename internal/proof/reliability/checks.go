package reliability

import (
	"encoding/json"
	"github.com/ferryhq/ferry/internal/store/ledger"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
)

// cleanupTasks are the tasks whose failure may end in FailureDirty.
var cleanupTasks = []string{execution.TaskCleanUpSuccess, execution.TaskCleanUpFailure, execution.TaskReleaseLock}

// resource is a group, launch template or alarm of a snapshot, for diffs.
type resource struct {
	kind, key string
	tags      map[string]string
	body      string
	// standby is a group's body without what standing by and a rollback
	// change: its load balancers, target groups, suspended processes and
	// its instances' states in the load balancers.
	standby string
}

func resources(s sim.Snapshot) map[string]resource {
	out := map[string]resource{}
	add := func(kind, acct, name string, tags map[string]string, v any) {
		b, _ := json.Marshal(v)
		key := kind + " " + acct + " " + name
		out[key] = resource{kind: kind, key: key, tags: tags, body: string(b)}
	}
	for _, a := range s.Accounts {
		acct := a.Account + "/" + a.Region
		for _, g := range a.Groups {
			add("group", acct, g.Name, g.Tags, g)
			key := "group " + acct + " " + g.Name
			res := out[key]
			res.standby = standbyBody(g)
			out[key] = res
		}
		for _, lt := range a.LaunchTemplates {
			add("launch-template", acct, lt.Name, lt.Tags, lt)
		}
		for _, al := range a.Alarms {
			add("alarm", acct, al.Name, al.Tags, al)
		}
	}
	return out
}

// standbyBody is g without what Bake changes as the group stands by, and
// a rollback as it puts it back (see resource.standby).
func standbyBody(g sim.GroupSnapshot) string {
	g.LoadBalancers, g.TargetGroups, g.Suspended = nil, nil, nil
	g.Instances = slices.Clone(g.Instances)
	for i := range g.Instances {
		g.Instances[i].LB = nil
	}
	b, _ := json.Marshal(g)
	return string(b)
}

// ours says whether tags are those of a resource ferry made for the
// project-config.
func (r *run) ours(tags map[string]string) bool {
	return tags[naming.TagDeployWith] == "ferry" && tags[naming.TagProjectName] == r.next.rel.ProjectName &&
		tags[naming.TagConfigName] == r.next.rel.ConfigName
}

// checkRelease checks that task may change k, a resource of the
// project-config of release: the release's own, or the previous
// release's only as CleanUpSuccess retires it, or as Bake stands a group
// by and a rollback puts it back (standby: nothing of the group changed
// but its load balancers, target groups and suspended processes); never
// the second release's of a race.
func (r *run) checkRelease(task, k, release string, standby bool) {
	switch {
	case release == r.next.rel.ReleaseID:
	case r.second != nil && release == r.second.rel.ReleaseID:
		r.violate("%s touched %s, of the second release %s", task, k, release)
	case task == execution.TaskCleanUpSuccess:
	case standby && (task == execution.TaskBake || task == execution.TaskCleanUpFailure):
	default:
		r.violate("%s touched %s, of release %s (only CleanUpSuccess retires the previous release; Bake and a rollback only take it out of its load balancers and put it back)", task, k, release)
	}
}

// checkTask checks what one task of the release changed: only resources
// of the project-config; of those, only the release's own, but for the
// previous release's, which only CleanUpSuccess may retire (never the
// second release's of a race); and the previous groups deleted only
// while the new ones are healthy.
func (r *run) checkTask(task string, before, after sim.Snapshot) {
	b, a := resources(before), resources(after)
	keys := map[string]bool{}
	for k := range b {
		keys[k] = true
	}
	for k := range a {
		keys[k] = true
	}
	for k := range keys {
		rb, inB := b[k]
		ra, inA := a[k]
		if inB && inA && rb.body == ra.body {
			continue
		}
		res := ra
		if !inA {
			res = rb
		}
		if !r.ours(res.tags) {
			r.violate("%s touched %s, which is not tagged DeployWith=ferry of %s %s", task, k, r.next.rel.ProjectName, r.next.rel.ConfigName)
			continue
		}
		r.checkRelease(task, k, res.tags[naming.TagReleaseID], inB && inA && rb.kind == "group" && rb.standby == ra.standby)
	}
	// Previous groups deleted by this task.
	for _, g := range groupsOf(before, r.next.rel.ProjectName, r.next.rel.ConfigName) {
		if g.Status != "" || g.Tags[naming.TagReleaseID] == r.next.rel.ReleaseID {
			continue
		}
		still := false
		for _, h := range groupsOf(after, r.next.rel.ProjectName, r.next.rel.ConfigName) {
			if h.Name == g.Name && h.Status == "" {
				still = true
			}
		}
		if still {
			continue
		}
		for svc, p := range r.plans {
			ng, ok := findGroup(before, naming.GroupName(r.next.rel.ProjectName, r.next.rel.ConfigName, svc, r.next.rel.ReleaseID))
			switch {
			case !ok || ng.Status != "":
				r.violate("%s deleted the previous group %s while the new group of %s did not exist", task, g.Name, svc)
			case healthyCount(ng) < p.Healthy:
				r.violate("%s deleted the previous group %s while the new group of %s had %d healthy instances of %d needed", task, g.Name, svc, healthyCount(ng), p.Healthy)
			}
		}
	}
}

// checkServing checks, at every instant the fleet changed from the
// release's start to its end (every moment an instance began or stopped
// serving, or a group was deleted), that the project-config served from
// one release in full: every service of the previous release, or every
// service of the release, or of the race's second release, with at least
// its healthy target of instances serving (in service and healthy in all
// its load balancers and target groups).
func (r *run) checkServing(res *Result, fleet []sim.GroupRecord) {
	p, c := r.next.rel.ProjectName, r.next.rel.ConfigName
	type member struct {
		rec    sim.GroupRecord
		target int
	}
	releases := map[string][]member{}
	// need is how many groups a release must have to serve in full: one
	// per service of the new (and second) release; the previous one's as
	// they stood.
	need := map[string]int{r.next.rel.ReleaseID: len(r.plans)}
	if r.second != nil {
		need[r.second.rel.ReleaseID] = len(r.plans)
	}
	var instants []time.Time
	for _, g := range fleet {
		if g.Tags[naming.TagDeployWith] != "ferry" || g.Tags[naming.TagProjectName] != p || g.Tags[naming.TagConfigName] != c {
			continue
		}
		release, svc := g.Tags[naming.TagReleaseID], g.Tags[naming.TagServiceName]
		target, ok := r.previousTargets[g.Name]
		if release == r.next.rel.ReleaseID || (r.second != nil && release == r.second.rel.ReleaseID) {
			target, ok = r.plans[svc].Healthy, true
		}
		if !ok {
			continue
		}
		releases[release] = append(releases[release], member{g, target})
		for _, i := range g.Instances {
			instants = append(instants, i.Serving, i.Until)
		}
		instants = append(instants, g.DeleteRequested)
	}
	instants = append(instants, res.StartedAt)
	slices.SortFunc(instants, func(a, b time.Time) int { return a.Compare(b) })
	serves := func(ms []member, t time.Time) bool {
		if len(ms) == 0 {
			return false
		}
		for _, m := range ms {
			n := 0
			for _, i := range m.rec.Instances {
				if i.ServesAt(t) {
					n++
				}
			}
			if n < m.target {
				return false
			}
		}
		return true
	}
	until := res.EndedAt
	if at, past := r.noReturnAt(res); past && r.sc.Destroy {
		until = at // a destroy retires the whole fleet from there on
	}
	for _, t := range instants {
		if t.IsZero() || t.Before(res.StartedAt) || t.After(until) {
			continue
		}
		served := false
		for release, ms := range releases {
			served = served || (len(ms) >= need[release] && serves(ms, t))
		}
		if !served {
			r.violate("at %s (%s after the release started) no release of %s/%s served in full", t.UTC().Format(time.RFC3339),
				t.Sub(res.StartedAt), p, c)
			return
		}
	}
}

// groupsOf returns the ferry groups of a project-config in a snapshot.
func groupsOf(s sim.Snapshot, project, config string) []sim.GroupSnapshot {
	var out []sim.GroupSnapshot
	for _, a := range s.Accounts {
		for _, g := range a.Groups {
			if g.Tags[naming.TagDeployWith] == "ferry" && g.Tags[naming.TagProjectName] == project && g.Tags[naming.TagConfigName] == config {
				out = append(out, g)
			}
		}
	}
	return out
}

func findGroup(s sim.Snapshot, name string) (sim.GroupSnapshot, bool) {
	for _, a := range s.Accounts {
		for _, g := range a.Groups {
			if g.Name == name {
				return g, true
			}
		}
	}
	return sim.GroupSnapshot{}, false
}

// healthyCount counts a group's instances that are InService and healthy
// in every load balancer and target group of the group.
func healthyCount(g sim.GroupSnapshot) int {
	n := 0
	for _, in := range g.Instances {
		if in.Lifecycle != "InService" || in.Health != "Healthy" || len(in.LB) < len(g.LoadBalancers)+len(g.TargetGroups) {
			continue
		}
		ok := true
		for _, h := range in.LB {
			if h != "InService" && h != "healthy" {
				ok = false
			}
		}
		if ok {
			n++
		}
	}
	return n
}

// releaseResources lists what is left in snap of the release id: groups
// (not being deleted), launch templates, alarms, and instances still
// registered with a load balancer or target group, by name.
func releaseResources(s sim.Snapshot, project, config, releaseID string, services []string) []string {
	var out []string
	prefixes := make([]string, 0, len(services))
	for _, svc := range services {
		prefixes = append(prefixes, naming.GroupName(project, config, svc, releaseID))
	}
	mine := func(name string, tags map[string]string) bool {
		if tags[naming.TagReleaseID] == releaseID {
			return true
		}
		for _, p := range prefixes {
			if strings.HasPrefix(name, p) {
				return true
			}
		}
		return false
	}
	for _, a := range s.Accounts {
		instances := map[string]bool{}
		for _, g := range a.Groups {
			if !mine(g.Name, g.Tags) {
				continue
			}
			if g.Status == "" {
				out = append(out, "group "+g.Name)
			}
			for _, i := range g.Instances {
				instances[i.ID] = true
			}
		}
		for _, lt := range a.LaunchTemplates {
			if mine(lt.Name, lt.Tags) {
				out = append(out, "launch template "+lt.Name)
			}
		}
		for _, al := range a.Alarms {
			if mine(al.Name, al.Tags) {
				out = append(out, "alarm "+al.Name)
			}
		}
		for _, reg := range append(slices.Clone(a.LoadBalancers), a.TargetGroups...) {
			for id, state := range reg.Instances {
				if instances[id] && state != "draining" {
					out = append(out, "registration of "+id+" in "+reg.Name)
				}
			}
		}
	}
	return out
}

// pastNoReturn says whether a fault of the run hit a clean-up that was
// past its point of no return (or could not tell whether it was):
// CleanUpFailure and ReleaseLock always are; CleanUpSuccess once its
// deleting record exists, or when the fault failed the read of that
// record: the S3 call the fault hit (Result.S3Hits), which a fault before
// it may have moved from the base run's call at its place.
func (r *run) pastNoReturn(res *Result) bool {
	p, c, id := r.next.rel.ProjectName, r.next.rel.ConfigName, r.next.rel.ReleaseID
	key := naming.DeletingKey(p, c, id)
	_, deleting := res.Objects[key]
	for i, task := range res.FiredTasks {
		f := res.Schedule.Faults[i]
		readDeleting := f.Call.S3 && f.Call.Key == key
		if i < len(res.S3Hits) && res.S3Hits[i] != "" {
			readDeleting = strings.HasSuffix(res.S3Hits[i], " "+key)
		}
		switch {
		case task == execution.TaskCleanUpFailure || task == execution.TaskReleaseLock:
			return true
		case task == execution.TaskCleanUpSuccess && (deleting || readDeleting):
			return true
		}
	}
	return false
}

// checkEnd checks the end state and what it promises.
func (r *run) checkEnd(res *Result) {
	fault := ""
	if len(res.Schedule.Faults) > 0 {
		if res.FiredIn == "" {
			r.violate("the fault was never injected: the run did not follow the base run's calls")
		}
		fault = " (fault in " + res.FiredIn + ")"
	}
	if res.Second != nil {
		r.checkSecond(res)
	}
	switch res.End {
	case execution.EndSuccess:
		if r.opts.Schedule.Base == BaseAnalysis {
			r.violate("a build whose canary analysis fails succeeded%s: a fault on its metrics passed the canary (no data is not a pass)", fault)
		}
		r.checkSuccess(res)
	case execution.EndFailureClean:
		r.checkFailureClean(res, fault)
	case execution.EndFailureDirty:
		r.checkFailureDirty(res, fault)
	default:
		r.violate("the execution ended %s without an end state (last state %s): %s %s", res.Status, lastVisit(res), res.Error, res.Cause)
	}
}

// noReturnAt is when the release passed its point of no return: the
// time in its deleting record, which CleanUpSuccess writes before it
// retires anything; past is false when it has none.
func (r *run) noReturnAt(res *Result) (at time.Time, past bool) {
	rel := r.next.rel
	body, found := res.Objects[naming.DeletingKey(rel.ProjectName, rel.ConfigName, rel.ReleaseID)]
	if !found {
		return time.Time{}, false
	}
	var i ledger.Intent
	if err := json.Unmarshal([]byte(body), &i); err != nil {
		r.violate("the deleting record does not decode: %v", err)
		return time.Time{}, false
	}
	return i.Since, true
}

// checkSuccess: every new group serves (unless a second release took
// over), no other release's group is left, and the lock is released; a
// destroy's leaves no current record.
func (r *run) checkSuccess(res *Result) {
	rel := r.next.rel
	p, c, id := rel.ProjectName, rel.ConfigName, rel.ReleaseID
	if _, found := res.Objects[naming.CurrentKey(p, c)]; rel.Destroy && found && (res.Second == nil || res.Second.End != execution.EndSuccess) {
		r.violate("Success of a destroy, but the current record is still there")
	}
	for _, svc := range rel.ServiceNames() {
		g, ok := findGroup(res.After, naming.GroupName(p, c, svc, id))
		if !ok || g.Status != "" || healthyCount(g) < r.plans[svc].Healthy {
			if res.Second == nil || res.Second.End != execution.EndSuccess {
				r.violate("Success, but the new group of %s is not serving", svc)
			}
		}
	}
	for _, g := range groupsOf(res.After, p, c) {
		if g.Tags[naming.TagReleaseID] != id && (r.second == nil || g.Tags[naming.TagReleaseID] != r.second.rel.ReleaseID) {
			r.violate("Success, but the previous group %s is still there", g.Name)
		}
	}
	if res.LockHolder != "" {
		r.violate("Success, but release %s still holds the lock", res.LockHolder)
	}
}

// checkFailureClean: the release left nothing, the lock is released, the
// previous release serves and the outcome says FailureClean.
func (r *run) checkFailureClean(res *Result, fault string) {
	rel := r.next.rel
	if left := releaseResources(res.After, rel.ProjectName, rel.ConfigName, rel.ReleaseID, rel.ServiceNames()); len(left) > 0 {
		r.violate("FailureClean%s, but the release left %s", fault, strings.Join(left, ", "))
	}
	if res.LockHolder != "" {
		r.violate("FailureClean%s, but release %s still holds the lock", fault, res.LockHolder)
	}
	r.checkPreviousServes(res, "FailureClean"+fault)
	if res.Outcome != nil && res.Outcome.End != res.End {
		r.violate("FailureClean%s, but the outcome says %s", fault, res.Outcome.End)
	}
}

// checkFailureDirty: only a fault past a clean-up's point of no return
// ends dirty; the lock is kept, and the outcome names everything left.
func (r *run) checkFailureDirty(res *Result, fault string) {
	rel := r.next.rel
	p, c, id := rel.ProjectName, rel.ConfigName, rel.ReleaseID
	if !r.pastNoReturn(res) {
		r.violate("FailureDirty, but no fault hit a clean-up past its point of no return (faults in %q; error %s: %s)", res.FiredTasks, res.Error, res.Cause)
	}
	if res.LockHolder != id {
		r.violate("FailureDirty%s, but the lock is not kept (holder %q)", fault, res.LockHolder)
	}
	// What a clean end would not have: the release's resources when it
	// failed (CleanUpFailure ran), else the previous release's groups and
	// launch templates still there.
	left := releaseResources(res.After, p, c, id, rel.ServiceNames())
	if !visited(res, execution.TaskCleanUpFailure) {
		left = previousResources(res.Before, res.After, p, c, id)
	}
	named, recorded := r.dirtyOutcome(res, fault)
	for _, l := range left {
		if strings.HasPrefix(l, "registration of ") {
			continue // instances of a group named below
		}
		if recorded && !namedIn(l, named) {
			r.violate("FailureDirty%s: %s is left but not named in the outcome's leftovers %q", fault, l, named)
		}
	}
}

// dirtyOutcome checks the outcome of a FailureDirty end and returns the
// leftovers it names, and whether it was recorded.
func (r *run) dirtyOutcome(res *Result, fault string) (named []string, recorded bool) {
	switch {
	case res.Outcome != nil && res.Outcome.End == res.End:
		return res.Outcome.Leftovers, true
	case r.faultedOutcomeWrite(res):
		// A fault hit the outcome's own write: it is missing, or an
		// earlier one stands (S3 refused the record; nothing else can
		// hold it).
	case res.Outcome != nil:
		r.violate("FailureDirty%s, but the outcome says %s", fault, res.Outcome.End)
	default:
		r.violate("FailureDirty%s without an outcome", fault)
	}
	return nil, false
}

// faultedOutcomeWrite says whether a fault of the run hit the write of the
// release's outcome (then the outcome may rightly be missing).
func (r *run) faultedOutcomeWrite(res *Result) bool {
	key := naming.OutcomeKey(r.next.rel.ProjectName, r.next.rel.ConfigName, r.next.rel.ReleaseID)
	return slices.Contains(res.S3Hits, "PutObject "+key)
}

// checkSecond checks how a race's second release ended: in an end state;
// refused at its lock (FailureClean, LockExistsError) while the release
// held it, else deployed over it; and with the lock free at the end.
func (r *run) checkSecond(res *Result) {
	s := res.Second
	switch s.End {
	case execution.EndSuccess:
		if res.End != execution.EndSuccess && res.End != execution.EndFailureClean {
			r.violate("the second release %s succeeded, though the release ended %s", s.ReleaseID, res.End)
		}
	case execution.EndFailureClean:
		if s.Error != "LockExistsError" {
			r.violate("the second release %s ended FailureClean with %s, not LockExistsError: %s", s.ReleaseID, s.Error, s.Cause)
		}
	default:
		r.violate("the second release %s ended %q (%s: %s)", s.ReleaseID, s.End, s.Error, s.Cause)
	}
	if res.End != execution.EndFailureDirty && res.LockHolder != "" {
		r.violate("after the race, release %s still holds the lock", res.LockHolder)
	}
}

// visited says whether the execution entered state.
func visited(res *Result, state string) bool {
	return slices.ContainsFunc(res.Visits, func(v Visit) bool { return v.State == state })
}

// previousResources lists the ferry groups and launch templates of the
// project-config in after that are not the release's and that before had.
func previousResources(before, after sim.Snapshot, project, config, releaseID string) []string {
	had := map[string]bool{}
	for _, a := range before.Accounts {
		for _, g := range a.Groups {
			had["group "+g.Name] = true
		}
		for _, lt := range a.LaunchTemplates {
			had["launch template "+lt.Name] = true
		}
	}
	var out []string
	for _, a := range after.Accounts {
		for _, g := range a.Groups {
			if g.Tags[naming.TagDeployWith] == "ferry" && g.Tags[naming.TagProjectName] == project && g.Tags[naming.TagConfigName] == config &&
				g.Tags[naming.TagReleaseID] != releaseID && had["group "+g.Name] {
				out = append(out, "group "+g.Name)
			}
		}
		for _, lt := range a.LaunchTemplates {
			t := lt.Tags
			if t[naming.TagDeployWith] == "ferry" && t[naming.TagProjectName] == project && t[naming.TagConfigName] == config &&
				t[naming.TagReleaseID] != releaseID && had["launch template "+lt.Name] {
				out = append(out, "launch template "+lt.Name)
			}
		}
	}
	sort.Strings(out)
	return out
}

func lastVisit(res *Result) string {
	if len(res.Visits) == 0 {
		return "none"
	}
	return res.Visits[len(res.Visits)-1].State
}

// checkPreviousServes checks that every group the previous release had is
// live with all its instances healthy; when a race's second release
// succeeded, that its groups are (it replaced the previous release).
func (r *run) checkPreviousServes(res *Result, end string) {
	rel := r.next.rel
	serving := groupsOf(res.Before, rel.ProjectName, rel.ConfigName)
	if res.Second != nil && res.Second.End == execution.EndSuccess {
		serving = slices.DeleteFunc(groupsOf(res.After, rel.ProjectName, rel.ConfigName), func(g sim.GroupSnapshot) bool {
			return g.Tags[naming.TagReleaseID] != res.Second.ReleaseID
		})
		if len(serving) == 0 {
			r.violate("%s, and the second release %s succeeded, but none of its groups is left", end, res.Second.ReleaseID)
		}
	}
	for _, g := range serving {
		if g.Status != "" {
			continue
		}
		now, ok := findGroup(res.After, g.Name)
		switch {
		case !ok || now.Status != "":
			r.violate("%s, but the serving group %s is gone", end, g.Name)
		case healthyCount(now) < int(now.Desired):
			r.violate("%s, but the serving group %s serves with %d healthy instances of %d", end, g.Name, healthyCount(now), now.Desired)
		}
	}
}

// namedIn says whether the resource l ("group <name>", "alarm <name>", ...)
// is named by one of the outcome's leftovers: by its name, or, for an
// alarm, by its group's "alarms <group>/*".
func namedIn(l string, leftovers []string) bool {
	name := l[strings.LastIndex(l, " ")+1:]
	return slices.ContainsFunc(leftovers, func(s string) bool {
		if strings.Contains(s, name) {
			return true
		}
		group, _, ok := cutLast(name, "/")
		return ok && strings.HasPrefix(l, "alarm ") && strings.Contains(s, "alarms "+group+"/*")
	})
}

// cutLast is strings.Cut at the last sep.
func cutLast(s, sep string) (before, after string, found bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

// checkCuts: no load balancer or target group counted a cut connection
// (sim's servingCounter): every group left service drained and none was
// left dark while claimed, whatever the faults. A destroy needs no
// exemption: the load balancers it drains out are withdrawn, not cut.
func (r *run) checkCuts(after sim.Snapshot) {
	for _, a := range after.Accounts {
		for _, rs := range append(slices.Clone(a.LoadBalancers), a.TargetGroups...) {
			if n := rs.CutConnections; n > 0 {
				r.violate("%s in %s/%s counted %d cut connections", rs.Name, a.Account, a.Region, n)
			}
		}
	}
}
