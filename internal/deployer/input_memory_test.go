package deployer

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
)

// TestConfirmedInputDecodedOnce: every task confirms its execution's
// input (confirmExecution); a Lambda container that confirmed an input
// once does not decode and hash its release again (an execution's input
// never changes), yet still compares what it names with each request's
// State, and remembers a bounded number of inputs.
func TestConfirmedInputDecodedOnce(t *testing.T) {
	h := newHarness(t)
	x := h.start(h.baseRelease())
	require.NoError(t, x.step(execution.TaskValidate))
	st := x.state
	input := []byte(aws.ToString(h.executions.byARN[x.ctx.ID].Input))
	req := execution.Request{Task: execution.TaskLock, Execution: x.ctx}
	confirm := func(releaseID string) error {
		return h.d.confirmRelease(req, input, st.ProjectName, st.ConfigName, releaseID, st.ReleaseSHA256)
	}
	require.NoError(t, confirm(st.ReleaseID))

	allocs := testing.AllocsPerRun(20, func() {
		if err := confirm(st.ReleaseID); err != nil {
			t.Fatal(err)
		}
	})
	assert.Less(t, allocs, 5.0, "a confirmed input is not decoded again")
	assert.ErrorContains(t, confirm("20260101T000000Z-000000"), "runs release "+st.ProjectName+"/"+st.ConfigName+"/"+st.ReleaseID,
		"what a remembered input names is still compared with the request's")

	for i := range 2 * maxConfirmedInputs {
		spaced := append([]byte(strings.Repeat(" ", i+1)), input...)
		_, err := h.d.confirmed.named(spaced)
		require.NoError(t, err)
		assert.LessOrEqual(t, len(h.d.confirmed.seen), maxConfirmedInputs)
	}
}
