package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	osuser "os/user"
	"regexp"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/arn"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/logging"
	"github.com/aws/smithy-go/middleware"

	"github.com/ferryhq/ferry/client/submit"
	"github.com/ferryhq/ferry/internal/identity"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/target"
)

// Environment variables the client reads (through Env.Getenv). The AWS SDK
// reads its own (AWS_PROFILE, AWS_REGION, AWS_ENDPOINT_URL, ...) from the
// process environment.
const (
	// envStateMachine and envBucket name the deployer when --state-machine
	// and --bucket are not given.
	envStateMachine = "FERRY_STATE_MACHINE_ARN"
	envBucket       = "FERRY_BUCKET"
	// envLocalEndpoint is where --local finds the local region.
	envLocalEndpoint = "FERRY_LOCAL_ENDPOINT"
	// envCreatedBy overrides who the client says asked for a release or a
	// halt; otherwise USER (or LOGNAME).
	envCreatedBy = "FERRY_CREATED_BY"
)

// Defaults of the local region (ferry local).
const (
	defaultLocalEndpoint = "http://" + localAddr
	localRegion          = "us-east-1"
	// localInfoPath is the local region's description of itself: the
	// deployer's state machine ARN and bucket.
	localInfoPath = "/_ferry/info"
)

// defaultPollInterval is how often the client reads an execution's history
// while following it.
const defaultPollInterval = time.Second

// deployerFlags are the flags of every command that talks to the deployer.
type deployerFlags struct {
	stateMachine string
	bucket       string
	local        bool
	// region and profile, when set, are the AWS region and the shared
	// config profile of a deployer in AWS (over AWS_REGION, AWS_PROFILE).
	region  string
	profile string
}

// command is the command line "ferry NAME" (a command, or a command and
// its subcommand: "pipeline status") with the deployer flags given and
// args, each word shell-quoted: a hint that pastes as is and reaches the
// same deployer.
func (f *deployerFlags) command(name string, args ...string) string {
	words := append([]string{"ferry"}, strings.Fields(name)...) // "pipeline status": a command and its subcommand
	if f.local {
		words = append(words, "--local")
	}
	if f.stateMachine != "" {
		words = append(words, "--state-machine", f.stateMachine)
	}
	if f.bucket != "" {
		words = append(words, "--bucket", f.bucket)
	}
	if f.region != "" {
		words = append(words, "--region", f.region)
	}
	if f.profile != "" {
		words = append(words, "--profile", f.profile)
	}
	words = append(words, args...)
	for i, w := range words {
		words[i] = shellQuote(w)
	}
	return strings.Join(words, " ")
}

// shellSafe is a word a POSIX shell reads as itself.
var shellSafe = regexp.MustCompile(`^[A-Za-z0-9@%+=:,./_-]+$`)

// shellQuote is s as one word of a POSIX shell: as is when safe, else in
// single quotes (a single quote inside written '\”).
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// define declares --state-machine, --bucket and --local on fs, bound to f.
func (f *deployerFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&f.stateMachine, "state-machine", "", "ARN of the deployer's state machine (default $"+envStateMachine+", else ferry-deployer in the caller's account and region)")
	fs.StringVar(&f.bucket, "bucket", "", "the deployer's bucket (default $"+envBucket+", else ferry-deployer-ACCOUNT-REGION)")
	fs.BoolVar(&f.local, "local", false, "use the local region (ferry local) at $"+envLocalEndpoint+" or "+defaultLocalEndpoint)
	fs.StringVar(&f.region, "region", "", "the AWS region of the deployer (default $AWS_REGION, else the profile's)")
	fs.StringVar(&f.profile, "profile", "", "the AWS shared config profile to use (default $AWS_PROFILE)")
}

// deployerConfig is the typed configuration of the client's connection to
// a deployer.
type deployerConfig struct {
	// StateMachineARN and Bucket name the deployer.
	StateMachineARN string
	Bucket          string
	// Endpoint, when set, is the one endpoint of every AWS API (the local
	// region); the client then uses static dummy credentials, Region and
	// path-style S3 addressing.
	Endpoint string
	Region   string
	// Override is the endpoint AWS_ENDPOINT_URL sets for every AWS API,
	// "" when none does.
	Override string
}

// where names what the client reaches of the deployer, for messages:
// the local region's endpoint (or the one AWS_ENDPOINT_URL sets), or AWS
// in the deployer's region and account.
func (c deployerConfig) where() string {
	if c.Endpoint != "" {
		return c.Endpoint
	}
	if c.Override != "" {
		return c.Override
	}
	where := "AWS " + firstNonEmpty(c.Region, "(no region)")
	if parts := strings.Split(c.StateMachineARN, ":"); len(parts) > 4 && parts[4] != "" {
		where += ", account " + parts[4]
	}
	return where
}

// home is the deployer's own account and region, as its state machine's
// ARN names them (blank what it does not): where a release that names
// neither runs.
func (c deployerConfig) home() target.Target {
	a, err := arn.Parse(c.StateMachineARN)
	if err != nil {
		return target.Target{Region: c.Region}
	}
	return target.Target{AccountID: a.AccountID, Region: firstNonEmpty(a.Region, c.Region)}
}

// reachedAt is an SDK API option that makes every error of a call name
// where the call went (a reachedError): errors from the deployer say
// which deployer they are from.
func reachedAt(where string) func(*middleware.Stack) error {
	return func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("FerryReachedAt",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				out, md, err := next.HandleInitialize(ctx, in)
				if err != nil {
					err = &reachedError{where: where, err: err}
				}
				return out, md, err
			}), middleware.After)
	}
}

// reachedError is the error of an AWS API call made at where.
type reachedError struct {
	where string
	err   error
}

func (e *reachedError) Error() string { return e.err.Error() + " (at " + e.where + ")" }
func (e *reachedError) Unwrap() error { return e.err }

// bucketAPI is the S3 API the client calls on the deployer's bucket.
type bucketAPI interface {
	PutObject(ctx context.Context, params *s3.PutObjectInput, optFns ...func(*s3.Options)) (*s3.PutObjectOutput, error)
	GetObject(ctx context.Context, params *s3.GetObjectInput, optFns ...func(*s3.Options)) (*s3.GetObjectOutput, error)
	HeadObject(ctx context.Context, params *s3.HeadObjectInput, optFns ...func(*s3.Options)) (*s3.HeadObjectOutput, error)
	DeleteObject(ctx context.Context, params *s3.DeleteObjectInput, optFns ...func(*s3.Options)) (*s3.DeleteObjectOutput, error)
	ListObjectsV2(ctx context.Context, params *s3.ListObjectsV2Input, optFns ...func(*s3.Options)) (*s3.ListObjectsV2Output, error)
}

// stepFunctions is the Step Functions API the client calls.
type stepFunctions interface {
	StartExecution(ctx context.Context, params *sfn.StartExecutionInput, optFns ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error)
	DescribeExecution(ctx context.Context, params *sfn.DescribeExecutionInput, optFns ...func(*sfn.Options)) (*sfn.DescribeExecutionOutput, error)
	GetExecutionHistory(ctx context.Context, params *sfn.GetExecutionHistoryInput, optFns ...func(*sfn.Options)) (*sfn.GetExecutionHistoryOutput, error)
	ListExecutions(ctx context.Context, params *sfn.ListExecutionsInput, optFns ...func(*sfn.Options)) (*sfn.ListExecutionsOutput, error)
	// SendTaskSuccess and SendTaskFailure answer a promotion's wait for
	// an approval (ferry pipeline approve and halt).
	SendTaskSuccess(ctx context.Context, params *sfn.SendTaskSuccessInput, optFns ...func(*sfn.Options)) (*sfn.SendTaskSuccessOutput, error)
	SendTaskFailure(ctx context.Context, params *sfn.SendTaskFailureInput, optFns ...func(*sfn.Options)) (*sfn.SendTaskFailureOutput, error)
}

var (
	_ bucketAPI     = (*s3.Client)(nil)
	_ stepFunctions = (*sfn.Client)(nil)
)

// deployer is a connection to one deployer: its state machine and bucket,
// and the clients that reach them.
type deployer struct {
	cfg deployerConfig
	s3  bucketAPI
	sfn stepFunctions
	// prover makes the identity proof of each release with the caller's
	// credentials.
	prover submit.Prover
	// now is the time a release's created_at is set from: the wall clock,
	// or the local region's clock (which may run faster).
	now func(ctx context.Context) (time.Time, error)
}

// submitter is the deployer as releases are submitted to it.
func (d *deployer) submitter() submit.Deployer {
	return submit.Deployer{Bucket: d.cfg.Bucket, StateMachineARN: d.cfg.StateMachineARN, S3: d.s3, SFN: d.sfn}
}

// connect resolves the deployer configuration (flags, then environment,
// then the conventional names in the caller's account; with --local,
// flags, then the local region's description) and builds the clients.
// Errors say what to set.
func connect(ctx context.Context, env Env, f *deployerFlags) (*deployer, error) {
	if f.local && (f.region != "" || f.profile != "") {
		return nil, exitf(exitUsage, "--region and --profile name a deployer in AWS; --local uses the local region, which has neither")
	}
	if f.local {
		// $FERRY_STATE_MACHINE_ARN and $FERRY_BUCKET name a deployer in
		// AWS: --local means the local region's own, unless flags say
		// otherwise.
		return connectLocal(ctx, env, deployerConfig{StateMachineARN: f.stateMachine, Bucket: f.bucket})
	}
	cfg := deployerConfig{
		StateMachineARN: firstNonEmpty(f.stateMachine, env.Getenv(envStateMachine)),
		Bucket:          firstNonEmpty(f.bucket, env.Getenv(envBucket)),
	}
	awsCfg, err := loadAWSConfig(ctx, env, f)
	if err != nil {
		return nil, err
	}
	cfg.Region, cfg.Override = awsCfg.Region, env.Getenv("AWS_ENDPOINT_URL")
	if cfg.StateMachineARN == "" || cfg.Bucket == "" {
		if cfg.Region == "" {
			return nil, fmt.Errorf("%w: no AWS region (set AWS_REGION or AWS_PROFILE), and no --state-machine and --bucket (or $%s and $%s)", errNoDeployer, envStateMachine, envBucket)
		}
		id, err := sts.NewFromConfig(awsCfg).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
		if err != nil {
			return nil, fmt.Errorf("%w: finding the caller's account in %s to name the deployer: %s (or set --state-machine and --bucket)",
				errNoDeployer, firstNonEmpty(cfg.Override, "https://sts."+cfg.Region+".amazonaws.com"), contactCause(err))
		}
		account := aws.ToString(id.Account)
		if cfg.StateMachineARN == "" {
			cfg.StateMachineARN = naming.StateMachineARN(account, cfg.Region)
		}
		if cfg.Bucket == "" {
			cfg.Bucket = naming.DeployerBucketName(account, cfg.Region)
		}
	}
	// A custom endpoint (AWS_ENDPOINT_URL[_S3]) is rarely virtual-host
	// capable: address buckets by path there.
	// Such an endpoint (ferry local, say) may not send the response
	// checksums the SDK would validate: the SDK must not warn about each
	// response it could not check.
	custom := env.Getenv("AWS_ENDPOINT_URL") != "" || env.Getenv("AWS_ENDPOINT_URL_S3") != ""
	awsCfg.APIOptions = append(awsCfg.APIOptions, reachedAt(cfg.where()))
	return &deployer{
		cfg: cfg,
		s3: s3.NewFromConfig(awsCfg, func(o *s3.Options) {
			o.UsePathStyle = custom
			o.DisableLogOutputChecksumValidationSkipped = custom
		}),
		sfn:    sfn.NewFromConfig(awsCfg),
		prover: identity.Signer{Credentials: awsCfg.Credentials, Region: awsCfg.Region, Endpoint: aws.ToString(awsCfg.BaseEndpoint)},
		now:    func(context.Context) (time.Time, error) { return env.Now().UTC(), nil },
	}, nil
}

// loadAWSConfig is the AWS configuration of the standard chain, with
// the region and profile f gives, once its credentials are found.
func loadAWSConfig(ctx context.Context, env Env, f *deployerFlags) (aws.Config, error) {
	opts := []func(*awsconfig.LoadOptions) error{awsconfig.WithRetryer(func() aws.Retryer {
		return retry.NewStandard(func(o *retry.StandardOptions) { o.MaxAttempts = 5 })
	}), awsconfig.WithLogger(logging.NewStandardLogger(env.Stderr))}
	if f.region != "" {
		opts = append(opts, awsconfig.WithRegion(f.region))
	}
	if f.profile != "" {
		opts = append(opts, awsconfig.WithSharedConfigProfile(f.profile))
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	var noProfile awsconfig.SharedConfigProfileNotExistError
	if errors.As(err, &noProfile) {
		return aws.Config{}, fmt.Errorf("%w (profile %s: not in the shared config or credentials files); set AWS_PROFILE or --profile to one of theirs, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
			errNoCredentials, noProfile.Profile)
	}
	if err != nil {
		return aws.Config{}, fmt.Errorf("AWS configuration: %w", err)
	}
	return awsCfg, checkCredentials(ctx, firstNonEmpty(f.profile, env.Getenv("AWS_PROFILE"), "default"), awsCfg)
}

// checkCredentials fails with errNoCredentials when the standard chain
// of awsCfg finds no AWS credentials, naming the region and profile it
// looked for them for. Found credentials are cached for the calls after.
func checkCredentials(ctx context.Context, profile string, awsCfg aws.Config) error {
	if awsCfg.Credentials == nil {
		return fmt.Errorf("%w: set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (--local uses the local region, which needs none)", errNoCredentials)
	}
	if _, err := awsCfg.Credentials.Retrieve(ctx); err != nil {
		return fmt.Errorf("%w (region %s, profile %s): %s; set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (--local uses the local region, which needs none)",
			errNoCredentials, firstNonEmpty(awsCfg.Region, "unset"), profile, contactCause(err))
	}
	return nil
}

// localInfo is what the local region says about itself at localInfoPath.
type localInfo struct {
	StateMachineARN string `json:"state_machine_arn"`
	Bucket          string `json:"bucket"`
	// Now is the region's simulated time, which runs faster than the wall
	// clock under --speed.
	Now time.Time `json:"now"`
}

// connectLocal connects to the local region: static dummy credentials, one
// endpoint, path-style S3, and the deployer named by the region itself
// unless cfg already names it.
func connectLocal(ctx context.Context, env Env, cfg deployerConfig) (*deployer, error) {
	cfg.Endpoint = strings.TrimRight(firstNonEmpty(env.Getenv(envLocalEndpoint), defaultLocalEndpoint), "/")
	cfg.Region = localRegion
	info, err := fetchLocalInfo(ctx, cfg.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("%w: the local region at %s does not answer (start it with 'ferry local'): %w", errNoDeployer, cfg.Endpoint, err)
	}
	cfg.StateMachineARN = firstNonEmpty(cfg.StateMachineARN, info.StateMachineARN)
	cfg.Bucket = firstNonEmpty(cfg.Bucket, info.Bucket)
	if cfg.StateMachineARN == "" || cfg.Bucket == "" {
		return nil, fmt.Errorf("%w: the local region at %s names no state machine or bucket", errNoDeployer, cfg.Endpoint)
	}
	awsCfg := aws.Config{
		Region:      cfg.Region,
		Credentials: credentials.NewStaticCredentialsProvider("ferry-local", "ferry-local", ""),
		Retryer: func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) { o.MaxAttempts = 5 })
		},
		APIOptions: []func(*middleware.Stack) error{reachedAt(cfg.Endpoint)},
	}
	endpoint := cfg.Endpoint
	now := func(ctx context.Context) (time.Time, error) {
		info, err := fetchLocalInfo(ctx, endpoint)
		if err != nil {
			return time.Time{}, fmt.Errorf("reading the local region's time: %w", err)
		}
		if info.Now.IsZero() {
			return env.Now().UTC(), nil
		}
		return info.Now.UTC(), nil
	}
	return &deployer{
		cfg: cfg,
		s3: s3.NewFromConfig(awsCfg, func(o *s3.Options) {
			o.BaseEndpoint = aws.String(endpoint)
			o.UsePathStyle = true
		}),
		sfn: sfn.NewFromConfig(awsCfg, func(o *sfn.Options) { o.BaseEndpoint = aws.String(endpoint) }),
		prover: localProver{
			signer: identity.Signer{Credentials: awsCfg.Credentials, Region: awsCfg.Region, Endpoint: endpoint},
			now:    now,
		},
		now: now,
	}, nil
}

// localProver makes identity proofs for a local region, signed at the
// region's time: its STS judges a proof's age on its own clock, which runs
// ahead of the wall clock at --speed above 1 (at 60, a proof signed at
// the wall clock's time would be out of date 15 wall seconds after the
// region started).
type localProver struct {
	signer identity.Signer
	now    func(ctx context.Context) (time.Time, error)
}

var _ submit.Prover = localProver{}

// Prove signs contentHash's proof at the region's time.
func (p localProver) Prove(ctx context.Context, contentHash string) (*release.Identity, error) {
	at, err := p.now(ctx)
	if err != nil {
		return nil, err
	}
	s := p.signer
	s.Clock = instant(at)
	return s.Prove(ctx, contentHash)
}

// instant is a clock stopped at one time.
type instant time.Time

func (i instant) Now() time.Time { return time.Time(i) }

// fetchLocalInfo reads the local region's description.
func fetchLocalInfo(ctx context.Context, endpoint string) (localInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint+localInfoPath, nil)
	if err != nil {
		return localInfo{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return localInfo{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return localInfo{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return localInfo{}, fmt.Errorf("GET %s: %s", localInfoPath, resp.Status)
	}
	var info localInfo
	if err := json.Unmarshal(body, &info); err != nil {
		return localInfo{}, fmt.Errorf("GET %s: not a local region description: %w", localInfoPath, err)
	}
	return info, nil
}

// displayName is who the client says is asking (a release's created_by, a
// halt marker's by): $FERRY_CREATED_BY, else the login name ($USER,
// $LOGNAME), else the operating system's user at the host name, else
// "unknown" only when none of these is known. It is kept whole, as
// release.DisplayName keeps a name ("Jane Doe", "José"): only what a
// terminal cannot show as itself is left out.
func displayName(env Env) string {
	who := firstNonEmpty(env.Getenv(envCreatedBy), env.Getenv("USER"), env.Getenv("LOGNAME"))
	if release.DisplayName(who) == "" && env.Whoami != nil {
		user, host := env.Whoami()
		switch {
		case user != "" && host != "":
			who = user + "@" + host
		case user != "":
			who = user
		case host != "":
			who = "someone@" + host
		}
	}
	return firstNonEmpty(release.DisplayName(who), "unknown")
}

// whoami is the operating system's user name and host name, each "" when
// unknown.
func whoami() (user, host string) {
	if u, err := osuser.Current(); err == nil {
		user = u.Username
	}
	if h, err := os.Hostname(); err == nil {
		host = h
	}
	return user, host
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// contactCause is the innermost cause of err, an error reaching an AWS
// API, without the SDK's wrapping of its retries: "connect: connection
// refused", "ThrottlingException: Rate exceeded", "timed out".
func contactCause(err error) string {
	var op *net.OpError
	var dns *net.DNSError
	var apiErr smithy.APIError
	switch {
	case errors.As(err, &dns):
		return oneLine(dns.Error())
	case errors.As(err, &op) && op.Err != nil:
		return oneLine(op.Op + ": " + op.Err.Error())
	case errors.As(err, &apiErr):
		return oneLine(firstNonEmpty(strings.TrimSpace(apiErr.ErrorCode()+": "+apiErr.ErrorMessage()), err.Error()))
	case errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	}
	var reached *reachedError
	if errors.As(err, &reached) {
		err = reached.err // the message names where already
	}
	return oneLine(err.Error())
}
