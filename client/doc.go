// Command ferry is the ferry client: it checks releases offline and (in
// later commands) deploys them, halts them and reports their status.
//
// The command framework is small: each command is a *command registered
// from its own file's init function (see register), with a name, a
// synopsis, help text and a run function that takes a context, the
// process's streams and environment (Env) and its arguments, and returns an
// exit code: 0 success, 1 failure, 2 usage error.
package main
