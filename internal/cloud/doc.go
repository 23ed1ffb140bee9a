// Package cloud is ferry's door to AWS in the target environments. It holds
// the AWS surface the deploy states use, as small interfaces with exactly the
// aws-sdk-go-v2 methods ferry calls and the SDK's own signatures, so the real
// SDK clients and the simulated AWS (package sim) both satisfy them and the
// SDK's paginators and waiters work with either.
//
// A Connector turns a target.Target (account, region, qualifier) into Clients by
// assuming the target's conventional deploy and publish roles, and caches
// the credentials until shortly before they expire. The deployer's own
// account goes through the same path.
//
// AWSBuilder's Auto Scaling and Elastic Load Balancing v2 clients decode
// the long lists of the answers ferry reads at fleet scale (a group's
// instances and tags, scaling activities, a target group's targets) with
// package querylist, exactly as the SDK decodes them, at a fraction of
// its CPU; every other answer, and any it stands aside from, the SDK
// decodes.
//
// Errors from AWS are classified here (Classify, IsNotFound): throttling,
// 5xx and timeouts are transient; validation and access errors are not.
// ClassifyAs is the one place a failed call becomes ferry's typed error:
// retryable when transient, else the error its caller names it.
//
// # Checklist: a new AWS call
//
// A call ferry makes in a target environment is granted, simulated and
// proven in six places; the tests named fail until each is done. Worked
// examples: autoscaling:SetInstanceProtection (a change to a group:
// sim/standby.go, deployRoleAllows, the ManageProjectConfigGroups
// statement) and autoscaling:DescribeAccountLimits (a read:
// sim/lbattach.go, DeployRoleReadActions, conformance's accountLimitsFix).
//
//  1. The interface (internal/cloud/api.go): add the method to the
//     service's interface (EC2, AutoScaling, ELB, ELBv2, IAM, SNS,
//     CloudWatch, EventBridge) copied from the SDK client, context first, with the
//     SDK's own input, output and optFns types; the compile-time checks
//     at the end of api.go hold the real client to it. The caller (a
//     handler in internal/deployer, or internal/fleet, internal/resources,
//     internal/balancers) wraps a failure with Classify or ClassifyAs,
//     naming the call "service:Action" (internal/cloud/errors.go); an AWS
//     error code it branches on is a Code constant there.
//  2. The simulator operation (internal/local/sim, in the file of its
//     service or concern: autoscaling.go, ec2.go, elb.go, standby.go, ...):
//     a method with the same signature on the simulated client, between
//     c.begin(ctx, op) and c.end(op, err) so call faults, throttling and
//     the call log see it, modelled on the API Reference and tested in the
//     file's _test.go with the reference cited ("API Reference,
//     OperationName"). The compile-time check (var _ cloud.AutoScaling =
//     (*AutoScaling)(nil)) fails until it exists.
//  3. Its authorization (internal/local/sim/authz.go): before it changes
//     anything the operation calls r.w.authorize with the Auths AWS checks
//     (the action on the resource's ARN with its tags, request tags and
//     condition keys; groupAuth for an action on an existing group); a
//     mutating action also needs its case in deployRoleAllows, the deploy
//     role's policy as the simulation enforces it (reads are allowed by
//     name). A name or ARN pattern both sides build goes in internal/naming
//     (iam.go: PassRoleResource, PolicyVarProject).
//  4. The IAM policy (infra/stacks/deployrole.go for the deploy role:
//     DeployRoleReadActions for a Describe without resource-level
//     permissions, else a statement scoped by the session's tags or name
//     prefix; bootstrap.go for the publish role; deployer.go, grantDeployer,
//     for a call the Lambda makes in its own account).
//     TestBootstrapDeployRoleGrantsWhatFerryCalls (infra/stacks) fails
//     until every method of the interfaces is granted. Refresh the
//     committed template with `make synth` (or go test ./infra/stacks
//     -update): TestBootstrapTemplateIsUpToDate.
//  5. The IAM proof case (infra/iam, `make iam`): the scenario
//     (scenario_test.go) runs deploys on the simulator and every Auth they
//     record is evaluated against the synthesized policies by an
//     independent engine, so the call is proven allowed as soon as a
//     scenario deploy makes it (extend the scenario if none does), and
//     every condition key the new statement uses is checked against the
//     service authorization reference. For a mutating action add the
//     attacks it opens to attacks_test.go (another project's, another
//     config's resource; a request without the session's tags): each must
//     be denied, and the security help page lists every attack
//     (client/help/security.md, TestSecurityPageListsEveryAttack).
//  6. The conformance scenario (internal/proof/conformance/scenarios.go,
//     `make conformance`): the real deployer over the SDK against
//     moto_server, so the call's serialization and an answer are exercised;
//     a scenario whose path makes the call shows it. Where moto answers
//     otherwise than AWS, wrap that call in the harness (env.go, as
//     policyARNFix and accountLimitsFix do) and say so in doc.go's "Where
//     moto differs from AWS"; ferry is not bent to moto.
//
// The fault-injection matrix (internal/proof/reliability, `make
// reliability`) then fails the call at each of its indexes on its own: a
// handler that is not idempotent across the new call shows there.
package cloud
