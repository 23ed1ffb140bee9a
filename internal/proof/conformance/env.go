package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/ferryhq/ferry/client/submit"
	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/deployer"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/identity"
	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/local/region"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/target"
	"github.com/ferryhq/ferry/statemachine/definition"
)

// Coordinates of the run. DeployerAccount is moto's default account (the
// one a request whose access key moto did not issue acts in); SecondAccount
// is another account reached only through AssumeRole.
const (
	DeployerAccount = "123456789012"
	SecondAccount   = "210987654321"
	Region          = "us-east-1"
)

// clockLag is how far behind the wall clock the deployer's virtual clock
// starts. moto stamps objects (a halt marker's LastModified) with the
// wall clock while the deployer's Waits jump its virtual clock forward; a
// day's lag keeps every virtual instant of a scenario before every moto
// timestamp of it, as AWS's clock and the Lambda's agree.
const clockLag = 24 * time.Hour

// env is one scenario's world: moto (reset), the deployer with real SDK
// clients pointed at it, the state machine, and the simulation that stands
// in for CloudWatch.
type env struct {
	moto    *Moto
	root    string
	logger  *slog.Logger
	clk     *clock.Virtual
	awsCfg  aws.Config // the deployer's: its own account's credentials
	s3      *s3.Client // the deployer's own S3 client (its bucket)
	world   *sim.World // CloudWatch only
	dep     *deployer.Deployer
	machine *asl.Machine
	fnARN   string
	smARN   string
	seq     int
}

// newEnv resets moto, seeds both accounts over the wire and builds the
// deployer as lambdas/main.go does, with the endpoint of moto.
func newEnv(ctx context.Context, m *Moto, root string, logger *slog.Logger) (*env, error) {
	if err := m.Reset(ctx); err != nil {
		return nil, err
	}
	e := &env{
		moto: m, root: root, logger: logger,
		clk:   clock.NewVirtual(time.Now().UTC().Add(-clockLag).Truncate(time.Second)),
		fnARN: fmt.Sprintf("arn:aws:lambda:%s:%s:function:%s", Region, DeployerAccount, naming.DeployerFunctionName),
		smARN: naming.StateMachineARN(DeployerAccount, Region),
	}
	e.awsCfg = motoConfig(m.URL, "")
	world, err := sim.New(e.clk, sim.WorldSpec{Accounts: []sim.AccountSpec{
		{ID: DeployerAccount, Regions: []sim.RegionSpec{{Name: Region}}},
		{ID: SecondAccount, Regions: []sim.RegionSpec{{Name: Region}}},
	}})
	if err != nil {
		return nil, fmt.Errorf("conformance: the simulation's CloudWatch: %w", err)
	}
	e.world = world
	if err := e.seed(ctx); err != nil {
		return nil, err
	}
	e.s3 = s3.NewFromConfig(e.awsCfg)
	connector := cloud.NewConnector(sts.NewFromConfig(e.awsCfg), e.build(), cloud.ConnectorOptions{Clock: e.clk})
	// The executions run in ferry's interpreter, not in moto: the
	// deployer's confirmation of them is left out here and checked by the
	// local region's suites.
	e.dep, err = deployer.New(deployer.Config{
		Bucket:        naming.DeployerBucketName(DeployerAccount, Region),
		DefaultTarget: target.Target{AccountID: DeployerAccount, Region: Region},
		Clock:         e.clk,
		// One kept release, so a scenario's second release collects
		// what its first published.
		KeepReleases: 1,
		Logger:       logger.With("component", "deployer"),
	}, e.s3, connector)
	if err != nil {
		return nil, fmt.Errorf("conformance: %w", err)
	}
	e.machine, err = asl.Parse(definition.Render(e.fnARN))
	if err != nil {
		return nil, fmt.Errorf("conformance: the deploy state machine's definition: %w", err)
	}
	return e, nil
}

// bucket is the deployer bucket.
func (e *env) bucket() string { return naming.DeployerBucketName(DeployerAccount, Region) }

// motoConfig is an aws.Config as the Lambda's LoadDefaultConfig makes it
// (region, credentials, the SDK's defaults) with moto's endpoint. account,
// when set, adds moto's x-moto-account-id header so the harness seeds
// another account; the deployer's clients never carry it.
func motoConfig(url, account string) aws.Config {
	cfg := aws.Config{
		Region:       Region,
		Credentials:  credentials.NewStaticCredentialsProvider("AKIAFERRYCONFORMANCE", "conformance-secret", ""),
		BaseEndpoint: aws.String(url),
		HTTPClient:   &http.Client{Timeout: 30 * time.Second},
	}
	if account != "" {
		cfg.HTTPClient = &http.Client{Timeout: 30 * time.Second, Transport: accountHeader{account: account}}
	}
	return cfg
}

// accountHeader adds moto's x-moto-account-id header (harness only).
type accountHeader struct{ account string }

func (a accountHeader) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("x-moto-account-id", a.account)
	return http.DefaultTransport.RoundTrip(req)
}

// build is cloud.AWSBuilder over moto with one substitution: CloudWatch
// goes to the simulation, because the SDK's CloudWatch client speaks Smithy
// RPC v2 CBOR and moto 5.2.1 speaks only the query protocol for it.
func (e *env) build() func(t target.Target, deploy, publish aws.CredentialsProvider) *cloud.Clients {
	real := cloud.AWSBuilder(e.awsCfg)
	return func(t target.Target, deploy, publish aws.CredentialsProvider) *cloud.Clients {
		c := real(t, deploy, publish)
		c.CloudWatch = e.world.Clients(t.AccountID, t.Region).CloudWatch
		c.AutoScaling = accountLimitsFix{policyARNFix{AutoScaling: c.AutoScaling}}
		if register, ok := c.ELB.(elbRegistrar); ok {
			c.ELB = sharedELBFix{ELB: c.ELB, register: register, groups: c.AutoScaling}
		}
		return c
	}
}

// policyARNFix works around moto 5.2.1's PutScalingPolicy answer, which
// lacks the PolicyARN element AWS returns (Amazon EC2 Auto Scaling API
// Reference, PutScalingPolicy, Response Elements: PolicyARN): moto names
// the field PolicyArn, so the query serializer drops it. When the answer
// has none, it reads the policy's ARN back with DescribePolicies (which
// moto answers as AWS does), so the deployer sees AWS's answer.
type policyARNFix struct{ cloud.AutoScaling }

var _ cloud.AutoScaling = policyARNFix{}

func (f policyARNFix) PutScalingPolicy(ctx context.Context, in *autoscaling.PutScalingPolicyInput, optFns ...func(*autoscaling.Options)) (*autoscaling.PutScalingPolicyOutput, error) {
	out, err := f.AutoScaling.PutScalingPolicy(ctx, in, optFns...)
	if err != nil || out.PolicyARN != nil {
		return out, err
	}
	d, err := f.DescribePolicies(ctx, &autoscaling.DescribePoliciesInput{
		AutoScalingGroupName: in.AutoScalingGroupName, PolicyNames: []string{aws.ToString(in.PolicyName)},
	}, optFns...)
	if err != nil {
		return nil, err
	}
	if len(d.ScalingPolicies) != 1 {
		return nil, fmt.Errorf("conformance: moto has %d policies %s of group %s after PutScalingPolicy, want 1",
			len(d.ScalingPolicies), aws.ToString(in.PolicyName), aws.ToString(in.AutoScalingGroupName))
	}
	out.PolicyARN = d.ScalingPolicies[0].PolicyARN
	return out, nil
}

// defaultGroupQuota is Auto Scaling's default quota of groups per region
// (Amazon EC2 Auto Scaling User Guide, "Quotas": Auto Scaling groups per
// Region, 500).
const defaultGroupQuota = 500

// accountLimitsFix works around moto 5.2.1, which does not implement
// DescribeAccountLimits (it answers HTTP 500; its AutoScalingResponse has
// no describe_account_limits): it answers as AWS does for an account at
// the default quota, counting the region's groups with
// DescribeAutoScalingGroups (which moto answers as AWS does).
type accountLimitsFix struct{ cloud.AutoScaling }

var _ cloud.AutoScaling = accountLimitsFix{}

func (f accountLimitsFix) DescribeAccountLimits(ctx context.Context, _ *autoscaling.DescribeAccountLimitsInput, optFns ...func(*autoscaling.Options)) (*autoscaling.DescribeAccountLimitsOutput, error) {
	n := 0
	in := &autoscaling.DescribeAutoScalingGroupsInput{}
	for {
		out, err := f.DescribeAutoScalingGroups(ctx, in, optFns...)
		if err != nil {
			return nil, err
		}
		n += len(out.AutoScalingGroups)
		if out.NextToken == nil {
			break
		}
		in.NextToken = out.NextToken
	}
	return &autoscaling.DescribeAccountLimitsOutput{
		MaxNumberOfAutoScalingGroups: aws.Int32(defaultGroupQuota), NumberOfAutoScalingGroups: aws.Int32(int32(n)),
		MaxNumberOfLaunchConfigurations: aws.Int32(200), NumberOfLaunchConfigurations: aws.Int32(0),
	}, nil
}

// DescribePolicies is the part of moto's Auto Scaling API policyARNFix
// reads; it is not in cloud.AutoScaling, so it goes through the SDK
// client.
func (f policyARNFix) DescribePolicies(ctx context.Context, in *autoscaling.DescribePoliciesInput, optFns ...func(*autoscaling.Options)) (*autoscaling.DescribePoliciesOutput, error) {
	c, ok := f.AutoScaling.(*autoscaling.Client)
	if !ok {
		return nil, fmt.Errorf("conformance: the Auto Scaling client is a %T, not the SDK's", f.AutoScaling)
	}
	return c.DescribePolicies(ctx, in, optFns...)
}

// prepare reads testdata/conformance/<name> and prepares it as ferry deploy
// does (submit.Prepare, its identity proof pre-signed with the harness's
// credentials), with a release id unique in the scenario. edit, when set,
// changes the release first (its target account, its image).
func (e *env) prepare(ctx context.Context, name string, edit func(*release.Release)) (*submit.Prepared, error) {
	file := e.root + "/testdata/conformance/" + name
	r, err := release.ReadFile(file)
	if err != nil {
		return nil, err
	}
	if edit != nil {
		edit(r)
	}
	e.seq++
	now := e.clk.Now()
	id := fmt.Sprintf("%s-%d", now.UTC().Format("20060102T150405Z"), e.seq)
	signer := identity.Signer{Credentials: e.awsCfg.Credentials, Region: Region, Endpoint: e.moto.URL, Clock: e.clk}
	p, err := submit.Prepare(ctx, signer, r, file, now, "conformance", id)
	if err != nil {
		return nil, fmt.Errorf("conformance: preparing %s: %w", name, err)
	}
	return p, nil
}

// run uploads the release's assets and the release as ferry deploy does
// (submit.Deployer), then runs its execution of the deploy state machine
// to the end in ferry's interpreter (moto has no Step Functions that
// invokes a function in process), its Task states invoking the deployer
// in-process. observe, when set, sees every history event.
func (e *env) run(ctx context.Context, p *submit.Prepared, observe func(asl.Event)) (*asl.Execution, error) {
	d := submit.Deployer{Bucket: e.bucket(), StateMachineARN: e.smARN, S3: e.s3}
	if err := d.Upload(ctx, p); err != nil {
		return nil, fmt.Errorf("conformance: %w", err)
	}
	x, err := asl.Run(ctx, e.machine, asl.RunOptions{
		Input:           p.Raw,
		Name:            p.ExecutionName(),
		StateMachineARN: e.smARN,
		Clock:           e.clk,
		Waiter:          asl.VirtualWaiter{Clock: e.clk},
		Invoker: region.TaskInvoker(e.fnARN, func(ctx context.Context, req execution.Request) (json.RawMessage, error) {
			return e.dep.Invoke(ctx, req)
		}),
		Observer: observe,
	})
	if err != nil {
		return nil, fmt.Errorf("conformance: running %s: %w", p.Release.ReleaseID, err)
	}
	return x, nil
}

// discard is a logger that drops everything.
func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
