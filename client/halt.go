package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/halt"
	"github.com/ferryhq/ferry/internal/store/ledger"
	"github.com/ferryhq/ferry/internal/store/lock"
)

const haltHelp = `Halt stops the deploy of a project-config: it writes the halt marker
(who, why, when) to the deployer's bucket, finds the running execution of
that project-config and follows it to its end. The deployer checks for the
marker at every health check; when it sees it, it deletes what the release
created, releases the lock and ends in FailureClean. A halt that comes too
late (the release already healthy) does not undo the release.

The project-config comes from a release file (its project_name and
config_name) or is given as PROJECT CONFIG.

The marker only stops a deploy that started before it was written: a marker
left behind never stops a later deploy, and the deployer removes it when
the execution it halted ends.

It exits 0 when the deploy stopped clean (FailureClean) or none was
running, 3 when the marker could not be written, 4 when the deploy ended
FailureDirty, 6 when it succeeded before the deployer saw the halt.`

// haltCommand is ferry halt.
type haltCommand struct {
	env      Env
	deployer deployerFlags
	reason   string
	force    bool
	follow   followFlags
}

func (c *haltCommand) spec() commandSpec {
	return commandSpec{
		name:    "halt",
		args:    "FILE | PROJECT CONFIG",
		summary: "Halt the running deploy of a project-config",
		help:    haltHelp,
		exits:   []int{exitNotStarted, exitDirty, exitDetached, exitTooLate},
	}
}

func (c *haltCommand) defineFlags(fs *flag.FlagSet) {
	c.deployer.define(fs)
	fs.StringVar(&c.reason, "reason", "", "why, recorded in the marker (default \"halted by ferry halt\")")
	fs.BoolVar(&c.force, "force", false, "write the marker even for a project-config the deployer knows nothing of")
	c.follow.define(fs, "return once the marker is written")
}

// Run halts the deploy of the project-config named by a release file
// (args[0]) or given as args[0] and args[1]. Its error carries how the
// halted deploy ended (see haltHelp), exitDetached, or exitNotStarted when
// the marker was not written.
func (c *haltCommand) Run(ctx context.Context, args []string) error {
	var project, config string
	switch len(args) {
	case 1:
		var err error
		if project, config, err = projectConfigOfFile(args[0]); err != nil {
			return commandFailure("halt", exitNotStarted, err)
		}
	case 2:
		project, config = args[0], args[1]
	default:
		return usageErrorf(c.spec(), "halt takes a release file, or a project and a config")
	}
	if err := errors.Join(release.ValidateProjectName(project), release.ValidateConfigName(config)); err != nil {
		return usageErrorf(c.spec(), "%v", err)
	}
	if err := c.follow.check(); err != nil {
		return usageErrorf(c.spec(), "%v", err)
	}
	return commandFailure("halt", exitNotStarted, c.halt(ctx, project, config))
}

// defaultHaltReason is the marker's reason when --reason is not given.
const defaultHaltReason = "halted by ferry halt"

// say writes a line for people in text mode only: under --json, the
// halted or nothing_running event report writes says the same.
func (c *haltCommand) say(out *display, format string, args ...any) {
	if !c.follow.asJSON {
		out.message(format, args...)
	}
}

// report says what the halt does: the event k, ev, under --json, else
// the line format and args make.
func (c *haltCommand) report(out *display, k eventKind, ev haltEvent, format string, args ...any) {
	if c.follow.asJSON {
		out.event(k, ev)
		return
	}
	out.message(format, args...)
}

// halt writes the marker of project/config and follows the deploy it
// halts. An error without an exit code means the marker was not written.
func (c *haltCommand) halt(ctx context.Context, project, config string) error {
	out := newDisplay(c.env, c.follow.asJSON)
	out.exitCode = haltExitCode
	d, err := connect(ctx, c.env, &c.deployer)
	if err != nil {
		return err
	}
	if !c.force {
		known, err := ledger.New(d.s3, d.cfg.Bucket).Known(ctx, project, config)
		if err != nil {
			return fmt.Errorf("reading what the deployer knows of %s %s: %w", project, config, err)
		}
		if !known {
			return notFoundf("the deployer knows nothing of %s %s (no release of it was ever uploaded): check the names (%s lists what it knows), or write the marker anyway with --force",
				project, config, c.deployer.command("list"))
		}
	}
	now, err := d.now(ctx)
	if err != nil {
		return err
	}
	m := halt.Marker{By: displayName(c.env), Reason: firstNonEmpty(oneLine(c.reason), defaultHaltReason), At: now}
	if err := halt.New(d.s3, d.cfg.Bucket).Put(ctx, project, config, m); err != nil {
		return fmt.Errorf("writing the halt marker: %w", err)
	}
	ev := haltEvent{Project: project, Config: config, By: m.By, Reason: m.Reason}
	c.say(out, "ferry halt: halt marker written for %s %s (by %s: %s)", project, config, m.By, m.Reason)

	running, err := findRunning(ctx, d, project, config)
	if err != nil {
		return exitf(exitDetached, "ferry halt: the marker is written, but %w", err)
	}
	if len(running) == 0 {
		code := exitOK
		ev.ExitCode = &code
		c.report(out, evNothingRunning, ev, "no deploy of %s %s is running. The marker stays, harmless: it never stops a deploy that starts after it.", project, config)
		return nil
	}
	target := haltTarget(ctx, d, project, config, running)
	ev.ReleaseID, ev.Execution = target.Release.ReleaseID, target.ARN
	c.report(out, evHalted, ev, "halting release %s (execution %s)", target.Release.ReleaseID, target.Name)
	if c.follow.noWait {
		return nil
	}
	u, err := followExecution(ctx, d.sfn, target.ARN, out, c.follow.options(c.env, d))
	if err != nil {
		out.untick()
		if ctx.Err() != nil {
			return exitf(exitDetached, "ferry halt: stopped following (%w); the marker is written and the deployer will act on it", err)
		}
		return exitf(exitDetached, "ferry halt: lost contact with the deployer at %s: %s\nThe marker is written and the deployer will act on it. Follow the deploy with: %s",
			d.cfg.where(), contactCause(err), c.deployer.command("follow", target.Release.ReleaseID))
	}
	switch code := haltExitCode(u); code {
	case exitTooLate:
		// Under --json, the outcome printed says so, with its exit code.
		return &ExitError{Code: exitTooLate, Err: fmt.Errorf("ferry halt: release %s succeeded before the deployer saw the halt", target.Release.ReleaseID), Shown: c.follow.asJSON}
	case exitOK:
		if u.Error != failure.NameHalt {
			out.message("the deploy ended clean, but not because of the halt: %s", describeError(u.Error, u.Cause))
		}
		return nil
	default:
		return exitSilently(code)
	}
}

// haltExitCode is ferry halt's exit code for the outcome u of the deploy
// it halted: a clean end is what was asked, a success came too late.
func haltExitCode(u progress) int {
	switch u.End {
	case execution.EndSuccess:
		return exitTooLate
	case execution.EndFailureClean:
		return exitOK
	}
	return exitDirty
}

// haltTarget is the running execution of project/config the halt is for:
// of several, the one holding the lock is the one deploying (the others
// end at Lock); else, or when the lock cannot be read, the oldest.
func haltTarget(ctx context.Context, d *deployer, project, config string, running []runningExecution) runningExecution {
	target := running[0]
	if len(running) == 1 {
		return target
	}
	h, found, err := lock.New(d.s3, d.cfg.Bucket, clock.System{}).Get(ctx, project, config)
	if err != nil || !found {
		return target
	}
	for _, x := range running {
		if x.ARN == h.Execution {
			target = x
		}
	}
	return target
}

// projectConfigOfFile reads the project and config names of a release
// file. It needs only those two fields to be readable, so a release that
// no longer validates (a missing user data file, say) can still be halted.
func projectConfigOfFile(file string) (project, config string, err error) {
	data, err := readSmall(file)
	if err != nil {
		return "", "", err
	}
	var names struct {
		Project string `json:"project_name"`
		Config  string `json:"config_name"`
	}
	if err := json.Unmarshal(data, &names); err != nil {
		return "", "", fmt.Errorf("%s: not a release file: %v", file, err)
	}
	if names.Project == "" || names.Config == "" {
		return "", "", fmt.Errorf("%s: no project_name or config_name", file)
	}
	return names.Project, names.Config, nil
}

// readSmall reads a release-sized file.
func readSmall(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, cannotRead(file, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("cannot read %s: it is a directory", file)
	}
	data, err := io.ReadAll(io.LimitReader(f, limits.MaxReleaseBytes+1))
	if err != nil {
		return nil, cannotRead(file, err)
	}
	if len(data) > limits.MaxReleaseBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", file, limits.MaxReleaseBytes)
	}
	return data, nil
}

// cannotRead says file cannot be read because of err, without repeating
// the path a *fs.PathError names.
func cannotRead(file string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("cannot read %s: %w", file, err)
}
