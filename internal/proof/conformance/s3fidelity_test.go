package conformance

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/local/s3server"
)

// outcome is what one S3 call answered, as far as the cross-check
// compares it.
type outcome struct {
	Status int    // HTTP status
	Code   string // S3 error code, "" on success
	// DeleteMarker and Versioned: a DeleteObject's x-amz-delete-marker,
	// and whether the answer named a version (x-amz-version-id).
	DeleteMarker bool
	Versioned    bool
	// Checksum is the SHA-256 checksum a GetObject in checksum mode
	// returned.
	Checksum string
}

// observe turns a call's result into an outcome.
func observe(err error, status int) outcome {
	if err == nil {
		return outcome{Status: status}
	}
	o := outcome{Status: -1}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		o.Status = re.HTTPStatusCode()
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		o.Code = ae.ErrorCode()
	}
	return o
}

func b64SHA256(s string) string {
	h := sha256.Sum256([]byte(s))
	return base64.StdEncoding.EncodeToString(h[:])
}
func b64MD5(s string) string { h := md5.Sum([]byte(s)); return base64.StdEncoding.EncodeToString(h[:]) }

// fidelityStep is one call of the script, with what AWS answers
// according to its documentation, and what moto 5.2.1 answers where that
// differs.
type fidelityStep struct {
	name string
	call func(ctx context.Context, c *s3.Client, bucket string, etag *string) outcome
	aws  outcome
	// moto, when set, is moto 5.2.1's different answer, and motoNote why
	// the test trusts AWS's documentation over it.
	moto     *outcome
	motoNote string
}

const (
	fidelityKey  = "p/c/lock"
	fidelityBody = "held by r1"
)

// fidelitySteps is the script, run in order on one versioned bucket.
// etag is the ETag the right conditional delete names (that of
// fidelityBody).
//
// AWS documentation each step relies on:
//   - checksums: S3 "independently calculates a checksum of your data and
//     validates it against the provided checksum value. Objects are
//     accepted only after confirming data integrity", and a mismatch is
//     rejected ("Checking object integrity for data uploads in Amazon S3",
//     https://docs.aws.amazon.com/AmazonS3/latest/userguide/checking-object-integrity-upload.html)
//     with 400 BadDigest ("The Content-MD5 or checksum value that you
//     specified did not match what the server received", "Error
//     responses", https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html);
//     GetObject returns the checksum in checksum mode ("To retrieve the
//     checksum, this mode must be enabled", GetObject,
//     https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObject.html);
//   - conditional deletes: 412 PreconditionFailed when the ETag does not
//     match, evaluated against the current version only, 404 when the key
//     has no current object ("How to perform conditional deletes",
//     https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-deletes.html);
//   - versions: PutObject answers a version id in a versioned bucket
//     (PutObject, https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutObject.html);
//     a DeleteObject without a version adds a delete marker, answered
//     with x-amz-delete-marker and its version id (DeleteObject,
//     https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteObject.html),
//     after which S3 "behaves as if the object was deleted" (GetObject):
//     a GetObject is 404 NoSuchKey and If-None-Match: * writes again.
func fidelitySteps() []fidelityStep {
	put := func(body string, in func(*s3.PutObjectInput)) func(context.Context, *s3.Client, string, *string) outcome {
		return func(ctx context.Context, c *s3.Client, bucket string, _ *string) outcome {
			p := &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(fidelityKey), Body: strings.NewReader(body)}
			if in != nil {
				in(p)
			}
			out, err := c.PutObject(ctx, p)
			o := observe(err, 200)
			if err == nil {
				o.Versioned = aws.ToString(out.VersionId) != ""
			}
			return o
		}
	}
	get := func(ctx context.Context, c *s3.Client, bucket string, _ *string) outcome {
		out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(fidelityKey), ChecksumMode: s3types.ChecksumModeEnabled})
		o := observe(err, 200)
		if err == nil {
			defer out.Body.Close()
			o.Versioned = aws.ToString(out.VersionId) != ""
			o.Checksum = aws.ToString(out.ChecksumSHA256)
		}
		return o
	}
	del := func(ifMatch func(etag *string) *string) func(context.Context, *s3.Client, string, *string) outcome {
		return func(ctx context.Context, c *s3.Client, bucket string, etag *string) outcome {
			out, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(fidelityKey), IfMatch: ifMatch(etag)})
			o := observe(err, 204)
			if err == nil {
				o.DeleteMarker = aws.ToBool(out.DeleteMarker)
				o.Versioned = aws.ToString(out.VersionId) != ""
			}
			return o
		}
	}
	stale := func(*string) *string { return aws.String(`"0123456789abcdef0123456789abcdef"`) }
	right := func(etag *string) *string { return etag }
	unconditional := func(*string) *string { return nil }

	return []fidelityStep{
		{name: "put with a wrong SHA-256",
			call: put(fidelityBody, func(p *s3.PutObjectInput) { p.ChecksumSHA256 = aws.String(b64SHA256("other bytes")) }),
			aws:  outcome{Status: 400, Code: "BadDigest"},
			moto: &outcome{Status: 200, Versioned: true}, motoNote: "moto 5.2.1 stores x-amz-checksum-sha256 without verifying it"},
		{name: "nothing was written",
			call: get,
			aws:  outcome{Status: 404, Code: "NoSuchKey"},
			moto: &outcome{Status: 200, Versioned: true}, motoNote: "moto stored the upload AWS refuses (keeping no checksum: see below)"},
		{name: "put with a wrong Content-MD5",
			call: put(fidelityBody, func(p *s3.PutObjectInput) { p.ContentMD5 = aws.String(b64MD5("other bytes")) }),
			aws:  outcome{Status: 400, Code: "BadDigest"},
			moto: &outcome{Status: 200, Versioned: true}, motoNote: "moto 5.2.1 does not verify Content-MD5"},
		{name: "put with the right SHA-256",
			call: put(fidelityBody, func(p *s3.PutObjectInput) { p.ChecksumSHA256 = aws.String(b64SHA256(fidelityBody)) }),
			aws:  outcome{Status: 200, Versioned: true}},
		{name: "get in checksum mode returns the SHA-256",
			call: get,
			aws:  outcome{Status: 200, Versioned: true, Checksum: b64SHA256(fidelityBody)},
			moto: &outcome{Status: 200, Versioned: true}, motoNote: "moto 5.2.1 keeps a checksum only when x-amz-sdk-checksum-algorithm names " +
				"its algorithm, not for a precomputed x-amz-checksum-sha256 alone, which AWS accepts (PutObject, ChecksumSHA256)"},
		{name: "put with the right SHA-256 and its algorithm named",
			call: put(fidelityBody, func(p *s3.PutObjectInput) {
				p.ChecksumAlgorithm = s3types.ChecksumAlgorithmSha256
				p.ChecksumSHA256 = aws.String(b64SHA256(fidelityBody))
			}),
			aws: outcome{Status: 200, Versioned: true}},
		{name: "get in checksum mode returns that SHA-256",
			call: get,
			aws:  outcome{Status: 200, Versioned: true, Checksum: b64SHA256(fidelityBody)}},
		{name: "conditional delete with a stale ETag",
			call: del(stale),
			aws:  outcome{Status: 412, Code: "PreconditionFailed"}},
		{name: "conditional delete with the right ETag adds a delete marker",
			call: del(right),
			aws:  outcome{Status: 204, DeleteMarker: true, Versioned: true}},
		{name: "get after the delete",
			call: get,
			aws:  outcome{Status: 404, Code: "NoSuchKey"}},
		{name: "conditional delete of a deleted key",
			call: del(right),
			aws:  outcome{Status: 404, Code: "NoSuchKey"}},
		{name: "If-None-Match put over the delete marker",
			call: put("held by r2", func(p *s3.PutObjectInput) { p.IfNoneMatch = aws.String("*") }),
			aws:  outcome{Status: 200, Versioned: true}},
		{name: "If-None-Match put over an object",
			call: put("held by r3", func(p *s3.PutObjectInput) { p.IfNoneMatch = aws.String("*") }),
			aws:  outcome{Status: 412, Code: "PreconditionFailed"}},
		{name: "unconditional delete adds a delete marker",
			call: del(unconditional),
			aws:  outcome{Status: 204, DeleteMarker: true, Versioned: true}},
	}
}

// TestS3FidelityAgainstMoto runs one small S3 script against moto_server
// and against the local server (internal/local/s3server), with the same SDK
// client, and checks both against what AWS documents: the local server
// must answer as AWS does at every step; moto must too, except at the
// steps that record how moto 5.2.1 differs (moto must then answer as
// recorded, so a moto that changes is noticed). Skipped when moto_server
// is not on PATH.
func TestS3FidelityAgainstMoto(t *testing.T) {
	ctx := context.Background()
	moto := motoOrSkip(ctx, t)
	const bucket = "ferry-deployer-123456789012-us-east-1"
	noRetry := func(o *s3.Options) { o.RetryMaxAttempts = 1 }

	mc := s3server.NewClient(moto.URL, noRetry)
	_, err := mc.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)})
	require.NoError(t, err)
	_, err = mc.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String(bucket),
		VersioningConfiguration: &s3types.VersioningConfiguration{Status: s3types.BucketVersioningStatusEnabled}})
	require.NoError(t, err)

	local, err := s3server.Start(s3server.Options{Versioned: []string{bucket}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, local.Close()) })
	lc := s3server.NewClient(local.URL(), noRetry)

	sum := md5.Sum([]byte(fidelityBody))
	etag := aws.String(`"` + hex.EncodeToString(sum[:]) + `"`)
	for _, step := range fidelitySteps() {
		t.Run(step.name, func(t *testing.T) {
			gotLocal := step.call(ctx, lc, bucket, etag)
			gotMoto := step.call(ctx, mc, bucket, etag)
			assert.Equal(t, step.aws, gotLocal, "the local server answers as AWS documents")
			if step.moto == nil {
				assert.Equal(t, step.aws, gotMoto, "moto answers as AWS documents")
				return
			}
			assert.Equal(t, *step.moto, gotMoto, "moto differs from AWS as recorded: %s", step.motoNote)
			t.Logf("moto differs from AWS here: %s", step.motoNote)
		})
	}
}
