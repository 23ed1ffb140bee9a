package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"
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
}

// command is one ferry subcommand.
type command struct {
	// name is what the user types: ferry <name>.
	name string
	// args is the synopsis of the arguments after the flags, e.g. "FILE...".
	args string
	// summary is one line for the command list.
	summary string
	// help is the longer description shown by ferry help <name>.
	help string
	// usageExit, when not zero, is the exit code of a wrong use of the
	// command instead of exitUsage (deploy and halt keep exitUsage's 2 for
	// FailureDirty).
	usageExit int
	// flags declares the command's flags on fs and returns a function that
	// runs the command with the parsed flags and the positional arguments.
	// It is called once per invocation, so flag values never leak between
	// runs.
	flags func(fs *flag.FlagSet) func(ctx context.Context, env Env, args []string) int
}

// commands is the command table, filled by register.
var commands = map[string]*command{}

// register adds c to the command table. Each command's file calls it from
// init. It panics on a duplicate name: that is a programming error caught by
// any test of the package.
func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("ferry: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

// run dispatches args (without the program name) to a command and returns
// the exit code.
func run(ctx context.Context, env Env, args []string) (code int) {
	defer func() {
		// A panic is a bug in ferry: say so in one line, never with a
		// stack trace.
		if p := recover(); p != nil {
			fmt.Fprintf(env.Stderr, "ferry: internal error: %v\nThis is a bug in ferry; please report it with the command you ran.\n", p)
			code = exitInternal
		}
	}()
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	if env.Sleep == nil {
		env.Sleep = sleep
	}
	if env.Now == nil {
		env.Now = time.Now
	}
	if len(args) == 0 {
		usage(env.Stderr)
		return exitUsage
	}
	switch name := args[0]; name {
	case "help", "-h", "-help", "--help":
		return help(env, args[1:])
	default:
		c, ok := commands[name]
		if !ok {
			fmt.Fprintf(env.Stderr, "ferry: unknown command %q; run 'ferry help' for the list\n", name)
			return exitUsage
		}
		return c.run(ctx, env, args[1:])
	}
}

// run parses the flags of c (anywhere among the arguments, until "--") and
// runs it.
func (c *command) run(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("ferry "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	body := c.flags(fs)
	positional, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		c.usage(env.Stdout, fs)
		return exitOK
	}
	if err != nil {
		return c.usageError(env, "%s", flagError(fs, err))
	}
	return body(ctx, env, positional)
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

// usageError reports a wrong use of c and returns exitUsage.
func (c *command) usageError(env Env, format string, args ...any) int {
	fmt.Fprintf(env.Stderr, "ferry %s: %s\n", c.name, fmt.Sprintf(format, args...))
	fmt.Fprintf(env.Stderr, "usage: ferry %s (run 'ferry help %s' for details)\n", c.synopsis(), c.name)
	if c.usageExit != 0 {
		return c.usageExit
	}
	return exitUsage
}

func (c *command) synopsis() string {
	return strings.TrimSpace(c.name + " [flags] " + c.args)
}

func (c *command) usage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: ferry %s\n\n%s\n", c.synopsis(), strings.TrimSpace(c.help))
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
}

// parseInterspersed parses flags wherever they are among args, so
// "ferry validate a.json --json" works; "--" ends the flags.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
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

// help prints the command list, or one command's usage.
func help(env Env, args []string) int {
	switch len(args) {
	case 0:
		usage(env.Stdout)
		return exitOK
	case 1:
		c, ok := commands[args[0]]
		if !ok {
			fmt.Fprintf(env.Stderr, "ferry help: unknown command %q\n", args[0])
			return exitUsage
		}
		fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
		c.flags(fs)
		c.usage(env.Stdout, fs)
		return exitOK
	}
	fmt.Fprintln(env.Stderr, "usage: ferry help [COMMAND]")
	return exitUsage
}

// usage prints the command list.
func usage(w io.Writer) {
	fmt.Fprint(w, "ferry deploys releases to EC2 Auto Scaling Groups, blue/green.\n\nusage: ferry COMMAND [flags] [args]\n\ncommands:\n")
	names := make([]string, 0, len(commands))
	for name := range commands {
		names = append(names, name)
	}
	slices.Sort(names)
	width := 4
	for _, n := range names {
		width = max(width, len(n))
	}
	for _, n := range names {
		fmt.Fprintf(w, "  %-*s  %s\n", width, n, commands[n].summary)
	}
	fmt.Fprintf(w, "  %-*s  %s\n", width, "help", "Show this list, or the usage of one command")
	fmt.Fprint(w, "\nRun 'ferry help COMMAND' for the usage of a command.\n")
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
