// Package clock gives ferry an injectable clock. Handlers and the simulated
// AWS read time only through a Clock, so tests and the local region can run
// minutes of deploy in milliseconds on a Virtual clock. Nothing in ferry
// sleeps to wait for AWS: waiting is the state machine's job.
package clock
