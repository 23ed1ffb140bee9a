package reliability

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/ferryhq/ferry/internal/deployer"
	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/local/sim"
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
	// The response is lost after the invocation's last call.
	LambdaDied Kind = "lambda-died"
	// DiedMidway is the invocation that made the call dying right after
	// it: none of its later calls happens, and the state machine sees
	// Lambda.Unknown.
	DiedMidway Kind = "died-midway"
	// RoleDenied is the invocation that made the call starting in a new
	// Lambda container (no credentials cached) whose role assumption is
	// refused (AccessDenied).
	RoleDenied Kind = "role-denied"
	// RoleExpired is the same with the deployer's own credentials expired
	// (STS answers ExpiredToken).
	RoleExpired Kind = "role-expired"
)

// CallKinds are the faults of one AWS or S3 call.
func CallKinds() []Kind { return []Kind{Throttling, ServerError, AccessDenied, Timeout} }

// Kinds returns every fault kind, in the order the report shows them.
func Kinds() []Kind {
	return append(CallKinds(), LambdaDied, DiedMidway, RoleDenied, RoleExpired)
}

// invocationLevel says whether a kind acts on the invocation that made
// the call rather than on the call.
func (k Kind) invocationLevel() bool {
	return k == LambdaDied || k == DiedMidway || k == RoleDenied || k == RoleExpired
}

// Fault is one fault to inject into a run: Kind at the call of index Index
// of a base run's call sequence (Target). The zero Fault injects nothing.
type Fault struct {
	Kind  Kind
	Index int
	// Call is the base run's call at Index.
	Call Call

	// Where to inject, derived from the base sequence (Target): the Nth
	// matching simulated AWS call, the s3Nth call of the deployer's S3
	// store, or the invocation-th task invocation of the release (1-based
	// each); for DiedMidway, position is how many calls that invocation
	// made before the call (the invocation dies after call position+1).
	rule       *sim.Rule
	s3Nth      int
	invocation int
	position   int
}

// String names the fault for people: "throttling@17 (AutoScaling
// CreateAutoScalingGroup in Deploy)".
func (f Fault) String() string {
	if f.Kind == "" {
		return "none"
	}
	return fmt.Sprintf("%s@%d (%s in %s)", f.Kind, f.Index, f.Call, f.Call.Task)
}

// awsError is the simulated AWS's error for a kind: for the role kinds,
// STS's answer to the role assumption.
func awsError(k Kind) error {
	switch k {
	case Throttling:
		return sim.Throttling()
	case ServerError:
		return sim.InternalError()
	case AccessDenied, RoleDenied:
		return sim.AccessDenied()
	case Timeout:
		return sim.Timeout()
	case RoleExpired:
		return sim.ExpiredToken()
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
// recorder) and fails the ones the schedule names (and every call of an
// invocation after it died).
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

// armed is one fault of the schedule being injected, and whether it fired
// and in which invocation.
type armed struct {
	Fault
	ruleID  int // the sim rule of an AWS call fault
	fired   bool
	firedIn int
	// hit is the S3 call an S3 fault failed ("PutObject <key>"): the
	// n-th S3 call of a faulted run need not be the base run's.
	hit string
}

// recorder records the calls and invocations of the release under test
// and injects its schedule's faults.
type recorder struct {
	mu     sync.Mutex
	on     bool // armed: the release under test runs
	world  *sim.World
	faults []*armed
	s3     []s3Record
	// invocations counts the release's invocations; current is the one
	// running (1-based; 0 between invocations), callsIn the calls it made
	// so far; dead says it died (DiedMidway) and every later call of it
	// fails.
	invocations int
	current     int
	callsIn     int
	dead        bool
	// s3Seen counts the deployer's S3 calls while armed.
	s3Seen int
}

// errDead is the error of a call of an invocation that died.
var errDead = errors.New("the invocation died before this call (injected)")

// gate is every call of the release's current invocation, before it runs:
// it counts it and refuses it (errDead) once the invocation died.
func (r *recorder) gate() error {
	if !r.on || r.current == 0 {
		return nil
	}
	r.callsIn++
	for _, f := range r.faults {
		if f.Kind == DiedMidway && f.invocation == r.current && r.callsIn > f.position+1 {
			f.fired, f.firedIn = true, r.current
			r.dead = true
		}
	}
	if r.dead {
		return errDead
	}
	return nil
}

// awsCall is the sim's hook: every AWS call of the world.
func (r *recorder) awsCall(sim.Call) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gate() != nil {
		return sim.Timeout()
	}
	return nil
}

// s3Call records an S3 call of the deployer and returns the error to fail
// it with, if the schedule says so. It reads the world's call count
// before it takes the recorder's lock, never under it: the world calls
// awsCall holding its own lock, so taking them in the other order
// deadlocks when two executions call at once (a race's second release
// recording its outcome at Lock while the first deploys).
func (r *recorder) s3Call(op, key string) error {
	awsBefore := r.world.TotalCalls()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.on {
		return nil
	}
	r.s3 = append(r.s3, s3Record{op: op, key: key, awsBefore: awsBefore})
	r.s3Seen++
	if r.gate() != nil {
		return s3Error(Timeout, op)
	}
	for _, f := range r.faults {
		if f.s3Nth > 0 && r.s3Seen == f.s3Nth && !f.fired {
			f.fired, f.firedIn, f.hit = true, r.current, op+" "+key
			return s3Error(f.Kind, op)
		}
	}
	return nil
}

// startInvocation begins the release's next invocation and returns its
// number and the fault of the schedule at that invocation's level, if any.
func (r *recorder) startInvocation() (n int, f *armed) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.invocations++
	r.current, r.callsIn, r.dead = r.invocations, 0, false
	for _, a := range r.faults {
		if a.Kind.invocationLevel() && a.invocation == r.current {
			f = a
		}
	}
	return r.current, f
}

// endInvocation ends the release's invocation: afterwards calls are not
// counted against it.
func (r *recorder) endInvocation() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.current, r.callsIn, r.dead = 0, 0, false
}
