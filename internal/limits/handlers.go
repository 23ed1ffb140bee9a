package limits

// Limits of the deployer's calls and of its executions.
const (
	// MaxHealthChecks bounds the health checks of one execution: a round
	// (Choice, Wait, CheckHealthy) records about 9 history events, and Step
	// Functions ends an execution at StepFunctionsHistoryEvents. So the
	// wait between checks is at least a release's timeout divided by this
	// (5 s for the default 600 s timeout, 87 s for the 48 h maximum; see
	// tuning.HealthCheckInterval).
	MaxHealthChecks = 2000
	// MaxRetireSteps bounds the steps of retiring the previous groups in
	// one execution (a round, Choice, Wait and CleanUpSuccess, records
	// about 9 history events too): with MaxHealthChecks it keeps a deploy
	// under StepFunctionsHistoryEvents.
	MaxRetireSteps = 500
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
