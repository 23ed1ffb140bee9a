package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/pipeline"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/ledger"
)

// promotionStageEvent is a stage of a followed promotion as it changed:
// reached, waiting at its gates (what holds it, a soak's time left
// among them), waiting for an approval, approved, deploying, and how it
// ended.
type promotionStageEvent struct {
	PromotionID string   `json:"promotion_id"`
	Stage       string   `json:"stage"`
	Status      string   `json:"status"`
	Held        []string `json:"held"`
	ApprovedBy  string   `json:"approved_by,omitempty"`
	Message     string   `json:"message"`
}

// promotionEndEvent is how a followed promotion ended, and the exit code
// ferry follow exits with.
type promotionEndEvent struct {
	PromotionID string `json:"promotion_id"`
	Status      string `json:"status"`
	Why         string `json:"why,omitempty"`
	ExitCode    int    `json:"exit_code"`
	Message     string `json:"message"`
}

// promotionFollower follows one promotion: its record, stage by stage,
// and each stage's deploys as ferry follow shows a deploy.
type promotionFollower struct {
	c      *followCommand
	d      *deployer
	out    *display
	deploy *deployCommand
	q      *pipeline.Request
	first  string
	arn    string
	// shown is what was last shown of each stage; followed the deploys
	// followed.
	shown    map[string]string
	followed map[string]bool
}

// promotionExecution finds the execution of promotion id (running, else
// ended); found is false when the deployer ran no promotion of that id.
func promotionExecution(ctx context.Context, d *deployer, id string) (arn string, q *pipeline.Request, found bool, err error) {
	for _, status := range []sfntypes.ExecutionStatus{sfntypes.ExecutionStatusRunning, ""} {
		err = eachExecution(ctx, d, status, func(item sfntypes.ExecutionListItem) (bool, error) {
			if _, _, name, ok := naming.ParseExecutionName(aws.ToString(item.Name)); ok && name != id+"-promotion" {
				return false, nil
			}
			desc, err := d.sfn.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: item.ExecutionArn})
			if err != nil {
				return false, fmt.Errorf("reading execution %s: %w", aws.ToString(item.Name), err)
			}
			var in execution.PromotionInput
			if json.Unmarshal([]byte(aws.ToString(desc.Input)), &in) != nil || len(in.Promotion) == 0 {
				return false, nil
			}
			if pq, err := pipeline.DecodeRequest(in.Promotion); err == nil && pq.PromotionID == id {
				arn, q, found = aws.ToString(item.ExecutionArn), pq, true
			}
			return found, nil
		})
		if err != nil || found {
			return arn, q, found, err
		}
	}
	return "", nil, false, nil
}

// followPromotion follows the promotion q of execution arn to its end and
// returns its exit code as an error (nil when it succeeded).
func (c *followCommand) followPromotion(ctx context.Context, d *deployer, arn string, q *pipeline.Request) error {
	out := newDisplay(c.env, c.follow.asJSON)
	f := &promotionFollower{c: c, d: d, out: out, deploy: &deployCommand{env: c.env, deployer: c.deployer, follow: c.follow},
		q: q, first: pipeline.TargetConfig(q.Pipeline.Stages[0], q.Pipeline.Stages[0].Targets[0]), arn: arn,
		shown: map[string]string{}, followed: map[string]bool{}}
	if c.follow.asJSON {
		out.event(evPromotion, pipelineEvent{Project: q.Pipeline.ProjectName, PromotionID: q.PromotionID, Execution: arn,
			Message: "ferry follow: promotion " + q.PromotionID})
	}
	out.message("ferry follow: promotion %s of %s through %d stages (%s)", q.PromotionID, q.Pipeline.ProjectName, len(q.Pipeline.Stages), stageList(q.Pipeline))
	l := ledger.New(d.s3, d.cfg.Bucket)
	for {
		rec, found, err := l.GetPromotion(ctx, q.Pipeline.ProjectName, f.first, q.PromotionID)
		if err != nil {
			return fmt.Errorf("reading promotion %s: %w", q.PromotionID, err)
		}
		if found {
			if err := f.show(ctx, rec); err != nil || rec.Status != ledger.PromotionRunning {
				return errors.Join(err, f.end(rec))
			}
		} else if err := f.unrecorded(ctx); err != nil {
			return err
		}
		if err := c.env.Sleep(ctx, c.follow.poll); err != nil {
			return exitf(exitInterrupted, "\nferry: stopped following; the promotion goes on.\nTo stop it: ferry pipeline halt PIPELINE --promotion %s", q.PromotionID)
		}
	}
}

// stageList names the stages of p, in order.
func stageList(p *pipeline.Pipeline) string {
	return strings.Join(stageNames(p), " -> ")
}

// unrecorded is nil while the promotion's execution runs without a
// record yet, and why it ended when it ended first (the deployer refused
// it).
func (f *promotionFollower) unrecorded(ctx context.Context) error {
	desc, err := f.d.sfn.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(f.arn)})
	if err != nil {
		return fmt.Errorf("reading promotion %s's execution: %w", f.q.PromotionID, err)
	}
	if desc.Status == sfntypes.ExecutionStatusRunning {
		return nil
	}
	return fmt.Errorf("promotion %s was never recorded: its execution ended %s: %s", f.q.PromotionID, desc.Status,
		describeError(aws.ToString(desc.Error), aws.ToString(desc.Cause)))
}

// show shows each stage of rec that changed since it was last shown, and
// follows the deploys of a stage deploying, each to its end, as ferry
// follow shows a deploy.
func (f *promotionFollower) show(ctx context.Context, rec ledger.PromotionRecord) error {
	for _, s := range rec.Stages {
		key := s.Status + "\n" + strings.Join(s.Held, "\n") + "\n" + s.ApprovedBy
		if s.Status == ledger.PromotionPending || f.shown[s.Config] == key {
			continue
		}
		f.shown[s.Config] = key
		f.stage(rec.PromotionID, s)
		for _, t := range s.Targets {
			if t.Execution == "" || f.followed[t.Execution] {
				continue
			}
			f.followed[t.Execution] = true
			if err := f.followTarget(ctx, s.Config, t); err != nil {
				return err
			}
		}
	}
	return nil
}

// stage shows one stage of the promotion as it is now.
func (f *promotionFollower) stage(id string, s ledger.PromotionStage) {
	text := "stage " + s.Config + ": " + s.Status
	switch {
	case s.ApprovedBy != "" && s.Status != ledger.PromotionSucceeded:
		text += ", approved by " + s.ApprovedBy
	case s.Status == ledger.PromotionApproval:
		text += ", waiting for a person's approval: ferry pipeline approve PIPELINE " + s.Config
	}
	if len(s.Held) > 0 && (s.Status == ledger.PromotionWaiting || s.Status == ledger.PromotionApproval || s.Status == ledger.PromotionHalted) {
		text += "\n  held: " + strings.Join(s.Held, "\n  held: ")
	}
	if f.c.follow.asJSON {
		f.out.event(evPromotionStage, promotionStageEvent{PromotionID: id, Stage: s.Config, Status: s.Status,
			Held: nonNil(s.Held), ApprovedBy: s.ApprovedBy, Message: text})
		return
	}
	fmt.Fprintln(f.c.env.Stdout, text)
}

// followTarget follows the deploy of target t of stage as ferry follow
// follows a deploy; how it ended is the promotion's to say, so only
// losing contact or an interrupt stops following the promotion.
func (f *promotionFollower) followTarget(ctx context.Context, stage string, t ledger.PromotionTarget) error {
	arn := t.Execution // the nested execution's name, of the deployer's state machine
	if !strings.HasPrefix(arn, "arn:") {
		arn = asl.ExecutionARN(f.d.cfg.StateMachineARN, arn)
	}
	desc, err := f.d.sfn.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
	if err != nil {
		return fmt.Errorf("reading the deploy of %s: %w", t.Config, err)
	}
	r, err := release.Decode([]byte(aws.ToString(desc.Input)))
	if err != nil {
		return fmt.Errorf("the deploy of %s runs no release: %w", t.Config, err)
	}
	f.deploy.announce(f.out, r.ProjectName, r.ConfigName, r.ReleaseID, arn)
	f.out.message("stage %s: ferry follow: %s %s release %s", stage, r.ProjectName, r.ConfigName, r.ReleaseID)
	err = f.deploy.followToEnd(ctx, f.d, f.out, r, "", arn)
	var exit *ExitError
	if errors.As(err, &exit) && (exit.Code == exitInterrupted || exit.Code == exitDetached) {
		return err
	}
	return nil
}

// end shows how the promotion rec ended and returns its exit code as an
// error: 0 succeeded; 4 when a deploy of it ended FailureDirty; 1 when it
// failed or was halted, as a deploy that ended FailureClean.
func (f *promotionFollower) end(rec ledger.PromotionRecord) error {
	code := exitOK
	switch rec.Status {
	case ledger.PromotionSucceeded:
	case ledger.PromotionFailed, ledger.PromotionHalted:
		code = exitFailure
		for _, s := range rec.Stages {
			for _, t := range s.Targets {
				if t.Outcome == execution.EndFailureDirty {
					code = exitDirty
				}
			}
		}
	default:
		return nil
	}
	text := fmt.Sprintf("promotion %s %s", rec.PromotionID, rec.Status)
	if rec.Why != "" {
		text += ": " + oneLine(rec.Why)
	}
	if f.c.follow.asJSON {
		f.out.event(evPromotionEnd, promotionEndEvent{PromotionID: rec.PromotionID, Status: rec.Status, Why: rec.Why, ExitCode: code, Message: text})
	} else {
		fmt.Fprintln(f.c.env.Stdout, text)
	}
	return exitSilently(code)
}
