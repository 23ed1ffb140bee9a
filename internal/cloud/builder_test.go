package cloud_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/target"
)

// noBackoff retries at once, so the retryer tests never sleep.
type noBackoff struct{}

func (noBackoff) BackoffDelay(int, error) (time.Duration, error) { return 0, nil }

// queryError serves every request with one AWS query-protocol error (the
// wire format of Auto Scaling and SNS) and counts the requests.
func queryError(t *testing.T, status int, code string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Content-Type", "text/xml")
		w.WriteHeader(status)
		fmt.Fprintf(w, `<ErrorResponse><Error><Type>Sender</Type><Code>%s</Code><Message>m</Message></Error><RequestId>r</RequestId></ErrorResponse>`, code)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func builtClients(srv *httptest.Server, tokens uint) *cloud.Clients {
	cfg := aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), HTTPClient: srv.Client()}
	build := cloud.AWSBuilder(cfg, func(o *cloud.BuilderOptions) {
		o.Backoff = noBackoff{}
		if tokens > 0 {
			o.RetryTokens = tokens
		}
	})
	creds := staticCreds("AKIATEST")
	return build(target.Target{AccountID: "111111111111", Region: "us-east-1"}, creds, creds)
}

// TestAWSBuilderRetries: the SDK clients AWSBuilder makes retry throttling
// (every service's code, SNS's Throttled included) and 5xx up to
// tuning.AWSMaxAttempts, never validation or access errors, and what they
// finally return is still classified transient.
func TestAWSBuilderRetries(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		code      string
		sns       bool
		attempts  int32
		transient bool
	}{
		{"Auto Scaling Throttling", 400, "Throttling", false, 3, true},
		{"Auto Scaling InternalFailure", 500, "InternalFailure", false, 3, true},
		{"Auto Scaling ValidationError", 400, "ValidationError", false, 1, false},
		{"Auto Scaling AccessDenied", 403, "AccessDenied", false, 1, false},
		{"SNS Throttled", 429, "Throttled", true, 3, true},
		{"SNS NotFound", 404, "NotFound", true, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, n := queryError(t, tt.status, tt.code)
			c := builtClients(srv, 0)
			var err error
			if tt.sns {
				_, err = c.SNS.GetTopicAttributes(t.Context(), &sns.GetTopicAttributesInput{TopicArn: aws.String("arn:aws:sns:us-east-1:111111111111:t")})
			} else {
				_, err = c.AutoScaling.DescribeAutoScalingGroups(t.Context(), &autoscaling.DescribeAutoScalingGroupsInput{})
			}
			require.Error(t, err)
			assert.Equal(t, tt.code, cloud.ErrorCode(err))
			assert.Equal(t, tt.attempts, n.Load(), "attempts")
			assert.Equal(t, tt.transient, cloud.IsTransient(err))
		})
	}
}

// TestAWSBuilderRetryBudget: the clients of one target share one retry
// budget; once it is spent a failure is returned after one attempt, still
// transient, so the state machine (not the SDK) retries the task later.
func TestAWSBuilderRetryBudget(t *testing.T) {
	srv, n := queryError(t, 400, "Throttling")
	c := builtClients(srv, 10) // two retries at 5 tokens each
	ctx := t.Context()

	_, err := c.AutoScaling.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{})
	require.Error(t, err)
	assert.Equal(t, int32(3), n.Load(), "the first call spends the budget on two retries")

	_, err = c.SNS.GetTopicAttributes(ctx, &sns.GetTopicAttributesInput{TopicArn: aws.String("arn:aws:sns:us-east-1:111111111111:t")})
	require.Error(t, err)
	assert.Equal(t, int32(4), n.Load(), "another client of the target has no budget left: one attempt")
	assert.True(t, cloud.IsTransient(err), "still transient: %v", err)
	assert.Equal(t, "Throttling", cloud.ErrorCode(err))
}
