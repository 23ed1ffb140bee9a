package chaos

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/ledger"
)

// Records is what ferry's records of one project-config say at the end
// of a scenario: predicates (c) and (d) check them against the world.
type Records struct {
	Project, Config string
	// Current is the current record (nil: none).
	Current *ledger.Current
	// Named maps each group a record names to the record: "current",
	// "standby <release>", "deleting <release>" (in the release's
	// environment or, a move's, another).
	Named map[string]string
	// Leftovers are the outcomes' leftovers ("auto scaling group X",
	// "launch template X", "alarms X/*").
	Leftovers []string
}

// ReadRecords reads the records of project/config that name groups: the
// current record, and for each release id the standby and deleting
// records and the outcome's leftovers.
func ReadRecords(ctx context.Context, l *ledger.Ledger, project, config string, ids []string) (Records, error) {
	rec := Records{Project: project, Config: config, Named: map[string]string{}}
	cur, found, err := l.GetCurrent(ctx, project, config)
	if err != nil {
		return rec, fmt.Errorf("chaos: current record: %w", err)
	}
	if found {
		rec.Current = &cur
		for _, g := range cur.Groups {
			rec.Named[g.Group] = "current"
		}
	}
	for _, id := range ids {
		sb, found, err := l.GetStandby(ctx, project, config, id)
		if err != nil {
			return rec, fmt.Errorf("chaos: standby record of %s: %w", id, err)
		}
		for _, g := range sb.Groups {
			if found {
				rec.Named[g.Name] = "standby " + id
			}
		}
		del, found, err := l.GetDeleting(ctx, project, config, id)
		if err != nil {
			return rec, fmt.Errorf("chaos: deleting record of %s: %w", id, err)
		}
		for _, g := range del.Groups {
			if found {
				rec.Named[g] = "deleting " + id
			}
		}
		for _, e := range del.Elsewhere {
			for _, g := range e.Groups {
				rec.Named[g] = "deleting " + id + " in " + e.Target.Describe()
			}
		}
		o, found, err := l.GetOutcome(ctx, project, config, id)
		if err != nil {
			return rec, fmt.Errorf("chaos: outcome of %s: %w", id, err)
		}
		if found {
			rec.Leftovers = append(rec.Leftovers, o.Leftovers...)
		}
	}
	return rec, nil
}

// names says whether the records name a resource of kind ("auto scaling
// group", "launch template", "alarms") called name.
func (r Records) names(kind, name string) bool {
	group := name
	if kind == "alarms" {
		group = groupOfAlarm(name)
	}
	if _, ok := r.Named[group]; ok {
		return true
	}
	want := kind + " " + name
	if kind == "alarms" {
		want = "alarms " + group + "/*"
	}
	return slices.Contains(r.Leftovers, want)
}

// CheckNamed is (c): every group, launch template and alarm of the world
// tagged as ferry's for the records' project-config is named by a
// record; a group AWS is deleting (its deletion accepted, gone within
// seconds) needs none.
func CheckNamed(at time.Time, snap sim.Snapshot, rec Records) []Violation {
	var out []Violation
	miss := func(kind, name string) {
		out = append(out, Violation{Pred: PredNamed, At: at, What: fmt.Sprintf("%s %s is ferry's but no record names it", kind, name)})
	}
	for _, a := range snap.Accounts {
		for _, g := range a.Groups {
			if ours(g.Tags, rec.Project, rec.Config) && g.Status == "" && !rec.names("auto scaling group", g.Name) {
				miss("auto scaling group", g.Name)
			}
		}
		for _, lt := range a.LaunchTemplates {
			if ours(lt.Tags, rec.Project, rec.Config) && !rec.names("launch template", lt.Name) {
				miss("launch template", lt.Name)
			}
		}
		for _, al := range a.Alarms {
			if ours(al.Tags, rec.Project, rec.Config) && !rec.names("alarms", al.Name) {
				miss("alarm", al.Name)
			}
		}
	}
	return out
}

// CheckClaims is (d): the current record names the release the model
// says serves (none after a destroy: serving[0]) or one whose execution
// ended FailureDirty past its point of no return (the rest of serving),
// and each of its groups exists and, unless the world meddled with it
// (meddled), serves: attached to every load balancer and target group its
// service names (rel: the current release as submitted), with a healthy
// instance in each.
func CheckClaims(at time.Time, snap sim.Snapshot, rec Records, serving []string, rel *release.Release, meddled map[string]bool) []Violation {
	var out []Violation
	bad := func(format string, args ...any) {
		out = append(out, Violation{Pred: PredClaims, At: at, What: fmt.Sprintf(format, args...)})
	}
	cur := ""
	if rec.Current != nil {
		cur = rec.Current.ReleaseID
	}
	if !slices.Contains(serving, cur) {
		bad("the current record names release %q; the executions' ends say %q serves", cur, serving[0])
		return out
	}
	if rec.Current == nil {
		return out
	}
	byName := map[string]sim.GroupSnapshot{}
	for _, a := range snap.Accounts {
		for _, g := range a.Groups {
			byName[g.Name] = g
		}
	}
	for _, cg := range rec.Current.Groups {
		g, ok := byName[cg.Group]
		switch {
		case !ok || g.Status != "":
			bad("the current record's group %s (service %s) does not exist", cg.Group, cg.Service)
		case !meddled[cg.Group] && rel != nil && rel.Services[cg.Service] != nil:
			svc := rel.Services[cg.Service]
			for _, lb := range append(slices.Clone(svc.ELBs), svc.TargetGroups...) {
				if what := serves(g, lb); what != "" {
					bad("the current record's group %s %s %s", cg.Group, what, lb)
				}
			}
		}
	}
	return out
}

// serves says how g fails to serve in the load balancer or target group
// lb ("": it serves there).
func serves(g sim.GroupSnapshot, lb string) string {
	if !slices.Contains(g.LoadBalancers, lb) && !slices.Contains(g.TargetGroups, lb) {
		return "is not attached to"
	}
	if !servesIn(g, lb) {
		return "has no healthy instance in"
	}
	return ""
}

func servesIn(g sim.GroupSnapshot, lb string) bool {
	for _, i := range g.Instances {
		if i.LB[lb] == "healthy" && !strings.HasPrefix(i.Lifecycle, "Terminating") {
			return true
		}
	}
	return false
}
