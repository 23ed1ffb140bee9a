package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/ferryhq/ferry/client/submit"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/identity"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/pipeline"
	"github.com/ferryhq/ferry/internal/store/halt"
	"github.com/ferryhq/ferry/internal/store/ledger"
	"github.com/ferryhq/ferry/internal/tuning"
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
	c.result(evPipelineRegistered, pipelineEvent{Project: p.ProjectName, Configs: configs},
		"ferry pipeline register: %s registered in %s", p.ProjectName, strings.Join(configs, ", "))
	return nil
}

// pipelineEvent is the --json result of ferry pipeline register, start,
// approve and halt: one object on one line, as deploy's events are, its
// event naming what happened; the lines a person reads go before it as
// "message" events.
type pipelineEvent struct {
	Project     string   `json:"project"`
	Configs     []string `json:"configs,omitempty"`
	PromotionID string   `json:"promotion_id,omitempty"`
	Artifact    string   `json:"artifact,omitempty"`
	Execution   string   `json:"execution,omitempty"`
	Stage       string   `json:"stage,omitempty"`
	// Status is the promotion's, as its record says; ApprovedBy the
	// approver the deployer verified.
	Status     string `json:"status,omitempty"`
	ApprovedBy string `json:"approved_by,omitempty"`
	Message    string `json:"message"`
}

// result prints a pipeline command's result: the line format and args
// make for people, or ev with it as its message under --json.
func (c *pipelineCommand) result(k eventKind, ev pipelineEvent, format string, args ...any) {
	ev.Message = fmt.Sprintf(format, args...)
	if c.asJSON {
		_ = writeEvent(c.env.Stdout, k, ev, false)
		return
	}
	fmt.Fprintln(c.env.Stdout, ev.Message)
}

// note prints a line of a pipeline command's progress: a "message" event
// under --json.
func (c *pipelineCommand) note(format string, args ...any) {
	newDisplay(c.env, c.asJSON).message(format, args...)
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
	if err := c.checkStart(ctx, d, p); err != nil {
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
	id := pr.Request.PromotionID
	c.note("ferry pipeline start: promotion %s of artifact %s through %d stages\nstarted execution %s", id, pipeline.ShortDigest(digest), len(p.Stages), arn)
	rec, err := c.awaitRecord(ctx, d, p, id, arn)
	if err != nil {
		return err
	}
	c.result(evPromotionStarted, pipelineEvent{Project: p.ProjectName, PromotionID: id, Artifact: digest, Execution: arn, Status: rec.Status},
		"promotion %s recorded: %s\nfollow it with %s", id, rec.Status, c.deployer.command("pipeline status", pipelineFile))
	return nil
}

// startPolls bounds how often start reads whether the promotion is
// recorded, once a second.
const startPolls = 120

// awaitRecord waits until the deployer records promotion id of execution
// arn, and returns its record; the execution's failure when it ends
// first (the deployer refused the promotion).
func (c *pipelineCommand) awaitRecord(ctx context.Context, d *deployer, p *pipeline.Pipeline, id, arn string) (ledger.PromotionRecord, error) {
	for range startPolls {
		rec, _, found, err := readPromotion(ctx, d, p, id)
		if err != nil || (found && rec.Execution == arn) {
			return rec, err
		}
		out, err := d.sfn.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
		if err != nil {
			return rec, fmt.Errorf("reading promotion %s's execution: %w", id, err)
		}
		if out.Status != sfntypes.ExecutionStatusRunning {
			return rec, fmt.Errorf("the deployer refused promotion %s: its execution ended %s: %s: %s", id, out.Status,
				aws.ToString(out.Error), failure.Message(aws.ToString(out.Cause)))
		}
		if err := c.env.Sleep(ctx, time.Second); err != nil {
			return rec, err
		}
	}
	return ledger.PromotionRecord{}, fmt.Errorf("promotion %s is not recorded yet (execution %s): see ferry pipeline status", id, arn)
}

// checkStart refuses a promotion the deployer would: one through a
// pipeline not registered in every config it deploys, or while another
// promotion of the pipeline runs (the deployer enforces both).
func (c *pipelineCommand) checkStart(ctx context.Context, d *deployer, p *pipeline.Pipeline) error {
	sum, err := pipeline.PipelineHash(p)
	if err != nil {
		return err
	}
	l := ledger.New(d.s3, d.cfg.Bucket)
	var held []string
	for _, config := range pipelineConfigs(p) {
		key := naming.PipelineKey(p.ProjectName, config)
		raw, found, err := l.GetClientObject(ctx, key, limits.MaxPipelineBytes)
		if err != nil {
			return fmt.Errorf("reading the pipeline registered in %s: %w", config, err)
		}
		switch {
		case !found:
			held = append(held, config+" has no pipeline registered")
		case !pipeline.SamePipeline(raw, sum):
			held = append(held, config+" has another pipeline registered")
		}
	}
	if len(held) > 0 {
		return fmt.Errorf("nothing started: %s; register this one with ferry pipeline register", strings.Join(held, "; "))
	}
	recs, err := readPromotions(ctx, d, p)
	if err != nil {
		return err
	}
	for _, rec := range recs {
		if rec.Status == ledger.PromotionRunning {
			return fmt.Errorf("nothing started: promotion %s of this pipeline runs. %s", rec.PromotionID, pipeline.OnePromotionRule)
		}
	}
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
// caller, which the deployer verifies as it is given (an approval query:
// the proof, the approver against the stage's gates) and records
// verified, with who approved, under its own prefix; approve then stores
// the same approval where the stage's approvers may write (IAM decides
// who may approve). The gate counts the two, for that promotion, stage
// and artifact only, whenever its other gates pass, though the proof
// expires 15 minutes after it was signed. approve refuses (nothing
// written) a stage without an approval gate, one approved already, and
// one not waiting at its gates; the deployer refuses an approval whose
// proof or approver does not count (exit 3), and nothing is written. A
// stage waiting for its approval alone is woken.
func (c *pipelineCommand) approve(ctx context.Context, file, stage string) error {
	p, d, err := c.open(ctx, file)
	if err != nil {
		return err
	}
	i := stageIndex(p, stage)
	if i < 0 {
		return fmt.Errorf("%s has no stage %q (its stages: %s)", file, stage, strings.Join(stageNames(p), ", "))
	}
	if g := p.Stages[i].Gates; g == nil || !g.Approval {
		return fmt.Errorf("stage %s of pipeline %s (%s) has no approval gate (gates.approval): there is nothing to approve; nothing written", stage, p.ProjectName, file)
	}
	rec, first, err := c.promotionRecord(ctx, d, p)
	if err != nil {
		return err
	}
	if err := approvable(rec, i); err != nil {
		return err
	}
	v, given, err := c.verifyApproval(ctx, d, p.ProjectName, first, rec, stage)
	if err != nil {
		return err
	}
	key := naming.ApprovalKey(p.ProjectName, stage, rec.PromotionID)
	if err := putObject(ctx, d, key, given); err != nil {
		return fmt.Errorf("the deployer verified the approval as %s, but storing it at %s failed (whoever may approve %s may write there): %w", v.ApprovedBy, key, stage, err)
	}
	ev := pipelineEvent{Project: p.ProjectName, PromotionID: rec.PromotionID, Artifact: rec.Digest, Stage: stage, Status: rec.Status, ApprovedBy: v.ApprovedBy}
	msg := fmt.Sprintf("ferry pipeline approve: promotion %s into %s approved (artifact %s)\napproved by %s, verified by the deployer at %s",
		rec.PromotionID, stage, pipeline.ShortDigest(rec.Digest), v.ApprovedBy, formatTime(v.VerifiedAt))
	if tok := rec.Stages[i].ApprovalToken; tok != "" {
		// The stage waits for its approval alone: its gate counts it now.
		_, _ = d.sfn.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(tok), Output: aws.String("{}")})
		c.result(evPromotionApproved, ev, "%s\n%s waited for its approval: its gates are checked now", msg, stage)
		return nil
	}
	c.result(evPromotionApproved, ev, "%s\n%s waits for its other gates: the approval counts when they pass (the deployer checks them every %s or less)",
		msg, stage, pipeline.FormatDuration(tuning.GateRecheckSeconds*time.Second))
	return nil
}

// approvable is why stage i of the promotion rec cannot be approved now
// (nil: it can): the promotion ended, the stage is approved already, or
// its gate is not being checked (not reached yet, or past).
func approvable(rec ledger.PromotionRecord, i int) error {
	s := rec.Stages[i]
	switch {
	case rec.Status != ledger.PromotionRunning:
		return fmt.Errorf("promotion %s is %s: nothing to approve", rec.PromotionID, rec.Status)
	case s.ApprovedBy != "":
		return fmt.Errorf("stage %s of promotion %s is approved already, by %s", s.Config, rec.PromotionID, s.ApprovedBy)
	case s.Status == ledger.PromotionPending:
		return fmt.Errorf("stage %s of promotion %s is not reached yet (%s): approve it once it waits at its gate (ferry pipeline status); "+
			"the deployer verifies an approval when it is given, and its identity proof is valid %s; nothing written",
			s.Config, rec.PromotionID, currentStage(rec), pipeline.FormatDuration(identity.ProofLifetime))
	case s.Status != ledger.PromotionWaiting && s.Status != ledger.PromotionApproval:
		return fmt.Errorf("stage %s of promotion %s is %s: nothing to approve", s.Config, rec.PromotionID, s.Status)
	}
	return nil
}

// currentStage says where the promotion rec stands: its first stage not
// succeeded, and its status.
func currentStage(rec ledger.PromotionRecord) string {
	for _, s := range rec.Stages {
		if s.Status != ledger.PromotionSucceeded {
			return "the promotion is at " + s.Config + ", " + s.Status
		}
	}
	return "every stage succeeded"
}

// verifyApproval gives the deployer an approval of the promotion rec
// (whose first stage is first) into stage, proved as the caller, in an
// approval query, and returns what it recorded verified and the
// approval's bytes as given. Nothing is written when it refuses: an
// *ExitError (exit 3) saying why.
func (c *pipelineCommand) verifyApproval(ctx context.Context, d *deployer, project, first string, rec ledger.PromotionRecord, stage string) (v ledger.VerifiedApproval, given []byte, err error) {
	now, err := d.now(ctx)
	if err != nil {
		return v, nil, err
	}
	a := pipeline.Approval{PromotionID: rec.PromotionID, Stage: stage, Digest: rec.Digest, CreatedAt: now.UTC(), CreatedBy: displayName(c.env)}
	sum, err := a.IdentityHash()
	if err != nil {
		return v, nil, err
	}
	if a.Identity, err = d.prover.Prove(ctx, sum); err != nil {
		return v, nil, fmt.Errorf("proving who approves (sts:GetCallerIdentity with your credentials): %w", err)
	}
	if given, err = json.Marshal(a); err != nil {
		return v, nil, err
	}
	q := execution.ApprovalInput{Approval: execution.ApprovalQuery{ProjectName: project, FirstConfig: first, Given: given}}
	err = askQuery(ctx, c.env, d, "approval-"+submit.NewReleaseID(now, c.env.Random), q, &v)
	return v, given, err
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
	ev := pipelineEvent{Project: p.ProjectName, PromotionID: rec.PromotionID, Artifact: rec.Digest}
	if rec.Status != ledger.PromotionRunning {
		ev.Status = rec.Status
		c.result(evPromotionHalted, ev, "ferry pipeline halt: promotion %s is %s already", rec.PromotionID, rec.Status)
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
	lines := []string{fmt.Sprintf("ferry pipeline halt: promotion %s halted: no stage after this one deploys", rec.PromotionID)}
	for _, s := range rec.Stages {
		switch s.Status {
		case ledger.PromotionDeploying:
			for _, t := range s.Targets {
				if err := halt.New(d.s3, d.cfg.Bucket).Put(ctx, p.ProjectName, t.Config, m); err != nil {
					return fmt.Errorf("halting %s: %w", t.Config, err)
				}
				lines = append(lines, fmt.Sprintf("halt marker written for %s %s: its deploy rolls back", p.ProjectName, t.Config))
			}
		case ledger.PromotionWaiting:
			lines = append(lines, fmt.Sprintf("%s waits for its gates: the promotion ends at their next check, within %s",
				s.Config, pipeline.FormatDuration(tuning.GateRecheckSeconds*time.Second)))
		case ledger.PromotionApproval:
			if s.ApprovalToken != "" {
				_, err := d.sfn.SendTaskFailure(ctx, &sfn.SendTaskFailureInput{TaskToken: aws.String(s.ApprovalToken),
					Error: aws.String("ferry.Halted"), Cause: aws.String("ferry pipeline halt by " + m.By)})
				if err != nil {
					lines = append(lines, fmt.Sprintf("the approval's wait was not woken (%v): the deployer reads the marker when it next checks the gates", err))
				}
			}
		}
	}
	c.result(evPromotionHalted, ev, "%s", strings.Join(lines, "\n"))
	return nil
}
