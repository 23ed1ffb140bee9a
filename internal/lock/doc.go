// Package lock owns the project-config lock and the run-once marker of a
// release, both objects in the deployer bucket.
//
// Taking the lock is one atomic conditional write (PutObject with
// If-None-Match: *), so two executions can never both hold it. The lock is
// re-entrant for the release that holds it, so a retried Lambda succeeds.
// Only the holder releases it; a lock left behind after a dirty failure stays
// until a person removes it.
//
// A release runs at most once: when it takes the lock, Acquire also writes
// the release's run-once marker atomically, and a second execution of the
// same release is refused.
//
// Reads fail closed: only "not found" means absent; an unreadable lock or
// marker is an error, never a free lock.
package lock
