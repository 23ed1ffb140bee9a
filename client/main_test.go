package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/client/help"
	"github.com/ferryhq/ferry/infra/bootstrap"
	"github.com/ferryhq/ferry/internal/release"
)

var update = flag.Bool("update", false, "rewrite client/testdata/golden/*.golden")

// run does in-process what main does: it runs the command line args with
// env and turns the error into the exit status, printing its message on
// env.Stderr.
func run(ctx context.Context, env Env, args []string) int {
	return exitStatus(env.Stderr, newCLI(env).Run(ctx, args))
}

// runFerry runs the CLI in-process and returns its exit code and output.
func runFerry(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, Getenv: noLocalRegion(t)}, args)
	if asksJSON(args) {
		checkEvents(t, out.String())
	}
	return code, out.String(), errOut.String()
}

// TestGolden compares the whole output of ferry commands with
// testdata/golden/<name>.golden (refreshed with -update).
func TestGolden(t *testing.T) {
	cases := []struct {
		name string
		args []string
	}{
		{"validate-seed", []string{"validate", "../testdata/deploy-test-release.json"}},
		{"validate-valid-files", []string{"validate", "../testdata/deploy-test-release.json", "../testdata/multi-service-release.json"}},
		{"validate-invalid", []string{"validate", "../testdata/invalid/autoscaling.json", "../testdata/invalid/unknown-fields.json", "../testdata/deploy-test-release.json"}},
		{"validate-malformed", []string{"validate", "../testdata/invalid/malformed-json.json"}},
		{"validate-missing-file", []string{"validate", "testdata/no-such-release.json"}},
		{"validate-directory", []string{"validate", "testdata"}},
		{"validate-missing-userdata", []string{"validate", "../testdata/invalid/user-data-file-missing.json"}},
		{"validate-json", []string{"validate", "--json", "../testdata/deploy-test-release.json", "../testdata/invalid/tags.json", "testdata/no-such-release.json"}},
		{"validate-print", []string{"validate", "--print", "../testdata/multi-service-release.json"}},
		{"validate-json-print", []string{"validate", "../testdata/deploy-test-release.json", "--json", "--print"}},
		{"validate-no-files", []string{"validate"}},
		{"validate-bad-flag", []string{"validate", "--jsn", "x.json"}},
		{"validate-help", []string{"validate", "-h"}},
		{"validate-description-version", []string{"validate", "../testdata/invalid/description-version.json", "../testdata/invalid/description-control-version-long.json", "../testdata/invalid/description-version-types.json"}},
		{"schema", []string{"schema"}},
		{"schema-args", []string{"schema", "x"}},
		{"help", []string{"help"}},
		{"help-validate", []string{"help", "validate"}},
		{"help-unknown", []string{"help", "nope"}},
		{"help-typo", []string{"help", "stauts"}},
		{"help-topic-typo", []string{"help", "guarantes"}},
		{"help-too-many", []string{"help", "deploy", "guarantees"}},
		{"topic-as-command", []string{"guarantees"}},
		{"dash-h", []string{"-h"}},
		{"no-args", nil},
		{"unknown-command", []string{"deploi"}},
		{"help-deploy", []string{"help", "deploy"}},
		{"help-bootstrap", []string{"help", "bootstrap"}},
		{"bootstrap-no-account", []string{"bootstrap"}},
		{"bootstrap-bad-account", []string{"bootstrap", "--trust-account", "1234"}},
		{"bootstrap-bad-qualifier", []string{"bootstrap", "--trust-account", "111111111111", "--qualifier", "Blue"}},
		{"help-halt", []string{"help", "halt"}},
		{"help-status", []string{"help", "status"}},
		{"help-unlock", []string{"help", "unlock"}},
		{"deploy-invalid", []string{"deploy", "../testdata/invalid/autoscaling.json"}},
		{"deploy-missing-file", []string{"deploy", "testdata/no-such-release.json"}},
		{"deploy-no-file", []string{"deploy"}},
		{"deploy-bad-flag", []string{"deploy", "--wait", "../testdata/deploy-test-release.json"}},
		{"halt-no-args", []string{"halt"}},
		{"halt-bad-project", []string{"halt", "Coinbase", "development"}},
		{"halt-directory", []string{"halt", "testdata"}},
		{"halt-missing-file", []string{"halt", "testdata/no-such-release.json"}},
		{"deploy-bad-poll", []string{"deploy", "--poll", "abc", "../testdata/deploy-test-release.json"}},
		{"deploy-poll-no-value", []string{"deploy", "../testdata/deploy-test-release.json", "--poll"}},
		{"help-local", []string{"help", "local"}},
		{"validate-bad-bool", []string{"validate", "--json=maybe", "x.json"}},
		{"local-bad-speed", []string{"local", "--speed", "fast"}},
		{"local-negative-reconcile", []string{"local", "--reconcile", "-1s"}},
		{"local-world-speed", []string{"local", "world", "--speed", "5"}},
		{"local-json", []string{"local", "--json"}},
		{"local-world-project", []string{"local", "world", "--project", "coinbase/deploy-test"}},
		{"local-events-speed", []string{"local", "events", "--speed", "5"}},
		{"local-events-bad-since", []string{"local", "events", "--since", "yesterday"}},
		{"local-events-arg", []string{"local", "events", "coinbase/deploy-test"}},
		{"local-bad-world", []string{"local", "--world", "testdata/bad-world.json"}},
		{"status-no-args", []string{"status"}},
		{"unlock-no-release", []string{"unlock", "coinbase/deploy-test", "development"}},
		// Under --json every failure is one object on stdout too.
		{"validate-json-malformed", []string{"validate", "--json", "../testdata/invalid/malformed-json.json"}},
		{"validate-json-no-files", []string{"validate", "--json"}},
		{"validate-json-bad-flag", []string{"validate", "--json", "--jsn", "x.json"}},
		{"validate-json-bad-flag-first", []string{"validate", "--jsn", "--json", "x.json"}},
		{"deploy-json-invalid", []string{"deploy", "--json", "../testdata/invalid/autoscaling.json"}},
		{"deploy-json-missing-file", []string{"deploy", "--json", "testdata/no-such-release.json"}},
		{"status-json-no-args", []string{"status", "--json"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runFerry(t, tc.args...)
			got := fmt.Sprintf("$ ferry %s\nexit %d\n--- stdout\n%s--- stderr\n%s", strings.Join(tc.args, " "), code, stdout, stderr)
			checkGolden(t, tc.name, got)
		})
	}
}

func TestExitCodes(t *testing.T) {
	cases := []struct {
		args []string
		code int
	}{
		{[]string{"validate", "../testdata/deploy-test-release.json"}, exitOK},
		{[]string{"validate", "../testdata/invalid/tags.json"}, exitFailure},
		{[]string{"validate", "nope.json"}, exitFailure},
		{[]string{"validate"}, exitUsage},
		{[]string{"validate", "--nope"}, exitUsage},
		{[]string{"schema"}, exitOK},
		{[]string{"schema", "extra"}, exitUsage},
		{[]string{"help"}, exitOK},
		{[]string{"--help"}, exitOK},
		{nil, exitUsage},
		{[]string{"bogus"}, exitUsage},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, _ := runFerry(t, tc.args...)
			assert.Equal(t, tc.code, code)
		})
	}
}

// TestValidateEveryTestdataRelease: the CLI agrees with the release package
// on every release in testdata.
func TestValidateEveryTestdataRelease(t *testing.T) {
	valid, _ := filepath.Glob("../testdata/*.json")
	invalid, _ := filepath.Glob("../testdata/invalid/*.json")
	require.NotEmpty(t, valid)
	require.NotEmpty(t, invalid)
	for _, f := range valid {
		code, stdout, _ := runFerry(t, "validate", f)
		assert.Equal(t, exitOK, code, f)
		assert.Equal(t, f+": ok\n", stdout)
	}
	for _, f := range invalid {
		code, stdout, _ := runFerry(t, "validate", f)
		assert.Equal(t, exitFailure, code, f)
		want, err := os.ReadFile(f + ".problems")
		require.NoError(t, err)
		var lines []string
		for _, l := range strings.Split(strings.TrimSuffix(string(want), "\n"), "\n") {
			lines = append(lines, f+": "+l)
		}
		assert.Equal(t, strings.Join(lines, "\n")+"\n", stdout, f)
	}
}

func TestValidateJSONShape(t *testing.T) {
	code, stdout, _ := runFerry(t, "validate", "--json", "../testdata/invalid/tags.json", "../testdata/deploy-test-release.json")
	require.Equal(t, exitFailure, code)
	var out struct {
		Valid bool `json:"valid"`
		Files []struct {
			File     string `json:"file"`
			Valid    bool   `json:"valid"`
			SHA256   string `json:"sha256"`
			Problems []struct {
				Path    string `json:"path"`
				Message string `json:"message"`
			} `json:"problems"`
		} `json:"files"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &out))
	assert.False(t, out.Valid)
	require.Len(t, out.Files, 2)
	assert.False(t, out.Files[0].Valid)
	assert.Equal(t, `services.web.tags["aws:cloudformation:stack"]`, out.Files[0].Problems[5].Path)
	assert.True(t, out.Files[1].Valid)
	r, err := release.ReadFile("../testdata/deploy-test-release.json")
	require.NoError(t, err)
	h, err := release.Hash(r)
	require.NoError(t, err)
	assert.Equal(t, h, out.Files[1].SHA256)
}

func TestSchemaCommandPrintsSchema(t *testing.T) {
	code, stdout, stderr := runFerry(t, "schema")
	assert.Equal(t, exitOK, code)
	assert.Empty(t, stderr)
	assert.Equal(t, string(release.Schema()), stdout)
}

func TestParseInterspersed(t *testing.T) {
	cases := []struct {
		args []string
		want []string
		json bool
	}{
		{[]string{"a", "--json", "b"}, []string{"a", "b"}, true},
		{[]string{"--json", "a"}, []string{"a"}, true},
		{[]string{"a", "--", "--json"}, []string{"a", "--json"}, false},
		{nil, nil, false},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			fs := flag.NewFlagSet("x", flag.ContinueOnError)
			j := fs.Bool("json", false, "")
			got, err := parseInterspersed(fs, tc.args)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.json, *j)
		})
	}
}

// TestFlagValueAfterASpace: every flag takes its value after a space as
// after "=", an optional value (--wait-lock [DURATION]) too when the next
// argument is one; otherwise that argument stays positional.
func TestFlagValueAfterASpace(t *testing.T) {
	cases := []struct {
		args []string
		want []string
		wait time.Duration
		poll time.Duration
	}{
		{[]string{"--wait-lock", "30m", "r.json"}, []string{"r.json"}, 30 * time.Minute, defaultPollInterval},
		{[]string{"r.json", "-wait-lock", "90s"}, []string{"r.json"}, 90 * time.Second, defaultPollInterval},
		{[]string{"--wait-lock=5m", "r.json"}, []string{"r.json"}, 5 * time.Minute, defaultPollInterval},
		{[]string{"--wait-lock", "r.json"}, []string{"r.json"}, defaultWaitLock, defaultPollInterval},
		{[]string{"--poll", "5s", "r.json", "--wait-lock"}, []string{"r.json"}, defaultWaitLock, 5 * time.Second},
		{[]string{"r.json", "--", "--wait-lock", "1m"}, []string{"r.json", "--wait-lock", "1m"}, 0, defaultPollInterval},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var c deployCommand
			fs := flag.NewFlagSet("deploy", flag.ContinueOnError)
			c.defineFlags(fs)
			got, err := parseInterspersed(fs, tc.args)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.wait, c.waitLock.d)
			assert.Equal(t, tc.poll, c.follow.poll)
		})
	}
}

// TestBootstrapTemplate: ferry bootstrap prints the embedded template with
// the trusted accounts (each once, however often given) and qualifier as
// parameter defaults.
func TestBootstrapTemplate(t *testing.T) {
	code, stdout, stderr := runFerry(t, "bootstrap", "--trust-account", "111111111111,222222222222", "--trust-account", "333333333333",
		"--trust-account", "222222222222", "--trust-account", "111111111111", "--qualifier", "blue1")
	require.Equal(t, exitOK, code, stderr)
	var tmpl struct {
		Parameters map[string]struct {
			Default string
		}
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &tmpl))
	assert.Equal(t, "111111111111,222222222222,333333333333", tmpl.Parameters[bootstrap.ParamTrustedAccounts].Default)
	assert.Equal(t, "blue1", tmpl.Parameters[bootstrap.ParamQualifier].Default)
	assert.Contains(t, stderr, "ferry bootstrap: deploy this template")
}

// panicCommand is a command with a bug.
type panicCommand struct{}

func (panicCommand) spec() commandSpec {
	return commandSpec{name: "test-panic", summary: "panics"}
}
func (panicCommand) defineFlags(*flag.FlagSet)           {}
func (panicCommand) Run(context.Context, []string) error { panic("boom") }

// A panic in a command is a bug, reported in one line with exitInternal:
// never a stack trace.
func TestPanicIsOneLine(t *testing.T) {
	var out, errOut bytes.Buffer
	env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut}
	c := newCLI(env)
	c.commands = append(c.commands, panicCommand{})
	code := exitStatus(env.Stderr, c.Run(context.Background(), []string{"test-panic"}))
	assert.Equal(t, exitInternal, code)
	assert.Empty(t, out.String())
	assert.Equal(t, "ferry: internal error: boom\nThis is a bug in ferry; please report it with the command you ran.\n", errOut.String())
	assert.NotContains(t, errOut.String(), "goroutine")
}

// TestCommandTable: every command has its own name, the table lists them
// by name (the order of ferry help), and each exit code it states is in the
// one table.
func TestCommandTable(t *testing.T) {
	var names []string
	for _, cmd := range commands(Env{}) {
		spec := cmd.spec()
		names = append(names, spec.name)
		for _, code := range spec.exits {
			assert.NotEmpty(t, exitRow(code).meaning, "%s exits %d, which the table does not have", spec.name, code)
			assert.NotContains(t, commonExits, code, "%s lists %d, common to every command", spec.name, code)
		}
		assert.NotEmpty(t, spec.summary, spec.name)
		assert.NotEmpty(t, spec.help, spec.name)
	}
	assert.True(t, slices.IsSorted(names), "commands out of order: %v", names)
	assert.Len(t, names, len(slices.Compact(slices.Clone(names))), "a name twice: %v", names)
	assert.NotContains(t, names, "help", "help is the dispatcher's")
}

// TestExitStatus: nil is 0, an error without a code exitFailure, and an
// ExitError its code, printed once (silently when it has no message).
func TestExitStatus(t *testing.T) {
	cases := []struct {
		name   string
		err    error
		code   int
		stderr string
	}{
		{"nil", nil, exitOK, ""},
		{"plain", errors.New("ferry x: broke"), exitFailure, "ferry x: broke\n"},
		{"coded", exitf(exitDetached, "ferry x: %w", errors.New("lost")), exitDetached, "ferry x: lost\n"},
		{"wrapped", fmt.Errorf("context: %w", exitf(exitNotStarted, "no deployer")), exitNotStarted, "context: no deployer\n"},
		{"silent", exitSilently(exitDirty), exitDirty, ""},
		{"silent ok", exitSilently(exitOK), exitOK, ""},
		{"command failure", commandFailure("status", exitFailure, errors.New("no bucket")), exitFailure, "ferry status: no bucket\n"},
		{"command failure keeps a code", commandFailure("deploy", exitNotStarted, exitSilently(exitFailure)), exitFailure, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var w bytes.Buffer
			assert.Equal(t, tc.code, exitStatus(&w, tc.err))
			assert.Equal(t, tc.stderr, w.String())
		})
	}
	assert.NoError(t, commandFailure("status", exitFailure, nil))
	var e *ExitError
	require.ErrorAs(t, commandFailure("halt", exitNotStarted, os.ErrNotExist), &e)
	assert.ErrorIs(t, e, os.ErrNotExist, "the cause stays in the chain")
}

// TestExitCodesAreOneTable: every code is in the table once, in order,
// with a meaning; the exit-codes help page's table is the same (it is
// printed from it), and ferry help exit-codes prints that page; ferry help
// COMMAND lists the command's codes from the table.
func TestExitCodesAreOneTable(t *testing.T) {
	var codes []int
	var names []string
	for _, c := range exitCodes {
		codes = append(codes, c.code)
		names = append(names, c.name)
		assert.NotEmpty(t, c.meaning, c.code)
		assert.Regexp(t, `^[a-z]+(_[a-z]+)*$`, c.name, "the name of %d is a stable snake_case word", c.code)
	}
	assert.True(t, slices.IsSorted(codes), "codes out of order: %v", codes)
	assert.Len(t, slices.Compact(slices.Clone(codes)), len(codes), "a code twice: %v", codes)
	slices.Sort(names)
	assert.Len(t, slices.Compact(names), len(codes), "a name twice")

	page, ok := help.Page("exit-codes")
	require.True(t, ok)
	_, rest, ok := strings.Cut(page, "<!-- exit codes -->\n")
	require.True(t, ok, "client/help/exit-codes.md has no <!-- exit codes --> marker")
	table, _, ok := strings.Cut(rest, "<!-- /exit codes -->")
	require.True(t, ok, "client/help/exit-codes.md has no <!-- /exit codes --> marker")
	assert.Equal(t, exitCodesMarkdown(), table, "the exit-codes page's table differs from exitCodes: paste exitCodesMarkdown()")

	var out bytes.Buffer
	env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: io.Discard}
	require.NoError(t, newCLI(env).Run(t.Context(), []string{"help", "exit-codes"}))
	assert.Equal(t, page, out.String(), "ferry help exit-codes prints the page (its markdown, when not at a terminal)")

	out.Reset()
	require.NoError(t, newCLI(env).Run(t.Context(), []string{"help", "deploy"}))
	for _, code := range []int{exitOK, exitFailure, exitUsage, exitNotStarted, exitDirty, exitDetached, exitInternal, exitInterrupted} {
		assert.Contains(t, out.String(), fmt.Sprintf("%3d  %s\n", code, exitRow(code).meaning), "ferry help deploy omits %d", code)
	}
	assert.NotContains(t, out.String(), exitRow(exitTooLate).meaning, "deploy never exits %d", exitTooLate)

	out.Reset()
	require.NoError(t, newCLI(env).Run(t.Context(), []string{"help", "help"}))
	assert.Contains(t, out.String(), "usage: ferry help [COMMAND | TOPIC]")
}

// TestInterruptedExits130: a command that fails because the process was
// interrupted (its context cancelled) exits exitInterrupted, its message
// kept, however early; a bug stays a bug, and success stays success.
func TestInterruptedExits130(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for _, tc := range []struct {
		name string
		err  error
		code int
		msg  string
	}{
		{"plain", errors.New("ferry x: context canceled"), exitInterrupted, "ferry x: context canceled\n"},
		{"coded", exitf(exitDetached, "ferry x: stopped"), exitInterrupted, "ferry x: stopped\n"},
		{"silent", exitSilently(exitFailure), exitInterrupted, ""},
		{"bug", exitf(exitInternal, "ferry: internal error"), exitInternal, "ferry: internal error\n"},
		{"success", nil, exitOK, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w bytes.Buffer
			assert.Equal(t, tc.code, exitStatus(&w, interrupted(ctx, tc.err)))
			assert.Equal(t, tc.msg, w.String())
		})
	}
	assert.Equal(t, exitDetached, exitStatus(io.Discard, interrupted(t.Context(), exitf(exitDetached, "lost"))), "not interrupted: the code stands")

	// A deploy interrupted before it started anything; under --json, the
	// interruption is one object on stdout.
	for _, asJSON := range []bool{false, true} {
		var out, errOut bytes.Buffer
		env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, Getenv: noLocalRegion(t)}
		args := []string{"deploy", "--local", "../testdata/deploy-test-release.json"}
		if asJSON {
			args = append(args, "--json")
		}
		code := exitStatus(&errOut, newCLI(env).Run(ctx, args))
		assert.Equal(t, exitInterrupted, code, errOut.String())
		if !asJSON {
			assert.Empty(t, out.String())
			continue
		}
		var f jsonFailure
		require.NoError(t, json.Unmarshal(out.Bytes(), &f), "stdout is one JSON object: %q", out.String())
		assert.Contains(t, out.String(), `{"schema_version":1,"event":"error",`)
		assert.Equal(t, jsonFailure{Command: "deploy", ExitCode: exitInterrupted, Exit: "interrupted", Message: f.Message}, f)
		assert.NotEmpty(t, f.Message)
	}
}

// deadRegion is the URL of a local region that does not answer: a
// listener of the test's own that closes every connection unanswered, so
// no test depends on what else listens on this machine (ferry local's
// own port, say).
func deadRegion(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// noLocalRegion is an environment whose local region does not answer
// (deadRegion).
func noLocalRegion(t *testing.T) func(key string) string {
	url := deadRegion(t)
	return func(key string) string {
		if key == envLocalEndpoint {
			return url
		}
		return ""
	}
}

// TestJSONFailures: under --json, whatever goes wrong, stdout holds only
// JSON, one object per line or one indented object, and a failure ends it
// with one object that says the exit code, its name and the message.
func TestJSONFailures(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"deploy without a deployer", []string{"deploy", "--local", "--json", "../testdata/deploy-test-release.json"}, exitNoDeployer},
		{"status without a deployer", []string{"status", "--local", "--json", "coinbase/deploy-test"}, exitNoDeployer},
		{"list without a deployer", []string{"list", "--local", "--json"}, exitNoDeployer},
		{"follow without a deployer", []string{"follow", "--local", "--json", "coinbase/deploy-test", "development"}, exitNoDeployer},
		{"halt without a deployer", []string{"halt", "--local", "--json", "coinbase/deploy-test", "development"}, exitNoDeployer},
		{"unknown flag", []string{"status", "--json", "--nope", "p"}, exitUsage},
		{"json=true", []string{"status", "--json=true", "--nope", "p"}, exitUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, Getenv: noLocalRegion(t)}
			code := exitStatus(&errOut, newCLI(env).Run(t.Context(), tc.args))
			require.Equal(t, tc.code, code, "stderr: %s", errOut.String())
			lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			var f struct {
				SchemaVersion int    `json:"schema_version"`
				Event         string `json:"event"`
				jsonFailure
			}
			dec := json.NewDecoder(strings.NewReader(lines[len(lines)-1]))
			dec.DisallowUnknownFields()
			require.NoError(t, dec.Decode(&f), "the last line of stdout is a failure object: %q", out.String())
			assert.Equal(t, "error", f.Event)
			assert.Equal(t, schemaVersion, f.SchemaVersion)
			assert.Equal(t, tc.args[0], f.Command)
			assert.Equal(t, code, f.ExitCode)
			assert.Equal(t, exitRow(code).name, f.Exit)
			assert.Equal(t, strings.TrimSuffix(errOut.String(), "\n"), f.Message, "the message is what stderr says")
			for _, l := range lines {
				assert.True(t, json.Valid([]byte(l)), "not JSON on stdout: %q", l)
			}
		})
	}
	// Without --json, stdout stays empty.
	var out bytes.Buffer
	env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: io.Discard, Getenv: noLocalRegion(t)}
	assert.Equal(t, exitNoDeployer, exitStatus(io.Discard, newCLI(env).Run(t.Context(), []string{"list", "--local"})))
	assert.Empty(t, out.String())
}

// TestHoistGlobalFlags: the global flags before the command's name go just
// after it, values and all; anything else stays where it is.
func TestHoistGlobalFlags(t *testing.T) {
	for _, tc := range []struct{ args, want []string }{
		{[]string{"--local", "status", "p"}, []string{"status", "--local", "p"}},
		{[]string{"--region", "eu-west-1", "--json", "list"}, []string{"list", "--region", "eu-west-1", "--json"}},
		{[]string{"-profile=ci", "status", "p", "--local"}, []string{"status", "-profile=ci", "p", "--local"}},
		{[]string{"status", "--local", "p"}, []string{"status", "--local", "p"}},
		{[]string{"--help"}, []string{"--help"}},
		{[]string{"--local"}, []string{"--local"}},
		{[]string{"--region"}, []string{"--region"}},
		{[]string{"--poll", "1s", "deploy"}, []string{"--poll", "1s", "deploy"}},
	} {
		assert.Equal(t, tc.want, hoistGlobalFlags(tc.args), "%q", tc.args)
	}
}

// TestFlagsOtherToolsSpell: "-o json" (as kubectl and the aws CLI spell
// it) is a usage error that points to --json; --region and --profile,
// before or after the command, are flags of every command that reaches a
// deployer, and name no local region.
func TestFlagsOtherToolsSpell(t *testing.T) {
	for _, args := range [][]string{{"status", "-o", "json", "coinbase/deploy-test"}, {"list", "--output=json"}} {
		code, _, stderr := runFerry(t, args...)
		assert.Equal(t, exitUsage, code, stderr)
		assert.Contains(t, stderr, "(did you mean --json?)", args)
	}
	code, _, stderr := runFerry(t, "status", "-o", "coinbase/deploy-test")
	assert.Contains(t, stderr, "ferry status: unknown flag -o (did you mean --json?)\n", code)
	for _, args := range [][]string{
		{"status", "--local", "--region", "eu-west-1", "coinbase/deploy-test"},
		{"--profile", "ci", "list", "--local"},
	} {
		code, _, stderr := runFerry(t, args...)
		assert.Equal(t, exitUsage, code, stderr)
		assert.Contains(t, stderr, "--region and --profile name a deployer in AWS; --local uses the local region", args)
	}
}
