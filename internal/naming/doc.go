// Package naming is the one place of truth for the names ferry gives things:
// the S3 key layout of the deployer bucket, the tags ferry reads and writes,
// the conventional names of the roles and buckets the bootstrap template
// creates in each target environment, the names of the resources a
// release creates, and the names of the executions that deploy releases.
//
// Nothing else in ferry builds a key, a tag name, a role name or a bucket
// name by hand. The README's "How ferry keeps state" section documents the
// layout below, and a test keeps the two in step.
//
// Functions here are pure: they do no I/O and never fail. Their inputs are
// validated elsewhere (package release), so they never see "..", empty
// segments or control characters.
package naming
