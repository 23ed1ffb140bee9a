package target

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		target  Target
		wantErr string
	}{
		{"usable", Target{AccountID: "111111111111", Region: "us-east-1"}, ""},
		{"qualified", Target{AccountID: "111111111111", Region: "eu-central-1", Qualifier: "blue"}, ""},
		{"gov region", Target{AccountID: "111111111111", Region: "us-gov-west-1"}, ""},
		{"short account", Target{AccountID: "11111", Region: "us-east-1"}, `target account "11111" is not a 12-digit AWS account id`},
		{"no region", Target{AccountID: "111111111111"}, `target region "" is not an AWS region name`},
		{"region with a path", Target{AccountID: "111111111111", Region: "us-east-1/x"}, "is not an AWS region name"},
		{"long qualifier", Target{AccountID: "111111111111", Region: "us-east-1", Qualifier: "abcdefghijk"}, "longer than 10 characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.target.Validate()
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tt.wantErr)
		})
	}
}
