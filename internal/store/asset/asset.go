package asset

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/store/object"
)

// S3 is the S3 API Upload calls.
type S3 interface {
	HeadObject(ctx context.Context, params *s3.HeadObjectInput, optFns ...func(*s3.Options)) (*s3.HeadObjectOutput, error)
	PutObject(ctx context.Context, params *s3.PutObjectInput, optFns ...func(*s3.Options)) (*s3.PutObjectOutput, error)
}

var _ S3 = (*s3.Client)(nil)

// errs names the failures of the deployer bucket's asset calls.
var errs = object.Errors{Prefix: "asset: "}

// Hash returns the lowercase hex SHA-256 of everything r yields and how many
// bytes that was.
func Hash(r io.Reader) (sum string, size int64, err error) {
	h := sha256.New()
	size, err = io.Copy(h, r)
	if err != nil {
		return "", size, fmt.Errorf("asset: hash: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), size, nil
}

// Upload stores the file at path in bucket under
// naming.AssetKey(project, config, sum), where sum is the file's hex SHA-256,
// unless an object with that key already exists. uploaded says whether bytes
// were sent. It is idempotent: uploading the same file twice sends it once.
//
// The write is conditional (If-None-Match: *) and carries the SHA-256, so S3
// refuses bytes that changed after they were hashed. An existing object
// whose size differs from the file is an error: the key no longer names
// these bytes.
//
// A file larger than limits.MaxAssetBytes is a *failure.BadReleaseError;
// transient S3 failures are *failure.RetryableError.
func Upload(ctx context.Context, client S3, bucket, project, config, path string) (sum string, size int64, uploaded bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, false, fmt.Errorf("asset: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", 0, false, fmt.Errorf("asset: %w", err)
	}
	if !info.Mode().IsRegular() {
		return "", 0, false, fmt.Errorf("asset: %s is not a regular file", path)
	}
	if info.Size() > limits.MaxAssetBytes {
		return "", 0, false, tooLarge(path, info.Size())
	}
	sum, size, err = Hash(io.LimitReader(f, limits.MaxAssetBytes+1))
	if err != nil {
		return "", 0, false, fmt.Errorf("asset: %s: %w", path, err)
	}
	if size > limits.MaxAssetBytes {
		return "", 0, false, tooLarge(path, size)
	}
	if size != info.Size() {
		return "", 0, false, fmt.Errorf("asset: %s changed while being read (%d bytes, then %d)", path, info.Size(), size)
	}

	key := naming.AssetKey(project, config, sum)
	head, err := client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	switch {
	case err == nil:
		if n := aws.ToInt64(head.ContentLength); n != size {
			return sum, size, false, fmt.Errorf("asset: %s exists with %d bytes, but %s has %d", key, n, path, size)
		}
		return sum, size, false, nil
	case !cloud.IsNotFound(err):
		return sum, size, false, errs.Classify("head "+key, err)
	}

	raw, err := hex.DecodeString(sum)
	if err != nil {
		return sum, size, false, fmt.Errorf("asset: %s: %w", path, err)
	}
	_, err = client.PutObject(ctx, &s3.PutObjectInput{
		Bucket:         aws.String(bucket),
		Key:            aws.String(key),
		Body:           io.NewSectionReader(f, 0, size),
		ContentLength:  aws.Int64(size),
		ContentType:    aws.String("application/octet-stream"),
		ChecksumSHA256: aws.String(base64.StdEncoding.EncodeToString(raw)),
		IfNoneMatch:    aws.String("*"),
	})
	switch {
	case err == nil:
		return sum, size, true, nil
	case cloud.IsPreconditionFailed(err):
		// Another upload of the same bytes won the race.
		return sum, size, false, nil
	}
	return sum, size, false, errs.Classify("put "+key, err)
}

func tooLarge(path string, size int64) error {
	return failure.BadRelease(fmt.Sprintf("assets: %s is %d bytes, over the limit of %d", path, size, limits.MaxAssetBytes))
}
