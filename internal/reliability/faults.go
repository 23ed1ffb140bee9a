package reliability

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/ferryhq/ferry/internal/asl"
	"github.com/ferryhq/ferry/internal/deployer"
	"github.com/ferryhq/ferry/internal/sim"
)

// Kind is a kind of fault the matrix injects.
type Kind string

// The fault kinds.
const (
	// Throttling is AWS throttling the call (S3: SlowDown, 503).
	Throttling Kind = "throttling"
	// ServerError is a 5xx answer.
	ServerError Kind = "5xx"
	// AccessDenied is IAM refusing the call (403): not transient.
	AccessDenied Kind = "access-denied"
	// Timeout is a call whose deadline passed before an answer came.
	Timeout Kind = "timeout"
	// LambdaDied is the task invocation that made the call running to its
	// end, then dying before its result reaches the state machine
	// (Lambda.Unknown): the work is done, the state machine does not know.
	LambdaDied Kind = "lambda-died"
)

// Kinds returns every fault kind, in the order the report shows them.
func Kinds() []Kind { return []Kind{Throttling, ServerError, AccessDenied, Timeout, LambdaDied} }

// Fault is one fault to inject into a run: Kind at the call of index Index
// of the clean run's call sequence. The zero Fault injects nothing.
type Fault struct {
	Kind  Kind
	Index int
	// Call is the clean run's call at Index.
	Call Call

	// Where to inject, derived from the clean sequence (Target): the
	// Nth matching simulated AWS call, the S3Nth call of the deployer's
	// S3 store, or the Invocation-th task invocation (1-based each).
	rule       *sim.Rule
	s3Nth      int
	invocation int
}

// String names the fault for people: "throttling@17 (AutoScaling
// CreateAutoScalingGroup in Deploy)".
func (f Fault) String() string {
	if f.Kind == "" {
		return "none"
	}
	return fmt.Sprintf("%s@%d (%s in %s)", f.Kind, f.Index, f.Call, f.Call.Task)
}

// awsError is the simulated AWS's error for a kind.
func awsError(k Kind) error {
	switch k {
	case Throttling:
		return sim.Throttling()
	case ServerError:
		return sim.InternalError()
	case AccessDenied:
		return sim.AccessDenied()
	case Timeout:
		return sim.Timeout()
	}
	return nil
}

// s3Error is the error the S3 SDK client returns for a kind of fault on
// operation op: an OperationError around an HTTP response error with S3's
// status around the API error, or a send error for a timeout.
func s3Error(k Kind, op string) error {
	var code, msg string
	status := 0
	fault := smithy.FaultClient
	switch k {
	case Throttling:
		code, msg, status, fault = "SlowDown", "Please reduce your request rate.", http.StatusServiceUnavailable, smithy.FaultServer
	case ServerError:
		code, msg, status, fault = "InternalError", "We encountered an internal error. Please try again.", http.StatusInternalServerError, smithy.FaultServer
	case AccessDenied:
		code, msg, status = "AccessDenied", "Access Denied", http.StatusForbidden
	case Timeout:
		return &smithy.OperationError{ServiceID: "S3", OperationName: op,
			Err: &smithyhttp.RequestSendError{Err: fmt.Errorf("request canceled or timed out: %w", context.DeadlineExceeded)}}
	default:
		return nil
	}
	return &smithy.OperationError{ServiceID: "S3", OperationName: op, Err: &awshttp.ResponseError{
		ResponseError: &smithyhttp.ResponseError{
			Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status, Header: http.Header{}}},
			Err:      &smithy.GenericAPIError{Code: code, Message: msg, Fault: fault},
		},
		RequestID: "reliability-request",
	}}
}

// lambdaDied is the error of an invocation that died after its handler
// returned: the Lambda service reports it as Lambda.Unknown.
type lambdaDied struct{ task string }

func (e *lambdaDied) Error() string {
	return fmt.Sprintf("the %s invocation died after its work was done (injected)", e.task)
}

// ErrorName is the error name the state machine sees.
func (e *lambdaDied) ErrorName() string { return asl.ErrorLambdaUnknown }

// faultStore wraps the deployer's S3 store: it records every call (in the
// recorder) and fails the one the fault names.
type faultStore struct {
	next deployer.Store
	rec  *recorder
}

var _ deployer.Store = (*faultStore)(nil)

// call records an S3 call and returns the injected error, if this is the
// call to fail.
func (s *faultStore) call(op string, key *string) error {
	k := ""
	if key != nil {
		k = *key
	}
	return s.rec.s3Call(op, k)
}

// PutObject records the call and fails it when the fault says so.
func (s *faultStore) PutObject(ctx context.Context, in *s3.PutObjectInput, optFns ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	if err := s.call("PutObject", in.Key); err != nil {
		return nil, err
	}
	return s.next.PutObject(ctx, in, optFns...)
}

// GetObject records the call and fails it when the fault says so.
func (s *faultStore) GetObject(ctx context.Context, in *s3.GetObjectInput, optFns ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	if err := s.call("GetObject", in.Key); err != nil {
		return nil, err
	}
	return s.next.GetObject(ctx, in, optFns...)
}

// HeadObject records the call and fails it when the fault says so.
func (s *faultStore) HeadObject(ctx context.Context, in *s3.HeadObjectInput, optFns ...func(*s3.Options)) (*s3.HeadObjectOutput, error) {
	if err := s.call("HeadObject", in.Key); err != nil {
		return nil, err
	}
	return s.next.HeadObject(ctx, in, optFns...)
}

// DeleteObject records the call and fails it when the fault says so.
func (s *faultStore) DeleteObject(ctx context.Context, in *s3.DeleteObjectInput, optFns ...func(*s3.Options)) (*s3.DeleteObjectOutput, error) {
	if err := s.call("DeleteObject", in.Key); err != nil {
		return nil, err
	}
	return s.next.DeleteObject(ctx, in, optFns...)
}

// ListObjectsV2 records the call and fails it when the fault says so.
func (s *faultStore) ListObjectsV2(ctx context.Context, in *s3.ListObjectsV2Input, optFns ...func(*s3.Options)) (*s3.ListObjectsV2Output, error) {
	if err := s.call("ListObjectsV2", in.Prefix); err != nil {
		return nil, err
	}
	return s.next.ListObjectsV2(ctx, in, optFns...)
}

// s3Record is one S3 call of the deployer and how many simulated AWS calls
// came before it.
type s3Record struct {
	op, key   string
	awsBefore int
}

// recorder records the calls and invocations of the armed execution and
// injects its fault.
type recorder struct {
	mu    sync.Mutex
	armed bool
	world *sim.World
	fault Fault
	s3    []s3Record
	fired bool
	// firedIn is the invocation (1-based) the fault fired in.
	firedIn int
	current int // the invocation running, 1-based
}

func (r *recorder) s3Call(op, key string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.armed {
		return nil
	}
	r.s3 = append(r.s3, s3Record{op: op, key: key, awsBefore: r.world.TotalCalls()})
	if r.fault.s3Nth > 0 && len(r.s3) == r.fault.s3Nth && !r.fired {
		r.fired, r.firedIn = true, r.current
		return s3Error(r.fault.Kind, op)
	}
	return nil
}
