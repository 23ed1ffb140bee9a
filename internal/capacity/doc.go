// Package capacity owns the arithmetic of a service's horizontal scale
// during a deploy: how many instances the new ASG wants (desired), how many
// it launches (desired plus the spread, for headroom against cloud errors),
// and how many must be healthy before the service counts as healthy
// (desired minus the spread, never below min_size). It also decides when
// terminating instances mean the deploy must halt, and the stages of a
// canary: the group's size, healthy target and minimum at each step.
//
// Every function is pure: no I/O, no clock. All results are bounded by
// min_size and max_size.
package capacity
