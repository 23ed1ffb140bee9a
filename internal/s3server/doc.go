// Package s3server owns ferry's in-process S3-compatible server: gofakes3
// with its in-memory backend, listening on a loopback address. Tests use it
// to exercise ferry's S3 state (locks, halt markers, releases) over the real
// S3 wire protocol with the real aws-sdk-go-v2 client, and the local region
// mounts its Handler to stand in for the deployer bucket.
//
// The server's time source follows an injected clock.Clock, so the
// LastModified of every object it stores follows virtual time. Request time
// skew checks are disabled, since signed request dates follow the wall clock.
//
// gofakes3 v1.2.0 honours If-None-Match: * and If-Match on PutObject
// atomically (the check and the write happen under one backend lock). It
// ignores If-Match on DeleteObject.
package s3server
