// Package stacks owns ferry's infrastructure as CDK stacks:
//
//   - the DeployerStack (NewDeployerStack): the deployer bucket, the
//     deployer Lambda, the deploy state machine (package statemachine) and
//     their least-privilege IAM, deployed once into the deployer account;
//   - the BootstrapStack (NewBootstrapStack): the deploy role, the publish
//     role and the asset bucket of one target environment, with conventional
//     physical names from account, region and an optional qualifier
//     (package naming). It is one self-contained template, without assets
//     or CDK bootstrap parameters, under 50 KiB, so it can be rolled out
//     with CloudFormation StackSets.
//
// The bootstrap template is committed as infra/bootstrap/template.json
// (BootstrapTemplate, make synth) for the CLI, which does not link the CDK.
package stacks
