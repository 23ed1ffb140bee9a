package release

import (
	"fmt"
	"math"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/naming"
)

// Enumerations.
var (
	// PolicyTypes are the scaling policy types.
	PolicyTypes = []string{"cpu_scale_up", "cpu_scale_down"}
	// Transitions are the lifecycle hook transitions.
	Transitions = []string{TransitionLaunching, TransitionTerminating}
	// EBSVolumeTypes are the EBS volume types.
	EBSVolumeTypes = []string{"gp2", "gp3", "io1", "io2", "st1", "sc1", "standard"}
)

// Bounds of numeric fields not in package limits because they are AWS's.
const (
	minHeartbeat     = 30
	maxHeartbeat     = 7200
	maxEBSVolumeSize = 65536 // the largest of ebsVolumeSizes
	maxPolicyWindow  = 86400 // evaluation_periods * period, seconds
	maxCooldown      = 86400
	maxThreshold     = 100
)

// ebsVolumeSizes are the sizes, in GiB, EC2 accepts for a launch
// template's volume of each type (EC2 API Reference,
// LaunchTemplateEbsBlockDeviceRequest, VolumeSize): gp2 and gp3 1 to
// 16,384, io1 4 to 16,384, io2 4 to 65,536, st1 and sc1 125 to 16,384,
// standard 1 to 1,024.
var ebsVolumeSizes = map[string]struct{ min, max int }{
	"gp2": {1, 16384}, "gp3": {1, 16384}, "io1": {4, 16384}, "io2": {4, maxEBSVolumeSize},
	"st1": {125, 16384}, "sc1": {125, 16384}, "standard": {1, 1024},
}

// Validate checks the release with defaults applied (on a copy; r is not
// changed) and returns nil or a *failure.BadReleaseError listing every
// problem, each "path: message", sorted.
//
// uploaded=false checks a release file: assets need a path, and a
// user_data of UserDataFileMarker is accepted (the client replaces it).
// uploaded=true checks a release as the client uploaded it: release_id,
// created_at and every asset's sha256 and size must be set and well
// formed, and no user_data may still be the marker.
func (r *Release) Validate(uploaded bool) error {
	p := &problems{}
	if r == nil {
		p.add("", "missing")
		return p.err()
	}
	c := r.Clone()
	c.ApplyDefaults()
	v := validator{r: c, p: p, uploaded: uploaded}
	v.release()
	return p.err()
}

type validator struct {
	r        *Release
	p        *problems
	uploaded bool
}

func (v *validator) release() {
	r, p := v.r, v.p
	if why := checkProject(r.ProjectName); why != "" {
		p.add("project_name", "%s", why)
	}
	v.ref("config_name", r.ConfigName, CheckConfigName)
	if r.ReleaseID != "" || v.uploaded {
		if why := checkReleaseID(r.ReleaseID); why != "" {
			p.add("release_id", "%s", why)
		}
	}
	v.lineage()
	if v.uploaded && r.CreatedAt.IsZero() {
		p.add("created_at", "required")
	}
	if r.CreatedBy != "" {
		switch {
		case len(r.CreatedBy) > MaxCreatedByBytes:
			p.add("created_by", "must be at most %d bytes", MaxCreatedByBytes)
		case !IsDisplayName(r.CreatedBy):
			p.add("created_by", "must be printable text: no control or format characters, no leading, trailing or repeated spaces")
		}
	}
	v.identity()
	v.describedBy()
	for _, f := range []struct {
		path, value string
		check       func(string) string
	}{{"account_id", r.AccountID, CheckAccountID}, {"region", r.Region, CheckRegion}, {"qualifier", r.Qualifier, CheckQualifier}} {
		if f.value != "" {
			v.ref(f.path, f.value, f.check)
		}
	}
	v.moveFrom()
	v.refs("subnets", r.Subnets, checkRef)
	v.refs("alarms", r.Alarms, checkRef)
	if r.AMI != "" {
		v.ref("ami", r.AMI, checkRef)
	}
	if r.Timeout < 1 || r.Timeout > int(limits.MaxTimeout.Seconds()) {
		p.add("timeout", "must be between 1 and %d seconds", int(limits.MaxTimeout.Seconds()))
	}
	if r.BakeSeconds < 0 || r.BakeSeconds > limits.MaxBakeSeconds {
		p.add("bake_seconds", "must be between 0 and %d seconds", limits.MaxBakeSeconds)
	}
	v.stableSeconds("stable_seconds", r.StableSeconds)
	v.lifecycle()
	v.assets()
	v.analysis()

	if r.Destroy {
		v.destroy()
		return
	}
	switch n := len(r.Services); {
	case n == 0:
		p.add("services", "at least one service is required")
	case n > limits.MaxServices:
		p.add("services", "at most %d services, not %d", limits.MaxServices, n)
	}
	for _, name := range r.ServiceNames() {
		v.service(name)
	}
	v.remove()
	v.userData()
}

// lineage checks what the release says of where it comes from and what
// the reconciler may do with it: reconcile's mode, and the release a
// heal or a rollback deploys again (another release's id).
func (v *validator) lineage() {
	r, p := v.r, v.p
	switch r.Reconcile {
	case "", ReconcileRecord, ReconcileHeal:
	default:
		p.add("reconcile", "must be %q or %q, not %q", ReconcileRecord, ReconcileHeal, r.Reconcile)
	}
	if r.PromotionOf != "" {
		if why := CheckConfigName(r.PromotionOf); why != "" {
			p.add("promotion_of", "%s", why)
		}
		if r.HealOf != "" || r.RollbackOf != "" {
			p.add("promotion_of", "a promoted release is no heal or rollback")
		}
	}
	for _, f := range []struct{ name, id string }{{"heal_of", r.HealOf}, {"rollback_of", r.RollbackOf}} {
		if f.id == "" {
			continue
		}
		if why := checkReleaseID(f.id); why != "" {
			p.add(f.name, "%s", why)
		} else if f.id == r.ReleaseID {
			p.add(f.name, "must name another release than this one")
		}
	}
}

// destroy checks a destroy release deploys nothing.
func (v *validator) destroy() {
	r := v.r
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"services", len(r.Services) > 0},
		{"ami", r.AMI != ""},
		{"subnets", len(r.Subnets) > 0},
		{"user_data", r.UserData != ""},
		{"assets", len(r.Assets) > 0},
		{"lifecycle", len(r.Lifecycle) > 0},
		{"alarms", len(r.Alarms) > 0},
		{"remove", len(r.Remove) > 0},
		{"bake_seconds", r.BakeSeconds > 0},
		{"analysis", r.Analysis != nil},
		{"move_from", r.MoveFrom != nil},
	} {
		if f.set {
			v.p.add(f.name, "must be absent from a destroy, which deploys nothing and retires every group of the config")
		}
	}
}

// detach checks the load balancers a service leaves: names, none twice,
// none that the service still names in elbs or target_groups.
func (v *validator) detach(dpath string, s *Service) {
	if s.Detach == nil {
		return
	}
	for _, l := range []struct {
		key         string
		list, keeps []string
		check       func(string) string
	}{
		{"elbs", s.Detach.ELBs, s.ELBs, checkELB},
		{"target_groups", s.Detach.TargetGroups, s.TargetGroups, checkRef},
	} {
		lpath := field(dpath, l.key)
		v.refs(lpath, l.list, l.check)
		for i, name := range l.list {
			if slices.Contains(l.keeps, name) {
				v.p.add(index(lpath, i), "%q is also in the service's %s: a service cannot keep and leave it", name, l.key)
			}
		}
	}
}

// moveFrom checks the environment a move names as the config's
// current one: an account and a region, and a qualifier when its
// bootstrap has one.
func (v *validator) moveFrom() {
	m := v.r.MoveFrom
	if m == nil {
		return
	}
	v.ref("move_from.account_id", m.AccountID, CheckAccountID)
	v.ref("move_from.region", m.Region, CheckRegion)
	if m.Qualifier != "" {
		v.ref("move_from.qualifier", m.Qualifier, CheckQualifier)
	}
}

// remove checks the services the release removes: service names, none
// twice, none that the release deploys.
func (v *validator) remove() {
	if len(v.r.Remove) > limits.MaxServices {
		v.p.add("remove", "at most %d services, not %d", limits.MaxServices, len(v.r.Remove))
	}
	seen := map[string]bool{}
	for i, name := range v.r.Remove {
		ipath := index("remove", i)
		switch why := checkSimple(name, limits.MaxServiceLen); {
		case why != "":
			v.p.add(ipath, "service name %s", why)
		case seen[name]:
			v.p.add(ipath, "duplicate %q", name)
		case hasKey(v.r.Services, name):
			v.p.add(ipath, "%q is a service of this release: a release cannot deploy and remove it", name)
		}
		seen[name] = true
	}
}

// describedBy checks the release's description and version.
func (v *validator) describedBy() {
	r, p := v.r, v.p
	switch d := r.Description; {
	case utf8.RuneCountInString(d) > limits.MaxDescriptionLen:
		p.add("description", "must be at most %d characters, not %d", limits.MaxDescriptionLen, utf8.RuneCountInString(d))
	case !descriptionRe.MatchString(d):
		p.add("description", "must not contain control characters other than newline and tab")
	}
	if r.Version != "" && (len(r.Version) > limits.MaxVersionLen || !versionRe.MatchString(r.Version)) {
		p.add("version", "must be 1 to %d letters, digits, '.', '_', '+' and '-', starting with a letter or digit (a build number or a git commit)", limits.MaxVersionLen)
	}
}

// identity bounds the identity proof's shape; what it proves is package
// identity's to check.
func (v *validator) identity() {
	id := v.r.Identity
	if id == nil {
		return
	}
	switch {
	case id.Method == "":
		v.p.add("identity.method", "required")
	case len(id.Method) > 16:
		v.p.add("identity.method", "must be at most 16 characters")
	}
	switch {
	case id.URL == "":
		v.p.add("identity.url", "required")
	case len(id.URL) > limits.MaxIdentityURLLen:
		v.p.add("identity.url", "must be at most %d characters", limits.MaxIdentityURLLen)
	}
	if len(id.Headers) > limits.MaxIdentityHeaders {
		v.p.add("identity.headers", "at most %d headers, not %d", limits.MaxIdentityHeaders, len(id.Headers))
	}
	for k, val := range id.Headers {
		if len(k) > limits.MaxIdentityHeaderLen || len(val) > limits.MaxIdentityHeaderLen || !headerRe.MatchString(k) || (val != "" && !headerRe.MatchString(val)) {
			v.p.add(field("identity.headers", k), "header names and values are printable ASCII of at most %d characters", limits.MaxIdentityHeaderLen)
		}
	}
}

func (v *validator) lifecycle() {
	if n := len(v.r.Lifecycle); n > limits.MaxLifecycleHooks {
		v.p.add("lifecycle", "at most %d hooks, not %d", limits.MaxLifecycleHooks, n)
	}
	for name, h := range v.r.Lifecycle {
		path := field("lifecycle", name)
		switch {
		case len(name) > maxHookNameLen:
			v.p.add(path, "hook name must be at most %d characters", maxHookNameLen)
		case !hookNameRe.MatchString(name):
			v.p.add(path, "hook name must be letters, digits, '_' and '-', starting with a letter or digit")
		}
		if h == nil {
			v.p.add(path, "must be an object")
			continue
		}
		if !slices.Contains(Transitions, h.Transition) {
			v.p.add(field(path, "transition"), "must be one of %s", strings.Join(Transitions, ", "))
		}
		v.ref(field(path, "role"), h.Role, checkRoleName)
		v.ref(field(path, "sns"), h.SNS, checkSNSTopic)
		if h.HeartbeatTimeout < minHeartbeat || h.HeartbeatTimeout > maxHeartbeat {
			v.p.add(field(path, "heartbeat_timeout"), "must be between %d and %d seconds", minHeartbeat, maxHeartbeat)
		}
	}
}

func (v *validator) assets() {
	if n := len(v.r.Assets); n > limits.MaxAssets {
		v.p.add("assets", "at most %d assets, not %d", limits.MaxAssets, n)
	}
	for name, a := range v.r.Assets {
		v.asset(name, a)
	}
}

// asset checks one asset: its name, and its path (in a file) or the
// digest and size the client filled in (once uploaded).
func (v *validator) asset(name string, a *Asset) {
	apath := field("assets", name)
	if why := checkAssetName(name); why != "" {
		v.p.add(apath, "%s", why)
	}
	if a == nil {
		v.p.add(apath, "must be an object")
		return
	}
	if a.Path != "" || !v.uploaded {
		if why := checkAssetPath(a.Path); why != "" {
			v.p.add(field(apath, "path"), "%s", why)
		}
	}
	switch {
	case a.SHA256 == "" && v.uploaded:
		v.p.add(field(apath, "sha256"), "required")
	case a.SHA256 != "" && !sha256Re.MatchString(a.SHA256):
		v.p.add(field(apath, "sha256"), "must be 64 lowercase hex digits")
	}
	switch {
	case a.Size == 0 && v.uploaded:
		v.p.add(field(apath, "size"), "required (an asset may not be empty)")
	case a.Size < 0 || a.Size > limits.MaxAssetBytes:
		v.p.add(field(apath, "size"), "must be between 1 and %d bytes", limits.MaxAssetBytes)
	}
}

// checkAssetName returns why name is not a valid asset name, or "".
func checkAssetName(name string) string {
	switch {
	case len(name) > maxAssetNameLen:
		return fmt.Sprintf("asset name must be at most %d characters", maxAssetNameLen)
	case !assetNameRe.MatchString(name) || strings.Contains(name, ".."):
		return "asset name must be letters, digits, '.', '_' and '-', starting with a letter or digit, without \"..\""
	}
	return ""
}

// checkAssetPath returns why p is not a safe relative asset path, or "".
func checkAssetPath(p string) string {
	switch {
	case p == "":
		return "required"
	case len(p) > maxAssetPathLen:
		return fmt.Sprintf("must be at most %d characters", maxAssetPathLen)
	case strings.HasPrefix(p, "/") || strings.Contains(p, "\\") || (len(p) > 1 && p[1] == ':'):
		return "must be a relative path with '/' separators"
	case slices.Contains(strings.Split(p, "/"), ".."):
		return `must not contain ".."`
	case hasControl(p):
		return "must not contain control characters"
	case path.Clean(p) != p:
		return fmt.Sprintf("must be a clean path (%s)", path.Clean(p))
	}
	return ""
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

func (v *validator) service(name string) {
	r, p := v.r, v.p
	spath := field("services", name)
	if why := checkSimple(name, limits.MaxServiceLen); why != "" {
		p.add(spath, "service name %s", why)
	}
	v.groupName(spath, name)
	s := r.Services[name]
	if s == nil {
		p.add(spath, "must be an object")
		return
	}
	v.instanceTypes(spath, s)
	if len(s.SecurityGroups) == 0 {
		p.add(field(spath, "security_groups"), "required: at least one security group (without one, instances get the VPC's default group)")
	}
	v.refs(field(spath, "security_groups"), s.SecurityGroups, checkRef)
	v.refs(field(spath, "elbs"), s.ELBs, checkELB)
	v.refs(field(spath, "target_groups"), s.TargetGroups, checkRef)
	v.detach(field(spath, "detach"), s)
	v.refs(field(spath, "alarms"), s.Alarms, checkRef)
	if s.Profile != "" {
		v.ref(field(spath, "profile"), s.Profile, checkIAMName)
	}
	if s.AMI != "" {
		v.ref(field(spath, "ami"), s.AMI, checkRef)
	} else if r.AMI == "" {
		p.add(field(spath, "ami"), "required because the release sets no ami")
	}
	v.refs(field(spath, "subnets"), s.Subnets, checkRef)
	if len(s.Subnets) == 0 && len(r.Subnets) == 0 {
		p.add(field(spath, "subnets"), "required because the release sets no subnets")
	}
	v.ebs(spath, s)
	v.stableSeconds(field(spath, "stable_seconds"), s.StableSeconds)
	v.autoscaling(field(spath, "autoscaling"), s.Autoscaling)
	v.rollout(field(spath, "rollout"), name)
	v.maxErrorRate(field(spath, "max_error_rate"), s)
	v.tags(field(spath, "tags"), s.Tags)
}

// rollout checks a service's canary steps: 1 to limits.MaxRolloutSteps,
// each at least one instance and at most max_size, or 1% to 100%; counts
// and percentages each rising; the last "100%" (the whole group); a step
// wait of at most limits.MaxStableSeconds; and every step's window, one
// after the other, within the timeout.
func (v *validator) rollout(rpath, name string) {
	s := v.r.Services[name]
	ro := s.Rollout
	if ro == nil {
		return
	}
	p := v.p
	spath := field(rpath, "steps")
	switch n := len(ro.Steps); {
	case n == 0:
		p.add(spath, `required: the steps of the canary, the last "100%%"`)
		return
	case n > limits.MaxRolloutSteps:
		p.add(spath, "%d steps, more than %d", n, limits.MaxRolloutSteps)
		return
	}
	var lastCount, lastPercent *Step
	for i, st := range ro.Steps {
		v.rolloutStep(index(spath, i), st, lastCount, lastPercent, s.Autoscaling)
		if st.Percent {
			lastPercent = &ro.Steps[i]
		} else {
			lastCount = &ro.Steps[i]
		}
	}
	if !ro.Steps[len(ro.Steps)-1].Whole() {
		p.add(spath, `the last step must be "100%%" (the whole group), not %s`, ro.Steps[len(ro.Steps)-1])
	}
	if ro.StepWaitSeconds < 0 || ro.StepWaitSeconds > limits.MaxStableSeconds {
		p.add(field(rpath, "step_wait_seconds"), "must be between 0 and %d seconds", limits.MaxStableSeconds)
		return
	}
	v.rolloutTime(rpath, name, ro)
}

// groupName checks that the name of the service's ASG and launch template
// (naming.GroupName) fits EC2's limit on launch template names (the ASG's
// limit, 255, is larger). The release id is the release's own when set;
// a release file has none yet, so one as long as those the client
// generates stands in (the deployer's Validate checks the real one). It
// says nothing when a part of the name is already wrong.
func (v *validator) groupName(spath, service string) {
	r := v.r
	if checkProject(r.ProjectName) != "" || checkSimple(r.ConfigName, limits.MaxConfigLen) != "" ||
		checkSimple(service, limits.MaxServiceLen) != "" || (r.ReleaseID != "" && checkReleaseID(r.ReleaseID) != "") {
		return
	}
	rid, with := r.ReleaseID, fmt.Sprintf(" with its release id of %d characters", len(r.ReleaseID))
	if rid == "" {
		rid = strings.Repeat("r", limits.GeneratedReleaseIDLen)
		with = fmt.Sprintf(" with a generated release id of %d characters", limits.GeneratedReleaseIDLen)
	}
	if n := len(naming.GroupName(r.ProjectName, r.ConfigName, service, rid)); n > limits.LaunchTemplateNameLen {
		v.p.add(spath, "the Auto Scaling group and launch template name %q would be %d characters%s, more than EC2's limit of %d for launch template names; shorten project_name, config_name or the service name",
			naming.GroupName(r.ProjectName, r.ConfigName, service, "<release_id>"), n, with, limits.LaunchTemplateNameLen)
	}
}

// rolloutStep checks step st of a rollout at ipath against the count
// and the percentage before it (nil: none) and the service's max_size.
func (v *validator) rolloutStep(ipath string, st Step, lastCount, lastPercent *Step, a *Autoscaling) {
	p := v.p
	switch {
	case st.Percent && (st.N < 1 || st.N > 100):
		p.add(ipath, "must be between 1%% and 100%%, not %s", st)
	case st.Percent && lastPercent != nil && st.N <= lastPercent.N:
		p.add(ipath, "%s must be more than the percentage before it (%s)", st, lastPercent)
	case !st.Percent && st.N < 1:
		p.add(ipath, "must be at least 1 instance, not %d", st.N)
	case !st.Percent && a != nil && st.N > a.MaxSize:
		p.add(ipath, "%d instances, more than max_size (%d)", st.N, a.MaxSize)
	case !st.Percent && lastCount != nil && st.N <= lastCount.N:
		p.add(ipath, "%s must be more instances than the count before it (%s)", st, lastCount)
	}
}

// rolloutTime checks that every step of service name's rollout ro, one
// after the other, fits in the timeout.
func (v *validator) rolloutTime(rpath, name string, ro *Rollout) {
	stable := v.r.ServiceStableSeconds(name)
	need := (len(ro.Steps)-1)*max(stable, ro.StepWaitSeconds) + stable
	if v.r.Timeout > 0 && need >= v.r.Timeout {
		v.p.add(rpath, "its %d steps need at least %d seconds (each but the last held for max(stable_seconds, step_wait_seconds), the last for stable_seconds), not less than the timeout (%d seconds)",
			len(ro.Steps), need, v.r.Timeout)
	}
}

// maxErrorRate checks a service's max_error_rate: a share below 1, and a
// load balancer to count it.
func (v *validator) maxErrorRate(path string, s *Service) {
	switch e := s.MaxErrorRate; {
	case e == nil:
	case math.IsNaN(*e) || *e < 0 || *e >= 1:
		v.p.add(path, "must be a share of requests from 0 to below 1 (0.01 is 1%%), not %v", *e)
	case len(s.ELBs) == 0 && len(s.TargetGroups) == 0:
		v.p.add(path, "needs elbs or target_groups: the rate is their 5xx over their requests")
	}
}

// stableSeconds checks a stability window: 0 to limits.MaxStableSeconds,
// and shorter than the release's timeout (a window that cannot fit in it
// could never let the release succeed).
func (v *validator) stableSeconds(path string, s *int) {
	switch {
	case s == nil:
	case *s < 0 || *s > limits.MaxStableSeconds:
		v.p.add(path, "must be between 0 and %d seconds", limits.MaxStableSeconds)
	case v.r.Timeout > 0 && *s >= v.r.Timeout:
		v.p.add(path, "must be shorter than the timeout (%d seconds): the window has to fit in it", v.r.Timeout)
	}
}

// ebs checks a service's EBS volume: a size EC2 accepts for its type
// (ebsVolumeSizes), a known type, a device name.
func (v *validator) ebs(spath string, s *Service) {
	if s.EBSVolumeSize == 0 {
		if s.EBSVolumeType != "" || s.EBSDeviceName != "" {
			v.p.add(field(spath, "ebs_volume_size"), "required when ebs_volume_type or ebs_device_name is set")
		}
		return
	}
	if size, ok := ebsVolumeSizes[s.EBSVolumeType]; !ok {
		v.p.add(field(spath, "ebs_volume_type"), "must be one of %s", strings.Join(EBSVolumeTypes, ", "))
	} else if s.EBSVolumeSize < size.min || s.EBSVolumeSize > size.max {
		v.p.add(field(spath, "ebs_volume_size"), "must be between %d and %d GiB for %s", size.min, size.max, s.EBSVolumeType)
	}
	if s.EBSDeviceName != "" && !deviceNameRe.MatchString(s.EBSDeviceName) {
		v.p.add(field(spath, "ebs_device_name"), "must be a device name like /dev/sdb, /dev/xvdb or /dev/sda1")
	}
}

func (v *validator) autoscaling(apath string, a *Autoscaling) {
	p := v.p
	if a.MinSize < 1 {
		p.add(field(apath, "min_size"), "must be at least 1")
	}
	switch {
	case a.MaxSize < a.MinSize:
		p.add(field(apath, "max_size"), "must be at least min_size (%d)", a.MinSize)
	case a.MaxSize > limits.MaxInstances:
		p.add(field(apath, "max_size"), "must be at most %d", limits.MaxInstances)
	}
	if math.IsNaN(a.Spread) || a.Spread < 0 || a.Spread >= 1 {
		p.add(field(apath, "spread"), "must be between 0 and 1")
	}
	if a.MaxTerms < 0 || a.MaxTerms > limits.MaxInstances {
		p.add(field(apath, "max_terms"), "must be between 0 and %d", limits.MaxInstances)
	}
	v.policies(field(apath, "policies"), a.Policies)
}

// policies checks a service's CPU scaling policies: at most one of each
// type, each within CloudWatch's and Auto Scaling's bounds, and the
// scale-up threshold above the scale-down one.
func (v *validator) policies(ppath string, policies []Policy) {
	if n := len(policies); n > limits.MaxPolicies {
		v.p.add(ppath, "at most %d policies, not %d", limits.MaxPolicies, n)
	}
	thresholds := map[string]float64{}
	for i, pol := range policies {
		ip := index(ppath, i)
		switch {
		case !slices.Contains(PolicyTypes, pol.Type):
			v.p.add(field(ip, "type"), "must be one of %s", strings.Join(PolicyTypes, ", "))
		case hasKey(thresholds, pol.Type):
			v.p.add(field(ip, "type"), "duplicate policy type %s", pol.Type)
		default:
			thresholds[pol.Type] = pol.Threshold
		}
		v.policy(ip, pol)
	}
	up, hasUp := thresholds["cpu_scale_up"]
	down, hasDown := thresholds["cpu_scale_down"]
	if hasUp && hasDown && up <= down {
		v.p.add(ppath, "the cpu_scale_up threshold (%g) must be above the cpu_scale_down threshold (%g)", up, down)
	}
}

// hasKey reports whether m has key k.
func hasKey[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
}

// policy checks one scaling policy's numbers at path ip.
func (v *validator) policy(ip string, pol Policy) {
	p := v.p
	if math.IsNaN(pol.Threshold) || pol.Threshold < 0 || pol.Threshold > maxThreshold {
		p.add(field(ip, "threshold"), "must be between 0 and %d", maxThreshold)
	}
	switch {
	case pol.ScalingAdjustment < -limits.MaxInstances || pol.ScalingAdjustment > limits.MaxInstances:
		p.add(field(ip, "scaling_adjustment"), "must be between -%d and %d", limits.MaxInstances, limits.MaxInstances)
	case pol.Type == "cpu_scale_up" && pol.ScalingAdjustment <= 0:
		p.add(field(ip, "scaling_adjustment"), "must be positive for cpu_scale_up")
	case pol.Type == "cpu_scale_down" && pol.ScalingAdjustment >= 0:
		p.add(field(ip, "scaling_adjustment"), "must be negative for cpu_scale_down")
	}
	if pol.Period != 10 && pol.Period != 30 && (pol.Period < 60 || pol.Period%60 != 0 || pol.Period > maxPolicyWindow) {
		p.add(field(ip, "period"), "must be 10, 30 or a multiple of 60 up to %d seconds", maxPolicyWindow)
	} else if pol.EvaluationPeriods < 1 || pol.EvaluationPeriods > maxPolicyWindow/pol.Period {
		p.add(field(ip, "evaluation_periods"), "must be at least 1, with evaluation_periods * period at most %d seconds", maxPolicyWindow)
	}
	if pol.Cooldown < 0 || pol.Cooldown > maxCooldown {
		p.add(field(ip, "cooldown"), "must be between 0 and %d seconds", maxCooldown)
	}
}

func (v *validator) tags(tpath string, tags map[string]string) {
	if n := len(tags); n > limits.MaxTags {
		v.p.add(tpath, "at most %d tags, not %d", limits.MaxTags, n)
	}
	reserved := naming.ReservedTags()
	for k, val := range tags {
		kp := field(tpath, k)
		switch {
		case k == "":
			v.p.add(kp, "tag key must not be empty")
		case len(k) > limits.MaxTagKeyLen:
			v.p.add(kp, "tag key must be at most %d characters", limits.MaxTagKeyLen)
		case !tagRe.MatchString(k):
			v.p.add(kp, "tag key must be letters, digits, spaces and + - = . _ : / @")
		case strings.HasPrefix(strings.ToLower(k), "aws:"):
			v.p.add(kp, `tag keys starting with "aws:" are reserved by AWS`)
		case slices.ContainsFunc(reserved, func(r string) bool { return strings.EqualFold(r, k) }):
			v.p.add(kp, "tag key is reserved: ferry sets %s itself", canonicalReserved(k))
		}
		switch {
		case len(val) > limits.MaxTagValueLen:
			v.p.add(kp, "tag value must be at most %d characters", limits.MaxTagValueLen)
		case !tagRe.MatchString(val):
			v.p.add(kp, "tag value must be letters, digits, spaces and + - = . _ : / @")
		}
	}
}

func canonicalReserved(k string) string {
	for _, r := range naming.ReservedTags() {
		if strings.EqualFold(r, k) {
			return r
		}
	}
	return k
}

// refs checks a list of resource references: bounded, no duplicates, each
// well formed.
func (v *validator) refs(lpath string, list []string, check func(string) string) {
	if len(list) > limits.MaxListLen {
		v.p.add(lpath, "at most %d entries, not %d", limits.MaxListLen, len(list))
	}
	seen := map[string]bool{}
	for i, s := range list {
		if seen[s] {
			v.p.add(index(lpath, i), "duplicate %q", s)
			continue
		}
		seen[s] = true
		v.ref(index(lpath, i), s, check)
	}
}

func (v *validator) ref(rpath, s string, check func(string) string) {
	if why := check(s); why != "" {
		v.p.add(rpath, "%s", why)
	}
}

func checkPattern(s string, max int, re *regexp.Regexp, shape string) string {
	switch {
	case s == "":
		return "required"
	case len(s) > max:
		return fmt.Sprintf("must be at most %d characters", max)
	case !re.MatchString(s):
		return "must be " + shape
	}
	return ""
}

// checkRef checks a Name tag or resource ID (subnet, AMI, security group,
// target group).
func checkRef(s string) string {
	return checkPattern(s, limits.MaxResourceRef, refRe,
		"a name or ID of letters, digits, spaces and ._:/()#,@[]+=&;{}!$*- without leading or trailing spaces")
}

func checkELB(s string) string {
	return checkPattern(s, maxELBLen, elbRe, "a load balancer name of letters, digits and '-', not starting or ending with '-'")
}

func checkIAMName(s string) string {
	return checkPattern(s, maxIAMNameLen, iamNameRe, "an IAM name of letters, digits and +=,.@_-")
}

func checkRoleName(s string) string {
	return checkPattern(s, maxRoleNameLen, iamNameRe, "an IAM role name of letters, digits and +=,.@_-")
}

func checkSNSTopic(s string) string {
	return checkPattern(s, maxSNSTopicLen, snsTopicRe, "an SNS topic name of letters, digits, '_' and '-'")
}

// userData renders the user data of every service with placeholder values:
// it must use only known variables and assets and fit the EC2 limit.
func (v *validator) userData() {
	r := v.r
	if v.uploaded {
		if r.UserData == UserDataFileMarker {
			v.p.add("user_data", "%s must be replaced by the client with the user data file", UserDataFileMarker)
		}
	}
	for _, name := range r.ServiceNames() {
		s := r.Services[name]
		if s == nil {
			continue
		}
		upath, tmpl := "user_data", r.UserData
		if s.UserData != "" {
			upath, tmpl = field(field("services", name), "user_data"), s.UserData
			if v.uploaded && tmpl == UserDataFileMarker {
				v.p.add(upath, "%s must be replaced by the client with the user data file", UserDataFileMarker)
			}
		}
		if tmpl == UserDataFileMarker {
			continue
		}
		_, msgs := render(tmpl, v.placeholders(name))
		for _, m := range msgs {
			if strings.HasPrefix(m, "rendered") && upath == "user_data" {
				m = strings.Replace(m, "rendered user data", "rendered user data of service "+name, 1)
			}
			v.p.add(upath, "%s", m)
		}
	}
}

// placeholders are the template values used to validate user data: the
// real names, and for what is not known before the deploy the longest
// value it can have, so a release that validates also fits when deployed.
func (v *validator) placeholders(service string) Vars {
	r := v.r
	vars := Vars{
		ReleaseID:   r.ReleaseID,
		ProjectName: r.ProjectName,
		ConfigName:  r.ConfigName,
		ServiceName: service,
		Assets:      map[string]AssetRef{},
	}
	if vars.ReleaseID == "" {
		vars.ReleaseID = strings.Repeat("r", limits.MaxReleaseIDLen)
	}
	for name, a := range r.Assets {
		sum := strings.Repeat("0", 64)
		if a != nil && sha256Re.MatchString(a.SHA256) {
			sum = a.SHA256
		}
		vars.Assets[name] = AssetRef{URL: placeholderAssetURL(r, sum), SHA256: sum}
	}
	return vars
}

// placeholderAssetURL is the longest URL Publish can give an asset of r
// with digest sum: naming.S3URL of its key in the target's asset bucket,
// as the deployer renders {{ASSET_URL:name}}. The bucket is the target's
// own when r names its account, region and qualifier; else one of the
// longest name S3 allows (maxBucketNameLen), since the target is chosen
// when the release is submitted.
func placeholderAssetURL(r *Release, sum string) string {
	bucket := strings.Repeat("b", maxBucketNameLen)
	if r.AccountID != "" && r.Region != "" && r.Qualifier != "" {
		bucket = naming.AssetBucketName(r.AccountID, r.Region, r.Qualifier)
	}
	project, config := r.ProjectName, r.ConfigName
	if project == "" {
		project = strings.Repeat("p", limits.MaxProjectLen)
	}
	if config == "" {
		config = strings.Repeat("c", limits.MaxConfigLen)
	}
	return naming.S3URL(bucket, naming.TargetAssetKey(project, config, sum))
}
