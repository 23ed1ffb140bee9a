// Package health owns the judgement of whether a service's new instances
// are healthy. It merges the per-instance views of the Auto Scaling group,
// of every classic load balancer and of every target group the service uses
// into one per-service report: an instance is healthy only if every source
// says so. It is pure: callers fetch the views (one call per group batch,
// load balancer and target group, never per instance) and pass them in.
package health
