package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
)

// ferry halt --json's outcome says the exit code ferry halt returns, not
// ferry deploy's: a clean end is what halt asked for (0), a success came
// too late (6), a dirty end is 4.
func TestHaltJSONExitCodeIsHalts(t *testing.T) {
	tests := []struct {
		end  string
		want int
	}{
		{execution.EndFailureClean, exitOK},
		{execution.EndSuccess, exitTooLate},
		{execution.EndFailureDirty, exitDirty},
		{"", exitDirty},
	}
	for _, tt := range tests {
		t.Run(tt.end, func(t *testing.T) {
			assert.Equal(t, tt.want, haltExitCode(progress{End: tt.end}))
			var buf bytes.Buffer
			d := &display{w: &buf, mode: modeJSON, exitCode: haltExitCode}
			d.show(progress{Event: updateOutcome, End: tt.end})
			var got struct {
				ExitCode *int `json:"exit_code"`
			}
			require.NoError(t, json.Unmarshal(buf.Bytes(), &got), buf.String())
			require.NotNil(t, got.ExitCode, buf.String())
			assert.Equal(t, tt.want, *got.ExitCode)
		})
	}
}
