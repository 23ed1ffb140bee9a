// Package health owns the judgement of whether a service's new instances
// are healthy, and stable. It merges the per-instance views of the Auto
// Scaling group, of every classic load balancer and of every target group
// the release names for the service (not those its group is attached to
// now) into one per-service report: an instance is healthy
// only if every source says so (Assess). Counts are capacity units: an
// instance of a group whose mixed instances policy weighs its types
// counts its weight, as Auto Scaling counts the group's desired capacity.
// It carries each service's
// stability window from one check to the next (Track): a service is
// stable once it has held its healthy target without a break, with no
// instance of its new group terminated or replaced, for its
// stable_seconds (Stable), the window opening once the reads that saw it
// at its target are done. It is pure: callers fetch the views (one call
// per group batch, load balancer and target group, never per instance)
// and the clock's time, and pass them in. Its sub-packages judge what the
// users of a service see: errorrate its load balancers' 5xx share,
// analysis its new groups' metrics against the previous groups'.
package health
