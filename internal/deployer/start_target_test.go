package deployer

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
)

// startTarget runs StartTarget for target j of the promotion's stage.
func (pr *promo) startTarget(j int) (execution.TargetStart, error) {
	out, err := pr.x.invoke(execution.TaskStartTarget, execution.WaveTarget{Promotion: *pr.st, Target: j})
	var ts execution.TargetStart
	if err == nil {
		require.NoError(pr.h.t, json.Unmarshal(out, &ts))
	}
	return ts, err
}

// TestStartTarget: StartTarget makes and stores the release one target
// of an open stage deploys: what the pipeline derives for its config
// (the stage's environment facts), named by the promotion (its id, the
// first stage's config as promotion_of), created when the stage opened,
// so every attempt stores the same bytes; it names the nested execution.
// A stage its gates did not open, or a target it does not have, is
// refused and nothing is stored.
func TestStartTarget(t *testing.T) {
	for _, tt := range []struct {
		name     string
		stage, j int
		open     bool
		config   string // "" when refused
		instance string
	}{
		{"development", 0, 0, true, "development", "t2.nano"},
		{"production's second region", 2, 1, true, "production-euw1", "t3.small"},
		{"a stage its gates did not open", 1, 0, false, "", ""},
		{"a target the stage does not have", 0, 1, true, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pr := newPromo(t).started()
			if tt.stage > 0 {
				pr.atStage(tt.stage, epoch.Add(-3*time.Hour))
				pr.putStagingAlarm()
				pr.approve("production")
			}
			if !tt.open {
				pr.atStage(tt.stage, epoch) // staging soaks: Gate does not open it
			}
			require.NoError(t, pr.task(execution.TaskGate))
			releases := func() map[string][]string {
				out := map[string][]string{}
				for _, c := range []string{"development", "staging"} {
					ids, err := pr.h.ledger.Releases(t.Context(), project, c)
					require.NoError(t, err)
					out[c] = ids
				}
				return out
			}
			before := releases()
			ts, err := pr.startTarget(tt.j)
			if tt.config == "" {
				var internal *failure.InternalError
				require.ErrorAs(t, err, &internal)
				assert.Equal(t, before, releases(), "nothing stored")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, naming.ExecutionName(project, tt.config, promotionID), ts.Name)
			stored, err := pr.h.ledger.GetReleaseRaw(t.Context(), project, tt.config, promotionID)
			require.NoError(t, err)
			assert.JSONEq(t, string(ts.Release), string(stored), "the execution's input is the release stored")
			r, err := release.Decode(stored)
			require.NoError(t, err)
			assert.Equal(t, [4]string{promotionID, tt.config, "development", "alice"}, [4]string{r.ReleaseID, r.ConfigName, r.PromotionOf, r.CreatedBy})
			assert.Equal(t, tt.instance, r.Services["web"].InstanceType, "the stage's environment facts")
			assert.True(t, r.CreatedAt.Equal(pr.record().Stages[tt.stage].ReleasedAt), "created when the stage opened")
			again, err := pr.startTarget(tt.j)
			require.NoError(t, err)
			assert.Equal(t, ts, again, "every attempt makes the same bytes")
		})
	}
}
