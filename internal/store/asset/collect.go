package asset

import (
	"context"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Collector is the S3 API Collect calls.
type Collector interface {
	ListObjectsV2(ctx context.Context, params *s3.ListObjectsV2Input, optFns ...func(*s3.Options)) (*s3.ListObjectsV2Output, error)
	DeleteObject(ctx context.Context, params *s3.DeleteObjectInput, optFns ...func(*s3.Options)) (*s3.DeleteObjectOutput, error)
}

var _ Collector = (*s3.Client)(nil)

// Keep returns the SHA-256s of the assets a collection must not delete.
// An error means what must be kept is not known.
type Keep func(ctx context.Context) (map[string]bool, error)

// Collect deletes the assets under prefix in bucket (keys prefix followed
// by a hex SHA-256: naming.AssetPrefix in the deployer bucket,
// naming.TargetAssetPrefix in a target's asset bucket) that were last
// written before notAfter and that keep does not name, and returns the
// SHA-256s it deleted. A key under prefix that is not an asset's is left
// alone. An asset newer than notAfter stays whatever keep says: a client
// uploads its assets before the release that names them.
//
// It lists every page first, calls keep only when some asset is older
// than notAfter (so a collection with nothing to collect reads nothing
// else), and deletes after; it stops at the first failure (what it
// deleted so far is returned with the error): a failed listing or keep
// deletes nothing. Deleting what is gone already is no error (S3's
// DeleteObject), so running it again is safe.
//
// Collect knows nothing of who else writes under prefix: its caller makes
// sure nothing that keep does not name can start using an asset while it
// runs.
func Collect(ctx context.Context, client Collector, bucket, prefix string, notAfter time.Time, keep Keep) ([]string, error) {
	var old []string
	p := s3.NewListObjectsV2Paginator(client, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, errs.Classify("list "+prefix, err)
		}
		for _, o := range page.Contents {
			sum := strings.TrimPrefix(aws.ToString(o.Key), prefix)
			if sha256Hex(sum) && aws.ToTime(o.LastModified).Before(notAfter) {
				old = append(old, sum)
			}
		}
	}
	if len(old) == 0 {
		return nil, nil
	}
	kept, err := keep(ctx)
	if err != nil {
		return nil, err
	}
	var deleted []string
	for _, sum := range old {
		if kept[sum] {
			continue
		}
		key := prefix + sum
		if _, err := client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}); err != nil {
			return deleted, errs.Classify("delete "+key, err)
		}
		deleted = append(deleted, sum)
	}
	return deleted, nil
}

// sha256Hex reports whether s is 64 lowercase hex digits: an asset's key,
// not something else a client put under the prefix.
func sha256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
