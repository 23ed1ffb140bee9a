package pipeline

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/release"
)

// Pipeline is a pipeline file: a project and its ordered stages.
type Pipeline struct {
	ProjectName string `json:"project_name"`
	// Description says what the pipeline is, for people.
	Description string   `json:"description,omitempty"`
	Stages      []*Stage `json:"stages"`
}

// Stage is one environment of a pipeline: a config deployed to every
// target at once (a wave), once its gates let it.
type Stage struct {
	ConfigName string    `json:"config_name"`
	Targets    []*Target `json:"targets"`
	// Overrides are the stage's environment facts that differ from the
	// release's.
	Overrides *Overrides `json:"overrides,omitempty"`
	// Gates are what must hold before the stage deploys, besides the
	// stage before it having succeeded with the same artifact.
	Gates *Gates `json:"gates,omitempty"`
}

// Target is where a stage deploys: an account, a region and a bootstrap
// qualifier. A stage of more than one target names each: target Name of
// stage C deploys config C-Name (ferry's records and lock are per
// project-config, and the targets of a wave deploy at once).
type Target struct {
	Name      string `json:"name,omitempty"`
	AccountID string `json:"account_id"`
	Region    string `json:"region"`
	Qualifier string `json:"qualifier,omitempty"`
}

// Overrides are a stage's environment facts: the only fields of a
// release a stage may set differently from the others. Lists replace the
// release's; names may use {{CONFIG_NAME}} (the target's config name).
//
// Besides capacity, instance types and the names of subnets, security
// groups and load balancers, the names ferry's permissions tie to one
// project-config are environment facts too: a deploy role session may
// pass only roles (instance profiles, lifecycle hook roles) under its own
// project-config's path, and use only alarms of its own, and IAM names
// are unique in an account, so two configs in one account need two.
type Overrides struct {
	Subnets   []string                     `json:"subnets,omitempty"`
	Alarms    []string                     `json:"alarms,omitempty"`
	Lifecycle map[string]*HookOverrides    `json:"lifecycle,omitempty"`
	Services  map[string]*ServiceOverrides `json:"services,omitempty"`
}

// HookOverrides are one lifecycle hook's environment facts in a stage.
type HookOverrides struct {
	Role string `json:"role,omitempty"`
	SNS  string `json:"sns,omitempty"`
}

// ServiceOverrides are one service's environment facts in a stage.
type ServiceOverrides struct {
	InstanceType   string   `json:"instance_type,omitempty"`
	MinSize        *int     `json:"min_size,omitempty"`
	MaxSize        *int     `json:"max_size,omitempty"`
	Subnets        []string `json:"subnets,omitempty"`
	SecurityGroups []string `json:"security_groups,omitempty"`
	ELBs           []string `json:"elbs,omitempty"`
	TargetGroups   []string `json:"target_groups,omitempty"`
	Profile        string   `json:"profile,omitempty"`
	Alarms         []string `json:"alarms,omitempty"`
}

// Gates are what must hold before a stage deploys, besides the stage
// before it having succeeded with the same artifact.
type Gates struct {
	// SoakSeconds is how long after the stage before it succeeded the
	// stage waits (never on the first stage).
	SoakSeconds int `json:"soak_seconds,omitempty"`
	// Alarms are CloudWatch alarms that must not be in ALARM in any
	// target of the stage before: the artifact is well where it runs.
	Alarms []string `json:"alarms,omitempty"`
	// Approval makes a person approve the stage (ferry pipeline approve).
	Approval bool `json:"approval,omitempty"`
	// Approvers, with Approval, are who may approve: IAM principal ARN
	// patterns (MayApprove); empty, any principal whose proof the
	// deployer accepts.
	Approvers []string `json:"approvers,omitempty"`
	// SeparateApprover, with Approval, requires the approver to be
	// another principal than who started the promotion.
	SeparateApprover bool `json:"separate_approver,omitempty"`
}

// ConfigVar is the variable every name that is an environment fact may
// use, in a stage's overrides or in the release itself: the config name
// of the target deployed.
const ConfigVar = "{{CONFIG_NAME}}"

// InvalidError says a pipeline file, or a release promoted through it,
// is not valid: every problem, each "path: message", sorted.
type InvalidError struct {
	Problems []string
}

func (e *InvalidError) Error() string {
	if len(e.Problems) == 1 {
		return "bad pipeline: " + e.Problems[0]
	}
	return fmt.Sprintf("bad pipeline: %d problems:\n  %s", len(e.Problems), strings.Join(e.Problems, "\n  "))
}

// overridable is what the decoder's refusal of another field of an
// override adds.
const overridable = "a stage may override only environment facts: subnets, alarms, each lifecycle hook's role and sns, and, per service, instance_type, min_size, max_size, subnets, security_groups, elbs, target_groups, profile and alarms; the rest is the artifact, the same in every stage"

// Decode decodes and validates a pipeline file. The error is an
// *InvalidError listing every problem.
func Decode(data []byte) (*Pipeline, error) {
	var p Pipeline
	if probs := release.DecodeDocument(data, &p, "pipeline", limits.MaxPipelineBytes); len(probs) > 0 {
		for i, pr := range probs {
			if strings.Contains(pr, ".overrides") && strings.Contains(pr, ": unknown field") {
				probs[i] = pr + "; " + overridable
			}
		}
		return nil, &InvalidError{Problems: probs}
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &p, nil
}

// problems collects "path: message" lines.
type problems []string

func (p *problems) add(path, format string, args ...any) {
	*p = append(*p, path+": "+fmt.Sprintf(format, args...))
}

func (p *problems) check(path, why string) {
	if why != "" {
		p.add(path, "%s", why)
	}
}

func (p problems) err() error {
	if len(p) == 0 {
		return nil
	}
	out := slices.Clone(p)
	slices.Sort(out)
	return &InvalidError{Problems: slices.Compact(out)}
}

func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// Validate checks the pipeline and returns nil or an *InvalidError
// listing every problem.
func (p *Pipeline) Validate() error {
	var probs problems
	probs.check("project_name", release.CheckProjectName(p.ProjectName))
	if utf8.RuneCountInString(p.Description) > limits.MaxDescriptionLen {
		probs.add("description", "must be at most %d characters", limits.MaxDescriptionLen)
	}
	switch n := len(p.Stages); {
	case n == 0:
		probs.add("stages", "at least one stage is required")
	case n > limits.MaxStages:
		probs.add("stages", "at most %d stages, not %d", limits.MaxStages, n)
	}
	configs := map[string]string{} // config name -> path of the target deploying it
	for i, s := range p.Stages {
		spath := index("stages", i)
		if s == nil {
			probs.add(spath, "must be an object")
			continue
		}
		stage(&probs, spath, i, s, configs)
	}
	return probs.err()
}

// stage checks stage i, s, at spath; configs maps each config name a
// target checked so far deploys to that target's path.
func stage(probs *problems, spath string, i int, s *Stage, configs map[string]string) {
	probs.check(spath+".config_name", release.CheckConfigName(s.ConfigName))
	switch n := len(s.Targets); {
	case n == 0:
		probs.add(spath+".targets", "at least one target is required")
	case n > limits.MaxWaveTargets:
		probs.add(spath+".targets", "at most %d targets, not %d", limits.MaxWaveTargets, n)
	}
	for j, t := range s.Targets {
		tpath := index(spath+".targets", j)
		if t == nil {
			probs.add(tpath, "must be an object")
			continue
		}
		target(probs, tpath, t, len(s.Targets))
		targetConfig(probs, tpath, s, t, configs)
	}
	overrides(probs, spath+".overrides", s.Overrides)
	gates(probs, spath+".gates", i, s.Gates)
}

// targetConfig checks the config target t of stage s deploys, once its
// parts are valid: a valid config name no other target deploys.
func targetConfig(probs *problems, tpath string, s *Stage, t *Target, configs map[string]string) {
	partsValid := release.CheckConfigName(s.ConfigName) == "" && (t.Name == "" || release.CheckConfigName(t.Name) == "")
	if !partsValid || (t.Name == "" && len(s.Targets) > 1) {
		return // reported as the parts' problems
	}
	config := TargetConfig(s, t)
	if why := release.CheckConfigName(config); why != "" {
		probs.add(tpath, "its config name %q %s", config, why)
	}
	if other, dup := configs[config]; dup {
		probs.add(tpath, "deploys config %q, as %s does: each target of a pipeline deploys a config of its own", config, other)
		return
	}
	configs[config] = tpath
}

// gates checks the gates g of stage i at gpath.
func gates(probs *problems, gpath string, i int, g *Gates) {
	if g == nil {
		return
	}
	switch {
	case g.SoakSeconds < 0 || g.SoakSeconds > limits.MaxSoakSeconds:
		probs.add(gpath+".soak_seconds", "must be between 0 and %d seconds", limits.MaxSoakSeconds)
	case g.SoakSeconds > 0 && i == 0:
		probs.add(gpath+".soak_seconds", "the first stage has no stage before it to soak after")
	}
	if len(g.Alarms) > 0 && i == 0 {
		probs.add(gpath+".alarms", "the first stage has no stage before it whose alarms to check")
	}
	refs(probs, gpath+".alarms", g.Alarms, release.CheckRef)
	approvers(probs, gpath, g)
}

func target(probs *problems, tpath string, t *Target, wave int) {
	switch {
	case t.Name == "" && wave > 1:
		probs.add(tpath+".name", "required: a stage of more than one target names each (target NAME of stage CONFIG deploys config CONFIG-NAME)")
	case t.Name != "":
		probs.check(tpath+".name", release.CheckConfigName(t.Name))
	}
	probs.check(tpath+".account_id", release.CheckAccountID(t.AccountID))
	probs.check(tpath+".region", release.CheckRegion(t.Region))
	if t.Qualifier != "" {
		probs.check(tpath+".qualifier", release.CheckQualifier(t.Qualifier))
	}
}

// overrides checks a stage's overrides o at opath.
func overrides(probs *problems, opath string, o *Overrides) {
	if o == nil {
		return
	}
	refs(probs, opath+".subnets", o.Subnets, release.CheckRef)
	refs(probs, opath+".alarms", o.Alarms, release.CheckRef)
	for _, name := range slices.Sorted(maps.Keys(o.Lifecycle)) {
		hp := release.Field(opath+".lifecycle", name)
		h := o.Lifecycle[name]
		if h == nil {
			probs.add(hp, "must be an object")
			continue
		}
		optional(probs, hp+".role", h.Role, release.CheckRoleName)
		optional(probs, hp+".sns", h.SNS, release.CheckSNSTopic)
	}
	for _, name := range slices.Sorted(maps.Keys(o.Services)) {
		sp := release.Field(opath+".services", name)
		if why := release.CheckServiceName(name); why != "" {
			probs.add(sp, "service name %s", why)
		}
		if so := o.Services[name]; so != nil {
			serviceOverrides(probs, sp, so)
		} else {
			probs.add(sp, "must be an object")
		}
	}
}

// serviceOverrides checks one service's overrides so at sp.
func serviceOverrides(probs *problems, sp string, so *ServiceOverrides) {
	if so.InstanceType != "" {
		probs.check(sp+".instance_type", release.CheckInstanceType(so.InstanceType))
	}
	for _, f := range []struct {
		name string
		v    *int
	}{{"min_size", so.MinSize}, {"max_size", so.MaxSize}} {
		if f.v != nil && (*f.v < 1 || *f.v > limits.MaxInstances) {
			probs.add(sp+"."+f.name, "must be between 1 and %d", limits.MaxInstances)
		}
	}
	if so.MinSize != nil && so.MaxSize != nil && *so.MaxSize < *so.MinSize {
		probs.add(sp+".max_size", "must be at least min_size (%d)", *so.MinSize)
	}
	refs(probs, sp+".subnets", so.Subnets, release.CheckRef)
	refs(probs, sp+".security_groups", so.SecurityGroups, release.CheckRef)
	refs(probs, sp+".elbs", so.ELBs, func(s string) string { return checkTemplate(s, release.CheckELB) })
	refs(probs, sp+".target_groups", so.TargetGroups, release.CheckRef)
	optional(probs, sp+".profile", so.Profile, release.CheckIAMName)
	refs(probs, sp+".alarms", so.Alarms, release.CheckRef)
}

// optional checks name, when set, with check (checkTemplate).
func optional(probs *problems, path, name string, check func(string) string) {
	if name != "" {
		probs.check(path, checkTemplate(name, check))
	}
}

// checkTemplate checks with check the shape of a name that may use
// ConfigVar, with a one-letter config name in its place: each target's
// release checks the name it deploys, length included.
func checkTemplate(s string, check func(string) string) string {
	return check(strings.ReplaceAll(s, ConfigVar, "c"))
}

func refs(probs *problems, lpath string, list []string, check func(string) string) {
	if len(list) > limits.MaxListLen {
		probs.add(lpath, "at most %d entries, not %d", limits.MaxListLen, len(list))
	}
	seen := map[string]bool{}
	for i, s := range list {
		if seen[s] {
			probs.add(index(lpath, i), "duplicate %q", s)
			continue
		}
		seen[s] = true
		probs.check(index(lpath, i), check(s))
	}
}

// TargetConfig is the config name target t of stage s deploys: the
// stage's, or for a named target, the stage's and its name joined by
// '-'.
func TargetConfig(s *Stage, t *Target) string {
	if t.Name == "" {
		return s.ConfigName
	}
	return s.ConfigName + "-" + t.Name
}
