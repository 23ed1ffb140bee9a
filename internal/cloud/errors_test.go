package cloud_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/stretchr/testify/assert"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/local/sim"
)

func api(code string, fault smithy.ErrorFault) error {
	return &smithy.OperationError{ServiceID: "Auto Scaling", OperationName: "CreateAutoScalingGroup",
		Err: &smithy.GenericAPIError{Code: code, Message: "m", Fault: fault}}
}

func withStatus(status int, err error) error {
	return &smithy.OperationError{ServiceID: "EC2", OperationName: "DescribeImages", Err: &awshttp.ResponseError{
		ResponseError: &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status}}, Err: err},
	}}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		retryable bool
	}{
		{"Throttling", api("Throttling", smithy.FaultClient), true},
		{"ThrottlingException", api("ThrottlingException", smithy.FaultClient), true},
		{"RequestLimitExceeded", api("RequestLimitExceeded", smithy.FaultClient), true},
		{"TooManyRequestsException", api("TooManyRequestsException", smithy.FaultClient), true},
		{"SlowDown", api("SlowDown", smithy.FaultClient), true},
		{"SNS Throttled", api("Throttled", smithy.FaultClient), true},
		{"server fault", api("Whatever", smithy.FaultServer), true},
		{"503 without a code", withStatus(503, errors.New("unavailable")), true},
		{"sim InternalError", sim.InternalError(), true},
		{"sim Timeout", sim.Timeout(), true},
		{"deadline on the call", fmt.Errorf("op: %w", context.DeadlineExceeded), true},
		{"connection failure", &smithyhttp.RequestSendError{Err: errors.New("connection refused")}, true},
		{"ValidationError", withStatus(400, &smithy.GenericAPIError{Code: "ValidationError", Fault: smithy.FaultClient}), false},
		{"AccessDenied", api("AccessDenied", smithy.FaultClient), false},
		{"AlreadyExists", api("AlreadyExists", smithy.FaultClient), false},
		{"not found", api("InvalidAMIID.NotFound", smithy.FaultClient), false},
		{"cancelled", fmt.Errorf("op: %w", context.Canceled), false},
		{"plain error", errors.New("boom"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := cloud.Classify("CreateAutoScalingGroup", tt.err)
			var r *failure.RetryableError
			assert.Equal(t, tt.retryable, errors.As(got, &r))
			assert.ErrorIs(t, got, tt.err, "the cause stays in the chain")
			if tt.retryable {
				assert.Equal(t, failure.NameRetryable, failure.NameOf(got))
				assert.Equal(t, "CreateAutoScalingGroup", r.Op)
				assert.Same(t, got, cloud.Classify("again", got), "classifying twice wraps once")
			} else {
				assert.Equal(t, tt.err, got)
			}
		})
	}
	assert.NoError(t, cloud.Classify("x", nil))
}

func TestClassifyAs(t *testing.T) {
	retryable := &failure.RetryableError{Op: "earlier", Err: errors.New("throttled")}
	tests := []struct {
		name   string
		err    error
		refuse func(op string, err error) error
		want   string // the error name, "" for nil
		text   string
	}{
		{"nil", nil, failure.AsDeploy, "", ""},
		{"transient", api("Throttling", smithy.FaultClient), failure.AsDeploy, failure.NameRetryable, "transient: op: "},
		{"retryable already", retryable, failure.AsDeploy, failure.NameRetryable, "transient: earlier: throttled"},
		{"refused", api("AccessDenied", smithy.FaultClient), failure.AsDeploy, failure.NameDeploy, "deploy: op: "},
		{"refused as a lock error", api("AccessDenied", smithy.FaultClient), failure.AsLock, failure.NameLock, "lock: op: "},
		{"refused, unnamed", api("AccessDenied", smithy.FaultClient), nil, failure.NameInternal, "op: "},
		{"retryable inside another name", &failure.CleanUpError{Err: retryable}, failure.AsDeploy, failure.NameDeploy, "deploy: op: clean up: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := cloud.ClassifyAs("op", tt.err, tt.refuse)
			if tt.err == nil {
				assert.NoError(t, got)
				return
			}
			assert.Equal(t, tt.want, failure.NameOf(got))
			assert.ErrorIs(t, got, tt.err, "the cause stays in the chain")
			assert.Contains(t, got.Error(), tt.text)
		})
	}
}

func TestIsNotFoundCode(t *testing.T) {
	tests := []struct {
		name  string
		err   error
		codes []string
		want  bool
	}{
		{"AMI", api(cloud.CodeAMINotFound, smithy.FaultClient), nil, true},
		{"NoSuchEntity", withStatus(404, &smithy.GenericAPIError{Code: "NoSuchEntity"}), nil, true},
		{"LoadBalancerNotFound", api("LoadBalancerNotFound", smithy.FaultClient), nil, true},
		{"TargetGroupNotFound", api("TargetGroupNotFound", smithy.FaultClient), nil, true},
		{"explicit code", api("ValidationError", smithy.FaultClient), []string{"ValidationError"}, true},
		{"explicit codes exclude others", api(cloud.CodeAMINotFound, smithy.FaultClient), []string{"NoSuchEntity"}, false},
		{"throttled is not not-found", sim.Throttling(), nil, false},
		{"access denied is not not-found", sim.AccessDenied(), nil, false},
		{"no code", errors.New("not found"), nil, false},
		{"nil", nil, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, cloud.IsNotFoundCode(tt.err, tt.codes...))
		})
	}
}

// TestIsAutoScalingNotFound: Auto Scaling says "not found" and "refused"
// alike with a ValidationError (Common Errors, Auto Scaling API
// Reference); only a message saying the name itself is not found or does
// not exist is "not found". The not-found messages are AWS's as callers
// meet them ("AutoScalingGroup name not found - AutoScalingGroup NAME not
// found"; EC2's "The specified launch template, with template name NAME,
// does not exist."); a refusal that quotes another thing as missing (the
// image or key pair of a launch template) is not.
func TestIsAutoScalingNotFound(t *testing.T) {
	const name = "coinbase-deploy-test-web-r1"
	validation := func(msg string) error {
		return &smithy.OperationError{ServiceID: "Auto Scaling", OperationName: "CreateAutoScalingGroup",
			Err: &smithy.GenericAPIError{Code: cloud.CodeValidation, Message: msg, Fault: smithy.FaultClient}}
	}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"group, quoted", validation("AutoScalingGroup name not found - AutoScalingGroup '" + name + "' not found"), true},
		{"group, unquoted", validation("AutoScalingGroup name not found - AutoScalingGroup " + name + " not found"), true},
		{"group, null", validation("AutoScalingGroup name not found - null"), true},
		{"launch template", validation("You must use a valid fully-formed launch template. The specified launch template, with template name " + name + ", does not exist."), true},
		{"launch template version", validation("The specified launch template version 1 of " + name + " does not exist."), true},
		{"model constraints", validation("1 validation error detected: Value '-1' at 'mixedInstancesPolicy.launchTemplate.overrides.1.member.instanceRequirements.vCpuCount.min' failed to satisfy constraint: Member must have value greater than or equal to 0"), false},
		{"a rule of the API", validation("You can specify either AllowedInstanceTypes or ExcludedInstanceTypes, but not both."), false},
		{"sizes", validation("Desired capacity:9 must be between the specified min size:1 and max size:4"), false},
		{"the image of the template", validation("You must use a valid fully-formed launch template. The image id '[ami-0000000000000ab01]' does not exist"), false},
		{"a key pair of the template", validation("You must use a valid fully-formed launch template. The key pair 'ops' does not exist"), false},
		{"another group", validation("AutoScalingGroup not found - AutoScaling Group other not found"), false},
		{"another code", api(cloud.CodeAlreadyExists, smithy.FaultClient), false},
		{"no code", errors.New(name + " not found"), false},
		{"nil", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, cloud.IsAutoScalingNotFound(tc.err, name))
		})
	}
}

// TestIsCapacityShortage: the messages of the user guide's "Troubleshoot
// Amazon EC2 Auto Scaling: EC2 instance launch failures": capacity
// shortages are waited out, everything else is the release's fault.
func TestIsCapacityShortage(t *testing.T) {
	for msg, want := range map[string]bool{
		"We currently do not have sufficient m5.large capacity in the Availability Zone you requested (us-east-1a). Our system will be working on provisioning additional capacity. Launching EC2 instance failed.": true,
		"InsufficientInstanceCapacity: insufficient capacity":                                                                    true,
		"There is no Spot capacity available that matches your request. Launching EC2 instance failed.":                          true,
		"The image id '[ami-1234]' does not exist. Launching EC2 instance failed.":                                               false,
		"The architecture 'arm64' of the specified instance type does not match the architecture 'x86_64' of the specified AMI.": false,
		"Security group sg-1 and subnet subnet-1 belong to different networks. Launching EC2 instance failed.":                   false,
		"Value (p) for parameter iamInstanceProfile.name is invalid. Invalid IAM Instance Profile name":                          false,
		"You have requested more instances (21) than your current instance limit of 20 allows":                                   false,
	} {
		assert.Equal(t, want, cloud.IsCapacityShortage(msg), msg)
	}
}

// TestThrottled: a failure is throttling only when every error it holds
// carries a throttling code, however wrapped or joined; a removal that
// failed on one throttled call and one refusal is not.
func TestThrottled(t *testing.T) {
	throttled := api("Throttling", smithy.FaultClient)
	denied := api("AccessDenied", smithy.FaultClient)
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"Throttling", throttled, true},
		{"EC2 RequestLimitExceeded", api("RequestLimitExceeded", smithy.FaultClient), true},
		{"classified", cloud.Classify("op", throttled), true},
		{"in a clean-up error", &failure.RetryableError{Op: "clean up", Err: &failure.CleanUpError{Err: errors.Join(throttled, throttled)}}, true},
		{"joined with a refusal", errors.Join(throttled, denied), false},
		{"server fault", api("InternalError", smithy.FaultServer), false},
		{"plain error", errors.New("Throttling"), false},
		{"empty join", errors.Join(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, cloud.Throttled(tt.err))
		})
	}
}
