package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/ferryhq/ferry/client/submit"
	"github.com/ferryhq/ferry/internal/pipeline"
	"github.com/ferryhq/ferry/internal/release"
)

const promoteHelp = `Promote deploys RELEASE, promoted through the pipeline PIPELINE, to
every target of its stage STAGE (a stage's config_name), once the stage's
gates hold:

  - the stage before runs the release's artifact on every target (it
    succeeded with it);
  - the stage's soak is over: the artifact has served in every target of
    the stage before that long, counted from the newest of their swaps;
  - none of the stage's gate alarms is in ALARM, or missing, in a target
    of the stage before (the deployer reads them, with a drift query of
    each target);
  - for a stage that needs an approval, --approve: whoever runs it
    approves.

Otherwise it starts nothing, names every gate that holds it back, and
exits 3. The first stage has no gate.

Each target deploys the release ferry pipeline release prints for it,
through the same path as ferry deploy, one target after another, each
followed to its end with the same flags; the first that does not succeed
stops the wave, and its exit code is promote's.

This is promotion by hand: this client checks the gates, the deployer
does not enforce them, and whoever may deploy a config may still deploy
it with ferry deploy.`

// promoteCommand is ferry promote: deploys of a pipeline's stage.
type promoteCommand struct {
	deploy  deployCommand
	approve bool
}

func (c *promoteCommand) spec() commandSpec {
	return commandSpec{
		name:    "promote",
		args:    "PIPELINE RELEASE STAGE",
		summary: "Deploy a release to every target of a pipeline's stage, once its gates hold",
		help:    promoteHelp,
		exits:   deployExits,
	}
}

func (c *promoteCommand) defineFlags(fs *flag.FlagSet) {
	c.deploy.defineFlags(fs)
	fs.BoolVar(&c.approve, "approve", false, "approve the stage, when it needs a person's approval")
}

// Run promotes release args[1] through pipeline args[0] into stage
// args[2].
func (c *promoteCommand) Run(ctx context.Context, args []string) error {
	if len(args) != 3 {
		return usageErrorf(c.spec(), "promote takes a pipeline file, a release file and a stage")
	}
	if err := c.deploy.follow.check(); err != nil {
		return usageErrorf(c.spec(), "%v", err)
	}
	return commandFailure("promote", exitNotStarted, c.promote(ctx, args[0], args[1], args[2]))
}

func (c *promoteCommand) promote(ctx context.Context, pipelineFile, releaseFile, stage string) error {
	env := c.deploy.env
	p, err := readPipeline(pipelineFile)
	if err != nil {
		return err
	}
	i := stageIndex(p, stage)
	if i < 0 {
		return fmt.Errorf("%s has no stage %q (its stages: %s)", pipelineFile, stage, strings.Join(stageNames(p), ", "))
	}
	base, err := release.ReadTemplate(releaseFile)
	if err != nil {
		return err
	}
	digest, err := artifactOf(p, base, releaseFile)
	if err != nil {
		return err
	}
	d, err := connect(ctx, env, &c.deploy.deployer)
	if err != nil {
		return err
	}
	st, now, err := readPipelineStatus(ctx, d, p, nil)
	if err != nil {
		return err
	}
	var read map[string]pipeline.TargetRead
	if i > 0 {
		if read, err = readStagesBefore(ctx, env, d, p, []int{i}); err != nil {
			return err
		}
	}
	if err := c.held(p, st, i, digest, read, now); err != nil {
		return err
	}
	out := newDisplay(env, c.deploy.follow.asJSON)
	targets := p.Stages[i].Targets
	out.message("ferry promote: %s artifact %s into stage %s: %d %s", p.ProjectName, pipeline.ShortDigest(digest), stage, len(targets), plural(len(targets), "target", "targets"))
	for j := range targets {
		r, err := p.Release(base, i, j)
		if err != nil {
			return err
		}
		at, err := d.now(ctx)
		if err != nil {
			return err
		}
		prepared, err := submit.Prepare(ctx, d.prover, r, releaseFile, at, displayName(env), submit.NewReleaseID(at, env.Random))
		if err != nil {
			return err
		}
		if err := c.deploy.submit(ctx, d, out, prepared); err != nil {
			return err
		}
	}
	return nil
}

// held says what holds back promoting artifact digest into stage i of p
// (pipeline.Pipeline.Holds), given its status st and what was read of
// the stage before; nil when nothing does. --approve is the approval.
func (c *promoteCommand) held(p *pipeline.Pipeline, st []pipeline.StageStatus, i int, digest string, read map[string]pipeline.TargetRead, now time.Time) error {
	if i == 0 {
		return nil
	}
	r := st[i-1].Readings(read, now)
	r.Artifact = digest
	if c.approve {
		r.Approval = &pipeline.ApprovalReading{By: "--approve"}
	}
	if holds := p.Holds(i, r); len(holds) > 0 {
		return fmt.Errorf("stage %s is held back:\n  %s", p.Stages[i].ConfigName, strings.Join(pipeline.Messages(holds), "\n  "))
	}
	return nil
}

// stageIndex is the index of the stage of p whose config name is stage,
// -1 for none.
func stageIndex(p *pipeline.Pipeline, stage string) int {
	for i, s := range p.Stages {
		if s.ConfigName == stage {
			return i
		}
	}
	return -1
}

// stageNames are the config names of p's stages, in order.
func stageNames(p *pipeline.Pipeline) []string {
	names := make([]string, len(p.Stages))
	for i, s := range p.Stages {
		names[i] = s.ConfigName
	}
	return names
}
