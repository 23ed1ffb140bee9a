// Package balancers owns what the classic load balancers and target
// groups of ferry's groups say of the instances registered with them:
// each instance's state in each (Read), and whether one of them never
// sends an instance traffic because it does not route to the instance's
// zone (Views.NotServed). An instance a classic load balancer reports
// InService while its deregistration is in progress (connection draining)
// is recorded Deregistering: it gets no new request. It reads; it changes
// nothing.
//
// One call per load balancer and per target group (DescribeInstanceHealth,
// DescribeTargetHealth), the first alone, then up to
// tuning.BalancerReadsAtOnce at a time, never
// one per instance.
// A failure is a *failure.RetryableError when transient, else a
// *failure.DeployError.
package balancers
