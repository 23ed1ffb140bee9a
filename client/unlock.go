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
	"github.com/ferryhq/ferry/internal/lock"
	"github.com/ferryhq/ferry/internal/release"
)

func init() {
	register(&command{
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
		flags: func(fs *flag.FlagSet) func(context.Context, Env, []string) int {
			df := addDeployerFlags(fs)
			releaseID := fs.String("release", "", "the release that holds the lock (required)")
			return func(ctx context.Context, env Env, args []string) int {
				c := commands["unlock"]
				if len(args) != 2 {
					return c.usageError(env, "unlock takes a project and a config")
				}
				if *releaseID == "" {
					return c.usageError(env, "--release is required: the release that holds the lock (see ferry status)")
				}
				if err := errors.Join(release.ValidateProjectName(args[0]), release.ValidateConfigName(args[1]), release.ValidateReleaseID(*releaseID)); err != nil {
					return c.usageError(env, "%v", err)
				}
				return unlock(ctx, env, df, args[0], args[1], *releaseID)
			}
		},
	})
}

func unlock(ctx context.Context, env Env, df *deployerFlags, project, config, releaseID string) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(env.Stderr, "ferry unlock: "+format+"\n", a...)
		return exitFailure
	}
	d, err := connect(ctx, env, df)
	if err != nil {
		return fail("%v", err)
	}
	locks := lock.New(d.s3, d.cfg.Bucket, clock.System{})
	h, found, err := locks.Get(ctx, project, config)
	switch {
	case err != nil:
		return fail("%v", err)
	case !found:
		fmt.Fprintf(env.Stdout, "no lock on %s %s: nothing to do\n", project, config)
		return exitOK
	case h.ReleaseID != releaseID:
		return fail("not removed: the lock of %s %s is held by release %s (execution %s) since %s, not by %s",
			project, config, h.ReleaseID, lastSegment(h.Execution), formatTime(h.Since), releaseID)
	}
	if h.Execution != "" {
		desc, err := d.sfn.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(h.Execution)})
		var gone *sfntypes.ExecutionDoesNotExist
		switch {
		case err == nil && desc.Status == sfntypes.ExecutionStatusRunning:
			return fail("not removed: release %s is still deploying (execution %s); halt it with ferry halt %s %s", releaseID, lastSegment(h.Execution), project, config)
		case err != nil && !errors.As(err, &gone):
			return fail("not removed: cannot tell whether execution %s still runs: %v", lastSegment(h.Execution), err)
		}
	}
	if err := locks.Release(ctx, project, config, releaseID); err != nil {
		return fail("%v", err)
	}
	fmt.Fprintf(env.Stdout, "removed the lock of %s %s held by release %s since %s\n", project, config, releaseID, formatTime(h.Since))
	return exitOK
}
