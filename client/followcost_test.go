package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/local/region"
	"github.com/ferryhq/ferry/internal/proof/bench"
)

// timedHistory replays a recorded history as Step Functions would serve
// it while the execution ran: at now, the events stamped by then, newest
// first or oldest first, with or without execution data, a page at a
// time. It counts what each read costs: calls, and the bytes of the
// answer as JSON (the SDK's output marshalled, within a few percent of
// the wire's).
type timedHistory struct {
	stepFunctions
	events []sfntypes.HistoryEvent
	now    time.Time

	calls, bytes int
	// waitingCalls are the calls made while the last event by then
	// entered a Wait state.
	waitingCalls int
}

func (h *timedHistory) visible() []sfntypes.HistoryEvent {
	n := 0
	for n < len(h.events) && !aws.ToTime(h.events[n].Timestamp).After(h.now) {
		n++
	}
	return h.events[:n]
}

func (h *timedHistory) GetExecutionHistory(_ context.Context, in *sfn.GetExecutionHistoryInput, _ ...func(*sfn.Options)) (*sfn.GetExecutionHistoryOutput, error) {
	visible := slices.Clone(h.visible())
	h.calls++
	if len(visible) > 0 && visible[len(visible)-1].Type == sfntypes.HistoryEventTypeWaitStateEntered {
		h.waitingCalls++
	}
	if in.ReverseOrder {
		slices.Reverse(visible)
	}
	from := 0
	if in.NextToken != nil {
		from, _ = strconv.Atoi(aws.ToString(in.NextToken))
	}
	size := int(in.MaxResults)
	if size <= 0 {
		size = 100
	}
	to := min(from+size, len(visible))
	page := slices.Clone(visible[from:to])
	if !aws.ToBool(in.IncludeExecutionData) {
		for i := range page {
			page[i] = withoutExecutionData(page[i])
		}
	}
	out := &sfn.GetExecutionHistoryOutput{Events: page}
	if to < len(visible) {
		out.NextToken = aws.String(strconv.Itoa(to))
	}
	n, err := wireBytes(out.Events)
	if err != nil {
		return nil, err
	}
	h.bytes += n
	return out, nil
}

// wireBytes is the size of events as JSON without their empty fields, as
// Step Functions' answer leaves them out (the SDK's types marshal every
// one of their dozens of details as null).
func wireBytes(events []sfntypes.HistoryEvent) (int, error) {
	raw, err := json.Marshal(events)
	if err != nil {
		return 0, err
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return 0, err
	}
	b, err := json.Marshal(pruned(v))
	return len(b), err
}

func pruned(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if e == nil {
				continue
			}
			out[k] = pruned(e)
		}
		return out
	case []any:
		for i := range x {
			x[i] = pruned(x[i])
		}
	}
	return v
}

// withoutExecutionData is ev without its inputs and outputs, as
// GetExecutionHistory with includeExecutionData false answers.
func withoutExecutionData(ev sfntypes.HistoryEvent) sfntypes.HistoryEvent {
	if d := ev.StateEnteredEventDetails; d != nil {
		c := *d
		c.Input = nil
		ev.StateEnteredEventDetails = &c
	}
	if d := ev.StateExitedEventDetails; d != nil {
		c := *d
		c.Output = nil
		ev.StateExitedEventDetails = &c
	}
	if d := ev.LambdaFunctionScheduledEventDetails; d != nil {
		c := *d
		c.Input = nil
		ev.LambdaFunctionScheduledEventDetails = &c
	}
	if d := ev.LambdaFunctionSucceededEventDetails; d != nil {
		c := *d
		c.Output = nil
		ev.LambdaFunctionSucceededEventDetails = &c
	}
	if d := ev.ExecutionStartedEventDetails; d != nil {
		c := *d
		c.Input = nil
		ev.ExecutionStartedEventDetails = &c
	}
	if d := ev.ExecutionSucceededEventDetails; d != nil {
		c := *d
		c.Output = nil
		ev.ExecutionSucceededEventDetails = &c
	}
	return ev
}

// followCost is where TestFollowCost writes what it measured, for make
// bench (bench.Follow).
var followCost = flag.String("follow-cost", "", "write TestFollowCost's figures (bench.Follow, JSON) to this file")

// TestFollowCost follows real deploys (a release replacing another on the
// local region) as they ran (followCostOf): the one-service deploy's, where
// a poll while the deploy waits in a loop costs at most 10 KB and one
// across the end of a phase at most 32 KB, and the benchmark's of 10 and
// 50 services, where a poll in a loop costs at most 10 KB too, figures
// make bench judges (follow_bytes_per_poll_s50).
func TestFollowCost(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	require.Equal(t, exitOK, tr.ferry(t, "deploy", "--local", deployTestRelease).code)
	second := tr.ferry(t, "deploy", "--local", demoV2)
	require.Equal(t, exitOK, second.code, second.stderr)
	f := followCostOf(t, tr)
	assert.LessOrEqual(t, f.MaxBytesInLoop, bench.MaxFollowBytesPerPoll, "at most 10 KB a poll while the deploy waits in a loop")
	assert.LessOrEqual(t, f.MaxBytes, 32<<10, "a poll across the end of a phase reads the states since its last report")
	f.S10, f.S50 = benchFollowCost(t, 10), benchFollowCost(t, 50)
	for _, g := range []*bench.Follow{f.S10, f.S50} {
		assert.LessOrEqual(t, g.MaxBytesInLoop, bench.MaxFollowBytesPerPoll, "at most 10 KB a poll while a deploy of many services waits: what changed, not every round's events nor the whole state")
	}
	if *followCost != "" {
		data, err := json.MarshalIndent(f, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(*followCost, append(data, '\n'), 0o644))
	}
}

// benchFollowCost is the follow cost of the benchmark's deploy of
// services services of one instance (the second release of the cell
// replacing the first). The bench judges it (follow_bytes_per_poll_s50):
// each poll that reads a loop's newest report reads the whole state, which
// grows with the services.
func benchFollowCost(t *testing.T, services int) *bench.Follow {
	c := bench.Cell{Services: services, Instances: 1}
	world := bench.World(c)
	// What a follower reads does not depend on AWS throttling the
	// deployer; under the simulator's throttle model CleanUpSuccess at
	// S=50 runs out of retries, which the benchmark's grid measures.
	world.Throttle = false
	tr := startRegion(t, "deploy-test.json", func(o *region.Options) { o.World = world })
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, bench.AssetFile), bench.AssetContent, 0o600))
	for v := 1; v <= 2; v++ {
		raw, err := bench.ReleaseFile(c, v)
		require.NoError(t, err)
		file := filepath.Join(dir, fmt.Sprintf("release-%d.json", v))
		require.NoError(t, os.WriteFile(file, raw, 0o600))
		res := tr.ferry(t, "deploy", "--local", file)
		require.Equal(t, exitOK, res.code, res.stdout+res.stderr)
	}
	f := followCostOf(t, tr)
	return &f
}

// followCostOf follows the region's newest deploy as it ran, on its own
// timestamps, and returns what it cost: every read is of the new events,
// without execution data but for the newest report of each loop; while
// the deploy waits the follower reads at most 0.2 times a second, so 100
// followers fit in an account's GetExecutionHistory budget (20 a
// second); read at once, the history shows what a follower of the whole
// history with data shows but the reports a newer one of their loop
// replaced.
func followCostOf(t *testing.T, tr *testRegion) bench.Follow {
	t.Helper()
	arn := tr.Executions("")[0].ARN()
	var events []sfntypes.HistoryEvent
	in := &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn), IncludeExecutionData: aws.Bool(true)}
	for {
		out, err := tr.SFN().GetExecutionHistory(context.Background(), in)
		require.NoError(t, err)
		events = append(events, out.Events...)
		if out.NextToken == nil {
			break
		}
		in.NextToken = out.NextToken
	}
	require.NotEmpty(t, events)

	// A poll is within a loop when the events it read entered no task
	// but the loop's own, nor the wait of another loop, and did not end
	// the execution: the deploy waits between its checks (or its bake's,
	// or its retirement's steps, or Deploy's rounds). A poll that reads
	// Deploy's last round and the health checks' first wait is across the
	// end of a phase, as is the one that reads the execution's end.
	h := &timedHistory{events: events, now: aws.ToTime(events[0].Timestamp)}
	var polls, inLoop []int
	last, seen := 0, 0
	poll := func() {
		n := h.bytes - last
		polls = append(polls, n)
		tasks, ended := map[string]bool{}, false
		for _, ev := range h.visible()[seen:] {
			if ev.Type == sfntypes.HistoryEventTypeTaskStateEntered {
				tasks[enteredName(ev)] = true
			}
			if task, ok := waitReports[enteredName(ev)]; ok && ev.Type == sfntypes.HistoryEventTypeWaitStateEntered {
				tasks[task] = true
			}
			_, _, _, failed := executionFailure(ev)
			ended = ended || failed || ev.Type == sfntypes.HistoryEventTypeExecutionSucceeded
		}
		if len(tasks) <= 1 && seen > 0 && !ended {
			inLoop = append(inLoop, n)
		}
		last, seen = h.bytes, len(h.visible())
	}
	u, err := followExecution(context.Background(), h, arn, &display{w: io.Discard, mode: modePlain}, followOptions{
		Interval: defaultPollInterval, Waiting: waitingFollowInterval,
		Sleep: func(_ context.Context, d time.Duration) error {
			poll()
			h.now = h.now.Add(d)
			return nil
		},
		Now: func(context.Context) (time.Time, error) { return h.now, nil },
	})
	require.NoError(t, err)
	poll()
	assert.Equal(t, "Success", u.End)

	waited := time.Duration(0)
	for i := 1; i < len(events); i++ {
		if events[i-1].Type == sfntypes.HistoryEventTypeWaitStateEntered {
			waited += aws.ToTime(events[i].Timestamp).Sub(aws.ToTime(events[i-1].Timestamp))
		}
	}
	require.Positive(t, waited)
	rate := float64(h.waitingCalls) / waited.Seconds()
	t.Logf("follow cost: %d polls, %d calls, %d bytes in all (mean %d a poll); within a loop at most %d bytes a poll, across a phase's end at most %d; %d calls in %v of waiting: %.3f a second",
		len(polls), h.calls, h.bytes, h.bytes/len(polls), slices.Max(inLoop), slices.Max(polls), h.waitingCalls, waited, rate)
	assert.LessOrEqual(t, rate, bench.MaxFollowCallsPerS, "at most 0.2 reads a second while the execution waits")
	assert.LessOrEqual(t, bench.FollowersInBudget*rate, bench.HistoryCallsPerS, "100 followers fit in GetExecutionHistory's 20 a second")

	// Read at once, the history shows every report of a follower of the
	// whole history with data but the health checks before the newest.
	var rd historyReader
	h2 := &timedHistory{events: events, now: aws.ToTime(events[len(events)-1].Timestamp)}
	all, err := historySince(context.Background(), h2, arn, mark{}, 0)
	require.NoError(t, err)
	notHealth := func(us []progress) []progress {
		return slices.DeleteFunc(slices.Clone(us), func(u progress) bool { return u.Event == updateHealth })
	}
	assert.Equal(t, notHealth(renderHistory(events)), notHealth(rd.read(all)))
	return bench.Follow{Polls: len(polls), MeanBytes: h.bytes / len(polls), MaxBytesInLoop: slices.Max(inLoop),
		MaxBytes: slices.Max(polls), CallsPerSecondWaiting: math.Round(rate*1000) / 1000}
}
