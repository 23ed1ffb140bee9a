// Package resources owns what a release names in its target environment,
// resolved: its images and subnets (by ID or Name tag), security groups,
// classic load balancers, target groups, instance profiles, lifecycle hook
// roles and topics, and the previous group of each service. Resolve finds
// each one, checks that the release may use it, and checks that the
// placement can ever serve; it creates nothing.
//
// May use: an image or subnet must be tagged DeployWith=ferry, and a
// DeployProjects tag must list the project; a security group, load
// balancer or target group must carry the release's ProjectName,
// ConfigName and the using service's ServiceName tags; an instance
// profile, and each of its roles, must have the path
// /<project>/<config>/<service>/; a hook's role must be under the
// project-config's path and trust Auto Scaling, and its topic carry the
// project-config's tags.
//
// Can ever serve (placement.go): a service's subnets are in one VPC with
// its security groups; every zone of its subnets is one its classic load
// balancers route to and its target groups' load balancers enable; a
// target group is used by some load balancer; the image's architecture is
// one its instance type runs.
//
// Room (headroom.go, CheckHeadroom): the region's Auto Scaling group quota
// leaves room for the release's groups beside the previous release's.
//
// Every problem is reported at once, as one *failure.BadReleaseError
// naming each ("path: message"). A failed AWS call is an error of its
// own: a *failure.RetryableError when transient (cloud.Classify). Describe
// calls are batched per resource kind: their number grows with the
// distinct references of a release, never with instances. Reads that
// need nothing of each other's run side by side: a release resolves in
// the time of its longest chain of reads (two: a subnet before the
// security groups of its VPC, a target group before its tags and its
// load balancers' zones, a topic before its tags), whatever it names.
package resources
