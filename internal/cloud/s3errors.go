package cloud

import (
	"errors"
	"net/http"

	"github.com/aws/smithy-go"
)

// S3 error codes ferry tells apart.
const (
	s3CodeNoSuchKey                  = "NoSuchKey"
	s3CodeNotFound                   = "NotFound"
	s3CodePreconditionFailed         = "PreconditionFailed"
	s3CodeConditionalRequestConflict = "ConditionalRequestConflict"
)

// IsNotFound reports whether err says an S3 object does not exist: the API
// error codes NoSuchKey or NotFound (HeadObject has no body, so the SDK
// names its 404 NotFound), or a 404 response with no API error code at all.
// A 404 with any other code is not "not found": a missing bucket
// (NoSuchBucket) means ferry is misconfigured, a missing version or upload
// is not a missing object, and reads of locks and halts fail closed on
// them.
func IsNotFound(err error) bool {
	if err == nil {
		return false
	}
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode() {
		case s3CodeNoSuchKey, s3CodeNotFound:
			return true
		case "":
		default:
			return false
		}
	}
	return httpStatus(err) == http.StatusNotFound
}

// IsPreconditionFailed reports whether err says a conditional S3 write lost:
// PreconditionFailed or a 412 response (If-None-Match: * found an object,
// or If-Match found another ETag), or ConditionalRequestConflict or a 409
// response (another conditional write to the same key was in progress).
// Either way the caller must re-read the object to learn who won.
func IsPreconditionFailed(err error) bool {
	if err == nil {
		return false
	}
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode() {
		case s3CodePreconditionFailed, s3CodeConditionalRequestConflict:
			return true
		}
	}
	switch httpStatus(err) {
	case http.StatusPreconditionFailed, http.StatusConflict:
		return true
	}
	return false
}

func httpStatus(err error) int {
	var withStatus interface{ HTTPStatusCode() int }
	if errors.As(err, &withStatus) {
		return withStatus.HTTPStatusCode()
	}
	return 0
}
