// Package halt owns the halt marker of a project-config: an object in the
// deployer bucket that asks a running deploy to stop.
//
// `ferry halt` writes the marker, {"by", "reason", "at"}. A running deploy
// treats it as a halt only if S3's LastModified is at or after the
// execution's start. LastModified has one-second granularity, so the check
// is LastModified >= start truncated to the second: a marker left behind by
// an old halt never stops a new deploy, and a marker written in the same
// second as the start counts as a halt (fail closed). The execution that a
// marker halted removes it when it ends.
//
// Reads fail closed: only "not found" means no marker. A marker that exists
// but cannot be read, written at or after the execution's start, is a halt
// with the reason "unreadable halt marker".
//
// A halt does not promise that a release won't deploy: once CleanUpSuccess
// passed its point of no return, the deploy ends Success.
package halt
