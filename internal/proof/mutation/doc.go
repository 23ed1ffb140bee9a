// Package mutation is ferry's mutation testing (make mutate): it makes
// small realistic bugs (mutants) in the safety-critical code, one at a
// time, and runs that code's tests against each. A mutant the tests fail
// on is killed; one they pass on survived: a bug nobody would notice,
// unless the mutant is equivalent (it changes nothing a caller can see),
// which the committed list of equivalents (testdata/mutation/equivalent.txt)
// says with the reason.
//
// Its mutants (Find) are those of the common mutation tools: a
// comparison's boundary moved (< and <=, > and >=) or negated, == and !=
// swapped, && and || swapped, a ! removed, and + and -, * and / swapped.
// Each is built through `go test -overlay` (Run): the mutated file
// replaces the original in that build only, so the checkout is never
// written and mutants run side by side. A mutant that does not compile
// (a + of strings made a -) is not viable and not counted.
//
// Building a mutant (compiling its package and its tests, linking the
// test binary) costs far more than its tests, so the boolean mutants of
// a target (comparisons, && and ||, a ! removed: nearly all) are built
// once, together, into one test binary, a mutant schema (Runner.Schema,
// schema.go): each mutated expression calls a helper that computes the
// original, or, when the binary runs with that mutant's id in
// FERRY_MUTANT, the mutant, evaluating the operands as the mutant does.
// A mutant whose text regroups under Go's precedence (in a && b && c,
// the first && made || is a || (b && c)) makes its chain that text. A
// mutant whose rewriting does not compile, and every arithmetic one, are
// built alone. The
// schema must pass the target's tests unmutated, or every mutant is
// built alone.
//
// A mutant is judged by the tests that run the code it changes (Runner.
// Select, coverage.go): each test of a target runs once alone with
// coverage, and a test that never reaches a mutant cannot fail because of
// it, so leaving it out changes no result and saves its time per mutant.
// A mutant no test reaches survives unless it does not compile, which
// `go build` of its package says without linking a test binary.
//
// A mutant's tests are bounded by twenty times what they took unmutated
// (those its coverage selects, each alone with coverage; else all of its
// target's), at least 30 s, at most the target's Timeout: a mutant that
// makes them hang, such as a paging loop whose end is negated, is killed
// then instead of holding a worker for the whole bound.
//
// What judging cost is measured per mutant and summed per target (Costs):
// wall time and the CPU time of go test (or the schema's test binary)
// and all it ran; a wall time far above it is a machine shared with
// other work. A schema's build is said once per target.
//
// It is a proof tool: the Lambda never links it (make thin).
package mutation
