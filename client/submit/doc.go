// Package submit owns how a release reaches the deployer: the one flow
// that ferry deploy, the benchmark, the reliability matrix and the
// conformance suite share, so each exercises the client's own preparation,
// proof, upload and execution naming.
//
//   - Prepare readies a release read from its file: its id, created_at and
//     created_by, each asset's SHA-256 and size (read next to the release
//     file), the defaults, the deployer's own validation, and the identity
//     proof (package identity) pre-signed with the submitter's credentials.
//   - Deployer.Upload puts the release's assets (content-addressed, only if
//     absent) and the release itself (once) in the deployer bucket.
//   - Deployer.Start starts the release's execution under
//     naming.ExecutionName; starting it again is the same execution, and a
//     name taken by another release is an error, never that release's
//     execution.
//
// Following an execution to its end is its caller's: the client shows it
// live, the harnesses wait in process.
package submit
