package main

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambda/messages"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/tuning"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    config
		wantErr string
	}{
		{
			name: "minimal",
			env:  map[string]string{naming.EnvDeployerBucket: "b", "AWS_REGION": "eu-west-1"},
			want: config{Bucket: "b", Region: "eu-west-1"},
		},
		{
			name: "everything",
			env: map[string]string{
				naming.EnvDeployerBucket: "b", naming.EnvAccountID: "111111111111", naming.EnvRegion: "us-east-1",
				"AWS_REGION": "eu-west-1", naming.EnvQualifier: "q1", naming.EnvCreatedAtMaxAge: "20m",
				naming.EnvCreatedAtMaxSkew: "30s", naming.EnvHealthCheckInterval: "2s", naming.EnvAssetKeepReleases: "3",
				naming.EnvIdentityAccounts: "111111111111, 222222222222",
			},
			want: config{
				Bucket: "b", AccountID: "111111111111", Region: "us-east-1", Qualifier: "q1",
				CreatedAtMaxAge: 20 * time.Minute, CreatedAtMaxSkew: 30 * time.Second, HealthCheckInterval: 2 * time.Second,
				KeepReleases: 3, IdentityAccounts: []string{"111111111111", "222222222222"},
			},
		},
		{
			name:    "no bucket, bad durations: every problem",
			env:     map[string]string{naming.EnvCreatedAtMaxAge: "ten minutes", naming.EnvHealthCheckInterval: "-1s", naming.EnvAssetKeepReleases: "0", naming.EnvIdentityAccounts: "111111111111,*"},
			wantErr: "FERRY_DEPLOYER_BUCKET is required\nFERRY_CREATED_AT_MAX_AGE=\"ten minutes\" is not a positive duration (like 10m)\nFERRY_HEALTH_CHECK_INTERVAL=\"-1s\" is not a positive duration (like 10m)\nFERRY_ASSET_KEEP_RELEASES=\"0\" is not a positive whole number\nFERRY_IDENTITY_ACCOUNTS=\"111111111111,*\": \"*\" is not a 12-digit account id",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseConfig(func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				assert.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

type fakeInvoker struct {
	out json.RawMessage
	err error
}

func (f fakeInvoker) Invoke(context.Context, execution.Request) (json.RawMessage, error) {
	return f.out, f.err
}

// TestHandlerErrorNames runs the handler through aws-lambda-go's own
// handler wrapper: the error it reports carries the registry's name.
func TestHandlerErrorNames(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		wantType string
	}{
		{"bad release", failure.BadRelease("ami: not found"), failure.NameBadRelease},
		{"wrapped retryable", errors.Join(errors.New("context"), &failure.RetryableError{Op: "x", Err: errors.New("throttled")}), failure.NameRetryable},
		{"halt", &failure.HaltError{Reason: "halt marker"}, failure.NameHalt},
		{"unclassified", errors.New("boom"), failure.NameInternal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := lambda.NewHandler(handler(fakeInvoker{err: tt.err}))
			_, err := h.Invoke(t.Context(), []byte(`{"task":"Validate","input":{},"execution":{"id":"e"}}`))
			var ire messages.InvokeResponse_Error
			require.ErrorAs(t, err, &ire)
			assert.Equal(t, tt.wantType, ire.Type)
			assert.Equal(t, tt.err.Error(), ire.Message)
		})
	}
	out, err := lambda.NewHandler(handler(fakeInvoker{out: json.RawMessage(`{"healthy":true}`)})).
		Invoke(t.Context(), []byte(`{"task":"CheckHealthy","input":{},"execution":{"id":"e"}}`))
	require.NoError(t, err)
	assert.JSONEq(t, `{"healthy":true}`, string(out))
}

// TestDeployerConfigCarriesTheVersion: the deployer records the Lambda's
// build as deployer_version in every outcome, so it must be passed on.
func TestDeployerConfigCarriesTheVersion(t *testing.T) {
	c := config{Bucket: "b", AccountID: "111111111111", Region: "eu-west-1", Version: "v1.2.3 (commit abc, go1.26)"}
	dc := c.deployerConfig(nil)
	assert.Equal(t, c.Version, dc.Version)
	assert.Equal(t, "b", dc.Bucket)
	assert.Equal(t, naming.StateMachineARN(c.AccountID, c.Region), dc.StateMachineARN)
}

// The deployer's HTTP client keeps as many idle connections to a host as
// a health check reads its load balancers at once: the SDK's default
// keeps 10, and the next check would open the rest anew.
func TestHTTPClientKeepsAChecksConnections(t *testing.T) {
	tr := httpClient().GetTransport()
	assert.GreaterOrEqual(t, tr.MaxIdleConnsPerHost, tuning.BalancerReadsAtOnce)
	assert.GreaterOrEqual(t, tr.MaxIdleConns, tr.MaxIdleConnsPerHost, "the pool as a whole holds them too")
}
