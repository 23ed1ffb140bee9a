package limits

import "time"

// The deployer's health-check pacing and the ASG settings it derives.
const (
	// HealthCheckInterval is how long the state machine waits between two
	// health checks (CheckHealthy's wait_seconds), and after Deploy before
	// the first. It bounds the latency ferry adds once the last needed
	// instance is healthy.
	HealthCheckInterval = 5 * time.Second
	// MaxHealthChecks bounds the health checks of one execution: a round
	// (Choice, Wait, CheckHealthy) records about 9 history events, and Step
	// Functions ends an execution at StepFunctionsHistoryEvents. So the
	// wait between checks is at least a release's timeout divided by this
	// (5 s for the default 600 s timeout, 87 s for the 48 h maximum).
	MaxHealthChecks = 2000
	// HealthCheckGracePeriod is the new ASGs' health check grace period: how
	// long after launch an instance failing its load balancer's health
	// check is left alone.
	HealthCheckGracePeriod = 300 * time.Second
	// DescribeBatch is how many names ferry passes to one describe call
	// that takes a list of names (Auto Scaling groups, load balancer tags).
	DescribeBatch = 20
	// LaunchTemplateNameLen is EC2's limit on a launch template's name.
	LaunchTemplateNameLen = 128
)

// DescribeGroupsBatch is how many ASG names ferry passes to one
// DescribeAutoScalingGroups call (AWS accepts up to 100 records a page).
const DescribeGroupsBatch = 50

// DescribeTemplatesBatch is how many launch template names ferry passes
// in one launch-template-name filter of DescribeLaunchTemplates (a
// release has at most MaxServices).
const DescribeTemplatesBatch = MaxServices

// DescribeLoadBalancersBatch is how many load balancer ARNs one Elastic
// Load Balancing v2 DescribeLoadBalancers call takes.
const DescribeLoadBalancersBatch = 20

// MaxDeleteAlarms is how many alarms one CloudWatch DeleteAlarms call
// takes.
const MaxDeleteAlarms = 100

// The retry policy of every task of the deploy state machine, for
// transient errors. The state machine is generated from these, and the
// clean-up handlers read from the retry count when an attempt is the last.
const (
	TaskRetryIntervalSeconds = 2
	TaskRetryBackoffRate     = 2.0
	TaskRetryMaxAttempts     = 6
	TaskRetryMaxDelaySeconds = 30
)
