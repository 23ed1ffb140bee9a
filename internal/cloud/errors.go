package cloud

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/ferryhq/ferry/internal/failure"
)

// AWS error codes ferry (and the simulated AWS) rely on. They are the codes
// of the AWS APIs, as smithy.APIError.ErrorCode() returns them.
const (
	// Not found.
	CodeAMINotFound                = "InvalidAMIID.NotFound"
	CodeSubnetNotFound             = "InvalidSubnetID.NotFound"
	CodeGroupNotFound              = "InvalidGroup.NotFound"
	CodeLaunchTemplateNameNotFound = "InvalidLaunchTemplateName.NotFoundException"
	CodeLaunchTemplateIDNotFound   = "InvalidLaunchTemplateId.NotFound"
	CodeLoadBalancerNotFound       = "LoadBalancerNotFound"
	CodeTargetGroupNotFound        = "TargetGroupNotFound"
	CodeNoSuchEntity               = "NoSuchEntity"
	CodeNotFound                   = "NotFound"
	CodeResourceNotFound           = "ResourceNotFound"

	// Already exists.
	CodeAlreadyExists                   = "AlreadyExists"
	CodeLaunchTemplateNameAlreadyExists = "InvalidLaunchTemplateName.AlreadyExistsException"

	// Refused.
	CodeValidation                = "ValidationError"
	CodeAccessDenied              = "AccessDenied"
	CodeResourceInUse             = "ResourceInUse"
	CodeScalingActivityInProgress = "ScalingActivityInProgress"
	CodeLimitExceeded             = "LimitExceeded"
	CodeExpiredToken              = "ExpiredToken"
	CodeInvalidClientTokenID      = "InvalidClientTokenId"
	CodeInternalError             = "InternalError"
	CodeThrottling                = "Throttling"
	CodeInvalidInstanceType       = "InvalidInstanceType"
)

// NotFoundCodes are the "does not exist" codes of the APIs ferry calls.
// IsNotFoundCode uses them when it is given no codes.
var NotFoundCodes = []string{
	CodeAMINotFound, CodeSubnetNotFound, CodeGroupNotFound,
	CodeLaunchTemplateNameNotFound, CodeLaunchTemplateIDNotFound,
	CodeLoadBalancerNotFound, CodeTargetGroupNotFound,
	CodeNoSuchEntity, CodeNotFound, CodeResourceNotFound,
}

// throttlingCodes are the codes AWS APIs use to say "slow down" (SNS says
// Throttled, a code the SDK's standard retryer does not know; AWSBuilder
// adds these to it).
var throttlingCodes = []string{
	"Throttling", "ThrottlingException", "Throttled", "ThrottledException", "RequestThrottled",
	"RequestThrottledException", "RequestLimitExceeded", "TooManyRequestsException",
	"ProvisionedThroughputExceededException", "SlowDown", "BandwidthLimitExceeded",
	"EC2ThrottledException", "PriorRequestNotComplete",
}

// serverCodes are codes of transient failures on AWS's side that some APIs
// return without a 5xx status.
var serverCodes = []string{
	"InternalError", "InternalFailure", "InternalServerError", "ServiceUnavailable",
	"ServiceUnavailableException", "Unavailable", "RequestTimeout", "RequestTimeoutException",
	"IDPCommunicationError",
}

// ErrorCode returns the AWS error code in err's chain ("" when err carries
// none).
func ErrorCode(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode()
	}
	return ""
}

// IsCode reports whether err carries one of the given AWS error codes.
func IsCode(err error, codes ...string) bool {
	code := ErrorCode(err)
	return code != "" && slices.Contains(codes, code)
}

// IsNotFoundCode reports whether err carries one of the given AWS error
// codes, or one of NotFoundCodes when none is given. Only a definite "does
// not exist" answer from AWS counts: a throttled, refused or failed call is
// never "not found".
func IsNotFoundCode(err error, codes ...string) bool {
	code := ErrorCode(err)
	if code == "" {
		return false
	}
	if len(codes) == 0 {
		codes = NotFoundCodes
	}
	return slices.Contains(codes, code)
}

// IsTransient reports whether err is a failure that the same call may not
// have if it is made again: throttling, a 5xx or a server-side fault, a
// request or connection timeout, a connection that could not be made. A
// cancelled context is not transient.
func IsTransient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		code := apiErr.ErrorCode()
		if slices.Contains(throttlingCodes, code) || slices.Contains(serverCodes, code) {
			return true
		}
		if apiErr.ErrorFault() == smithy.FaultServer {
			return true
		}
	}
	var respErr *awshttp.ResponseError
	if errors.As(err, &respErr) {
		if s := respErr.HTTPStatusCode(); s >= 500 || s == 429 {
			return true
		}
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return true
	}
	var sendErr *smithyhttp.RequestSendError
	return errors.As(err, &sendErr)
}

// Throttled reports whether every failure err holds is AWS saying "slow
// down" (a throttling code: Throttling, RequestLimitExceeded, SlowDown,
// ...), through wrapping and errors.Join alike. Such a call did nothing
// and can be made again later; a loop that meets one leaves its work for
// its next round instead of failing. One other failure among them, or
// none, is false.
func Throttled(err error) bool {
	if err == nil {
		return false
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		errs := joined.Unwrap()
		for _, e := range errs {
			if !Throttled(e) {
				return false
			}
		}
		return len(errs) > 0
	}
	if apiErr, ok := err.(smithy.APIError); ok {
		return slices.Contains(throttlingCodes, apiErr.ErrorCode())
	}
	return Throttled(errors.Unwrap(err))
}

// Classify maps an error of an AWS call named op to ferry's errors: a
// transient failure (see IsTransient) becomes a *failure.RetryableError so
// the state machine retries the task; anything else is returned as is for
// the caller to wrap (DeployError, BadReleaseError, ...). An error that is
// already a RetryableError, and nil, are returned unchanged.
func Classify(op string, err error) error {
	if err == nil {
		return nil
	}
	var retryable *failure.RetryableError
	if errors.As(err, &retryable) {
		return err
	}
	if IsTransient(err) {
		return &failure.RetryableError{Op: op, Err: err}
	}
	return err
}

// ClassifyAs is Classify for a caller that names its own failures: a
// transient failure of op is a *failure.RetryableError (an error that is
// retryable already is returned as it is); any other is refuse(op, err),
// or, with refuse nil, an error "op: err" that carries no name (the
// handler's task names it). nil is nil.
func ClassifyAs(op string, err error, refuse func(op string, err error) error) error {
	err = Classify(op, err)
	if err == nil || failure.IsRetryable(err) {
		return err
	}
	if refuse == nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return refuse(op, err)
}

// IsAutoScalingNotFound reports whether err is Auto Scaling's answer that
// name (a group, or the launch template a call names: ferry names both
// alike) does not exist, as opposed to a request it refuses. Auto Scaling
// has no "not found" code: both are a ValidationError ("The input fails
// to satisfy the constraints specified by an AWS service", Common Errors,
// Auto Scaling API Reference), told apart only by the message. Its "not
// found" says so of the name: "AutoScalingGroup name not found -
// AutoScalingGroup 'NAME' not found" (the name quoted or not, or "null"),
// and, for a launch template, EC2's "The specified launch template, with
// template name NAME, does not exist." (or its version "does not exist").
// Any other ValidationError is a refusal: a request that breaks the
// service model ("N validation errors detected: Value ... at ... failed
// to satisfy constraint: ...") or a rule of the API (a mixed instances
// policy no instance type meets, a size out of bounds), which the same
// request meets again, as it does "does not exist" said of another thing
// (an image, a subnet, a key pair of the launch template).
func IsAutoScalingNotFound(err error, name string) bool {
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode() != CodeValidation {
		return false
	}
	msg := apiErr.ErrorMessage()
	if strings.HasPrefix(msg, "AutoScalingGroup name not found") {
		return true
	}
	return name != "" && strings.Contains(msg, name) &&
		(strings.Contains(msg, "not found") || strings.Contains(msg, "does not exist"))
}

// IsCapacityShortage reports whether the StatusMessage of a failed Auto
// Scaling launch says a zone was short of capacity (EC2's
// InsufficientInstanceCapacity: "We currently do not have sufficient
// <type> capacity in the Availability Zone you requested ..."). Auto
// Scaling keeps trying in the group's other zones and later, so such a
// failure is not the release's fault; any other failed launch (an image,
// instance type, security group or instance profile EC2 refuses) fails the
// same way every time. AWS gives the reason only as text: an Activity has
// no field for the error code of a failed launch, only its StatusMessage
// ("A friendly, more verbose description of the activity status";
// Activity, Auto Scaling API Reference), which quotes EC2's error (code
// InsufficientInstanceCapacity, EC2 API Reference, Error codes). So this
// is the one place ferry reads it.
func IsCapacityShortage(statusMessage string) bool {
	m := strings.ToLower(statusMessage)
	return strings.Contains(m, "insufficientinstancecapacity") ||
		(strings.Contains(m, "do not have sufficient") && strings.Contains(m, "capacity")) ||
		strings.Contains(m, "no spot capacity available")
}
