package pipeline

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/release"
)

// Artifact returns what r promotes through a pipeline: a copy of r with
// every environment fact cleared (config name, account, region,
// qualifier; the subnets and alarms; each lifecycle hook's role and
// topic; each service's instance type, capacity bounds, subnets, security
// groups, load balancers, target groups, instance profile and alarms),
// and with what differs between two releases of the same content
// cleared too (release.ContentHash's fields), as well as each asset's
// local path: an asset is its SHA-256 and size. r is not changed.
func Artifact(r *release.Release) *release.Release {
	a := r.Clone()
	a.ConfigName, a.AccountID, a.Region, a.Qualifier, a.Subnets, a.Alarms = "", "", "", "", nil, nil
	for _, h := range a.Lifecycle {
		if h != nil {
			h.Role, h.SNS = "", ""
		}
	}
	for _, s := range a.Services {
		if s == nil {
			continue
		}
		s.InstanceType, s.Subnets, s.SecurityGroups, s.ELBs, s.TargetGroups = "", nil, nil, nil, nil
		s.Profile, s.Alarms = "", nil
		if s.Autoscaling != nil {
			s.Autoscaling.MinSize, s.Autoscaling.MaxSize = 0, 0
		}
	}
	for _, as := range a.Assets {
		if as != nil {
			as.Path = ""
		}
	}
	return a
}

// Digest names r's artifact: the canonical hash (release.ContentHash) of
// Artifact(r). Two releases with the same digest deploy the same
// software; only their environment facts may differ. Assets must be
// hashed (their sha256 set) for the digest to name their content.
func Digest(r *release.Release) (string, error) {
	if r == nil {
		return "", fmt.Errorf("digest: no release")
	}
	return release.ContentHash(Artifact(r))
}

// errNoStage is what Release says of a stage or target out of range.
var errNoStage = errors.New("no such stage or target")

// Release returns the release target j of stage i deploys when base is
// promoted: base's artifact with the stage's environment facts, that is
// the target's config name (TargetConfig), account, region and
// qualifier, then the stage's overrides, then ConfigVar replaced by the
// config name in every name that is an environment fact (expandNames).
// base is not changed. The release has base's digest
// (checked: parity by construction); it is not validated (see Check).
func (p *Pipeline) Release(base *release.Release, i, j int) (*release.Release, error) {
	if i < 0 || i >= len(p.Stages) || j < 0 || j >= len(p.Stages[i].Targets) {
		return nil, fmt.Errorf("stage %d, target %d: %w", i, j, errNoStage)
	}
	s, t := p.Stages[i], p.Stages[i].Targets[j]
	r := base.Clone()
	r.ConfigName, r.AccountID, r.Region, r.Qualifier = TargetConfig(s, t), t.AccountID, t.Region, t.Qualifier
	r.MoveFrom = nil // where base's config moved from: nothing of the target's
	if err := overrideAll(r, s.Overrides, i); err != nil {
		return nil, err
	}
	expandNames(r)
	want, err := Digest(base)
	if err != nil {
		return nil, err
	}
	if got, err := Digest(r); err != nil || got != want {
		// Only a field Artifact forgets to clear could do this: a bug.
		return nil, fmt.Errorf("stages[%d].targets[%d]: its release has digest %s, not the artifact's %s (%v)", i, j, got, want, err)
	}
	return r, nil
}

// overrideAll applies the overrides o of stage i to r.
func overrideAll(r *release.Release, o *Overrides, i int) error {
	if o == nil {
		return nil
	}
	if o.Subnets != nil {
		r.Subnets = slices.Clone(o.Subnets)
	}
	if o.Alarms != nil {
		r.Alarms = slices.Clone(o.Alarms)
	}
	for _, name := range slices.Sorted(maps.Keys(o.Lifecycle)) {
		h, ho := r.Lifecycle[name], o.Lifecycle[name]
		if h == nil {
			return fmt.Errorf("stages[%d].overrides.lifecycle: %q is no lifecycle hook of the release", i, name)
		}
		if ho != nil {
			h.Role = cmp.Or(ho.Role, h.Role)
			h.SNS = cmp.Or(ho.SNS, h.SNS)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(o.Services)) {
		svc := r.Services[name]
		if svc == nil {
			return fmt.Errorf("stages[%d].overrides.services: %q is no service of the release", i, name)
		}
		override(svc, o.Services[name])
	}
	return nil
}

// expandNames replaces ConfigVar by r's config name in every name that is
// an environment fact.
func expandNames(r *release.Release) {
	one := func(v string) string { return strings.ReplaceAll(v, ConfigVar, r.ConfigName) }
	list := func(l []string) {
		for k, v := range l {
			l[k] = one(v)
		}
	}
	list(r.Subnets)
	list(r.Alarms)
	for _, h := range r.Lifecycle {
		if h != nil {
			h.Role, h.SNS = one(h.Role), one(h.SNS)
		}
	}
	for _, svc := range r.Services {
		if svc != nil {
			list(svc.Subnets)
			list(svc.SecurityGroups)
			list(svc.ELBs)
			list(svc.TargetGroups)
			list(svc.Alarms)
			svc.Profile = one(svc.Profile)
		}
	}
}

// override applies a stage's overrides of one service.
func override(svc *release.Service, o *ServiceOverrides) {
	if o == nil {
		return
	}
	svc.InstanceType = cmp.Or(o.InstanceType, svc.InstanceType)
	svc.Profile = cmp.Or(o.Profile, svc.Profile)
	if o.MinSize != nil || o.MaxSize != nil {
		if svc.Autoscaling == nil {
			svc.Autoscaling = &release.Autoscaling{}
		}
		if o.MinSize != nil {
			svc.Autoscaling.MinSize = *o.MinSize
		}
		if o.MaxSize != nil {
			svc.Autoscaling.MaxSize = *o.MaxSize
		}
	}
	for _, f := range []struct {
		dst *[]string
		src []string
	}{{&svc.Subnets, o.Subnets}, {&svc.SecurityGroups, o.SecurityGroups}, {&svc.ELBs, o.ELBs}, {&svc.TargetGroups, o.TargetGroups}, {&svc.Alarms, o.Alarms}} {
		if f.src != nil {
			*f.dst = slices.Clone(f.src)
		}
	}
}

// blame adds the problem line of the release target j of stage s (the
// i-th) deploys to config, at the place that made it: the stage's
// override of the field when it sets it (the pipeline's), else the
// field of the release file (release.<path>, the release's).
func (p *problems) blame(s *Stage, i, j int, config, line string) {
	q := release.ParseProblem(line)
	at := fmt.Sprintf("target %s (config %s)", index(index("stages", i)+".targets", j), config)
	if path := overridePath(s, q.Path); path != "" {
		p.add(index("stages", i)+".overrides"+path, "makes the release of %s invalid: %s: %s", at, q.Path, q.Message)
		return
	}
	where := "release"
	if q.Path != "" {
		where += "." + q.Path
	}
	p.add(where, "in the release of %s: %s", at, q.Message)
}

// overridePath is the path, inside a stage's overrides, of what sets the
// release field at path (a release problem's: "services.web.instance_type",
// "services.web.autoscaling.min_size", "subnets[0]"), with a leading
// "."; "" when the stage's overrides do not set it.
func overridePath(s *Stage, path string) string {
	o := s.Overrides
	if o == nil || path == "" {
		return ""
	}
	if strings.HasPrefix(path, "services") {
		for name, so := range o.Services {
			svc := release.Field("services", name)
			if f, ok := strings.CutPrefix(path, svc+"."); ok && so != nil {
				if set := serviceOverride(so, f); set != "" {
					return "." + svc + "." + set
				}
			}
		}
		return ""
	}
	head, _, _ := strings.Cut(strings.SplitN(path, ".", 2)[0], "[")
	switch {
	case head == "subnets" && o.Subnets != nil, head == "alarms" && o.Alarms != nil, head == "lifecycle" && o.Lifecycle != nil:
		return "." + head
	}
	return ""
}

// serviceOverride is the field of so that sets the service's field f
// (a path inside the service), "" for none.
func serviceOverride(so *ServiceOverrides, f string) string {
	head, _, _ := strings.Cut(strings.SplitN(f, ".", 2)[0], "[")
	set := map[string]bool{
		"instance_type": so.InstanceType != "", "profile": so.Profile != "", "subnets": so.Subnets != nil,
		"security_groups": so.SecurityGroups != nil, "elbs": so.ELBs != nil, "target_groups": so.TargetGroups != nil,
		"alarms": so.Alarms != nil, "min_size": so.MinSize != nil, "max_size": so.MaxSize != nil,
	}
	if head == "autoscaling" {
		for _, k := range []string{"min_size", "max_size"} {
			if set[k] && (f == "autoscaling" || strings.HasPrefix(f, "autoscaling."+k)) {
				return k
			}
		}
		return ""
	}
	if set[head] {
		return head
	}
	return ""
}

// Check checks base can be promoted through the pipeline: it is the
// pipeline's project's; its config name, when set, is one the pipeline
// deploys; every service a stage overrides is one of its services; and
// the release every target of every stage deploys (Release) is valid
// (release.Validate, as a release file). The error is an *InvalidError
// listing every problem, each release's prefixed with the stage and
// target that deploys it.
func (p *Pipeline) Check(base *release.Release) error {
	if err := p.checkBase(base); err != nil {
		return err
	}
	var probs problems
	for i, s := range p.Stages {
		for j := range s.Targets {
			r, err := p.Release(base, i, j)
			if err != nil {
				return err
			}
			if err := r.Validate(false); err != nil {
				for _, line := range problemsOf(err) {
					probs.blame(s, i, j, r.ConfigName, line)
				}
			}
		}
	}
	return probs.err()
}

// checkBase checks what of base the pipeline itself names: its project,
// its config name, and the services the stages override.
func (p *Pipeline) checkBase(base *release.Release) error {
	var probs problems
	if base.ProjectName != p.ProjectName {
		probs.add("release.project_name", "%q is not the pipeline's project %q", base.ProjectName, p.ProjectName)
	}
	var configs []string
	for _, s := range p.Stages {
		for _, t := range s.Targets {
			configs = append(configs, TargetConfig(s, t))
		}
	}
	if base.ConfigName != "" && !slices.Contains(configs, base.ConfigName) {
		probs.add("release.config_name", "%q is no config of the pipeline (%s): each stage sets its own", base.ConfigName, strings.Join(configs, ", "))
	}
	for i, s := range p.Stages {
		if s.Overrides == nil {
			continue
		}
		for _, name := range slices.Sorted(maps.Keys(s.Overrides.Services)) {
			if base.Services[name] == nil {
				probs.add(release.Field(index("stages", i)+".overrides.services", name), "no service of the release")
			}
		}
		for _, name := range slices.Sorted(maps.Keys(s.Overrides.Lifecycle)) {
			if base.Lifecycle[name] == nil {
				probs.add(release.Field(index("stages", i)+".overrides.lifecycle", name), "no lifecycle hook of the release")
			}
		}
	}
	return probs.err()
}

// problemsOf lists the problems of a release's validation error.
func problemsOf(err error) []string {
	var bad *failure.BadReleaseError
	if errors.As(err, &bad) {
		return bad.Problems
	}
	return []string{err.Error()}
}
