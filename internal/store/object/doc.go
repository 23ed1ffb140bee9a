// Package object owns how ferry reads and writes its own objects in S3,
// the small state objects of the deployer bucket (locks, run-once markers,
// halt markers, records) and the assets the client uploads: one bucket's
// Store, one strict JSON decoder, one naming of S3 failures.
//
// Reads fail closed: Get reports an object absent only when S3 says it
// does not exist (cloud.IsNotFound); every other failure is an error, and
// an object larger than the read allows is an error too, never a
// truncated body.
//
// Failures are named by the owner of the objects (Errors): a transient
// one is a *failure.RetryableError; any other is what the owner refuses
// with (a *failure.LockError for the lock), or an error that carries no
// name, which the deployer's handler names by its task. The lock, halt,
// ledger and asset packages own what their objects mean; this package
// owns only how they are read and written.
package object
