package s3server_test

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"hash/crc64"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/local/s3server"
	"github.com/ferryhq/ferry/internal/local/s3server/s3test"
)

// noRetry makes an SDK client give up after one attempt, so an error
// answer is seen as it is and nothing sleeps.
func noRetry(o *s3.Options) { o.RetryMaxAttempts = 1 }

// apiError is the HTTP status, S3 error code and message of err.
func apiError(t *testing.T, err error) (status int, code, message string) {
	t.Helper()
	require.Error(t, err)
	var re *awshttp.ResponseError
	require.ErrorAs(t, err, &re)
	var ae smithy.APIError
	require.ErrorAs(t, err, &ae)
	return re.HTTPStatusCode(), ae.ErrorCode(), ae.ErrorMessage()
}

// b64 is the standard base64 of raw.
func b64(raw []byte) string { return base64.StdEncoding.EncodeToString(raw) }

// Checksums computed here independently of the server.
func sumCRC32(s string) string {
	return b64(binary.BigEndian.AppendUint32(nil, crc32.ChecksumIEEE([]byte(s))))
}

func sumCRC32C(s string) string {
	return b64(binary.BigEndian.AppendUint32(nil, crc32.Checksum([]byte(s), crc32.MakeTable(crc32.Castagnoli))))
}

func sumCRC64NVME(s string) string {
	return b64(binary.BigEndian.AppendUint64(nil, crc64.Checksum([]byte(s), crc64.MakeTable(0x9a6c9329ac4bc9b5))))
}

func sumSHA1(s string) string   { h := sha1.Sum([]byte(s)); return b64(h[:]) }
func sumSHA256(s string) string { h := sha256.Sum256([]byte(s)); return b64(h[:]) }
func sumMD5(s string) string    { h := md5.Sum([]byte(s)); return b64(h[:]) }

// algorithmCase is one flexible checksum algorithm as the SDK names it.
type algorithmCase struct {
	name   string
	alg    types.ChecksumAlgorithm
	header string
	sum    func(string) string
	// in sets the value on a PutObject; out reads it from an answer.
	in  func(*s3.PutObjectInput, string)
	out func(s3.GetObjectOutput) *string
}

var algorithmCases = []algorithmCase{
	{"CRC32", types.ChecksumAlgorithmCrc32, "x-amz-checksum-crc32", sumCRC32,
		func(in *s3.PutObjectInput, v string) { in.ChecksumCRC32 = &v },
		func(o s3.GetObjectOutput) *string { return o.ChecksumCRC32 }},
	{"CRC32C", types.ChecksumAlgorithmCrc32c, "x-amz-checksum-crc32c", sumCRC32C,
		func(in *s3.PutObjectInput, v string) { in.ChecksumCRC32C = &v },
		func(o s3.GetObjectOutput) *string { return o.ChecksumCRC32C }},
	{"CRC64NVME", types.ChecksumAlgorithmCrc64nvme, "x-amz-checksum-crc64nvme", sumCRC64NVME,
		func(in *s3.PutObjectInput, v string) { in.ChecksumCRC64NVME = &v },
		func(o s3.GetObjectOutput) *string { return o.ChecksumCRC64NVME }},
	{"SHA1", types.ChecksumAlgorithmSha1, "x-amz-checksum-sha1", sumSHA1,
		func(in *s3.PutObjectInput, v string) { in.ChecksumSHA1 = &v },
		func(o s3.GetObjectOutput) *string { return o.ChecksumSHA1 }},
	{"SHA256", types.ChecksumAlgorithmSha256, "x-amz-checksum-sha256", sumSHA256,
		func(in *s3.PutObjectInput, v string) { in.ChecksumSHA256 = &v },
		func(o s3.GetObjectOutput) *string { return o.ChecksumSHA256 }},
}

// putChecksums is every checksum field of a PutObject answer.
func putChecksums(o *s3.PutObjectOutput) s3.GetObjectOutput {
	return s3.GetObjectOutput{
		ChecksumCRC32: o.ChecksumCRC32, ChecksumCRC32C: o.ChecksumCRC32C, ChecksumCRC64NVME: o.ChecksumCRC64NVME,
		ChecksumSHA1: o.ChecksumSHA1, ChecksumSHA256: o.ChecksumSHA256, ChecksumType: o.ChecksumType,
	}
}

// headChecksums is every checksum field of a HeadObject answer.
func headChecksums(o *s3.HeadObjectOutput) s3.GetObjectOutput {
	return s3.GetObjectOutput{
		ChecksumCRC32: o.ChecksumCRC32, ChecksumCRC32C: o.ChecksumCRC32C, ChecksumCRC64NVME: o.ChecksumCRC64NVME,
		ChecksumSHA1: o.ChecksumSHA1, ChecksumSHA256: o.ChecksumSHA256, ChecksumType: o.ChecksumType,
	}
}

// only asserts that got carries exactly one checksum, want's of alg.
func only(t *testing.T, got s3.GetObjectOutput, alg algorithmCase, want string) {
	t.Helper()
	for _, a := range algorithmCases {
		if a.name == alg.name {
			assert.Equal(t, want, aws.ToString(a.out(got)), a.name)
		} else {
			assert.Nil(t, a.out(got), a.name)
		}
	}
	assert.Equal(t, types.ChecksumTypeFullObject, got.ChecksumType)
}

// none asserts that got carries no checksum.
func none(t *testing.T, got s3.GetObjectOutput) {
	t.Helper()
	for _, a := range algorithmCases {
		assert.Nil(t, a.out(got), a.name)
	}
}

// getBody reads key, optionally with checksum mode enabled (the SDK then
// validates the body against the checksum the answer carries, and reading
// it fails on a mismatch).
func getBody(t *testing.T, c *s3.Client, bucket, key string, checksumMode bool) (string, s3.GetObjectOutput) {
	t.Helper()
	in := &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}
	if checksumMode {
		in.ChecksumMode = types.ChecksumModeEnabled
	}
	out, err := c.GetObject(t.Context(), in)
	require.NoError(t, err)
	defer out.Body.Close()
	body, err := io.ReadAll(out.Body)
	require.NoError(t, err, "the body matches the checksum the answer carries")
	return string(body), *out
}

// TestPutObjectVerifiesChecksums sends each flexible checksum through the
// real SDK client, right and wrong.
//
// AWS: "S3 then independently calculates a checksum of your data and
// validates it against the provided checksum value. Objects are accepted
// only after confirming data integrity was maintained during transit. ...
// If the values don't match, the request is rejected." ("Checking object
// integrity for data uploads in Amazon S3", Amazon S3 User Guide,
// https://docs.aws.amazon.com/AmazonS3/latest/userguide/checking-object-integrity-upload.html).
// The rejection is 400 BadDigest ("The Content-MD5 or checksum value that
// you specified did not match what the server received", "Error
// responses", Amazon S3 API Reference,
// https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html),
// which S3 words "The SHA256 you specified did not match the calculated
// checksum." (likewise for each algorithm).
// The answer to a PutObject, and to a GetObject or HeadObject with checksum
// mode enabled ("To retrieve the checksum, this mode must be enabled",
// GetObject, ChecksumMode, https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObject.html),
// carries the checksum and ChecksumType FULL_OBJECT ("For PutObject
// uploads, the checksum type is always FULL_OBJECT", PutObject,
// https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutObject.html);
// without checksum mode it carries none.
func TestPutObjectVerifiesChecksums(t *testing.T) {
	srv := s3test.Start(t, nil, bucket)
	c := s3server.NewClient(srv.URL(), noRetry)
	ctx := t.Context()
	const body, earlier = "release bytes", "earlier bytes"

	for _, alg := range algorithmCases {
		for _, right := range []bool{true, false} {
			name := alg.name + map[bool]string{true: " right", false: " wrong"}[right]
			t.Run(name, func(t *testing.T) {
				key := "assets/" + strings.ReplaceAll(name, " ", "-")
				s3test.Put(t, c, bucket, key, earlier)
				value := alg.sum(body)
				if !right {
					value = alg.sum("other bytes") // well-formed, of other bytes
				}
				in := &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader(body)}
				alg.in(in, value)
				out, err := c.PutObject(ctx, in)
				if !right {
					status, code, msg := apiError(t, err)
					assert.Equal(t, http.StatusBadRequest, status)
					assert.Equal(t, "BadDigest", code)
					assert.Equal(t, "The "+alg.name+" you specified did not match the calculated checksum.", msg)
					got, _ := getBody(t, c, bucket, key, false)
					assert.Equal(t, earlier, got, "nothing was written")
					return
				}
				require.NoError(t, err)
				only(t, putChecksums(out), alg, value)

				got, get := getBody(t, c, bucket, key, true)
				assert.Equal(t, body, got)
				only(t, get, alg, value)
				head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), ChecksumMode: types.ChecksumModeEnabled})
				require.NoError(t, err)
				only(t, headChecksums(head), alg, value)

				_, plain := getBody(t, c, bucket, key, false)
				none(t, plain)
			})
		}
	}
}

// TestWrongSHA256IsRefusedAndNothingWritten is the asset upload's case
// (internal/store/asset and the deployer's Publish send ChecksumSHA256): a wrong
// SHA-256 sent through the real SDK client is 400 BadDigest and the key
// stays absent (AWS, as TestPutObjectVerifiesChecksums cites).
func TestWrongSHA256IsRefusedAndNothingWritten(t *testing.T) {
	srv := s3test.Start(t, nil, bucket)
	c := s3server.NewClient(srv.URL(), noRetry)
	ctx := t.Context()

	_, err := c.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(bucket), Key: aws.String("assets/abc"), Body: strings.NewReader("the asset"),
		ChecksumSHA256: aws.String(sumSHA256("not the asset")), IfNoneMatch: aws.String("*"),
	})
	status, code, _ := apiError(t, err)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "BadDigest", code)
	_, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("assets/abc")})
	assert.True(t, cloud.IsNotFound(err), "nothing was written: %v", err)
}

// TestContentMD5 checks Content-MD5 (verified by gofakes3 itself).
//
// AWS: "BadDigest: The Content-MD5 or checksum value that you specified
// did not match what the server received", 400 ("Error responses", Amazon
// S3 API Reference, https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html),
// and "To ensure that data is not corrupted traversing the network, use
// the Content-MD5 header. When you use this header, Amazon S3 checks the
// object against the provided MD5 value and, if they do not match, Amazon
// S3 returns an error" (PutObject, https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutObject.html).
func TestContentMD5(t *testing.T) {
	srv := s3test.Start(t, nil, bucket)
	c := s3server.NewClient(srv.URL(), noRetry)
	ctx := t.Context()
	tests := []struct {
		name, md5, wantCode string
	}{
		{"right", sumMD5("payload"), ""},
		{"wrong", sumMD5("other"), "BadDigest"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			key := "md5/" + tc.name
			_, err := c.PutObject(ctx, &s3.PutObjectInput{
				Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader("payload"), ContentMD5: aws.String(tc.md5),
			})
			if tc.wantCode == "" {
				require.NoError(t, err)
				got, _ := getBody(t, c, bucket, key, false)
				assert.Equal(t, "payload", got)
				return
			}
			status, code, _ := apiError(t, err)
			assert.Equal(t, http.StatusBadRequest, status)
			assert.Equal(t, tc.wantCode, code)
			_, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
			assert.True(t, cloud.IsNotFound(err), "nothing was written: %v", err)
		})
	}
}

// TestDefaultChecksum: an object uploaded without a checksum gets S3's
// default CRC64NVME, which the PutObject answer carries and a GetObject
// with checksum mode returns; a later upload replaces the earlier one's
// checksum rather than keep it.
//
// AWS: ChecksumCRC64NVME "is present if the object was uploaded with the
// CRC64NVME checksum algorithm, or if it was uploaded without a checksum
// (and Amazon S3 added the default checksum, CRC64NVME, to the uploaded
// object)" (PutObject and Checksum, Amazon S3 API Reference,
// https://docs.aws.amazon.com/AmazonS3/latest/API/API_Checksum.html).
// A range is not the object, so its answer carries no full-object
// checksum ("Checking object integrity in Amazon S3",
// https://docs.aws.amazon.com/AmazonS3/latest/userguide/checking-object-integrity.html).
func TestDefaultChecksum(t *testing.T) {
	srv := s3test.Start(t, nil, bucket)
	c := s3server.NewClient(srv.URL(), noRetry)
	ctx := t.Context()
	sha, crc := algorithmCases[4], algorithmCases[2]

	in := &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("k"), Body: strings.NewReader("first")}
	sha.in(in, sumSHA256("first"))
	_, err := c.PutObject(ctx, in)
	require.NoError(t, err)
	out, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("k"), Body: strings.NewReader("second")})
	require.NoError(t, err)
	only(t, putChecksums(out), crc, sumCRC64NVME("second"))

	got, get := getBody(t, c, bucket, "k", true)
	assert.Equal(t, "second", got)
	only(t, get, crc, sumCRC64NVME("second"))

	ranged, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("k"), Range: aws.String("bytes=0-2"), ChecksumMode: types.ChecksumModeEnabled})
	require.NoError(t, err)
	defer ranged.Body.Close()
	part, err := io.ReadAll(ranged.Body)
	require.NoError(t, err)
	assert.Equal(t, "sec", string(part))
	none(t, *ranged)
}

// TestChecksumRequestErrors sends what the SDK never would, as raw HTTP.
// Nothing is written in any case.
//
// AWS: "If the individual checksum value you provide through
// x-amz-checksum-algorithm doesn't match the checksum algorithm you set
// through x-amz-sdk-checksum-algorithm, Amazon S3 fails the request with a
// BadDigest error" (PutObject, ChecksumAlgorithm,
// https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutObject.html). A
// checksum value is "The Base64 encoded, 32-bit CRC32 checksum of the
// object" (and likewise for each algorithm: Checksum,
// https://docs.aws.amazon.com/AmazonS3/latest/API/API_Checksum.html), so a
// value that is not one is a bad request, as is an upload naming an
// algorithm but sending no value, or values of two algorithms ("Checking
// object integrity in Amazon S3": an upload chooses one checksum
// algorithm, https://docs.aws.amazon.com/AmazonS3/latest/userguide/checking-object-integrity.html).
func TestChecksumRequestErrors(t *testing.T) {
	srv := s3test.Start(t, nil, bucket)
	c := s3server.NewClient(srv.URL(), noRetry)
	const body = "payload"
	tests := []struct {
		name     string
		headers  map[string]string
		wantCode string
	}{
		{"two algorithms", map[string]string{"x-amz-checksum-crc32": sumCRC32(body), "x-amz-checksum-sha256": sumSHA256(body)}, "InvalidRequest"},
		{"value not base64", map[string]string{"x-amz-checksum-sha256": "not base64!"}, "InvalidRequest"},
		{"value of the wrong length", map[string]string{"x-amz-checksum-crc32": sumSHA256(body)}, "InvalidRequest"},
		{"sdk algorithm differs from the value's", map[string]string{"x-amz-sdk-checksum-algorithm": "SHA256", "x-amz-checksum-crc32": sumCRC32(body)}, "BadDigest"},
		{"sdk algorithm with no value", map[string]string{"x-amz-sdk-checksum-algorithm": "CRC32"}, "InvalidRequest"},
		{"unknown sdk algorithm", map[string]string{"x-amz-sdk-checksum-algorithm": "MD4", "x-amz-checksum-crc32": sumCRC32(body)}, "InvalidRequest"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			key := "raw/" + strings.ReplaceAll(tc.name, " ", "-")
			status, code := rawPut(t, srv.URL()+"/"+bucket+"/"+key, body, tc.headers)
			assert.Equal(t, http.StatusBadRequest, status)
			assert.Equal(t, tc.wantCode, code)
			_, err := c.HeadObject(t.Context(), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
			assert.True(t, cloud.IsNotFound(err), "nothing was written: %v", err)
		})
	}
}

// rawPut PUTs body to url with headers and returns the status and the
// error document's code ("" for none).
func rawPut(t *testing.T, url, body string, headers map[string]string) (status int, code string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, url, strings.NewReader(body))
	require.NoError(t, err)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	doc, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if _, rest, ok := strings.Cut(string(doc), "<Code>"); ok {
		code, _, _ = strings.Cut(rest, "</Code>")
	}
	return resp.StatusCode, code
}

// recorder keeps the headers of every request it passes on.
type recorder struct {
	next http.Handler
	mu   sync.Mutex
	seen []http.Header
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.seen = append(r.seen, req.Header.Clone())
	r.mu.Unlock()
	r.next.ServeHTTP(w, req)
}

func (r *recorder) last() http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen[len(r.seen)-1]
}

// TestTrailingChecksumFromTheSDK uploads through the real SDK over TLS,
// where it sends its checksum as an aws-chunked trailer
// (STREAMING-UNSIGNED-PAYLOAD-TRAILER): the server stores the bare payload
// and keeps the trailer's checksum.
//
// AWS: "Trailing headers are only sent after the chunks have been
// uploaded", after the final 0-byte chunk, with x-amz-content-sha256
// naming a trailer variant and x-amz-trailer naming the trailing header
// ("Signature calculations for trailing headers (chunked uploads)",
// https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-streaming-trailers.html);
// S3 verifies a trailing checksum as one sent in a header ("Checking
// object integrity for data uploads in Amazon S3",
// https://docs.aws.amazon.com/AmazonS3/latest/userguide/checking-object-integrity-upload.html).
func TestTrailingChecksumFromTheSDK(t *testing.T) {
	srv := s3test.Start(t, nil, bucket)
	rec := &recorder{next: srv.Handler()}
	ts := httptest.NewTLSServer(rec)
	t.Cleanup(ts.Close)
	c := s3server.NewClient(ts.URL, noRetry, func(o *s3.Options) {
		o.HTTPClient = ts.Client()
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenSupported
	})
	ctx := t.Context()
	body := strings.Repeat("ferry ", 20000) // 120 kB: more than one 64 KiB chunk

	for _, alg := range algorithmCases {
		t.Run(alg.name, func(t *testing.T) {
			key := "trailer/" + alg.name
			out, err := c.PutObject(ctx, &s3.PutObjectInput{
				Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader(body), ChecksumAlgorithm: alg.alg,
			})
			require.NoError(t, err)
			sent := rec.last()
			require.Equal(t, "STREAMING-UNSIGNED-PAYLOAD-TRAILER", sent.Get("X-Amz-Content-Sha256"), "the SDK sent an aws-chunked body")
			require.Equal(t, alg.header, sent.Get("X-Amz-Trailer"))
			only(t, putChecksums(out), alg, alg.sum(body))

			got, get := getBody(t, c, bucket, key, true)
			assert.Equal(t, body, got, "the bare payload, not its framing")
			only(t, get, alg, alg.sum(body))
			assert.Empty(t, get.ContentEncoding, "aws-chunked is not the object's encoding")
		})
	}
}

// chunked frames payload as aws-chunked, in chunks of at most size bytes,
// signed (a chunk-signature on each chunk header, and a trailer signature)
// or not, with the given trailer lines.
func chunked(payload string, size int, signed bool, trailers ...string) string {
	var b strings.Builder
	sig := ""
	if signed {
		sig = ";chunk-signature=" + strings.Repeat("0", 64)
	}
	for len(payload) > 0 {
		n := min(size, len(payload))
		b.WriteString(strconv.FormatInt(int64(n), 16) + sig + "\r\n" + payload[:n] + "\r\n")
		payload = payload[n:]
	}
	b.WriteString("0" + sig + "\r\n")
	for _, t := range trailers {
		b.WriteString(t + "\r\n")
	}
	if signed && len(trailers) > 0 {
		b.WriteString("x-amz-trailer-signature:" + strings.Repeat("0", 64) + "\r\n")
	}
	b.WriteString("\r\n")
	return b.String()
}

// TestTrailingChecksumVerified sends aws-chunked bodies by hand: every
// variant's payload is stored bare, a wrong trailing checksum is 400
// BadDigest, and a malformed body is refused; nothing is written when the
// upload is refused.
//
// AWS: the chunk format "<hex size>;chunk-signature=<sig>\r\n<data>\r\n",
// ended by a 0-byte chunk ("Transferring Payload in Multiple Chunks
// (Chunked Upload)", https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-streaming.html),
// STREAMING-UNSIGNED-PAYLOAD-TRAILER and the signed trailer variants with
// the trailer after the final chunk ("Signature calculations for trailing
// headers (chunked uploads)",
// https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-streaming-trailers.html);
// a trailing checksum that does not match is refused as a header's is
// ("Checking object integrity for data uploads in Amazon S3",
// https://docs.aws.amazon.com/AmazonS3/latest/userguide/checking-object-integrity-upload.html),
// and a body shorter or longer than x-amz-decoded-content-length declares
// is incomplete (IncompleteBody, "Error responses",
// https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html).
func TestTrailingChecksumVerified(t *testing.T) {
	srv := s3test.Start(t, nil, bucket)
	c := s3server.NewClient(srv.URL(), noRetry)
	const payload = "a payload of forty-four bytes, in 3 chunks!!"
	crcTrailer := "x-amz-checksum-crc32:" + sumCRC32(payload)
	unsigned, signed := "STREAMING-UNSIGNED-PAYLOAD-TRAILER", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
	tests := []struct {
		name        string
		contentSHA  string
		trailer     string // x-amz-trailer
		decodedLen  int
		body        string
		wantStatus  int
		wantCode    string
		wantChecked *algorithmCase // the checksum kept, when stored
	}{
		{"unsigned with crc32", unsigned, "x-amz-checksum-crc32", len(payload), chunked(payload, 16, false, crcTrailer), 200, "", &algorithmCases[0]},
		{"signed with sha256", signed, "x-amz-checksum-sha256", len(payload), chunked(payload, 16, true, "x-amz-checksum-sha256:"+sumSHA256(payload)), 200, "", &algorithmCases[4]},
		{"signed without trailer", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", "", len(payload), chunked(payload, 16, true), 200, "", &algorithmCases[2]},
		{"unsigned with wrong crc32", unsigned, "x-amz-checksum-crc32", len(payload), chunked(payload, 16, false, "x-amz-checksum-crc32:"+sumCRC32("other")), 400, "BadDigest", nil},
		{"signed with wrong sha256", signed, "x-amz-checksum-sha256", len(payload), chunked(payload, 16, true, "x-amz-checksum-sha256:"+sumSHA256("other")), 400, "BadDigest", nil},
		{"declared trailer missing", unsigned, "x-amz-checksum-crc32", len(payload), chunked(payload, 16, false), 400, "MalformedTrailerError", nil},
		{"shorter than declared", unsigned, "x-amz-checksum-crc32", len(payload) + 1, chunked(payload, 16, false, crcTrailer), 400, "IncompleteBody", nil},
		{"longer than declared", unsigned, "x-amz-checksum-crc32", len(payload) - 1, chunked(payload, 16, false, crcTrailer), 400, "IncompleteBody", nil},
		{"chunk without CRLF", unsigned, "x-amz-checksum-crc32", len(payload), strings.Replace(chunked(payload, 16, false, crcTrailer), "\r\n", "\n", 2), 400, "IncompleteBody", nil},
		{"bad chunk size", unsigned, "x-amz-checksum-crc32", len(payload), "zz\r\n" + chunked(payload, 16, false, crcTrailer), 400, "IncompleteBody", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			key := "chunked/" + strings.ReplaceAll(tc.name, " ", "-")
			headers := map[string]string{
				"x-amz-content-sha256":         tc.contentSHA,
				"content-encoding":             "aws-chunked",
				"x-amz-decoded-content-length": strconv.Itoa(tc.decodedLen),
			}
			if tc.trailer != "" {
				headers["x-amz-trailer"] = tc.trailer
			}
			status, code := rawPut(t, srv.URL()+"/"+bucket+"/"+key, tc.body, headers)
			assert.Equal(t, tc.wantStatus, status)
			assert.Equal(t, tc.wantCode, code)
			if tc.wantChecked == nil {
				_, err := c.HeadObject(t.Context(), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
				assert.True(t, cloud.IsNotFound(err), "nothing was written: %v", err)
				return
			}
			got, get := getBody(t, c, bucket, key, true)
			assert.Equal(t, payload, got)
			only(t, get, *tc.wantChecked, tc.wantChecked.sum(payload))
		})
	}
}
