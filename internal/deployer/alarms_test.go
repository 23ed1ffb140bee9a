package deployer

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/naming/tags"
)

// putAlarm creates, as the team would, an alarm on the CPU of the group
// named group that goes to ALARM once its instances are in service
// (above 1 %), tagged with tagged.
func (h *harness) putAlarm(t *testing.T, name, group string, tagged map[string]string) {
	t.Helper()
	h.putAlarmAfter(t, name, group, tagged, 1)
}

// putAlarmAfter is putAlarm for an alarm that goes to ALARM only once the
// instances have been in service for minutes whole minutes.
func (h *harness) putAlarmAfter(t testing.TB, name, group string, tagged map[string]string, minutes int32) {
	t.Helper()
	_, err := h.world.Clients(account, region).CloudWatch.PutMetricAlarm(t.Context(), &cloudwatch.PutMetricAlarmInput{
		AlarmName: aws.String(name), Namespace: aws.String("AWS/EC2"), MetricName: aws.String("CPUUtilization"),
		Statistic:  cwtypes.StatisticAverage,
		Dimensions: []cwtypes.Dimension{{Name: aws.String("AutoScalingGroupName"), Value: aws.String(group)}},
		Period:     aws.Int32(60), EvaluationPeriods: aws.Int32(minutes), Threshold: aws.Float64(1),
		ComparisonOperator: cwtypes.ComparisonOperatorGreaterThanThreshold,
		Tags:               tags.CloudWatch(tagged),
	})
	require.NoError(t, err)
}

var projectTags = map[string]string{naming.TagProjectName: project, naming.TagConfigName: config}

// TestAlarmGateHalts: an alarm the release names that goes to ALARM while
// the release is judged halts it before the point of no return; the
// previous release keeps serving and nothing of the new one is left.
func TestAlarmGateHalts(t *testing.T) {
	h := newHarness(t)
	r1 := h.baseRelease()
	h.start(r1).succeed()
	r2 := h.baseRelease()
	r2.Alarms = []string{"deploy-test-errors"}
	// Three minutes of stability: the alarm's first whole minute of CPU
	// is published while the release is judged, however soon the checks
	// see its target.
	stable := 180
	r2.StableSeconds = &stable
	h.putAlarm(t, "deploy-test-errors", naming.GroupName(project, config, "web", r2.ReleaseID), projectTags)
	x := h.start(r2)
	require.NoError(t, x.steps(upToDeploy...))
	_, err := x.untilHealthy(200)
	var halt *failure.HaltError
	require.ErrorAs(t, err, &halt)
	assert.Equal(t, "alarm in ALARM: deploy-test-errors", halt.Reason)
	require.NoError(t, x.fail(err))
	for name, g := range h.groups() {
		if g.Tags[naming.TagReleaseID] == r2.ReleaseID {
			assert.Equal(t, "Delete in progress", g.Status, "%s of the halted release is being deleted", name)
			assert.Empty(t, g.Instances, "%s was deleted empty", name)
		}
	}
	previous := h.groups()[naming.GroupName(project, config, "web", r1.ReleaseID)]
	assert.Empty(t, previous.Status, "the previous release keeps serving")
	assert.NotEmpty(t, previous.Instances)
	assert.Zero(t, h.world.CutConnections())
}

// TestAlarmsMustBeTheProjectsOwn: a release may name only alarms that
// exist and are tagged with its project-config: every other is a problem
// at ValidateResources, nothing created.
func TestAlarmsMustBeTheProjectsOwn(t *testing.T) {
	h := newHarness(t)
	h.putAlarm(t, "someone-elses", "g", map[string]string{naming.TagProjectName: "acme/other", naming.TagConfigName: config})
	h.putAlarm(t, "ours", "g", projectTags)
	r := h.baseRelease()
	r.Alarms = []string{"ours", "nope"}
	r.Services["web"].Alarms = []string{"someone-elses"}
	x := h.start(r)
	err := x.steps(execution.TaskValidate, execution.TaskLock, execution.TaskValidateResources)
	var bad *failure.BadReleaseError
	require.ErrorAs(t, err, &bad)
	assert.ElementsMatch(t, []string{
		`alarms[1]: alarm "nope" not found`,
		`services.web.alarms[0]: alarm "someone-elses" is tagged ProjectName="acme/other", not "coinbase/deploy-test"`,
	}, bad.Problems)
}
