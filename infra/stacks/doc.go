// Package stacks owns ferry's infrastructure as CDK stacks:
//
//   - the DeployerStack (NewDeployerStack, deployer.go): the deployer
//     bucket, the deployer Lambda, the deploy state machine (package
//     statemachine) and their least-privilege IAM, deployed once into the
//     deployer account;
//   - the BootstrapStack (NewBootstrapStack, bootstrap.go): the deploy
//     role, the publish role and the asset bucket of one target
//     environment, with conventional physical names from account, region
//     and an optional qualifier (package naming). It is one self-contained
//     template, without assets or CDK bootstrap parameters, under 50 KiB,
//     so it can be rolled out with CloudFormation StackSets. The deploy
//     role's policy, the security-critical part, is deployrole.go: its
//     grants by what they act on (reads, groups, launches, roles, alarms),
//     then its explicit denies;
//   - the policies neither stack can hold (policies.go): the service
//     control policy of the deployer accounts (ServiceControlPolicy, which
//     the security help page shows and NewGuardrails applies as an optional
//     Organizations policy), and the tables the stacks' policies are built
//     from (StateObjectWrites: every S3 action that writes an object).
//
// The bootstrap template is committed as infra/bootstrap/template.json
// (BootstrapTemplate, make synth) for the CLI, which does not link the CDK.
package stacks
