// Package lock owns the project-config lock, the run-once marker of a
// release, the start markers of the deploys to a target and the turns
// the deploys' rounds and the retirements' steps take at its Auto
// Scaling calls, all objects in the deployer bucket.
//
// # The lock
//
// Taking the lock is one atomic conditional write (PutObject with
// If-None-Match: *), so two executions can never both hold it. Its body is
// JSON: {"release_id", "execution", "since"}. The lock is re-entrant: when
// the release and execution that hold it take it again (a retried Lambda),
// that succeeds and since stays the same. When another release holds it,
// taking it fails with LockExistsError naming the holder, its execution and
// since when.
//
// Only the holder releases the lock: Release reads it, compares the holder,
// then deletes it with If-Match on the ETag it read. S3 checks If-Match and
// deletes in one step (so does the local S3 server, package s3server), so a
// lock replaced between the read and the delete is never removed: the delete
// fails with 412, a RetryableError whose retry reads the new holder. A lock
// already gone counts as released; one held by someone else is a LockError
// naming the holder. A dirty failure leaves the lock in place until a person
// removes it with `ferry unlock PROJECT CONFIG --release ID`, which removes
// it only when that release holds it.
//
// # Each release runs once
//
// The Validate state writes the run-once marker
// (_state/.../<release_id>/started, If-None-Match: *) as soon as the
// release decodes and validates, naming the execution (Consume), and
// Acquire writes it too when no execution consumed the release before. The
// first execution that sees a release consumes it, whatever becomes of that
// execution; a second execution with the same release id (a replayed input
// under a new name) is refused with BadReleaseError ("release X already ran
// (execution Y)") before it takes the lock, so a replay never holds the
// lock, even briefly. A retry by the same execution passes.
//
// # Deploys starting together take turns
//
// The deploys to one target account and region share its request buckets
// (Auto Scaling's one above all). Starts.Take writes a deploy's start
// marker (naming.StartKey, stamped with its execution's start), then lists
// the target's markers: those that started no later than it are ahead, a
// turn (Queue.Every) apart, and it waits for its own. Each writes before
// it lists, and S3's LIST is strongly consistent, so of two deploys
// starting together at least one sees the other: they never both go
// first. A lone deploy waits nothing. The markers are empty and expire.
//
// A marker also says its deploy is on its way to a healthy fleet: the
// deploy clears it (Starts.Arrive) once healthy or failed, and
// Starts.Underway counts the markers of a target within a horizon, so the
// deploys and retirements there share the account's request buckets with
// the deploys still racing their timeouts.
// A marker never cleared counts only until the horizon. A deploy that
// arrived is no longer ahead of the starts after it either: it made its
// first calls long before.
//
// # Deploys and retirements take turns at the account's Auto Scaling calls
//
// Each deploy and each retirement (Deploy's rounds, CleanUpSuccess's
// steps, each its own invocation after its own wait) is an execution of
// its own, none aware of the others' waits: a hundred of them beside
// each other meet in a second by chance, each within its own share,
// together past the account's one Auto Scaling bucket. Turns.Take is a
// calendar of the seconds in which they call: a step writes its turn
// (naming.TurnKey: when it begins, the most calls it makes), then lists
// the turns around it. A turn's calls fall anywhere in the second after
// it begins, so it counts in every whole second it overlaps, and the
// turns are counted as the bucket counts them: those overlapping one
// second make StepQueue.Calls at most (its burst, less a share for the
// callers that take no turn), those overlapping any w seconds in a row
// StepQueue.Refill more for each second after the first (its refill,
// less that share), over runs of up to StepQueue.Span seconds. Turns
// second after second so spend the bucket no faster than it refills. A
// step alone around now, with that room, goes now with the calls it
// asked for. Else it gives that up and writes a turn of StepQueue.Share
// at the first whole number of seconds from now with room (a state
// machine's Wait is whole seconds), lists again and keeps it only if
// the seconds still have room; else gives it up and looks further,
// spreading over as many seconds as it saw turns beside it. By the same
// write-then-list argument as the starts' (the turn listed last among
// those of any run saw all the others), the turns kept never overfill
// a run. A step that could keep none in a few writes holds none
// (StepTurn.Held) and takes a turn again after its wait. The turns are
// empty and expire.
//
// Reads fail closed: only "not found" means absent. A lock or marker whose
// body is not JSON, is empty, has no release id or is larger than 64 KiB
// (at most that much is read) is a LockError, never a free lock; throttling
// and 5xx responses are RetryableError, which the state machine retries.
package lock
