package sim

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
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
