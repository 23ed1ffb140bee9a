package reliability

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
)

// TestPromotionMatrix runs the promotion matrix: every S3 call of the
// promotion's own tasks failing with a 5xx, throttling and access denied,
// and every one of their invocations dying after its work; no run may
// break an invariant (see RunPromotion). A transient fault is retried
// and the promotion still succeeds, deploying each target once.
func TestPromotionMatrix(t *testing.T) {
	m, err := RunPromotionMatrix(context.Background(), filepath.Join("..", "..", ".."))
	require.NoError(t, err)
	require.Equal(t, execution.EndSuccess, m.Base.End)
	require.NotEmpty(t, m.Base.Calls)
	assert.Empty(t, m.Violations())
	for _, r := range m.Results {
		if r.Fault.Kind != AccessDenied {
			assert.Equal(t, execution.EndSuccess, r.End, "%s is transient: retried, the promotion succeeds", r.Fault)
		}
	}
	var report strings.Builder
	m.Report(&report)
	t.Log(report.String())
}
