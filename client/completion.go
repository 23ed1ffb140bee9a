package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ferryhq/ferry/client/help"
	"github.com/ferryhq/ferry/internal/store/ledger"
)

// completionCommand is ferry completion.
type completionCommand struct {
	env Env
}

func (c *completionCommand) spec() commandSpec {
	return commandSpec{
		name:    "completion",
		args:    "bash|zsh|fish",
		summary: "Print a shell completion script",
		help: `Completion prints a script that completes ferry's commands, their flags
and, for the commands that take a project and a config, the names the
deployer knows (it runs ferry __names as you type, with the deployer
flags of the command line, e.g. --local). Load it with:

  bash: source <(ferry completion bash)   (or save it in bash-completion's directory)
  zsh:  source <(ferry completion zsh)
  fish: ferry completion fish | source`,
		exits: []int{exitFailure},
	}
}

func (c *completionCommand) defineFlags(*flag.FlagSet) {}

func (c *completionCommand) Run(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return usageErrorf(c.spec(), "completion takes one shell: bash, zsh or fish")
	}
	table := completionTable(commands(c.env))
	switch args[0] {
	case "bash":
		writeBashCompletion(c.env.Stdout, table)
	case "zsh":
		fmt.Fprint(c.env.Stdout, "#compdef ferry\n# ferry's bash completion, through zsh's bashcompinit.\nautoload -U +X bashcompinit && bashcompinit\n")
		writeBashCompletion(c.env.Stdout, table)
	case "fish":
		writeFishCompletion(c.env.Stdout, table)
	default:
		return usageErrorf(c.spec(), "unknown shell %q: want bash, zsh or fish", args[0])
	}
	return nil
}

// completedCommand is what completion knows of one command, from the
// command table.
type completedCommand struct {
	name, summary string
	// flags are the flag names ("json"), with usage.
	flags []flag.Flag
	// files says the command takes files (its synopsis names FILE).
	files bool
}

// completionTable is what the scripts complete, read from the command
// table (never a second list): every command but the hidden ones, and
// help.
func completionTable(cmds []command) []completedCommand {
	var out []completedCommand
	for _, cmd := range cmds {
		spec := cmd.spec()
		if spec.hidden {
			continue
		}
		fs := flag.NewFlagSet(spec.name, flag.ContinueOnError)
		cmd.defineFlags(fs)
		cc := completedCommand{name: spec.name, summary: spec.summary, files: strings.Contains(spec.args, "FILE")}
		fs.VisitAll(func(f *flag.Flag) { cc.flags = append(cc.flags, *f) })
		out = append(out, cc)
	}
	return append(out, completedCommand{name: "help", summary: helpSummary})
}

func writeBashCompletion(w io.Writer, table []completedCommand) {
	var names []string
	var flagCases, fileCommands strings.Builder
	for _, cc := range table {
		names = append(names, cc.name)
		if len(cc.flags) > 0 {
			var flags []string
			for _, f := range cc.flags {
				flags = append(flags, "--"+f.Name)
			}
			fmt.Fprintf(&flagCases, "    %s) COMPREPLY=($(compgen -W '%s' -- \"$cur\")) ;;\n", cc.name, strings.Join(flags, " "))
		}
		if cc.files {
			fileCommands.WriteString("|" + cc.name)
		}
	}
	fmt.Fprintf(w, `# bash completion for ferry (ferry completion bash).
_ferry() {
  local cur="${COMP_WORDS[COMP_CWORD]}"
  COMPREPLY=()
  if (( COMP_CWORD == 1 )); then
    COMPREPLY=($(compgen -W '%s' -- "$cur"))
    return
  fi
  local cmd="${COMP_WORDS[1]}"
  if [[ $cur == -* ]]; then
    case "$cmd" in
%s    esac
    return
  fi
  local names
  names="$(ferry __names -- "${COMP_WORDS[@]:1:COMP_CWORD-1}" 2>/dev/null)"
  COMPREPLY=($(compgen -W "$names" -- "$cur"))
  case "$cmd" in
    %s) COMPREPLY+=($(compgen -f -- "$cur")) ;;
  esac
}
complete -F _ferry ferry
`, strings.Join(names, " "), flagCases.String(), strings.TrimPrefix(fileCommands.String(), "|"))
}

func writeFishCompletion(w io.Writer, table []completedCommand) {
	fmt.Fprint(w, "# fish completion for ferry (ferry completion fish).\ncomplete -c ferry -f\n")
	var files []string
	for _, cc := range table {
		fmt.Fprintf(w, "complete -c ferry -n __fish_use_subcommand -a %s -d %s\n", cc.name, fishQuote(cc.summary))
		for _, f := range cc.flags {
			value := " -r"
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
				value = ""
			}
			fmt.Fprintf(w, "complete -c ferry -n '__fish_seen_subcommand_from %s' -l %s%s -d %s\n", cc.name, f.Name, value, fishQuote(f.Usage))
		}
		if cc.files {
			files = append(files, cc.name)
		}
	}
	fmt.Fprint(w, "complete -c ferry -n 'not __fish_use_subcommand' -a '(ferry __names -- (commandline -opc)[2..-1] 2>/dev/null)'\n")
	fmt.Fprintf(w, "complete -c ferry -n '__fish_seen_subcommand_from %s' -F\n", strings.Join(files, " "))
}

// fishQuote quotes s for fish, in single quotes.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// namesCommand is ferry __names, hidden: what the completion scripts run
// to complete a project or a config name.
type namesCommand struct {
	env Env
}

func (c *namesCommand) spec() commandSpec {
	return commandSpec{
		name:    "__names",
		args:    "-- WORD...",
		summary: "Complete a project or config name (for the completion scripts)",
		help: `__names prints, one a line, what may come next on the command line WORDS
(the words after ferry, before the one being completed): command and
topic names after help, the projects the deployer knows for a command that takes
PROJECT, then the configs of that project. It prints nothing when it
cannot tell or cannot reach the deployer: completion must stay quiet.`,
		exits:  []int{exitFailure},
		hidden: true,
	}
}

func (c *namesCommand) defineFlags(*flag.FlagSet) {}

func (c *namesCommand) Run(ctx context.Context, words []string) error {
	names, err := c.names(ctx, words)
	if err != nil {
		return exitSilently(exitFailure)
	}
	for _, n := range names {
		fmt.Fprintln(c.env.Stdout, n)
	}
	return nil
}

// subcommander is a command whose first argument is one of its
// subcommands (ferry pipeline validate): completion offers them.
type subcommander interface {
	subcommands() []string
}

// names is what may follow words (see spec).
func (c *namesCommand) names(ctx context.Context, words []string) ([]string, error) {
	if len(words) == 0 {
		return nil, nil
	}
	table := commands(c.env)
	if words[0] == "help" {
		if len(words) > 1 {
			return nil, nil
		}
		var names []string
		for _, cc := range completionTable(table) {
			names = append(names, cc.name)
		}
		for _, t := range help.Names() {
			if !slices.Contains(names, t) {
				names = append(names, t) // a topic that is not also a command
			}
		}
		return names, nil
	}
	i := slices.IndexFunc(table, func(cmd command) bool { return cmd.spec().name == words[0] })
	if i < 0 {
		return nil, nil
	}
	if sc, ok := table[i].(subcommander); ok {
		if len(words) == 1 {
			return sc.subcommands(), nil
		}
		return nil, nil
	}
	if !strings.Contains(table[i].spec().args, "PROJECT") {
		return nil, nil
	}
	fs := flag.NewFlagSet(words[0], flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	table[i].defineFlags(fs)
	if awaitsValue(fs, words[len(words)-1]) {
		return nil, nil
	}
	positional, err := parseInterspersed(fs, words[1:])
	if err != nil || len(positional) > 1 {
		return nil, nil
	}
	return c.projectNames(ctx, fs, positional)
}

// awaitsValue reports whether word is a flag of fs that takes a value
// in the next word.
func awaitsValue(fs *flag.FlagSet, word string) bool {
	name := strings.TrimLeft(word, "-")
	if !strings.HasPrefix(word, "-") || strings.Contains(name, "=") {
		return false
	}
	f := fs.Lookup(name)
	if f == nil {
		return false
	}
	b, isBool := f.Value.(interface{ IsBoolFlag() bool })
	return !isBool || !b.IsBoolFlag()
}

// projectNames are the projects the deployer knows or, with a project in
// positional, its configs; the deployer is the one the command's flags in
// fs name.
func (c *namesCommand) projectNames(ctx context.Context, fs *flag.FlagSet, positional []string) ([]string, error) {
	f := deployerFlags{}
	if v := fs.Lookup("local"); v != nil {
		f.local = v.Value.String() == "true"
	}
	if v := fs.Lookup("bucket"); v != nil {
		f.bucket = v.Value.String()
	}
	if v := fs.Lookup("state-machine"); v != nil {
		f.stateMachine = v.Value.String()
	}
	d, err := connect(ctx, c.env, &f)
	if err != nil {
		return nil, err
	}
	pcs, err := ledger.New(d.s3, d.cfg.Bucket).ProjectConfigs(ctx)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, pc := range pcs {
		switch {
		case len(positional) == 0:
			names = append(names, pc.Project)
		case pc.Project == positional[0]:
			names = append(names, pc.Config)
		}
	}
	return slices.Compact(names), nil
}
