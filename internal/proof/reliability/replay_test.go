package reliability

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/local/region"
	"github.com/ferryhq/ferry/internal/store/halt"
	"github.com/ferryhq/ferry/internal/tuning"
)

// TestCreatedAtOutsideWindow: a release whose created_at is older than the
// deployer's window (a replay of an old upload) or too far in the future is
// refused at Validate through the whole state machine: FailureClean,
// nothing locked, nothing created. (The replayed execution input and the S3
// copy changed after upload are client/security_e2e_test.go's.)
func TestCreatedAtOutsideWindow(t *testing.T) {
	sc := reference(t)
	for _, skew := range []time.Duration{-tuning.CreatedAtMaxAge - time.Minute, tuning.CreatedAtMaxSkew + time.Minute} {
		t.Run(skew.String(), func(t *testing.T) {
			res, err := sc.Run(context.Background(), RunOptions{CreatedAtSkew: skew})
			require.NoError(t, err)
			assert.Equal(t, execution.EndFailureClean, res.End)
			assert.Equal(t, "BadReleaseError", res.Error)
			assert.Contains(t, res.Cause, "created_at")
			assert.Empty(t, res.Violations)
			for _, inv := range res.Invocations {
				assert.Equal(t, execution.TaskValidate, inv.Task, "refused at Validate, before Lock")
			}
		})
	}
}

// TestStaleHaltMarkerIgnored: a halt marker written before the execution
// started (left by an old halt) does not stop a new deploy.
func TestStaleHaltMarkerIgnored(t *testing.T) {
	res, err := reference(t).Run(context.Background(), RunOptions{BeforeStart: func(reg *region.Region, clk *clock.Virtual) error {
		err := halt.New(reg.S3(), reg.Bucket()).Put(context.Background(), "acme/shop", "production",
			halt.Marker{By: "someone", Reason: "an old halt", At: clk.Now()})
		clk.Advance(time.Minute)
		return err
	}})
	require.NoError(t, err)
	assert.Equal(t, execution.EndSuccess, res.End, "%s: %s", res.Error, res.Cause)
	assert.Empty(t, res.Violations)
}
