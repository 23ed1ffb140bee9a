package failure

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Every registered name is the Go type name of its error, so the Lambda
// runtime (which reports the type name) and NameOf agree.
func TestNamesMatchTypeNames(t *testing.T) {
	errs := []Named{
		&BadReleaseError{}, &LockExistsError{}, &LockError{}, &DeployError{}, &HaltError{},
		&TimeoutError{}, &CleanUpError{}, &RetryableError{}, &InternalError{}, &UnknownTaskError{},
	}
	var names []string
	for _, e := range errs {
		assert.Equal(t, reflect.TypeOf(e).Elem().Name(), e.ErrorName())
		names = append(names, e.ErrorName())
	}
	assert.Equal(t, Names(), names)
}

func TestNameOf(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"plain", errors.New("boom"), NameInternal},
		{"direct", &HaltError{Reason: "x"}, NameHalt},
		{"wrapped", fmt.Errorf("ctx: %w", &LockExistsError{}), NameLockExists},
		{"outermost wins", &DeployError{Op: "x", Err: &RetryableError{Op: "y"}}, NameDeploy},
		{"joined", errors.Join(errors.New("a"), BadRelease("b: c")), NameBadRelease},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, NameOf(tt.err))
		})
	}
}

func TestIsRetryable(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"plain", errors.New("boom"), false},
		{"direct", &RetryableError{Op: "x"}, true},
		{"wrapped", fmt.Errorf("ctx: %w", &RetryableError{Op: "x"}), true},
		{"joined", errors.Join(errors.New("a"), &RetryableError{Op: "x"}), true},
		{"inside another name", &CleanUpError{Err: &RetryableError{Op: "x"}}, false},
		{"another name", &DeployError{Op: "x"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, IsRetryable(tt.err))
			assert.Equal(t, tt.want, NameOf(tt.err) == NameRetryable, "agrees with NameOf")
		})
	}
}

func TestAs(t *testing.T) {
	cause := errors.New("refused")
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"deploy", AsDeploy("op", cause), NameDeploy},
		{"lock", AsLock("op", cause), NameLock},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, NameOf(tt.err))
			assert.ErrorIs(t, tt.err, cause)
			assert.Contains(t, tt.err.Error(), "op: refused")
		})
	}
}

// A handler's error reaches Step Functions as the Lambda runtime's error
// payload: Cause is {"errorMessage": ..., "errorType": ...} ("Handling
// error conditions using a Step Functions state machine", AWS Step
// Functions Developer Guide), and Message reads the message back.
func TestCauseAndMessage(t *testing.T) {
	held := &LockExistsError{Project: "p", Config: "c", Holder: "r0", Execution: "x"}
	assert.JSONEq(t, `{"errorMessage": "`+held.Error()+`", "errorType": "LockExistsError"}`, Cause(held))
	assert.JSONEq(t, `{"errorMessage": "boom", "errorType": "InternalError"}`, Cause(errors.New("boom")))

	tests := []struct {
		name, cause, want string
	}{
		{"function error", Cause(held), held.Error()},
		{"quotes and newlines", Cause(errors.New("a \"b\"\nc")), "a \"b\"\nc"},
		{"with a stack trace", `{"errorMessage":"m","errorType":"E","stackTrace":[{"path":"x"}]}`, "m"},
		{"empty message", `{"errorMessage":"","errorType":"E"}`, ""},
		{"States error", "An error occurred while executing the state 'Deploy'", "An error occurred while executing the state 'Deploy'"},
		{"Lambda service error", "Function not found: arn:aws:lambda:us-east-1:1:function:x", "Function not found: arn:aws:lambda:us-east-1:1:function:x"},
		{"JSON without errorMessage", `{"a": 1}`, `{"a": 1}`},
		{"errorMessage not a string", `{"errorMessage": 3}`, `{"errorMessage": 3}`},
		{"broken JSON", `{"errorMessage": "x`, `{"errorMessage": "x`},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Message(tt.cause))
		})
	}
}
