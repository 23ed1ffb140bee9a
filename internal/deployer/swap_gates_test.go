package deployer

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/naming/tags"
	"github.com/ferryhq/ferry/internal/tuning"
)

// putClockAlarm creates or replaces, as the team would, an alarm on the
// simulated world's clock (its minutes since it started) that is in
// ALARM once they reach threshold: a firing the test times exactly.
// Tags are set when it is created (PutMetricAlarm, CloudWatch API
// Reference: "tags ... are ignored" when an alarm is updated).
func (h *harness) putClockAlarm(t *testing.T, name string, threshold float64) {
	t.Helper()
	_, err := h.world.Clients(account, region).CloudWatch.PutMetricAlarm(t.Context(), &cloudwatch.PutMetricAlarmInput{
		AlarmName: aws.String(name), Namespace: aws.String("ferry/sim"), MetricName: aws.String("WorldMinutes"),
		Statistic: cwtypes.StatisticMaximum, Period: aws.Int32(10), EvaluationPeriods: aws.Int32(1),
		Threshold: aws.Float64(threshold), ComparisonOperator: cwtypes.ComparisonOperatorGreaterThanOrEqualToThreshold,
		Tags: tags.CloudWatch(projectTags),
	})
	require.NoError(t, err)
}

// assertSwapRefused checks that the swap failed before its point of no
// return with a HaltError saying reason: nothing recorded for deletion,
// and the previous release still serving, its group whole.
func assertSwapRefused(t *testing.T, h *harness, x *run, prevID string, err error, reason string) {
	t.Helper()
	var halt *failure.HaltError
	require.ErrorAs(t, err, &halt)
	assert.Contains(t, halt.Reason, reason)
	_, found, gerr := h.ledger.GetDeleting(t.Context(), project, config, x.state.ReleaseID)
	require.NoError(t, gerr)
	assert.False(t, found, "the swap recorded no group to retire: it is before its point of no return")
	prev := h.groups()[naming.GroupName(project, config, "web", prevID)]
	attached, inService := serving(prev)
	assert.Empty(t, prev.Status, "the previous group stands")
	assert.True(t, attached, "the previous group serves")
	assert.Equal(t, 2, inService)
	require.NoError(t, x.fail(err))
	attached, _ = serving(h.groups()[naming.GroupName(project, config, "web", prevID)])
	assert.True(t, attached, "the previous release serves on after the clean-up")
}

// TestSwapRefusedWhileAnAlarmFires: an alarm the release names goes to
// ALARM after the release was found healthy, before the swap: the swap
// checks the alarms again and halts; the previous fleet is never
// retired.
func TestSwapRefusedWhileAnAlarmFires(t *testing.T) {
	h := newHarness(t)
	h.putClockAlarm(t, "deploy-test-errors", 1e6) // OK: the world is younger
	r1, r2 := h.baseRelease(), h.baseRelease()
	r2.Alarms = []string{"deploy-test-errors"}
	x := h.atSwap(r1, r2)
	h.putClockAlarm(t, "deploy-test-errors", 0) // ALARM at its next evaluation
	h.clk.Advance(20 * time.Second)
	err := x.step(execution.TaskCleanUpSuccess)
	assertSwapRefused(t, h, x, r1.ReleaseID, err, "alarm in ALARM: deploy-test-errors")
}

// TestSwapRefusedWhileTheErrorRateIsAboveMax: the new fleet's 5xx share
// of the traffic grows as it serves a larger part of the error-rate
// window (at the healthy check about 9% of all requests, the previous
// fleet's error-free ones counted too; two minutes later 24%): a service
// whose max_error_rate (15%) passed the health check but not the swap
// halts at the swap; the previous fleet is never retired.
func TestSwapRefusedWhileTheErrorRateIsAboveMax(t *testing.T) {
	h := newHarness(t, withErrors(40))
	r1, r2 := h.baseRelease(), h.baseRelease()
	r2.AMI = "ubuntu-errors"
	limit := 0.15
	r2.Services["web"].MaxErrorRate = &limit
	x := h.atSwap(r1, r2)
	h.clk.Advance(tuning.ErrorRateWindow)
	err := x.step(execution.TaskCleanUpSuccess)
	assertSwapRefused(t, h, x, r1.ReleaseID, err, "more than its max_error_rate of 15%")
	assert.Regexp(t, `answered 2[0-9]\.[0-9]% of [0-9]+ requests with a 5xx`, err.Error(), "the rate it saw, in percent")
}

// TestSwapRefusedWhenAnAlarmIsGone: an alarm the release names is
// deleted after the release was found healthy, before the swap: an alarm
// the gate cannot read never passes (DeleteAlarms, CloudWatch API
// Reference; DescribeAlarms leaves out a name it does not have), so the
// swap halts, naming it; the previous fleet is never retired.
func TestSwapRefusedWhenAnAlarmIsGone(t *testing.T) {
	h := newHarness(t)
	h.putClockAlarm(t, "deploy-test-errors", 1e6) // OK: the world is younger
	r1, r2 := h.baseRelease(), h.baseRelease()
	r2.Alarms = []string{"deploy-test-errors"}
	x := h.atSwap(r1, r2)
	_, err := h.world.Clients(account, region).CloudWatch.DeleteAlarms(t.Context(), &cloudwatch.DeleteAlarmsInput{AlarmNames: []string{"deploy-test-errors"}})
	require.NoError(t, err)
	err = x.step(execution.TaskCleanUpSuccess)
	assertSwapRefused(t, h, x, r1.ReleaseID, err, "alarm no longer exists (the gate fails closed): deploy-test-errors")
}
