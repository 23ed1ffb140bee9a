package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/lock"
)

// unlockCommand is ferry unlock.
type unlockCommand struct {
	env       Env
	deployer  deployerFlags
	releaseID string
}

func (c *unlockCommand) spec() commandSpec {
	return commandSpec{
		name:    "unlock",
		args:    "PROJECT CONFIG --release ID",
		summary: "Remove a lock left behind, only if the given release holds it",
		help: `Unlock removes the lock of a project-config that a failed deploy left
behind (FailureDirty keeps the lock so nothing deploys over a mess: look
at ferry status and clean up first). It removes the lock only if release
ID holds it, and refuses while that release's execution is still running
(halt it instead).

It says what it did and exits 0 when the lock was removed or there was
none, 1 when it was held by another release, its deploy is running, or
the lock could not be read.`,
		exits: []int{exitFailure},
	}
}

func (c *unlockCommand) defineFlags(fs *flag.FlagSet) {
	c.deployer.define(fs)
	fs.StringVar(&c.releaseID, "release", "", "the release that holds the lock (required)")
}

// Run removes the lock of project args[0], config args[1], if --release
// holds it and its deploy no longer runs.
func (c *unlockCommand) Run(ctx context.Context, args []string) error {
	if len(args) != 2 {
		return usageErrorf(c.spec(), "unlock takes a project and a config")
	}
	if c.releaseID == "" {
		return usageErrorf(c.spec(), "--release is required: the release that holds the lock (see ferry status)")
	}
	if err := errors.Join(release.ValidateProjectName(args[0]), release.ValidateConfigName(args[1]), release.ValidateReleaseID(c.releaseID)); err != nil {
		return usageErrorf(c.spec(), "%v", err)
	}
	return commandFailure("unlock", exitFailure, c.unlock(ctx, args[0], args[1]))
}

// unlock removes the lock of project/config held by --release; its error
// says why it did not.
func (c *unlockCommand) unlock(ctx context.Context, project, config string) error {
	releaseID := c.releaseID
	d, err := connect(ctx, c.env, &c.deployer)
	if err != nil {
		return err
	}
	locks := lock.New(d.s3, d.cfg.Bucket, clock.System{})
	h, found, err := locks.Get(ctx, project, config)
	switch {
	case err != nil:
		return err
	case !found:
		fmt.Fprintf(c.env.Stdout, "no lock on %s %s: nothing to do\n", project, config)
		return nil
	case h.ReleaseID != releaseID:
		return fmt.Errorf("not removed: the lock of %s %s is held by release %s (execution %s) since %s, not by %s",
			project, config, h.ReleaseID, lastSegment(h.Execution), formatTime(h.Since), releaseID)
	}
	if h.Execution != "" {
		desc, err := d.sfn.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(h.Execution)})
		var gone *sfntypes.ExecutionDoesNotExist
		switch {
		case err == nil && desc.Status == sfntypes.ExecutionStatusRunning:
			return fmt.Errorf("not removed: release %s is still deploying (execution %s); halt it with %s", releaseID, lastSegment(h.Execution), c.deployer.command("halt", project, config))
		case err != nil && !errors.As(err, &gone):
			return fmt.Errorf("not removed: cannot tell whether execution %s still runs: %w", lastSegment(h.Execution), err)
		}
	}
	if err := locks.Release(ctx, project, config, releaseID); err != nil {
		return err
	}
	fmt.Fprintf(c.env.Stdout, "removed the lock of %s %s held by release %s since %s\n", project, config, releaseID, formatTime(h.Since))
	return nil
}
