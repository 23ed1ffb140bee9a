package release

import (
	"slices"
	"time"

	"github.com/ferryhq/ferry/internal/target"
)

// Release is one deploy of one project into one config. ReleaseID and
// CreatedAt are set by the client; a release file written by a person must
// leave them out.
type Release struct {
	ProjectName string    `json:"project_name"`
	ConfigName  string    `json:"config_name"`
	ReleaseID   string    `json:"release_id,omitempty"`
	CreatedAt   time.Time `json:"created_at,omitzero"`
	// CreatedBy names who asked for the release (the caller's identity), set
	// by the client.
	CreatedBy string `json:"created_by,omitempty"`
	// Identity proves who asked for the release, set by the client; the
	// deployer verifies it and records the caller it proves, so CreatedBy
	// is only the name the caller gave itself.
	Identity *Identity `json:"identity,omitempty"`
	// RollbackOf is the release whose content this one deploys again,
	// set by the client (ferry rollback); empty for a release made from
	// a file.
	RollbackOf string `json:"rollback_of,omitempty"`
	// HealOf is the release whose content this one deploys again because
	// the reconciler found its fleet gone or unhealthy (reconcile "heal"):
	// set by the deployer's reconcile pass, never by a client, and
	// accepted at Validate without an identity proof only while HealOf is
	// what is deployed and the content is exactly its content.
	HealOf string `json:"heal_of,omitempty"`
	// PromotionOf is the config of the first stage of the promotion this
	// release is a stage's deploy of (its release id is the promotion's
	// id): set by the deployer when a promotion's wave starts, never by a
	// client, and accepted at Validate without an identity proof only as
	// the promotion's record says (its starter verified, the stage's gates
	// held) and with exactly the content the pipeline derives.
	PromotionOf string `json:"promotion_of,omitempty"`
	// Destroy makes the release a destroy (ferry destroy, which sets it):
	// it deploys no service and, like any release at its swap, retires
	// every group of the project-config, so nothing of it is left
	// running; the current record is then removed. Only the client sets
	// it, with nothing to deploy: no services, ami, subnets, user data,
	// assets, lifecycle hooks, alarms, removals or bake.
	Destroy bool `json:"destroy,omitempty"`

	// Description says what the release is, for people (at most
	// limits.MaxDescriptionLen characters). Version is the build it
	// deploys: a build number, a git commit (at most limits.MaxVersionLen
	// characters). Both are shown by deploy and status.
	Description string `json:"description,omitempty"`
	Version     string `json:"version,omitempty"`

	// AccountID and Region name the target environment; empty means the
	// deployer's own. Qualifier selects a bootstrap of that environment.
	AccountID string `json:"account_id,omitempty"`
	Region    string `json:"region,omitempty"`
	Qualifier string `json:"qualifier,omitempty"`
	// MoveFrom asks to move the project-config from the environment it
	// is deployed to now, which it must name exactly (account_id,
	// region and qualifier, as the current record and ferry plan say
	// them), to this release's: the deploy goes to the release's target
	// and its swap retires the fleet left in the old one, leaving the old
	// one's load balancers without instances, on purpose. A release
	// whose target differs from the one its config is deployed to is
	// refused without it; it is ignored when the config is deployed to
	// the release's target already (a move that succeeded, run again).
	MoveFrom *target.Target `json:"move_from,omitempty"`

	Subnets  []string `json:"subnets"`
	AMI      string   `json:"ami"`
	UserData string   `json:"user_data,omitempty"`
	// Timeout is how long, in seconds from the execution's start, the
	// release may take to become healthy.
	Timeout int `json:"timeout,omitempty"`
	// StableSeconds is how long each service must hold its healthy
	// target without a break, with no instance of its new group
	// terminated or replaced, before the previous release is retired (the
	// stability window; a service may override it).
	StableSeconds *int `json:"stable_seconds,omitempty"`

	Lifecycle map[string]*LifecycleHook `json:"lifecycle,omitempty"`
	Assets    map[string]*Asset         `json:"assets,omitempty"`
	// Alarms are CloudWatch alarms of the project-config (tagged with its
	// ProjectName and ConfigName) that must not be in ALARM while the
	// release is judged: one in ALARM halts it before the point of no
	// return. A service may name more.
	Alarms []string `json:"alarms,omitempty"`
	// BakeSeconds is how long, once the release is healthy, its new
	// groups serve alone while the previous groups stand by at their
	// capacity, out of their load balancers (the bake): a halt, an
	// unhealthy service or an alarm in ALARM during it rolls back (the
	// previous groups serve again before the new ones leave). 0, the
	// default, retires the previous groups at once.
	BakeSeconds int `json:"bake_seconds,omitempty"`
	// Analysis is automated canary analysis (see Analysis): nil judges
	// the release without it.
	Analysis *Analysis           `json:"analysis,omitempty"`
	Services map[string]*Service `json:"services"`
	// Remove names the services of the project-config this release
	// removes: the serving groups of a service it does not deploy are
	// retired at the swap only when it is named here (ValidateResources
	// refuses the release otherwise, naming the services), so a service
	// left out of a release by mistake is not deleted. A service named
	// here that has no group is nothing to remove. Deployment Stacks
	// call this actionOnUnmanage.
	Remove []string `json:"remove,omitempty"`
	// Reconcile says what the deployer's reconcile pass does for this
	// project-config while the release is deployed: "record" (the
	// default, ReconcileRecord) records drift; "heal" (ReconcileHeal) also
	// deploys the release's content again when a group of it has been
	// seen gone for a while or its instances stay unhealthy, with a
	// growing retry interval.
	Reconcile string `json:"reconcile,omitempty"`
}

// Reconcile modes (Release.Reconcile).
const (
	ReconcileRecord = "record"
	ReconcileHeal   = "heal"
)

// LifecycleHook is an Auto Scaling lifecycle hook added to every ASG of the
// release at creation.
type LifecycleHook struct {
	Transition       string `json:"transition"`
	Role             string `json:"role"`
	SNS              string `json:"sns"`
	HeartbeatTimeout int    `json:"heartbeat_timeout,omitempty"`
}

// The lifecycle hook transitions (LifecycleHook.Transition).
const (
	TransitionLaunching   = "autoscaling:EC2_INSTANCE_LAUNCHING"
	TransitionTerminating = "autoscaling:EC2_INSTANCE_TERMINATING"
)

// LaunchHold is the longest r's launching hooks hold a new instance in
// Pending:Wait when nobody completes their action: the longest heartbeat
// timeout among them (ferry's hooks CONTINUE when it passes); 0 without a
// launching hook, or for a nil release. Someone recording heartbeats can
// hold it longer.
func (r *Release) LaunchHold() time.Duration {
	if r == nil {
		return 0
	}
	var longest int
	for _, h := range r.Lifecycle {
		if h != nil && h.Transition == TransitionLaunching {
			longest = max(longest, h.HeartbeatTimeout)
		}
	}
	return time.Duration(longest) * time.Second
}

// Asset is a named file the instances need. The client reads Path, hashes
// it and uploads it; SHA256 and Size are set by the client.
type Asset struct {
	Path   string `json:"path,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	Size   int64  `json:"size,omitempty"`
}

// Service is a logical group of servers that maps to one ASG per release.
type Service struct {
	// InstanceType is what the service's instances run; a service with
	// MixedInstances names its types there instead.
	InstanceType   string   `json:"instance_type,omitempty"`
	SecurityGroups []string `json:"security_groups,omitempty"`
	ELBs           []string `json:"elbs,omitempty"`
	TargetGroups   []string `json:"target_groups,omitempty"`
	Profile        string   `json:"profile,omitempty"`
	// Alarms are more alarms, the service's own (see Release.Alarms).
	Alarms []string `json:"alarms,omitempty"`
	// MaxErrorRate is the highest share of requests (0 to 1) the
	// service's load balancers may answer with a 5xx from their
	// instances, over the last minutes as their own CloudWatch metrics
	// count them, while the release is judged; nil: not checked.
	MaxErrorRate *float64 `json:"max_error_rate,omitempty"`

	EBSVolumeSize int    `json:"ebs_volume_size,omitempty"`
	EBSVolumeType string `json:"ebs_volume_type,omitempty"`
	EBSDeviceName string `json:"ebs_device_name,omitempty"`

	Autoscaling *Autoscaling `json:"autoscaling,omitempty"`
	// MixedInstances launches the group across instance types, or types
	// chosen by attributes, On-Demand and Spot (see MixedInstances); nil
	// launches InstanceType On-Demand.
	MixedInstances *MixedInstances   `json:"mixed_instances,omitempty"`
	Tags           map[string]string `json:"tags,omitempty"`

	// Per-service overrides of the release's AMI, subnets, user data and
	// stability window.
	AMI           string   `json:"ami,omitempty"`
	Subnets       []string `json:"subnets,omitempty"`
	UserData      string   `json:"user_data,omitempty"`
	StableSeconds *int     `json:"stable_seconds,omitempty"`

	// Rollout makes the deploy a canary (see Rollout); nil deploys the
	// whole group at once.
	Rollout *Rollout `json:"rollout,omitempty"`

	// Detach names the classic load balancers and target groups this
	// release takes the service out of: those its serving groups are
	// attached to that the release no longer names (ValidateResources
	// refuses the release otherwise, naming each), so a load balancer
	// left out of elbs or target_groups by mistake keeps its instances.
	// It is to a load balancer what Release.Remove is to a service. One
	// named here that no serving group is attached to is nothing to
	// detach.
	Detach *Detach `json:"detach,omitempty"`
}

// Detach names the load balancers a service leaves (Service.Detach).
type Detach struct {
	ELBs         []string `json:"elbs,omitempty"`
	TargetGroups []string `json:"target_groups,omitempty"`
}

// Detaches reports whether the service's Detach names the classic load
// balancer (tg false) or the target group (tg true) name.
func (s *Service) Detaches(name string, tg bool) bool {
	switch {
	case s == nil || s.Detach == nil:
		return false
	case tg:
		return slices.Contains(s.Detach.TargetGroups, name)
	}
	return slices.Contains(s.Detach.ELBs, name)
}

// Autoscaling is a service's horizontal scale. All arithmetic is bounded
// by MinSize and MaxSize (see package capacity).
type Autoscaling struct {
	MinSize  int      `json:"min_size"`
	MaxSize  int      `json:"max_size"`
	Spread   float64  `json:"spread"`
	MaxTerms int      `json:"max_terms"`
	Policies []Policy `json:"policies,omitempty"`
}

// Policy is a CPU scaling policy with its CloudWatch alarm.
type Policy struct {
	Type              string  `json:"type"` // cpu_scale_up or cpu_scale_down
	Threshold         float64 `json:"threshold"`
	ScalingAdjustment int     `json:"scaling_adjustment"`
	// EvaluationPeriods and Period (seconds) of the alarm.
	EvaluationPeriods int `json:"evaluation_periods,omitempty"`
	Period            int `json:"period,omitempty"`
	Cooldown          int `json:"cooldown,omitempty"`
}

// Identity is a pre-signed sts:GetCallerIdentity request (the method, URL
// and signed headers of a SigV4 query-signed request) whose signed
// headers bind it to one release's IdentityHash (package identity makes
// and checks it). Replayed by the deployer, it tells who signed it, and
// STS refuses it once it expires or if anything signed was changed.
type Identity struct {
	Method  string            `json:"method"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers,omitempty"`
}
