package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/ferryhq/ferry/client/submit"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/ledger"
	"github.com/ferryhq/ferry/internal/target"
)

const destroyHelp = `Destroy tears PROJECT CONFIG down: it deploys a release that deploys
nothing (destroy, made by ferry itself) through the same path as ferry
deploy, with the lock and the halt marker: at its swap it retires every
group of the config, as a deploy retires the previous release (out of
their load balancers, drained, scaled to zero so termination hooks run,
deleted with their launch templates, alarms and scaling policies); it
records its outcome and removes the record of what is deployed. The
destroy runs in the target environment (account, region, qualifier) of
the release deployed now, else of the config's newest release, and
retires the groups of the config in every other environment it has
deployed to as well (a move's old one, or what a failed move left). Run
again, it finds nothing to retire and succeeds.

On a terminal it shows what it retires and asks you to type the config's
name; elsewhere (CI) it needs --yes. While another release holds the
lock it is refused, as deploy is (--wait-lock waits). ferry rollback
--to RELEASE_ID, or a deploy, brings the config back.

It follows the execution as deploy does, with the same flags and exit
codes; --json prints the same events.`

// destroyCommand is ferry destroy: a deploy of a release deploying
// nothing.
type destroyCommand struct {
	deploy deployCommand
	yes    bool
}

func (c *destroyCommand) spec() commandSpec {
	return commandSpec{
		name:    "destroy",
		args:    "PROJECT CONFIG",
		summary: "Retire every group of a config and forget what is deployed",
		help:    destroyHelp,
		exits:   deployExits,
	}
}

func (c *destroyCommand) defineFlags(fs *flag.FlagSet) {
	c.deploy.defineFlags(fs)
	fs.BoolVar(&c.yes, "yes", false, "destroy without asking for a confirmation")
}

// Run destroys project args[0] config args[1].
func (c *destroyCommand) Run(ctx context.Context, args []string) error {
	if err := c.deploy.checkProjectConfig(c.spec(), args); err != nil {
		return err
	}
	if !c.yes && (c.deploy.follow.asJSON || !c.deploy.env.Terminal()) {
		return usageErrorf(c.spec(), "destroy retires every group of %s %s; confirm with --yes (no terminal to ask at)", args[0], args[1])
	}
	return commandFailure("destroy", exitNotStarted, c.destroy(ctx, args[0], args[1]))
}

func (c *destroyCommand) destroy(ctx context.Context, project, config string) error {
	env := c.deploy.env
	out := newDisplay(env, c.deploy.follow.asJSON)
	d, err := connect(ctx, env, &c.deploy.deployer)
	if err != nil {
		return err
	}
	l := ledger.New(d.s3, d.cfg.Bucket)
	of, cur, err := destroyTarget(ctx, l, project, config)
	if err != nil {
		return err
	}
	if !c.yes {
		targets, _, err := l.GetTargets(ctx, project, config)
		if err != nil {
			return err
		}
		here := destroyHere(of, cur, d.cfg.home())
		if err := c.confirm(ctx, project, config, here, cur, targets.Targets); err != nil {
			return err
		}
	}
	now, err := d.now(ctx)
	if err != nil {
		return err
	}
	p, err := submit.PrepareDestroy(ctx, d.prover, of, now, displayName(env), submit.NewReleaseID(now, env.Random))
	if err != nil {
		return err
	}
	return c.deploy.submit(ctx, d, out, p)
}

// destroyTarget is the release whose target environment a destroy of
// project/config runs in: the one deployed now (cur), else the newest. A
// config the deployer has no release of is an error.
func destroyTarget(ctx context.Context, l *ledger.Ledger, project, config string) (*release.Release, *ledger.Current, error) {
	cur, deployed, err := l.GetCurrent(ctx, project, config)
	if err != nil {
		return nil, nil, err
	}
	id := cur.ReleaseID
	if !deployed {
		ids, err := l.Releases(ctx, project, config)
		if err != nil {
			return nil, nil, err
		}
		if len(ids) == 0 {
			return nil, nil, notFoundf("the deployer knows no release of %s %s: nothing to destroy", project, config)
		}
		id = ids[0]
	}
	of, err := l.GetRelease(ctx, project, config, id)
	if err != nil {
		return nil, nil, fmt.Errorf("reading release %s for its target environment: %w", id, err)
	}
	// Its environment as Validate accepted it, when a Validate did.
	sum, err := release.Hash(of)
	if err != nil {
		return nil, nil, fmt.Errorf("reading release %s for its target environment: %w", id, err)
	}
	if err := l.CheckReleaseHash(ctx, project, config, id, sum); err != nil {
		return nil, nil, err
	}
	if !deployed {
		return of, nil, nil
	}
	return of, &cur, nil
}

// destroyHere is the target environment a destroy runs in: the one
// recorded for the release deployed now (cur, as ferry status shows it),
// else the one release of names; what either leaves blank is the
// deployer's own (home), as a release naming no account or region runs
// in the deployer's.
func destroyHere(of *release.Release, cur *ledger.Current, home target.Target) target.Target {
	here := target.Target{AccountID: of.AccountID, Region: of.Region, Qualifier: of.Qualifier}
	if cur != nil {
		here = target.Target{AccountID: cur.AccountID, Region: cur.Region, Qualifier: cur.Qualifier}
	}
	here.AccountID = firstNonEmpty(here.AccountID, home.AccountID, "(unknown)")
	here.Region = firstNonEmpty(here.Region, home.Region, "(unknown)")
	return here
}

// confirm says what the destroy retires (in here, and in every other of
// targets) and asks for the config's name on the terminal; anything else
// typed is a refusal. Ctrl-C while it asks (ctx done) ends the command,
// interrupted, before anything is started.
func (c *destroyCommand) confirm(ctx context.Context, project, config string, here target.Target, cur *ledger.Current, targets []target.Target) error {
	env := c.deploy.env
	fmt.Fprintf(env.Stderr, "ferry destroy: %s %s, in %s\n", project, config, here.Describe())
	if cur == nil {
		fmt.Fprintf(env.Stderr, "  nothing is deployed; any group of the config left there is retired\n")
	} else {
		fmt.Fprintf(env.Stderr, "  deployed now: release %s; every group of the config is retired:\n", cur.ReleaseID)
		for _, g := range cur.Groups {
			fmt.Fprintf(env.Stderr, "    %s (%s, desired %d)\n", g.Group, g.Service, g.Desired)
		}
	}
	for _, t := range targets {
		if !sameTarget(t, here) {
			fmt.Fprintf(env.Stderr, "  also in %s: every group of the config there is retired\n", t.Describe())
		}
	}
	fmt.Fprintf(env.Stderr, "Type the config's name (%s) to destroy it: ", config)
	line, err := readLine(ctx, env.Stdin)
	if ctx.Err() != nil {
		fmt.Fprintln(env.Stderr)
		return exitf(exitInterrupted, "ferry destroy: interrupted: nothing was destroyed")
	}
	if strings.TrimSpace(line) != config {
		if err != nil && line == "" {
			fmt.Fprintln(env.Stderr)
		}
		return errors.New("not confirmed: nothing was started")
	}
	return nil
}

// sameTarget reports whether a and b are one environment, an account or
// region a leaves blank being b's.
func sameTarget(a, b target.Target) bool {
	return firstNonEmpty(a.AccountID, b.AccountID) == b.AccountID && firstNonEmpty(a.Region, b.Region) == b.Region && a.Qualifier == b.Qualifier
}

// readLine reads one line from r, or returns when ctx is done (its
// error): a read of a terminal does not end at Ctrl-C, which the process
// catches. A read left waiting ends with the process.
func readLine(ctx context.Context, r io.Reader) (string, error) {
	type read struct {
		line string
		err  error
	}
	done := make(chan read, 1)
	go func() {
		line, err := bufio.NewReader(r).ReadString('\n')
		done <- read{line, err}
	}()
	select {
	case got := <-done:
		return got.line, got.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}
