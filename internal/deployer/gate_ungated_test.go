package deployer

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/pipeline"
	"github.com/ferryhq/ferry/internal/store/ledger"
)

// TestGateStageWithoutGates: a stage after the first whose pipeline
// names no gates (pipeline.Stage.Gates omitted) is held only by the
// artifact gate: it opens once every target of the stage before runs the
// artifact, at once (no soak, no alarm read, no approval), and waits
// while one runs another release.
func TestGateStageWithoutGates(t *testing.T) {
	for _, tt := range []struct {
		name    string
		prepare func(pr *promo)
		status  string
		held    []string
	}{
		{"development runs the artifact", func(*promo) {}, ledger.PromotionDeploying, nil},
		{"development runs another release", func(pr *promo) {
			require.NoError(t, pr.h.ledger.PutCurrent(t.Context(), project, "development", ledger.Current{ReleaseID: "other", DeployedAt: epoch}))
		}, ledger.PromotionWaiting, []string{"development does not run artifact ARTIFACT (every target of the stage before must run it)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pr := newPromo(t, func(p *pipeline.Pipeline) { p.Stages[1].Gates = nil }).started()
			pr.atStage(1, epoch.Add(-time.Second))
			tt.prepare(pr)
			require.NoError(t, pr.task(execution.TaskGate))
			stage := pr.record().Stages[1]
			assert.Equal(t, tt.status, stage.Status)
			for i, h := range tt.held {
				tt.held[i] = strings.ReplaceAll(h, "ARTIFACT", pr.record().Digest[:12])
			}
			assert.Equal(t, tt.held, stage.Held)
			assert.Equal(t, tt.status == ledger.PromotionDeploying, pr.st.Gate.Open)
		})
	}
}
