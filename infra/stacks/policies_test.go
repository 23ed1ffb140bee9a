package stacks

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pageSCP matches the security help page's service control policy block.
var pageSCP = regexp.MustCompile("(?s)(<!-- scp -->\\s*```json\\n)(.*?)(```)")

// compactPolicy formats a policy document one statement a line, as the
// security page shows it.
func compactPolicy(t *testing.T, doc map[string]interface{}) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("{\n  \"Version\": \"2012-10-17\",\n  \"Statement\": [\n")
	sts := doc["Statement"].([]interface{})
	for i, st := range sts {
		line, err := json.Marshal(st)
		require.NoError(t, err)
		b.WriteString("    ")
		b.Write(line)
		if i < len(sts)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("  ]\n}\n")
	return b.Bytes()
}

// TestSecurityPageServiceControlPolicy: the SCP of the security help page
// (client/help/security.md) is ServiceControlPolicy
// (go test ./infra/stacks -run TestSecurityPageServiceControlPolicy -update
// rewrites it).
func TestSecurityPageServiceControlPolicy(t *testing.T) {
	path := filepath.Join("..", "..", "client", "help", "security.md")
	page, err := os.ReadFile(path)
	require.NoError(t, err)
	m := pageSCP.FindSubmatch(page)
	require.NotNil(t, m, "%s has no <!-- scp --> JSON block", path)
	want := compactPolicy(t, ServiceControlPolicy(DefaultAdministrator))
	if *update {
		page = pageSCP.ReplaceAllFunc(page, func(block []byte) []byte {
			sub := pageSCP.FindSubmatch(block)
			return append(append(append([]byte{}, sub[1]...), want...), sub[3]...)
		})
		require.NoError(t, os.WriteFile(path, page, 0o644))
		return
	}
	assert.Equal(t, string(want), string(m[2]), "the security page's SCP is not ServiceControlPolicy(DefaultAdministrator): run go test ./infra/stacks -run TestSecurityPageServiceControlPolicy -update")
}

// TestServiceControlPolicyFits: an SCP is at most 5,120 characters
// (AWS Organizations User Guide, "Quotas and service limits": maximum size
// of a service control policy document), which AWS counts without
// whitespace.
func TestServiceControlPolicyFits(t *testing.T) {
	b, err := json.Marshal(ServiceControlPolicy(DefaultAdministrator))
	require.NoError(t, err)
	assert.Less(t, len(b), 5120)
}

// TestGuardrails: the optional Organizations policy is the SCP, attached
// to the given targets; without targets there is none.
func TestGuardrails(t *testing.T) {
	_, err := NewGuardrailsStack(NewApp(), "g", &GuardrailsProps{})
	require.ErrorContains(t, err, "TargetIds is required")

	stack, err := NewGuardrailsStack(NewApp(), "ferry-guardrails", &GuardrailsProps{TargetIds: []string{"ou-abcd-12345678"}})
	require.NoError(t, err)
	tmpl := *assertions.Template_FromStack(stack, nil).ToJSON()
	policies := resourcesOfType(tmpl, "AWS::Organizations::Policy")
	require.Len(t, policies, 1)
	for _, p := range policies {
		props := p["Properties"].(obj)
		assert.Equal(t, "SERVICE_CONTROL_POLICY", props["Type"])
		assert.Equal(t, []interface{}{"ou-abcd-12345678"}, props["TargetIds"])
		want, err := json.Marshal(ServiceControlPolicy(DefaultAdministrator))
		require.NoError(t, err)
		got, err := json.Marshal(props["Content"])
		require.NoError(t, err)
		assert.JSONEq(t, string(want), string(got))
	}
}

// TestServiceTrusts: every role a service assumes trusts it only for the
// stack's own account (aws:SourceAccount), and, where the service
// documents it, for the resource that uses it (aws:SourceArn): Step
// Functions (Developer Guide, "Creating an IAM role for your state
// machine") and EventBridge Scheduler (User Guide, "Set up the execution
// role"). Lambda documents no aws:SourceArn for an execution role.
func TestServiceTrusts(t *testing.T) {
	_, _, tmpl := deployer(t)
	boot := *assertions.Template_FromStack(NewBootstrapStack(NewApp(), "b").Stack, nil).ToJSON()
	wantARN := map[string]string{"states.amazonaws.com": ":stateMachine:", "scheduler.amazonaws.com": ":schedule-group/default"}
	seen := map[string]bool{}
	for _, roles := range []map[string]obj{resourcesOfType(tmpl, "AWS::IAM::Role"), resourcesOfType(boot, "AWS::IAM::Role")} {
		for id, r := range roles {
			for _, st := range r["Properties"].(obj)["AssumeRolePolicyDocument"].(obj)["Statement"].([]interface{}) {
				s := st.(obj)
				principal, _ := s["Principal"].(obj)
				service, ok := principal["Service"].(string)
				if !ok {
					continue
				}
				seen[service] = true
				cond, _ := s["Condition"].(obj)
				require.NotNil(t, cond, "%s: the trust of %s has no condition", id, service)
				assert.Equal(t, obj{"aws:SourceAccount": obj{"Ref": "AWS::AccountId"}}, cond["StringEquals"], "%s: %s", id, service)
				if marker, documented := wantARN[service]; documented {
					raw, _ := json.Marshal(cond["ArnLike"])
					assert.Contains(t, string(raw), "aws:SourceArn", "%s: %s", id, service)
					assert.Contains(t, string(raw), marker, "%s: %s", id, service)
				} else {
					assert.Nil(t, cond["ArnLike"], "%s: %s", id, service)
				}
			}
		}
	}
	assert.Equal(t, map[string]bool{"lambda.amazonaws.com": true, "states.amazonaws.com": true, "scheduler.amazonaws.com": true}, seen)
}

// TestStateObjectWritesAreOneTable: the deployer bucket's deny of writes
// under the state prefix is exactly StateObjectWrites (the unlockers'
// statement holding s3:DeleteObject).
func TestStateObjectWritesAreOneTable(t *testing.T) {
	_, _, tmpl := deployer(t)
	var denied []string
	for _, p := range resourcesOfType(tmpl, "AWS::S3::BucketPolicy") {
		for _, st := range p["Properties"].(obj)["PolicyDocument"].(obj)["Statement"].([]interface{}) {
			s := st.(obj)
			if sid, _ := s["Sid"].(string); strings.HasPrefix(sid, "OnlyTheDeployer") {
				denied = append(denied, strs(s["Action"])...)
			}
		}
	}
	var want []string
	for _, w := range StateObjectWrites {
		want = append(want, w.Action)
	}
	assert.ElementsMatch(t, want, denied)
}
