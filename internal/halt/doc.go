// Package halt owns the halt marker of a project-config: an object in the
// deployer bucket that asks a running deploy to stop.
//
// `ferry halt` writes the marker (who, why, when). A running deploy treats
// it as a halt only if S3 says it was written at or after the execution
// started, so a marker left behind by an old halt never stops a new deploy.
// The execution that a marker halted removes it when it ends.
//
// Reads fail closed: only "not found" means no marker. A marker that exists
// but cannot be read, written at or after the execution's start, is a halt.
package halt
