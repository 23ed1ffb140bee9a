// Package shape owns the deploy state machine's shape as data: its tasks in
// the order the statemachine help page lists them, where each goes next, the errors each
// retries and catches and where it sends them, the health-check loop
// (a Choice, a Wait and a Pass for a bad health report) and the three end
// states. Deploy returns it.
//
// It is the one place that says what the machine is. The statemachine
// construct builds the machine from it (so the Amazon States Language in
// statemachine/definition is synthesized from it); its tests check that
// the committed definition routes as the shape says, and that the diagram
// in statemachine's package doc and the state table in client/help/statemachine.md say what
// the shape says (go test ./statemachine/shape -update rewrites them).
//
// It imports no CDK: the Lambda and the CLI may use it without linking the
// CDK.
package shape
