// Package pacing owns when the deployer looks again: the wait between
// two health checks of one execution (Schedule.Next). It is pure: it
// reads no clock and calls nothing.
//
// A wait is the schedule's interval for the time since the execution
// started (Pace: quick at first, slower the longer a release takes, so
// any timeout up to limits.MaxTimeout stays within
// limits.MaxHealthChecks), jittered by up to Jitter either way from a
// seed (concurrent deploys do not poll in lock-step, and a replay waits
// the same), and then shaped by what the check saw:
//
//   - no check before an instance launching now can be ready (Ready, a
//     prediction from the boots seen before);
//   - while every service holds its target, checks no more often than
//     Stable, and one when the last stability window ends (Window), when
//     the checks made so far leave room for it in the schedule's budget;
//   - never past the release's timeout, and at least a second.
//
// MaxChecks is the most checks a timeout can take, jitter included: the
// budget the history limit is checked against.
package pacing
