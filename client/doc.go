// Command ferry is the ferry client: it checks releases offline (validate,
// schema), says what a deploy would do (plan), deploys them and follows
// their execution (deploy), deploys again a release from the records
// (rollback), tears a config down (destroy), halts them (halt), reports
// what is deployed and how it drifted (status), every release of a config
// (history) and one release (show), what the deployer knows (list),
// attaches to a running deploy or a promotion (follow), removes locks left behind
// (unlock), prints the bootstrap template of a target environment
// (bootstrap), its own version (version) and shell completion scripts
// (completion); ferry local runs a local region and changes its world
// from outside ferry. The scripts are generated from the command table; they ask
// the hidden __names command for project and config names. A command whose
// spec is hidden is left out of ferry help and of completion.
//
// ferry help lists the commands and the topics of the reference (package
// client/help: the markdown pages under client/help/, embedded); ferry
// help NAME prints a command's usage, a topic's page (laid out for the
// terminal, topics.go; as markdown when piped), or both for a name that
// is both (local, pipeline). ferry local gives the pages to the region,
// whose console links them.
//
// The command framework is small. Each command is a struct holding what
// it needs: the process's streams, environment and clock (Env) and the
// values of its flags. It says what it is called and what ferry help says
// of it (spec), declares its flags (defineFlags) and runs with a context
// and its positional arguments: Run(ctx, args) error. commands(env) is
// the one command table; cli dispatches a command line to it, parses the
// flags and turns a panic into an internal error.
//
// A command returns an error and only main turns it into the process
// status (exitStatus, exit.go): nil is 0; an *ExitError gives its Code and
// its message, printed once on stderr (a silent one, with no message, only
// its code); any other error prints and exits 1. The codes are one table
// for every command, exitCodes in exit.go (the exit-codes help page,
// which ferry help exit-codes prints, holds it): 0 success, 1 failure (a
// deploy's FailureClean), 2 usage, 3 nothing started, 4 FailureDirty, 5
// lost contact while following, 6 a halt too late, 7 no deployer, 8 no credentials, 9 not
// found, 70 a bug in ferry, 130 interrupted. The last three are decided
// in one place (exitOf) from the error's chain (errNoDeployer,
// errNoCredentials, a notFoundError, AWS's own missing-deployer codes),
// whatever the command, and every error of an AWS call names where it
// went (reachedAt).
//
// Under --json every object a command prints on stdout is one kind of
// event (eventKinds, jsonevents.go): a deploy's events one a line, a
// command's result indented, a failure an "error" event last. Each starts
// with "schema_version" and "event" and is written by writeEvent from its
// kind's Go type, from which ferry schema events makes the JSON Schema
// (draft 2020-12, one definition per kind under $defs): keys without
// omitempty are always present, arrays never null. The tests validate
// every --json output against it. The same schema describes the detail of
// every deploy event the deployer puts on EventBridge (deployEventKinds:
// package events' types), which ferry local events --json prints
// (localevents.go).
//
// Flags are parsed wherever they are among the arguments, a value after
// "=" or a space (an optional one, --wait-lock [DURATION], when the next
// argument is one); the global flags (--local, --json, --region,
// --profile) may also come before the command's name.
//
// The client talks to AWS only through aws-sdk-go-v2's S3 and Step
// Functions clients (and STS to name the deployer by convention), built in
// one place (connect) from a typed deployerConfig. --local points them at
// the local region (ferry local). Following an execution is a pure reader
// of its history (historyReader) and a display (plain lines, a live block
// on a terminal, or JSON), polled at an interval through Env.Sleep so
// tests never sleep: fast while the execution moves, just after its next
// check while it waits. A poll reads the new events only, and while the
// health checks loop only the newest round when the newest report's
// count of checks proves the rounds before it plain (newestRound).
// Between polls the display ticks: on a terminal a
// clock line each second saying what the deploy waits for and how long
// the state machine will wait; in a log a line at least every 30 s, as
// CI systems end silent jobs. ferry follow of a deploy that has ended
// shows its outcome and exits with its code.
//
// On a terminal nothing wraps: a live health line too wide says
// healthy/target and the stability countdown before the rest, then cuts
// the service's name; the tables of history and list (table) drop or
// abbreviate columns in a set order for the terminal's width, then cut
// the last.
//
// make demo runs demo.sh: the local region in the background and the
// client's commands against it.
package main
