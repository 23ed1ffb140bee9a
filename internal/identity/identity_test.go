package identity_test

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/identity"
	"github.com/ferryhq/ferry/internal/release"
)

const sum = "3ab0be4c64572ee155d186bffff923a979f8e418eb932c41f62bc0cf7773bb81"

// signer signs with fixed credentials at a fixed time, as the client's
// would.
func signer(endpoint string) identity.Signer {
	return identity.Signer{
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "session-token"),
		Region:      "us-east-1", Endpoint: endpoint,
		Clock: clock.NewVirtual(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)),
	}
}

// TestProve: the proof is a SigV4 query-signed GetCallerIdentity GET
// whose signed headers include the binding header (AWS Signature Version
// 4, "Create a signed request": every header in SignedHeaders is part of
// the signature), and it holds no secret.
func TestProve(t *testing.T) {
	proof, err := signer("").Prove(t.Context(), sum)
	require.NoError(t, err)
	assert.Equal(t, http.MethodGet, proof.Method)
	u, err := url.Parse(proof.URL)
	require.NoError(t, err)
	assert.True(t, identity.AWSEndpoint(u), proof.URL)
	q := u.Query()
	assert.Equal(t, "GetCallerIdentity", q.Get("Action"))
	assert.Equal(t, "900", q.Get("X-Amz-Expires"), "STS refuses it 15 minutes after signing")
	assert.Equal(t, "20261122T120000Z", q.Get("X-Amz-Date"), "signed at the signer's clock")
	assert.Equal(t, "sts.us-east-1.amazonaws.com", u.Host)
	assert.Contains(t, strings.Split(q.Get("X-Amz-SignedHeaders"), ";"), "x-ferry-release-sha256")
	assert.Equal(t, sum, proof.Headers[identity.BindingHeader])
	assert.NotContains(t, proof.URL, "secret")
	for _, v := range proof.Headers {
		assert.NotContains(t, v, "secret")
	}
}

// sts answers every request with status and body, after checking it.
type stsFunc func(req *http.Request) (*http.Response, error)

func (f stsFunc) Do(req *http.Request) (*http.Response, error) { return f(req) }

func answer(status int, body string) stsFunc {
	return func(*http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: status, Body: io.NopCloser(strings.NewReader(body)), Header: http.Header{}}, nil
	}
}

const callerXML = `<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <GetCallerIdentityResult>
    <Arn>arn:aws:sts::111111111111:assumed-role/Deployers/alice</Arn>
    <UserId>AROAEXAMPLE:alice</UserId>
    <Account>111111111111</Account>
  </GetCallerIdentityResult>
  <ResponseMetadata><RequestId>r</RequestId></ResponseMetadata>
</GetCallerIdentityResponse>`

// TestVerify replays proofs against an STS that answers as AWS documents
// (AWS STS API Reference: GetCallerIdentity; Common Errors:
// SignatureDoesNotMatch, ExpiredToken are 403s, Throttling a 400, and
// ServiceUnavailable a 503).
func TestVerify(t *testing.T) {
	good, err := signer("").Prove(t.Context(), sum)
	require.NoError(t, err)
	with := func(edit func(p *release.Identity)) *release.Identity {
		c := *good
		c.Headers = map[string]string{}
		for k, v := range good.Headers {
			c.Headers[k] = v
		}
		edit(&c)
		return &c
	}
	replace := func(old, new string) *release.Identity {
		return with(func(p *release.Identity) { p.URL = strings.Replace(p.URL, old, new, 1) })
	}
	tests := []struct {
		name    string
		proof   *release.Identity
		sts     stsFunc
		want    string // a BadReleaseError's message; "" for success
		retries bool
	}{
		{name: "verified", proof: good, sts: answer(200, callerXML)},
		{name: "missing", proof: nil, sts: answer(200, callerXML), want: "identity: required"},
		{name: "not https", proof: replace("https://", "http://"), sts: answer(200, callerXML), want: "is not an STS endpoint"},
		{name: "another host", proof: replace("sts.us-east-1.amazonaws.com", "sts.us-east-1.amazonaws.com.evil.example"), sts: answer(200, callerXML), want: "is not an STS endpoint"},
		{name: "an address of the release's choosing", proof: with(func(p *release.Identity) { p.URL = "https://169.254.169.254/?Action=GetCallerIdentity" }), sts: answer(200, callerXML), want: "is not an STS endpoint"},
		{name: "another action", proof: replace("Action=GetCallerIdentity", "Action=AssumeRole"), sts: answer(200, callerXML), want: "not sts:GetCallerIdentity"},
		{name: "binding header not signed", proof: replace("x-ferry-release-sha256", "x-other"), sts: answer(200, callerXML), want: "does not sign X-Ferry-Release-Sha256"},
		{name: "the proof's binding value is never what is sent", proof: with(func(p *release.Identity) { p.Headers[identity.BindingHeader] = strings.Repeat("0", 64) }), sts: answer(200, callerXML)},
		{name: "binding header twice, case-variant", proof: with(func(p *release.Identity) { p.Headers["x-ferry-release-sha256"] = strings.Repeat("0", 64) }), sts: answer(200, callerXML), want: "given more than once"},
		{name: "any header twice, case-variant", proof: with(func(p *release.Identity) { p.Headers["X-Other"], p.Headers["x-other"] = "a", "b" }), sts: answer(200, callerXML), want: "given more than once"},
		{name: "an invalid header name", proof: with(func(p *release.Identity) { p.Headers["X Bad"] = "x" }), sts: answer(200, callerXML), want: "not a valid HTTP header"},
		{name: "a query parameter twice", proof: replace("Action=GetCallerIdentity", "Action=GetCallerIdentity&Action=GetCallerIdentity"), sts: answer(200, callerXML), want: "given 2 times"},
		{name: "not a GET", proof: with(func(p *release.Identity) { p.Method = http.MethodPost }), sts: answer(200, callerXML), want: "is a GET"},
		{name: "signature refused", proof: good, sts: answer(403, `<ErrorResponse><Error><Type>Sender</Type><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match</Message></Error></ErrorResponse>`), want: "STS refused the proof (HTTP 403 SignatureDoesNotMatch"},
		{name: "expired", proof: good, sts: answer(403, `<ErrorResponse><Error><Code>ExpiredToken</Code><Message>The security token included in the request is expired</Message></Error></ErrorResponse>`), want: "HTTP 403 ExpiredToken"},
		{name: "no caller in the answer", proof: good, sts: answer(200, `<GetCallerIdentityResponse/>`), want: "names no caller"},
		{name: "throttled", proof: good, sts: answer(400, `<ErrorResponse><Error><Code>Throttling</Code><Message>Rate exceeded</Message></Error></ErrorResponse>`), retries: true},
		{name: "unavailable", proof: good, sts: answer(503, ``), retries: true},
		{name: "connection broken", proof: good, sts: func(*http.Request) (*http.Response, error) { return nil, errors.New("connection reset") }, retries: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			called := false
			v := identity.Verifier{Client: stsFunc(func(req *http.Request) (*http.Response, error) {
				called = true
				assert.Equal(t, sum, req.Header.Get(identity.BindingHeader), "the signed header is sent")
				return tt.sts(req)
			})}
			caller, err := v.Verify(t.Context(), tt.proof, sum)
			switch {
			case tt.retries:
				assert.Equal(t, failure.NameRetryable, failure.NameOf(err), "%v", err)
			case tt.want != "":
				var bad *failure.BadReleaseError
				require.ErrorAs(t, err, &bad)
				assert.Contains(t, err.Error(), tt.want)
				if strings.Contains(tt.name, "endpoint") || strings.Contains(tt.name, "host") || strings.Contains(tt.name, "choosing") {
					assert.False(t, called, "the deployer called an address the release chose")
				}
			default:
				require.NoError(t, err)
				assert.Equal(t, identity.Caller{ARN: "arn:aws:sts::111111111111:assumed-role/Deployers/alice", Account: "111111111111", UserID: "AROAEXAMPLE:alice"}, caller)
			}
		})
	}
}
