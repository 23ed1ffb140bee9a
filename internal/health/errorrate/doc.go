// Package errorrate owns a service's HTTP error rate as its load
// balancers count it in their own CloudWatch metrics (the design's "ELB
// and Target Group error rates when checking healthy"): which metrics
// (a classic load balancer's RequestCount and HTTPCode_Backend_5XX by
// LoadBalancerName; a target group's RequestCount and
// HTTPCode_Target_5XX_Count by TargetGroup and LoadBalancer, one pair per
// load balancer that uses it), how they are read (GetMetricData, Sum per
// minute, up to 500 queries a call) and the rate they make (5xx over
// requests). A load balancer's rate counts every instance it sends
// traffic to, the previous release's included. It changes nothing.
package errorrate
