package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/store/ledger"
)

// TestFollowPromotion: ferry follow PROMOTION_ID follows a promotion on
// the local region's virtual clock, like a deploy: under --json, the
// promotion, each stage as it changes (staging's and production's soaks
// held with their time left, then deploying, succeeded), each of its four
// deploys as a deploy's stream (release ... outcome), and the promotion's
// end, exit 0; every object in ferry schema events. Followed again once it
// ended, the text says each stage's end and the promotion's, exit 0.
func TestFollowPromotion(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	addStagingAlarm(t, tr)
	file := pipelineWith(t, func(gates map[string]any) { delete(gates, "approval") })
	require.Equal(t, exitOK, tr.ferry(t, "pipeline", "register", "--local", file).code)
	s := tr.ferryAt(t.Context(), func(e *Env) { e.Sleep = tr.sleeper() }, "pipeline", "start", "--local", file, deployTestRelease)
	require.Equal(t, exitOK, s.code, s.stderr)
	id := promotionStatus(t, tr).PromotionID

	f := tr.ferry(t, "follow", "--local", "--json", "--poll", "30s", id)
	require.Equal(t, exitOK, f.code, "stdout:\n%s\nstderr:\n%s", f.stdout, f.stderr)
	var kinds []string
	stages := map[string][]string{}
	var end promotionEndEvent
	for _, line := range strings.Split(strings.TrimSpace(f.stdout), "\n") {
		var ev struct {
			Event string `json:"event"`
			promotionStageEvent
		}
		require.NoError(t, json.Unmarshal([]byte(line), &ev), line)
		kinds = append(kinds, ev.Event)
		switch ev.Event {
		case "promotion_stage":
			stages[ev.Stage] = append(stages[ev.Stage], ev.Status+": "+strings.Join(ev.Held, "; "))
		case "promotion_end":
			require.NoError(t, json.Unmarshal([]byte(line), &end))
		}
	}
	require.NotEmpty(t, kinds)
	assert.Equal(t, "promotion", kinds[0], "the first event names the promotion")
	assert.Equal(t, "promotion_end", kinds[len(kinds)-1], "the last is its end")
	assert.Equal(t, 4, count(kinds, "outcome"), "each of the four deploys, as a deploy's stream: %v", kinds)
	assert.Equal(t, 4, count(kinds, "release"))
	assert.Equal(t, promotionEndEvent{PromotionID: id, Status: ledger.PromotionSucceeded, ExitCode: exitOK,
		Message: "promotion " + id + " succeeded"}, end)
	for _, stage := range []string{"staging", "production"} {
		require.NotEmpty(t, stages[stage], stage)
		assert.Contains(t, stages[stage][0], "waiting: soak ", "%s held by its soak first: %v", stage, stages[stage])
		assert.Contains(t, stages[stage][0], " left (counted from the stage before's last swap)")
		assert.Equal(t, "succeeded: ", stages[stage][len(stages[stage])-1])
	}
	assert.Greater(t, len(stages["production"]), 2, "the soak's time left shown as it runs down: %v", stages["production"])

	ended := tr.ferry(t, "follow", "--local", id)
	require.Equal(t, exitOK, ended.code, ended.stderr)
	assert.Contains(t, ended.stdout, "ferry follow: promotion "+id+" of coinbase/deploy-test through 3 stages (development -> staging -> production)")
	assert.Contains(t, ended.stdout, "stage production: succeeded")
	assert.Contains(t, ended.stdout, "stage production: ferry follow: coinbase/deploy-test production-euw1 release "+id)
	assert.True(t, strings.HasSuffix(ended.stdout, "promotion "+id+" succeeded\n"), ended.stdout)
}

func count(kinds []string, kind string) int {
	n := 0
	for _, k := range kinds {
		if k == kind {
			n++
		}
	}
	return n
}

// TestFollowPromotionHalted: a promotion halted while production waits
// for its approval is followed to its end as a halted deploy is: the
// stage shown halted, the promotion's end "halted" with why, exit 1 (a
// deploy's FailureClean).
func TestFollowPromotionHalted(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	addStagingAlarm(t, tr)
	approvals := holdAtApprovals(tr, 4)
	require.Equal(t, exitOK, tr.ferry(t, "pipeline", "register", "--local", deployTestPipeline).code)
	startPromotion(t, tr)
	release := <-approvals
	id := promotionStatus(t, tr).PromotionID
	require.Equal(t, exitOK, tr.ferry(t, "pipeline", "halt", "--local", deployTestPipeline).code)
	release()
	tr.observe(func(string, asl.Event) {})

	f := tr.ferry(t, "follow", "--local", id)
	assert.Equal(t, exitFailure, f.code, "stdout:\n%s\nstderr:\n%s", f.stdout, f.stderr)
	assert.Contains(t, f.stdout, "stage production: halted")
	assert.Regexp(t, `promotion `+id+` halted: halted by \S+\n$`, f.stdout)
}
