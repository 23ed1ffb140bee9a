package release

import (
	"maps"
	"slices"
	"time"
)

// ServiceNames returns the names of the release's services, sorted.
func (r *Release) ServiceNames() []string {
	return slices.Sorted(maps.Keys(r.Services))
}

// ServiceAMI returns the AMI of service name: its own override, else the
// release's. An unknown service gets the release's.
func (r *Release) ServiceAMI(name string) string {
	if s := r.Services[name]; s != nil && s.AMI != "" {
		return s.AMI
	}
	return r.AMI
}

// ServiceSubnets returns the subnets of service name: its own override when
// it has one, else the release's. The result is a copy.
func (r *Release) ServiceSubnets(name string) []string {
	if s := r.Services[name]; s != nil && len(s.Subnets) > 0 {
		return slices.Clone(s.Subnets)
	}
	return slices.Clone(r.Subnets)
}

// ServiceUserData returns the user data template of service name: its own
// override, else the release's.
func (r *Release) ServiceUserData(name string) string {
	if s := r.Services[name]; s != nil && s.UserData != "" {
		return s.UserData
	}
	return r.UserData
}

// AlarmNames returns every alarm the release and its services name, sorted,
// each once.
func (r *Release) AlarmNames() []string {
	names := slices.Clone(r.Alarms)
	for _, s := range r.Services {
		if s != nil {
			names = append(names, s.Alarms...)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// TimeoutDuration returns how long, from the execution's start, the
// release may take to become healthy: its timeout, else the default
// ApplyDefaults gives it.
func (r *Release) TimeoutDuration() time.Duration {
	if r.Timeout > 0 {
		return time.Duration(r.Timeout) * time.Second
	}
	return time.Duration(DefaultTimeout) * time.Second
}

// ServiceStableSeconds returns the stability window of service name, in
// seconds: its own override, else the release's, else the default
// ApplyDefaults gives it.
func (r *Release) ServiceStableSeconds(name string) int {
	if s := r.Services[name]; s != nil && s.StableSeconds != nil {
		return *s.StableSeconds
	}
	if r.StableSeconds != nil {
		return *r.StableSeconds
	}
	return defaultStableSeconds(r.Timeout)
}

// UsesUserDataFile reports whether the release or one of its services has
// a user_data equal to UserDataFileMarker.
func (r *Release) UsesUserDataFile() bool {
	if r.UserData == UserDataFileMarker {
		return true
	}
	for _, s := range r.Services {
		if s != nil && s.UserData == UserDataFileMarker {
			return true
		}
	}
	return false
}

// ReplaceUserDataFile sets every user_data equal to UserDataFileMarker (the
// release's and the services') to content. Idempotent when content is not
// itself the marker.
func (r *Release) ReplaceUserDataFile(content string) {
	if r.UserData == UserDataFileMarker {
		r.UserData = content
	}
	for _, s := range r.Services {
		if s != nil && s.UserData == UserDataFileMarker {
			s.UserData = content
		}
	}
}

// Clone returns a deep copy of r.
func (r *Release) Clone() *Release {
	if r == nil {
		return nil
	}
	c := *r
	c.Subnets = slices.Clone(r.Subnets)
	c.Alarms = slices.Clone(r.Alarms)
	c.Remove = slices.Clone(r.Remove)
	if r.Identity != nil {
		id := *r.Identity
		id.Headers = maps.Clone(r.Identity.Headers)
		c.Identity = &id
	}
	c.StableSeconds = clonePtr(r.StableSeconds)
	c.MoveFrom = clonePtr(r.MoveFrom)
	if r.Analysis != nil {
		c.Analysis = r.Analysis.clone()
	}
	if r.Lifecycle != nil {
		c.Lifecycle = make(map[string]*LifecycleHook, len(r.Lifecycle))
		for k, h := range r.Lifecycle {
			if h != nil {
				h2 := *h
				h = &h2
			}
			c.Lifecycle[k] = h
		}
	}
	if r.Assets != nil {
		c.Assets = make(map[string]*Asset, len(r.Assets))
		for k, a := range r.Assets {
			if a != nil {
				a2 := *a
				a = &a2
			}
			c.Assets[k] = a
		}
	}
	if r.Services != nil {
		c.Services = make(map[string]*Service, len(r.Services))
		for k, s := range r.Services {
			if s != nil {
				s = s.clone()
			}
			c.Services[k] = s
		}
	}
	return &c
}

func (s *Service) clone() *Service {
	c := *s
	c.SecurityGroups = slices.Clone(s.SecurityGroups)
	c.ELBs = slices.Clone(s.ELBs)
	c.TargetGroups = slices.Clone(s.TargetGroups)
	c.Subnets = slices.Clone(s.Subnets)
	c.Alarms = slices.Clone(s.Alarms)
	c.Tags = maps.Clone(s.Tags)
	c.StableSeconds = clonePtr(s.StableSeconds)
	c.MaxErrorRate = clonePtr(s.MaxErrorRate)
	if s.Detach != nil {
		c.Detach = &Detach{ELBs: slices.Clone(s.Detach.ELBs), TargetGroups: slices.Clone(s.Detach.TargetGroups)}
	}
	c.MixedInstances = s.MixedInstances.clone()
	if s.Rollout != nil {
		ro := *s.Rollout
		ro.Steps = slices.Clone(s.Rollout.Steps)
		c.Rollout = &ro
	}
	if s.Autoscaling != nil {
		a := *s.Autoscaling
		a.Policies = slices.Clone(s.Autoscaling.Policies)
		c.Autoscaling = &a
	}
	return &c
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
