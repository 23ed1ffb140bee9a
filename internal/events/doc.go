// Package events owns ferry's deploy events: the facts a deploy, a heal and
// a promotion make true, put on the default EventBridge bus of the target
// account with source "ferry" (Source) so the rest of a platform hears of
// them without ferry's code in the path (EventBridge rules route them to
// SNS, to chat through API destinations, to GitHub deployment statuses).
//
// Each kind (Kinds) has its detail-type ("Release Succeeded"), its name
// ("release_succeeded", the detail's "event") and the Go type of its
// detail's body; the detail of every kind starts with "schema_version"
// (Version) and "event", then the Head every kind shares and its own keys.
// Those types are the one place of truth for the shapes: ferry schema
// events makes their JSON Schema from them.
//
// Delivery is at least once, dedupable: Head.ID is a digest of the
// execution, the kind and what the fact is about (a canary step's service
// and step), the same on every retry of the task that finds it, so a
// consumer drops an id it has seen. Nothing else in a detail depends on
// the attempt but Head.At.
//
// Publish is best effort for the deploy: it never returns an error. It
// keeps PutEvents' rules (API Reference, PutEvents): at most
// MaxEntriesPerRequest entries a request, no entry (Size, as "Calculating
// PutEvents event entry size" counts it) and no request reaching
// MaxEntrySize: an entry that would is dropped and logged. Entries the
// answer fails (FailedEntryCount, each result's ErrorCode) are put again
// once, at once, when their code is one AWS calls retryable
// (InternalFailure, ThrottlingException); what still fails, or a call that
// fails whole, is logged with slog and left.
package events
