package sim

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// apiErr is an AWS API error with a client fault.
func apiErr(code, msg string) error {
	return &smithy.GenericAPIError{Code: code, Message: msg, Fault: smithy.FaultClient}
}

func apiErrf(code, format string, args ...any) error {
	return apiErr(code, fmt.Sprintf(format, args...))
}

// opError wraps an error the way the SDK does: an OperationError around an
// HTTP response error (with the status AWS would send) around the API
// error; a send failure (a timeout) is wrapped without a response.
func opError(service, op string, err error) error {
	var sendErr *smithyhttp.RequestSendError
	var apiE smithy.APIError
	if !errors.As(err, &sendErr) && errors.As(err, &apiE) {
		status := http.StatusBadRequest
		switch {
		case apiE.ErrorFault() == smithy.FaultServer:
			status = http.StatusInternalServerError
		case apiE.ErrorCode() == "AccessDenied" || apiE.ErrorCode() == "ExpiredToken" || apiE.ErrorCode() == "InvalidClientTokenId":
			status = http.StatusForbidden
		case apiE.ErrorCode() == "NoSuchEntity" || apiE.ErrorCode() == "NotFound" || apiE.ErrorCode() == "ResourceNotFound":
			status = http.StatusNotFound
		}
		err = &awshttp.ResponseError{
			ResponseError: &smithyhttp.ResponseError{
				Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status, Header: http.Header{}}},
				Err:      err,
			},
			RequestID: "sim-request",
		}
	}
	return &smithy.OperationError{ServiceID: service, OperationName: op, Err: err}
}

// sendError wraps a context error as the SDK does when a request cannot be
// sent or its deadline passes.
func sendError(err error) error {
	return &smithyhttp.RequestSendError{Err: fmt.Errorf("request canceled or timed out: %w", err)}
}

// Throttling returns the error AWS returns when it throttles a call.
func Throttling() error {
	return &smithy.GenericAPIError{Code: "Throttling", Message: "Rate exceeded", Fault: smithy.FaultClient}
}

// InternalError returns an AWS 500 error.
func InternalError() error {
	return &smithy.GenericAPIError{Code: "InternalError", Message: "An internal error has occurred", Fault: smithy.FaultServer}
}

// AccessDenied returns the error AWS returns when IAM denies a call.
func AccessDenied() error {
	return &smithy.GenericAPIError{Code: "AccessDenied", Message: "User is not authorized to perform this action", Fault: smithy.FaultClient}
}

// ExpiredToken returns the error AWS returns for a request signed with
// expired credentials.
func ExpiredToken() error {
	return &smithy.GenericAPIError{Code: "ExpiredToken", Message: "The security token included in the request is expired", Fault: smithy.FaultClient}
}

// Timeout returns a call that timed out, as the SDK reports it: a send
// error around context.DeadlineExceeded.
func Timeout() error { return sendError(context.DeadlineExceeded) }

// Rule is a fault injection rule: calls matching Op (and Service and
// Account when set) fail with Err instead of running.
type Rule struct {
	// Op is the operation name, e.g. "CreateAutoScalingGroup". Required.
	Op string
	// Service narrows Op to one service (a ServiceID such as
	// "Elastic Load Balancing v2"); empty matches every service.
	Service string
	// Account narrows the rule to one account; empty matches every account.
	Account string
	// Nth makes the rule fail only the Nth matching call (1-based),
	// counted from when the rule was added. Zero fails every matching
	// call, up to Times.
	Nth int
	// Times bounds how many calls an every-call rule fails (0: no bound).
	Times int
	// Err is the error returned (Throttling(), InternalError(),
	// AccessDenied(), Timeout() or any smithy.APIError).
	Err error
}

// Faults holds the fault injection rules of a world and its eventual
// consistency setting.
type Faults struct {
	w      *World
	rules  []*ruleState
	nextID int
	hide   map[HiddenKind]Hiding
	hook   func(Call) error
	// failEntries are the entry error codes the next PutEvents entries
	// fail with, in order (FailEntries).
	failEntries []string
}

type ruleState struct {
	id      int
	rule    Rule
	seen    int
	applied int
}

// Add adds a rule and returns its id (for Remove). A rule without Op or Err
// is refused.
func (f *Faults) Add(r Rule) (int, error) {
	if r.Op == "" || r.Err == nil {
		return 0, errors.New("fault rule needs an Op and an Err")
	}
	if r.Nth < 0 || r.Times < 0 {
		return 0, errors.New("fault rule Nth and Times must not be negative")
	}
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	f.nextID++
	f.rules = append(f.rules, &ruleState{id: f.nextID, rule: r})
	return f.nextID, nil
}

// Remove removes a rule by id.
func (f *Faults) Remove(id int) {
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	for i, r := range f.rules {
		if r.id == id {
			f.rules = append(f.rules[:i], f.rules[i+1:]...)
			return
		}
	}
}

// Clear removes every rule and the eventual consistency setting.
func (f *Faults) Clear() {
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	f.rules = nil
	f.hide = nil
	f.failEntries = nil
}

// FailEntries fails the next PutEvents entries, one per code, each with
// its code in its result entry (PutEventsResultEntry.ErrorCode: the
// partial failure FailedEntryCount counts, API Reference, PutEvents),
// whatever account they are put in. Clear removes them.
func (f *Faults) FailEntries(codes ...string) {
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	f.failEntries = append(f.failEntries, codes...)
}

// failEntry is the code the next entry fails with and its message, or
// "" for none. The caller holds w.mu.
func (f *Faults) failEntry() (code, msg string) {
	if len(f.failEntries) == 0 {
		return "", ""
	}
	code, f.failEntries = f.failEntries[0], f.failEntries[1:]
	return code, "injected: " + code
}

// Applied returns how many calls rule id has failed.
func (f *Faults) Applied(id int) int {
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	for _, r := range f.rules {
		if r.id == id {
			return r.applied
		}
	}
	return 0
}

// ImpairZone makes an availability zone of an account-region short of
// capacity until until: a launch there fails (a Failed activity with
// EC2's InsufficientInstanceCapacity message) and the group launches in
// its other zones instead, as Auto Scaling does. When the zone recovers,
// every group of the region that is unbalanced between its zones
// rebalances (AZRebalance: it launches in the zone with the fewest
// instances, then terminates one in the zone with the most), unless that
// process is suspended.
func (f *Faults) ImpairZone(account, regionName, zone string, until time.Time) error {
	w := f.w
	w.mu.Lock()
	defer w.mu.Unlock()
	w.advance(w.clk.Now())
	r := w.region(account, regionName)
	if r == nil {
		return fmt.Errorf("sim: no account %s", account)
	}
	r.impaired[zone] = until
	w.at(until, func(at time.Time) {
		if r.impaired[zone] != until {
			return
		}
		delete(r.impaired, zone)
		for _, n := range slices.Sorted(maps.Keys(r.groups)) {
			r.rebalance(r.groups[n], at)
		}
	})
	return nil
}

// FailLaunches makes the next n instance launches of an account-region
// fail with message (a Failed scaling activity whose StatusMessage is
// message), as when an instance profile or image goes away after the
// group was created.
func (f *Faults) FailLaunches(account, regionName string, n int, message string) error {
	w := f.w
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.region(account, regionName)
	if r == nil {
		return fmt.Errorf("sim: no account %s", account)
	}
	r.failLaunches, r.failMessage = max(n, 0), message
	return nil
}

// SetHook sets a function every call is given, once recorded and before it
// runs: an error it returns fails the call with no effect, as a rule does
// (nil removes it). It runs while the world is locked and must not call
// the world. A test uses it to stop an invocation between two calls (a
// Lambda that dies part way through its work).
func (f *Faults) SetHook(hook func(Call) error) {
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	f.hook = hook
}

// match returns the error of the hook or of the first rule matching a
// call. The caller holds w.mu.
func (f *Faults) match(call Call) error {
	if f.hook != nil {
		if err := f.hook(call); err != nil {
			return err
		}
	}
	return f.matchRule(call.Service, call.Op, call.Account)
}

// matchRule returns the error of the first rule matching a call. The
// caller holds w.mu.
func (f *Faults) matchRule(service, op, accountID string) error {
	for _, r := range f.rules {
		if r.rule.Op != op || (r.rule.Service != "" && r.rule.Service != service) || (r.rule.Account != "" && r.rule.Account != accountID) {
			continue
		}
		r.seen++
		fire := false
		if r.rule.Nth > 0 {
			fire = r.seen == r.rule.Nth
		} else {
			fire = r.rule.Times == 0 || r.applied < r.rule.Times
		}
		if fire {
			r.applied++
			return r.rule.Err
		}
	}
	return nil
}

// Call is one API call the world received.
type Call struct {
	Service string    `json:"service"`
	Op      string    `json:"op"`
	Account string    `json:"account"`
	Region  string    `json:"region"`
	At      time.Time `json:"at"`
	// Principal is who made the call: the assumed-role session ARN of
	// the credentials it was signed with, or for AssumeRole the caller's
	// role ARN; empty for the unauthenticated clients of Clients.
	Principal string `json:"principal,omitempty"`
	// SessionTags are the session tags of that session (the tags an
	// AssumeRole asks for are its Auths' RequestTags).
	SessionTags map[string]string `json:"session_tags,omitempty"`
	// SourceIdentity is that session's source identity, as CloudTrail
	// records it with the call (userIdentity.sessionContext.sourceIdentity);
	// for AssumeRole, the one it asks for.
	SourceIdentity string `json:"source_identity,omitempty"`
	// Auth are the authorizations AWS makes for the call, with the
	// resources' ARNs and tags and the request's tags (see Auth). A call
	// refused before its handler ran (a fault, an expired token) has its
	// own action on "*".
	Auth []Auth `json:"auth,omitempty"`
}

type callLog struct {
	byOp      map[string]int
	byAccount map[string]map[string]int
	log       []Call
	// authorized is set once the call in progress has named its
	// authorizations (World.authorize), which then add to its Auth.
	authorized bool
}

func (c *callLog) record(call Call) {
	if c.byOp == nil {
		c.byOp = map[string]int{}
		c.byAccount = map[string]map[string]int{}
	}
	c.byOp[call.Op]++
	if c.byAccount[call.Account] == nil {
		c.byAccount[call.Account] = map[string]int{}
	}
	c.byAccount[call.Account][call.Op]++
	c.log = append(c.log, call)
	c.authorized = false
}

// current is the call in progress: the last one recorded (the world's
// lock is held from a call's record to its end).
func (c *callLog) current() *Call {
	if len(c.log) == 0 {
		return nil
	}
	return &c.log[len(c.log)-1]
}

// Calls returns how many calls of each operation the world received since
// it was made or ResetCalls, faulted calls included.
func (w *World) Calls() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]int, len(w.calls.byOp))
	for k, v := range w.calls.byOp {
		out[k] = v
	}
	return out
}

// CallsByAccount returns Calls per account.
func (w *World) CallsByAccount() map[string]map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]map[string]int{}
	for a, m := range w.calls.byAccount {
		out[a] = map[string]int{}
		for k, v := range m {
			out[a][k] = v
		}
	}
	return out
}

// CallLog returns every call in the order received.
func (w *World) CallLog() []Call {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]Call, len(w.calls.log))
	for i, c := range w.calls.log {
		c.SessionTags = maps.Clone(c.SessionTags)
		c.Auth = slices.Clone(c.Auth)
		out[i] = c
	}
	return out
}

// TotalCalls returns how many calls the world received.
func (w *World) TotalCalls() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.calls.log)
}

// ResetCalls forgets the counters and the call log.
func (w *World) ResetCalls() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls = callLog{}
}
