// Package codestats measures ferry's own Go code against the project's
// shape rules, and `make lint` holds the code to them:
//
//   - every function is at most 80 lines long, from "func" to its closing
//     brace, whatever it holds: logic, a CDK stack, a JSON Schema or a
//     table (there is no list of exempt files or functions: a long
//     declaration splits into one function per thing it declares);
//   - at most 2% of the functions have a cyclomatic complexity above 15,
//     as gocyclo counts it (1, plus one per if, for, case, && and ||).
//
// It reads every non-test Go file of the module, the CDK app (infra/)
// and the commands included; test files (whose table-driven cases are
// data), testdata, node_modules and build outputs are not read. Its tests
// also keep the code maps true: the README's short one covers every
// package, the development help page's names each.
package codestats
