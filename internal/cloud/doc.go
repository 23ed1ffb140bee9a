// Package cloud is ferry's door to AWS in the target environments. It holds
// the AWS surface the deploy states use, as small interfaces with exactly the
// aws-sdk-go-v2 methods ferry calls and the SDK's own signatures, so the real
// SDK clients and the simulated AWS (package sim) both satisfy them and the
// SDK's paginators and waiters work with either.
//
// A Connector turns a target.Target (account, region, qualifier) into Clients by
// assuming the target's conventional deploy and publish roles, and caches
// the credentials until shortly before they expire. The deployer's own
// account goes through the same path.
//
// Errors from AWS are classified here (Classify, IsNotFound): throttling,
// 5xx and timeouts are transient; validation and access errors are not.
// ClassifyAs is the one place a failed call becomes ferry's typed error:
// retryable when transient, else the error its caller names it.
package cloud
