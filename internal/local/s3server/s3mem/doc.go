// Package s3mem is gofakes3 v1.2.0's in-memory backend
// (github.com/johannesboyne/gofakes3/backend/s3mem, MIT License, Copyright
// (c) 2016 Johannes Boyne), with its two internal helpers (goskipiter,
// s3io) folded in as iter.go, and one change, marked "ferry:" in
// bucket.go: deleting a key's current version while older ones exist
// makes the newest of them current, as S3 does ("Deleting object versions
// from a versioning-enabled bucket", Amazon S3 User Guide), which is how a
// user undeletes an object: by deleting the delete marker that is its
// current version. Upstream left the key with no current version, and
// every later read of it panicked, so package s3server refused such
// deletes. For the project's gates, ListBucketVersions builds each entry
// in a function of its own (listed), and what nothing calls is left out
// (WithVersionSeed, the iterator's Close). Keep the rest as upstream wrote
// it, so a newer gofakes3 can replace it.
package s3mem
