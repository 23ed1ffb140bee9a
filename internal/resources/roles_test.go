package resources

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestTrusts reads trust policies as IAM writes them
// (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_principal.html):
// GetRole returns the document URL-encoded; Statement, Action and the
// Service principal may each be one value or a list.
func TestTrusts(t *testing.T) {
	const svc = "autoscaling.amazonaws.com"
	tests := []struct {
		name, doc string
		want      bool
	}{
		{"one statement, one service", `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Principal":{"Service":"autoscaling.amazonaws.com"},"Action":"sts:AssumeRole"}}`, true},
		{"lists", `{"Statement":[{"Effect":"Allow","Principal":{"Service":["ec2.amazonaws.com","autoscaling.amazonaws.com"]},"Action":["sts:TagSession","sts:AssumeRole"]}]}`, true},
		{"sts wildcard", `{"Statement":[{"Effect":"Allow","Principal":{"Service":"autoscaling.amazonaws.com"},"Action":"sts:*"}]}`, true},
		{"another service", `{"Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`, false},
		{"an account, not the service", `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::111111111111:root"},"Action":"sts:AssumeRole"}]}`, false},
		{"deny", `{"Statement":[{"Effect":"Deny","Principal":{"Service":"autoscaling.amazonaws.com"},"Action":"sts:AssumeRole"}]}`, false},
		{"another action", `{"Statement":[{"Effect":"Allow","Principal":{"Service":"autoscaling.amazonaws.com"},"Action":"sts:TagSession"}]}`, false},
		{"principal wildcard is not a service", `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"sts:AssumeRole"}]}`, false},
		{"not JSON", `<policy/>`, false},
		{"empty", ``, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, trusts(url.QueryEscape(tt.doc), svc), tt.name)
	}
	assert.False(t, trusts("%zz", svc), "not URL-encoded")
}
