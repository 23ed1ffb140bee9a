// Command ferry is the ferry client: it checks releases offline (validate,
// schema), deploys them and follows their execution (deploy), halts them
// (halt), reports what is deployed (status), removes locks left behind
// (unlock) and prints the bootstrap template of a target environment
// (bootstrap).
//
// The command framework is small: each command is a *command registered
// from its own file's init function (see register), with a name, a
// synopsis, help text and a run function that takes a context, the
// process's streams, environment and clock (Env) and its arguments, and
// returns an exit code: 0 success, 1 failure, 2 usage error. The commands
// that follow an execution (deploy, halt) return its outcome instead: 0
// Success, 1 FailureClean, 2 FailureDirty, 3 nothing started (usage errors
// included), 4 stopped following.
//
// The client talks to AWS only through aws-sdk-go-v2's S3 and Step
// Functions clients (and STS to name the deployer by convention), built in
// one place (connect) from a typed deployerConfig. --local points them at
// the local region (ferry local). Following an execution is a pure reader
// of its history (historyReader) and a display (plain lines, a live block
// on a terminal, or JSON), polled at an interval through Env.Sleep so
// tests never sleep.
//
// make demo runs demo.sh: the local region in the background and the
// client's commands against it.
package main
