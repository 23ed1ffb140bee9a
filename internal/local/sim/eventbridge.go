package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/ferryhq/ferry/internal/cloud"
)

// EventBridge is the simulated EventBridge API of one account-region: its
// default event bus, which keeps every event put on it (World.BusEvents).
type EventBridge struct{ view }

var _ cloud.EventBridge = (*EventBridge)(nil)

const serviceEventBridge = "EventBridge"

// PutEvents' limits and error codes (Amazon EventBridge API Reference,
// PutEvents; EventBridge User Guide, "Calculating PutEvents event entry
// size").
const (
	putEventsMaxEntries   = 10
	putEventsMaxSize      = 256 * 1024
	putEventsMaxDetailTyp = 128
	codeValidation        = "ValidationException"
	codeInvalidArgument   = "InvalidArgument"
	codeMalformedDetail   = "MalformedDetail"
	codeEBAccessDenied    = "AccessDeniedException"
	codeEBNotFound        = "ResourceNotFoundException"
)

// BusEvent is an event on a default bus, as EventBridge delivers it to a
// rule's target (EventBridge User Guide, "Amazon EventBridge events").
type BusEvent struct {
	Version    string          `json:"version"`
	ID         string          `json:"id"`
	DetailType string          `json:"detail-type"`
	Source     string          `json:"source"`
	Account    string          `json:"account"`
	Time       time.Time       `json:"time"`
	Region     string          `json:"region"`
	Resources  []string        `json:"resources"`
	Detail     json.RawMessage `json:"detail"`
}

// defaultBusARN is the ARN of the default bus of an account-region.
func defaultBusARN(account, region string) string {
	return "arn:aws:events:" + region + ":" + account + ":event-bus/default"
}

// PutEvents puts entries on the default bus, in order, and answers each
// (API Reference, PutEvents): no entry, more than ten, or entries whose
// sizes together reach 256 KB fail the whole request with
// ValidationException; an entry without Source, DetailType or Detail, or
// with a DetailType over 128 characters, fails with InvalidArgument, one
// whose Detail is not a JSON object with MalformedDetail, one for another
// bus than the default with ResourceNotFoundException, and one the caller
// may not put (its source, its bus) with AccessDeniedException; the
// others are kept with an id. FailedEntryCount counts the failed ones.
// Faults.FailEntries fails the next entries with a code of its own.
func (c *EventBridge) PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, _ ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	const op = "PutEvents"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	if err := checkPutEvents(in.Entries); err != nil {
		return nil, c.end(op, err)
	}
	out := &eventbridge.PutEventsOutput{Entries: make([]ebtypes.PutEventsResultEntry, len(in.Entries))}
	for i, e := range in.Entries {
		code, msg := r.putEvent(e)
		if code != "" {
			out.Entries[i] = ebtypes.PutEventsResultEntry{ErrorCode: aws.String(code), ErrorMessage: aws.String(msg)}
			out.FailedEntryCount++
			continue
		}
		out.Entries[i] = ebtypes.PutEventsResultEntry{EventId: aws.String(r.bus[len(r.bus)-1].ID)}
	}
	return out, c.end(op, nil)
}

// checkPutEvents is the request's own validation: its number of entries
// and their size together.
func checkPutEvents(entries []ebtypes.PutEventsRequestEntry) error {
	if len(entries) == 0 || len(entries) > putEventsMaxEntries {
		return apiErrf(codeValidation, "1 validation error detected: Value at 'entries' failed to satisfy constraint: Member must have length less than or equal to %d and greater than or equal to 1", putEventsMaxEntries)
	}
	size := 0
	for _, e := range entries {
		size += entrySize(e)
	}
	if size >= putEventsMaxSize {
		return apiErr(codeValidation, "Total size of the entries in the request is over the limit.")
	}
	return nil
}

// entrySize is an entry's size as EventBridge counts it.
func entrySize(e ebtypes.PutEventsRequestEntry) int {
	n := len(deref(e.Source)) + len(deref(e.DetailType)) + len(deref(e.Detail))
	if e.Time != nil {
		n += 14
	}
	for _, res := range e.Resources {
		n += len(res)
	}
	return n
}

// putEvent keeps one entry on the region's default bus, or says why not
// (an entry error code and message). The caller holds w.mu.
func (r *region) putEvent(e ebtypes.PutEventsRequestEntry) (code, msg string) {
	w := r.w
	bus := defaultBusARN(r.account.id, r.name)
	if name := deref(e.EventBusName); name != "" && name != "default" && name != bus {
		bus = name
		if !strings.HasPrefix(name, "arn:") {
			bus = "arn:aws:events:" + r.name + ":" + r.account.id + ":event-bus/" + name
		}
	}
	auth := Auth{Action: "events:PutEvents", Resource: bus, Context: map[string][]string{
		"events:source": {deref(e.Source)}, "events:detail-type": {deref(e.DetailType)}}}
	if err := w.authorize(auth); err != nil {
		return codeEBAccessDenied, fmt.Sprintf("not authorized to put events with source %s on %s", deref(e.Source), bus)
	}
	if code, msg := w.faults.failEntry(); code != "" {
		return code, msg
	}
	if code, msg := checkEntry(e); code != "" {
		return code, msg
	}
	if bus != defaultBusARN(r.account.id, r.name) {
		return codeEBNotFound, "Event bus " + bus + " does not exist."
	}
	at := w.now
	if e.Time != nil {
		at = *e.Time
	}
	r.bus = append(r.bus, BusEvent{
		Version: "0", ID: w.newID("00000000-0000-0000-0000-", 12), DetailType: deref(e.DetailType), Source: deref(e.Source),
		Account: r.account.id, Time: at.UTC(), Region: r.name, Resources: append([]string{}, e.Resources...),
		Detail: json.RawMessage(deref(e.Detail)),
	})
	return "", ""
}

// checkEntry is an entry's own validation.
func checkEntry(e ebtypes.PutEventsRequestEntry) (code, msg string) {
	switch {
	case e.Source == nil || e.DetailType == nil || e.Detail == nil:
		return codeInvalidArgument, "Parameters Source, DetailType and Detail are required."
	case len(deref(e.DetailType)) > putEventsMaxDetailTyp:
		return codeInvalidArgument, "Parameter DetailType is not valid: longer than 128 characters."
	case entrySize(e) >= putEventsMaxSize:
		return codeInvalidArgument, "Event size exceeded 256 KB."
	}
	var v map[string]json.RawMessage
	if err := json.Unmarshal([]byte(deref(e.Detail)), &v); err != nil || v == nil {
		return codeMalformedDetail, "Detail is malformed."
	}
	return "", ""
}

// BusEvents returns every event put on a default bus of the world, in the
// order they were put.
func (w *World) BusEvents() []BusEvent {
	w.mu.Lock()
	defer w.mu.Unlock()
	all := []BusEvent{}
	for _, a := range w.accounts {
		for _, r := range a.regions {
			all = append(all, r.bus...)
		}
	}
	slices.SortStableFunc(all, func(a, b BusEvent) int { return strings.Compare(a.ID, b.ID) })
	return all
}
