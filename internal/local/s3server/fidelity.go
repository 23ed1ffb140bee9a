package s3server

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/johannesboyne/gofakes3"

	"github.com/ferryhq/ferry/internal/local/s3server/s3mem"
	"github.com/ferryhq/ferry/internal/local/sameorigin"
)

// fidelity is the HTTP layer in front of gofakes3 that makes it answer as
// AWS S3 does where gofakes3 v1.2.0 does not and ferry, or a client of the
// local region, depends on it (see the package documentation):
//
//   - it verifies the flexible checksums of uploads (header or aws-chunked
//     trailer), refusing a mismatch with BadDigest before anything is
//     stored, keeps each object version's checksum, and answers GetObject
//     and HeadObject with it when checksum mode is enabled;
//   - it honours If-Match on DeleteObject;
//   - it serializes every write to a key (PutObject, CopyObject,
//     DeleteObject, CompleteMultipartUpload, DeleteObjects for the whole
//     bucket) with the conditional checks on that key, so a check and the
//     write it guards are one atomic step;
//   - it answers HeadObject with a versionId for that version, and refuses
//     the version deletes s3mem would corrupt.
//
// Everything else passes to gofakes3 unchanged.
type fidelity struct {
	next    http.Handler
	backend *s3mem.Backend
	locks   keyLocks

	mu sync.Mutex
	// sums is the checksum of each object version written through
	// PutObject or CopyObject, by s3mem's version id (which s3mem assigns
	// to every write, also in a bucket without versioning, and never
	// reuses).
	sums map[versionKey]checksum

	requests atomic.Uint64

	// etags are the ETags of the object versions CompleteMultipartUpload
	// made (see complete), by s3mem's version id.
	etags map[versionKey]string

	// now is the server's clock (see answer).
	now func() time.Time

	// checked, when set, is called by a DeleteObject whose condition
	// passed, before it deletes (tests use it to interleave a write).
	checked func(objectKey)
}

func newFidelity(next http.Handler, backend *s3mem.Backend, now func() time.Time) *fidelity {
	return &fidelity{next: next, backend: backend, now: now, sums: map[versionKey]checksum{}, etags: map[versionKey]string{}}
}

type objectKey struct{ bucket, key string }

type versionKey struct {
	objectKey
	version gofakes3.VersionID
}

// ServeHTTP answers r (see answer).
func (f *fidelity) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a := &answer{ResponseWriter: w, now: f.now, method: r.Method}
	f.route(a, r)
	a.done()
}

// route routes as gofakes3 does (path-style addressing only, the
// server's configuration): /bucket, /bucket/key, with the sub-resources
// gofakes3 dispatches on.
func (f *fidelity) route(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && r.URL.RawQuery == "" &&
		sameorigin.ContentType(r, "multipart/form-data", "application/x-www-form-urlencoded") == nil {
		// A POST Object upload (S3 API Reference, "POST Object") is what
		// an HTML form of any web page can send; ferry never uses it.
		f.writeError(w, r, &s3Error{status: http.StatusForbidden, code: "AccessDenied",
			message: "refused: the local S3 takes no POST uploads (HTML forms); use PutObject"})
		return
	}
	bucket, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	q := r.URL.Query()
	switch {
	case bucket == "":
		f.next.ServeHTTP(w, r)
	case key == "":
		f.routeBucket(w, r, bucket, q)
	case r.Method == http.MethodPost && q.Has("uploads"):
		f.next.ServeHTTP(w, typed(r))
	case q.Has("uploads") || q.Has("versioning") || q.Has("versions"):
		f.next.ServeHTTP(w, r)
	case r.Method == http.MethodGet && q.Has("attributes"):
		f.attributes(w, r, objectKey{bucket, key}, versionFrom(q))
	case q.Has("uploadId"):
		f.routeUpload(w, r, objectKey{bucket, key})
	default:
		f.object(w, r, objectKey{bucket, key}, versionFrom(q))
	}
}

// routeBucket routes a request of a bucket (/bucket).
func (f *fidelity) routeBucket(w http.ResponseWriter, r *http.Request, bucket string, q url.Values) {
	switch {
	case r.Method == http.MethodGet && listingQuery(q):
		f.list(w, r, bucket)
	case r.Method == http.MethodPost && q.Has("delete"):
		f.deleteObjects(w, r, bucket)
	default:
		f.next.ServeHTTP(w, r)
	}
}

// routeUpload routes a request of a multipart upload of k (?uploadId).
func (f *fidelity) routeUpload(w http.ResponseWriter, r *http.Request, k objectKey) {
	switch {
	case r.Method == http.MethodPut && r.Header.Get("X-Amz-Copy-Source") == "":
		f.put(w, r, k, false)
	case r.Method == http.MethodPost:
		f.complete(w, r, k)
	default:
		f.next.ServeHTTP(w, r)
	}
}

// versionFrom is the versionId sub-resource as gofakes3 reads it ("null"
// is no version).
func versionFrom(q url.Values) gofakes3.VersionID {
	if v := q.Get("versionId"); v != "null" {
		return gofakes3.VersionID(v)
	}
	return ""
}

func (f *fidelity) object(w http.ResponseWriter, r *http.Request, k objectKey, version gofakes3.VersionID) {
	switch r.Method {
	case http.MethodPut:
		switch {
		case version != "":
			f.next.ServeHTTP(w, r) // gofakes3 refuses it
		case r.Header.Get("X-Amz-Copy-Source") != "":
			f.copy(w, r, k)
		default:
			f.put(w, r, k, true)
		}
	case http.MethodDelete:
		if version != "" {
			f.deleteVersion(w, r, k, version)
			return
		}
		f.delete(w, r, k)
	case http.MethodGet, http.MethodHead:
		f.read(w, r, k, version)
	default:
		f.next.ServeHTTP(w, r)
	}
}

// put verifies an upload's checksum and passes the bare payload to
// gofakes3. store is true for PutObject (the key's write is serialized and
// the version's checksum kept), false for UploadPart.
//
// A PutObject answer carries the object's checksum: the one the client
// sent, or S3's default CRC64NVME when it sent none.
func (f *fidelity) put(w http.ResponseWriter, r *http.Request, k objectKey, store bool) {
	up, e := readUpload(r)
	if e != nil {
		f.writeError(w, r, e)
		return
	}
	fwd := up.request(r)
	if !store {
		hw := &hookWriter{ResponseWriter: w, before: func(status int) {
			if up.sum != nil && success(status) {
				up.sum.set(w.Header())
			}
		}}
		f.next.ServeHTTP(hw, fwd)
		hw.finish()
		return
	}
	sum := checksum{alg: defaultAlgorithm, value: defaultAlgorithm.sum(up.body)}
	if up.sum != nil {
		sum = *up.sum
	}
	f.write(w, typed(fwd), k, &sum)
}

// write passes a write of k to gofakes3 with k locked, and keeps sum as
// the checksum of the version it writes (nil: the version has none, as for
// CompleteMultipartUpload, whose composite checksums are not modelled).
func (f *fidelity) write(w http.ResponseWriter, r *http.Request, k objectKey, sum *checksum) {
	defer f.locks.lockKey(k)()
	prior := f.current(k)
	hw := &hookWriter{ResponseWriter: w, before: func(status int) {
		if sum != nil && success(status) {
			sum.set(w.Header())
		}
	}}
	f.next.ServeHTTP(hw, r)
	hw.finish()
	if success(hw.status) {
		f.wrote(k, prior, sum)
	}
}

// copy passes a CopyObject to gofakes3 with the destination locked. The
// copy's checksum is of the algorithm x-amz-checksum-algorithm names, else
// of the source's: "If the CopyObject request does not include this
// x-amz-checksum-algorithm header, the checksum algorithm will be copied
// from the source object to the destination object" (CopyObject,
// ChecksumAlgorithm, Amazon S3 API Reference); a source without one gets
// S3's default.
func (f *fidelity) copy(w http.ResponseWriter, r *http.Request, k objectKey) {
	alg := defaultAlgorithm
	if name := r.Header.Get("X-Amz-Checksum-Algorithm"); name != "" {
		a, ok := algorithmNamed(name)
		if !ok {
			f.writeError(w, r, errUnsupportedAlgorithm)
			return
		}
		alg = a
	} else if src, ok := f.copySourceChecksum(r.Header.Get("X-Amz-Copy-Source")); ok {
		alg = src.alg
	}
	fwd := r.Clone(r.Context())
	fwd.Header.Del("X-Amz-Checksum-Algorithm")

	defer f.locks.lockKey(k)()
	prior := f.current(k)
	hw := &hookWriter{ResponseWriter: w}
	f.next.ServeHTTP(hw, fwd)
	hw.finish()
	if !success(hw.status) {
		return
	}
	var sum *checksum
	if obj, err := f.backend.HeadObject(k.bucket, k.key); err == nil {
		if body, err := f.body(k, obj.VersionID); err == nil {
			sum = &checksum{alg: alg, value: alg.sum(body)}
		}
	}
	f.wrote(k, prior, sum)
}

// copySourceChecksum is the checksum kept for the object version an
// x-amz-copy-source names ("/bucket/key", "bucket/key?versionId=v", URL
// encoded).
func (f *fidelity) copySourceChecksum(source string) (checksum, bool) {
	path, query, _ := strings.Cut(source, "?")
	if p, err := url.PathUnescape(path); err == nil {
		path = p
	}
	bucket, key, ok := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	if !ok {
		return checksum{}, false
	}
	src := objectKey{bucket, key}
	version := gofakes3.VersionID("")
	if q, err := url.ParseQuery(query); err == nil {
		version = versionFrom(q)
	}
	if version == "" {
		version = f.current(src)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	sum, ok := f.sums[versionKey{src, version}]
	return sum, ok
}

// delete passes a DeleteObject to gofakes3 with k locked, first checking
// If-Match against the current version: "If the ETag doesn't match, the
// delete operation fails with a 412 Precondition Failed response", and
// "Conditional delete evaluations only apply to the current version of the
// object" ("How to perform conditional deletes", Amazon S3 User Guide), so
// a key with no current object (none, or a delete marker) is 404 NoSuchKey.
// If-Match: * only asks that the object exist.
func (f *fidelity) delete(w http.ResponseWriter, r *http.Request, k objectKey) {
	if refuseDirectoryConditions(w, r, f) {
		return
	}
	defer f.locks.lockKey(k)()
	prior := f.current(k)
	if ifMatch := r.Header.Get("If-Match"); ifMatch != "" {
		obj, err := f.backend.HeadObject(k.bucket, k.key)
		switch {
		case gofakes3.HasErrorCode(err, gofakes3.ErrNoSuchBucket):
			// gofakes3 answers NoSuchBucket.
		case gofakes3.HasErrorCode(err, gofakes3.ErrNoSuchKey):
			f.writeError(w, r, &s3Error{http.StatusNotFound, "NoSuchKey", "The specified key does not exist."})
			return
		case err != nil:
			f.writeError(w, r, &s3Error{http.StatusInternalServerError, "InternalError", err.Error()})
			return
		case !etagMatches(ifMatch, f.etag(k, obj.VersionID, obj.Hash)):
			f.writeError(w, r, errPreconditionFailed)
			return
		}
	}
	if f.checked != nil {
		f.checked(k)
	}
	fwd := r.Clone(r.Context())
	fwd.Header.Del("If-Match")
	hw := &hookWriter{ResponseWriter: w}
	f.next.ServeHTTP(hw, fwd)
	hw.finish()
	if success(hw.status) {
		f.wrote(k, prior, nil)
	}
}

// deleteVersion passes a DeleteObject of one version to gofakes3 with k
// locked. If-Match with a versionId is refused as not implemented (S3
// evaluates conditional deletes against the current version only, and
// the combination is not modelled here). A delete of the current version
// makes the newest older one current, as in S3 ("Deleting object versions
// from a versioning-enabled bucket", Amazon S3 User Guide): deleting the
// delete marker that is the current version undeletes the object
// (package s3mem).
func (f *fidelity) deleteVersion(w http.ResponseWriter, r *http.Request, k objectKey, version gofakes3.VersionID) {
	if r.Header.Get("If-Match") != "" {
		f.writeError(w, r, errNotImplemented)
		return
	}
	if refuseDirectoryConditions(w, r, f) {
		return
	}
	defer f.locks.lockKey(k)()
	hw := &hookWriter{ResponseWriter: w}
	f.next.ServeHTTP(hw, r)
	hw.finish()
	if success(hw.status) {
		f.mu.Lock()
		delete(f.sums, versionKey{k, version})
		delete(f.etags, versionKey{k, version})
		f.mu.Unlock()
	}
}

// refuseDirectoryConditions answers a DeleteObject that carries a
// condition S3 supports for directory buckets only
// (x-amz-if-match-last-modified-time, x-amz-if-match-size: "This
// functionality is only supported for directory buckets", DeleteObject,
// Amazon S3 API Reference) with NotImplemented rather than ignore it.
func refuseDirectoryConditions(w http.ResponseWriter, r *http.Request, f *fidelity) bool {
	if r.Header.Get("X-Amz-If-Match-Last-Modified-Time") == "" && r.Header.Get("X-Amz-If-Match-Size") == "" {
		return false
	}
	f.writeError(w, r, errNotImplemented)
	return true
}

// deleteObjects passes a DeleteObjects to gofakes3 with the whole bucket
// locked. Conditional entries (an ETag per object) are refused as not
// implemented rather than ignored.
func (f *fidelity) deleteObjects(w http.ResponseWriter, r *http.Request, bucket string) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		f.writeError(w, r, errIncompleteBody)
		return
	}
	var req struct {
		Objects []struct {
			Key       string
			VersionID string  `xml:"VersionId"`
			ETag      *string `xml:"ETag"`
		} `xml:"Object"`
	}
	if err := xml.Unmarshal(body, &req); err != nil {
		f.writeError(w, r, &s3Error{http.StatusBadRequest, "MalformedXML", "The XML you provided was not well-formed or did not validate against our published schema."})
		return
	}
	defer f.locks.lockBucket(bucket)()
	prior := map[objectKey]gofakes3.VersionID{}
	for _, o := range req.Objects {
		k := objectKey{bucket, o.Key}
		if o.ETag != nil {
			f.writeError(w, r, errNotImplemented)
			return
		}
		prior[k] = f.current(k)
	}
	fwd := r.Clone(r.Context())
	fwd.Body = io.NopCloser(bytes.NewReader(body))
	fwd.ContentLength = int64(len(body))
	hw := &hookWriter{ResponseWriter: w}
	f.next.ServeHTTP(hw, fwd)
	hw.finish()
	if !success(hw.status) {
		return
	}
	for k, v := range prior {
		f.wrote(k, v, nil)
	}
	f.mu.Lock()
	for _, o := range req.Objects {
		if o.VersionID != "" {
			delete(f.sums, versionKey{objectKey{bucket, o.Key}, gofakes3.VersionID(o.VersionID)})
			delete(f.etags, versionKey{objectKey{bucket, o.Key}, gofakes3.VersionID(o.VersionID)})
		}
	}
	f.mu.Unlock()
}

// read passes a GetObject or HeadObject to gofakes3. With checksum mode
// enabled ("To retrieve the checksum, this mode must be enabled",
// GetObject, ChecksumMode, Amazon S3 API Reference) k is locked and a 200
// answer carries the checksum kept for the version it serves; S3 returns
// no full-object checksum for a range, so a 206 carries none.
//
// A HeadObject of one version is answered from a GetObject of that
// version without its body: gofakes3 v1.2.0 answers HeadObject with the
// current version whatever versionId says.
//
// A multipart object is answered with its own ETag (see complete).
func (f *fidelity) read(w http.ResponseWriter, r *http.Request, k objectKey, version gofakes3.VersionID) {
	hw := &hookWriter{ResponseWriter: w}
	fwd := r
	if r.Method == http.MethodHead && version != "" {
		fwd = r.Clone(r.Context())
		fwd.Method = http.MethodGet
		hw.discard = true
	}
	var sum *checksum
	if strings.EqualFold(r.Header.Get("X-Amz-Checksum-Mode"), "ENABLED") {
		defer f.locks.lockKey(k)()
		v := version
		if v == "" {
			v = f.current(k)
		}
		f.mu.Lock()
		if s, ok := f.sums[versionKey{k, v}]; ok {
			sum = &s
		}
		f.mu.Unlock()
	}
	hw.before = func(status int) {
		if !success(status) && status != http.StatusNotModified {
			return
		}
		// The version served, as gofakes3 names it.
		v := gofakes3.VersionID(w.Header().Get("X-Amz-Version-Id"))
		if v == "" {
			v = f.current(k)
		}
		if e, ok := f.multipartETag(k, v); ok {
			w.Header().Set("ETag", e)
		}
		if sum != nil && status == http.StatusOK {
			sum.set(w.Header())
		}
	}
	f.next.ServeHTTP(hw, fwd)
	hw.finish()
}

// current is s3mem's version id of k's current object, "" when there is
// none (no object, a delete marker, no bucket).
func (f *fidelity) current(k objectKey) gofakes3.VersionID {
	obj, err := f.backend.HeadObject(k.bucket, k.key)
	if err != nil {
		return ""
	}
	return obj.VersionID
}

// body reads one version of k from the backend.
func (f *fidelity) body(k objectKey, version gofakes3.VersionID) ([]byte, error) {
	obj, err := f.backend.GetObjectVersion(k.bucket, k.key, version, nil)
	if err != nil {
		return nil, err
	}
	defer obj.Contents.Close()
	return io.ReadAll(obj.Contents)
}

// wrote records a successful write of k, whose current version was prior
// before it: the new current version's checksum is sum (nil: none), and in
// a bucket without versioning enabled the write replaced prior, whose
// checksum goes.
func (f *fidelity) wrote(k objectKey, prior gofakes3.VersionID, sum *checksum) {
	cfg, err := f.backend.VersioningConfiguration(k.bucket)
	replaced := err == nil && cfg.Status != gofakes3.VersioningEnabled
	var now gofakes3.VersionID
	if sum != nil {
		now = f.current(k)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if replaced && prior != "" {
		delete(f.sums, versionKey{k, prior})
		delete(f.etags, versionKey{k, prior})
	}
	if sum != nil && now != "" {
		f.sums[versionKey{k, now}] = *sum
	}
}

// etagMatches reports whether an If-Match value (*, or one or more
// entity tags, quoted or not) matches an object's ETag.
func etagMatches(ifMatch, etag string) bool {
	want := strings.Trim(etag, `"`)
	for _, tag := range strings.Split(ifMatch, ",") {
		tag = strings.TrimSpace(tag)
		if tag == "*" || strings.Trim(tag, `"`) == want {
			return true
		}
	}
	return false
}

func success(status int) bool { return status >= 200 && status < 300 }

// hookWriter passes a response through, calling before just before the
// status is written, and records the status. discard drops the body.
type hookWriter struct {
	http.ResponseWriter
	before  func(status int)
	status  int
	discard bool
}

func (h *hookWriter) WriteHeader(status int) {
	if h.status == 0 {
		h.status = status
		if h.before != nil {
			h.before(status)
		}
	}
	h.ResponseWriter.WriteHeader(status)
}

func (h *hookWriter) Write(p []byte) (int, error) {
	if h.status == 0 {
		h.WriteHeader(http.StatusOK)
	}
	if h.discard {
		return len(p), nil
	}
	return h.ResponseWriter.Write(p)
}

// finish writes the status of a handler that returned without writing
// one (net/http would send 200).
func (h *hookWriter) finish() {
	if h.status == 0 {
		h.WriteHeader(http.StatusOK)
	}
}

// s3Error is an error answer: status, S3's error code and message.
type s3Error struct {
	status  int
	code    string
	message string
}

var (
	errPreconditionFailed = &s3Error{http.StatusPreconditionFailed, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold"}
	errNotImplemented     = &s3Error{http.StatusNotImplemented, "NotImplemented", "A header you provided implies functionality that is not implemented"}
	errIncompleteBody     = &s3Error{http.StatusBadRequest, "IncompleteBody", "You did not provide the number of bytes specified by the Content-Length HTTP header."}
	errMissingLength      = &s3Error{http.StatusLengthRequired, "MissingContentLength", "You must provide the Content-Length HTTP header."}
	errMultipleChecksums  = &s3Error{http.StatusBadRequest, "InvalidRequest", "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed."}
	errNoChecksumValue    = &s3Error{http.StatusBadRequest, "InvalidRequest", "x-amz-sdk-checksum-algorithm specified, but no corresponding x-amz-checksum-* or x-amz-trailer headers were found."}
	errMalformedTrailer   = &s3Error{http.StatusBadRequest, "MalformedTrailerError", "The request contained trailing data that was not well-formed or did not conform to our published schema."}
	// errUnsupportedAlgorithm answers an algorithm S3 does not know:
	// "Unrecognized or unsupported values will respond with the HTTP status
	// code 400 Bad Request" (CopyObject, ChecksumAlgorithm, Amazon S3 API
	// Reference).
	errUnsupportedAlgorithm = &s3Error{http.StatusBadRequest, "InvalidRequest", "Checksum algorithm provided is unsupported. Please try again with any of the valid types: [CRC32, CRC32C, CRC64NVME, SHA1, SHA256]"}
)

// writeError answers with S3's error document (none for HEAD, as S3).
func (f *fidelity) writeError(w http.ResponseWriter, r *http.Request, e *s3Error) {
	id := fmt.Sprintf("%016X", f.requests.Add(1))
	w.Header().Set("X-Amz-Request-Id", id)
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(e.status)
	if r.Method == http.MethodHead {
		return
	}
	doc := struct {
		XMLName   xml.Name `xml:"Error"`
		Code      string
		Message   string
		Resource  string
		RequestID string `xml:"RequestId"`
	}{Code: e.code, Message: e.message, Resource: r.URL.Path, RequestID: id}
	_, _ = io.WriteString(w, xml.Header)
	_ = xml.NewEncoder(w).Encode(doc)
}

// upload is the payload of a PutObject or UploadPart, decoded and
// verified, and the checksum the client sent with it (nil: none).
type upload struct {
	body    []byte
	sum     *checksum
	chunked bool
}

// readUpload reads and verifies the payload of r. S3 verifies an upload's
// checksum, sent as a header or as an aws-chunked trailer, and refuses a
// mismatch with BadDigest, storing nothing: "S3 then independently
// calculates a checksum of your data and validates it against the provided
// checksum value. Objects are accepted only after confirming data
// integrity was maintained during transit" ("Checking object integrity for
// data uploads in Amazon S3", Amazon S3 User Guide). Content-MD5 is left
// to gofakes3, which verifies it the same way.
func readUpload(r *http.Request) (upload, *s3Error) {
	if r.Header.Get("Content-Length") == "" {
		return upload{}, errMissingLength
	}
	up := upload{chunked: awsChunked(r)}
	body, trailers, serr := readPayload(r, up.chunked)
	if serr != nil {
		return upload{}, serr
	}
	up.body = body
	sums, serr := uploadChecksums(r, trailers)
	if serr != nil {
		return upload{}, serr
	}
	if serr := checkSDKAlgorithm(r, sums); serr != nil {
		return upload{}, serr
	}
	if len(sums) == 1 {
		sum := sums[0]
		if serr := verifyChecksum(sum, up.body); serr != nil {
			return upload{}, serr
		}
		up.sum = &sum
	}
	return up, nil
}

// readPayload reads r's body: as sent, or decoded from aws-chunked
// encoding with its trailers.
func readPayload(r *http.Request, chunked bool) ([]byte, http.Header, *s3Error) {
	if !chunked {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, nil, errIncompleteBody
		}
		return body, http.Header{}, nil
	}
	n, err := strconv.ParseInt(r.Header.Get("X-Amz-Decoded-Content-Length"), 10, 64)
	if err != nil || n < 0 {
		return nil, nil, errMissingLength
	}
	body, trailers, err := decodeAWSChunked(r.Body, n)
	if err != nil {
		return nil, nil, errIncompleteBody
	}
	return body, trailers, nil
}

// uploadChecksums gathers the checksums an upload carries, as headers or
// as the trailers X-Amz-Trailer announces; S3 accepts at most one.
func uploadChecksums(r *http.Request, trailers http.Header) ([]checksum, *s3Error) {
	var sums []checksum
	for name, values := range r.Header {
		if alg, ok := algorithmOfHeader(name); ok {
			for _, v := range values {
				sums = append(sums, checksum{alg, v})
			}
		}
	}
	for _, v := range r.Header.Values("X-Amz-Trailer") {
		for _, name := range strings.Split(v, ",") {
			alg, ok := algorithmOfHeader(strings.TrimSpace(name))
			if !ok {
				continue
			}
			value := trailers.Get(alg.header())
			if value == "" {
				return nil, errMalformedTrailer
			}
			sums = append(sums, checksum{alg, value})
		}
	}
	if len(sums) > 1 {
		return nil, errMultipleChecksums
	}
	return sums, nil
}

// checkSDKAlgorithm checks x-amz-sdk-checksum-algorithm, when set, against
// the checksum the upload carries.
func checkSDKAlgorithm(r *http.Request, sums []checksum) *s3Error {
	name := r.Header.Get("X-Amz-Sdk-Checksum-Algorithm")
	if name == "" {
		return nil
	}
	alg, ok := algorithmNamed(name)
	switch {
	case !ok:
		return errUnsupportedAlgorithm
	case len(sums) == 0:
		return errNoChecksumValue
	case alg.name != sums[0].alg.name:
		// "If the individual checksum value you provide through
		// x-amz-checksum-algorithm doesn't match the checksum
		// algorithm you set through x-amz-sdk-checksum-algorithm,
		// Amazon S3 fails the request with a BadDigest error"
		// (PutObject, ChecksumAlgorithm, Amazon S3 API Reference).
		return &s3Error{http.StatusBadRequest, "BadDigest",
			fmt.Sprintf("The %s checksum you specified does not match the x-amz-sdk-checksum-algorithm %s.", sums[0].alg.name, alg.name)}
	}
	return nil
}

// verifyChecksum compares sum with the checksum of body, as S3 does before
// it stores anything.
func verifyChecksum(sum checksum, body []byte) *s3Error {
	if !sum.alg.valid(sum.value) {
		return &s3Error{http.StatusBadRequest, "InvalidRequest",
			fmt.Sprintf("Value for %s header is invalid.", strings.ToLower(sum.alg.header()))}
	}
	if got := sum.alg.sum(body); got != sum.value {
		return &s3Error{http.StatusBadRequest, "BadDigest",
			fmt.Sprintf("The %s you specified did not match the calculated checksum.", sum.alg.name)}
	}
	return nil
}

// request is r carrying the bare payload for gofakes3: its length as
// Content-Length, and none of the checksum and aws-chunked headers, which
// gofakes3 would keep as the object's metadata and answer every GetObject
// with.
func (up upload) request(r *http.Request) *http.Request {
	fwd := r.Clone(r.Context())
	fwd.Body = io.NopCloser(bytes.NewReader(up.body))
	fwd.ContentLength = int64(len(up.body))
	fwd.Header.Set("Content-Length", strconv.Itoa(len(up.body)))
	for _, a := range algorithms {
		fwd.Header.Del(a.header())
	}
	fwd.Header.Del("X-Amz-Sdk-Checksum-Algorithm")
	fwd.Header.Del("X-Amz-Trailer")
	fwd.Header.Del("X-Amz-Decoded-Content-Length")
	if up.chunked {
		fwd.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
		var kept []string
		for _, v := range fwd.Header.Values("Content-Encoding") {
			for _, e := range strings.Split(v, ",") {
				if e = strings.TrimSpace(e); e != "" && !strings.EqualFold(e, "aws-chunked") {
					kept = append(kept, e)
				}
			}
		}
		fwd.Header.Del("Content-Encoding")
		if len(kept) > 0 {
			fwd.Header.Set("Content-Encoding", strings.Join(kept, ","))
		}
	}
	return fwd
}

// keyLocks serializes the writes to each key, and DeleteObjects with the
// writes to its bucket: a key's lock holds its bucket's lock shared.
type keyLocks struct {
	mu      sync.Mutex
	buckets map[string]*sync.RWMutex
	keys    map[objectKey]*keyLock
}

type keyLock struct {
	mu   sync.Mutex
	refs int
}

func (l *keyLocks) bucket(name string) *sync.RWMutex {
	if l.buckets == nil {
		l.buckets = map[string]*sync.RWMutex{}
		l.keys = map[objectKey]*keyLock{}
	}
	b := l.buckets[name]
	if b == nil {
		b = &sync.RWMutex{}
		l.buckets[name] = b
	}
	return b
}

// lockKey locks k and returns its unlock.
func (l *keyLocks) lockKey(k objectKey) (unlock func()) {
	l.mu.Lock()
	b := l.bucket(k.bucket)
	kl := l.keys[k]
	if kl == nil {
		kl = &keyLock{}
		l.keys[k] = kl
	}
	kl.refs++
	l.mu.Unlock()

	b.RLock()
	kl.mu.Lock()
	return func() {
		kl.mu.Unlock()
		b.RUnlock()
		l.mu.Lock()
		if kl.refs--; kl.refs == 0 {
			delete(l.keys, k)
		}
		l.mu.Unlock()
	}
}

// holders is how many requests hold or wait for k's lock.
func (l *keyLocks) holders(k objectKey) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if kl := l.keys[k]; kl != nil {
		return kl.refs
	}
	return 0
}

// lockBucket locks every key of bucket and returns the unlock.
func (l *keyLocks) lockBucket(name string) (unlock func()) {
	l.mu.Lock()
	b := l.bucket(name)
	l.mu.Unlock()
	b.Lock()
	return b.Unlock
}
