package release

import (
	"fmt"
	"testing"
)

// TestRuleRolloutTimeBoundary: a canary's steps must take less than the
// timeout, or the deploy would time out before its last step is judged.
// Each step but the last is held for max(stable_seconds,
// step_wait_seconds), the last for stable_seconds: 3 steps of
// step_wait_seconds 300 with stable_seconds 60 need 660 seconds; 3 steps
// of step_wait_seconds 60 with the service's stable_seconds 300 need
// 900. A timeout a second more than that takes them, one of exactly that
// does not.
func TestRuleRolloutTimeBoundary(t *testing.T) {
	canary := func(timeout, wait, stable int) func(*Release) {
		return func(r *Release) {
			r.Services["web"].Autoscaling = &Autoscaling{MinSize: 2, MaxSize: 8}
			r.Services["web"].Rollout = &Rollout{Steps: []Step{{N: 1}, {N: 50, Percent: true}, {N: 100, Percent: true}}, StepWaitSeconds: wait}
			r.Services["web"].StableSeconds = &stable
			r.Timeout = timeout
		}
	}
	refused := func(need, timeout int) []string {
		return []string{fmt.Sprintf("services.web.rollout: its 3 steps need at least %d seconds (each but the last held for max(stable_seconds, step_wait_seconds), the last for stable_seconds), not less than the timeout (%d seconds)", need, timeout)}
	}
	runRuleCases(t, []ruleCase{
		{"a second more than the steps need", canary(661, 300, 60), false, nil},
		{"exactly what the steps need", canary(660, 300, 60), false, refused(660, 660)},
		{"stable_seconds longer than the wait, a second more", canary(901, 60, 300), false, nil},
		{"stable_seconds longer than the wait, exactly", canary(900, 60, 300), false, refused(900, 900)},
	})
}
