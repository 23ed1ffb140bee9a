package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBashCompletion runs the bash script in a real bash: it registers
// _ferry for ferry, completes commands and flags from the command table,
// and asks ferry __names (a stub here, which records its arguments) for
// names with the words typed so far.
func TestBashCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	code, script, stderr := runFerry(t, "completion", "bash")
	require.Equal(t, exitOK, code, stderr)
	dir := t.TempDir()
	file := filepath.Join(dir, "ferry.bash")
	require.NoError(t, os.WriteFile(file, []byte(script), 0o600))
	cases := []struct {
		name  string
		words []string
		want  string
		names string // the arguments the stub was called with, "" when not
	}{
		{"a command", []string{"ferry", "st"}, "status", ""},
		{"every command", []string{"ferry", "l"}, "list local", ""},
		{"a flag of deploy", []string{"ferry", "deploy", "--no"}, "--no-wait", ""},
		{"the flags of follow", []string{"ferry", "follow", "--p"}, "--poll --profile", ""},
		{"a project", []string{"ferry", "status", "--local", "coinbase/d"}, "coinbase/deploy-test", "__names -- status --local"},
		{"a config", []string{"ferry", "unlock", "coinbase/deploy-test", "dev"}, "development", "__names -- unlock coinbase/deploy-test"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			log := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".log")
			quoted := make([]string, len(tc.words))
			for i, w := range tc.words {
				quoted[i] = "'" + w + "'"
			}
			prog := `source "$1"; log="$2"
ferry() { echo "$*" >> "$log"; printf 'coinbase/deploy-test\ndevelopment\ncoinbase/shop\n'; }
COMP_WORDS=(` + strings.Join(quoted, " ") + `); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
_ferry
echo "${COMPREPLY[*]}"`
			out, err := exec.Command(bash, "--norc", "--noprofile", "-c", prog, "bash", file, log).CombinedOutput()
			require.NoError(t, err, "%s", out)
			assert.Equal(t, tc.want, strings.TrimSpace(string(out)))
			called, _ := os.ReadFile(log)
			assert.Equal(t, tc.names, strings.TrimSpace(string(called)))
		})
	}
	t.Run("registered", func(t *testing.T) {
		out, err := exec.Command(bash, "--norc", "--noprofile", "-c", `source "$1"; complete -p ferry`, "bash", file).CombinedOutput()
		require.NoError(t, err, "%s", out)
		assert.Equal(t, "complete -F _ferry ferry\n", string(out))
	})
}

// TestShellCompletions: zsh and fish load their scripts without error
// when installed (skipped otherwise), and every script names every
// visible command and no hidden one.
func TestShellCompletions(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		t.Run(shell, func(t *testing.T) {
			code, script, stderr := runFerry(t, "completion", shell)
			require.Equal(t, exitOK, code, stderr)
			for _, cc := range completionTable(commands(Env{})) {
				assert.Contains(t, script, cc.name)
			}
			assert.NotContains(t, script, "ferry __names --local", "__names is called, never completed")
			assert.Contains(t, script, "__names --")
			path, err := exec.LookPath(shell)
			if err != nil || shell == "bash" {
				return
			}
			file := filepath.Join(t.TempDir(), "ferry."+shell)
			require.NoError(t, os.WriteFile(file, []byte(script), 0o600))
			out, err := exec.Command(path, "-c", "source "+file).CombinedOutput()
			assert.NoError(t, err, "%s", out)
		})
	}
	code, _, stderr := runFerry(t, "completion", "tcsh")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `unknown shell "tcsh"`)
}

// TestNames: ferry __names completes command names after help, projects,
// then a project's configs from the deployer, and nothing where no name
// goes.
func TestNames(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	first := tr.ferry(t, "deploy", "--local", deployTestRelease)
	require.Equal(t, exitOK, first.code, first.stderr)
	cases := []struct {
		name  string
		words []string
		want  string
	}{
		{"projects", []string{"status", "--local"}, "coinbase/deploy-test\n"},
		{"configs", []string{"follow", "coinbase/deploy-test", "--local"}, "development\n"},
		{"configs of an unknown project", []string{"status", "--local", "nobody/nothing"}, ""},
		{"after both", []string{"unlock", "--local", "coinbase/deploy-test", "development"}, ""},
		{"a flag's value", []string{"status", "--local", "--bucket"}, ""},
		{"a command without names", []string{"validate", "--local"}, ""},
		{"help: commands, then the topics that are not one", []string{"help"}, "bootstrap\ncompletion\ndeploy\ndestroy\nfollow\nhalt\nhistory\nlist\nlocal\npipeline\nplan\npromote\nrollback\nschema\nshow\nstatus\nunlock\nvalidate\nversion\nhelp\nrelease\ncommands\nexit-codes\nstatemachine\nguarantees\nevents\nsecurity\ndeploying\nperformance\ndevelopment\n"},
		{"subcommands", []string{"pipeline"}, "validate\nstatus\nrelease\nschema\nregister\nstart\napprove\nhalt\n"},
		{"after a subcommand", []string{"pipeline", "status"}, ""},
		{"nothing", nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := tr.ferry(t, append([]string{"__names", "--"}, tc.words...)...)
			assert.Equal(t, exitOK, res.code, res.stderr)
			assert.Equal(t, tc.want, res.stdout)
		})
	}
	t.Run("no deployer: quiet", func(t *testing.T) {
		code, stdout, stderr := runFerry(t, "__names", "--", "status", "--local")
		assert.Equal(t, exitFailure, code)
		assert.Empty(t, stdout)
		assert.Empty(t, stderr)
	})
	code, stdout, _ := runFerry(t, "help")
	require.Equal(t, exitOK, code)
	assert.NotContains(t, stdout, "__names", "hidden from help")
}
