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

// headerName is an HTTP header field name (a token, RFC 9110 5.1).
var headerName = regexp.MustCompile("^[!#$%&'*+\\-.^_`|~0-9A-Za-z]+$")

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
// BindingHeader among its signed headers, each header name given once
// (whatever its case), and each query parameter once.
//
// What the proof is bound to is the verifier's decision, never the
// proof's: the request sent to STS carries BindingHeader set to
// contentHash, whatever value (if any) the proof gives it, so STS accepts
// the signature only when the caller signed exactly contentHash.
//
// Errors: a proof that is missing, malformed, bound to another release or
// that STS refuses (expired, a signature that does not match) is a
// *failure.BadReleaseError naming why; STS throttling, a 5xx or a broken
// connection is a *failure.RetryableError.
func (v Verifier) Verify(ctx context.Context, proof *release.Identity, contentHash string) (Caller, error) {
	u, err := v.check(proof)
	if err != nil {
		return Caller{}, err
	}
	headers, err := boundHeaders(proof.Headers, contentHash)
	if err != nil {
		return Caller{}, err
	}
	status, body, err := v.replay(ctx, u, headers)
	if err != nil {
		return Caller{}, err
	}
	return caller(status, body)
}

// bad is the BadReleaseError of a proof that cannot name the caller.
func bad(format string, a ...any) error {
	return failure.BadRelease("identity: " + fmt.Sprintf(format, a...))
}

// check is what Verify knows of a proof before replaying it: a GET of
// sts:GetCallerIdentity to an endpoint v accepts, signing BindingHeader,
// with no query parameter given twice. It returns the request's URL.
func (v Verifier) check(proof *release.Identity) (*url.URL, error) {
	if proof == nil {
		return nil, bad("required: the client proves who asks with a pre-signed sts:GetCallerIdentity request (ferry deploy does)")
	}
	u, err := url.Parse(proof.URL)
	if err != nil {
		return nil, bad("url does not parse")
	}
	endpoint := v.Endpoint
	if endpoint == nil {
		endpoint = AWSEndpoint
	}
	if !endpoint(u) {
		return nil, bad("url %s://%s is not an STS endpoint the deployer calls", u.Scheme, u.Host)
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, bad("url query does not parse")
	}
	for k, vs := range q {
		if len(vs) != 1 {
			return nil, bad("url query parameter %q is given %d times", k, len(vs))
		}
	}
	switch {
	case proof.Method != http.MethodGet:
		return nil, bad("method %q: a pre-signed GetCallerIdentity request is a GET", proof.Method)
	case q.Get("Action") != "GetCallerIdentity":
		return nil, bad("the request is not sts:GetCallerIdentity")
	case !slices.Contains(strings.Split(q.Get("X-Amz-SignedHeaders"), ";"), strings.ToLower(BindingHeader)):
		return nil, bad("the request does not sign %s", BindingHeader)
	}
	return u, nil
}

// boundHeaders are the headers Verify sends: the proof's, each name given
// once whatever its case (a name given twice is refused: which of them a
// reader takes would depend on map order), without Host (net/http sets it
// from the URL), with BindingHeader set to contentHash.
func boundHeaders(headers map[string]string, contentHash string) (http.Header, error) {
	out := http.Header{}
	for k, val := range headers {
		if !headerName.MatchString(k) || strings.ContainsAny(val, "\r\n\x00") {
			return nil, bad("header %q is not a valid HTTP header", k)
		}
		name := http.CanonicalHeaderKey(k)
		if _, dup := out[name]; dup {
			return nil, bad("header %q is given more than once (header names are case-insensitive)", name)
		}
		out[name] = []string{val}
	}
	out.Del("Host")
	out.Set(BindingHeader, contentHash)
	return out, nil
}

// replay sends the pre-signed request to STS and returns its status and
// at most maxResponseBytes of its body. A request that never got an answer
// is a *failure.RetryableError.
func (v Verifier) replay(ctx context.Context, u *url.URL, headers http.Header) (status int, body []byte, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return 0, nil, bad("the request cannot be made: %v", err)
	}
	req.Header = headers
	client := v.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, &failure.RetryableError{Op: "identity: sts:GetCallerIdentity", Err: err}
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return 0, nil, &failure.RetryableError{Op: "identity: sts:GetCallerIdentity", Err: err}
	}
	if len(body) > maxResponseBytes {
		return 0, nil, bad("STS answered more than %d bytes", maxResponseBytes)
	}
	return resp.StatusCode, body, nil
}

// caller reads STS's answer: the caller it names, a refusal
// (*failure.BadReleaseError) or throttling and 5xx
// (*failure.RetryableError).
func caller(status int, body []byte) (Caller, error) {
	if status != http.StatusOK {
		code, msg := stsError(body)
		if status >= 500 || status == http.StatusTooManyRequests || code == "Throttling" {
			return Caller{}, &failure.RetryableError{Op: "identity: sts:GetCallerIdentity",
				Err: fmt.Errorf("HTTP %d %s", status, code)}
		}
		return Caller{}, bad("STS refused the proof (HTTP %d %s: %s)", status, code, msg)
	}
	var out struct {
		Result struct {
			Arn     string `xml:"Arn"`
			UserID  string `xml:"UserId"`
			Account string `xml:"Account"`
		} `xml:"GetCallerIdentityResult"`
	}
	if err := xml.NewDecoder(bytes.NewReader(body)).Decode(&out); err != nil || out.Result.Arn == "" {
		return Caller{}, bad("STS's answer names no caller")
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
