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
// atomically (the check and the write happen under one backend lock). An
// HTTP layer in front of it (fidelity.go) closes the gaps to AWS S3 that
// ferry depends on:
//
//   - Conditional deletes. gofakes3 ignores If-Match on DeleteObject; the
//     layer honours it as S3 does: 412 PreconditionFailed when the current
//     object's ETag differs, 404 NoSuchKey when there is no current object
//     (none, or a delete marker), If-Match: * for "exists". Every write to
//     a key (PutObject, CopyObject, DeleteObject, CompleteMultipartUpload;
//     DeleteObjects for its whole bucket) holds that key's lock across its
//     check and the write, so a write can never land between a conditional
//     delete's check and its delete. The directory-bucket-only conditions
//     (x-amz-if-match-size, x-amz-if-match-last-modified-time), If-Match on
//     a delete of one version, and conditional DeleteObjects entries are
//     refused with 501 NotImplemented rather than ignored.
//   - Checksums. gofakes3 verifies Content-MD5 but not the flexible
//     checksums (x-amz-checksum-crc32, -crc32c, -crc64nvme, -sha1,
//     -sha256), keeps their headers as object metadata and returns them on
//     every GetObject. The layer verifies the checksum of every PutObject
//     and UploadPart, sent as a header or as an aws-chunked trailer (it
//     decodes every aws-chunked variant; gofakes3 decodes only
//     STREAMING-AWS4-HMAC-SHA256-PAYLOAD and would store the framing of
//     the others), answers a mismatch with 400 BadDigest before anything
//     is stored, keeps each object version's checksum (S3's default
//     CRC64NVME for an upload that sent none) outside the object's
//     metadata, and returns it on PutObject, and on GetObject and
//     HeadObject only with x-amz-checksum-mode: ENABLED.
//   - Versions. Options.Versioned creates buckets with versioning enabled
//     (the deployer bucket is versioned in AWS). The layer answers a
//     HeadObject with a versionId for that version (gofakes3 answers with
//     the current one). The backend is a copy of gofakes3's s3mem
//     (package s3mem) in which deleting the current version makes the
//     newest older one current, as S3 does, so deleting the delete marker
//     that is the current version undeletes the object.
//   - What a user sees with the AWS CLI or an SDK (parity.go): every answer
//     is dated (Date) on the server's clock, the one Last-Modified follows;
//     error documents carry S3's message where gofakes3 sends none
//     (NoSuchKey: "The specified key does not exist."); an object put
//     without a type is binary/octet-stream; a multipart object's ETag is
//     the MD5 of its parts' MD5s and "-N" on GetObject, HeadObject, the
//     listings and conditional deletes, not only on
//     CompleteMultipartUpload; ListObjectVersions lists keys in order, each
//     key's versions newest first; GetObjectAttributes is answered (ETag,
//     Checksum, ObjectParts of a multipart object as its count of parts,
//     StorageClass STANDARD, ObjectSize).
//
// In front of it all, package sameorigin keeps web pages the user opens
// out: a write from another origin (or a CORS preflight) is refused with
// 403, no Access-Control-* header is answered (gofakes3 answers "*"), an
// HTML form's POST Object upload is refused, and every GET or HEAD is
// answered as a sandboxed attachment, so an uploaded page cannot run on
// the server's origin.
//
// Not modelled: composite checksums of multipart uploads (an object
// completed from parts carries no checksum); x-amz-delete-marker on the
// 404 of a GetObject whose current version is a delete marker; a delete
// marker for a key that never existed. gofakes3 also keeps, on a
// PutObject, the user metadata (x-amz-meta-*) of the object it replaces
// that the new one does not set, where S3 replaces all of it.
package s3server
