package main

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// demoAnswers are what the fake ferry (testdata/demo/fake-ferry.sh) answers
// when every step of the demo ends as expected: "EXIT CODE" then the
// output; ID is the release id of the last deploy.
var demoAnswers = map[string]string{
	"world-deploy-test-release":  "account 111111111111  us-east-1\n  ASG coinbase/deploy-test/development/web/ID\n",
	"world-deploy-test-v2":       "account 111111111111  us-east-1\n  ASG coinbase/deploy-test/development/web/ID\n",
	"deploy-deploy-test-release": "0\nferry deploy: coinbase/deploy-test development release ID\n  0:10  Success\n",
	"deploy-deploy-test-v2": "0\nferry deploy: coinbase/deploy-test development release ID\n" +
		"  1:20  canary: web at step 2 of 2, the whole group, 3 instances (2 healthy needed)\n  2:40  Success\n",
	"deploy-deploy-test-broken": "1\nferry deploy: coinbase/deploy-test development release ID\n  5:01  FailureClean: TimeoutError: timed out: not healthy 5m1s after the execution started (timeout 5m0s)\n",
	"deploy-deploy-test-slow":   "0\nferry deploy: coinbase/deploy-test development release ID\nstarted execution arn:x\n",
	"deploy-deploy-test-5xx": "1\nferry deploy: coinbase/deploy-test development release ID\n  3:23  baking: 10m left; standing by, ready to serve again: G\n" +
		"  7:04  rolling back: G back in its load balancers, 0 of 2 instances healthy\n  8:53  FailureClean: HaltError: halted: alarm in ALARM: deploy-test-5xx\n",
	"deploy-deploy-test-slower": "1\nferry deploy: coinbase/deploy-test development release ID\n" +
		"  2:59  canary analysis of web: score 100, pass\n  5:01  canary analysis of web: score 0, fail\n" +
		"  6:03  FailureClean: HaltError: halted: service web: canary analysis scored 0, below its marginal_score of 75: DeployTest/Latency high\n",
	"deploy-spot-fleet-release": "0\nferry deploy: coinbase/deploy-test development release ID\n  4:40  Success\n",
	"world-spot-fleet-release":  "account 111111111111  us-east-1\n  ASG coinbase/deploy-test/development/web/ID\n",
	"deploy-deploy-test-worker": "0\nferry deploy: coinbase/deploy-test development release ID\n" +
		"  4:10  retiring coinbase-deploy-test-development-worker-x: scaling in: 1 instance, 1 termination hook pending\n  6:02  Success\n",
	"halt": "0\nferry halt: halt marker written for coinbase/deploy-test development (by demo: bad build)\n  0:06  FailureClean: HaltError: halted: halt marker by demo: bad build\n",
	"status": "0\ncoinbase/deploy-test development\n  deployed  20250101T000009Z-abcdef  2025-01-01 00:00:07Z  by demo\n" +
		"    20250101T000005Z-abcdef  FailureClean  HaltError: halted: alarm in ALARM: deploy-test-5xx; rolled back: G serves again\n",
	// The lifecycle chapter: release 10 is web only, 11 the rollback to 9,
	// 12 the destroy.
	"plan-deploy-test-v2": "1\nferry plan: coinbase/deploy-test development in account 111111111111 region us-east-1\n" +
		"the deploy would be refused (1 reason):\n  remove: the deploy would delete the serving groups of worker, which the release does not deploy\n",
	"plan-deploy-test-web-only":   "0\nferry plan: coinbase/deploy-test development in account 111111111111 region us-east-1\n  remove services: worker\nthe deploy would proceed\n",
	"world-deploy-test-web-only":  "account 111111111111  us-east-1\n  ASG coinbase/deploy-test/development/web/ID\n",
	"deploy-deploy-test-web-only": "0\nferry deploy: coinbase/deploy-test development release ID\n  2:40  Success\n",
	"history":                     "0\nRELEASE  OUTCOME\n20250101T001500Z-heal *  Success  heal of 20250101T0000011Z-abcdef\n",
	"world-rollback":              "account 111111111111  us-east-1\n  ASG coinbase/deploy-test/development/web/ID\n  ASG coinbase/deploy-test/development/worker/ID\n",
	"rollback": "0\nferry rollback: coinbase/deploy-test development back from release 20250101T0000010Z-abcdef to the content of release 20250101T000009Z-abcdef\n" +
		"ferry rollback: coinbase/deploy-test development release ID\n  6:02  Success\n",
	"show": "0\ncoinbase/deploy-test development release 20250101T0000011Z-abcdef (deployed now)\n  rollback  deploys again the content of release 20250101T000009Z-abcdef\n" +
		"  analysis  web: score 0, fail\n",
	"status-drift":       "0\ncoinbase/deploy-test development\n  drift (checked 2025-01-01 00:10:00Z)\n    web  capacity  min 2 max 6, not the release's min 2 max 4\n    worker  group_missing  the group is gone\n",
	"follow":             "0\nferry follow: coinbase/deploy-test development release 20250101T001500Z-heal\n  4:02  Success\n",
	"world-destroy":      "world at 2025-01-01T00:20:00Z\n\nnothing deployed or registered\n",
	"destroy":            "0\nferry destroy: coinbase/deploy-test development release ID\n  1:02  Success\n",
	"status-development": "0\ncoinbase/deploy-test development\n  deployed  nothing: destroyed by release 20250101T0000012Z-abcdef  2025-01-01 00:20:00Z\n",
	// The pipeline chapter: development deploys the artifact again.
	"pipeline-validate": "0\npipeline coinbase/deploy-test: 3 stages, 4 targets\n" +
		"release testdata/deploy-test-release.json: artifact a21758b6ea4f6ed69bae44e51e75997b8d0281c37671ee2066cf7776c785bd4b, deployed by every stage\n",
	// One answer for both statuses: before the promotion by hand (soak
	// pending) and after (promoted).
	"pipeline-status": "0\npipeline coinbase/deploy-test\n" +
		"  development  111111111111 us-east-1  development  ID  a21758b6ea4f  10s  first stage  -  -\n" +
		"  staging      111111111111 us-east-1  staging      none  -  -  not deployed  -  pending: soak 30m: 29m50s left (counted from the stage before's last swap)\n" +
		"  staging      111111111111 us-east-1  staging      ID  a21758b6ea4f  9s  same  -  promoted\n" +
		"  production   use1: 222222222222 us-east-1  production-use1  ID  a21758b6ea4f  9s  same  -  promoted\n" +
		"               euw1: 222222222222 eu-west-1  production-euw1  ID  a21758b6ea4f  5s  same  -\n" +
		// The promotion chapter polls the same answer: the newest
		// promotion's lines, as each of its moments shows them.
		"promotion 20250101T000011Z-abcdef of artifact 3afee55f856b, started by arn:aws:iam::111111111111:user/ferry-local: succeeded\n" +
		"  production: approval (the stage needs a person's approval: ferry pipeline approve)\n" +
		"  production: succeeded, approved by arn:aws:iam::111111111111:user/ferry-local\n" +
		"promotion 20250101T000012Z-abcdef of artifact 43e399823576, started by arn:aws:iam::111111111111:user/ferry-local: failed (deploy: stage staging: staging (FailureClean) did not succeed; the stages after it are not deployed)\n" +
		"  production: pending\n",
	"promote":                "3\nferry promote: stage staging is held back:\n  soak 30m: 29m50s left (counted from the stage before's last swap)\n",
	"pipeline-release":       "0\n{\"project_name\": \"coinbase/deploy-test\"}\n",
	"deploy-staging":         "0\nferry deploy: coinbase/deploy-test staging release ID\n  2:50  Success\n",
	"deploy-production-use1": "0\nferry deploy: coinbase/deploy-test production-use1 release ID\n  2:50  Success\n",
	"deploy-production-euw1": "0\nferry deploy: coinbase/deploy-test production-euw1 release ID\n  2:50  Success\n",
	"pipeline-register":      "0\nferry pipeline register: coinbase/deploy-test registered in development, staging, production-use1, production-euw1\n",
	"pipeline-start":         "0\nferry pipeline start: promotion 20250101T000011Z-abcdef of artifact 3afee55f856b through 3 stages\nstarted execution arn:x\n",
	"pipeline-approve":       "0\nferry pipeline approve: promotion 20250101T000011Z-abcdef into production approved (artifact 3afee55f856b)\n",
	"local-events": "0\nTIME                  DETAIL-TYPE          PROJECT/CONFIG                    RELEASE                  TASK\n" +
		"2025-01-01T00:05:00Z  Release Rolled Back  coinbase/deploy-test/development  20250101T000005Z-abcdef  CleanUpFailure\n" +
		"2025-01-01T00:30:00Z  Stage Approved       coinbase/deploy-test/production   20250101T000011Z-abcdef  Gate\n",
}

// TestDemo runs demo.sh against a fake ferry that answers at once: the demo
// passes when every step ends as the demo says, and fails, naming the step,
// when one ends otherwise, even with the exit code it expects.
func TestDemo(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("demo.sh needs bash")
	}
	fake, err := filepath.Abs("testdata/demo/fake-ferry.sh")
	require.NoError(t, err)
	tests := []struct {
		name    string
		answers map[string]string
		ok      bool
		stderr  string
	}{
		{"every step as expected", nil, true, ""},
		{"the halt found nothing running", map[string]string{
			"halt": "0\nferry halt: halt marker written for coinbase/deploy-test development (by demo: bad build)\nno deploy of coinbase/deploy-test development is running.\n",
		}, false, "did not end in FailureClean: HaltError"},
		{"the broken release failed for another reason", map[string]string{
			"deploy-deploy-test-broken": "1\nferry deploy: coinbase/deploy-test development release ID\n  0:01  FailureClean: LockExistsError: lock held\n",
		}, false, "did not end in FailureClean: TimeoutError"},
		{"the changed release was not a canary", map[string]string{
			"deploy-deploy-test-v2": "0\nferry deploy: coinbase/deploy-test development release ID\n  0:10  Success\n",
		}, false, "the deploy did not show the canary's step"},
		{"the build that errors was not rolled back", map[string]string{
			"deploy-deploy-test-5xx": "1\nferry deploy: coinbase/deploy-test development release ID\n  3:23  FailureClean: HaltError: halted: alarm in ALARM: deploy-test-5xx\n",
		}, false, "the deploy did not show the rollback"},
		{"the slower build was rolled back by an alarm, not its analysis", map[string]string{
			"deploy-deploy-test-slower": "1\nferry deploy: coinbase/deploy-test development release ID\n  9:01  FailureClean: HaltError: halted: alarm in ALARM: deploy-test-latency\n",
		}, false, "did not end in canary analysis scored 0"},
		{"show lost the analysis", map[string]string{
			"show": "0\ncoinbase/deploy-test development release 20250101T0000011Z-abcdef (deployed now)\n  rollback  deploys again the content of release 20250101T000009Z-abcdef\n",
		}, false, "show does not show the canary analysis"},
		{"status does not show the second release deployed", map[string]string{
			"status": "0\ncoinbase/deploy-test development\n  deployed  nothing yet\n",
		}, false, "does not show release 20250101T000009Z-abcdef deployed"},
		{"the worker's retirement did not wait for its hook", map[string]string{
			"deploy-deploy-test-worker": "0\nferry deploy: coinbase/deploy-test development release ID\n  0:10  Success\n",
		}, false, "did not show the termination hooks it waited for"},
		{"plan let a service be left out", map[string]string{
			"plan-deploy-test-v2": "0\nferry plan: coinbase/deploy-test development\nthe deploy would proceed\n",
		}, false, "exited 0, expected 1"},
		{"drift went unseen", map[string]string{
			"status-drift": "0\ncoinbase/deploy-test development\n  drift: none, what runs is what ferry deployed\n",
		}, false, "status --drift did not see the worker's group gone"},
		{"the destroy cut a connection", map[string]string{
			"json-destroy": "{\"accounts\": [{\"load_balancers\": [\n  {\"name\": \"coinbase-deploy-test-web-elb\",\n   \"instances\": {},\n   \"cut_connections\": 1}]}]}\n",
		}, false, "a connection was cut: coinbase-deploy-test-web-elb"},
		{"the destroy left a release deployed", map[string]string{
			"status-development": "0\ncoinbase/deploy-test development\n  deployed  20250101T000009Z-abcdef\n",
		}, false, "status still shows a release deployed after the destroy"},
		{"no deploy event of the rollback", map[string]string{
			"local-events": "0\nTIME  DETAIL-TYPE  PROJECT/CONFIG  RELEASE  TASK\n",
		}, false, "ferry local events does not show the rollback"},
		{"no heal", map[string]string{
			"follow": "1\nferry follow: no deploy of coinbase/deploy-test development is running\n",
		}, false, "no heal ran within a minute"},
		{"the promotion never waited for an approval", map[string]string{
			"pipeline-status": "0\npipeline coinbase/deploy-test\n  development  111111111111 us-east-1  development  ID  a21758b6ea4f  10s  first stage  -  -\n" +
				"  staging      111111111111 us-east-1  staging      none  -  -  not deployed  -  pending: soak 30m: 29m50s left (counted from the stage before's last swap)\n" +
				"  staging      111111111111 us-east-1  staging      ID  a21758b6ea4f  9s  same  -  promoted\n" +
				"  production   use1: 222222222222 us-east-1  production-use1  ID  a21758b6ea4f  9s  same  -  promoted\n" +
				"               euw1: 222222222222 eu-west-1  production-euw1  ID  a21758b6ea4f  5s  same  -\n",
		}, false, "no sign of production waiting for its approval"},
		{"a deploy exits with the wrong code", map[string]string{
			"deploy-deploy-test-v2": "2\nferry deploy: coinbase/deploy-test development release ID\n  FailureDirty\n",
		}, false, "exited 2, expected 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			answers := maps.Clone(demoAnswers)
			maps.Copy(answers, tt.answers)
			for name, body := range answers {
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600))
			}
			cmd := exec.Command("bash", "demo.sh")
			// TMPDIR: the demo's own temporary files (mktemp) go in the
			// test's directory, not the machine's.
			cmd.Env = append(os.Environ(), "FERRY="+fake, "FAKE_DIR="+dir, "TMPDIR="+t.TempDir(), "NO_COLOR=1", "FERRY_DEMO_HEAL_TRIES=2", "FERRY_DEMO_PROMOTION_TRIES=2")
			var out, errOut strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &errOut
			err := cmd.Run()
			if tt.ok {
				require.NoError(t, err, "stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
				assert.Contains(t, out.String(), "demo: every step ended as expected")
				assert.Regexp(t, `console: open http://127\.0\.0\.1:\d+/ in a browser`, out.String(), "the demo names the console's URL")
				assert.Contains(t, out.String(), `$ ferry halt --local --poll 200ms --reason 'bad build' testdata/demo/deploy-test-slow.json`, "the commands shown can be pasted")
				return
			}
			require.Error(t, err, "stdout:\n%s", out.String())
			assert.Contains(t, errOut.String(), "demo: FAILED: ")
			assert.Contains(t, errOut.String(), tt.stderr)
			assert.NotContains(t, out.String(), "every step ended as expected")
		})
	}
}
