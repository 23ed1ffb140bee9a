// Package conformance owns ferry's conformance suite on moto: ferry's real
// deployer (package deployer, built as lambdas/main.go builds it: real SDK
// v2 clients, a cloud.Connector that assumes the target's roles through
// STS, cloud.AWSBuilder) and the real deploy state machine (the generated
// definition, run by package asl, whose Task states invoke the deployer
// in-process through region.TaskInvoker) run against one moto_server
// (moto 5.2.1) over HTTP. The SDK's serialization of every call ferry
// makes, and moto's answers, are exercised; only the endpoint differs from
// the Lambda (aws.Config.BaseEndpoint), with static credentials for the
// deployer's own account.
//
// Run starts moto_server on a free loopback port, resets it (POST
// /moto-api/reset) before each scenario, seeds both accounts over the wire
// (seed.go) and kills it at the end. Scenarios are in scenarios.go.
//
// # What does not go to moto
//
// CloudWatch goes to the simulation (package sim): the SDK's CloudWatch
// client (service/cloudwatch v1.75.5) speaks Smithy RPC v2 CBOR
// (api_client.go: rpcv2.NewCBOR; CHANGELOG v1.53.0 "introduces two
// additional protocols AWS JSON 1.1 and Smithy RPC v2 CBOR, replacing ...
// AWSQuery"), and moto 5.2.1 serves CloudWatch in the query protocol only.
// env.build substitutes only Clients.CloudWatch of cloud.AWSBuilder.
//
// # Time
//
// The deployer and the executions run on a virtual clock (Waits complete
// at once, asl.VirtualWaiter); moto runs on the wall clock. The virtual
// clock starts a day behind the wall clock, so every moto timestamp a
// scenario makes (a halt marker's LastModified) is later than every
// virtual instant of it, as the clocks of AWS and of the Lambda agree.
//
// # Where moto differs from AWS
//
// ferry is not bent to moto; the harness works around, and says here:
//
//   - moto's AssumeRole does not require the role to exist nor check its
//     trust policy ("Note that the role does not need to exist", moto
//     sts/models.py assume_role); AWS refuses (AssumeRole, "Errors":
//     AccessDenied). The harness still creates the deploy and publish roles
//     as the bootstrap template does. moto switches accounts by the role
//     ARN's account, as AWS does.
//   - moto answers "healthy" (DescribeTargetHealth) and "InService"
//     (DescribeInstanceHealth) for a registered running instance at once,
//     where AWS reports "initial" until HealthyThresholdCount checks pass
//     (Elastic Load Balancing User Guide, "Health checks for your target
//     groups", Target health status). The suite therefore shows the calls
//     and the happy path, not health timing (the simulation models that).
//   - moto does not model launching lifecycle hooks: its
//     CreateAutoScalingGroup ignores LifecycleHookSpecificationList, its
//     instances are InService at once (AWS holds them in Pending:Wait until
//     the action completes or times out), and CompleteLifecycleAction
//     answers HTTP 500. The suite's releases declare no hook; the
//     simulation models them from AWS's documentation
//     (TestLaunchHookAgainstMoto records moto's answers).
//   - moto's PutScalingPolicy answer has no PolicyARN (moto names the
//     field PolicyArn and its query serializer drops it), where AWS returns
//     it (Amazon EC2 Auto Scaling API Reference, PutScalingPolicy, Response
//     Elements: PolicyARN); ferry's alarm would then have an empty action.
//     The harness wraps only that call (policyARNFix) and reads the ARN
//     back with DescribePolicies.
//   - moto does not implement Auto Scaling's DescribeAccountLimits (it
//     answers HTTP 500), which ValidateResources calls for the region's
//     group headroom. The harness answers it (accountLimitsFix) as AWS
//     does for an account at the default quota of 500 groups, counting
//     moto's groups with DescribeAutoScalingGroups.
//   - moto's Auto Scaling keeps a classic load balancer's instances equal
//     to the last group it updated, deregistering the others' (moto
//     update_attached_elbs); AWS registers every attached group's
//     instances. The harness registers them again before each
//     DescribeInstanceHealth (sharedELBFix), so a rollback that waits for
//     the previous group in its load balancer sees what AWS would show.
//   - The harness seeds a second account with moto's x-moto-account-id
//     header, which AWS does not have; the deployer reaches that account
//     only through AssumeRole.
//   - moto serves a pre-signed sts:GetCallerIdentity (a GET whose query
//     string carries Action and the signature, as identity proofs are
//     made; "Signing AWS API requests", query string) as an S3 request,
//     since its single endpoint routes a signed GET by path, so the
//     deployer here verifies no identity proofs (deployer.Config
//     .Identities is unset); the local region and the identity package's
//     tests verify them.
//   - moto 5.2.1's CreateAutoScalingGroup stores a MixedInstancesPolicy
//     as given, refusing none of the bounds the Auto Scaling API Reference
//     gives LaunchTemplateOverrides, InstancesDistribution and
//     InstanceRequirements (41 types, 5 sets of requirements, a weight of
//     1000, a percentage of 101, a negative or inverted vCPU range, 401 or
//     malformed type filters, allowed with excluded types, negative or
//     doubled Spot price protection). TestMixedRefusalsAgainstMoto records
//     it; the simulation refuses each from the API Reference alone.
//   - moto 5.2.1 verifies neither x-amz-checksum-* nor Content-MD5 on
//     PutObject (AWS refuses a mismatch with 400 BadDigest and stores
//     nothing), and keeps a checksum only when x-amz-sdk-checksum-algorithm
//     names it. TestS3FidelityAgainstMoto runs one S3 script (checksums,
//     conditional deletes, a versioned bucket's delete markers) against
//     moto and against ferry's local server (internal/local/s3server) and records
//     each place moto differs from AWS's documentation; the local server
//     answers as AWS documents at every step.
//   - moto 5.2.1 ignores DescribeAutoScalingGroups' IncludeInstances (its
//     describe_auto_scaling_groups reads no such parameter) and answers
//     every group's instances, where AWS leaves them out when it is false
//     (DescribeAutoScalingGroups, Auto Scaling API Reference). ferry's
//     listings without instances summarize each group without them either
//     way (fleet.Summary), and a step that describes groups without them
//     (fleet.Heads, fleet.DescribeHeads: a Retirer's Headless step) reads
//     no instance of theirs as a count, so nothing differs but the bytes;
//     TestIncludeInstancesAgainstMoto records it.
package conformance
