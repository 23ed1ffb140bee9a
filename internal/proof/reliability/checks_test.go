package reliability

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
)

// TestPastNoReturn: a fault counts as past CleanUpSuccess's point of no
// return when the deleting record exists, or when the S3 call it failed
// was the read of that record. The call it failed is the one it hit
// (Result.S3Hits): an earlier fault that changed the calls before it
// moves it from the base run's call at its place, both ways. A fault in
// CleanUpFailure or ReleaseLock always counts.
func TestPastNoReturn(t *testing.T) {
	rel := &release.Release{ProjectName: "acme/shop", ConfigName: "production", ReleaseID: "r2"}
	deleting := naming.DeletingKey(rel.ProjectName, rel.ConfigName, rel.ReleaseID)
	turn := "_state/_turns/111111111111/us-east-1/x"
	s3 := func(key string) Fault { return Fault{Call: Call{S3: true, Op: "GetObject", Key: key}} }
	r := &run{next: &prepared{rel: rel}}
	for _, tc := range []struct {
		name    string
		task    string
		planned Fault
		hit     string
		objects map[string]string
		want    bool
	}{
		{"the deleting read, as planned", execution.TaskCleanUpSuccess, s3(deleting), "GetObject " + deleting, nil, true},
		{"moved onto the deleting read", execution.TaskCleanUpSuccess, s3(turn), "GetObject " + deleting, nil, true},
		{"moved off the deleting read", execution.TaskCleanUpSuccess, s3(deleting), "PutObject " + turn, nil, false},
		{"another read, the record not there", execution.TaskCleanUpSuccess, s3(turn), "PutObject " + turn, nil, false},
		{"another read, the record there", execution.TaskCleanUpSuccess, s3(turn), "PutObject " + turn, map[string]string{deleting: "{}"}, true},
		{"an AWS fault, as planned", execution.TaskCleanUpSuccess, Fault{Call: Call{Op: "DescribeAutoScalingGroups"}}, "", nil, false},
		{"a clean-up of a failure", execution.TaskCleanUpFailure, s3(turn), "PutObject " + turn, nil, true},
		{"before the clean-up", execution.TaskDeploy, s3(deleting), "GetObject " + deleting, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := &Result{Schedule: Schedule{Faults: []Fault{tc.planned}}, FiredTasks: []string{tc.task}, S3Hits: []string{tc.hit}, Objects: tc.objects}
			assert.Equal(t, tc.want, r.pastNoReturn(res))
		})
	}
}
