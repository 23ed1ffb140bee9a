package limits

// Limits of the deployer's calls and of its executions.
const (
	// MaxHealthChecks bounds the health checks of one execution: a round
	// (Choice, Wait, CheckHealthy) records about 9 history events, and Step
	// Functions ends an execution at StepFunctionsHistoryEvents. The
	// health checks' schedule (tuning.HealthChecks) takes at most 1,531
	// over the longest timeout, jitter included; a quicker one is
	// stretched to fit (pacing.Schedule.Fit).
	MaxHealthChecks = 1700
	// MaxBakeChecks bounds the checks of one bake (a round, Choice, Wait
	// and Bake, records about 9 history events too): the wait between them
	// is at least the bake divided by this (5 s up to a bake of 1250 s,
	// 346 s for the longest, MaxBakeSeconds).
	MaxBakeChecks = 250
	// MaxRollbackChecks bounds the checks of one rollback
	// (tuning.RollbackTimeout over tuning.RollbackCheckInterval).
	MaxRollbackChecks = 180
	// HistoryEventsPerRound is how many history events a round of a wait
	// loop records: the Choice and the Wait entered and exited, and the
	// task entered, scheduled, started, succeeded and exited.
	HistoryEventsPerRound = 9
	// MaxRetireSteps bounds the steps of retiring the previous groups in
	// one execution (a round, Choice, Wait and CleanUpSuccess, records
	// about 9 history events too): with MaxHealthChecks, MaxBakeChecks and, on the way to
	// a failure, MaxRollbackChecks it keeps a deploy under
	// StepFunctionsHistoryEvents (TestHistoryBudget).
	MaxRetireSteps = 500
	// ReconcilePage is how many project-configs one Reconcile invocation
	// checks: a page's drift reads stay well inside the function's
	// timeout, and the pass loops over pages.
	ReconcilePage = 10
	// MaxReconcileReport bounds the heals and errors a reconcile pass
	// lists in its state document (its counts are not bounded), keeping
	// it far below Step Functions' 256 KiB.
	MaxReconcileReport = 50
	// MaxThrottledSteps bounds the rounds of one loop (Deploy, the
	// retirement, the clean-up) that AWS throttled and that run again
	// after a wait (tuning.ThrottledSteps) instead of failing: about 20
	// minutes of throttling, within StepFunctionsHistoryEvents
	// (TestHistoryBudget).
	MaxThrottledSteps = 60
	// MaxPacedDeploySteps bounds the rounds of Deploy that its pacing of
	// Auto Scaling calls (tuning.AutoScalingCallsPerRound) runs again
	// after a wait, AWS throttling none of its calls: each makes at least
	// AutoScalingRefill creates or suspends (a second's refill, the
	// shortest wait), and a release has MaxServices groups to create and
	// suspend. A round AWS throttled counts within MaxThrottledSteps.
	MaxPacedDeploySteps = 2 * MaxServices / AutoScalingRefill
	// LaunchTemplateNameLen is EC2's limit on a launch template's name.
	LaunchTemplateNameLen = 128
)

// AutoScalingBurst and AutoScalingRefill are the request bucket every
// Amazon EC2 Auto Scaling call of an account and region takes a token
// from, Describe calls included: "Amazon EC2 Auto Scaling throttles API
// requests based on a shared API bucket" (Amazon EC2 Auto Scaling API
// Reference, Welcome, API request rate). AWS publishes no figures for
// it; these are Elastic Load Balancing's documented Describe bucket's
// (40 tokens, refilled at 10 a second), the figures the simulation
// enforces (sim.AutoScalingShared) and Deploy paces its creates by.
const (
	AutoScalingBurst  = 40
	AutoScalingRefill = 10
)

// EC2MutateRefill is the refill, a second, of the request bucket each
// mutating EC2 action of an account and region has, CreateLaunchTemplate
// among them: 50 tokens refilled at 5 a second (Amazon EC2 Developer
// Guide, "Request throttling for the Amazon EC2 API", mutating actions;
// the figure the simulation enforces, sim.EC2Mutate). Deploy's rounds
// beside other deploys create their launch templates within it.
const EC2MutateRefill = 5

// DescribeGroupsBatch is how many ASG names ferry passes to one
// DescribeAutoScalingGroups call, with MaxRecords as large: AWS accepts
// up to 50 names by default and as many as MaxRecords, at most 100
// (DescribeAutoScalingGroups, Auto Scaling API Reference); and the
// MaxRecords of a listing of a project-config's groups by their tags
// (50 by default): as many groups a page.
const DescribeGroupsBatch = 100

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
