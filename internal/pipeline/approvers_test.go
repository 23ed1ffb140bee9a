package pipeline

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestMayApprove: a stage's approvers are matched as IAM matches
// aws:PrincipalArn (IAM User Guide, "AWS global condition context keys":
// for a role session, the role's ARN), with IAM's wildcards; a name alike
// in another kind of principal or another account does not match.
func TestMayApprove(t *testing.T) {
	g := &Gates{Approval: true, Approvers: []string{
		"arn:aws:iam::123456789012:role/ReleaseManager*",
		"arn:aws:iam::123456789012:user/alice",
	}}
	tests := []struct {
		arn  string
		want bool
	}{
		{"arn:aws:sts::123456789012:assumed-role/ReleaseManager/bob", true},
		{"arn:aws:sts::123456789012:assumed-role/ReleaseManagerEU/carol", true},
		{"arn:aws:iam::123456789012:user/alice", true},
		{"arn:aws:sts::123456789012:assumed-role/AnyRole/alice", false},
		{"arn:aws:sts::123456789012:federated-user/alice", false},
		{"arn:aws:iam::999999999999:user/alice", false},
		{"arn:aws:sts::999999999999:assumed-role/ReleaseManager/bob", false},
		{"arn:aws:iam::123456789012:user/ReleaseManager", false},
		{"arn:aws:sts::123456789012:assumed-role/ReleaseManager", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, g.MayApprove(tt.arn), tt.arn)
	}
	assert.True(t, (&Gates{Approval: true}).MayApprove("arn:aws:iam::999999999999:user/anyone"), "no approvers named: any verified principal")
	assert.Equal(t, []string{"123456789012"}, g.ApproverAccounts())
	assert.Empty(t, (*Gates)(nil).ApproverAccounts())
}
