package s3server

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"hash"
	"hash/crc32"
	"hash/crc64"
	"net/http"
	"strings"
)

// algorithm is one of S3's flexible checksum algorithms: what
// x-amz-sdk-checksum-algorithm names and x-amz-checksum-<name> carries,
// base64 encoded. See "Checking object integrity in Amazon S3"
// (https://docs.aws.amazon.com/AmazonS3/latest/userguide/checking-object-integrity.html).
type algorithm struct {
	// name is S3's name of the algorithm (CRC32, SHA256), as in
	// x-amz-sdk-checksum-algorithm and in BadDigest's message.
	name string
	// size is the length of the digest in bytes.
	size int
	new  func() hash.Hash
}

// crc64NVME is the CRC-64/NVME polynomial in the reversed form
// hash/crc64 expects (the SDKs use the same constant).
const crc64NVME = 0x9a6c9329ac4bc9b5

var (
	crc32cTable    = crc32.MakeTable(crc32.Castagnoli)
	crc64NVMETable = crc64.MakeTable(crc64NVME)
)

// algorithms are every algorithm S3 verifies on upload, in the order
// S3 documents them.
var algorithms = []algorithm{
	{name: "CRC32", size: crc32.Size, new: func() hash.Hash { return crc32.NewIEEE() }},
	{name: "CRC32C", size: crc32.Size, new: func() hash.Hash { return crc32.New(crc32cTable) }},
	{name: "CRC64NVME", size: crc64.Size, new: func() hash.Hash { return crc64.New(crc64NVMETable) }},
	{name: "SHA1", size: sha1.Size, new: sha1.New},
	{name: "SHA256", size: sha256.Size, new: sha256.New},
}

// defaultAlgorithm is the checksum S3 adds to an object uploaded without
// one: "This header is present if the object was uploaded with the
// CRC64NVME checksum algorithm, or if it was uploaded without a checksum
// (and Amazon S3 added the default checksum, CRC64NVME, to the uploaded
// object)" (PutObject, ChecksumCRC64NVME, Amazon S3 API Reference).
var defaultAlgorithm = algorithms[2]

// header is the header that carries the algorithm's value:
// x-amz-checksum-sha256.
func (a algorithm) header() string {
	return http.CanonicalHeaderKey("x-amz-checksum-" + strings.ToLower(a.name))
}

// sum is the base64 value of the algorithm over body.
func (a algorithm) sum(body []byte) string {
	h := a.new()
	h.Write(body) // a hash.Hash never fails to write
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// valid reports whether value is a well-formed value of the algorithm:
// standard base64 of a digest of the algorithm's size.
func (a algorithm) valid(value string) bool {
	raw, err := base64.StdEncoding.DecodeString(value)
	return err == nil && len(raw) == a.size
}

// algorithmNamed finds an algorithm by S3's name, case-insensitively.
func algorithmNamed(name string) (algorithm, bool) {
	for _, a := range algorithms {
		if strings.EqualFold(a.name, name) {
			return a, true
		}
	}
	return algorithm{}, false
}

// algorithmOfHeader finds the algorithm whose value header is name
// (x-amz-checksum-crc32), case-insensitively.
func algorithmOfHeader(name string) (algorithm, bool) {
	for _, a := range algorithms {
		if strings.EqualFold(a.header(), name) {
			return a, true
		}
	}
	return algorithm{}, false
}

// checksum is one checksum value of an object or of an upload.
type checksum struct {
	alg   algorithm
	value string
}

// set writes the checksum and its type to a response: S3 answers a
// PutObject, and a GetObject or HeadObject with checksum mode enabled,
// with x-amz-checksum-<algorithm> and x-amz-checksum-type, which "For
// PutObject uploads ... is always FULL_OBJECT" (PutObject, ChecksumType,
// Amazon S3 API Reference).
func (c checksum) set(h http.Header) {
	h.Set(c.alg.header(), c.value)
	h.Set("X-Amz-Checksum-Type", "FULL_OBJECT")
}
