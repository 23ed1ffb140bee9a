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
