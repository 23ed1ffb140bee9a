// Package clock gives ferry an injectable clock. Handlers and the simulated
// AWS read time only through a Clock, so tests and the local region can run
// minutes of deploy in milliseconds on a Virtual clock. Nothing in ferry
// sleeps to wait for AWS: waiting is the state machine's job.
//
// Scaled is real time sped up: a clock that also passes its time (Wait,
// Bound) by sleeping a fraction of it, which the local region runs its
// executions on when asked for a speed.
package clock
