package sim_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/local/sim"
)

func entry(source, detailType, detail string) ebtypes.PutEventsRequestEntry {
	return ebtypes.PutEventsRequestEntry{Source: aws.String(source), DetailType: aws.String(detailType), Detail: aws.String(detail)}
}

// TestPutEventsRequestErrors: a request of no entry, of more than ten,
// or whose entries together reach 256 KB fails whole with
// ValidationException (Amazon EventBridge API Reference, PutEvents:
// Entries "Array Members: Minimum number of 1 item. Maximum number of 10
// items"; "the total entry size must be less than 256KB", EventBridge
// User Guide, Calculating PutEvents event entry size).
func TestPutEventsRequestErrors(t *testing.T) {
	f := newFixture(t)
	big := `{"x":"` + strings.Repeat("a", 130*1024) + `"}`
	for _, tc := range []struct {
		name    string
		entries []ebtypes.PutEventsRequestEntry
	}{
		{"none", nil},
		{"eleven", func() []ebtypes.PutEventsRequestEntry {
			var es []ebtypes.PutEventsRequestEntry
			for range 11 {
				es = append(es, entry("ferry", "T", `{}`))
			}
			return es
		}()},
		{"256 KB together", []ebtypes.PutEventsRequestEntry{entry("ferry", "T", big), entry("ferry", "T", big)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.c.EventBridge.PutEvents(f.ctx, &eventbridge.PutEventsInput{Entries: tc.entries})
			var apiErr smithy.APIError
			require.True(t, errors.As(err, &apiErr), "%v", err)
			assert.Equal(t, "ValidationException", apiErr.ErrorCode())
			assert.Empty(t, f.world.BusEvents(), "nothing of a refused request is kept")
		})
	}
}

// TestPutEventsEntryErrors: each entry is answered in the request's
// order; a bad one fails alone with its ErrorCode (InvalidArgument,
// MalformedDetail, ResourceNotFoundException for a bus that does not
// exist) and is counted in FailedEntryCount while the others are kept
// (API Reference, PutEvents, PutEventsResultEntry; EventBridge User
// Guide, Sending events with PutEvents: "Handling failures").
func TestPutEventsEntryErrors(t *testing.T) {
	f := newFixture(t)
	other := entry("ferry", "T", `{"n":4}`)
	other.EventBusName = aws.String("payments")
	out, err := f.c.EventBridge.PutEvents(f.ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{
		entry("ferry", "Release Started", `{"n":1}`),
		{Source: aws.String("ferry"), Detail: aws.String(`{}`)},
		entry("ferry", "T", `not json`),
		other,
		entry("ferry", strings.Repeat("T", 129), `{}`),
		entry("ferry", "Release Succeeded", `{"n":2}`),
	}})
	require.NoError(t, err)
	assert.Equal(t, int32(4), out.FailedEntryCount)
	var codes []string
	for _, r := range out.Entries {
		codes = append(codes, aws.ToString(r.ErrorCode))
	}
	assert.Equal(t, []string{"", "InvalidArgument", "MalformedDetail", "ResourceNotFoundException", "InvalidArgument", ""}, codes)
	assert.NotEmpty(t, aws.ToString(out.Entries[0].EventId))
	kept := f.world.BusEvents()
	require.Len(t, kept, 2)
	assert.Equal(t, "Release Started", kept[0].DetailType)
	assert.JSONEq(t, `{"n":2}`, string(kept[1].Detail))
	assert.Equal(t, deployer, kept[1].Account)
	assert.Equal(t, region, kept[1].Region)
	assert.Equal(t, start, kept[1].Time)
}

// TestPutEventsFailEntries: Faults.FailEntries fails the next entries
// with the codes given (the partial failures of PutEventsResultEntry),
// then entries pass again.
func TestPutEventsFailEntries(t *testing.T) {
	f := newFixture(t)
	f.world.Faults().FailEntries("ThrottlingException")
	out, err := f.c.EventBridge.PutEvents(f.ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{
		entry("ferry", "A", `{}`), entry("ferry", "B", `{}`)}})
	require.NoError(t, err)
	assert.Equal(t, int32(1), out.FailedEntryCount)
	assert.Equal(t, "ThrottlingException", aws.ToString(out.Entries[0].ErrorCode))
	require.Len(t, f.world.BusEvents(), 1)
	assert.Equal(t, "B", f.world.BusEvents()[0].DetailType)
}

// TestPutEventsThrottled: in a world that throttles, PutEvents takes its
// tokens from the account's PutEvents quota (EventBridge quotas:
// "PutEvents throttle limit in transactions per second", 10,000 in
// us-east-1): the call after the burst, at the same instant, is
// throttled and retried.
func TestPutEventsThrottled(t *testing.T) {
	f := newFixture(t, func(s *sim.WorldSpec) { s.Throttle = true })
	in := &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{entry("ferry", "A", `{}`)}}
	for range int(sim.EventBridgePutEvents.Burst) {
		_, err := f.c.EventBridge.PutEvents(f.ctx, in)
		require.NoError(t, err)
	}
	assert.Zero(t, f.world.Throttles().Retried["EventBridge:PutEvents"])
	_, err := f.c.EventBridge.PutEvents(f.ctx, in)
	require.NoError(t, err)
	assert.Equal(t, 1, f.world.Throttles().Retried["EventBridge:PutEvents"], "the call after the burst waits for a token")
}
