package identity_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/identity"
)

// TestAWSEndpoint: a proof may name only an STS endpoint of AWS (global,
// regional, China; AWS General Reference, "AWS Security Token Service
// endpoints and quotas") over https, at the root path, with no user,
// port or fragment: anything else would make the deployer send a signed
// request where the release says.
func TestAWSEndpoint(t *testing.T) {
	for raw, want := range map[string]bool{
		"https://sts.amazonaws.com":                     true,
		"https://sts.amazonaws.com/":                    true,
		"https://sts.us-east-1.amazonaws.com/?Action=x": true,
		"https://sts.cn-north-1.amazonaws.com.cn/":      true,
		"https://sts.amazonaws.com/x":                   false,
		"https://sts.amazonaws.com//":                   false,
		"http://sts.amazonaws.com/":                     false,
		"https://u@sts.amazonaws.com/":                  false,
		"https://sts.amazonaws.com:443/":                false,
		"https://sts.amazonaws.com/#f":                  false,
		"https://sts.amazonaws.com.example/":            false,
		"https://iam.amazonaws.com/":                    false,
	} {
		u, err := url.Parse(raw)
		require.NoError(t, err)
		assert.Equal(t, want, identity.AWSEndpoint(u), raw)
	}
}

// TestProveNeedsCredentialsAndRegion: a signer without credentials or
// without a region proves nothing (the proof would name no regional
// endpoint, or no one).
func TestProveNeedsCredentialsAndRegion(t *testing.T) {
	noRegion := signer("")
	noRegion.Region = ""
	_, err := noRegion.Prove(t.Context(), sum)
	require.ErrorContains(t, err, "no credentials or region")
	noCreds := signer("")
	noCreds.Credentials = nil
	_, err = noCreds.Prove(t.Context(), sum)
	require.ErrorContains(t, err, "no credentials or region")
	ok := signer("")
	ok.Credentials = credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")
	_, err = ok.Prove(t.Context(), sum)
	require.NoError(t, err)
}

// TestProofCarriesNoHost: the proof's headers are those the verifier
// sends; Host is not one of them (net/http sets it from the URL, and a
// Host of the release's choosing is no header the verifier sends).
func TestProofCarriesNoHost(t *testing.T) {
	proof, err := signer("").Prove(t.Context(), sum)
	require.NoError(t, err)
	for k := range proof.Headers {
		assert.NotEqual(t, "host", strings.ToLower(k), "the proof carries %s", k)
	}
	assert.Equal(t, sum, proof.Headers[identity.BindingHeader])
}
