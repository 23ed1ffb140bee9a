package iam

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/infra/stacks"
)

// engine returns the path of check.mjs, or skips the test when node or
// the pinned npm tools are not installed.
func engine(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not on PATH: the IAM policies are not evaluated (install Node.js, then `make tools`)")
	}
	if _, err := os.Stat(filepath.Join("..", "node_modules", "@cloud-copilot", "iam-simulate", "package.json")); err != nil {
		t.Skip("infra/node_modules has no @cloud-copilot/iam-simulate: the IAM policies are not evaluated (run `make tools`)")
	}
	script, err := filepath.Abs("check.mjs")
	require.NoError(t, err)
	return script
}

type result struct {
	Name   string          `json:"name"`
	Kind   string          `json:"kind"`
	Result string          `json:"result"`
	Errors json.RawMessage `json:"errors"`
}

// TestIAM: every call ferry makes is allowed by the synthesized policies,
// every attack of the corpus is denied, and every condition key is one
// its action supports. It prints (and logs) the figures:
// "iam: C calls allowed, D/A attacks denied", C counting distinct
// authorizations.
func TestIAM(t *testing.T) {
	script := engine(t)
	p := ferryPolicies(t)
	calls, s3calls := scenario(t)
	cases, recorded := callCases(calls, s3calls, p)
	ncalls := len(cases)
	names := map[string]bool{}
	for _, a := range attacks() {
		require.False(t, names[a.name], "two attacks are named %q", a.name)
		names[a.name] = true
		c := a.c(p)
		c.Name, c.Kind = a.name, "attack"
		cases = append(cases, c)
	}
	require.GreaterOrEqual(t, len(cases)-ncalls, 40, "the corpus has at least 40 attacks")
	require.Greater(t, len(p.statements), 10, "the condition keys of every conditioned statement are checked")

	dir := t.TempDir()
	in, out := filepath.Join(dir, "input.json"), filepath.Join(dir, "results.json")
	raw, err := json.Marshal(map[string]any{"policies": p.docs, "scp": stacks.ServiceControlPolicy(stacks.DefaultAdministrator), "cases": cases, "statements": p.statements})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(in, raw, 0o600))
	cmd := exec.Command("node", script, in, out)
	cmd.Dir = filepath.Dir(script)
	stdout, err := cmd.CombinedOutput()
	require.NoError(t, err, "check.mjs: %s", stdout)

	var res struct {
		Cases       []result `json:"cases"`
		Unsupported []struct {
			Policy, Sid, Action, Key string
		} `json:"unsupported"`
		S3ObjectWrites []string `json:"s3ObjectWrites"`
	}
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &res))
	require.Len(t, res.Cases, len(cases))
	allowed, denied, attacks := 0, 0, 0
	for i, r := range res.Cases {
		c := cases[i]
		switch {
		case len(r.Errors) > 0 && string(r.Errors) != "null":
			t.Errorf("%s %q: the engine refused the request: %s\n%s", r.Kind, r.Name, r.Errors, mustJSON(c))
		case r.Kind == "call" && r.Result != "Allowed":
			t.Errorf("a call ferry makes is %s: %s\n%s", r.Result, r.Name, mustJSON(c))
		case r.Kind == "call":
			allowed++
		case r.Result == "Allowed":
			attacks++
			t.Errorf("an attack is allowed: %s\n%s", r.Name, mustJSON(c))
		default:
			attacks++
			denied++
		}
	}
	for _, u := range res.Unsupported {
		t.Errorf("policy %s, statement %s: %s does not support the condition key %s (IAM service authorization reference)", u.Policy, u.Sid, u.Action, u.Key)
	}
	// Every S3 action that writes an object is denied under _state/ but
	// to the deployer; AbortMultipartUpload only discards an upload.
	var listed []string
	for _, w := range stacks.StateObjectWrites {
		listed = append(listed, w.Action)
	}
	assert.ElementsMatch(t, res.S3ObjectWrites, append(listed, "s3:AbortMultipartUpload"),
		"stacks.StateObjectWrites is not every S3 action that writes an object (Service Authorization Reference, Amazon S3)")
	line := strings.TrimSpace(string(stdout))
	assert.Equal(t, line, fmtLine(allowed, denied, attacks))
	t.Logf("%s (%d recorded AWS and S3 calls, %d distinct authorizations)", line, recorded, ncalls)
}

func fmtLine(allowed, denied, attacks int) string {
	return "iam: " + itoa(allowed) + " calls allowed, " + itoa(denied) + "/" + itoa(attacks) + " attacks denied"
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func mustJSON(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// TestNoEmptyConditionValue: no condition of any policy, as CloudFormation
// deploys it (the DeployerStack with and without UnlockPrincipals, the
// bootstrap in every variant), holds an empty value: IAM engines differ on
// what an empty ARN in a list means, and one voids the whole condition.
func TestNoEmptyConditionValue(t *testing.T) {
	p := ferryPolicies(t)
	require.Contains(t, p.docs, "deployer-bucket-default")
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case string:
			assert.NotEmpty(t, x, "%s is empty", path)
		case []any:
			for i, e := range x {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		case map[string]any:
			for k, e := range x {
				walk(path+"."+k, e)
			}
		}
	}
	for name, doc := range p.docs {
		for i, st := range statementsOf(doc) {
			walk(fmt.Sprintf("%s statement %d Condition", name, i), asObj(st)["Condition"])
		}
	}
}

// TestSecurityPageListsEveryAttack: the security help page
// (client/help/security.md) lists the
// corpus, so the list cannot drift from what is tested.
func TestSecurityPageListsEveryAttack(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "..", "client", "help", "security.md"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?s)<!-- attacks -->\n(.*?)<!-- /attacks -->`).FindSubmatch(page)
	require.NotNil(t, m, "client/help/security.md has no <!-- attacks --> list")
	var listed []string
	for _, line := range strings.Split(strings.TrimSpace(string(m[1])), "\n") {
		listed = append(listed, strings.TrimPrefix(line, "- "))
	}
	var want []string
	for _, a := range attacks() {
		want = append(want, a.name)
	}
	sort.Strings(want)
	assert.Equal(t, want, listed, "the security page's attack list is the corpus of infra/iam/attacks_test.go, sorted, one `- name` per line")
}
