package events

import (
	"context"
	"log/slog"
	"slices"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
)

// Bus is the EventBridge API Publish calls, the SDK's own signature.
type Bus interface {
	PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, optFns ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error)
}

var _ Bus = (*eventbridge.Client)(nil)

// PutEvents' limits (API Reference, PutEvents; EventBridge User Guide,
// "Calculating PutEvents event entry size").
const (
	// MaxEntriesPerRequest is the most entries one request takes.
	MaxEntriesPerRequest = 10
	// MaxEntrySize is what an entry, and the entries of one request
	// together, must be less than, in bytes as Size counts them.
	MaxEntrySize = 256 * 1024
)

// Retryable entry error codes (PutEventsResultEntry.ErrorCode, API
// Reference): what is worth putting again.
const (
	CodeInternalFailure = "InternalFailure"
	CodeThrottling      = "ThrottlingException"
)

// Size is e's size as EventBridge counts it: 14 bytes for a Time, the
// UTF-8 bytes of Source, DetailType, Detail and each of Resources.
func Size(e ebtypes.PutEventsRequestEntry) int {
	n := len(aws.ToString(e.Source)) + len(aws.ToString(e.DetailType)) + len(aws.ToString(e.Detail))
	if e.Time != nil {
		n += 14
	}
	for _, r := range e.Resources {
		n += len(r)
	}
	return n
}

// Publish puts evs on the default bus of bus's account with source Source,
// in order, and reports how many EventBridge accepted. It never fails: an
// event it cannot put is logged on log (with its event or detail_type)
// and left; see the package documentation for the rules it keeps.
func Publish(ctx context.Context, bus Bus, log *slog.Logger, evs ...Event) int {
	var entries []ebtypes.PutEventsRequestEntry
	for _, e := range evs {
		entry, err := entryOf(e)
		if err != nil {
			log.Warn("deploy event not put", "event", e.Kind.Name, "error", err.Error())
			continue
		}
		entries = append(entries, entry)
	}
	put := 0
	for _, batch := range batches(entries) {
		ok, failed := putBatch(ctx, bus, log, batch)
		if len(failed) > 0 {
			var again int
			again, failed = putBatch(ctx, bus, log, failed)
			ok += again
		}
		put += ok
		for _, e := range failed {
			log.Warn("deploy event not put", "detail_type", aws.ToString(e.DetailType), "after", "retry")
		}
	}
	return put
}

// entryOf is e's entry, or why it cannot be put.
func entryOf(e Event) (ebtypes.PutEventsRequestEntry, error) {
	detail, err := e.Detail()
	if err != nil {
		return ebtypes.PutEventsRequestEntry{}, err
	}
	entry := ebtypes.PutEventsRequestEntry{Source: aws.String(Source), DetailType: aws.String(e.Kind.DetailType), Detail: aws.String(detail)}
	if n := Size(entry); n >= MaxEntrySize {
		return entry, &TooLargeError{Kind: e.Kind.Name, Size: n}
	}
	return entry, nil
}

// TooLargeError is an event whose entry is not less than MaxEntrySize.
type TooLargeError struct {
	Kind string
	Size int
}

func (e *TooLargeError) Error() string {
	return "the " + e.Kind + " entry is " + strconv.Itoa(e.Size) + " bytes, not less than PutEvents' " + strconv.Itoa(MaxEntrySize)
}

// batches splits entries, in order, into requests of at most
// MaxEntriesPerRequest entries and MaxEntrySize bytes.
func batches(entries []ebtypes.PutEventsRequestEntry) [][]ebtypes.PutEventsRequestEntry {
	var out [][]ebtypes.PutEventsRequestEntry
	var cur []ebtypes.PutEventsRequestEntry
	size := 0
	for _, e := range entries {
		n := Size(e)
		if len(cur) == MaxEntriesPerRequest || len(cur) > 0 && size+n >= MaxEntrySize {
			out, cur, size = append(out, cur), nil, 0
		}
		cur, size = append(cur, e), size+n
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// putBatch puts one request's entries and returns how many EventBridge
// accepted and those to put again: the entries the answer failed with a
// retryable code, in order. A call that fails whole is logged and
// returns none (the SDK's retryer has retried what it retries).
func putBatch(ctx context.Context, bus Bus, log *slog.Logger, batch []ebtypes.PutEventsRequestEntry) (int, []ebtypes.PutEventsRequestEntry) {
	out, err := bus.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: batch})
	if err != nil {
		log.Warn("deploy events not put", "entries", len(batch), "error", err.Error())
		return 0, nil
	}
	if out.FailedEntryCount == 0 {
		return len(batch), nil
	}
	var again []ebtypes.PutEventsRequestEntry
	for i, r := range out.Entries {
		code := aws.ToString(r.ErrorCode)
		if code == "" || i >= len(batch) {
			continue
		}
		if slices.Contains([]string{CodeInternalFailure, CodeThrottling}, code) {
			again = append(again, batch[i])
			continue
		}
		log.Warn("deploy event refused", "detail_type", aws.ToString(batch[i].DetailType), "error_code", code, "error", aws.ToString(r.ErrorMessage))
	}
	return len(batch) - int(out.FailedEntryCount), again
}
