package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/local/region"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/store/ledger"
)

// holdAtGateWait holds the region the first time the promotion waits
// for the gates of stage i (WaitForGate), and sends the hold's release.
func holdAtGateWait(tr *testRegion, i int) <-chan func() {
	held := make(chan func(), 1)
	var once sync.Once
	tr.observe(func(arn string, ev asl.Event) {
		if ev.StateEntered == nil || ev.StateEntered.Name != "WaitForGate" || !strings.HasSuffix(arn, "-promotion") {
			return
		}
		var st execution.Promotion
		if json.Unmarshal([]byte(ev.StateEntered.Input), &st) == nil && st.Stage == i {
			once.Do(func() { held <- tr.Hold() })
		}
	})
	return held
}

// approvalStored reports whether an approval of stage is stored for the
// promotion id.
func approvalStored(t *testing.T, tr *testRegion, stage, id string) bool {
	t.Helper()
	_, err := tr.S3().HeadObject(t.Context(), &s3.HeadObjectInput{Bucket: aws.String(tr.Bucket()),
		Key: aws.String(naming.ApprovalKey("coinbase/deploy-test", stage, id))})
	return err == nil
}

// TestPipelineApproveRefused: while staging soaks, approving staging (a
// stage without an approval gate) or production (a stage the promotion
// has not reached: a proof given now could expire before the deployer
// reads it) is refused with a clear error naming the stage and the
// pipeline, exit 1, and nothing is written; under --json, deploy's error
// event.
func TestPipelineApproveRefused(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	soaking := holdAtGateWait(tr, 1)
	require.Equal(t, exitOK, tr.ferry(t, "pipeline", "register", "--local", deployTestPipeline).code)
	startPromotion(t, tr)
	release := <-soaking
	defer release()
	id := promotionStatus(t, tr).PromotionID

	for _, tt := range []struct {
		stage string
		want  string
	}{
		{"staging", "stage staging of pipeline coinbase/deploy-test (" + deployTestPipeline + ") has no approval gate (gates.approval): there is nothing to approve; nothing written"},
		{"production", "stage production of promotion " + id + " is not reached yet (the promotion is at staging, waiting): approve it once it waits at its gate"},
	} {
		t.Run(tt.stage, func(t *testing.T) {
			r := tr.ferry(t, "pipeline", "approve", "--local", deployTestPipeline, tt.stage)
			assert.Equal(t, exitFailure, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			assert.Contains(t, r.stderr, tt.want)
			assert.False(t, approvalStored(t, tr, tt.stage, id), "nothing written")
			j := tr.ferry(t, "pipeline", "approve", "--local", "--json", deployTestPipeline, tt.stage)
			assert.Equal(t, exitFailure, j.code)
			var f struct {
				Event string `json:"event"`
				jsonFailure
			}
			require.NoError(t, json.Unmarshal([]byte(j.stdout), &f), j.stdout)
			assert.Equal(t, "error", f.Event)
			assert.Contains(t, f.Message, tt.want)
		})
	}
}

// TestPipelineApproveVerdict: approving production while it waits for
// its approval has the deployer verify the approval as it is given: with
// separate_approver, the promotion's starter (the local caller) is
// refused at once, exit 3 with the deployer's reason, nothing written
// (no approval stored, none recorded verified), and the stage still
// waits for an approval.
func TestPipelineApproveVerdict(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	addStagingAlarm(t, tr)
	file := pipelineWith(t, func(gates map[string]any) { gates["separate_approver"] = true })
	approvals := holdAtApprovals(tr, 4)
	require.Equal(t, exitOK, tr.ferry(t, "pipeline", "register", "--local", file).code)
	s := tr.ferryAt(t.Context(), func(e *Env) { e.Sleep = tr.sleeper() }, "pipeline", "start", "--local", file, deployTestRelease)
	require.Equal(t, exitOK, s.code, s.stderr)
	release := <-approvals
	defer release()

	r := approveStage(t, tr, file, "production")
	assert.Equal(t, exitNotStarted, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "the deployer refuses the approval: ")
	assert.Contains(t, r.stderr, "the approval is by arn:aws:iam::111111111111:user/ferry-local, who started the promotion: the stage requires another approver (separate_approver); nothing written")
	st := tr.ferry(t, "pipeline", "status", "--local", "--json", file)
	require.Equal(t, exitOK, st.code, st.stderr)
	var ps pipelineStatus
	require.NoError(t, json.Unmarshal([]byte(st.stdout), &ps))
	prod := ps.Promotion.Stages[2]
	assert.Equal(t, ledger.PromotionApproval, prod.Status, "still waits for an approval")
	assert.Empty(t, prod.ApprovedBy)
	assert.False(t, approvalStored(t, tr, "production", ps.Promotion.PromotionID), "nothing written")
	assert.False(t, verifiedStored(t, tr, ps.Promotion.PromotionID), "nothing recorded verified")
}

// verifiedStored reports whether the deployer recorded an approval of
// production verified for the promotion id (any approval's sum).
func verifiedStored(t *testing.T, tr *testRegion, id string) bool {
	t.Helper()
	key := naming.VerifiedApprovalKey("coinbase/deploy-test", "development", id, "production", "x")
	out, err := tr.S3().ListObjectsV2(t.Context(), &s3.ListObjectsV2Input{Bucket: aws.String(tr.Bucket()),
		Prefix: aws.String(strings.TrimSuffix(key, "x.json"))})
	require.NoError(t, err)
	return len(out.Contents) > 0
}

// TestPipelineApproveDuringSoak: production approved a minute into
// staging's 3,600 s soak (waiting for its other gates) is verified by the
// deployer when it is given, and recorded verified with who approved and
// when; the gate counts it when the soak ends, though its identity proof
// expired 15 minutes after it was signed (the local STS refuses it then):
// the promotion succeeds, production recorded approved by the local
// caller, verified at the time it was given. ferry pipeline status shows
// the approver from the moment the approval is verified, while the
// soak still holds the gate.
func TestPipelineApproveDuringSoak(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	addStagingAlarm(t, tr)
	soaking := holdAtGateWait(tr, 2)
	require.Equal(t, exitOK, tr.ferry(t, "pipeline", "register", "--local", deployTestPipeline).code)
	arn := startPromotion(t, tr)
	release := <-soaking
	tr.clk.Advance(time.Minute)
	given := tr.clk.Now()
	r := approveStage(t, tr, deployTestPipeline, "production")
	require.Equal(t, exitOK, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "approved by arn:aws:iam::111111111111:user/ferry-local, verified by the deployer at")
	assert.Contains(t, r.stdout, "production waits for its other gates: the approval counts when they pass")
	assert.True(t, verifiedStored(t, tr, promotionStatus(t, tr).PromotionID), "recorded verified when given")
	st := tr.ferry(t, "pipeline", "status", "--local", deployTestPipeline)
	require.Equal(t, exitOK, st.code, st.stderr)
	assert.Contains(t, st.stdout, "  production: waiting, approved by arn:aws:iam::111111111111:user/ferry-local (soak 1h", "shown once verified, before the gate's next check")
	assert.NotContains(t, st.stdout[strings.Index(st.stdout, "  production: waiting"):], "needs a person's approval", "held by its soak alone")
	waiting := promotionStatus(t, tr).Stages[2]
	assert.Equal(t, ledger.PromotionWaiting, waiting.Status)
	assert.Equal(t, "arn:aws:iam::111111111111:user/ferry-local", waiting.ApprovedBy, "in --json too")
	assert.True(t, waiting.ApprovalVerified)
	release()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	d, err := tr.Wait(ctx, arn)
	require.NoError(t, err)
	require.Equal(t, asl.StatusSucceeded, d.Status, "%s: %s", d.Error, d.Cause)
	prod := promotionStatus(t, tr).Stages[2]
	assert.Equal(t, "arn:aws:iam::111111111111:user/ferry-local", prod.ApprovedBy)
	assert.True(t, prod.ApprovalVerified)
	assert.Less(t, prod.ApprovedAt.Sub(given), time.Minute, "verified when given, not at the gate's next check")
	assert.Greater(t, prod.ReleasedAt.Sub(given), 15*time.Minute, "the gate opened after the proof expired")
}

// TestPipelineApproveExpiredProof: an approval whose identity proof has
// expired when the deployer verifies it (16 minutes of the region's time
// pass between its signing and the approval query's task, as for a laptop
// whose clock is that far behind) is refused at once: exit 3 naming STS's
// refusal, nothing written, production still waiting for an approval.
func TestPipelineApproveExpiredProof(t *testing.T) {
	var tr *testRegion
	tr = startRegion(t, "deploy-test.json", func(o *region.Options) {
		o.Intercept = func(ctx context.Context, req execution.Request, next region.Invoke) (json.RawMessage, error) {
			if req.Task == execution.TaskVerifyApproval {
				tr.clk.Advance(16 * time.Minute)
			}
			return next(ctx, req)
		}
	})
	addStagingAlarm(t, tr)
	approvals := holdAtApprovals(tr, 4)
	require.Equal(t, exitOK, tr.ferry(t, "pipeline", "register", "--local", deployTestPipeline).code)
	startPromotion(t, tr)
	release := <-approvals
	defer release()

	r := approveStage(t, tr, deployTestPipeline, "production")
	assert.Equal(t, exitNotStarted, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "the deployer refuses the approval: ")
	assert.Contains(t, r.stderr, "the approval has no valid identity proof")
	assert.Contains(t, r.stderr, "expired")
	prom := promotionStatus(t, tr)
	assert.Equal(t, ledger.PromotionApproval, prom.Stages[2].Status, "still waits for an approval")
	assert.Empty(t, prom.Stages[2].ApprovedBy)
	assert.False(t, approvalStored(t, tr, "production", prom.PromotionID), "nothing written")
	assert.False(t, verifiedStored(t, tr, prom.PromotionID), "nothing recorded verified")
}

// pipelineWith writes the deploy-test pipeline with production's gates
// changed by mutate to a file of the test's, and returns its path.
func pipelineWith(t *testing.T, mutate func(gates map[string]any)) string {
	t.Helper()
	raw, err := os.ReadFile(deployTestPipeline)
	require.NoError(t, err)
	var p map[string]any
	require.NoError(t, json.Unmarshal(raw, &p))
	stages, _ := p["stages"].([]any)
	prod, _ := stages[2].(map[string]any)
	gates, _ := prod["gates"].(map[string]any)
	mutate(gates)
	out, err := json.Marshal(p)
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "pipeline.json")
	require.NoError(t, os.WriteFile(file, out, 0o644))
	return file
}
