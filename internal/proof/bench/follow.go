package bench

import (
	"encoding/json"
	"fmt"
	"os"
)

// Follow is what following a deploy costs the follower's account: the
// client's TestFollowCost follows a real deploy on the local region, on
// its own timestamps, and writes this (go test ./client -run
// TestFollowCost -args -follow-cost FILE); the benchmark reads it
// (-follow FILE).
type Follow struct {
	// Polls are the follower's reads of new history; MeanBytes the mean
	// bytes one cost (GetExecutionHistory's answers as JSON).
	Polls     int `json:"polls"`
	MeanBytes int `json:"mean_bytes"`
	// MaxBytesInLoop is the most one poll cost while the deploy waited in
	// a loop (the health checks, the bake, the retirement); MaxBytes the
	// most any did (a poll across a phase's end reads the states since
	// its last report).
	MaxBytesInLoop int `json:"max_bytes_in_loop"`
	MaxBytes       int `json:"max_bytes"`
	// CallsPerSecondWaiting is the follower's GetExecutionHistory calls a
	// second while the execution waited.
	CallsPerSecondWaiting float64 `json:"calls_per_second_waiting"`
	// S10 and S50 are the same figures following the benchmark's deploy
	// of 10 and of 50 services (N=1) (nil: not measured); the figures
	// above are of a one-service deploy.
	S10 *Follow `json:"s10,omitempty"`
	S50 *Follow `json:"s50,omitempty"`
}

// ReadFollow reads a Follow written by the client's TestFollowCost.
func ReadFollow(file string) (*Follow, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("bench: the follow cost: %w (go test ./client -run TestFollowCost -args -follow-cost %s writes it)", err, file)
	}
	var f Follow
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("bench: the follow cost %s: %w", file, err)
	}
	return &f, nil
}

// Limits of follow_bytes_per_poll: GetExecutionHistory's budget is 20
// calls a second per account and region (Step Functions service quotas,
// a 400-call bucket refilled at 20 a second).
const (
	MaxFollowBytesPerPoll = 10 << 10
	MaxFollowCallsPerS    = 0.2
	FollowersInBudget     = 100
	HistoryCallsPerS      = 20.0
)

// followTarget is follow_bytes_per_poll.
func followTarget(f *Follow) Target {
	t := Target{Name: "follow_bytes_per_poll", Status: Skip,
		Want: fmt.Sprintf("<= %d bytes a poll and <= %g GetExecutionHistory calls a second while a deploy waits; %d followers within %g calls a second",
			MaxFollowBytesPerPoll, MaxFollowCallsPerS, FollowersInBudget, HistoryCallsPerS)}
	if f != nil {
		t.Measured = fmt.Sprintf("at most %d bytes a poll within a loop (%d across a phase's end, %d on average over %d polls), %.3f calls a second while waiting: %.1f a second for %d followers",
			f.MaxBytesInLoop, f.MaxBytes, f.MeanBytes, f.Polls, f.CallsPerSecondWaiting, FollowersInBudget*f.CallsPerSecondWaiting, FollowersInBudget)
		t.Status = status(f.MaxBytesInLoop <= MaxFollowBytesPerPoll && f.CallsPerSecondWaiting <= MaxFollowCallsPerS &&
			FollowersInBudget*f.CallsPerSecondWaiting <= HistoryCallsPerS)
	}
	return t
}

// followS50Target is follow_bytes_per_poll_s50: following a deploy of 50
// services, a poll while the deploy waits in a loop costs at most
// MaxFollowBytesPerPoll (a follower gets what changed, not the whole
// state).
func followS50Target(f *Follow) Target {
	t := Target{Name: "follow_bytes_per_poll_s50", Status: Skip,
		Want: fmt.Sprintf("<= %d bytes a poll while a deploy of 50 services waits", MaxFollowBytesPerPoll)}
	if f == nil || f.S50 == nil {
		return t
	}
	t.Measured = fmt.Sprintf("at most %d bytes a poll within a loop at S=50 (%d across a phase's end)", f.S50.MaxBytesInLoop, f.S50.MaxBytes)
	if f.S10 != nil {
		t.Measured += fmt.Sprintf("; at S=10 %d (%d)", f.S10.MaxBytesInLoop, f.S10.MaxBytes)
	}
	t.Measured += fmt.Sprintf("; at S=1 %d (%d)", f.MaxBytesInLoop, f.MaxBytes)
	t.Status = status(f.S50.MaxBytesInLoop <= MaxFollowBytesPerPoll)
	return t
}
