package release

import "testing"

// TestRuleRolloutTimeBoundary: a canary's steps must take less than the
// timeout, or the deploy would time out before its last step is judged:
// 3 steps of step_wait_seconds 300 need 660 seconds (each but the last
// held 300 s, the last stable_seconds, 60): a timeout of 661 seconds
// takes them, one of exactly 660 does not.
func TestRuleRolloutTimeBoundary(t *testing.T) {
	canary := func(timeout int) func(*Release) {
		return func(r *Release) {
			r.Services["web"].Autoscaling = &Autoscaling{MinSize: 2, MaxSize: 8}
			r.Services["web"].Rollout = &Rollout{Steps: []Step{{N: 1}, {N: 50, Percent: true}, {N: 100, Percent: true}}, StepWaitSeconds: 300}
			r.Timeout = timeout
		}
	}
	const p = "services.web.rollout"
	runRuleCases(t, []ruleCase{
		{"a second more than the steps need", canary(661), false, nil},
		{"exactly what the steps need", canary(660), false, []string{p + ": its 3 steps need at least 660 seconds (each but the last held for max(stable_seconds, step_wait_seconds), the last for stable_seconds), not less than the timeout (660 seconds)"}},
	})
}
