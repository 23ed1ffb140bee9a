// Package definition owns the deploy state machine's definition as Step
// Functions runs it: the Amazon States Language JSON that the statemachine
// construct synthesizes, committed as definition.asl.json by make synth and
// embedded here. The deployer Lambda, the CLI and the local region use this
// package; it never imports the CDK, so they do not link it.
//
// The file holds FunctionARNPlaceholder where the deployer function's ARN
// goes; Render puts a real ARN in its place. A test in package statemachine
// fails when the file differs from what the construct synthesizes, so the
// definition run locally is the definition deployed.
package definition
