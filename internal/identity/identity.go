package identity

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/release"
)

// BindingHeader is the signed header that binds a proof to one release: its
// value is the release's release.IdentityHash.
const BindingHeader = "X-Ferry-Release-Sha256"

// Signer makes identity proofs with the submitter's credentials.
type Signer struct {
	// Credentials are the submitter's (aws.Config.Credentials).
	Credentials aws.CredentialsProvider
	// Region is the STS region signed for; its regional endpoint is the
	// default Endpoint.
	Region string
	// Endpoint is the STS endpoint the proof names (default
	// https://sts.REGION.amazonaws.com; a local region's address).
	Endpoint string
	// Clock tells the signing time (default the system clock); a proof
	// expires ProofLifetime after it.
	Clock clock.Clock
}

// ProofLifetime is how long after its signing time STS accepts a proof
// (X-Amz-Expires): long enough for the upload before the execution's
// Validate, short enough that a leaked proof is soon worthless.
const ProofLifetime = 15 * time.Minute

// emptySHA256 is the hex SHA-256 of an empty payload: a GET's.
const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// Prove pre-signs sts:GetCallerIdentity (a SigV4 query-signed GET) with
// BindingHeader set to contentHash among the signed headers. The proof
// holds no credentials: a signature valid for one request until it
// expires.
func (s Signer) Prove(ctx context.Context, contentHash string) (*release.Identity, error) {
	if s.Credentials == nil || s.Region == "" {
		return nil, errors.New("identity: no credentials or region to sign with")
	}
	creds, err := s.Credentials.Retrieve(ctx)
	if err != nil {
		return nil, fmt.Errorf("identity: the submitter's credentials: %w", err)
	}
	endpoint := s.Endpoint
	if endpoint == "" {
		endpoint = "https://sts." + s.Region + ".amazonaws.com"
	}
	u, err := url.Parse(strings.TrimRight(endpoint, "/") + "/")
	if err != nil {
		return nil, fmt.Errorf("identity: STS endpoint %q: %w", endpoint, err)
	}
	u.RawQuery = url.Values{
		"Action":        {"GetCallerIdentity"},
		"Version":       {"2011-06-15"},
		"X-Amz-Expires": {strconv.Itoa(int(ProofLifetime / time.Second))},
	}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("identity: %w", err)
	}
	req.Header.Set(BindingHeader, contentHash)
	clk := s.Clock
	if clk == nil {
		clk = clock.System{}
	}
	signed, headers, err := v4.NewSigner().PresignHTTP(ctx, creds, req, emptySHA256, "sts", s.Region, clk.Now().UTC())
	if err != nil {
		return nil, fmt.Errorf("identity: pre-signing sts:GetCallerIdentity: %w", err)
	}
	out := map[string]string{}
	for k, vs := range headers {
		if strings.EqualFold(k, "Host") || len(vs) == 0 {
			continue // net/http sets Host from the URL
		}
		out[http.CanonicalHeaderKey(k)] = strings.Join(vs, ",")
	}
	return &release.Identity{Method: http.MethodGet, URL: signed, Headers: out}, nil
}

// Caller is who a verified proof names, as GetCallerIdentity answers.
type Caller struct {
	// ARN is the caller's ARN: an IAM user, an assumed-role session
	// (arn:aws:sts::ACCOUNT:assumed-role/ROLE/SESSION) or the account's
	// root.
	ARN     string
	Account string
	UserID  string
}

// Doer sends an HTTP request (*http.Client).
type Doer interface {
	Do(req *http.Request) (*http.Response, error)
}

// Verifier checks proofs by replaying them. Client sends them (default
// http.DefaultClient: set one with a timeout); Endpoint decides which URLs
// a proof may name (default AWSEndpoint).
type Verifier struct {
	Client   Doer
	Endpoint func(u *url.URL) bool
}

// stsHost is the host of an STS endpoint of AWS: global, regional, China.
var stsHost = regexp.MustCompile(`^sts(\.[a-z]{2}(-[a-z]+)+-[0-9]{1,2})?\.amazonaws\.com(\.cn)?$`)

// AWSEndpoint reports whether u is an STS endpoint of AWS over https with
// the root path and no user, fragment or explicit port.
func AWSEndpoint(u *url.URL) bool {
	return u.Scheme == "https" && u.User == nil && u.Port() == "" && u.Fragment == "" &&
		(u.Path == "" || u.Path == "/") && stsHost.MatchString(u.Hostname())
}

// maxResponseBytes bounds what Verify reads of STS's answer.
const maxResponseBytes = 64 << 10

// Verify replays proof and returns the caller STS names. The proof must
// be a GetCallerIdentity request to an endpoint Endpoint accepts, with
// BindingHeader among its signed headers and equal to contentHash.
//
// Errors: a proof that is missing, malformed, bound to another release or
// that STS refuses (expired, a signature that does not match) is a
// *failure.BadReleaseError naming why; STS throttling, a 5xx or a broken
// connection is a *failure.RetryableError.
func (v Verifier) Verify(ctx context.Context, proof *release.Identity, contentHash string) (Caller, error) {
	bad := func(format string, a ...any) (Caller, error) {
		return Caller{}, failure.BadRelease("identity: " + fmt.Sprintf(format, a...))
	}
	if proof == nil {
		return bad("required: the client proves who asks with a pre-signed sts:GetCallerIdentity request (ferry deploy does)")
	}
	u, err := url.Parse(proof.URL)
	if err != nil {
		return bad("url does not parse")
	}
	endpoint := v.Endpoint
	if endpoint == nil {
		endpoint = AWSEndpoint
	}
	if !endpoint(u) {
		return bad("url %s://%s is not an STS endpoint the deployer calls", u.Scheme, u.Host)
	}
	q := u.Query()
	switch {
	case proof.Method != http.MethodGet:
		return bad("method %q: a pre-signed GetCallerIdentity request is a GET", proof.Method)
	case q.Get("Action") != "GetCallerIdentity" || len(q["Action"]) != 1:
		return bad("the request is not sts:GetCallerIdentity")
	case !slices.Contains(strings.Split(q.Get("X-Amz-SignedHeaders"), ";"), strings.ToLower(BindingHeader)):
		return bad("the request does not sign %s", BindingHeader)
	}
	var bound string
	for k, val := range proof.Headers {
		if strings.EqualFold(k, BindingHeader) {
			bound = val
		}
	}
	if bound != contentHash {
		return bad("the proof is bound to release %q, not to this release (%s)", bound, contentHash)
	}

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return bad("the request cannot be made: %v", err)
	}
	for k, val := range proof.Headers {
		req.Header.Set(k, val)
	}
	client := v.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return Caller{}, &failure.RetryableError{Op: "identity: sts:GetCallerIdentity", Err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return Caller{}, &failure.RetryableError{Op: "identity: sts:GetCallerIdentity", Err: err}
	}
	if len(body) > maxResponseBytes {
		return bad("STS answered more than %d bytes", maxResponseBytes)
	}
	if resp.StatusCode != http.StatusOK {
		code, msg := stsError(body)
		if resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests || code == "Throttling" {
			return Caller{}, &failure.RetryableError{Op: "identity: sts:GetCallerIdentity",
				Err: fmt.Errorf("HTTP %d %s", resp.StatusCode, code)}
		}
		return bad("STS refused the proof (HTTP %d %s: %s)", resp.StatusCode, code, msg)
	}
	var out struct {
		Result struct {
			Arn     string `xml:"Arn"`
			UserID  string `xml:"UserId"`
			Account string `xml:"Account"`
		} `xml:"GetCallerIdentityResult"`
	}
	if err := xml.NewDecoder(bytes.NewReader(body)).Decode(&out); err != nil || out.Result.Arn == "" {
		return bad("STS's answer names no caller")
	}
	return Caller{ARN: out.Result.Arn, Account: out.Result.Account, UserID: out.Result.UserID}, nil
}

// stsError reads the code and message of an STS error document; empty
// when the body is not one. The message is cut: it is shown to people.
func stsError(body []byte) (code, msg string) {
	var e struct {
		Error struct {
			Code    string `xml:"Code"`
			Message string `xml:"Message"`
		} `xml:"Error"`
	}
	if xml.Unmarshal(body, &e) != nil {
		return "", ""
	}
	msg = e.Error.Message
	if len(msg) > 200 {
		msg = msg[:200] + "..."
	}
	return e.Error.Code, msg
}
