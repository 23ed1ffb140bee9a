package sim

import (
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/ferryhq/ferry/internal/cloud"
)

// HiddenKind is a kind of resource eventual consistency can hide.
type HiddenKind string

// The kinds of resources Faults.Hide applies to.
const (
	HideGroups          HiddenKind = "auto-scaling-group"
	HideLaunchTemplates HiddenKind = "launch-template"
)

// Hiding is eventual consistency after a create, as AWS documents it for
// EC2 ("if you run a command to modify or describe the resource that you
// just created, its ID might not have propagated throughout the system,
// and you will get an error responding that the resource does not exist")
// and as Auto Scaling shows it right after CreateAutoScalingGroup:
// resources of Kind created while it is set are invisible to their
// lookups number From to From+Calls-1 (1-based, counted from the
// resource's creation). A lookup is any call that would find the resource
// by name or list it: every kind of describe (by name, by filter, all),
// and the calls that act on it by name (PutScalingPolicy, Suspend and
// ResumeProcesses, UpdateAutoScalingGroup, DeleteAutoScalingGroup,
// DeleteLaunchTemplate, and CreateAutoScalingGroup naming the launch
// template). A hidden resource is left out of listings and is "not found"
// to the calls that name it; it still exists (its instances run). Creates
// are authoritative: creating a hidden resource's name again is
// AlreadyExists (or, with its ClientToken, the resource itself).
type Hiding struct {
	Kind HiddenKind
	// From is the first lookup hidden (default 1); Calls how many in a
	// row.
	From, Calls int
	// Prefix, when set, limits the hiding to resources whose name begins
	// with it.
	Prefix string
}

// visibility is one resource's eventual consistency: its lookups so far
// and the window of lookups it is hidden from.
type visibility struct {
	lookups  int
	from, to int // hidden for lookups in [from, to)
}

// look counts a lookup and reports whether the resource is visible to it.
func (v *visibility) look() bool {
	v.lookups++
	return v.lookups < v.from || v.lookups >= v.to
}

// Hide hides the resources of h.Kind created from now on, as Hiding says.
// A Calls of zero turns hiding of that kind off.
func (f *Faults) Hide(h Hiding) error {
	if h.Kind != HideGroups && h.Kind != HideLaunchTemplates {
		return errors.New("sim: hiding needs a Kind (HideGroups or HideLaunchTemplates)")
	}
	if h.From < 0 || h.Calls < 0 {
		return errors.New("sim: hiding's From and Calls must not be negative")
	}
	if h.From == 0 {
		h.From = 1
	}
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	if f.hide == nil {
		f.hide = map[HiddenKind]Hiding{}
	}
	if h.Calls == 0 {
		delete(f.hide, h.Kind)
		return nil
	}
	f.hide[h.Kind] = h
	return nil
}

// HideNewGroups makes every ASG created from now on invisible to its next
// k lookups (Hide with From 1). Zero turns it off.
func (f *Faults) HideNewGroups(k int) {
	_ = f.Hide(Hiding{Kind: HideGroups, From: 1, Calls: max(k, 0)})
}

// visibilityOf is the visibility a resource of kind named name gets when
// it is created now. The caller holds w.mu.
func (f *Faults) visibilityOf(kind HiddenKind, name string) visibility {
	h, ok := f.hide[kind]
	if !ok || !strings.HasPrefix(name, h.Prefix) {
		return visibility{}
	}
	return visibility{from: h.From, to: h.From + h.Calls}
}

// Lookups returns, for the resources of kind in every account-region, how
// many lookups each has had since it was created, by name (the reliability
// matrix places its hiding windows with it).
func (w *World) Lookups(kind HiddenKind) map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]int{}
	for _, a := range w.accounts {
		for _, r := range a.regions {
			switch kind {
			case HideGroups:
				for _, g := range append(r.retiredGroups(), r.liveGroups()...) {
					out[g.name] += g.vis.lookups
				}
			case HideLaunchTemplates:
				for _, lt := range append(r.deletedLTs, r.liveLTs()...) {
					out[lt.name] += lt.vis.lookups
				}
			}
		}
	}
	return out
}

func (r *region) retiredGroups() []*group { return r.retired }

func (r *region) liveGroups() []*group {
	out := make([]*group, 0, len(r.groups))
	for _, n := range slices.Sorted(maps.Keys(r.groups)) {
		out = append(out, r.groups[n])
	}
	return out
}

func (r *region) liveLTs() []*launchTemplate {
	out := make([]*launchTemplate, 0, len(r.lts))
	for _, n := range slices.Sorted(maps.Keys(r.lts)) {
		out = append(out, r.lts[n])
	}
	return out
}

// visible counts a lookup of g and reports whether g is visible to it.
func (r *region) visible(g *group) bool { return g.vis.look() }

// ltVisible counts a lookup of lt and reports whether lt is visible to it.
func (r *region) ltVisible(lt *launchTemplate) bool { return lt.vis.look() }

// lookupGroup finds a group by name for a call that acts on it: a group
// that does not exist, is being deleted or is not visible yet is a
// ValidationError, as Auto Scaling answers.
func (r *region) lookupGroup(name string) (*group, error) {
	g := r.groups[name]
	if g == nil || !r.visible(g) || g.deleting {
		return nil, apiErrf(cloud.CodeValidation, "AutoScalingGroup name not found - AutoScalingGroup '%s' not found", name)
	}
	return g, nil
}
