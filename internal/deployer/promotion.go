package deployer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/identity"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/pipeline"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/ledger"
)

// promotion is what every promotion task after Promote works on: its
// state document, its stored request (checked against the state's hash)
// and its record.
type promotion struct {
	st  *execution.Promotion
	q   *pipeline.Request
	rec ledger.PromotionRecord
}

// decodeRequest is pipeline.DecodeRequest with its problems as a
// *failure.BadReleaseError.
func decodeRequest(data []byte) (*pipeline.Request, error) {
	q, err := pipeline.DecodeRequest(data)
	if err != nil {
		return nil, failure.BadRelease(pipelineProblems(err)...)
	}
	return q, nil
}

func pipelineProblems(err error) []string {
	var invalid *pipeline.InvalidError
	if errors.As(err, &invalid) {
		return invalid.Problems
	}
	return []string{err.Error()}
}

// confirmPromotion checks that req runs for a running execution of the
// deployer's state machine whose input is the promotion request of
// canonical hash sum (see confirmExecution).
func (d *Deployer) confirmPromotion(ctx context.Context, req execution.Request, sum string) error {
	input, err := d.runningInput(ctx, req)
	if err != nil || d.cfg.Executions == nil {
		return err
	}
	var in execution.PromotionInput
	if err := json.Unmarshal(input, &in); err != nil || len(in.Promotion) == 0 {
		return refuseRequest(req, "its input is not a promotion")
	}
	q, err := pipeline.DecodeRequest(in.Promotion)
	if err != nil {
		return refuseRequest(req, "its input is not a promotion: %v", err)
	}
	if got, err := q.Hash(); err != nil || got != sum {
		return refuseRequest(req, "runs promotion request sha256 %s, not %s", got, sum)
	}
	return nil
}

// storedRequest reads the request stored for a promotion and checks that
// it is the one of canonical hash sum.
func (d *Deployer) storedRequest(ctx context.Context, project, first, id, sum string) (*pipeline.Request, error) {
	key := naming.PromotionRequestKey(project, first, id)
	raw, found, err := d.ledger.GetClientObject(ctx, key, pipeline.MaxRequestBytes)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, failure.BadRelease(fmt.Sprintf("request: not stored at %s: whoever starts a promotion stores it under the first stage's config", key))
	}
	q, err := decodeRequest(raw)
	if err != nil {
		return nil, err
	}
	if got, err := q.Hash(); err != nil || got != sum {
		return nil, failure.BadRelease(fmt.Sprintf("request: the one stored at %s is not the one the execution runs", key))
	}
	return q, nil
}

// unregistered says which configs of stage i do not have the pipeline of
// hash pipeSum registered (naming.PipelineKey): a promotion deploys a
// config only through the pipeline whoever may deploy it registered.
func (d *Deployer) unregistered(ctx context.Context, q *pipeline.Request, i int, pipeSum string) ([]string, error) {
	var held []string
	s := q.Pipeline.Stages[i]
	for _, t := range s.Targets {
		config := pipeline.TargetConfig(s, t)
		key := naming.PipelineKey(q.Pipeline.ProjectName, config)
		raw, found, err := d.ledger.GetClientObject(ctx, key, limits.MaxPipelineBytes)
		if err != nil {
			return nil, err
		}
		if !found {
			held = append(held, fmt.Sprintf("config %s has no pipeline registered (%s): register this one with ferry pipeline register", config, key))
			continue
		}
		if !pipeline.SamePipeline(raw, pipeSum) {
			held = append(held, fmt.Sprintf("config %s has another pipeline registered (%s): a promotion deploys a config only through its registered pipeline", config, key))
		}
	}
	return held, nil
}

// loadPromotion reads the promotion state a task is given, confirms it is
// its execution's, and reads the stored request and the record.
func (d *Deployer) loadPromotion(ctx context.Context, req execution.Request, st *execution.Promotion) (*promotion, error) {
	if st.ProjectName == "" || st.FirstConfig == "" || st.PromotionID == "" || st.RequestSHA256 == "" {
		return nil, &failure.InternalError{Msg: fmt.Sprintf("task %s: the state names no promotion", req.Task)}
	}
	if err := d.confirmPromotion(ctx, req, st.RequestSHA256); err != nil {
		return nil, err
	}
	q, err := d.storedRequest(ctx, st.ProjectName, st.FirstConfig, st.PromotionID, st.RequestSHA256)
	if err != nil {
		return nil, err
	}
	rec, found, err := d.ledger.GetPromotion(ctx, st.ProjectName, st.FirstConfig, st.PromotionID)
	switch {
	case err != nil:
		return nil, err
	case !found:
		return nil, &failure.InternalError{Msg: fmt.Sprintf("task %s: promotion %s has no record", req.Task, st.PromotionID)}
	case rec.RequestSHA256 != st.RequestSHA256 || rec.Execution != req.Execution.ID:
		return nil, refuseRequest(req, "promotion %s is recorded for another request or execution", st.PromotionID)
	case st.Stage < 0 || st.Stage >= len(rec.Stages) || len(rec.Stages) != len(q.Pipeline.Stages):
		return nil, &failure.InternalError{Msg: fmt.Sprintf("task %s: stage %d of %d", req.Task, st.Stage, len(rec.Stages))}
	}
	return &promotion{st: st, q: q, rec: rec}, nil
}

// promotionOf is how Gate, RequestApproval
// and EndStage start: the promotion's state document they are given,
// confirmed to be their execution's, with its request and record.
func (d *Deployer) promotionOf(ctx context.Context, req execution.Request) (*promotion, error) {
	var st execution.Promotion
	if err := json.Unmarshal(req.Input, &st); err != nil {
		return nil, &failure.InternalError{Msg: fmt.Sprintf("task %s: input is not a promotion's state: %v", req.Task, err)}
	}
	return d.loadPromotion(ctx, req, &st)
}

// verifyPromotion accepts a promoted release (promotion_of set) without an
// identity proof only as the promotion's record says: its stage's gates
// held (the stage is deploying), and its content is exactly what the
// pipeline derives for its config from the stored request. The caller is
// the promotion's starter, for the records.
func (d *Deployer) verifyPromotion(ctx context.Context, r *release.Release) (identity.Caller, error) {
	rec, found, err := d.ledger.GetPromotion(ctx, r.ProjectName, r.PromotionOf, r.ReleaseID)
	switch {
	case err != nil:
		return identity.Caller{}, err
	case !found:
		return identity.Caller{}, failure.BadRelease(fmt.Sprintf("promotion_of: no promotion %s of %s %s is recorded", r.ReleaseID, r.ProjectName, r.PromotionOf))
	}
	q, err := d.storedRequest(ctx, r.ProjectName, r.PromotionOf, r.ReleaseID, rec.RequestSHA256)
	if err != nil {
		return identity.Caller{}, err
	}
	st := &execution.Promotion{ProjectName: r.ProjectName, FirstConfig: r.PromotionOf, PromotionID: r.ReleaseID}
	p := &promotion{st: st, q: q, rec: rec}
	for i, s := range q.Pipeline.Stages {
		for j, t := range s.Targets {
			if pipeline.TargetConfig(s, t) != r.ConfigName {
				continue
			}
			if rec.Stages[i].Status != ledger.PromotionDeploying {
				return identity.Caller{}, failure.BadRelease(fmt.Sprintf("promotion_of: stage %s of promotion %s is %s, not deploying", s.ConfigName, r.ReleaseID, rec.Stages[i].Status))
			}
			want, err := d.promotedRelease(p, i, j)
			if err != nil {
				return identity.Caller{}, err
			}
			if same, err := sameRelease(want, r); err != nil || !same {
				return identity.Caller{}, failure.BadRelease(fmt.Sprintf("promotion_of: the release is not what promotion %s deploys to %s", r.ReleaseID, r.ConfigName))
			}
			return identity.Caller{ARN: rec.StartedBy, UserID: rec.StartedByID}, nil
		}
	}
	return identity.Caller{}, failure.BadRelease(fmt.Sprintf("promotion_of: promotion %s deploys no config %s", r.ReleaseID, r.ConfigName))
}

// sameRelease reports whether a and b encode the same canonically.
func sameRelease(a, b *release.Release) (bool, error) {
	x, err := release.Canonical(a)
	if err != nil {
		return false, err
	}
	y, err := release.Canonical(b)
	if err != nil {
		return false, err
	}
	return bytes.Equal(x, y), nil
}
