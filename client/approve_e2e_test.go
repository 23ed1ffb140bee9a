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
// its approval wakes it and returns the deployer's verdict: with
// separate_approver, the promotion's starter (the local caller) is
// refused, exit 1 with the deployer's reason, and the stage still waits
// for an approval, the refusal recorded.
func TestPipelineApproveVerdict(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	addStagingAlarm(t, tr)
	file := pipelineWith(t, func(gates map[string]any) { gates["separate_approver"] = true })
	approvals := make(chan func(), 4)
	tr.observe(func(_ string, ev asl.Event) {
		if ev.Type == asl.EventTaskSubmitted {
			approvals <- tr.Hold()
		}
	})
	require.Equal(t, exitOK, tr.ferry(t, "pipeline", "register", "--local", file).code)
	s := tr.ferryAt(t.Context(), func(e *Env) { e.Sleep = tr.sleeper() }, "pipeline", "start", "--local", file, deployTestRelease)
	require.Equal(t, exitOK, s.code, s.stderr)
	release := <-approvals
	defer release()

	r := approveStage(t, tr, file, "production")
	assert.Equal(t, exitFailure, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "the deployer refused the approval of production: the approval at coinbase/deploy-test/_promotions/production/")
	assert.Contains(t, r.stderr, "started the promotion: the stage requires another approver (separate_approver)")
	st := tr.ferry(t, "pipeline", "status", "--local", "--json", file)
	require.Equal(t, exitOK, st.code, st.stderr)
	var ps pipelineStatus
	require.NoError(t, json.Unmarshal([]byte(st.stdout), &ps))
	prod := ps.Promotion.Stages[2]
	assert.Equal(t, ledger.PromotionApproval, prod.Status, "still waits for an approval")
	assert.Empty(t, prod.ApprovedBy)
	assert.Contains(t, prod.ApprovalRefused, "separate_approver")
}

// TestPipelineApproveDuringSoak: production approved while it soaks
// (waiting for its other gates) is verified by the deployer at their
// next check, within the recheck (5m), well within the proof's 15
// minutes: the promotion succeeds, production recorded approved by the
// local caller, verified.
func TestPipelineApproveDuringSoak(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	addStagingAlarm(t, tr)
	soaking := holdAtGateWait(tr, 2)
	require.Equal(t, exitOK, tr.ferry(t, "pipeline", "register", "--local", deployTestPipeline).code)
	arn := startPromotion(t, tr)
	release := <-soaking
	given := tr.clk.Now()
	r := tr.ferry(t, "pipeline", "approve", "--local", deployTestPipeline, "production")
	require.Equal(t, exitOK, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "production waits for its other gates: the deployer verifies the approval at their next check, within 5m (its proof is valid 15m)")
	release()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	d, err := tr.Wait(ctx, arn)
	require.NoError(t, err)
	require.Equal(t, asl.StatusSucceeded, d.Status, "%s: %s", d.Error, d.Cause)
	prod := promotionStatus(t, tr).Stages[2]
	assert.Equal(t, "arn:aws:iam::111111111111:user/ferry-local", prod.ApprovedBy)
	assert.True(t, prod.ApprovalVerified)
	assert.LessOrEqual(t, prod.ApprovedAt.Sub(given), 5*time.Minute+time.Second, "verified at the next check")
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
