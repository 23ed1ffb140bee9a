// Package sim is a simulated AWS: a stateful, deterministic model of the
// parts of EC2, Auto Scaling, Elastic Load Balancing (classic and v2), IAM,
// SNS, CloudWatch, EventBridge and STS that ferry calls, per account and
// region. It
// satisfies the interfaces of package cloud with the SDK's own signatures,
// so the deploy handlers run over it exactly as over AWS; the tests, the
// local region and the benchmarks use it.
//
// # Driving it
//
//	spec, err := sim.Load("testdata/worlds/deploy-test.json")
//	clk := clock.NewVirtual(start)
//	world, err := sim.New(clk, spec)
//	conn := world.Connector("111111111111", assets, cloud.ConnectorOptions{})
//	clients, err := conn.Connect(ctx, target.Target{AccountID: "111111111111", Region: "us-east-1"})
//
// The simulation has no S3: assets supplies a target's asset store, and
// the world lets the publish role's session call it only within what the
// bootstrap template grants that role (its own project-config's assets;
// anything else is AccessDenied).
//
// The world owns no goroutine and never sleeps. Every call first brings the
// world up to clock.Now() by running the events due (instances dying, being
// gone, targets draining, deleted groups vanishing) in time order; states
// that are a function of time (Pending -> InService, health checks passing)
// are computed when asked. Ids are counters, so the same calls give the
// same ids and golden files are stable.
//
// Errors look like the SDK's: a *smithy.OperationError around an HTTP
// response error around a smithy.GenericAPIError carrying AWS's error code
// (AlreadyExists, ValidationError, InvalidAMIID.NotFound, ...; the codes
// are constants in package cloud). Use errors.As with smithy.APIError.
//
// # Instances
//
// CreateAutoScalingGroup launches DesiredCapacity instances round-robin
// over the group's subnets, registers them with the group's classic load
// balancers and target groups, and keeps the group at desired capacity by
// replacing instances that die. An instance's behavior comes from its AMI
// and can be overridden by a line "#ferry-sim: <behavior>" in the launch
// template's (base64) user data:
//
//   - healthy: Pending for boot_seconds, then InService; the load balancer
//     health check passes health_seconds later.
//   - never-healthy: boots, but the health check never passes (classic ELB
//     OutOfService reason Instance, target unhealthy).
//   - crash-loop: dies crash_after_seconds after booting; it is Terminating
//     (Terminating:Wait with a termination lifecycle hook) for
//     terminate_seconds, then gone, and the group launches a replacement.
//   - slow-boot: like healthy with slow_boot_seconds instead of boot_seconds.
//   - crash-after-healthy: like healthy, then dies healthy_for_seconds after
//     passing its health checks (a fleet that looks good for a moment).
//   - worker: like healthy; asked to terminate with a termination hook, it
//     completes its own lifecycle action finish_seconds into
//     Terminating:Wait (a job finished before it goes).
//
// A group with an autoscaling:EC2_INSTANCE_LAUNCHING lifecycle hook holds
// each new instance in Pending:Wait, registered with no load balancer or
// target group, until every such hook's action is completed
// (CompleteLifecycleAction, by instance id or LifecycleActionToken;
// World.LaunchActionToken is the token the hook's notification would
// carry) or times out: its heartbeat timeout, restarted by
// RecordLifecycleActionHeartbeat, never past the global timeout (48 hours
// or 100 heartbeats, whichever is smaller). Its DefaultResult then applies
// (ABANDON if it names none): CONTINUE is Pending:Proceed until its boot is
// over, then InService, registered; ABANDON terminates it and the group
// launches a replacement. Nobody completes the action unless a line
// "#ferry-sim-launch-hook: complete" (or "abandon") in the user data makes
// the instance's boot complete it when over, as a user data script calling
// complete-lifecycle-action does (launchhook.go).
//
// Each duration is a range; the value of one instance is picked from it
// deterministically from the instance id. A terminating instance leaves
// its classic load balancers at once and drains from its target groups for
// deregistration_seconds. An instance type that cannot run its AMI's
// architecture fails to launch, as does every launch of FailLaunches; a
// failed launch is a Failed scaling activity with EC2's message.
//
// # Scaling, zones, processes
//
// Each launch and termination is a scaling activity
// (DescribeScalingActivities). Alarms are evaluated every minute (or their
// period, when shorter) against the CPUUtilization the group's AMI reports
// (cpu_percent) and, while in ALARM, execute their Auto Scaling actions
// once a minute, as CloudWatch documents. Every classic load balancer, and
// every application load balancer for each of its target groups, carries
// 10 requests a second split between the instances passing its health
// check, each answering its AMI's error_percent with a 5xx; GetMetricData
// returns them as CloudWatch publishes them (RequestCount and
// HTTPCode_Backend_5XX by LoadBalancerName; RequestCount and
// HTTPCode_Target_5XX_Count by TargetGroup and LoadBalancer; Sum per
// minute). Per Auto Scaling group (dimension AutoScalingGroupName) it
// returns EC2's CPUUtilization and NetworkOut (every five minutes, every
// minute with detailed monitoring) and the custom metrics an AMI
// declares (metrics: a slower build declares a higher latency), every
// minute from boot to termination, each datapoint spread by
// MetricJitter; any statistic, newest or oldest first, MaxDatapoints a
// call with NextToken. A zone impaired by ImpairZone
// has no capacity until a time: launches there fail (the group launches in
// its other zones) and, once it recovers, AZRebalance evens the group out
// (launch first, then terminate, never below the desired capacity: a
// step whose new instance is gone before it boots terminates none).
// SuspendProcesses honours Launch,
// Terminate, AlarmNotification, AZRebalance and ReplaceUnhealthy. A classic
// ELB routes only to its availability_zones, a v2 load balancer only to its
// enabled zones, and a target group only when a load balancer uses it;
// SetLoadBalancerZones changes a load balancer's zones.
//
// A group with a MixedInstancesPolicy counts its capacity in units (each
// instance its override's WeightedCapacity), launches its On-Demand base
// and percentage first, then Spot by its allocation strategy, from its
// instance types or the types of a small catalogue that meet its
// InstanceRequirements (mixed.go); it refuses the requirements AWS
// refuses, the service model's constraints in one ValidationError
// naming each member, then the API Reference's rules (requirements.go).
// InterruptSpot is EC2 taking Spot
// instances back: a rebalance recommendation, the two-minute notice, then
// the termination; with CapacityRebalance the group launches a
// replacement first and terminates the instance once it is in service.
// DescribeAutoScalingGroups shows the policy's InstancesDistribution with
// AWS's defaults for what it left out (Spot lowest-price across 2 pools,
// On-Demand base 0 and 100% above it, prioritized or, with requirements,
// lowest-price); UpdateAutoScalingGroup changes its overrides, the
// distribution fields it sets, and CapacityRebalance.
//
// # Attachments, draining, termination hooks, cut connections
//
// DetachLoadBalancers and DetachLoadBalancerTargetGroups take a group out
// of its load balancers: DescribeLoadBalancers and
// DescribeLoadBalancerTargetGroups (Auto Scaling's) show each Removing
// while its instances deregister (a classic ELB's
// connection_draining_seconds; a target group's
// deregistration_delay_seconds, else the image's deregistration_seconds),
// then no more; meanwhile the load balancer sends them no new request (a
// classic ELB reports each "InService: Instance deregistration currently
// in progress", a target group draining); the instances keep running. DescribeAutoScalingGroups
// lists it in LoadBalancerNames or TargetGroupARNs no more from the
// detach on: the Auto Scaling API Reference documents the Removing state
// for DescribeLoadBalancers, DescribeLoadBalancerTargetGroups and
// DescribeTrafficSources only and says nothing of the group's lists
// meanwhile, so this is one reading; ferry's never depends on it (it
// judges the load balancers a release names, by their own view).
// Attach* puts them back. A
// scale-in (a lower desired capacity) deregisters each chosen instance and
// waits for the draining, then, with an autoscaling:EC2_INSTANCE_TERMINATING
// hook, holds it in Terminating:Wait until CompleteLifecycleAction or the
// hook's heartbeat timeout (restarted by RecordLifecycleActionHeartbeat,
// never past the global timeout), then Terminating:Proceed for its terminate
// time. A protected instance (ProtectedFromScaleIn: SetInstanceProtection,
// or NewInstancesProtectedFromScaleIn at launch) is never chosen by a
// scale-in, though the desired capacity drops; removing the protection
// lets the surplus go. EnterStandby deregisters InService instances
// (draining) and takes them out of the capacity: a scale-in never
// terminates them; ExitStandby puts them back. DescribeLoadBalancerAttributes
// shows a classic ELB's ConnectionDraining from
// connection_draining_seconds (0, the API's default: disabled). Every
// classic ELB and target group counts cut connections
// (World.CutConnections, and cut_connections in the snapshot), what its
// clients would call a cut: an instance a ForceDelete stops while the
// load balancer still routes to it, a serving instance deregistered from
// a classic ELB without connection draining, or the last healthy instance
// gone while a group attached to it or an instance registered and not
// deregistering still claims it (it went dark under a deploy). One left
// dark by drained departures alone, nothing attached (a destroy, a
// release that drops it, a move), was withdrawn: no cut, unless it serves
// again while an instance it drained still runs (the gap is one). A
// classic ELB still draining an instance keeps it serving when its group
// is attached again.
//
// DeleteAutoScalingGroup without ForceDelete refuses a group with instances
// (ResourceInUse); with it, the instances terminate at once (no draining,
// no hook: AWS "also deletes any outstanding lifecycle actions"), the group shows Status
// "Delete in progress" until they are gone plus group_delete_seconds, then
// vanishes. The group's scaling policies go at once, with the alarms whose
// only actions were those policies.
//
// # Throttling
//
// A world with "throttle": true enforces AWS's request rates per account
// and region, one model from AWS's documentation (ThrottleModel, each
// Rate citing its page): EC2's bucket per action by category, each
// Elastic Load Balancing API version's one Describe* bucket and a bucket
// per mutating action, Auto Scaling's one bucket shared by every action
// (figures unpublished: ELB's assumed), CloudWatch's per-action TPS,
// EventBridge's PutEvents quota (us-east-1's, for every region). A
// throttled call is retried as the SDK's standard retryer does, its
// backoffs spent on the caller's Timeline; Throttles counts them. Calls
// reach a bucket out of their moments' order (a retry after its backoff
// before a call side by side with the throttled one): a bucket remembers
// its recent takes, and a call gets a token only when the bucket holds
// one at its moment and every later take still finds its own, so no call
// spends a refill that has not happened by its moment. A
// throttled attempt has no effect: the instances a CreateAutoScalingGroup,
// UpdateAutoScalingGroup, DeleteAutoScalingGroup or ResumeProcesses
// launches or terminates start from the moment its attempt that got
// through reached AWS (its place on the caller's Timeline after the
// backoff), not the first attempt's.
//
// # Faults, counters, snapshot
//
// world.Faults().Add(sim.Rule{Op: "CreateAutoScalingGroup", Nth: 2, Err:
// sim.Throttling()}) fails the second call; Nth 0 fails every matching call
// (up to Times). Helpers: Throttling, InternalError (500), AccessDenied,
// ExpiredToken, Timeout (a send error around context.DeadlineExceeded, as
// the SDK reports a deadline). SetHook sees every call before it runs and
// may fail it. Hide makes new groups or launch templates invisible to a
// window of their lookups (eventual consistency after a create; Lookups
// counts them); HideNewGroups(k) to their first k. ImpairZone and
// FailLaunches are above. FailEntries fails the next PutEvents entries
// with the codes given (a partial failure: FailedEntryCount).
//
// # Event buses
//
// Each account-region has its default event bus: PutEvents keeps what it
// accepts there (World.BusEvents lists every bus's, as EventBridge
// delivers them), with the API Reference's limits and errors: ten entries
// a request, 256 KB of entries, an entry without Source, DetailType or
// Detail, a Detail that is not a JSON object, a bus that does not exist,
// each failing its entry; a deploy role session may put only on its
// account's default bus with source ferry (authorization, below).
//
// world.Calls() counts calls per operation, CallsByAccount per account,
// CallLog lists them in order; ResetCalls clears them. world.Snapshot() is
// a JSON-serialisable picture of every group, instance, registration,
// launch template and alarm. world.InstanceTimes(account, region, group)
// tells when each instance of a group was launched, booted, passes its
// health checks and started terminating (benchmarks measure from it);
// world.Fleet() is every group's history of instances serving, to check a
// property at every instant. world.Observe(fn) shows fn every change as
// the world makes it (a Change: each event of its own, and each mutating
// call with its caller and the world just before and after it), so a
// checker can judge every instant from outside ferry.
//
// # Credentials
//
// STS(caller).AssumeRole, as the deployer's Lambda role of the caller's
// account (STSAs for any other principal), checks that the role exists in
// the target account and trusts the caller (AccessDenied otherwise, for
// both, as in AWS): ferry's bootstrap roles trust only the deployer's
// Lambda role (naming.DeployerRoleNamePattern) of the accounts their spec
// lists, and only with the session tags ProjectName and ConfigName. It
// issues credentials whose access key names a session the world remembers
// with its tags. The clients of Build check on every call that their
// credentials are a live session of their account. Clients(account, region)
// gives unauthenticated clients for tests and tools.
//
// # Authorization
//
// Every call records the authorizations AWS makes for it (Call.Auth: the
// IAM action, the resource's ARN and tags, the request's tags and
// condition keys; CreateAutoScalingGroup is also ec2:RunInstances on its
// template's image, subnets and security groups and iam:PassRole on its
// roles), with the caller's session and session tags, so an IAM engine can
// evaluate the real policies against what ferry did (the iam test of
// infra/). For a session of a bootstrap deploy role the world enforces
// that role's policy, attribute-based on the session's tags
// (deployRoleAllows): it creates, changes and deletes only groups, launch
// templates and alarms of its own project-config, never re-tags a group,
// never adds a launch template version or changes a default version,
// launches only opted-in images and subnets and its project's security
// groups, and passes only roles under its project-config's path; anything
// else is AccessDenied, as IAM words it. CreateOrUpdateTags is simulated
// for that (ferry never calls it).
//
// # World file reference
//
// A world file is JSON, decoded strictly (unknown fields are errors). All
// fields but ids and names are optional.
//
//	{
//	  "defaults": {                         // instance timings, seconds: N or [min, max]
//	    "boot_seconds": [60, 120],          // launch -> InService
//	    "slow_boot_seconds": [300, 600],    // the same, for slow-boot
//	    "health_seconds": [20, 40],         // InService -> health check passes
//	    "crash_after_seconds": [30, 90],    // InService -> dies, for crash-loop
//	    "healthy_for_seconds": [10, 50],    // healthy -> dies, for crash-after-healthy
//	    "terminate_seconds": [20, 40],      // Terminating -> gone
//	    "deregistration_seconds": 30,       // target group draining
//	    "finish_seconds": [20, 40],         // Terminating:Wait -> done, for worker
//	    "group_delete_seconds": [10, 30]    // last instance gone -> group gone
//	  },
//	  "limits": {                           // per account-region quotas
//	    "auto_scaling_groups": 500, "launch_templates": 5000, "alarms": 10000
//	  },
//	  "accounts": [{
//	    "id": "111111111111",
//	    "bootstrap": [                      // ferry's deploy and publish roles
//	      {"region": "us-east-1", "qualifier": "", "trust": ["111111111111"]}
//	    ],
//	    "roles": [{"name": "asg_lifecycle_hooks", "path": "/", "trust": [],
//	               "trust_services": ["autoscaling.amazonaws.com"]}],
//	    "instance_profiles": [
//	      {"name": "p", "path": "/project/config/service/", "roles": ["role-name"]}
//	    ],
//	    "regions": [{
//	      "name": "us-east-1",
//	      "amis": [{"id": "ami-...", "name": "ubuntu", "tags": {"DeployWith": "ferry"},
//	                "behavior": "healthy", "architecture": "x86_64",
//	                "cpu_percent": 40, "error_percent": 0,   // 5xx share once serving
//	                "network_out_bytes": 1048576,            // a minute
//	                "metrics": [{"namespace": "App", "name": "Latency", "value": 100}],
//	                "timings": {"boot_seconds": 30}}],
//	      "subnets": [{"id": "subnet-...", "availability_zone": "us-east-1a",
//	                   "vpc_id": "vpc-...", "tags": {"Name": "a"}}],
//	      "security_groups": [{"id": "sg-...", "name": "web", "tags": {}}],
//	      "elbs": [{"name": "web-elb", "availability_zones": ["us-east-1a"], "tags": {},
//	                "connection_draining_seconds": 300}],   // 0 (default): draining off
//	      "load_balancers": [{"name": "web-alb", "type": "application",
//	                          "availability_zones": ["us-east-1a"], "tags": {}}],
//	      "target_groups": [{"name": "web-tg", "port": 80,
//	                         "load_balancers": ["web-alb"], "tags": {}}],
//	      "topics": [{"name": "asg_lifecycle_hooks", "tags": {}}],
//	      "alarms": [                       // a team's alarms: ALARM once an
//	        {"name": "web-5xx", "image": "ubuntu-5xx", "minutes": 5, "tags": {}},
//	        {"name": "incident", "at_minutes": 30, "tags": {}}  // ... or at a time
//	      ]
//	    }]
//	  }]
//	}
//
// An AMI's Name tag defaults to its name; behavior defaults to healthy.
// Target group ARNs are derived from account, region and name; topic ARNs
// are arn:aws:sns:<region>:<account>:<name>. A region used but not listed
// exists and is empty.
package sim
