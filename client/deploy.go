package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/ferryhq/ferry/client/submit"
	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/lock"
	"github.com/ferryhq/ferry/internal/tuning"
)

const deployHelp = `Deploy reads the release file and checks it as ferry validate does
(nothing is uploaded when it is invalid), fills in {{USER_DATA_FILE}}, gives
the release an id (UTC time and a random suffix), created_at and created_by
($FERRY_CREATED_BY, else $USER, else the OS user at the host name),
hashes and uploads its assets (skipping
those already in the bucket), uploads the release and starts the deployer's
execution under a name derived from the release, so a retried start never
starts two deploys. If the same release (same content, whatever its id) is
already being deployed to that project-config, deploy follows that
execution instead of starting another (with --no-wait, it names that
execution and returns).

It then follows the execution to its end: each state as it is entered and,
during CheckHealthy, a line per service with its launched, healthy and
terminating instances against the healthy target. On a terminal the health
lines are redrawn in place, under a clock line ticking each second that
says what the deploy waits for and how long the deployer will wait;
elsewhere (CI logs) there is one line per change, and one at least every
30 s while nothing changes. NO_COLOR turns colour off. --json prints one
JSON object per line: first {"event":"release",...} (which release and
execution), then one per event ({"event":"waiting",...} at least every
30 s while nothing changes), and last the outcome
{"event":"outcome",...,"exit_code":N} or, when the command failed before
or after, {"event":"error","exit_code":N,"exit":NAME,"message":...}.

Ctrl-C stops following, not the deploy. To stop a deploy, run
ferry halt FILE: the deployer notices the halt marker, cleans up and ends
in FailureClean. Never stop the execution itself: nothing would clean up.

The deployer is named by --state-machine and --bucket, else
$FERRY_STATE_MACHINE_ARN and $FERRY_BUCKET, else the conventional
ferry-deployer names in the caller's account and region (AWS credentials
and settings come from the standard chain: AWS_PROFILE, AWS_REGION,
AWS_ENDPOINT_URL, ...). --local uses the local region (ferry local) and
its deployer, whatever $FERRY_STATE_MACHINE_ARN and $FERRY_BUCKET say.`

// deployCommand is ferry deploy.
type deployCommand struct {
	env Env
	// name is the command deploying ("deploy" when empty): ferry
	// rollback deploys through it too.
	name     string
	deployer deployerFlags
	follow   followFlags
	waitLock waitLockFlag
}

func (c *deployCommand) spec() commandSpec {
	return commandSpec{
		name:    "deploy",
		args:    "FILE",
		summary: "Deploy a release and follow it to its end",
		help:    deployHelp,
		exits:   deployExits,
	}
}

func (c *deployCommand) defineFlags(fs *flag.FlagSet) {
	c.deployer.define(fs)
	fs.Var(&c.waitLock, "wait-lock", "when another release holds the lock, wait for it (up to DURATION, default "+defaultWaitLock.String()+") instead of refusing to start")
	c.follow.define(fs, "return once the execution has started")
}

// Run deploys the release file args[0] and follows its execution. Its
// error carries the execution's outcome (exitFailure,
// exitDirty), exitDetached, or exitNotStarted when nothing was
// started.
func (c *deployCommand) Run(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return usageErrorf(c.spec(), "deploy takes one release file")
	}
	if err := c.follow.check(); err != nil {
		return usageErrorf(c.spec(), "%v", err)
	}
	return commandFailure("deploy", exitNotStarted, c.deploy(ctx, args[0]))
}

// deploy deploys file. An error without an exit code means nothing was
// started.
func (c *deployCommand) deploy(ctx context.Context, file string) error {
	out := newDisplay(c.env, c.follow.asJSON)
	r, err := readRelease(c.env.Stderr, file)
	if err != nil {
		return err
	}
	d, err := connect(ctx, c.env, &c.deployer)
	if err != nil {
		return err
	}
	now, err := d.now(ctx)
	if err != nil {
		return err
	}
	p, err := submit.Prepare(ctx, d.prover, r, file, now, displayName(c.env), submit.NewReleaseID(now, c.env.Random))
	if err != nil {
		return err
	}
	return c.submit(ctx, d, out, p)
}

// submit starts the deploy of p, prepared (from its file, or again from
// the deployer's records), and follows it: unless the same content is on
// its way already (then it follows that execution), it waits for the
// lock as --wait-lock says, uploads p, starts its execution and follows
// it. An error without an exit code means nothing was started.
func (c *deployCommand) submit(ctx context.Context, d *deployer, out *display, p *submit.Prepared) error {
	r, file := p.Release, p.File
	project, config := r.ProjectName, r.ConfigName

	// The same release already on its way: follow it rather than start a
	// second execution that could only fail at Lock.
	running, err := findRunning(ctx, d, project, config)
	if err != nil {
		return err
	}
	sum, err := release.ContentHash(r)
	if err != nil {
		return err
	}
	for _, x := range running {
		if other, err := release.ContentHash(x.Release); err == nil && other == sum {
			return c.followRunning(ctx, d, out, file, x)
		}
	}
	if err := c.awaitLock(ctx, d, out, project, config); err != nil {
		return err
	}

	sub := d.submitter()
	if err := sub.Upload(ctx, p); err != nil {
		return err
	}
	arn, err := sub.Start(ctx, p)
	if err != nil {
		return fmt.Errorf("starting the deploy: %w", err)
	}
	c.announce(out, project, config, r.ReleaseID, arn)
	out.message("%s: %s %s release %s", c.prefix(), project, config, r.ReleaseID)
	if about := describeRelease(r); about != "" {
		out.message("%s", about)
	}
	if c.follow.noWait {
		out.message("started execution %s\nfollow it with %s; halt it with %s", arn, c.deployer.command("follow", r.ReleaseID), c.haltHint(r, file))
		return nil
	}
	return c.followToEnd(ctx, d, out, r, file, arn)
}

// checkProjectConfig checks the PROJECT CONFIG arguments and the follow
// flags of a command that deploys from the records (rollback, destroy),
// with what else it checks (more); a problem is its usage error.
func (c *deployCommand) checkProjectConfig(spec commandSpec, args []string, more ...error) error {
	if len(args) != 2 {
		return usageErrorf(spec, "%s takes a project and a config", spec.name)
	}
	err := errors.Join(append([]error{release.ValidateProjectName(args[0]), release.ValidateConfigName(args[1])}, more...)...)
	if err == nil {
		err = c.follow.check()
	}
	if err != nil {
		return usageErrorf(spec, "%v", err)
	}
	return nil
}

// prefix starts the command's messages: "ferry deploy".
func (c *deployCommand) prefix() string { return "ferry " + firstNonEmpty(c.name, "deploy") }

// readRelease reads and validates the release file. An invalid release's
// problems go to stderr, one line each, before the error that sums them up.
func readRelease(stderr io.Writer, file string) (*release.Release, error) {
	r, err := release.ReadFile(file)
	var bad *failure.BadReleaseError
	if !errors.As(err, &bad) {
		return r, err
	}
	for _, line := range bad.Problems {
		fmt.Fprintf(stderr, "%s: %s\n", file, line)
	}
	return nil, &invalidReleaseError{file: file, bad: bad}
}

// invalidReleaseError is a release file that did not validate: its
// message sums the problems up (they were printed one per line before);
// it unwraps to them.
type invalidReleaseError struct {
	file string
	bad  *failure.BadReleaseError
}

func (e *invalidReleaseError) Error() string {
	noun := "problems"
	if len(e.bad.Problems) == 1 {
		noun = "problem"
	}
	return fmt.Sprintf("%s is not a valid release (%d %s); nothing was uploaded", e.file, len(e.bad.Problems), noun)
}

func (e *invalidReleaseError) Unwrap() error { return e.bad }

// followRunning takes over the running execution x of the same release
// instead of starting another: it names it and, without --no-wait,
// follows it to its end.
func (c *deployCommand) followRunning(ctx context.Context, d *deployer, out *display, file string, x runningExecution) error {
	project, config, id := x.Release.ProjectName, x.Release.ConfigName, x.Release.ReleaseID
	if c.follow.noWait {
		c.announce(out, project, config, id, x.ARN)
		out.message("%s: already deploying this release to %s %s (release %s), execution %s", c.prefix(), project, config, id, x.ARN)
		return nil
	}
	c.announce(out, project, config, id, x.ARN)
	out.message("%s: already deploying this release to %s %s (release %s); following it", c.prefix(), project, config, id)
	return c.followToEnd(ctx, d, out, x.Release, file, x.ARN)
}

// announce prints, with --json, the release event: which release and
// execution the command is about. It is the first event of a deploy.
func (c *deployCommand) announce(out *display, project, config, releaseID, arn string) {
	if !c.follow.asJSON {
		return
	}
	out.event(evRelease, releaseEvent{Project: project, Config: config, ReleaseID: releaseID, Execution: arn})
}

// followToEnd follows the execution arn and returns its outcome as an
// exit code (nil for Success), with a word on what to do next when it
// failed dirty or the client stopped following.
func (c *deployCommand) followToEnd(ctx context.Context, d *deployer, out *display, r *release.Release, file, arn string) error {
	out.timeout = r.TimeoutDuration()
	out.groups = func() ([]string, []string) { return groupsOf(ctx, d, arn) }
	u, err := followExecution(ctx, d.sfn, arn, out, c.follow.options(c.env, d))
	if err != nil {
		if ctx.Err() != nil {
			return exitf(exitInterrupted, "\nferry: stopped following; the deploy goes on.\nTo stop it: %s", c.haltHint(r, file))
		}
		return c.lostContact(d, out, r, file, err)
	}
	return c.ended(ctx, d, out, r, arn, u)
}

// lostContact is the end of following the deploy of r when the
// deployer could no longer be read (err): a message on lines of its own
// naming what was reached and why it failed, with the exact commands that
// follow the deploy again and halt it.
func (c *deployCommand) lostContact(d *deployer, out *display, r *release.Release, file string, err error) error {
	out.untick()
	return &ExitError{Code: exitDetached, Err: &contactError{where: d.cfg.where(), cause: contactCause(err), err: err,
		follow: c.deployer.command("follow", r.ReleaseID), halt: c.haltHint(r, file)}}
}

// contactError is losing contact with the deployer while following a
// deploy, which goes on: it says where, why, and how to resume; it
// unwraps to the error reading the deployer.
type contactError struct {
	where, cause, follow, halt string
	err                        error
}

func (e *contactError) Error() string {
	return fmt.Sprintf("ferry: lost contact with the deployer at %s: %s\nThe deploy goes on. Follow it again with: %s\nStop it with: %s",
		e.where, e.cause, e.follow, e.halt)
}

func (e *contactError) Unwrap() error { return e.err }

// ended is the command's end once the deploy of r (execution arn) ended
// with outcome u: a word on what to do next when it failed dirty, the
// groups it made when it succeeded, and u's exit code (nil for Success).
func (c *deployCommand) ended(ctx context.Context, d *deployer, out *display, r *release.Release, arn string, u progress) error {
	if !c.follow.asJSON && (u.End == execution.EndFailureDirty || u.End == "") {
		return exitf(exitDirty, "ferry: the deploy did not clean up after itself; AWS may hold resources of this release and the lock is kept.\nSee %s, fix what is left, then %s.",
			c.deployer.command("status", r.ProjectName, r.ConfigName), c.deployer.command("unlock", r.ProjectName, r.ConfigName, "--release", r.ReleaseID))
	}
	if u.End == execution.EndSuccess && !c.follow.asJSON {
		nameGroups(ctx, d, out, arn)
	}
	return exitSilently(exitCodeOf(u))
}

// haltHint is the command that halts the deploy of release r: by its
// release file when there is one, else by its project and config.
func (c *deployCommand) haltHint(r *release.Release, file string) string {
	if file == "" {
		return c.deployer.command("halt", r.ProjectName, r.ConfigName)
	}
	return c.deployer.command("halt", file)
}

// awaitLock returns nil when no release holds the lock of project/config.
// When one does, the deploy would only fail at Lock: without --wait-lock
// it is refused (exitNotStarted) naming the holder; with it, the lock is
// read again every poll interval until it is free or the wait is over.
func (c *deployCommand) awaitLock(ctx context.Context, d *deployer, out *display, project, config string) error {
	locks := lock.New(d.s3, d.cfg.Bucket, clock.System{})
	var since, deadline time.Time
	for {
		h, found, err := locks.Get(ctx, project, config)
		if err != nil {
			return fmt.Errorf("reading the lock of %s %s: %w", project, config, err)
		}
		if !found {
			return nil
		}
		now := c.env.Now()
		if deadline.IsZero() && c.waitLock.set {
			since, deadline = now, now.Add(c.waitLock.d)
			out.message("%s: %s %s is locked by release %s (since %s); waiting up to %s for it", c.prefix(), project, config, h.ReleaseID, formatTime(h.Since), c.waitLock.d)
		}
		if !c.waitLock.set || !now.Before(deadline) {
			out.untick()
			return c.lockHeld(project, config, h)
		}
		out.waiting(now.Sub(since), fmt.Sprintf("waiting for the lock; giving up in %s; held by release %s (%s %s)",
			formatElapsed(deadline.Sub(now)), oneLine(h.ReleaseID), project, config))
		if err := c.env.Sleep(ctx, c.follow.poll); err != nil {
			return err
		}
	}
}

// lockHeld is the refusal to start while release h holds the lock.
func (c *deployCommand) lockHeld(project, config string, h lock.Holder) error {
	wait := "wait for it with --wait-lock[=DURATION]"
	if c.waitLock.set {
		wait = fmt.Sprintf("still held after --wait-lock=%s", c.waitLock.d)
	}
	msg := fmt.Sprintf("%s: %s %s is locked by release %s (execution %s, since %s); nothing was started.\n"+
		"It is deploying, or was left behind: %s; see %s. A lock left behind: %s.",
		c.prefix(), project, config, h.ReleaseID, lastSegment(h.Execution), formatTime(h.Since), wait,
		c.deployer.command("status", project, config), c.deployer.command("unlock", project, config, "--release", h.ReleaseID))
	return &ExitError{Code: exitNotStarted, Err: &refusal{msg: msg,
		err: &failure.LockExistsError{Project: project, Config: config, Holder: h.ReleaseID, Execution: h.Execution, Since: h.Since}}}
}

// refusal is a command's refusal to start, with msg for people and the
// deployer's error err (named, so --json says which) in its chain.
type refusal struct {
	msg string
	err error
}

func (e *refusal) Error() string { return e.msg }
func (e *refusal) Unwrap() error { return e.err }

// waitLockFlag is --wait-lock[=DURATION]: unset, set alone (wait up to
// defaultWaitLock), or set to a positive duration.
type waitLockFlag struct {
	set bool
	d   time.Duration
}

// defaultWaitLock is how long --wait-lock alone waits: a deploy's default
// timeout, the longest the holder usually runs.
const defaultWaitLock = tuning.DefaultTimeout

func (f *waitLockFlag) IsBoolFlag() bool { return true }

// takesValue reports whether s is a duration: "--wait-lock 30m" waits 30
// minutes; "--wait-lock FILE" waits the default and FILE is the release.
func (f *waitLockFlag) takesValue(s string) bool {
	_, err := time.ParseDuration(s)
	return err == nil
}

var _ optionalValue = (*waitLockFlag)(nil)

func (f *waitLockFlag) String() string {
	if !f.set {
		return ""
	}
	return f.d.String()
}

func (f *waitLockFlag) Set(s string) error {
	switch s {
	case "true":
		f.set, f.d = true, defaultWaitLock
		return nil
	case "false":
		f.set, f.d = false, 0
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return fmt.Errorf("want a positive duration such as 90s or 10m")
	}
	f.set, f.d = true, d
	return nil
}
