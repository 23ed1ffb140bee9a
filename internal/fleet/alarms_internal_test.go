package fleet

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/local/sim"
)

// TestDeleteAlarmsFallsBackOneByOne: CloudWatch's DeleteAlarms fails the
// whole call (ResourceNotFound) when one name is missing; the alarms that
// exist are then deleted one at a time and the missing one counts as gone.
func TestDeleteAlarmsFallsBackOneByOne(t *testing.T) {
	spec, err := sim.Load(filepath.Join("..", "..", "testdata", "worlds", "deploy-test.json"))
	require.NoError(t, err)
	w, err := sim.New(clock.NewVirtual(time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)), spec)
	require.NoError(t, err)
	c := w.Clients("111111111111", "us-east-1")
	ctx := t.Context()
	for _, name := range []string{"a", "b"} {
		_, err := c.CloudWatch.PutMetricAlarm(ctx, &cloudwatch.PutMetricAlarmInput{
			AlarmName: aws.String(name), Namespace: aws.String("AWS/EC2"), MetricName: aws.String("CPUUtilization"),
			Statistic: cwtypes.StatisticAverage, Period: aws.Int32(60), EvaluationPeriods: aws.Int32(1), Threshold: aws.Float64(1),
			ComparisonOperator: cwtypes.ComparisonOperatorGreaterThanThreshold,
		})
		require.NoError(t, err)
	}
	require.NoError(t, deleteAlarms(ctx, c.CloudWatch, []string{"a", "no-such-alarm", "b"}))
	out, err := c.CloudWatch.DescribeAlarms(ctx, &cloudwatch.DescribeAlarmsInput{})
	require.NoError(t, err)
	assert.Empty(t, out.MetricAlarms)
}

// TestDeleteAlarmsOneByOneDeletesEvery: when the batch call answers
// ResourceNotFound having deleted nothing (DeleteAlarms, CloudWatch API
// Reference: the call fails as a whole), every alarm of the batch is then
// deleted, not only the first.
func TestDeleteAlarmsOneByOneDeletesEvery(t *testing.T) {
	spec, err := sim.Load(filepath.Join("..", "..", "testdata", "worlds", "deploy-test.json"))
	require.NoError(t, err)
	w, err := sim.New(clock.NewVirtual(time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)), spec)
	require.NoError(t, err)
	c := w.Clients("111111111111", "us-east-1")
	ctx := t.Context()
	names := []string{"a", "b", "c"}
	for _, name := range names {
		_, err := c.CloudWatch.PutMetricAlarm(ctx, &cloudwatch.PutMetricAlarmInput{
			AlarmName: aws.String(name), Namespace: aws.String("AWS/EC2"), MetricName: aws.String("CPUUtilization"),
			Statistic: cwtypes.StatisticAverage, Period: aws.Int32(60), EvaluationPeriods: aws.Int32(1), Threshold: aws.Float64(1),
			ComparisonOperator: cwtypes.ComparisonOperatorGreaterThanThreshold,
		})
		require.NoError(t, err)
	}
	_, err = w.Faults().Add(sim.Rule{Op: "DeleteAlarms", Nth: 1, Err: &smithy.GenericAPIError{Code: "ResourceNotFound", Message: "Alarm x does not exist"}})
	require.NoError(t, err)
	require.NoError(t, deleteAlarms(ctx, c.CloudWatch, names))
	out, err := c.CloudWatch.DescribeAlarms(ctx, &cloudwatch.DescribeAlarmsInput{})
	require.NoError(t, err)
	assert.Empty(t, out.MetricAlarms)
}
