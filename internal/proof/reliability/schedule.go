package reliability

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
)

// Family is a kind of schedule of the matrix.
type Family string

// The families, in the order the report shows them.
const (
	// Single schedules inject one thing: a call fault (CallKinds), a
	// response lost after an invocation's last call (LambdaDied), an
	// invocation that dies part way (DiedMidway), a role that cannot be
	// assumed by a cold Lambda (RoleDenied, RoleExpired), or a behaviour of
	// the target (Behaviours).
	Single Family = "single"
	// Pair schedules inject two call faults of one kind into one task.
	Pair Family = "pair"
	// Consistency schedules hide one new group or launch template from a
	// window of its lookups (AWS's eventual consistency).
	Consistency Family = "consistency"
	// Race schedules start a second release while the first runs.
	Race Family = "race"
)

// Families returns every family, in the report's order.
func Families() []Family { return []Family{Single, Pair, Consistency, Race} }

// Base is the run a schedule derives from.
type Base string

// The bases: the reference deploy succeeding; the same deploy halted at
// its first health check, so it fails through CleanUpFailure; and halted
// at its first wait in the bake, so CleanUpFailure rolls back (the
// previous groups put back and healthy before the new ones leave).
const (
	BaseSuccess  Base = "success"
	BaseFailure  Base = "failure"
	BaseRollback Base = "rollback"
	// BaseAnalysis deploys the analysed release (AnalysedNext) instead:
	// its build is far slower than the previous one, so its canary
	// analysis fails and rolls it back. No run of it may end Success.
	BaseAnalysis Base = "analysis"
)

// baseNotes say how each base but the success one ends, for the reports.
var baseNotes = map[Base]string{
	BaseFailure:  "halted at the first health check",
	BaseRollback: "halted during the bake",
	BaseAnalysis: "a slower build the canary analysis rolls back",
}

// Behaviour is a way the target behaves that the deploy must survive.
type Behaviour string

// The behaviours.
const (
	// CrashAfterHealthy: the new release's instances pass their health
	// checks, then crash (sim.CrashAfterHealthy). It must never be judged
	// healthy; the previous release keeps serving.
	CrashAfterHealthy Behaviour = "crash-after-healthy"
	// IdleScaleIn: the new fleet is idle (5% CPU) and slow to pass its
	// health checks, and its cpu_scale_down alarm evaluates every minute:
	// the alarm fires during the deploy and must not scale the new group
	// in.
	IdleScaleIn Behaviour = "idle-scale-in"
	// ZoneRecovers: a zone is short of capacity when the new groups launch
	// and recovers during the deploy: AZ rebalancing must not terminate a
	// new instance.
	ZoneRecovers Behaviour = "zone-recovers"
)

// Behaviours returns every behaviour.
func Behaviours() []Behaviour { return []Behaviour{CrashAfterHealthy, IdleScaleIn, ZoneRecovers} }

// Schedule is everything one run of the matrix injects.
type Schedule struct {
	Family Family
	// Base is the run the schedule's points come from; a failure base
	// halts the release at its first health check.
	Base Base
	// Faults are injected at their points (see Fault).
	Faults []Fault
	// Hide hides the new resources it names from a window of their
	// lookups.
	Hide *sim.Hiding
	// RaceAt starts a second release of the project-config when the
	// release enters this state; with RaceAfterLost, when the response
	// of the invocation Faults[0] kills is lost (before its retry).
	RaceAt        string
	RaceAfterLost bool
	// Behaviour makes the target behave so.
	Behaviour Behaviour
}

// String names the schedule for people.
func (s Schedule) String() string {
	var parts []string
	for _, f := range s.Faults {
		parts = append(parts, f.String())
	}
	if s.Hide != nil {
		parts = append(parts, fmt.Sprintf("%s %s hidden from lookups %d-%d", s.Hide.Kind, s.Hide.Prefix, s.Hide.From, s.Hide.From+s.Hide.Calls-1))
	}
	switch {
	case s.RaceAfterLost:
		parts = append(parts, "a second release starts while the response is lost")
	case s.RaceAt != "":
		parts = append(parts, "a second release starts at "+s.RaceAt)
	}
	if s.Behaviour != "" {
		parts = append(parts, "behaviour "+string(s.Behaviour))
	}
	if len(parts) == 0 {
		parts = append(parts, "nothing")
	}
	out := strings.Join(parts, " + ")
	if note, ok := baseNotes[s.Base]; ok {
		out += " (" + note + ")"
	}
	return out
}

// One is the schedule of one fault on the success base.
func One(f Fault) Schedule { return Schedule{Family: Single, Base: BaseSuccess, Faults: []Fault{f}} }

// Bases are the runs the matrix derives its schedules from.
type Bases struct {
	// Rollback is nil for a scenario without a bake (a destroy): its
	// schedules are left out; Analysis is nil for a destroy too.
	Success, Failure, Rollback, Analysis *Result
	// Destroy says the scenario's release is a destroy: the behaviours,
	// which vary the release deployed, are left out.
	Destroy bool
}

// Schedules returns every schedule of the matrix over the bases:
//
//   - single: every call of the success base with each call fault kind;
//     every invocation's response lost after its last call; every
//     invocation dying right after each of its calls; every invocation
//     that assumes a role doing so as a cold Lambda whose role assumption
//     fails (access denied, expired credentials); the same for the calls
//     and invocations of the failure base's clean-up (CleanUpFailure,
//     ReleaseLock), and for each GetMetricData call of the analysis base
//     and each invocation that made one; every behaviour;
//   - pair: every pair of calls within the first invocation of Deploy and
//     of CleanUpSuccess (success base) and of CleanUpFailure (failure
//     base), with each call fault kind on both;
//   - consistency: each new group and launch template of each base hidden
//     for 1, 2 and 3 lookups, from each of the lookups it had in the base;
//   - race: a second release started when the release enters each state
//     of the success base, and when each of its responses is lost.
func (b Bases) Schedules() []Schedule {
	var out []Schedule
	for _, family := range []func() []Schedule{b.singles, b.pairs, b.consistency, b.races} {
		out = append(out, family()...)
	}
	return out
}

// singles: one fault at each call of each base (every kind, and a death
// midway), the Lambda's death at each invocation's last call, a role
// denied or expired at each connecting invocation's first; then each
// behaviour on the success base.
func (b Bases) singles() []Schedule {
	var out []Schedule
	for _, base := range []struct {
		name Base
		res  *Result
		// tasks whose calls and invocations single faults and deaths
		// target (nil: all); op, when set, the only operation.
		tasks []string
		op    string
	}{
		{BaseSuccess, b.Success, nil, ""},
		{BaseFailure, b.Failure, []string{execution.TaskCleanUpFailure, execution.TaskReleaseLock}, ""},
		{BaseRollback, b.Rollback, []string{execution.TaskCleanUpFailure, execution.TaskReleaseLock}, ""},
		{BaseAnalysis, b.Analysis, nil, "GetMetricData"},
	} {
		if base.res == nil {
			continue
		}
		in := func(c Call) bool {
			return (base.tasks == nil || slices.Contains(base.tasks, c.Task)) && (base.op == "" || !c.S3 && c.Op == base.op)
		}
		single := func(i int, k Kind) Schedule {
			return Schedule{Family: Single, Base: base.name, Faults: []Fault{mustTarget(base.res, i, k)}}
		}
		for i, c := range base.res.Calls {
			if !in(c) {
				continue
			}
			for _, k := range append(CallKinds(), DiedMidway) {
				out = append(out, single(i, k))
			}
		}
		for n, inv := range base.res.Invocations {
			if inv.End == inv.First || !slices.ContainsFunc(base.res.Calls[inv.First:inv.End], in) {
				continue
			}
			out = append(out, single(inv.End-1, LambdaDied))
			if connects(base.res, n) {
				out = append(out, single(inv.First, RoleDenied), single(inv.First, RoleExpired))
			}
		}
	}
	for _, bh := range Behaviours() {
		if !b.Destroy {
			out = append(out, Schedule{Family: Single, Base: BaseSuccess, Behaviour: bh})
		}
	}
	return out
}

// pairs: two faults of one kind at every pair of calls of one invocation
// of Deploy, CleanUpSuccess and CleanUpFailure.
func (b Bases) pairs() []Schedule {
	var out []Schedule
	for _, p := range []struct {
		name Base
		res  *Result
		task string
	}{
		{BaseSuccess, b.Success, execution.TaskDeploy},
		{BaseSuccess, b.Success, execution.TaskCleanUpSuccess},
		{BaseFailure, b.Failure, execution.TaskCleanUpFailure},
		{BaseRollback, b.Rollback, execution.TaskCleanUpFailure},
	} {
		if p.res == nil {
			continue
		}
		inv, ok := firstInvocation(p.res, p.task)
		if !ok {
			continue
		}
		for i := inv.First; i < inv.End; i++ {
			for j := i + 1; j < inv.End; j++ {
				for _, k := range CallKinds() {
					out = append(out, Schedule{Family: Pair, Base: p.name, Faults: []Fault{mustTarget(p.res, i, k), mustTarget(p.res, j, k)}})
				}
			}
		}
	}
	return out
}

// consistency: each new group and launch template hidden from each of its
// lookups on, for one to three calls (eventual consistency).
func (b Bases) consistency() []Schedule {
	var out []Schedule
	for _, base := range []struct {
		name Base
		res  *Result
	}{{BaseSuccess, b.Success}, {BaseFailure, b.Failure}} {
		for _, kind := range []sim.HiddenKind{sim.HideGroups, sim.HideLaunchTemplates} {
			for _, name := range base.res.NewGroups {
				for from := 1; from <= base.res.Lookups[kind][name]; from++ {
					for calls := 1; calls <= 3; calls++ {
						out = append(out, Schedule{Family: Consistency, Base: base.name, Hide: &sim.Hiding{Kind: kind, From: from, Calls: calls, Prefix: name}})
					}
				}
			}
		}
	}
	return out
}

// races: a second release started at each state the success base visits,
// and after each of its invocations lost its Lambda.
func (b Bases) races() []Schedule {
	var out []Schedule
	var states []string
	for _, v := range b.Success.Visits {
		if !slices.Contains(states, v.State) {
			states = append(states, v.State)
		}
	}
	for _, s := range states {
		out = append(out, Schedule{Family: Race, Base: BaseSuccess, RaceAt: s})
	}
	for _, inv := range b.Success.Invocations {
		if inv.End > inv.First {
			out = append(out, Schedule{Family: Race, Base: BaseSuccess, RaceAfterLost: true, Faults: []Fault{mustTarget(b.Success, inv.End-1, LambdaDied)}})
		}
	}
	return out
}

// firstInvocation is the first invocation of task in a run.
func firstInvocation(res *Result, task string) (Invocation, bool) {
	for _, inv := range res.Invocations {
		if inv.Task == task && inv.End > inv.First {
			return inv, true
		}
	}
	return Invocation{}, false
}

// connects reports whether the n-th invocation (0-based) of a run made an
// AWS call: it worked in the target, so it assumed a role (or used cached
// credentials a cold Lambda does not have).
func connects(res *Result, n int) bool {
	inv := res.Invocations[n]
	for _, c := range res.Calls[inv.First:inv.End] {
		if !c.S3 {
			return true
		}
	}
	return false
}

// mustTarget is Target for indices the caller took from res.
func mustTarget(res *Result, i int, k Kind) Fault {
	f, err := Target(res, i, k)
	if err != nil {
		panic(err) // the index comes from res itself
	}
	return f
}

// newGroups names the groups (and launch templates) a release makes.
func newGroups(project, config, releaseID string, services []string) []string {
	out := make([]string, len(services))
	for i, svc := range services {
		out[i] = naming.GroupName(project, config, svc, releaseID)
	}
	return out
}
