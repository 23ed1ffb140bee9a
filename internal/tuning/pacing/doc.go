// Package pacing owns when the deployer looks again: the wait before the
// next step of one of an execution's loops (Schedule.Next), the health
// checks' (tuning.HealthChecks) and the retirement's
// (tuning.RetireChecks). It is pure: it reads no clock and calls nothing.
//
// A wait is the schedule's interval for the time since the loop began
// (Pace: quick at first, slower the longer it takes, so any timeout up to
// limits.MaxTimeout stays within limits.MaxHealthChecks), jittered by up
// to Jitter either way from a seed (concurrent deploys do not poll in
// lock-step, and a replay waits the same), and then shaped by what the
// check saw:
//
//   - while every service holds its target, checks no more often than
//     Stable, and one when the last stability window ends (Window);
//   - while every service below its target waits only for its load
//     balancers' health checks (Imminent), a check every Soon, every
//     Sooner while those services are few (Few: the deployer's judgement);
//   - a wait shorter than the schedule's only while the checks made so far
//     leave room for it (as many as the schedule makes by then with every
//     wait at its shortest);
//   - no check before an instance launching now can be ready (Ready, a
//     prediction from the boots seen before);
//   - never past the release's timeout, and at least a second.
//
// MaxChecks is the most checks a timeout can take, jitter included: the
// budget the history limit is checked against; Fit stretches a schedule
// quicker than that budget allows.
package pacing
