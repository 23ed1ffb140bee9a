package deployer

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/store/ledger"
)

// TestEndStage: EndStage records how each target of the stage's wave
// ended, from each deploy's own outcome (the wave's view where it has
// none). A stage whose every target succeeded moves the promotion on, or
// ends it succeeded after the last stage; a target that ended dirty
// fails it (CleanUpError), one that failed clean fails it (DeployError),
// unless the promotion's halt marker is there: the halt rolled the stage
// back, and the promotion ends halted (HaltError).
func TestEndStage(t *testing.T) {
	for _, tt := range []struct {
		name     string
		stage    int
		outcomes []string // each target's outcome; "" for none recorded
		wave     []execution.WaveResult
		halted   bool
		err      any // nil, or a pointer to the error type
		status   string
		promo    string // the promotion's status
	}{
		{"development succeeded", 0, []string{execution.EndSuccess}, nil, false, nil, ledger.PromotionSucceeded, ledger.PromotionRunning},
		{"production succeeded: the last stage", 2, []string{execution.EndSuccess, execution.EndSuccess}, nil, false, nil, ledger.PromotionSucceeded, ledger.PromotionSucceeded},
		{"a region failed clean", 2, []string{execution.EndSuccess, execution.EndFailureClean}, nil, false, new(*failure.DeployError), ledger.PromotionFailed, ledger.PromotionFailed},
		{"a region ended dirty", 2, []string{execution.EndFailureDirty, execution.EndSuccess}, nil, false, new(*failure.CleanUpError), ledger.PromotionFailed, ledger.PromotionFailed},
		{"halted: the deploy rolled back", 2, []string{execution.EndSuccess, execution.EndFailureClean}, nil, true, new(*failure.HaltError), ledger.PromotionHalted, ledger.PromotionHalted},
		{"no outcome: the wave's view", 0, []string{""}, []execution.WaveResult{{Status: "FAILED", Error: "States.Runtime"}}, false, new(*failure.DeployError), ledger.PromotionFailed, ledger.PromotionFailed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pr := newPromo(t).started()
			if tt.stage > 0 {
				pr.atStage(tt.stage, epoch.Add(-3*time.Hour))
				pr.putStagingAlarm()
				pr.approve("production")
			}
			require.NoError(t, pr.task(execution.TaskGate))
			require.True(t, pr.st.Gate.Open)
			rec := pr.record()
			for j, end := range tt.outcomes {
				if end != "" {
					require.NoError(t, pr.h.ledger.PutOutcome(t.Context(), project, rec.Stages[tt.stage].Targets[j].Config,
						ledger.Outcome{ReleaseID: promotionID, End: end, Error: "X"}))
				}
			}
			if tt.halted {
				pr.halt()
			}
			pr.st.Wave = tt.wave
			ended := pr.h.clk.Now().Add(time.Hour)
			pr.h.clk.Advance(time.Hour)
			err := pr.task(execution.TaskEndStage)
			rec = pr.record()
			stage := rec.Stages[tt.stage]
			assert.Equal(t, tt.status, stage.Status)
			assert.Equal(t, tt.promo, rec.Status)
			assert.Equal(t, ended, stage.EndedAt)
			for j, end := range tt.outcomes {
				if end == "" {
					end = tt.wave[j].Status
				}
				assert.Equal(t, end, stage.Targets[j].Outcome, stage.Targets[j].Config)
			}
			if tt.err != nil {
				require.ErrorAs(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			last := tt.stage == len(rec.Stages)-1
			assert.Equal(t, &execution.StageEnd{Done: last}, pr.st.End)
			assert.Equal(t, min(tt.stage+1, len(rec.Stages)-1), pr.st.Stage, "on to the next stage")
		})
	}
}
