package s3server

import (
	"bytes"
	"cmp"
	"encoding/hex"
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/johannesboyne/gofakes3"
)

// This file holds the answers a user of the local region sees with the
// AWS CLI or an SDK and gofakes3 v1.2.0 gives differently from S3: the
// Date header, error messages, the default Content-Type, a multipart
// object's ETag, the order of ListObjectVersions, and GetObjectAttributes.

// defaultContentType is the type S3 gives an object uploaded without one:
// "Content-Type: ... Default: binary/octet-stream" (Common Request Headers;
// PutObject, ContentType, Amazon S3 API Reference).
const defaultContentType = "binary/octet-stream"

// errorMessages are S3's messages for the error codes gofakes3 answers
// with an empty Message ("Error responses", Amazon S3 API Reference,
// https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html).
var errorMessages = map[string]string{
	"NoSuchKey":     "The specified key does not exist.",
	"NoSuchVersion": "Indicates that the version ID specified in the request does not match an existing version.",
	"NoSuchUpload":  "The specified multipart upload does not exist. The upload ID might be invalid, or the multipart upload might have been aborted or completed.",
	"InvalidPart":   "One or more of the specified parts could not be found. The part might not have been uploaded, or the specified entity tag might not have matched the part's entity tag.",
}

// answer is the response writer every request goes through: it dates the
// answer on the server's clock, the clock Last-Modified follows (S3's Date
// is "the date and time Amazon S3 responded", Common Response Headers), and
// fills in the Message of an error document gofakes3 leaves empty.
type answer struct {
	http.ResponseWriter
	now    func() time.Time
	method string
	status int
	buf    *bytes.Buffer // an error document, held until done
}

func (a *answer) WriteHeader(status int) {
	if a.status != 0 {
		return
	}
	a.status = status
	a.Header().Set("Date", a.now().UTC().Format(http.TimeFormat))
	if status >= 400 && a.method != http.MethodHead {
		a.buf = &bytes.Buffer{}
		return
	}
	a.ResponseWriter.WriteHeader(status)
}

func (a *answer) Write(p []byte) (int, error) {
	if a.status == 0 {
		a.WriteHeader(http.StatusOK)
	}
	if a.buf != nil {
		return a.buf.Write(p)
	}
	return a.ResponseWriter.Write(p)
}

// Flush passes a flush through (gofakes3 streams long listings).
func (a *answer) Flush() {
	if f, ok := a.ResponseWriter.(http.Flusher); ok && a.buf == nil {
		f.Flush()
	}
}

// done sends a held error document, its Message filled in when S3 has one
// for its code and gofakes3 sent none.
func (a *answer) done() {
	if a.status == 0 {
		a.WriteHeader(http.StatusOK)
	}
	if a.buf == nil {
		return
	}
	body := withMessage(a.buf.Bytes())
	a.Header().Set("Content-Length", strconv.Itoa(len(body)))
	a.ResponseWriter.WriteHeader(a.status)
	_, _ = a.ResponseWriter.Write(body)
}

// withMessage is the error document doc with S3's message for its code
// when its Message is empty; any other document unchanged.
func withMessage(doc []byte) []byte {
	var e struct {
		XMLName xml.Name `xml:"Error"`
		Code    string
		Message string
	}
	if xml.Unmarshal(doc, &e) != nil || e.Message != "" || errorMessages[e.Code] == "" {
		return doc
	}
	msg := "<Message>" + errorMessages[e.Code] + "</Message>"
	for _, empty := range []string{"<Message></Message>", "<Message/>"} {
		if i := bytes.Index(doc, []byte(empty)); i >= 0 {
			return slices.Concat(doc[:i], []byte(msg), doc[i+len(empty):])
		}
	}
	i := bytes.Index(doc, []byte("</Code>"))
	if i < 0 {
		return doc
	}
	i += len("</Code>")
	return slices.Concat(doc[:i], []byte(msg), doc[i:])
}

// typed is r with S3's default Content-Type when it sends none (PutObject,
// CreateMultipartUpload), so the object is answered with it: gofakes3
// answers HeadObject with no type and GetObject with one it sniffs.
func typed(r *http.Request) *http.Request {
	if r.Header.Get("Content-Type") != "" {
		return r
	}
	fwd := r.Clone(r.Context())
	fwd.Header.Set("Content-Type", defaultContentType)
	return fwd
}

// complete passes a CompleteMultipartUpload to gofakes3 with k locked and
// keeps the ETag it answers for the object it makes: S3's ETag of a
// multipart object is the MD5 of its parts' MD5s followed by "-" and the
// number of parts, which gofakes3 answers here but not on GetObject,
// HeadObject or the listings, where it uses the MD5 of the whole object
// ("Checking object integrity", Amazon S3 User Guide: "If an object is
// uploaded with multipart upload, the ETag is not an MD5 digest of the
// object").
func (f *fidelity) complete(w http.ResponseWriter, r *http.Request, k objectKey) {
	defer f.locks.lockKey(k)()
	prior := f.current(k)
	tw := &teeWriter{hookWriter: hookWriter{ResponseWriter: w}}
	f.next.ServeHTTP(tw, r)
	tw.finish()
	if !success(tw.status) {
		return
	}
	f.wrote(k, prior, nil)
	var res struct {
		ETag string
	}
	if xml.Unmarshal(tw.body.Bytes(), &res) != nil || res.ETag == "" {
		return
	}
	if now := f.current(k); now != "" {
		f.mu.Lock()
		f.etags[versionKey{k, now}] = res.ETag
		f.mu.Unlock()
	}
}

// teeWriter is a hookWriter that keeps a copy of the body it passes.
type teeWriter struct {
	hookWriter
	body bytes.Buffer
}

func (t *teeWriter) Write(p []byte) (int, error) {
	t.body.Write(p)
	return t.hookWriter.Write(p)
}

// etag is the ETag S3 answers for one version of k: the multipart ETag
// complete kept, else the MD5 of its content, quoted.
func (f *fidelity) etag(k objectKey, version gofakes3.VersionID, hash []byte) string {
	if e, ok := f.multipartETag(k, version); ok {
		return e
	}
	return `"` + hex.EncodeToString(hash) + `"`
}

// multipartETag is the ETag complete kept for one version of k, if any.
func (f *fidelity) multipartETag(k objectKey, version gofakes3.VersionID) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e, ok := f.etags[versionKey{k, version}]
	return e, ok
}

// listing is a ListObjectVersions or ListObjectsV2 (ListObjects) answer:
// its elements in order, kept as they are but for the entries (Version,
// DeleteMarker, Contents).
type listing struct {
	XMLName xml.Name
	Items   []listItem `xml:",any"`
}

type listItem struct {
	XMLName   xml.Name
	Inner     string `xml:",innerxml"`
	Key       string `xml:"-"`
	VersionID string `xml:"-"`
}

// entry reports whether it is an object entry, reading its Key and
// VersionId.
func (it *listItem) entry() bool {
	switch it.XMLName.Local {
	case "Version", "DeleteMarker", "Contents":
	default:
		return false
	}
	var e struct {
		Key       string
		VersionID string `xml:"VersionId"`
	}
	if xml.Unmarshal([]byte("<e>"+it.Inner+"</e>"), &e) != nil {
		return false
	}
	it.Key, it.VersionID = e.Key, e.VersionID
	return true
}

// list passes a listing of bucket to gofakes3 and answers it as S3 does:
// each entry with its ETag (a multipart object's, see complete), and the
// versions of ListObjectVersions "ordered first by key and then by
// version": keys in ascending order, "versions are sorted from most to
// least recent" (ListObjectVersions, Amazon S3 API Reference; gofakes3
// lists each key's versions oldest first). s3mem's version ids sort in the
// order they were written (base32hex of a counter), so the newest of a key
// is its greatest.
func (f *fidelity) list(w http.ResponseWriter, r *http.Request, bucket string) {
	tw := &teeWriter{hookWriter: hookWriter{ResponseWriter: w, discard: true,
		before: func(int) { w.Header().Del("Content-Length") }}}
	f.next.ServeHTTP(tw, r)
	tw.finish()
	var doc listing
	if !success(tw.status) || xml.Unmarshal(tw.body.Bytes(), &doc) != nil {
		_, _ = w.Write(tw.body.Bytes())
		return
	}
	var entries, rest []listItem
	at := -1 // where the entries go: where the first was, before CommonPrefixes
	for _, it := range doc.Items {
		it.XMLName.Space = "" // the document's namespace is the root's
		if it.entry() {
			if at < 0 {
				at = len(rest)
			}
			entries = append(entries, f.withETag(bucket, it))
			continue
		}
		rest = append(rest, it)
	}
	if at < 0 {
		at = len(rest)
	}
	slices.SortStableFunc(entries, func(a, b listItem) int {
		return cmp.Or(strings.Compare(a.Key, b.Key), strings.Compare(b.VersionID, a.VersionID))
	})
	doc.Items = slices.Concat(rest[:at], entries, rest[at:])
	out, err := xml.Marshal(doc)
	if err != nil {
		_, _ = w.Write(tw.body.Bytes())
		return
	}
	_, _ = io.WriteString(w, xml.Header)
	_, _ = w.Write(out)
}

// withETag is entry it with the multipart ETag of the version it names
// (the current one for Contents), when that version has one.
func (f *fidelity) withETag(bucket string, it listItem) listItem {
	version := gofakes3.VersionID(it.VersionID)
	k := objectKey{bucket, it.Key}
	if it.XMLName.Local == "Contents" {
		version = f.current(k)
	}
	e, ok := f.multipartETag(k, version)
	if !ok {
		return it
	}
	start, end := strings.Index(it.Inner, "<ETag>"), strings.Index(it.Inner, "</ETag>")
	if start < 0 || end < start {
		return it
	}
	it.Inner = it.Inner[:start] + "<ETag>" + xmlText(e) + it.Inner[end:]
	return it
}

func xmlText(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// listingQuery reports whether a GET of a bucket with query q is a
// listing of its objects or versions (ListObjects, ListObjectsV2,
// ListObjectVersions), not a sub-resource such as ?versioning.
func listingQuery(q url.Values) bool {
	for name := range q {
		switch name {
		case "versions", "list-type", "prefix", "delimiter", "marker", "max-keys", "continuation-token",
			"start-after", "encoding-type", "fetch-owner", "key-marker", "version-id-marker":
		default:
			return false
		}
	}
	return true
}

// objectAttributes are the attributes GetObjectAttributes may ask for
// (x-amz-object-attributes, GetObjectAttributes, Amazon S3 API Reference).
var objectAttributes = []string{"ETag", "Checksum", "ObjectParts", "StorageClass", "ObjectSize"}

// attributes answers a GetObjectAttributes of one version of k (the
// current one when version is empty) as S3 does (GetObjectAttributes,
// Amazon S3 API Reference,
// https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObjectAttributes.html):
// the attributes x-amz-object-attributes names, Last-Modified and the
// version id as headers. An attribute it does not know is 400
// InvalidArgument; none at all is 400 InvalidRequest. A key whose current
// version is a delete marker is 404 NoSuchKey with x-amz-delete-marker; a
// version that is a delete marker is 405 MethodNotAllowed ("If the
// specified version is a delete marker, the response returns a 405 Method
// Not Allowed error and the Last-Modified: timestamp response header").
// ObjectParts is answered for a multipart object only, with its count of
// parts (S3 lists the parts only of uploads with checksums, not modelled).
func (f *fidelity) attributes(w http.ResponseWriter, r *http.Request, k objectKey, version gofakes3.VersionID) {
	want, e := attributesAsked(r.Header.Values("X-Amz-Object-Attributes"))
	if e != nil {
		f.writeError(w, r, e)
		return
	}
	defer f.locks.lockKey(k)()
	obj, e := f.version(k, version)
	if e != nil {
		if obj != nil {
			w.Header().Set("X-Amz-Delete-Marker", "true")
			w.Header().Set("X-Amz-Version-Id", string(obj.VersionID))
		}
		f.writeError(w, r, e)
		return
	}
	defer obj.Contents.Close()
	v := obj.VersionID
	if v == "" {
		v = f.current(k)
	}
	doc := attributesDoc{}
	etag := f.etag(k, v, obj.Hash)
	for _, a := range want {
		switch a {
		case "ETag":
			doc.ETag = strings.Trim(etag, `"`)
		case "Checksum":
			f.mu.Lock()
			if sum, ok := f.sums[versionKey{k, v}]; ok {
				doc.Checksum = &attributesChecksum{Type: "FULL_OBJECT"}
				doc.Checksum.set(sum)
			}
			f.mu.Unlock()
		case "ObjectParts":
			if _, n, ok := strings.Cut(strings.Trim(etag, `"`), "-"); ok {
				parts, _ := strconv.Atoi(n)
				doc.ObjectParts = &attributesParts{Count: parts}
			}
		case "StorageClass":
			doc.StorageClass = "STANDARD"
		case "ObjectSize":
			size := obj.Size
			doc.ObjectSize = &size
		}
	}
	if lm := obj.Metadata["Last-Modified"]; lm != "" {
		w.Header().Set("Last-Modified", lm)
	}
	if obj.VersionID != "" {
		w.Header().Set("X-Amz-Version-Id", string(obj.VersionID))
	}
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, xml.Header)
	_ = xml.NewEncoder(w).Encode(doc)
}

// attributesAsked are the attributes of x-amz-object-attributes (a comma
// separated list, or the header repeated).
func attributesAsked(values []string) ([]string, *s3Error) {
	var want []string
	for _, v := range values {
		for _, a := range strings.Split(v, ",") {
			if a = strings.TrimSpace(a); a == "" {
				continue
			}
			if !slices.Contains(objectAttributes, a) {
				return nil, &s3Error{http.StatusBadRequest, "InvalidArgument", "Invalid attribute name specified."}
			}
			want = append(want, a)
		}
	}
	if len(want) == 0 {
		return nil, &s3Error{http.StatusBadRequest, "InvalidRequest", "The x-amz-object-attributes header specifying the attributes to be retrieved is either missing or empty"}
	}
	return want, nil
}

// version is one version of k (the current one when version is empty),
// or the error S3 answers: NoSuchKey, NoSuchVersion, or, for a delete
// marker, NoSuchKey (the current version) or MethodNotAllowed (a version
// named), with the marker.
func (f *fidelity) version(k objectKey, version gofakes3.VersionID) (*gofakes3.Object, *s3Error) {
	var obj *gofakes3.Object
	var err error
	if version == "" {
		obj, err = f.backend.HeadObject(k.bucket, k.key)
	} else {
		obj, err = f.backend.HeadObjectVersion(k.bucket, k.key, version)
	}
	switch {
	case gofakes3.HasErrorCode(err, gofakes3.ErrNoSuchBucket):
		return nil, &s3Error{http.StatusNotFound, "NoSuchBucket", "The specified bucket does not exist"}
	case gofakes3.HasErrorCode(err, gofakes3.ErrNoSuchKey):
		return nil, &s3Error{http.StatusNotFound, "NoSuchKey", errorMessages["NoSuchKey"]}
	case gofakes3.HasErrorCode(err, gofakes3.ErrNoSuchVersion):
		return nil, &s3Error{http.StatusNotFound, "NoSuchVersion", errorMessages["NoSuchVersion"]}
	case err != nil:
		return nil, &s3Error{http.StatusInternalServerError, "InternalError", err.Error()}
	case obj.IsDeleteMarker && version == "":
		return obj, &s3Error{http.StatusNotFound, "NoSuchKey", errorMessages["NoSuchKey"]}
	case obj.IsDeleteMarker:
		return obj, &s3Error{http.StatusMethodNotAllowed, "MethodNotAllowed", "The specified method is not allowed against this resource."}
	}
	return obj, nil
}

// attributesDoc is GetObjectAttributes' answer.
type attributesDoc struct {
	XMLName      xml.Name            `xml:"http://s3.amazonaws.com/doc/2006-03-01/ GetObjectAttributesResponse"`
	ETag         string              `xml:",omitempty"`
	Checksum     *attributesChecksum `xml:",omitempty"`
	ObjectParts  *attributesParts    `xml:",omitempty"`
	StorageClass string              `xml:",omitempty"`
	ObjectSize   *int64              `xml:",omitempty"`
}

type attributesChecksum struct {
	CRC32     string `xml:"ChecksumCRC32,omitempty"`
	CRC32C    string `xml:"ChecksumCRC32C,omitempty"`
	CRC64NVME string `xml:"ChecksumCRC64NVME,omitempty"`
	SHA1      string `xml:"ChecksumSHA1,omitempty"`
	SHA256    string `xml:"ChecksumSHA256,omitempty"`
	Type      string `xml:"ChecksumType"`
}

func (c *attributesChecksum) set(sum checksum) {
	switch sum.alg.name {
	case "CRC32":
		c.CRC32 = sum.value
	case "CRC32C":
		c.CRC32C = sum.value
	case "CRC64NVME":
		c.CRC64NVME = sum.value
	case "SHA1":
		c.SHA1 = sum.value
	case "SHA256":
		c.SHA256 = sum.value
	}
}

type attributesParts struct {
	Count int `xml:"PartsCount"`
}
