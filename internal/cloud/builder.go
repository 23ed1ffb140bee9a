package cloud

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/ferryhq/ferry/internal/cloud/querylist"
	"github.com/ferryhq/ferry/internal/target"
	"github.com/ferryhq/ferry/internal/tuning"
)

// BuilderOptions tune the SDK clients AWSBuilder makes.
type BuilderOptions struct {
	// MaxAttempts per call, the first included (default
	// tuning.AWSMaxAttempts).
	MaxAttempts int
	// RetryTokens is the retry budget shared by every client of one target
	// (default tuning.AWSRetryTokens).
	RetryTokens uint
	// Backoff decides the delay before each retry (default: the standard
	// retryer's exponential backoff with jitter).
	Backoff retry.BackoffDelayer
}

// throttles are ferry's throttling codes as the standard retryer takes them.
var throttles = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, c := range throttlingCodes {
		m[c] = struct{}{}
	}
	return m
}()

// AWSBuilder returns a build function for NewConnector that makes real SDK
// clients from cfg for the target's region: every client but Assets signs
// with the deploy role's credentials, Assets (S3) with the publish role's.
// Each client uses the SDK's standard retryer, which retries throttling
// (its own codes and every code IsTransient counts as throttling), 5xx and
// timeouts (never validation or access errors), with at most
// MaxAttempts attempts and a token bucket shared by the target's clients,
// so a failing target soon stops retrying.
func AWSBuilder(cfg aws.Config, opts ...func(*BuilderOptions)) func(t target.Target, deploy, publish aws.CredentialsProvider) *Clients {
	o := BuilderOptions{MaxAttempts: tuning.AWSMaxAttempts, RetryTokens: tuning.AWSRetryTokens}
	for _, fn := range opts {
		fn(&o)
	}
	return func(t target.Target, deploy, publish aws.CredentialsProvider) *Clients {
		budget := ratelimit.NewTokenRateLimit(o.RetryTokens)
		retryer := func() aws.Retryer {
			return retry.NewStandard(func(so *retry.StandardOptions) {
				so.MaxAttempts = o.MaxAttempts
				so.RateLimiter = budget
				so.Retryables = append(so.Retryables, retry.RetryableErrorCode{Codes: throttles})
				so.Throttles = append(so.Throttles, retry.ThrottleErrorCode{Codes: throttles})
				if o.Backoff != nil {
					so.Backoff = o.Backoff
				}
			})
		}
		dc := cfg.Copy()
		dc.Region = t.Region
		dc.Credentials = deploy
		dc.Retryer = retryer
		pc := dc.Copy()
		pc.Credentials = publish
		return &Clients{
			Target:      t,
			EC2:         ec2.NewFromConfig(dc),
			AutoScaling: autoscaling.NewFromConfig(dc, querylist.AutoScaling),
			ELB:         elb.NewFromConfig(dc),
			ELBv2:       elbv2.NewFromConfig(dc, querylist.ELBv2),
			IAM:         iam.NewFromConfig(dc),
			SNS:         sns.NewFromConfig(dc),
			CloudWatch:  cloudwatch.NewFromConfig(dc),
			EventBridge: eventbridge.NewFromConfig(dc),
			Assets:      s3.NewFromConfig(pc),
		}
	}
}
