package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/ferryhq/ferry/client/help"
	"github.com/ferryhq/ferry/internal/release/spelling"
)

// Env is what a command may touch of its process: the standard streams and
// the environment. main passes the real ones; tests pass buffers and a map.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv returns the value of an environment variable, "" when unset.
	Getenv func(key string) string
	// Sleep waits for d or until ctx is done (then it returns ctx's error).
	// nil means the wall clock; tests pass a function that does not sleep.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the client's clock (release ids, created_at against AWS, halt
	// markers); nil means the wall clock.
	Now func() time.Time
	// Random is where release ids' random digits come from; nil means
	// crypto/rand.
	Random io.Reader
	// Whoami returns the operating system's user name and the host name,
	// each "" when unknown: who is asking when the environment does not
	// say (CI, containers). nil means the operating system's.
	Whoami func() (user, host string)
	// Terminal reports whether Stdin is a terminal a person types at
	// (ferry destroy asks there for a confirmation). nil means: Stdin is
	// an *os.File that is a terminal.
	Terminal func() bool
}

// withDefaults fills in what env leaves nil: no environment variables,
// the wall clock.
func (env Env) withDefaults() Env {
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	if env.Sleep == nil {
		env.Sleep = sleep
	}
	if env.Now == nil {
		env.Now = time.Now
	}
	if env.Whoami == nil {
		env.Whoami = whoami
	}
	if env.Terminal == nil {
		in := env.Stdin
		env.Terminal = func() bool {
			f, ok := in.(*os.File)
			return ok && term.IsTerminal(int(f.Fd()))
		}
	}
	return env
}

// command is one ferry subcommand: a struct holding what it needs (its
// Env, the values of its flags). A fresh one is made for every command
// line, so flag values never leak between runs.
type command interface {
	// spec says what the command is called and what ferry help says of it.
	spec() commandSpec
	// defineFlags declares the command's flags on fs, bound to its fields.
	defineFlags(fs *flag.FlagSet)
	// Run runs the command. args are its positional arguments: the
	// caller has parsed the flags defineFlags declared. The error, when
	// not nil, decides the exit status (see ExitError and exitStatus).
	Run(ctx context.Context, args []string) error
}

// commandSpec names and describes a command.
type commandSpec struct {
	// name is what the user types: ferry <name>.
	name string
	// args is the synopsis of the arguments after the flags, e.g. "FILE...".
	args string
	// summary is one line for the command list.
	summary string
	// help is the longer description shown by ferry help <name>.
	help string
	// exits are the exit codes the command may end with besides those of
	// every command (commonExits): ferry help lists them from the one
	// table, exitCodes.
	exits []int
	// hidden keeps the command out of ferry help and completion (the
	// commands the completion scripts run).
	hidden bool
}

// commands is the command table: every command, bound to env, in the
// order ferry help lists them (by name).
func commands(env Env) []command {
	return []command{
		&namesCommand{env: env},
		&bootstrapCommand{env: env},
		&completionCommand{env: env},
		&deployCommand{env: env},
		&destroyCommand{deploy: deployCommand{env: env, name: "destroy"}},
		&followCommand{env: env},
		&haltCommand{env: env},
		&historyCommand{env: env},
		&listCommand{env: env},
		&localCommand{env: env},
		&pipelineCommand{env: env},
		&planCommand{env: env},
		&promoteCommand{deploy: deployCommand{env: env, name: "promote"}},
		&rollbackCommand{deploy: deployCommand{env: env, name: "rollback"}},
		&schemaCommand{env: env},
		&showCommand{env: env},
		&statusCommand{env: env},
		&unlockCommand{env: env},
		&validateCommand{env: env},
		&versionCommand{env: env},
	}
}

// cli is ferry's command line: the process's Env and the command table
// bound to it. It runs one command line.
type cli struct {
	env      Env
	commands []command
}

// newCLI returns the command line of a process with env.
func newCLI(env Env) *cli {
	env = env.withDefaults()
	return &cli{env: env, commands: commands(env)}
}

// commandNames are the names of the commands ferry help lists, help
// included.
func (c *cli) commandNames() []string {
	names := []string{"help"}
	for _, cmd := range c.commands {
		if !cmd.spec().hidden {
			names = append(names, cmd.spec().name)
		}
	}
	return names
}

// didYouMean is " (did you mean X?)" when name is a near miss of one of
// names, else "".
func didYouMean(name string, names []string) string {
	if best, ok := spelling.Closest(name, names); ok {
		return " (did you mean " + best + "?)"
	}
	return ""
}

// find returns the command the user called name, or nil.
func (c *cli) find(name string) command {
	for _, cmd := range c.commands {
		if cmd.spec().name == name {
			return cmd
		}
	}
	return nil
}

// Run dispatches args (without the program name) to a command and returns
// its error. A panic is a bug in ferry: it comes back as an exitInternal
// error of one line and a plea, never a stack trace.
func (c *cli) Run(ctx context.Context, args []string) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = exitf(exitInternal, "ferry: internal error: %v\nThis is a bug in ferry; please report it with the command you ran.", p)
		}
	}()
	if len(args) == 0 {
		c.usage(c.env.Stderr)
		return exitSilently(exitUsage)
	}
	args = hoistGlobalFlags(args)
	switch name := args[0]; name {
	case "help", "-h", "-help", "--help":
		return c.help(args[1:])
	case "-version", "--version":
		return c.run(ctx, c.find("version"), args[1:])
	default:
		cmd := c.find(name)
		if _, isTopic := help.Page(name); cmd == nil && isTopic {
			return exitf(exitUsage, "ferry: unknown command %q; it is a topic of the reference: run 'ferry help %s'", name, name)
		}
		if cmd == nil {
			return exitf(exitUsage, "ferry: unknown command %q%s; run 'ferry help' for the list", name, didYouMean(name, c.commandNames()))
		}
		return c.run(ctx, cmd, args[1:])
	}
}

// globalFlags are the flags that may come before the command's name as
// well as after it ("ferry --local status P"), each with whether it
// takes a value: the deployer's and --json.
var globalFlags = map[string]bool{"json": false, "local": false, "region": true, "profile": true}

// hoistGlobalFlags moves the global flags before the command's name to
// just after it, where the command parses them: "ferry --region R status
// P" is "ferry status --region R P". Anything else leading stays first.
func hoistGlobalFlags(args []string) []string {
	n := 0
	for n < len(args) && strings.HasPrefix(args[n], "-") {
		name, _, hasValue := strings.Cut(strings.TrimLeft(args[n], "-"), "=")
		takesValue, ok := globalFlags[name]
		if !ok {
			break
		}
		if n++; takesValue && !hasValue {
			n++ // its value is the next argument
		}
	}
	if n == 0 || n >= len(args) {
		return args
	}
	return slices.Concat(args[n:n+1], args[:n], args[n+1:])
}

// interrupted is err, exiting exitInterrupted when ctx was cancelled (the
// process got Ctrl-C or SIGTERM) and the command failed for it, whatever
// moment it came at: its message is kept.
func interrupted(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil {
		return err
	}
	var e *ExitError
	if errors.As(err, &e) && e.Code == exitInternal {
		return err
	}
	if errors.As(err, &e) && e.Err == nil {
		return exitSilently(exitInterrupted)
	}
	return &ExitError{Code: exitInterrupted, Err: err}
}

// run parses the flags of cmd (anywhere among the arguments, until "--")
// and runs it. Under --json, a failure with something to say is also
// reported on stdout as one JSON object (jsonFailure), whatever it is: a
// usage error, nothing started, Ctrl-C.
func (c *cli) run(ctx context.Context, cmd command, args []string) error {
	spec := cmd.spec()
	fs := flag.NewFlagSet("ferry "+spec.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cmd.defineFlags(fs)
	err := interrupted(ctx, c.parseAndRun(ctx, cmd, fs, args))
	if err != nil && jsonAsked(fs, args) {
		reportJSONFailure(c.env.Stdout, spec.name, err)
	}
	return err
}

// parseAndRun parses args with fs, the flags of cmd, and runs cmd.
func (c *cli) parseAndRun(ctx context.Context, cmd command, fs *flag.FlagSet, args []string) error {
	spec := cmd.spec()
	positional, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		spec.usage(c.env.Stdout, fs)
		return nil
	}
	if err != nil {
		return usageErrorf(spec, "%s", flagError(fs, err))
	}
	return cmd.Run(ctx, positional)
}

// The messages of the flag package that flagError rewrites.
var (
	flagUnknownRe = regexp.MustCompile(`^flag provided but not defined: -+(\S+)$`)
	flagNoValueRe = regexp.MustCompile(`^flag needs an argument: -+(\S+)$`)
	flagBadRe     = regexp.MustCompile(`^invalid (?:boolean )?value ("(?:[^"\\]|\\.)*") for (?:flag )?-+(\S+): `)
)

// flagError says what is wrong with a flag in ferry's terms: flags spelled
// with "--", as the help shows them, and what a bad value should look
// like (the flag package says only "parse error").
func flagError(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	if m := flagUnknownRe.FindStringSubmatch(msg); m != nil {
		if alias, ok := flagAliases[m[1]]; ok && fs.Lookup(alias) != nil {
			return "unknown flag " + dashed(m[1]) + " (did you mean --" + alias + "?)"
		}
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		if best, ok := spelling.Closest(m[1], names); ok {
			return "unknown flag --" + m[1] + " (did you mean --" + best + "?)"
		}
		return "unknown flag --" + m[1]
	}
	if m := flagNoValueRe.FindStringSubmatch(msg); m != nil {
		return "--" + m[1] + " needs a value"
	}
	if m := flagBadRe.FindStringSubmatch(msg); m != nil {
		want := msg[len(m[0]):]
		if f := fs.Lookup(m[2]); f != nil {
			if g, ok := f.Value.(flag.Getter); ok {
				switch g.Get().(type) {
				case time.Duration:
					want = "want a duration such as 500ms, 2s or 1m"
				case float64:
					want = "want a number"
				case bool:
					want = "want true or false"
				case int, int64, uint, uint64:
					want = "want a whole number"
				}
			}
		}
		return "invalid value " + m[1] + " for --" + m[2] + ": " + want
	}
	return msg
}

// flagAliases are the flags other tools spell differently, each with
// ferry's: "-o json" (kubectl, aws) is --json.
var flagAliases = map[string]string{"o": "json", "output": "json"}

// dashed is a flag's name as typed: "-o", "--output".
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// usageErrorf is the error of a wrong use of the command spec describes:
// what is wrong and the command's synopsis, exiting exitUsage.
func usageErrorf(spec commandSpec, format string, args ...any) error {
	return exitf(exitUsage, "ferry %s: %s\nusage: ferry %s (run 'ferry help %s' for details)",
		spec.name, fmt.Sprintf(format, args...), spec.synopsis(), spec.name)
}

func (spec commandSpec) synopsis() string {
	return strings.TrimSpace(spec.name + " [flags] " + spec.args)
}

// usage writes the command's usage: synopsis, help and the flags fs
// declares.
func (spec commandSpec) usage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: ferry %s\n\n%s\n", spec.synopsis(), strings.TrimSpace(spec.help))
	var flags strings.Builder
	fs.VisitAll(func(f *flag.Flag) {
		name, use := flag.UnquoteUsage(f)
		fmt.Fprintf(&flags, "  --%s", f.Name)
		if name != "" {
			fmt.Fprintf(&flags, " %s", name)
		}
		fmt.Fprintf(&flags, "\n      %s\n", use)
	})
	if flags.Len() > 0 {
		fmt.Fprintf(w, "\nflags:\n%s", flags.String())
	}
	codes := spec.exitCodes()
	if fs.Lookup("local") != nil {
		codes = append(codes, deployerExits...) // it reaches a deployer
	}
	fmt.Fprint(w, "\nexit codes (ferry help exit-codes lists every one):\n")
	writeExitCodes(w, codes)
}

// exitCodes are the codes the command may exit with: those of every
// command and its own.
func (spec commandSpec) exitCodes() []int {
	return append(slices.Clone(commonExits), spec.exits...)
}

// optionalValue is a flag whose value may be left out (--wait-lock alone,
// or --wait-lock=30m): the flag package parses it as a boolean flag.
// takesValue reports whether s, the argument after it, is its value.
type optionalValue interface {
	flag.Value
	IsBoolFlag() bool
	takesValue(s string) bool
}

// parseInterspersed parses flags wherever they are among args, so
// "ferry validate a.json --json" works; "--" ends the flags. Every flag
// takes its value after "=" or as the next argument: a flag whose value
// is optional (optionalValue) takes the next argument when it is one.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	args = joinOptionalValues(fs, args)
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// joinOptionalValues rewrites "--name VALUE" as "--name=VALUE" when name
// is an optionalValue flag of fs and VALUE its value, up to "--".
func joinOptionalValues(fs *flag.FlagSet, args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if f := fs.Lookup(name); strings.HasPrefix(a, "-") && f != nil && i+1 < len(args) {
			if v, ok := f.Value.(optionalValue); ok && v.takesValue(args[i+1]) {
				out = append(out, a+"="+args[i+1])
				i++
				continue
			}
		}
		out = append(out, a)
	}
	return out
}

// helpHelp is ferry help help.
const helpHelp = `usage: ferry help [COMMAND | TOPIC]

Without an argument, the list of commands and topics. With a command, its
usage, flags and exit codes. With a topic, its page of the reference
(exit-codes: what every exit status means); a name that is both, such as
local, shows the usage, then the page. On a terminal a page is laid out to
its width; piped, it is the page's markdown.
`

// help prints the list of commands and topics, a command's usage or a
// topic's page (both for a name that is both).
func (c *cli) help(args []string) error {
	switch len(args) {
	case 0:
		c.usage(c.env.Stdout)
		return nil
	case 1:
		if args[0] == "help" {
			fmt.Fprint(c.env.Stdout, helpHelp)
			return nil
		}
		cmd := c.find(args[0])
		page, isTopic := help.Page(args[0])
		if cmd == nil && !isTopic {
			return exitf(exitUsage, "ferry help: unknown command or topic %q%s; run 'ferry help' for the list", args[0], didYouMean(args[0], append(c.commandNames(), help.Names()...)))
		}
		if cmd != nil {
			spec := cmd.spec()
			fs := flag.NewFlagSet(spec.name, flag.ContinueOnError)
			cmd.defineFlags(fs)
			spec.usage(c.env.Stdout, fs)
		}
		if isTopic {
			if cmd != nil {
				fmt.Fprintln(c.env.Stdout)
			}
			writePage(c.env.Stdout, page)
		}
		return nil
	}
	return exitf(exitUsage, "usage: ferry help [COMMAND | TOPIC]")
}

// usage prints the list of commands and topics.
func (c *cli) usage(w io.Writer) {
	fmt.Fprint(w, "ferry deploys releases to EC2 Auto Scaling Groups, blue/green.\n\nusage: ferry COMMAND [flags] [args]\n\ncommands:\n")
	width := 4
	for _, cmd := range c.commands {
		if !cmd.spec().hidden {
			width = max(width, len(cmd.spec().name))
		}
	}
	for _, t := range help.Topics {
		width = max(width, len(t.Name))
	}
	for _, cmd := range c.commands {
		spec := cmd.spec()
		if spec.hidden {
			continue
		}
		fmt.Fprintf(w, "  %-*s  %s\n", width, spec.name, spec.summary)
	}
	fmt.Fprintf(w, "  %-*s  %s\n", width, "help", helpSummary)
	fmt.Fprint(w, "\ntopics (the reference, also in client/help/ and at the local console's Help):\n")
	for _, t := range help.Topics {
		fmt.Fprintf(w, "  %-*s  %s\n", width, t.Name, t.Summary)
	}
	fmt.Fprint(w, "\nRun 'ferry help COMMAND' for the usage of a command, 'ferry help TOPIC' for a page of the reference.\n"+
		"--local, --json, --region and --profile may come before the command as after it.\n")
}

// helpSummary is help's line in the command list and completion.
const helpSummary = "Show this list, a command's usage or a topic's page"

// writeIndentedJSON writes v on w as JSON indented by two spaces, HTML
// characters unescaped, and a newline, in one write. Its error is the
// encoding's: a failed write on w has nowhere better to be reported.
func writeIndentedJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, _ = w.Write(buf.Bytes())
	return nil
}

// sleep waits for d on the wall clock, or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
