package deployer

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/identity"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/target"
)

// Executions is the Step Functions API the deployer calls to confirm that a
// task runs for the execution it names (*sfn.Client).
type Executions interface {
	DescribeExecution(ctx context.Context, in *sfn.DescribeExecutionInput, optFns ...func(*sfn.Options)) (*sfn.DescribeExecutionOutput, error)
}

// Identities verifies a release's identity proof (identity.Verifier).
type Identities interface {
	Verify(ctx context.Context, proof *release.Identity, contentHash string) (identity.Caller, error)
}

var (
	_ Executions = (*sfn.Client)(nil)
	_ Identities = identity.Verifier{}
)

// verifyIdentity returns the caller r's identity proof names, zero when
// the deployer verifies no proofs. A missing or invalid proof is a
// *failure.BadReleaseError; a transient failure a *failure.RetryableError.
func (d *Deployer) verifyIdentity(ctx context.Context, r *release.Release) (identity.Caller, error) {
	if d.cfg.Identities == nil {
		return identity.Caller{}, nil
	}
	sum, err := release.IdentityHash(r)
	if err != nil {
		return identity.Caller{}, failure.BadRelease(fmt.Sprintf("release: %v", err))
	}
	return d.verifyCaller(ctx, r.Identity, sum)
}

// verifyCaller verifies proof, bound to sum, with Config.Identities and
// accepts the caller it names only from an account the deployer accepts
// proofs from (Config.IdentityAccounts) or one of also (the accounts a
// pipeline names for its approvers). A caller of another account is a
// *failure.BadReleaseError naming it; Verify's errors are returned as
// they are.
func (d *Deployer) verifyCaller(ctx context.Context, proof *release.Identity, sum string, also ...string) (identity.Caller, error) {
	caller, err := d.cfg.Identities.Verify(ctx, proof, sum)
	if err != nil {
		return identity.Caller{}, err
	}
	accounts := append(slices.Clone(d.cfg.IdentityAccounts), also...)
	if !slices.Contains(accounts, caller.Account) {
		return identity.Caller{}, failure.BadRelease(fmt.Sprintf("identity: the proof names %s of account %s; the deployer accepts proofs from accounts %s only",
			caller.ARN, caller.Account, strings.Join(accounts, ", ")))
	}
	return caller, nil
}

// confirmExecution checks that req runs for a RUNNING execution of the
// deployer's state machine, never redriven, whose input is the release
// named by project, config, release id and canonical hash sum. It is what
// makes a forged request harmless: the Lambda may be invoked by anyone
// its resource policy and their IAM allow, with any input, but only Step
// Functions runs an execution, and an execution's input cannot change.
//
// A request that fails the check is a *failure.InternalError: nothing a
// state machine execution sends fails it. A transient failure to describe
// the execution is a *failure.RetryableError. Without Config.Executions the
// check is skipped (tests of single handlers); the deployer's Lambda
// always has it.
func (d *Deployer) confirmExecution(ctx context.Context, req execution.Request, project, config, releaseID, sum string) error {
	input, err := d.runningInput(ctx, req)
	if err != nil || d.cfg.Executions == nil {
		return err
	}
	return d.confirmRelease(req, input, project, config, releaseID, sum)
}

// runningInput is the input of req's execution once it is confirmed a
// RUNNING execution of the deployer's state machine, never redriven
// (see confirmExecution); nil without Config.Executions.
func (d *Deployer) runningInput(ctx context.Context, req execution.Request) ([]byte, error) {
	if d.cfg.Executions == nil {
		return nil, nil
	}
	out, err := d.cfg.Executions.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(req.Execution.ID)})
	if err != nil {
		return nil, cloud.ClassifyAs("describe execution "+req.Execution.ID, err, func(_ string, err error) error {
			return refuseRequest(req, "cannot be described (%v)", err)
		})
	}
	switch {
	case aws.ToString(out.StateMachineArn) != d.cfg.StateMachineARN:
		return nil, refuseRequest(req, "belongs to %s, not to the deployer's state machine %s", aws.ToString(out.StateMachineArn), d.cfg.StateMachineARN)
	case out.Status != sfntypes.ExecutionStatusRunning:
		return nil, refuseRequest(req, "is %s, not RUNNING", out.Status)
	case aws.ToInt32(out.RedriveCount) > 0:
		return nil, refuseRequest(req, "was redriven (%d times); a release runs once", aws.ToInt32(out.RedriveCount))
	}
	return []byte(aws.ToString(out.Input)), nil
}

// confirmRelease checks that input, an execution's, is the release named
// by project, config, release id and canonical hash sum.
func (d *Deployer) confirmRelease(req execution.Request, input []byte, project, config, releaseID, sum string) error {
	got, err := d.confirmed.named(input)
	if err != nil {
		return refuseRequest(req, "its input is not a release: %v", err)
	}
	if got != (releaseName{project: project, config: config, releaseID: releaseID, sum: sum}) {
		return refuseRequest(req, "runs release %s/%s/%s (sha256 %s), not %s/%s/%s (sha256 %s)",
			got.project, got.config, got.releaseID, got.sum, project, config, releaseID, sum)
	}
	return nil
}

// releaseName is what names a release: its project, config, id and
// canonical hash.
type releaseName struct{ project, config, releaseID, sum string }

// maxConfirmedInputs bounds the execution inputs confirmedInputs
// remembers; past it, it forgets them all.
const maxConfirmedInputs = 16

// confirmedInputs remembers, by their SHA-256, the execution inputs
// confirmRelease read and the release each names: an execution's input
// never changes, and every task of an execution confirms it, so a Lambda
// container decodes and hashes each release once, not at every task.
// It is safe for concurrent use.
type confirmedInputs struct {
	mu   sync.Mutex
	seen map[[sha256.Size]byte]releaseName
}

// named is the release input names (decoded, with defaults applied).
func (c *confirmedInputs) named(input []byte) (releaseName, error) {
	key := sha256.Sum256(input)
	c.mu.Lock()
	n, ok := c.seen[key]
	c.mu.Unlock()
	if ok {
		return n, nil
	}
	r, err := release.Decode(input)
	if err != nil {
		return releaseName{}, err
	}
	r.ApplyDefaults()
	sum, err := release.Hash(r)
	if err != nil {
		return releaseName{}, err
	}
	n = releaseName{project: r.ProjectName, config: r.ConfigName, releaseID: r.ReleaseID, sum: sum}
	c.mu.Lock()
	if c.seen == nil || len(c.seen) >= maxConfirmedInputs {
		c.seen = map[[sha256.Size]byte]releaseName{}
	}
	c.seen[key] = n
	c.mu.Unlock()
	return n, nil
}

// refuseRequest is the *failure.InternalError of a request its execution
// does not confirm.
func refuseRequest(req execution.Request, format string, a ...any) error {
	return &failure.InternalError{Msg: fmt.Sprintf("task %s: execution %s: %s", req.Task, req.Execution.ID, fmt.Sprintf(format, a...))}
}

// verify is how every task after Validate starts: the State it is given
// (decodeState), confirmed to be its execution's (confirmExecution).
// Fields the State carries for the release (target, services, timeout,
// bake)
// are not trusted from it: loadRelease re-derives them from the verified
// release before anything reaches the target.
func (d *Deployer) verify(ctx context.Context, req execution.Request) (*execution.State, error) {
	st, err := decodeState(req)
	if err != nil {
		return nil, err
	}
	if err := d.confirmExecution(ctx, req, st.ProjectName, st.ConfigName, st.ReleaseID, st.ReleaseSHA256); err != nil {
		return nil, err
	}
	return st, nil
}

// target is the environment r deploys into. A release that names none of
// account, region and qualifier deploys into the deployer's default target
// (with its qualifier); otherwise account and region default to the
// deployer's own and the qualifier is the release's (a default qualifier
// belongs to the default environment only).
func (d *Deployer) target(r *release.Release) target.Target {
	t := d.cfg.DefaultTarget
	if r.AccountID != "" {
		t.AccountID = r.AccountID
	}
	if r.Region != "" {
		t.Region = r.Region
	}
	if r.Qualifier != "" || r.AccountID != "" || r.Region != "" {
		t.Qualifier = r.Qualifier
	}
	return t
}

// loadRelease reads the release a State names from the deployer bucket,
// applies defaults, checks that it is the release Validate accepted
// (fetchRelease) and sets the State's target, services, timeout and bake
// from it (adopt).
func (d *Deployer) loadRelease(ctx context.Context, st *execution.State) (*release.Release, error) {
	r, err := d.fetchRelease(ctx, st)
	if err != nil {
		return nil, err
	}
	d.adopt(st, r)
	return r, nil
}

// fetchRelease reads the release a State names from the deployer bucket,
// applies defaults and checks that it is the release Validate accepted.
// It does not write the State.
func (d *Deployer) fetchRelease(ctx context.Context, st *execution.State) (*release.Release, error) {
	r, err := d.ledger.GetRelease(ctx, st.ProjectName, st.ConfigName, st.ReleaseID)
	if err != nil {
		return nil, err
	}
	r.ApplyDefaults()
	sum, err := release.Hash(r)
	if err != nil {
		return nil, failure.BadRelease(fmt.Sprintf("release copy in the deployer bucket: %v", err))
	}
	if sum != st.ReleaseSHA256 {
		return nil, failure.BadRelease("release in the deployer bucket changed after Validate accepted it")
	}
	return r, nil
}

// adopt sets the State's target, services, timeout and bake from r, the
// verified release it names: what the State says of the release is
// re-derived from it, never trusted, and a task reaches only the
// verified release's target.
func (d *Deployer) adopt(st *execution.State, r *release.Release) {
	st.Target, st.Services, st.Timeout, st.BakeSeconds = d.target(r), r.ServiceNames(), r.Timeout, r.BakeSeconds
}
