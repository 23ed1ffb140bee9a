package sim

import (
	"context"
	"crypto/hmac"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	ststypes "github.com/aws/aws-sdk-go-v2/service/sts/types"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/naming"
	environment "github.com/ferryhq/ferry/internal/target"
)

// STS is the simulated STS of a caller: a principal (the deployer's Lambda
// role, by default) acting in its own account.
type STS struct {
	w       *World
	caller  string // the caller's principal ARN
	account string
}

var _ cloud.STS = (*STS)(nil)

const serviceSTS = "STS"

// CallerRegion is the region of the deployer's Lambda role STS(account)
// acts as (naming.DeployerRoleName): STS is global, and a bootstrap role
// trusts the deployer role of every region alike.
const CallerRegion = "us-east-1"

// STS returns the STS API as seen by the deployer's Lambda role in
// callerAccount (naming.DeployerRoleName(CallerRegion)); see STSAs.
func (w *World) STS(callerAccount string) *STS {
	return w.STSAs(naming.RoleARN(callerAccount, naming.DeployerRoleName(CallerRegion)))
}

// STSAs returns the STS API as seen by the principal callerARN (a role or
// user ARN, arn:aws:iam::<account>:role/<name>). Its AssumeRole succeeds
// only for a role that exists in its account and trusts the caller;
// otherwise it is AccessDenied, as in AWS, which does not tell a missing
// role from one that does not trust the caller. A bootstrap role (ferry's
// deploy and publish roles) trusts, in each account its spec lists, only
// the deployer's Lambda role (a role named naming.DeployerRoleNamePattern),
// and only with the session tags ProjectName and ConfigName
// (naming.SessionTagKeys), the project one of the patterns its Projects
// accepts (naming.ProjectAccepted), as the bootstrap template's trust
// policy says, which also allows it to set a source identity; another role trusts every
// principal of the accounts it lists, without a source identity.
func (w *World) STSAs(callerARN string) *STS {
	account := ""
	if rest, ok := strings.CutPrefix(callerARN, "arn:aws:iam::"); ok {
		account, _, _ = strings.Cut(rest, ":")
	}
	return &STS{w: w, caller: callerARN, account: account}
}

var (
	sessionNameRE = regexp.MustCompile(`^[\w+=,.@-]{2,64}$`)
	tagKeyRE      = regexp.MustCompile(`^[\p{L}\p{Z}\p{N}_.:/=+\-@]{1,128}$`)
	tagValueRE    = regexp.MustCompile(`^[\p{L}\p{Z}\p{N}_.:/=+\-@]{0,256}$`)
)

// AssumeRole issues credentials of a role. Their AccessKeyID names the
// session, which the world remembers with the role, the account and the
// session tags, so the clients Build makes act in that account, as that
// session, until the credentials expire.
func (s *STS) AssumeRole(ctx context.Context, in *sts.AssumeRoleInput, _ ...func(*sts.Options)) (*sts.AssumeRoleOutput, error) {
	const op = "AssumeRole"
	v := view{w: s.w, service: serviceSTS, account: s.account, region: CallerRegion}
	if err := ctx.Err(); err != nil {
		return nil, opError(serviceSTS, op, sendError(err))
	}
	w := s.w
	w.mu.Lock()
	w.advance(w.clk.Now())
	call := Call{Service: serviceSTS, Op: op, Account: s.account, At: w.now, Principal: s.caller, Auth: assumeAuths(in), SourceIdentity: deref(in.SourceIdentity)}
	w.calls.record(call)
	if err := w.faults.match(call); err != nil {
		w.mu.Unlock()
		return nil, opError(serviceSTS, op, err)
	}
	out, err := w.assumeRole(s.caller, s.account, in)
	return out, v.end(op, err)
}

// assumeAuths are the authorizations of an AssumeRole: sts:AssumeRole on
// the role, sts:TagSession with the session tags when it has any
// ("Passing session tags in AWS STS", IAM User Guide), and
// sts:SetSourceIdentity when it sets a source identity ("Monitor and
// control actions taken with assumed roles": "the role trust policy must
// allow the sts:SetSourceIdentity action").
func assumeAuths(in *sts.AssumeRoleInput) []Auth {
	tags := map[string]string{}
	for _, t := range in.Tags {
		tags[deref(t.Key)] = deref(t.Value)
	}
	if len(tags) == 0 {
		tags = nil
	}
	// sts:SourceIdentity is in the request context of each of them
	// ("Available keys for AWS STS": "sts:SourceIdentity").
	var context map[string][]string
	if in.SourceIdentity != nil {
		context = map[string][]string{"sts:SourceIdentity": {deref(in.SourceIdentity)}}
	}
	auth := func(action string) Auth {
		return Auth{Action: action, Resource: deref(in.RoleArn), RequestTags: tags, Context: context}
	}
	auths := []Auth{auth("sts:AssumeRole")}
	if tags != nil {
		auths = append(auths, auth("sts:TagSession"))
	}
	if in.SourceIdentity != nil {
		auths = append(auths, auth("sts:SetSourceIdentity"))
	}
	return auths
}

// callerSession is how IAM's errors name a caller: the Lambda's session
// of a role, or the principal itself.
func callerSession(callerARN string) string {
	if rest, ok := strings.CutPrefix(callerARN, "arn:aws:iam::"); ok {
		if account, role, ok := strings.Cut(rest, ":role/"); ok {
			return "arn:aws:sts::" + account + ":assumed-role/" + role[strings.LastIndex(role, "/")+1:] + "/" + naming.DeployerFunctionName
		}
	}
	return callerARN
}

func (w *World) assumeRole(caller, callerAccount string, in *sts.AssumeRoleInput) (*sts.AssumeRoleOutput, error) {
	arn, name := deref(in.RoleArn), deref(in.RoleSessionName)
	if !sessionNameRE.MatchString(name) {
		return nil, apiErrf("ValidationError", "1 validation error detected: Value '%s' at 'roleSessionName' failed to satisfy constraint: Member must satisfy regular expression pattern: [\\w+=,.@-]*", name)
	}
	dur := int32(3600)
	if in.DurationSeconds != nil {
		dur = *in.DurationSeconds
	}
	if dur < 900 || dur > 43200 {
		return nil, apiErrf("ValidationError", "The requested DurationSeconds %d must be between 900 and 43200 seconds", dur)
	}
	if len(in.Tags) > 50 {
		return nil, apiErr("ValidationError", "1 validation error detected: Value at 'tags' failed to satisfy constraint: Member must have length less than or equal to 50")
	}
	source := deref(in.SourceIdentity)
	if in.SourceIdentity != nil && (!sessionNameRE.MatchString(source) || strings.HasPrefix(source, "aws:")) {
		return nil, apiErrf("ValidationError", "1 validation error detected: Value '%s' at 'sourceIdentity' failed to satisfy constraint: Member must satisfy regular expression pattern: [\\w+=,.@-]*", source)
	}
	tags := map[string]string{}
	lower := map[string]bool{}
	for _, t := range in.Tags {
		k, v := deref(t.Key), deref(t.Value)
		if !tagKeyRE.MatchString(k) || !tagValueRE.MatchString(v) {
			return nil, apiErrf("ValidationError", "1 validation error detected: Value '%s' at 'tags' failed to satisfy constraint: Member must satisfy regular expression pattern: [\\p{L}\\p{Z}\\p{N}_.:/=+\\-@]+", k)
		}
		if lower[strings.ToLower(k)] {
			return nil, apiErrf("InvalidParameterValue", "Duplicate tag keys found. Please note that Tag keys are case insensitive.")
		}
		lower[strings.ToLower(k)] = true
		tags[k] = v
	}
	accountID, roleName, ok := parseRoleARN(arn)
	if !ok {
		return nil, apiErrf("ValidationError", "%s is invalid", arn)
	}
	denied := apiErrf(cloud.CodeAccessDenied, "User: %s is not authorized to perform: sts:AssumeRole on resource: %s", callerSession(caller), arn)
	a := w.accounts[accountID]
	if a == nil {
		return nil, denied
	}
	r := a.roles[roleName]
	if r == nil || !r.trust[callerAccount] || "arn:aws:iam::"+accountID+":role"+r.path+r.name != arn {
		return nil, denied
	}
	if in.SourceIdentity != nil && r.bootstrap == "" {
		// Only the bootstrap roles' trust allows sts:SetSourceIdentity.
		return nil, denied
	}
	if r.bootstrap != "" {
		_, callerRole, isRole := strings.Cut(caller, ":role/")
		if !isRole || !naming.WildcardMatch(naming.DeployerRoleNamePattern, callerRole) {
			return nil, denied
		}
		for _, k := range naming.SessionTagKeys() {
			if tags[k] == "" {
				return nil, denied
			}
		}
		if !naming.ProjectAccepted(r.projects, tags[naming.TagProjectName]) {
			return nil, denied
		}
	}
	key := w.newID("ASIASIM", 13)
	expires := w.now.Add(time.Duration(dur) * time.Second)
	w.sessions[key] = &session{account: accountID, role: roleName, name: name, expires: expires, tags: tags,
		deploy: r.bootstrap == bootstrapDeploy, sourceIdentity: source}
	return &sts.AssumeRoleOutput{
		Credentials: &ststypes.Credentials{
			AccessKeyId: aws.String(key), SecretAccessKey: aws.String("sim-secret-" + key),
			SessionToken: aws.String("sim-token-" + key), Expiration: aws.Time(expires),
		},
		AssumedRoleUser: &ststypes.AssumedRoleUser{
			Arn:           aws.String(fmt.Sprintf("arn:aws:sts::%s:assumed-role/%s/%s", accountID, roleName, name)),
			AssumedRoleId: aws.String(r.id + ":" + name),
		},
		PackedPolicySize: aws.Int32(int32(len(tags))),
	}, nil
}

// Sessions returns how many role sessions STS has issued.
func (w *World) Sessions() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.sessions)
}

// Build returns a build function for cloud.NewConnector: the clients of
// the target's account-region, each signing with the credentials it is
// given. Every call retrieves its credentials and the world refuses keys it
// did not issue (InvalidClientTokenId), expired ones (ExpiredToken) and
// sessions of another account (AccessDenied). Assets, when given, supplies
// the target's asset store (the simulation has no S3), which the publish
// role's session then calls within what the bootstrap grants it
// (publishScope).
func (w *World) Build(assets func(environment.Target) cloud.AssetStore) func(t environment.Target, deploy, publish aws.CredentialsProvider) *cloud.Clients {
	return func(t environment.Target, deploy, publish aws.CredentialsProvider) *cloud.Clients {
		c := w.clients(t.AccountID, t.Region, deploy)
		c.Target = t
		if assets != nil {
			c.Assets = assets(t)
			if publish != nil {
				c.Assets = publishScope{w: w, t: t, creds: publish, next: c.Assets}
			}
		}
		return c
	}
}

// Clients returns the clients of an account-region without credentials:
// every call acts in that account (for tests and tools that inspect or
// prepare the world). Assets is nil.
func (w *World) Clients(accountID, region string) *cloud.Clients {
	c := w.clients(accountID, region, nil)
	c.Target = environment.Target{AccountID: accountID, Region: region}
	return c
}

func (w *World) clients(accountID, region string, creds aws.CredentialsProvider) *cloud.Clients {
	v := func(service string) view {
		return view{w: w, service: service, account: accountID, region: region, creds: creds}
	}
	return &cloud.Clients{
		EC2:         &EC2{v(serviceEC2)},
		AutoScaling: &AutoScaling{v(serviceAutoScaling)},
		ELB:         &ELB{v(serviceELB)},
		ELBv2:       &ELBv2{v(serviceELBv2)},
		IAM:         &IAM{v(serviceIAM)},
		SNS:         &SNS{v(serviceSNS)},
		CloudWatch:  &CloudWatch{v(serviceCloudWatch)},
		EventBridge: &EventBridge{v(serviceEventBridge)},
	}
}

// Connector returns a cloud.Connector over the simulation for a deployer
// in callerAccount: it assumes roles with STS(callerAccount) (as the
// deployer's Lambda role) and builds
// clients with Build(assets). opts.Clock defaults to the world's clock.
func (w *World) Connector(callerAccount string, assets func(environment.Target) cloud.AssetStore, opts cloud.ConnectorOptions) *cloud.Connector {
	if opts.Clock == nil {
		opts.Clock = w.clk
	}
	return cloud.NewConnector(w.STS(callerAccount), w.Build(assets), opts)
}

// accessKey is a long-term access key of an IAM user (AddAccessKey).
type accessKey struct {
	secret, arn, userID, account string
}

// AddAccessKey gives the IAM user userARN (arn:aws:iam::ACCOUNT:user/NAME),
// whose unique id (GetCallerIdentity's UserId, "AIDA..." as IAM makes
// them) is userID, the long-term access key accessKeyID with secret: what
// a person signs an identity proof with.
func (w *World) AddAccessKey(userARN, userID, accessKeyID, secret string) error {
	rest, ok := strings.CutPrefix(userARN, "arn:aws:iam::")
	account, name, _ := strings.Cut(rest, ":user/")
	if !ok || len(account) != 12 || name == "" || userID == "" {
		return fmt.Errorf("sim: %q is not an IAM user ARN, or %q no unique id", userARN, userID)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.keys == nil {
		w.keys = map[string]*accessKey{}
	}
	w.keys[accessKeyID] = &accessKey{secret: secret, arn: userARN, userID: userID, account: account}
	return nil
}

// Issued reports whether the world knows the access key accessKeyID: a
// user's (AddAccessKey) or a role session's it issued, expired or not.
func (p *ProofSTS) Issued(accessKeyID string) bool {
	p.w.mu.Lock()
	defer p.w.mu.Unlock()
	return p.w.keys[accessKeyID] != nil || p.w.sessions[accessKeyID] != nil
}

// presignedLifetime is the longest STS accepts a pre-signed request after
// its X-Amz-Date, whatever its X-Amz-Expires: 15 minutes (a presigned
// sts:GetCallerIdentity is refused past 900 seconds; "a value other than
// 900 does not work for anything other than S3", github.com/aws/aws-sdk-ruby
// issue 2887; the SDKs presign it for 900 seconds: AWS SDK for Ruby,
// Aws::STS::Presigner#get_caller_identity_presigned_url).
const presignedLifetime = 15 * time.Minute

// ProofSTS is STS's endpoint as a replayed identity proof reaches it: it
// answers a pre-signed (query-signed, SigV4) sts:GetCallerIdentity GET
// as AWS does (AWS STS API Reference, GetCallerIdentity; IAM User Guide,
// "Authenticating Requests: Using Query Parameters (AWS Signature Version
// 4)"). The signature is checked over exactly the request sent: its URL
// and the values of the headers X-Amz-SignedHeaders names as they arrive
// (a header given again with another value, or a signed header missing,
// fails the signature: 403 SignatureDoesNotMatch). Keys are the world's
// role sessions (AssumeRole) and users' keys (AddAccessKey); another key
// is 403 InvalidClientTokenId. A request more than
// X-Amz-Expires (at most 15 minutes) after its X-Amz-Date, or signed with
// an expired session, is 403 ExpiredToken.
type ProofSTS struct{ w *World }

// ProofSTS returns the world's STS endpoint for identity proofs.
func (w *World) ProofSTS() *ProofSTS { return &ProofSTS{w: w} }

// Do answers req (identity.Doer).
func (p *ProofSTS) Do(req *http.Request) (*http.Response, error) {
	c, err := p.w.presignedCaller(req)
	if err != nil {
		var e *stsRefusal
		if !errors.As(err, &e) {
			return nil, err
		}
		return stsResponse(e.status, fmt.Sprintf(`<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type><Code>%s</Code><Message>%s</Message></Error><RequestId>sim</RequestId></ErrorResponse>`, e.code, xmlEscape(e.msg))), nil
	}
	return stsResponse(http.StatusOK, fmt.Sprintf(`<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><GetCallerIdentityResult><Arn>%s</Arn><UserId>%s</UserId><Account>%s</Account></GetCallerIdentityResult><ResponseMetadata><RequestId>sim</RequestId></ResponseMetadata></GetCallerIdentityResponse>`,
		xmlEscape(c.arn), xmlEscape(c.userID), c.account)), nil
}

// stsRefusal is how STS refuses a request: status, code and message.
type stsRefusal struct {
	status    int
	code, msg string
}

func (e *stsRefusal) Error() string { return e.code + ": " + e.msg }

func refused(code, format string, a ...any) error {
	return &stsRefusal{status: http.StatusForbidden, code: code, msg: fmt.Sprintf(format, a...)}
}

func stsResponse(status int, body string) *http.Response {
	return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"text/xml"}}, Body: io.NopCloser(strings.NewReader(body))}
}

func xmlEscape(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// presignedCaller checks req, a pre-signed GetCallerIdentity, and
// returns the caller its key names (see ProofSTS).
func (w *World) presignedCaller(req *http.Request) (*accessKey, error) {
	q, err := url.ParseQuery(req.URL.RawQuery)
	if err != nil || req.Method != http.MethodGet {
		return nil, &stsRefusal{status: http.StatusBadRequest, code: "MalformedQueryString", msg: "the request is not a query-signed GET"}
	}
	if q.Get("Action") != "GetCallerIdentity" || q.Get("X-Amz-Algorithm") != "AWS4-HMAC-SHA256" {
		return nil, &stsRefusal{status: http.StatusBadRequest, code: "InvalidAction", msg: "not a pre-signed GetCallerIdentity"}
	}
	scope := strings.Split(q.Get("X-Amz-Credential"), "/")
	signedAt, terr := time.Parse("20060102T150405Z", q.Get("X-Amz-Date"))
	expires, eerr := strconv.Atoi(q.Get("X-Amz-Expires"))
	if len(scope) != 5 || scope[3] != "sts" || scope[4] != "aws4_request" || terr != nil || eerr != nil || expires < 1 {
		return nil, &stsRefusal{status: http.StatusBadRequest, code: "IncompleteSignature", msg: "the credential scope, date or expiry of the request is malformed"}
	}
	w.mu.Lock()
	now := w.clk.Now()
	key, token, err := w.keyOf(scope[0], now)
	w.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if now.After(signedAt.Add(min(time.Duration(expires)*time.Second, presignedLifetime))) {
		return nil, refused("ExpiredToken", "Request has expired: signed at %s, now %s", signedAt.Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	want, err := presignature(req, q, aws.Credentials{AccessKeyID: scope[0], SecretAccessKey: key.secret, SessionToken: token}, scope[2], signedAt)
	if err != nil {
		return nil, err
	}
	if !hmac.Equal([]byte(want), []byte(q.Get("X-Amz-Signature"))) {
		return nil, refused("SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided.")
	}
	return key, nil
}

// keyOf is the secret, and the session token, of an access key the world
// issued: a user's, or a role session's while it lasts. w.mu is held.
func (w *World) keyOf(accessKeyID string, now time.Time) (*accessKey, string, error) {
	if k := w.keys[accessKeyID]; k != nil {
		return k, "", nil
	}
	s := w.sessions[accessKeyID]
	if s == nil {
		return nil, "", refused("InvalidClientTokenId", "The security token included in the request is invalid.")
	}
	if !now.Before(s.expires) {
		return nil, "", refused("ExpiredToken", "The security token included in the request is expired")
	}
	var roleID string
	if a := w.accounts[s.account]; a != nil && a.roles[s.role] != nil {
		roleID = a.roles[s.role].id
	}
	return &accessKey{secret: "sim-secret-" + accessKeyID, account: s.account,
		arn: fmt.Sprintf("arn:aws:sts::%s:assumed-role/%s/%s", s.account, s.role, s.name), userID: roleID + ":" + s.name}, "sim-token-" + accessKeyID, nil
}

// presignature is the signature STS computes for req: its URL without
// X-Amz-Signature, and the headers X-Amz-SignedHeaders names with the
// values they arrive with (several values joined by commas, as SigV4's
// canonical headers join them), signed with creds at signedAt.
func presignature(req *http.Request, q url.Values, creds aws.Credentials, region string, signedAt time.Time) (string, error) {
	u := *req.URL
	if u.Host == "" { // a request as a server receives it
		u.Scheme, u.Host = "http", req.Host
	}
	q = maps.Clone(q)
	q.Del("X-Amz-Signature")
	u.RawQuery = q.Encode()
	r, err := http.NewRequestWithContext(req.Context(), http.MethodGet, u.String(), nil)
	if err != nil {
		return "", refused("SignatureDoesNotMatch", "the request cannot be read: %v", err)
	}
	if req.Host != "" {
		r.Host = req.Host
	}
	for _, name := range strings.Split(q.Get("X-Amz-SignedHeaders"), ";") {
		if vs := req.Header.Values(name); name != "host" && len(vs) > 0 {
			r.Header.Set(name, strings.Join(vs, ","))
		}
	}
	signed, _, err := v4.NewSigner().PresignHTTP(req.Context(), creds, r, emptyPayloadSHA256, "sts", region, signedAt)
	if err != nil {
		return "", refused("SignatureDoesNotMatch", "the request cannot be signed: %v", err)
	}
	su, err := url.Parse(signed)
	if err != nil {
		return "", refused("SignatureDoesNotMatch", "the request cannot be signed: %v", err)
	}
	return su.Query().Get("X-Amz-Signature"), nil
}

// emptyPayloadSHA256 is the hex SHA-256 of the empty payload of a GET.
const emptyPayloadSHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
