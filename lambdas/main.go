package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/ferryhq/ferry/internal/buildinfo"
	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/deployer"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/identity"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/target"
	"github.com/ferryhq/ferry/internal/tuning"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel(os.Getenv(naming.EnvLogLevel))}))
	if err := run(context.Background(), log); err != nil {
		log.Error("deployer cannot start", "error", err.Error())
		os.Exit(1)
	}
}

// httpClient is the SDK's default client, keeping as many idle
// connections to a host as a task makes calls to it at once
// (tuning.BalancerReadsAtOnce: a health check's load balancer reads), so
// a warm Lambda's next check reuses them instead of opening new ones.
func httpClient() *awshttp.BuildableClient {
	return awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
		t.MaxIdleConnsPerHost = max(t.MaxIdleConnsPerHost, tuning.BalancerReadsAtOnce)
	})
}

func run(ctx context.Context, log *slog.Logger) error {
	cfg, err := parseConfig(os.Getenv)
	if err != nil {
		return err
	}
	cfg.Version = buildinfo.Get().String()
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithHTTPClient(httpClient()))
	if err != nil {
		return fmt.Errorf("aws config: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = awsCfg.Region
	}
	stsClient := sts.NewFromConfig(awsCfg)
	if cfg.AccountID == "" {
		id, err := stsClient.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
		if err != nil {
			return fmt.Errorf("finding the deployer's account (set %s): %w", naming.EnvAccountID, err)
		}
		cfg.AccountID = aws.ToString(id.Account)
	}
	connector := cloud.NewConnector(stsClient, cloud.AWSBuilder(awsCfg), cloud.ConnectorOptions{})
	dc := cfg.deployerConfig(log)
	states := sfn.NewFromConfig(awsCfg)
	dc.Executions, dc.Starts = states, states
	dc.Identities = identity.Verifier{Client: &http.Client{Timeout: identityTimeout}}
	d, err := deployer.New(dc, s3.NewFromConfig(awsCfg), connector)
	if err != nil {
		return err
	}
	lambda.StartWithOptions(handler(d), lambda.WithEnableSIGTERM())
	return nil
}

// identityTimeout bounds one replay of a release's identity proof to STS;
// a timeout is retried by the state machine.
const identityTimeout = 10 * time.Second

// config is the Lambda's typed configuration, from the environment.
type config struct {
	Bucket              string
	AccountID           string
	Region              string
	Qualifier           string
	CreatedAtMaxAge     time.Duration
	CreatedAtMaxSkew    time.Duration
	HealthCheckInterval time.Duration
	// KeepReleases is how many newest releases keep their assets (0:
	// the deployer's default).
	KeepReleases int
	// IdentityAccounts are the accounts whose principals' identity
	// proofs the deployer accepts (empty: the deployer's own account).
	IdentityAccounts []string
	// Version is the Lambda's build (buildinfo.Get), set by run, not
	// read from the environment.
	Version string
}

// accountID is an AWS account id.
var accountID = regexp.MustCompile(`^[0-9]{12}$`)

// parseConfig reads the configuration through getenv. The bucket is
// required; durations must parse; zero durations mean the defaults.
func parseConfig(getenv func(string) string) (config, error) {
	c := config{
		Bucket:    getenv(naming.EnvDeployerBucket),
		AccountID: getenv(naming.EnvAccountID),
		Region:    getenv(naming.EnvRegion),
		Qualifier: getenv(naming.EnvQualifier),
	}
	if c.Region == "" {
		c.Region = getenv("AWS_REGION")
	}
	var errs []error
	if c.Bucket == "" {
		errs = append(errs, fmt.Errorf("%s is required", naming.EnvDeployerBucket))
	}
	for _, d := range []struct {
		env string
		dst *time.Duration
	}{
		{naming.EnvCreatedAtMaxAge, &c.CreatedAtMaxAge},
		{naming.EnvCreatedAtMaxSkew, &c.CreatedAtMaxSkew},
		{naming.EnvHealthCheckInterval, &c.HealthCheckInterval},
	} {
		v := getenv(d.env)
		if v == "" {
			continue
		}
		dur, err := time.ParseDuration(v)
		if err != nil || dur <= 0 {
			errs = append(errs, fmt.Errorf("%s=%q is not a positive duration (like 10m)", d.env, v))
			continue
		}
		*d.dst = dur
	}
	if v := getenv(naming.EnvAssetKeepReleases); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			errs = append(errs, fmt.Errorf("%s=%q is not a positive whole number", naming.EnvAssetKeepReleases, v))
		}
		c.KeepReleases = n
	}
	if v := getenv(naming.EnvIdentityAccounts); v != "" {
		for a := range strings.SplitSeq(v, ",") {
			a = strings.TrimSpace(a)
			if !accountID.MatchString(a) {
				errs = append(errs, fmt.Errorf("%s=%q: %q is not a 12-digit account id", naming.EnvIdentityAccounts, v, a))
				continue
			}
			c.IdentityAccounts = append(c.IdentityAccounts, a)
		}
	}
	return c, errors.Join(errs...)
}

func (c config) deployerConfig(log *slog.Logger) deployer.Config {
	return deployer.Config{
		Bucket:              c.Bucket,
		DefaultTarget:       target.Target{AccountID: c.AccountID, Region: c.Region, Qualifier: c.Qualifier},
		CreatedAtMaxAge:     c.CreatedAtMaxAge,
		CreatedAtMaxSkew:    c.CreatedAtMaxSkew,
		HealthCheckInterval: c.HealthCheckInterval,
		KeepReleases:        c.KeepReleases,
		IdentityAccounts:    c.IdentityAccounts,
		StateMachineARN:     naming.StateMachineARN(c.AccountID, c.Region),
		Version:             c.Version,
		Clock:               clock.System{},
		Logger:              log,
	}
}

// invoker runs a task (*deployer.Deployer).
type invoker interface {
	Invoke(ctx context.Context, req execution.Request) (json.RawMessage, error)
}

// handler adapts a Deployer to aws-lambda-go. A returned error becomes a
// messages.InvokeResponse_Error (a value: that is what aws-lambda-go
// passes through unchanged) whose Type is the error's registry name, which
// Step Functions reports as the error name.
func handler(d invoker) func(ctx context.Context, req execution.Request) (json.RawMessage, error) {
	return func(ctx context.Context, req execution.Request) (json.RawMessage, error) {
		out, err := d.Invoke(ctx, req)
		if err != nil {
			return nil, failure.Payload(err)
		}
		return out, nil
	}
}

func logLevel(s string) slog.Level {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return slog.LevelInfo
	}
	return l
}
