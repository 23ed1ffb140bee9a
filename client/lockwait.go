package main

import (
	"context"
	"fmt"
	"time"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/lock"
)

// lockPoll is how often deploy --wait-lock looks at the lock again.
const lockPoll = 5 * time.Second

// defaultLockWait is how long a bare --wait-lock waits.
const defaultLockWait = 30 * time.Minute

// blocker is what stands in the way of a deploy to a project-config: the
// release holding its lock, or a running execution of another release
// that has not taken it yet.
type blocker struct {
	ReleaseID string
	Execution string
	CreatedBy string // "" when unknown (a lock left behind)
	Since     time.Time
	Running   bool // an execution of the release is running
}

func (b blocker) String() string {
	who := ""
	if b.CreatedBy != "" {
		who = " by " + oneLine(b.CreatedBy)
	}
	s := fmt.Sprintf("release %s%s (execution %s) since %s", b.ReleaseID, who, b.Execution, formatTime(b.Since))
	if !b.Running {
		s += ", left behind: no execution of it runs"
	}
	return s
}

// findBlocker returns what stands in the way of deploying release id to
// project/config, given the running executions of that project-config, or
// found false when nothing does.
func findBlocker(ctx context.Context, d *deployer, project, config, id string, running []runningExecution) (blocker, bool, error) {
	h, held, err := lock.New(d.s3, d.cfg.Bucket, clock.System{}).Get(ctx, project, config)
	if err != nil {
		return blocker{}, false, fmt.Errorf("reading the lock of %s %s: %w", project, config, err)
	}
	for _, x := range running {
		if x.Release.ReleaseID == id || (held && x.Release.ReleaseID != h.ReleaseID) {
			continue
		}
		b := blocker{ReleaseID: x.Release.ReleaseID, Execution: x.ARN, CreatedBy: x.Release.CreatedBy, Since: x.Started, Running: true}
		if held {
			b.Since = h.Since
		}
		return b, true, nil
	}
	if held && h.ReleaseID != id {
		return blocker{ReleaseID: h.ReleaseID, Execution: h.Execution, Since: h.Since}, true, nil
	}
	return blocker{}, false, nil
}

// awaitLock returns nil once nothing stands in the way of deploying
// release id to project/config, looking again every lockPoll for up to
// wait (0: not at all); else an exitNotStarted error naming the holder.
func (c *deployCommand) awaitLock(ctx context.Context, d *deployer, out *display, project, config, id string) error {
	start := c.env.Now()
	announced := false
	for {
		running, err := findRunning(ctx, d, project, config)
		if err != nil {
			return err
		}
		b, found, err := findBlocker(ctx, d, project, config, id, running)
		if err != nil || !found {
			return err
		}
		waited := c.env.Now().Sub(start)
		if waited >= c.waitLock.d {
			return c.lockRefusal(project, config, b, waited)
		}
		if !announced {
			out.message("ferry deploy: %s %s is locked by %s; waiting up to %s for it", project, config, b, c.waitLock.d)
			announced = true
		}
		if err := c.env.Sleep(ctx, min(lockPoll, c.waitLock.d-waited)); err != nil {
			return exitf(exitInterrupted, "\nferry deploy: stopped waiting for the lock; nothing was started")
		}
	}
}

// lockRefusal is the error of a deploy that found project/config locked
// by b, after waiting waited.
func (c *deployCommand) lockRefusal(project, config string, b blocker, waited time.Duration) error {
	after := ""
	if waited > 0 {
		after = fmt.Sprintf(" after waiting %s", waited.Round(time.Second))
	}
	next := "wait for it with --wait-lock[=DURATION]; see it with " + c.deployer.hint("status", project, config)
	if !b.Running {
		next = "see " + c.deployer.hint("status", project, config) + ", clean up, then " +
			c.deployer.hint("unlock", "--release", b.ReleaseID, project, config)
	}
	return exitf(exitNotStarted, "ferry deploy: %s %s is locked by %s%s; nothing was started\n%s", project, config, b, after, next)
}

// lockWait is the value of --wait-lock[=DURATION]: bare, defaultLockWait.
type lockWait struct{ d time.Duration }

func (w *lockWait) String() string {
	if w == nil || w.d == 0 {
		return ""
	}
	return w.d.String()
}

// IsBoolFlag lets --wait-lock stand alone.
func (w *lockWait) IsBoolFlag() bool { return true }

func (w *lockWait) Set(s string) error {
	switch s {
	case "true":
		w.d = defaultLockWait
		return nil
	case "false":
		w.d = 0
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return fmt.Errorf("want a positive duration such as 10m, not %q", s)
	}
	w.d = d
	return nil
}
