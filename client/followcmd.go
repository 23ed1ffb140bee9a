package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/ledger"
)

// followCommand is ferry follow.
type followCommand struct {
	env      Env
	deployer deployerFlags
	follow   followFlags
}

func (c *followCommand) spec() commandSpec {
	return commandSpec{
		name:    "follow",
		args:    "PROJECT CONFIG | RELEASE_ID | PROMOTION_ID",
		summary: "Follow a running deploy, or a promotion, to its end, without its release file",
		help: `Follow attaches to the running deploy of PROJECT CONFIG, or of the release
RELEASE_ID (as ferry deploy, ferry status and ferry list name it), and
shows it as ferry deploy does, to its end. Given a promotion's id (as
ferry pipeline start and status name it), it follows the promotion:
each stage as it is reached, its gate waits with what they wait for (a
soak's time left, alarms, an approval), its approval, each of its
deploys as a deploy's, to the promotion's end (succeeded 0, failed or
halted 1, a deploy FailureDirty 4). It exits as ferry deploy does
once the deploy ends. A RELEASE_ID whose deploy has ended is shown as
ferry deploy shows it at its end, and ferry follow exits with its exit
code: a job that lost contact learns how its deploy ended. It exits 9
when no such deploy is running or known.

Ctrl-C stops following, not the deploy: ferry halt PROJECT CONFIG stops it.`,
		exits: []int{exitFailure, exitDirty, exitDetached},
	}
}

func (c *followCommand) defineFlags(fs *flag.FlagSet) {
	c.deployer.define(fs)
	fs.BoolVar(&c.follow.asJSON, "json", false, "print one JSON object per event and the outcome")
	fs.DurationVar(&c.follow.poll, "poll", defaultPollInterval, "how often to read the execution's history (default 1s)")
}

func (c *followCommand) Run(ctx context.Context, args []string) error {
	var project, config, releaseID string
	switch len(args) {
	case 1:
		releaseID = args[0]
		if err := release.ValidateReleaseID(releaseID); err != nil {
			return usageErrorf(c.spec(), "%v", err)
		}
	case 2:
		project, config = args[0], args[1]
		if err := errors.Join(release.ValidateProjectName(project), release.ValidateConfigName(config)); err != nil {
			return usageErrorf(c.spec(), "%v", err)
		}
	default:
		return usageErrorf(c.spec(), "follow takes a project and a config, or a release id")
	}
	if err := c.follow.check(); err != nil {
		return usageErrorf(c.spec(), "%v", err)
	}
	return commandFailure("follow", exitFailure, c.run(ctx, project, config, releaseID))
}

// run finds the running deploy (of project/config, or of releaseID when
// project is "") and follows it as deploy does.
func (c *followCommand) run(ctx context.Context, project, config, releaseID string) error {
	d, err := connect(ctx, c.env, &c.deployer)
	if err != nil {
		return err
	}
	var x runningExecution
	deploy := &deployCommand{env: c.env, deployer: c.deployer, follow: c.follow}
	out := newDisplay(c.env, c.follow.asJSON)
	if project != "" {
		x, err = runningOf(ctx, d, project, config, c.deployer.command("status", project, config))
	} else {
		arn, q, found, perr := promotionExecution(ctx, d, releaseID)
		if perr != nil {
			return perr
		}
		if found {
			return c.followPromotion(ctx, d, arn, q)
		}
		if x, found, err = runningRelease(ctx, d, releaseID); err == nil && !found {
			return c.finished(ctx, d, deploy, out, releaseID)
		}
	}
	if err != nil {
		return err
	}
	r := x.Release
	deploy.announce(out, r.ProjectName, r.ConfigName, r.ReleaseID, x.ARN)
	out.message("ferry follow: %s %s release %s", r.ProjectName, r.ConfigName, r.ReleaseID)
	if about := describeRelease(r); about != "" {
		out.message("%s", about)
	}
	return deploy.followToEnd(ctx, d, out, r, "", x.ARN)
}

// runningOf is the running deploy of project/config: the oldest, which
// holds the lock when there are several.
func runningOf(ctx context.Context, d *deployer, project, config, statusHint string) (runningExecution, error) {
	running, err := findRunning(ctx, d, project, config)
	if err != nil {
		return runningExecution{}, err
	}
	if len(running) == 0 {
		return runningExecution{}, notFoundf("no deploy of %s %s is running (see %s)", project, config, statusHint)
	}
	return running[0], nil
}

// runningRelease is the running execution that deploys releaseID, found
// by its name (naming.ExecutionName, read back); a cut name is matched by
// reading the release in its input.
func runningRelease(ctx context.Context, d *deployer, releaseID string) (x runningExecution, found bool, err error) {
	err = eachRunning(ctx, d, func(item sfntypes.ExecutionListItem) (bool, error) {
		if _, _, id, ok := naming.ParseExecutionName(aws.ToString(item.Name)); ok && id != releaseID {
			return false, nil
		}
		running, ok, err := describeRunning(ctx, d, item)
		if ok && running.Release.ReleaseID == releaseID {
			x, found = running, true
			return true, nil
		}
		return false, err
	})
	return x, found, err
}

// finished shows how the deploy of releaseID, which is not running,
// ended, as ferry deploy shows it at its end, and returns its exit code:
// a follower that lost contact learns the outcome it missed. A release
// the deployer does not hold, or whose execution is gone, is an error.
func (c *followCommand) finished(ctx context.Context, d *deployer, deploy *deployCommand, out *display, releaseID string) error {
	l := ledger.New(d.s3, d.cfg.Bucket)
	project, config, err := locateRelease(ctx, l, releaseID)
	if err != nil {
		return fmt.Errorf("no deploy of release %s is running, and %w", releaseID, err)
	}
	raw, err := l.GetReleaseRaw(ctx, project, config, releaseID)
	if err != nil {
		return fmt.Errorf("%s %s: %w", project, config, err)
	}
	r, err := release.Decode(raw)
	if err != nil {
		return fmt.Errorf("%s %s release %s as stored: %w", project, config, releaseID, err)
	}
	arn := asl.ExecutionARN(d.cfg.StateMachineARN, naming.ExecutionName(project, config, releaseID))
	if o, found, err := l.GetOutcome(ctx, project, config, releaseID); err == nil && found && o.Execution != "" {
		arn = o.Execution
	}
	u, err := outcomeOf(ctx, d.sfn, arn)
	if err != nil {
		return fmt.Errorf("no deploy of release %s is running, and its end cannot be read: %w (see ferry show %s)", releaseID, err, releaseID)
	}
	deploy.announce(out, project, config, releaseID, arn)
	out.message("ferry follow: %s %s release %s has ended", project, config, releaseID)
	out.groups = func() ([]string, []string) { return groupsOf(ctx, d, arn) }
	out.show(u)
	return deploy.ended(ctx, d, out, r, arn, u)
}

// outcomeEvents is how many of an ended execution's newest events
// outcomeOf reads: its end and the end state entered before it.
const outcomeEvents = 5

// outcomeOf is the outcome of the ended execution arn, read from its
// newest events; its elapsed time is since the execution started. An
// execution still running, or gone, is an error.
func outcomeOf(ctx context.Context, api stepFunctions, arn string) (progress, error) {
	desc, err := api.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
	if err != nil {
		return progress{}, err
	}
	if desc.Status == sfntypes.ExecutionStatusRunning {
		return progress{}, fmt.Errorf("execution %s is running", lastSegment(arn))
	}
	events, err := historyPages(ctx, api, arn, 0, outcomeEvents, true)
	if err != nil {
		return progress{}, err
	}
	for _, u := range renderHistory(events) {
		if u.Event == updateOutcome {
			if start := aws.ToTime(desc.StartDate); !start.IsZero() && u.At.After(start) {
				u.Elapsed = u.At.Sub(start)
			}
			return u, nil
		}
	}
	return progress{}, fmt.Errorf("the history of %s does not say how it ended", lastSegment(arn))
}

// describeRunning reads the release a running execution deploys; found is
// false when it is no longer running or its input is not a release.
func describeRunning(ctx context.Context, d *deployer, item sfntypes.ExecutionListItem) (runningExecution, bool, error) {
	arn := aws.ToString(item.ExecutionArn)
	desc, err := d.sfn.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
	if err != nil {
		var gone *sfntypes.ExecutionDoesNotExist
		if errors.As(err, &gone) {
			return runningExecution{}, false, nil
		}
		return runningExecution{}, false, fmt.Errorf("reading running execution %s: %w", aws.ToString(item.Name), err)
	}
	if desc.Status != sfntypes.ExecutionStatusRunning {
		return runningExecution{}, false, nil
	}
	r, err := release.Decode([]byte(aws.ToString(desc.Input)))
	if err != nil {
		return runningExecution{}, false, nil
	}
	return runningExecution{ARN: arn, Name: aws.ToString(item.Name), Started: aws.ToTime(desc.StartDate), Release: r}, true, nil
}
