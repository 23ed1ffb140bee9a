package region

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"unicode"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ferryhq/ferry/internal/deployer"
	"github.com/ferryhq/ferry/internal/limits"
)

// maxNameLength is the longest execution name Step Functions accepts.
const maxNameLength = 80

// validateName checks an execution name as Step Functions does: 1 to 80
// characters, none of them whitespace, brackets, wildcards, the special
// characters " # % \ ^ | ~ ` $ & , ; : / or control characters.
func validateName(name string) error {
	if name == "" || len([]rune(name)) > maxNameLength {
		return apiErrorf(CodeInvalidName, "Invalid Name: '%s' (an execution name has 1 to %d characters)", name, maxNameLength)
	}
	for _, c := range name {
		if unicode.IsSpace(c) || unicode.IsControl(c) || (c >= 0x7f && c <= 0x9f) || strings.ContainsRune(`<>{}[]?*"#%\^|~`+"`"+`$&,;:/`, c) {
			return apiErrorf(CodeInvalidName, "Invalid Name: '%s' (%q is not allowed in an execution name)", name, c)
		}
	}
	return nil
}

// validateInput checks an execution input: JSON, at most the Step
// Functions payload limit.
func validateInput(in string) error {
	if len(in) > limits.StepFunctionsPayloadBytes {
		return apiErrorf(CodeInvalidExecutionInput, "the input is %d bytes, over the limit of %d", len(in), limits.StepFunctionsPayloadBytes)
	}
	if !json.Valid([]byte(in)) {
		return apiErrorf(CodeInvalidExecutionInput, "Invalid State Machine Execution Input: the input is not valid JSON")
	}
	return nil
}

// splitExecutionARN splits arn:aws:states:REGION:ACCOUNT:execution:MACHINE:NAME
// into the state machine's ARN and the execution's name; ok is false when
// arn is not shaped so.
func splitExecutionARN(arn string) (stateMachineARN, name string, ok bool) {
	p := strings.Split(arn, ":")
	if len(p) != 8 || p[0] != "arn" || p[1] == "" || p[2] != "states" || p[3] == "" || p[4] == "" ||
		p[5] != "execution" || p[6] == "" || p[7] == "" {
		return "", "", false
	}
	return strings.Join([]string{p[0], p[1], p[2], p[3], p[4], "stateMachine", p[6]}, ":"), p[7], true
}

// validStateMachineARN reports whether arn is shaped as a state machine ARN
// (arn:aws:states:REGION:ACCOUNT:stateMachine:NAME, optionally with a
// version or alias suffix).
func validStateMachineARN(arn string) bool {
	p := strings.Split(arn, ":")
	if len(p) != 7 && len(p) != 8 {
		return false
	}
	for _, s := range p {
		if s == "" {
			return false
		}
	}
	return p[0] == "arn" && p[2] == "states" && p[5] == "stateMachine"
}

// loggingStore logs at Debug every call the deployer makes on its bucket.
type loggingStore struct {
	next   deployer.Store
	logger *slog.Logger
}

var _ deployer.Store = loggingStore{}

func (s loggingStore) log(ctx context.Context, op string, bucket, key *string, err error) {
	if !s.logger.Enabled(ctx, slog.LevelDebug) {
		return
	}
	attrs := []any{"service", "S3", "op", op, "bucket", deref(bucket)}
	if key != nil {
		attrs = append(attrs, "key", *key)
	}
	if err != nil {
		attrs = append(attrs, "error", err.Error())
	}
	s.logger.Debug("s3 call", attrs...)
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func (s loggingStore) PutObject(ctx context.Context, in *s3.PutObjectInput, optFns ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	out, err := s.next.PutObject(ctx, in, optFns...)
	s.log(ctx, "PutObject", in.Bucket, in.Key, err)
	return out, err
}

func (s loggingStore) GetObject(ctx context.Context, in *s3.GetObjectInput, optFns ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	out, err := s.next.GetObject(ctx, in, optFns...)
	s.log(ctx, "GetObject", in.Bucket, in.Key, err)
	return out, err
}

func (s loggingStore) HeadObject(ctx context.Context, in *s3.HeadObjectInput, optFns ...func(*s3.Options)) (*s3.HeadObjectOutput, error) {
	out, err := s.next.HeadObject(ctx, in, optFns...)
	s.log(ctx, "HeadObject", in.Bucket, in.Key, err)
	return out, err
}

func (s loggingStore) DeleteObject(ctx context.Context, in *s3.DeleteObjectInput, optFns ...func(*s3.Options)) (*s3.DeleteObjectOutput, error) {
	out, err := s.next.DeleteObject(ctx, in, optFns...)
	s.log(ctx, "DeleteObject", in.Bucket, in.Key, err)
	return out, err
}

func (s loggingStore) ListObjectsV2(ctx context.Context, in *s3.ListObjectsV2Input, optFns ...func(*s3.Options)) (*s3.ListObjectsV2Output, error) {
	out, err := s.next.ListObjectsV2(ctx, in, optFns...)
	s.log(ctx, "ListObjectsV2", in.Bucket, in.Prefix, err)
	return out, err
}
