package sim

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	ststypes "github.com/aws/aws-sdk-go-v2/service/sts/types"

	"github.com/ferryhq/ferry/internal/cloud"
)

// STS is the simulated STS of a caller: the deployer, acting in its own
// account.
type STS struct {
	w      *World
	caller string
}

var _ cloud.STS = (*STS)(nil)

const serviceSTS = "STS"

// STS returns the STS API as seen by a caller in callerAccount. Its
// AssumeRole succeeds only for a role that exists in its account and trusts
// callerAccount; otherwise it is AccessDenied, as in AWS, which does not
// tell a missing role from one that does not trust the caller.
func (w *World) STS(callerAccount string) *STS { return &STS{w: w, caller: callerAccount} }

var sessionNameRE = regexp.MustCompile(`^[\w+=,.@-]{2,64}$`)

// AssumeRole issues credentials of a role. Their AccessKeyID names the
// session, which the world remembers with the role and account, so the
// clients Build makes act in that account until the credentials expire.
func (s *STS) AssumeRole(ctx context.Context, in *sts.AssumeRoleInput, _ ...func(*sts.Options)) (*sts.AssumeRoleOutput, error) {
	const op = "AssumeRole"
	v := view{w: s.w, service: serviceSTS, account: s.caller, region: "us-east-1"}
	if err := ctx.Err(); err != nil {
		return nil, opError(serviceSTS, op, sendError(err))
	}
	w := s.w
	w.mu.Lock()
	w.advance(w.clk.Now())
	call := Call{Service: serviceSTS, Op: op, Account: s.caller, At: w.now}
	w.calls.record(call)
	if err := w.faults.match(call); err != nil {
		w.mu.Unlock()
		return nil, opError(serviceSTS, op, err)
	}
	out, err := w.assumeRole(s.caller, in)
	return out, v.end(op, err)
}

func (w *World) assumeRole(caller string, in *sts.AssumeRoleInput) (*sts.AssumeRoleOutput, error) {
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
	accountID, roleName, ok := parseRoleARN(arn)
	if !ok {
		return nil, apiErrf("ValidationError", "%s is invalid", arn)
	}
	denied := apiErrf(cloud.CodeAccessDenied, "User: arn:aws:sts::%s:assumed-role/ferry-deployer/ferry is not authorized to perform: sts:AssumeRole on resource: %s", caller, arn)
	a := w.accounts[accountID]
	if a == nil {
		return nil, denied
	}
	r := a.roles[roleName]
	if r == nil || !r.trust[caller] || "arn:aws:iam::"+accountID+":role"+r.path+r.name != arn {
		return nil, denied
	}
	key := w.newID("ASIASIM", 13)
	expires := w.now.Add(time.Duration(dur) * time.Second)
	w.sessions[key] = &session{account: accountID, role: roleName, name: name, expires: expires}
	return &sts.AssumeRoleOutput{
		Credentials: &ststypes.Credentials{
			AccessKeyId: aws.String(key), SecretAccessKey: aws.String("sim-secret-" + key),
			SessionToken: aws.String("sim-token-" + key), Expiration: aws.Time(expires),
		},
		AssumedRoleUser: &ststypes.AssumedRoleUser{
			Arn:           aws.String(fmt.Sprintf("arn:aws:sts::%s:assumed-role/%s/%s", accountID, roleName, name)),
			AssumedRoleId: aws.String(r.id + ":" + name),
		},
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
// the target's asset store (the simulation has no S3).
func (w *World) Build(assets func(cloud.Target) cloud.AssetStore) func(t cloud.Target, deploy, publish aws.CredentialsProvider) *cloud.Clients {
	return func(t cloud.Target, deploy, _ aws.CredentialsProvider) *cloud.Clients {
		c := w.clients(t.AccountID, t.Region, deploy)
		c.Target = t
		if assets != nil {
			c.Assets = assets(t)
		}
		return c
	}
}

// Clients returns the clients of an account-region without credentials:
// every call acts in that account (for tests and tools that inspect or
// prepare the world). Assets is nil.
func (w *World) Clients(accountID, region string) *cloud.Clients {
	c := w.clients(accountID, region, nil)
	c.Target = cloud.Target{AccountID: accountID, Region: region}
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
// in callerAccount: it assumes roles with STS(callerAccount) and builds
// clients with Build(assets). opts.Clock defaults to the world's clock.
func (w *World) Connector(callerAccount string, assets func(cloud.Target) cloud.AssetStore, opts cloud.ConnectorOptions) *cloud.Connector {
	if opts.Clock == nil {
		opts.Clock = w.clk
	}
	return cloud.NewConnector(w.STS(callerAccount), w.Build(assets), opts)
}
