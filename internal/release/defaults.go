package release

import "github.com/ferryhq/ferry/internal/tuning"

// Defaults, applied by ApplyDefaults.
const (
	DefaultTimeout           = int(tuning.DefaultTimeout / 1e9)
	DefaultMinSize           = 1
	DefaultEBSVolumeType     = "gp3"
	DefaultHeartbeatTimeout  = 300
	DefaultEvaluationPeriods = 1
	DefaultPeriod            = 300
	DefaultCooldown          = 300
	// DefaultStableSeconds is the stability window of a release that sets
	// none: a minute of holding its healthy target without a break (at
	// most half the release's timeout, so that the window fits in it).
	DefaultStableSeconds = 60
)

// ApplyDefaults fills in every default, in this one place:
//   - timeout: 600 seconds;
//   - stable_seconds: 60, or half the timeout when that is less (a
//     service's own, when unset, is the release's);
//   - a service without autoscaling: min_size 1, max_size 1, spread 0,
//     max_terms 0; a min_size of 0 means 1 and a max_size of 0 means
//     min_size;
//   - policies: evaluation_periods 1, period 300, cooldown 300;
//   - ebs_volume_type gp3, only when ebs_volume_size is set (an unset
//     ebs_device_name means the AMI's root device: the size then resizes
//     the root volume; the deployer reads it from the image);
//   - mixed_instances: on_demand_percentage_above_base 100,
//     spot_allocation_strategy price-capacity-optimized,
//     spot_instance_pools 2 with lowest-price, on_demand_allocation_strategy
//     prioritized (lowest-price with instance requirements);
//   - lifecycle heartbeat_timeout: 300;
//   - analysis: window_seconds 600, period_seconds 60, pass_score 95,
//     marginal_score 75 (at most pass_score); each metric's stat
//     Average, direction higher, tolerance 0.1.
//
// It never overwrites a value that is set. Idempotent.
func (r *Release) ApplyDefaults() {
	if r == nil {
		return
	}
	if r.Timeout == 0 {
		r.Timeout = DefaultTimeout
	}
	if r.StableSeconds == nil {
		stable := defaultStableSeconds(r.Timeout)
		r.StableSeconds = &stable
	}
	if r.Analysis != nil {
		r.Analysis.applyDefaults()
	}
	for _, h := range r.Lifecycle {
		if h != nil && h.HeartbeatTimeout == 0 {
			h.HeartbeatTimeout = DefaultHeartbeatTimeout
		}
	}
	for _, s := range r.Services {
		if s != nil {
			s.applyDefaults()
		}
	}
}

// applyDefaults fills in a service's unset EBS volume type and scaling.
func (s *Service) applyDefaults() {
	if s.EBSVolumeSize != 0 && s.EBSVolumeType == "" {
		s.EBSVolumeType = DefaultEBSVolumeType
	}
	s.MixedInstances.applyDefaults()
	if s.Autoscaling == nil {
		s.Autoscaling = &Autoscaling{}
	}
	a := s.Autoscaling
	if a.MinSize == 0 {
		a.MinSize = DefaultMinSize
	}
	if a.MaxSize == 0 && a.MinSize > 0 {
		a.MaxSize = a.MinSize
	}
	for i := range a.Policies {
		a.Policies[i].applyDefaults()
	}
}

// applyDefaults fills in a scaling policy's unset alarm window and
// cooldown.
func (p *Policy) applyDefaults() {
	if p.EvaluationPeriods == 0 {
		p.EvaluationPeriods = DefaultEvaluationPeriods
	}
	if p.Period == 0 {
		p.Period = DefaultPeriod
	}
	if p.Cooldown == 0 {
		p.Cooldown = DefaultCooldown
	}
}

// defaultStableSeconds is the stability window of a release with timeout
// that sets none: DefaultStableSeconds, at most half the timeout.
func defaultStableSeconds(timeout int) int { return max(0, min(DefaultStableSeconds, timeout/2)) }
