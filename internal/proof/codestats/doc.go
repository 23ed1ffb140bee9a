// Package codestats measures ferry's own Go code the way the project's
// shape goals are stated: how many functions have a cyclomatic complexity
// above a bound (as gocyclo counts it) and how many are longer than a
// number of lines. `make lint` prints the figures; they are a report, not
// a gate.
//
// It reads the non-test Go files of the module (no vendored, generated
// testdata or node_modules code). Its tests also keep the README's code
// map naming every package.
package codestats
