// Package s3test owns the test fixtures for code that talks to the deployer
// bucket: an in-process S3 server (internal/local/s3server) on an injected clock,
// closed when the test ends, with its buckets versioned (StartVersioned,
// as the deployer bucket is in AWS) or not (Start); a raw object write for setting up a test's
// bucket by hand; and a server that answers every request with one S3
// error, for checking how failures other than "not found" are classified;
// and wrappers of a client that record the tagging of writes, or refuse
// the calls a test selects (AccessDenied), for the paths where S3 refuses
// one object and serves the rest.
//
// It is imported by tests only; every function fails the test (never
// returns an error) when the fixture cannot be set up.
package s3test
