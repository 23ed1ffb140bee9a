package identity_test

import (
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
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/release"
)

const (
	alice        = "arn:aws:iam::111111111111:user/alice"
	victimHash   = "1111111111111111111111111111111111111111111111111111111111111111"
	attackerHash = "2222222222222222222222222222222222222222222222222222222222222222"
)

// simSTS is a world whose STS checks signatures and expiry as AWS does
// (sim.ProofSTS), with alice's access key, and a verifier that replays
// proofs to it.
type simSTS struct {
	clk      *clock.Virtual
	world    *sim.World
	verifier identity.Verifier
	alice    identity.Signer
	aliceID  string
}

func newSimSTS(t testing.TB) *simSTS {
	t.Helper()
	clk := clock.NewVirtual(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	world, err := sim.New(clk, sim.WorldSpec{})
	require.NoError(t, err)
	const id = "AIDAEXAMPLEALICE"
	require.NoError(t, world.AddAccessKey(alice, id, "AKIDALICE", "alice-secret"))
	return &simSTS{
		clk: clk, world: world, aliceID: id,
		verifier: identity.Verifier{Client: world.ProofSTS()},
		alice: identity.Signer{Credentials: credentials.NewStaticCredentialsProvider("AKIDALICE", "alice-secret", ""),
			Region: "us-east-1", Clock: clk},
	}
}

// copyProof returns a deep copy of p.
func copyProof(p *release.Identity) *release.Identity {
	c := *p
	c.Headers = map[string]string{}
	for k, v := range p.Headers {
		c.Headers[k] = v
	}
	return &c
}

// TestProofCannotBeMoved is the attack on the binding: Mallory takes
// Alice's fresh proof for Alice's release and adds the binding header
// again, in another case, with the hash of Mallory's release. Go's map
// order is random, so the attack is tried 400 times; every one is
// refused. Without the duplicate, the proof replayed for Mallory's
// release is refused by STS: the deployer sends the hash it computed, and
// Alice signed another (AWS Signature Version 4: every header in
// SignedHeaders is part of the signature).
func TestProofCannotBeMoved(t *testing.T) {
	s := newSimSTS(t)
	proof, err := s.alice.Prove(t.Context(), victimHash)
	require.NoError(t, err)
	caller, err := s.verifier.Verify(t.Context(), proof, victimHash)
	require.NoError(t, err, "the proof verifies for the release it was made for")
	assert.Equal(t, identity.Caller{ARN: alice, Account: "111111111111", UserID: s.aliceID}, caller)

	forged := copyProof(proof)
	forged.Headers[strings.ToLower(identity.BindingHeader)] = victimHash
	forged.Headers[identity.BindingHeader] = attackerHash
	for i := range 400 {
		_, err := s.verifier.Verify(t.Context(), forged, attackerHash)
		var bad *failure.BadReleaseError
		require.ErrorAs(t, err, &bad, "attempt %d verified Alice's proof for Mallory's release", i)
	}

	_, err = s.verifier.Verify(t.Context(), proof, attackerHash)
	assert.ErrorContains(t, err, "SignatureDoesNotMatch")
}

// TestProofExpires: STS accepts a pre-signed GetCallerIdentity for 15
// minutes after its signing time (X-Amz-Expires 900; the limit STS
// enforces for it: github.com/aws/aws-sdk-ruby issue 2887, "a value other
// than 900 does not work for anything other than S3"), and refuses it
// after as expired; a longer X-Amz-Expires buys nothing.
func TestProofExpires(t *testing.T) {
	s := newSimSTS(t)
	proof, err := s.alice.Prove(t.Context(), victimHash)
	require.NoError(t, err)
	s.clk.Advance(identity.ProofLifetime)
	_, err = s.verifier.Verify(t.Context(), proof, victimHash)
	require.NoError(t, err, "valid until the 15th minute")
	s.clk.Advance(time.Second)
	_, err = s.verifier.Verify(t.Context(), proof, victimHash)
	var bad *failure.BadReleaseError
	require.ErrorAs(t, err, &bad)
	assert.Contains(t, err.Error(), "ExpiredToken")

	longer := copyProof(proof)
	longer.URL = strings.Replace(longer.URL, "X-Amz-Expires=900", "X-Amz-Expires=86400", 1)
	_, err = s.verifier.Verify(t.Context(), longer, victimHash)
	assert.ErrorContains(t, err, "ExpiredToken")
}

// TestProofSignatureCoversTheHeadersSent: the local STS checks the
// signature over the headers as they arrive, as AWS does: a signed header
// sent with another value, sent twice, or missing fails the signature;
// a header nobody signed changes nothing.
func TestProofSignatureCoversTheHeadersSent(t *testing.T) {
	s := newSimSTS(t)
	proof, err := s.alice.Prove(t.Context(), victimHash)
	require.NoError(t, err)
	send := func(edit func(h http.Header)) int {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, proof.URL, nil)
		require.NoError(t, err)
		for k, v := range proof.Headers {
			req.Header.Set(k, v)
		}
		edit(req.Header)
		resp, err := s.world.ProofSTS().Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, 200, send(func(http.Header) {}))
	assert.Equal(t, 200, send(func(h http.Header) { h.Set("X-Unsigned", "anything") }))
	assert.Equal(t, 403, send(func(h http.Header) { h.Set(identity.BindingHeader, attackerHash) }))
	assert.Equal(t, 403, send(func(h http.Header) { h.Add(identity.BindingHeader, attackerHash) }))
	assert.Equal(t, 403, send(func(h http.Header) { h.Del(identity.BindingHeader) }))

	u, err := url.Parse(proof.URL)
	require.NoError(t, err)
	q := u.Query()
	q.Set("X-Amz-Credential", strings.Replace(q.Get("X-Amz-Credential"), "AKIDALICE", "AKIDNOBODY", 1))
	u.RawQuery = q.Encode()
	other := copyProof(proof)
	other.URL = u.String()
	_, err = s.verifier.Verify(t.Context(), other, victimHash)
	assert.ErrorContains(t, err, "InvalidClientTokenId")
}

// FuzzVerify replays Alice's proof, with a header added (any name, any
// case, any value), some seconds after it was signed, for a release hash
// the fuzzer picks: Verify accepts it only when the hash is the one Alice
// signed and the proof has not expired, and then names Alice.
func FuzzVerify(f *testing.F) {
	f.Add("x-ferry-release-sha256", attackerHash, attackerHash, uint16(0))
	f.Add("X-FERRY-RELEASE-SHA256", victimHash, victimHash, uint16(1))
	f.Add("X-Other", "v", victimHash, uint16(900))
	f.Add("Host", "evil.example", victimHash, uint16(2))
	f.Add("x-amz-date", "20261122T120000Z", victimHash, uint16(901))
	s := newSimSTS(f)
	f.Fuzz(func(t *testing.T, name, value, hash string, after uint16) {
		// Each proof is fresh, replayed after seconds after its signing.
		proof, err := s.alice.Prove(t.Context(), victimHash)
		require.NoError(t, err)
		p := copyProof(proof)
		p.Headers[name] = value
		s.clk.Advance(time.Duration(after) * time.Second)
		caller, err := s.verifier.Verify(t.Context(), p, hash)
		if err == nil {
			require.Equal(t, victimHash, hash, "a proof verified for a release Alice did not sign")
			require.LessOrEqual(t, time.Duration(after)*time.Second, identity.ProofLifetime, "an expired proof verified")
			require.Equal(t, alice, caller.ARN)
		}
		if failure.IsRetryable(err) {
			t.Fatalf("a proof's content made the replay fail as if STS were down: %v", err)
		}
	})
}
