// Package fanout runs a task's independent calls side by side, a bounded
// number at a time (Each), and keeps, for whoever measures a task, the
// time its calls would take on a network: a Timeline on the context,
// which every call spends its cost on (Spend) and which counts calls run
// side by side once, as overlapping. Without a Timeline (in the Lambda)
// Spend does nothing.
//
// InOrder makes Each run its calls one after the other (the local region
// does, so a fault injected at the k-th call hits the same call at every
// run). The Timeline is deterministic either way: Each works out the time
// of its calls as a pool of its bound of workers would take them in
// order, whatever order the goroutines ran in. Offset is where a call is
// on its task's Timeline (a simulation's token buckets take it at that
// moment).
package fanout
