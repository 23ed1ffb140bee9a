package asl

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// waitForTaskToken is the suffix of a service integration's Resource that
// makes the task wait for a callback with its token (Step Functions
// Developer Guide, "Wait for a Callback with Task Token").
const waitForTaskToken = ".waitForTaskToken"

// TaskTokenError is what SendTaskSuccess and SendTaskFailure refuse a
// callback with; Code is the Step Functions API's error code.
type TaskTokenError struct {
	// Code is TaskDoesNotExist (no task waits with the token, or it has
	// already been answered), TaskTimedOut (its task timed out),
	// InvalidToken (not a token) or InvalidOutput (output not JSON).
	Code    string
	Message string
}

func (e *TaskTokenError) Error() string { return e.Code + ": " + e.Message }

// The codes of TaskTokenError.
const (
	CodeTaskDoesNotExist = "TaskDoesNotExist"
	CodeTaskTimedOut     = "TaskTimedOut"
	CodeInvalidToken     = "InvalidToken"
	CodeInvalidOutput    = "InvalidOutput"
)

// pendingTask is a task waiting for its token's callback.
type pendingTask struct {
	aw Await
	// Set by the callback, before it wakes aw.
	output string
	fail   *StateError
	// ended: answered, timed out, or its task was aborted.
	ended, timedOut bool
}

// newToken makes a task token. It names the execution (TokenExecution
// reads it back, so the region can route a callback) and holds 128 random
// bits: as on AWS, whoever holds the token may answer the task.
func (x *Execution) newToken() string {
	var secret [16]byte
	if _, err := rand.Read(secret[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return base64.RawURLEncoding.EncodeToString([]byte(x.arn)) + "." + hex.EncodeToString(secret[:])
}

// TokenExecution returns the ARN of the execution a task token was made
// by, and false for a string that is not a token.
func TokenExecution(token string) (string, bool) {
	enc, secret, ok := strings.Cut(token, ".")
	if !ok || len(secret) != 32 {
		return "", false
	}
	if _, err := hex.DecodeString(secret); err != nil {
		return "", false
	}
	arn, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil || !strings.HasPrefix(string(arn), "arn:") {
		return "", false
	}
	return string(arn), true
}

// SendTaskSuccess answers the task waiting with token: its result is
// output (JSON). It is SendTaskSuccess of the Step Functions API.
func (x *Execution) SendTaskSuccess(token string, output json.RawMessage) error {
	if !json.Valid(output) {
		return &TaskTokenError{Code: CodeInvalidOutput, Message: "the output is not valid JSON"}
	}
	return x.answer(token, func(p *pendingTask) { p.output = string(output) })
}

// SendTaskFailure fails the task waiting with token with the error name
// and cause given (either may be empty: the error is then
// States.TaskFailed's match-all name, as on AWS, an empty string).
func (x *Execution) SendTaskFailure(token, errName, cause string) error {
	return x.answer(token, func(p *pendingTask) { p.fail = &StateError{Name: errName, Cause: cause} })
}

func (x *Execution) answer(token string, set func(*pendingTask)) error {
	if _, ok := TokenExecution(token); !ok {
		return &TaskTokenError{Code: CodeInvalidToken, Message: "the task token is not one Step Functions made"}
	}
	x.mu.Lock()
	p, ok := x.tokens[token]
	switch {
	case !ok || (p.ended && !p.timedOut):
		x.mu.Unlock()
		return &TaskTokenError{Code: CodeTaskDoesNotExist, Message: "no task waits with this token"}
	case p.timedOut:
		x.mu.Unlock()
		return &TaskTokenError{Code: CodeTaskTimedOut, Message: "the task of this token timed out"}
	}
	p.ended = true
	set(p)
	x.mu.Unlock()
	p.aw.Wake()
	return nil
}

// awaitToken waits for the callback of p's task, until its limit has
// passed. It returns the callback's output, or
// the failure it sent, or States.Timeout.
func (x *Execution) awaitToken(ctx context.Context, p *pendingTask) (string, *StateError, bool, error) {
	err := p.aw.Wait(ctx)
	x.mu.Lock()
	defer x.mu.Unlock()
	switch {
	case errors.Is(err, ErrAwaitTimedOut) && !p.ended:
		p.ended, p.timedOut = true, true
		return "", &StateError{Name: ErrorTimeout}, true, nil
	case err != nil && !p.ended:
		p.ended = true // aborted: no callback is taken any more
		return "", nil, false, err
	case p.fail != nil:
		return "", p.fail, false, nil
	}
	return p.output, nil, false, nil
}

// register makes a token for a task that waits for its callback, limited
// to limit (0: none) from now.
func (x *Execution) register(limit time.Duration) (string, *pendingTask) {
	token := x.newToken()
	p := &pendingTask{aw: NewAwait(x.waiter, limit)}
	x.mu.Lock()
	if x.tokens == nil {
		x.tokens = map[string]*pendingTask{}
	}
	x.tokens[token] = p
	x.mu.Unlock()
	return token, p
}

// callbackOf reports whether resource waits for a task token, and the
// resource to invoke.
func callbackOf(resource string) (string, bool) {
	base, ok := strings.CutSuffix(resource, waitForTaskToken)
	if !ok {
		return resource, false
	}
	if _, _, integration := integrationOf(base); !integration {
		return resource, false
	}
	return base, true
}

// taskToken puts token in the context object as $$.Task.Token.
func withTaskToken(ctxObj any, token string) any {
	m, ok := ctxObj.(map[string]any)
	if !ok {
		panic(fmt.Sprintf("asl: context object is %T", ctxObj))
	}
	m["Task"] = map[string]any{"Token": token}
	return m
}
