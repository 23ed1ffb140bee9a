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
	"github.com/ferryhq/ferry/internal/halt"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/lock"
	"github.com/ferryhq/ferry/internal/release"
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

Exit codes:
  0  the deploy stopped clean (FailureClean), or none was running
  1  the deploy succeeded anyway: the halt came too late
  2  the deploy ended FailureDirty, or without reaching an end state
  3  the halt marker could not be written (no deployer found, credentials)
  4  stopped following (Ctrl-C, lost contact): the marker is written`

func init() {
	register(&command{
		name:      "halt",
		args:      "FILE | PROJECT CONFIG",
		summary:   "Halt the running deploy of a project-config",
		help:      haltHelp,
		usageExit: exitNotStarted,
		flags: func(fs *flag.FlagSet) func(context.Context, Env, []string) int {
			df := addDeployerFlags(fs)
			reason := fs.String("reason", "", "why, recorded in the marker (default \"halted by ferry halt\")")
			noWait := fs.Bool("no-wait", false, "return once the marker is written")
			asJSON := fs.Bool("json", false, "print one JSON object per event and the outcome")
			poll := fs.Duration("poll", defaultPollInterval, "how often to read the execution's history while following it (default 1s)")
			return func(ctx context.Context, env Env, args []string) int {
				c := commands["halt"]
				var project, config string
				switch len(args) {
				case 1:
					var err error
					if project, config, err = projectConfigOfFile(args[0]); err != nil {
						fmt.Fprintf(env.Stderr, "ferry halt: %v\n", err)
						return exitNotStarted
					}
				case 2:
					project, config = args[0], args[1]
				default:
					return c.usageError(env, "halt takes a release file, or a project and a config")
				}
				if err := errors.Join(release.ValidateProjectName(project), release.ValidateConfigName(config)); err != nil {
					return c.usageError(env, "%v", err)
				}
				if *poll <= 0 {
					return c.usageError(env, "--poll must be positive")
				}
				return haltDeploy(ctx, env, haltRequest{
					project: project, config: config, reason: *reason, flags: df,
					noWait: *noWait, asJSON: *asJSON,
					follow: followOptions{Interval: *poll, Sleep: env.Sleep},
				})
			}
		},
	})
}

// haltRequest is one ferry halt invocation.
type haltRequest struct {
	project, config string
	reason          string
	flags           *deployerFlags
	noWait, asJSON  bool
	follow          followOptions
}

// defaultHaltReason is the marker's reason when --reason is not given.
const defaultHaltReason = "halted by ferry halt"

func haltDeploy(ctx context.Context, env Env, req haltRequest) int {
	out := newDisplay(env, req.asJSON)
	fail := func(format string, args ...any) int {
		fmt.Fprintf(env.Stderr, "ferry halt: "+format+"\n", args...)
		return exitNotStarted
	}
	d, err := connect(ctx, env, req.flags)
	if err != nil {
		return fail("%v", err)
	}
	now, err := d.now(ctx)
	if err != nil {
		return fail("%v", err)
	}
	m := halt.Marker{By: displayName(env), Reason: firstNonEmpty(oneLine(req.reason), defaultHaltReason), At: now}
	if err := halt.New(d.s3, d.cfg.Bucket).Put(ctx, req.project, req.config, m); err != nil {
		return fail("writing the halt marker: %v", err)
	}
	out.message("ferry halt: halt marker written for %s %s (by %s: %s)", req.project, req.config, m.By, m.Reason)

	running, err := findRunning(ctx, d, req.project, req.config)
	if err != nil {
		fmt.Fprintf(env.Stderr, "ferry halt: the marker is written, but %v\n", err)
		return exitDetached
	}
	if len(running) == 0 {
		out.message("no deploy of %s %s is running. The marker stays, harmless: it never stops a deploy that starts after it.", req.project, req.config)
		return exitOK
	}
	target := running[0]
	if len(running) > 1 {
		// Several running: the one holding the lock is the one deploying;
		// the others end at Lock.
		if h, found, err := lock.New(d.s3, d.cfg.Bucket, clock.System{}).Get(ctx, req.project, req.config); err == nil && found {
			for _, x := range running {
				if x.ARN == h.Execution {
					target = x
				}
			}
		}
	}
	out.message("halting release %s (execution %s)", target.Release.ReleaseID, target.Name)
	if req.noWait {
		return exitOK
	}
	u, err := followExecution(ctx, d.sfn, target.ARN, out, req.follow)
	if err != nil {
		fmt.Fprintf(env.Stderr, "ferry halt: stopped following (%v); the marker is written and the deployer will act on it\n", err)
		return exitDetached
	}
	switch {
	case u.End == execution.EndSuccess:
		fmt.Fprintf(env.Stderr, "ferry halt: release %s succeeded before the deployer saw the halt\n", target.Release.ReleaseID)
		return exitTooLate
	case u.End == execution.EndFailureClean:
		if u.Error != failure.NameHalt {
			out.message("the deploy ended clean, but not because of the halt: %s", describeError(u.Error, u.Cause))
		}
		return exitOK
	}
	return exitFailureDirty
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
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("cannot read %s: %w", file, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("cannot read %s: it is a directory", file)
	}
	data, err := io.ReadAll(io.LimitReader(f, limits.MaxReleaseBytes+1))
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("cannot read %s: %w", file, err)
	}
	if len(data) > limits.MaxReleaseBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", file, limits.MaxReleaseBytes)
	}
	return data, nil
}
