package cloud_test

import (
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"

	"github.com/ferryhq/ferry/internal/cloud"
)

// TestIsNotFound: only S3's definite "no such object" answers mean absent
// (reads of locks and halt markers fail closed on everything else): a 404
// whose code names something else (a missing bucket, version or upload) is
// not a missing object.
func TestIsNotFound(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"NoSuchKey (GetObject)", withStatus(404, &types.NoSuchKey{}), true},
		{"NotFound (HeadObject: 404 without a body)", withStatus(404, &smithy.GenericAPIError{Code: "NotFound"}), true},
		{"404 without an API error", withStatus(404, errors.New("404")), true},
		{"NoSuchBucket", withStatus(404, &smithy.GenericAPIError{Code: "NoSuchBucket"}), false},
		{"NoSuchVersion", withStatus(404, &smithy.GenericAPIError{Code: "NoSuchVersion"}), false},
		{"other 404 code", withStatus(404, &smithy.GenericAPIError{Code: "NoSuchUpload"}), false},
		{"access denied", withStatus(403, &smithy.GenericAPIError{Code: "AccessDenied"}), false},
		{"slow down", withStatus(503, &smithy.GenericAPIError{Code: "SlowDown"}), false},
		{"no status, no code", errors.New("boom"), false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, cloud.IsNotFound(tt.err))
		})
	}
}
