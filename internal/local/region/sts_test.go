package region

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLocalCallerIdentity: the region answers STS GetCallerIdentity with
// its own account, so a client pointed at it by AWS_ENDPOINT_URL alone
// finds the deployer by its conventional names, as against AWS.
func TestLocalCallerIdentity(t *testing.T) {
	r, _ := newTestRegion(t, Options{})
	url := serve(t, r)
	client := sts.New(sts.Options{
		Region:           DefaultRegion,
		BaseEndpoint:     aws.String(url),
		Credentials:      credentials.NewStaticCredentialsProvider("local", "local-secret", ""),
		RetryMaxAttempts: 1,
		HTTPClient:       HTTPClient(),
	})
	id, err := client.GetCallerIdentity(context.Background(), &sts.GetCallerIdentityInput{})
	require.NoError(t, err)
	assert.Equal(t, r.Info().Account, aws.ToString(id.Account))
	assert.Equal(t, "arn:aws:iam::"+r.Info().Account+":user/ferry-local", aws.ToString(id.Arn))
	assert.NotEmpty(t, aws.ToString(id.UserId))

	tests := []struct {
		name, body, code string
	}{
		{"another STS action", "Action=AssumeRole&Version=2011-06-15", "InvalidAction"},
		{"no action", "Version=2011-06-15", "MissingAction"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := http.Post(url+"/", "application/x-www-form-urlencoded", strings.NewReader(tt.body))
			require.NoError(t, err)
			defer resp.Body.Close()
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Contains(t, string(body), "<Code>"+tt.code+"</Code>")
		})
	}

	// The SDK reads the error as an API error with the code.
	_, err = client.AssumeRole(context.Background(), &sts.AssumeRoleInput{RoleArn: aws.String("arn:aws:iam::111111111111:role/x"), RoleSessionName: aws.String("s")})
	var apiErr smithy.APIError
	require.True(t, errors.As(err, &apiErr), "%v", err)
	assert.Equal(t, "InvalidAction", apiErr.ErrorCode())
}
