package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/ferryhq/ferry/internal/halt"
	"github.com/ferryhq/ferry/internal/ledger"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/pipeline"
	"github.com/ferryhq/ferry/internal/submit"
)

// register writes the pipeline file at naming.PipelineKey of every config
// it deploys: whoever may deploy a config registers the one pipeline that
// may promote into it (and so its gates).
func (c *pipelineCommand) register(ctx context.Context, file string) error {
	p, d, err := c.open(ctx, file)
	if err != nil {
		return err
	}
	body, err := json.Marshal(p)
	if err != nil {
		return err
	}
	configs := pipelineConfigs(p)
	for _, config := range configs {
		if err := putObject(ctx, d, naming.PipelineKey(p.ProjectName, config), body); err != nil {
			return fmt.Errorf("registering the pipeline in %s: %w", config, err)
		}
	}
	fmt.Fprintf(c.env.Stdout, "ferry pipeline register: %s registered in %s\n", p.ProjectName, strings.Join(configs, ", "))
	return nil
}

// open reads the pipeline file at file and connects to the deployer.
func (c *pipelineCommand) open(ctx context.Context, file string) (*pipeline.Pipeline, *deployer, error) {
	p, err := readPipeline(file)
	if err != nil {
		return nil, nil, err
	}
	d, err := connect(ctx, c.env, &c.deployer)
	return p, d, err
}

// pipelineConfigs are the configs of every target of p, stage by stage.
func pipelineConfigs(p *pipeline.Pipeline) []string {
	var out []string
	for _, s := range p.Stages {
		for _, t := range s.Targets {
			out = append(out, pipeline.TargetConfig(s, t))
		}
	}
	return out
}

func putObject(ctx context.Context, d *deployer, key string, body []byte) error {
	_, err := d.s3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(d.cfg.Bucket), Key: aws.String(key),
		Body: bytes.NewReader(body), ContentLength: aws.Int64(int64(len(body)))})
	return err
}

// start starts a promotion of the release in releaseFile through the
// pipeline: the deployer deploys each stage once its gates hold, with no
// laptop involved.
func (c *pipelineCommand) start(ctx context.Context, pipelineFile, releaseFile string) error {
	p, err := readPipeline(pipelineFile)
	if err != nil {
		return err
	}
	r, err := readRelease(c.env.Stderr, releaseFile)
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
	pr, err := submit.PreparePromotion(ctx, d.prover, p, r, releaseFile, now, displayName(c.env), submit.NewReleaseID(now, c.env.Random))
	if err != nil {
		return err
	}
	sub := d.submitter()
	if err := sub.UploadPromotion(ctx, pr); err != nil {
		return err
	}
	arn, err := sub.StartPromotion(ctx, pr)
	if err != nil {
		return fmt.Errorf("starting the promotion: %w", err)
	}
	digest, err := pipeline.Digest(pr.Request.Release)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.env.Stdout, "ferry pipeline start: promotion %s of artifact %s through %d stages\nstarted execution %s\nfollow it with %s\n",
		pr.Request.PromotionID, pipeline.ShortDigest(digest), len(p.Stages), arn, c.deployer.command("pipeline status", pipelineFile))
	return nil
}

// promotionRecord reads the promotion of p the command acts on: id, or
// else the newest recorded.
func (c *pipelineCommand) promotionRecord(ctx context.Context, d *deployer, p *pipeline.Pipeline) (ledger.PromotionRecord, string, error) {
	rec, first, found, err := readPromotion(ctx, d, p, c.promotion)
	switch {
	case err != nil:
		return rec, first, err
	case !found && c.promotion == "":
		return rec, first, fmt.Errorf("no promotion of %s through this pipeline is recorded: start one with ferry pipeline start", p.ProjectName)
	case !found:
		return rec, first, fmt.Errorf("no promotion %s of %s is recorded", c.promotion, p.ProjectName)
	}
	return rec, first, nil
}

// readPromotion reads the record of promotion id through p (the newest
// recorded when id is ""), and the config it is kept under (the first
// stage's); found is false when there is none.
func readPromotion(ctx context.Context, d *deployer, p *pipeline.Pipeline, id string) (rec ledger.PromotionRecord, first string, found bool, err error) {
	l := ledger.New(d.s3, d.cfg.Bucket)
	first = pipeline.TargetConfig(p.Stages[0], p.Stages[0].Targets[0])
	if id == "" {
		ids, err := l.Promotions(ctx, p.ProjectName, first)
		if err != nil || len(ids) == 0 {
			return rec, first, false, err
		}
		id = ids[0]
	}
	rec, found, err = l.GetPromotion(ctx, p.ProjectName, first, id)
	if err != nil {
		return rec, first, false, fmt.Errorf("reading promotion %s: %w", id, err)
	}
	return rec, first, found, nil
}

// approve approves the promotion into stage: an approval proved as the
// caller, which the deployer counts only for that promotion, stage and
// artifact; then it wakes the stage's wait for it, if it waits.
func (c *pipelineCommand) approve(ctx context.Context, file, stage string) error {
	p, d, err := c.open(ctx, file)
	if err != nil {
		return err
	}
	i := stageIndex(p, stage)
	if i < 0 {
		return fmt.Errorf("%s has no stage %q (its stages: %s)", file, stage, strings.Join(stageNames(p), ", "))
	}
	rec, _, err := c.promotionRecord(ctx, d, p)
	if err != nil {
		return err
	}
	if rec.Status != ledger.PromotionRunning {
		return fmt.Errorf("promotion %s is %s: nothing to approve", rec.PromotionID, rec.Status)
	}
	now, err := d.now(ctx)
	if err != nil {
		return err
	}
	a := pipeline.Approval{PromotionID: rec.PromotionID, Stage: stage, Digest: rec.Digest, CreatedAt: now.UTC(), CreatedBy: displayName(c.env)}
	sum, err := a.IdentityHash()
	if err != nil {
		return err
	}
	if a.Identity, err = d.prover.Prove(ctx, sum); err != nil {
		return fmt.Errorf("proving who approves (sts:GetCallerIdentity with your credentials): %w", err)
	}
	body, err := json.Marshal(a)
	if err != nil {
		return err
	}
	if err := putObject(ctx, d, naming.ApprovalKey(p.ProjectName, stage, rec.PromotionID), body); err != nil {
		return fmt.Errorf("writing the approval: %w", err)
	}
	out := c.env.Stdout
	fmt.Fprintf(out, "ferry pipeline approve: promotion %s into %s approved (artifact %s)\n", rec.PromotionID, stage, pipeline.ShortDigest(rec.Digest))
	if tok := rec.Stages[i].ApprovalToken; tok != "" {
		if _, err := d.sfn.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(tok), Output: aws.String("{}")}); err != nil {
			fmt.Fprintf(out, "the stage's wait was not woken (%v): the deployer counts the approval when it next checks the gates\n", err)
		}
		return nil
	}
	fmt.Fprintf(out, "the stage does not wait for its approval yet: the deployer counts it when it checks the stage's gates\n")
	return nil
}

// haltPromotion halts the promotion: its halt marker, which the deployer
// reads before every stage; halt markers for the targets of a stage
// deploying now, whose deploys then roll back; and a failure sent to an
// approval's wait, so the marker is read at once.
func (c *pipelineCommand) haltPromotion(ctx context.Context, file string) error {
	p, d, err := c.open(ctx, file)
	if err != nil {
		return err
	}
	rec, first, err := c.promotionRecord(ctx, d, p)
	if err != nil {
		return err
	}
	out := c.env.Stdout
	if rec.Status != ledger.PromotionRunning {
		fmt.Fprintf(out, "ferry pipeline halt: promotion %s is %s already\n", rec.PromotionID, rec.Status)
		return nil
	}
	now, err := d.now(ctx)
	if err != nil {
		return err
	}
	m := halt.Marker{By: displayName(c.env), Reason: firstNonEmpty(oneLine(c.reason), defaultHaltReason), At: now}
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if err := putObject(ctx, d, naming.PromotionHaltKey(p.ProjectName, first, rec.PromotionID), body); err != nil {
		return fmt.Errorf("writing the promotion's halt marker: %w", err)
	}
	fmt.Fprintf(out, "ferry pipeline halt: promotion %s halted: no stage after this one deploys\n", rec.PromotionID)
	for _, s := range rec.Stages {
		switch s.Status {
		case ledger.PromotionDeploying:
			for _, t := range s.Targets {
				if err := halt.New(d.s3, d.cfg.Bucket).Put(ctx, p.ProjectName, t.Config, m); err != nil {
					return fmt.Errorf("halting %s: %w", t.Config, err)
				}
				fmt.Fprintf(out, "halt marker written for %s %s: its deploy rolls back\n", p.ProjectName, t.Config)
			}
		case ledger.PromotionApproval:
			if s.ApprovalToken != "" {
				_, err := d.sfn.SendTaskFailure(ctx, &sfn.SendTaskFailureInput{TaskToken: aws.String(s.ApprovalToken),
					Error: aws.String("ferry.Halted"), Cause: aws.String("ferry pipeline halt by " + m.By)})
				if err != nil {
					fmt.Fprintf(out, "the approval's wait was not woken (%v): the deployer reads the marker when it next checks the gates\n", err)
				}
			}
		}
	}
	return nil
}
