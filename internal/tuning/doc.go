// Package tuning holds ferry's chosen settings, in one place: the health
// check pacing, the state machine's retry policy, the AWS SDK's retry
// budget, credential lifetimes, the created_at window, the default
// timeout, the deployer Lambda's size and its logs' retention. Each is a
// judgement that may change without breaking anyone's contract.
//
// What AWS fixes, and the bounds ferry promises of its inputs (the
// largest release, the longest name, the longest timeout), are package
// limits': a setting here may be tuned, a limit there may not.
package tuning
