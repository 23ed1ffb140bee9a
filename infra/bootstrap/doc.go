// Package bootstrap owns the bootstrap template of a target environment as
// the CLI prints it (`ferry bootstrap --trust-account ID [--qualifier Q]`):
// the BootstrapStack of infra/stacks, synthesized by make synth into
// template.json and embedded here, so the CLI does not link the CDK. A test
// in infra/stacks fails when the file differs from what the stack
// synthesizes.
package bootstrap
