package identity_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/identity"
)

// TestSTSServerErrorsAreRetried: every 5xx from STS is its own failure,
// not a verdict on the proof (AWS STS API Reference, Common Errors:
// InternalFailure is HTTP 500, ServiceUnavailable 503; "Error retries
// and exponential backoff in AWS": retry 5xx and throttling), so the
// release is retried, never refused; a 4xx other than throttling is a
// refusal.
func TestSTSServerErrorsAreRetried(t *testing.T) {
	good, err := signer("").Prove(t.Context(), sum)
	require.NoError(t, err)
	for _, tc := range []struct {
		status  int
		body    string
		retries bool
	}{
		{http.StatusInternalServerError, `<ErrorResponse><Error><Code>InternalFailure</Code><Message>internal</Message></Error></ErrorResponse>`, true},
		{http.StatusBadGateway, ``, true},
		{http.StatusServiceUnavailable, `<ErrorResponse><Error><Code>ServiceUnavailable</Code></Error></ErrorResponse>`, true},
		{http.StatusGatewayTimeout, ``, true},
		{599, ``, true},
		{http.StatusTooManyRequests, ``, true},
		{499, ``, false},
		{http.StatusForbidden, `<ErrorResponse><Error><Code>AccessDenied</Code></Error></ErrorResponse>`, false},
	} {
		t.Run(strconv.Itoa(tc.status), func(t *testing.T) {
			_, err := identity.Verifier{Client: answer(tc.status, tc.body)}.Verify(t.Context(), good, sum)
			require.Error(t, err)
			if tc.retries {
				assert.Equal(t, failure.NameRetryable, failure.NameOf(err), "HTTP %d: %v", tc.status, err)
				return
			}
			var bad *failure.BadReleaseError
			assert.ErrorAs(t, err, &bad, "HTTP %d", tc.status)
		})
	}
}

// TestSTSAnswerBound: the verifier reads at most 64 KiB of STS's answer:
// an answer of exactly that is read, one byte more is refused, never
// half-read.
func TestSTSAnswerBound(t *testing.T) {
	good, err := signer("").Prove(t.Context(), sum)
	require.NoError(t, err)
	const limit = 64 << 10
	padded := func(n int) string { return callerXML + strings.Repeat(" ", n-len(callerXML)) }
	c, err := identity.Verifier{Client: answer(http.StatusOK, padded(limit))}.Verify(t.Context(), good, sum)
	require.NoError(t, err)
	assert.Equal(t, "111111111111", c.Account)
	_, err = identity.Verifier{Client: answer(http.StatusOK, padded(limit+1))}.Verify(t.Context(), good, sum)
	require.ErrorContains(t, err, "STS answered more than 65536 bytes")
}

// TestSTSRefusalMessageCut: STS's message, shown to people, is cut after
// 200 characters: one of exactly 200 is shown whole.
func TestSTSRefusalMessageCut(t *testing.T) {
	good, err := signer("").Prove(t.Context(), sum)
	require.NoError(t, err)
	refuse := func(msg string) error {
		_, err := identity.Verifier{Client: answer(http.StatusForbidden,
			`<ErrorResponse><Error><Code>AccessDenied</Code><Message>`+msg+`</Message></Error></ErrorResponse>`)}.Verify(t.Context(), good, sum)
		return err
	}
	whole := strings.Repeat("m", 200)
	err = refuse(whole)
	require.ErrorContains(t, err, whole+")")
	assert.NotContains(t, err.Error(), "...")
	err = refuse(whole + "x")
	require.ErrorContains(t, err, whole+"...")
	assert.NotContains(t, err.Error(), "mx")
}
