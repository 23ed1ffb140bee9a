package deployer

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/pipeline"
	"github.com/ferryhq/ferry/internal/store/ledger"
)

// TestPromote: Promote records a promotion, once, only through a pipeline
// registered in every config of its first stage, with its request stored
// under the first stage's config, and only while no other promotion of
// the pipeline runs; anything else is refused (BadReleaseError, naming
// what is wrong) and nothing is recorded.
func TestPromote(t *testing.T) {
	for _, tt := range []struct {
		name string
		// before prepares the promotion before Promote runs.
		before func(pr *promo)
		want   string // "" for recorded; else a part of the refusal
	}{
		{"registered everywhere", func(pr *promo) { pr.register() }, ""},
		{"registered in the first stage only", func(pr *promo) { pr.register("development") }, ""},
		{"not registered", func(*promo) {}, "config development has no pipeline registered"},
		{"another pipeline registered", func(pr *promo) {
			require.NoError(t, pr.h.ledger.PutClientObject(t.Context(), naming.PipelineKey(project, "development"), []byte(`{"project_name":"x"}`)))
		}, "config development has another pipeline registered"},
		{"request not stored", func(pr *promo) {
			pr.register()
			_, err := pr.h.s3.DeleteObject(t.Context(), &s3.DeleteObjectInput{Bucket: aws.String(bucket),
				Key: aws.String(naming.PromotionRequestKey(project, "development", promotionID))})
			require.NoError(t, err)
		}, "request: not stored at"},
		{"another promotion runs", func(pr *promo) {
			pr.register()
			other := asl.ExecutionARN(naming.StateMachineARN(account, region), "other-promotion")
			pr.h.executions.register(other, []byte(`{}`), pr.h.clk.Now())
			_, _, err := pr.h.ledger.CreatePromotion(t.Context(), "development", ledger.PromotionRecord{
				PromotionID: "20260301T110000Z-p0", ProjectName: project, Status: ledger.PromotionRunning, Execution: other})
			require.NoError(t, err)
		}, pipeline.OnePromotionRule},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pr := newPromo(t)
			tt.before(pr)
			err := pr.task(execution.TaskPromote)
			_, found, gerr := pr.h.ledger.GetPromotion(t.Context(), project, "development", promotionID)
			require.NoError(t, gerr)
			if tt.want != "" {
				var bad *failure.BadReleaseError
				require.ErrorAs(t, err, &bad)
				assert.Contains(t, err.Error(), tt.want)
				assert.False(t, found, "nothing is recorded")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, execution.Promotion{ProjectName: project, FirstConfig: "development", PromotionID: promotionID,
				RequestSHA256: pr.st.RequestSHA256, Stages: 3}, *pr.st)
			rec := pr.record()
			assert.Equal(t, ledger.PromotionRunning, rec.Status)
			assert.Equal(t, caller, rec.StartedBy, "who the proof names")
			assert.Equal(t, pr.x.ctx.ID, rec.Execution)
			assert.Len(t, rec.Stages, 3)
			require.NoError(t, pr.task(execution.TaskPromote), "a retry of the same execution is the same promotion")
		})
	}
}
