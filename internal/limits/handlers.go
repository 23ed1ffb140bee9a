package limits

import "time"

// The deployer's health-check pacing and the ASG settings it derives.
const (
	// HealthCheckInterval is how long the state machine waits between two
	// health checks (CheckHealthy's wait_seconds), and after Deploy before
	// the first. It bounds the latency ferry adds once the last needed
	// instance is healthy.
	HealthCheckInterval = 5 * time.Second
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
