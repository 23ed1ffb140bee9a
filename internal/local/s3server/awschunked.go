package s3server

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// The aws-chunked content encoding wraps an upload's payload in chunks,
// each "<hex size>[;chunk-signature=<sig>]\r\n<data>\r\n", ended by a chunk
// of size 0, then the trailing headers ("name:value\r\n" each, the signed
// variants adding x-amz-trailer-signature), then "\r\n". x-amz-content-sha256
// names the variant, x-amz-decoded-content-length the payload's length and
// x-amz-trailer the trailing headers. See "Signature Calculations for the
// Authorization Header: Transferring Payload in Multiple Chunks (Chunked
// Upload)" (https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-streaming.html)
// and "Signature calculations for trailing headers (chunked uploads)"
// (https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-streaming-trailers.html).
//
// gofakes3 v1.2.0 decodes only STREAMING-AWS4-HMAC-SHA256-PAYLOAD, ignores
// its trailers, and stores any other variant's framing as the object's
// bytes. aws-sdk-go-v2 sends STREAMING-UNSIGNED-PAYLOAD-TRAILER with a
// trailing checksum for every upload it computes a checksum for over TLS
// (over plain HTTP, as to the local region, it sends the checksum as a
// header instead), so the server decodes every variant itself, verifies
// the trailing checksum, and hands gofakes3 the bare payload.

// awsChunked reports whether r's body is aws-chunked encoded.
func awsChunked(r *http.Request) bool {
	if strings.HasPrefix(r.Header.Get("X-Amz-Content-Sha256"), "STREAMING-") {
		return true
	}
	for _, v := range r.Header.Values("Content-Encoding") {
		for _, e := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(e), "aws-chunked") {
				return true
			}
		}
	}
	return false
}

// errChunk is a body that is not well-formed aws-chunked encoding.
var errChunk = errors.New("the aws-chunked body is malformed")

// maxChunkLine bounds a chunk header or trailer line.
const maxChunkLine = 4 << 10

// decodeAWSChunked reads an aws-chunked body whose payload has
// decodedLength bytes. It returns the payload and the trailing headers
// (canonical names; x-amz-trailer-signature left out). A payload longer or
// shorter than decodedLength, or malformed framing, is an error wrapping
// errChunk.
func decodeAWSChunked(body io.Reader, decodedLength int64) ([]byte, http.Header, error) {
	br := bufio.NewReader(body)
	payload, err := readChunks(br, decodedLength)
	if err != nil {
		return nil, nil, err
	}
	trailers, err := readTrailers(br)
	if err != nil {
		return nil, nil, err
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return nil, nil, fmt.Errorf("%w: data after the trailers", errChunk)
	}
	return payload, trailers, nil
}

// readChunks reads the chunks up to the zero-size one: exactly
// decodedLength bytes of payload.
func readChunks(br *bufio.Reader, decodedLength int64) ([]byte, error) {
	var payload bytes.Buffer
	for {
		size, err := readChunkSize(br)
		if err != nil {
			return nil, err
		}
		if size == 0 {
			break
		}
		if int64(payload.Len())+size > decodedLength {
			return nil, fmt.Errorf("%w: more than the %d bytes x-amz-decoded-content-length declares", errChunk, decodedLength)
		}
		if _, err := io.CopyN(&payload, br, size); err != nil {
			return nil, fmt.Errorf("%w: chunk data: %v", errChunk, err)
		}
		if end, err := readLine(br); err != nil || end != "" {
			return nil, fmt.Errorf("%w: chunk data not followed by CRLF", errChunk)
		}
	}
	if int64(payload.Len()) != decodedLength {
		return nil, fmt.Errorf("%w: %d bytes, but x-amz-decoded-content-length declares %d", errChunk, payload.Len(), decodedLength)
	}
	return payload.Bytes(), nil
}

// readChunkSize reads a chunk header: a hexadecimal size, then optional
// extensions (the chunk signature) after ';'.
func readChunkSize(br *bufio.Reader) (int64, error) {
	line, err := readLine(br)
	if err != nil {
		return 0, fmt.Errorf("%w: chunk header: %v", errChunk, err)
	}
	sizeText, _, _ := strings.Cut(line, ";")
	size, err := strconv.ParseInt(strings.TrimSpace(sizeText), 16, 64)
	if err != nil || size < 0 {
		return 0, fmt.Errorf("%w: chunk size %q", errChunk, sizeText)
	}
	return size, nil
}

// readTrailers reads the trailing headers up to the empty line, leaving
// out x-amz-trailer-signature.
func readTrailers(br *bufio.Reader) (http.Header, error) {
	trailers := http.Header{}
	for {
		line, err := readLine(br)
		if err != nil {
			return nil, fmt.Errorf("%w: trailer: %v", errChunk, err)
		}
		if line == "" {
			return trailers, nil
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("%w: trailer line %q", errChunk, line)
		}
		if name = http.CanonicalHeaderKey(strings.TrimSpace(name)); name != "X-Amz-Trailer-Signature" {
			trailers.Add(name, strings.TrimSpace(value))
		}
	}
}

// readLine reads one CRLF-terminated line of at most maxChunkLine bytes,
// without its CRLF.
func readLine(br *bufio.Reader) (string, error) {
	var b strings.Builder
	for {
		c, err := br.ReadByte()
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return "", err
		}
		if c == '\n' {
			s := b.String()
			if !strings.HasSuffix(s, "\r") {
				return "", errors.New("line not ended by CRLF")
			}
			return strings.TrimSuffix(s, "\r"), nil
		}
		if b.Len() >= maxChunkLine {
			return "", errors.New("line too long")
		}
		b.WriteByte(c)
	}
}
