package deployer

import (
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/naming/tags"
	"github.com/ferryhq/ferry/internal/pipeline"
	"github.com/ferryhq/ferry/internal/store/ledger"
	"github.com/ferryhq/ferry/internal/tuning"
)

// stagingAlarm is production's gate alarm, in staging.
const stagingAlarm = "coinbase-deploy-test-staging-errors"

// putStagingAlarm creates production's gate alarm in staging's account,
// tagged as staging's, not in ALARM (INSUFFICIENT_DATA: the simulation
// publishes no CPUUtilization without a group's dimension).
func (pr *promo) putStagingAlarm() {
	pr.putStagingAlarmOn("AWS/EC2", "CPUUtilization", 99)
}

// fireStagingAlarm creates production's gate alarm in staging's account
// on the simulated world's clock (its minutes since it started), in ALARM
// from its first evaluation, and lets that evaluation happen.
func (pr *promo) fireStagingAlarm() {
	pr.putStagingAlarmOn("ferry/sim", "WorldMinutes", 0)
	pr.h.clk.Advance(20 * time.Second)
}

// putStagingAlarmOn creates production's gate alarm in staging's account,
// tagged as staging's, on a metric above threshold.
func (pr *promo) putStagingAlarmOn(namespace, metric string, threshold float64) {
	_, err := pr.h.world.Clients(account, region).CloudWatch.PutMetricAlarm(pr.h.t.Context(), &cloudwatch.PutMetricAlarmInput{
		AlarmName: aws.String(stagingAlarm), Namespace: aws.String(namespace), MetricName: aws.String(metric),
		Statistic: cwtypes.StatisticAverage, Period: aws.Int32(10), EvaluationPeriods: aws.Int32(1), Threshold: aws.Float64(threshold),
		ComparisonOperator: cwtypes.ComparisonOperatorGreaterThanOrEqualToThreshold,
		Tags:               tags.CloudWatch(map[string]string{naming.TagProjectName: project, naming.TagConfigName: "staging"}),
	})
	require.NoError(pr.h.t, err)
}

// TestGate: Gate opens a stage once every gate of the pipeline holds
// (pipeline.Holds over what the deployer reads: the stage before's
// current records and swaps, its gate alarms as its deploy role session,
// the approval verified), asks for an approval once only that holds,
// else waits (at most the recheck, less when a soak ends sooner); a
// config of the stage without the pipeline registered holds it too.
func TestGate(t *testing.T) {
	for _, tt := range []struct {
		name    string
		prepare func(pr *promo, now time.Time)
		status  string   // the stage's status after Gate
		held    []string // what holds it, in order
		wait    int      // the wait asked, when it waits
	}{
		{"the first stage opens", func(*promo, time.Time) {}, ledger.PromotionDeploying, nil, 0},
		{"a config of the stage without the pipeline", func(pr *promo, now time.Time) {
			pr.atStage(1, now.Add(-time.Hour))
			require.NoError(t, pr.h.ledger.PutClientObject(t.Context(), naming.PipelineKey(project, "staging"), []byte(`{}`)))
		}, ledger.PromotionWaiting, []string{"config staging has another pipeline registered (coinbase/deploy-test/staging/_pipeline.json): a promotion deploys a config only through its registered pipeline"}, tuning.GateRecheckSeconds},
		{"staging soaking", func(pr *promo, now time.Time) { pr.atStage(1, now.Add(-10*time.Minute)) }, ledger.PromotionWaiting,
			[]string{"soak 30m: 20m left (counted from the stage before's last swap)"}, tuning.GateRecheckSeconds},
		{"staging's soak ends before the recheck", func(pr *promo, now time.Time) { pr.atStage(1, now.Add(-28*time.Minute)) }, ledger.PromotionWaiting,
			[]string{"soak 30m: 2m left (counted from the stage before's last swap)"}, 120},
		{"staging soaked", func(pr *promo, now time.Time) { pr.atStage(1, now.Add(-31*time.Minute)) }, ledger.PromotionDeploying, nil, 0},
		{"development runs another release", func(pr *promo, now time.Time) {
			pr.atStage(1, now.Add(-time.Hour))
			require.NoError(t, pr.h.ledger.PutCurrent(t.Context(), project, "development", ledger.Current{ReleaseID: "other", DeployedAt: now.Add(-time.Hour)}))
		}, ledger.PromotionWaiting, []string{"development does not run artifact " + "ARTIFACT" + " (every target of the stage before must run it)"}, tuning.GateRecheckSeconds},
		{"production, staging destroyed", func(pr *promo, now time.Time) {
			pr.atStage(2, now.Add(-2*time.Hour))
			pr.putStagingAlarm()
			require.NoError(t, pr.h.ledger.ClearCurrent(t.Context(), project, "staging"))
		}, ledger.PromotionWaiting, []string{"staging does not run artifact ARTIFACT (every target of the stage before must run it)",
			"alarm coinbase-deploy-test-staging-errors not read in staging", "the stage needs a person's approval: ferry pipeline approve"}, tuning.GateRecheckSeconds},
		{"production, its gate alarm in ALARM in staging", func(pr *promo, now time.Time) {
			pr.atStage(2, now.Add(-2*time.Hour))
			pr.fireStagingAlarm()
		}, ledger.PromotionWaiting, []string{"alarm coinbase-deploy-test-staging-errors is ALARM in staging",
			"the stage needs a person's approval: ferry pipeline approve"}, tuning.GateRecheckSeconds},
		{"production, staging runs another release while its gate alarm fires", func(pr *promo, now time.Time) {
			pr.atStage(2, now.Add(-2*time.Hour))
			pr.fireStagingAlarm()
			require.NoError(t, pr.h.ledger.PutCurrent(t.Context(), project, "staging", ledger.Current{ReleaseID: "other", DeployedAt: now.Add(-time.Hour)}))
		}, ledger.PromotionWaiting, []string{"staging does not run artifact ARTIFACT (every target of the stage before must run it)",
			"alarm coinbase-deploy-test-staging-errors is ALARM in staging", "the stage needs a person's approval: ferry pipeline approve"}, tuning.GateRecheckSeconds},
		{"production, its gate alarm missing in staging", func(pr *promo, now time.Time) { pr.atStage(2, now.Add(-2*time.Hour)) }, ledger.PromotionWaiting,
			[]string{"alarm coinbase-deploy-test-staging-errors is missing in staging", "the stage needs a person's approval: ferry pipeline approve"}, tuning.GateRecheckSeconds},
		{"production, only its approval holds", func(pr *promo, now time.Time) {
			pr.atStage(2, now.Add(-2*time.Hour))
			pr.putStagingAlarm()
		}, ledger.PromotionApproval, []string{"the stage needs a person's approval: ferry pipeline approve"}, 0},
		{"production, approved", func(pr *promo, now time.Time) {
			pr.atStage(2, now.Add(-2*time.Hour))
			pr.putStagingAlarm()
			pr.approve("production")
		}, ledger.PromotionDeploying, nil, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pr := newPromo(t).started()
			pr.serve(2) // development and staging serve the promotion's release
			now := pr.h.clk.Now()
			tt.prepare(pr, now)
			require.NoError(t, pr.task(execution.TaskGate))
			stage := pr.record().Stages[pr.st.Stage]
			assert.Equal(t, tt.status, stage.Status)
			for i, h := range tt.held {
				tt.held[i] = strings.ReplaceAll(h, "ARTIFACT", pr.record().Digest[:12])
			}
			assert.Equal(t, tt.held, stage.Held)
			require.NotNil(t, pr.st.Gate)
			assert.Equal(t, tt.held, pr.st.Gate.Held)
			assert.Equal(t, tt.status == ledger.PromotionDeploying, pr.st.Gate.Open)
			assert.Equal(t, tt.status == ledger.PromotionApproval, pr.st.Gate.Approval)
			assert.Equal(t, tt.wait, pr.st.Gate.WaitSeconds)
			if stage.ApprovedBy == "" {
				assert.False(t, stage.ApprovalVerified, "no approval, none verified")
				assert.True(t, stage.ApprovedAt.IsZero())
			}
			if tt.status == ledger.PromotionDeploying {
				assert.Len(t, pr.st.Targets, len(stage.Targets), "every target of the wave")
				assert.Equal(t, now, stage.ReleasedAt)
			}
		})
	}
}

// TestGateHalted: a halt marker of the promotion ends it at its next
// gate check, whatever holds the stage: halted (HaltError), the record
// saying so and by which marker.
func TestGateHalted(t *testing.T) {
	pr := newPromo(t).started()
	pr.atStage(1, epoch.Add(-10*time.Minute))
	pr.halt()
	err := pr.task(execution.TaskGate)
	var halted *failure.HaltError
	require.ErrorAs(t, err, &halted)
	rec := pr.record()
	assert.Equal(t, ledger.PromotionHalted, rec.Status)
	assert.Equal(t, ledger.PromotionHalted, rec.Stages[1].Status)
	assert.Equal(t, "halted by "+naming.PromotionHaltKey(project, "development", promotionID), rec.Why)
}

// TestGateWaitRoundsUp: a held stage waits whole seconds rounded up, so
// a soak with less than a second left never waits 0 s (Gate would check
// again at the same instant, before the soak ends, and on a clock that
// only moves when something waits, for ever); the recheck bounds the
// wait, as it did.
func TestGateWaitRoundsUp(t *testing.T) {
	soak := func(left time.Duration) []pipeline.Hold {
		return []pipeline.Hold{{Gate: pipeline.GateSoak, Left: left}}
	}
	for _, tc := range []struct {
		holds []pipeline.Hold
		want  int
	}{
		{soak(time.Millisecond), 1},
		{soak(1500 * time.Millisecond), 2},
		{soak(2 * time.Second), 2},
		{soak(time.Hour), tuning.GateRecheckSeconds},
		{[]pipeline.Hold{{Gate: pipeline.GateApproval}}, tuning.GateRecheckSeconds},
	} {
		assert.Equal(t, tc.want, waitSeconds(tc.holds), "%+v", tc.holds)
	}
}

// retag sets tags on the group name (CreateOrUpdateTags, Amazon EC2
// Auto Scaling API Reference: a tag of the same key is overwritten) and
// returns what puts their values back.
func retag(pr *promo, name string, tags map[string]string) (mend func()) {
	t := pr.h.t
	asg, ok := pr.h.world.Clients(account, region).AutoScaling.(*sim.AutoScaling)
	require.True(t, ok, "the simulated Auto Scaling tags groups")
	out, err := asg.DescribeAutoScalingGroups(t.Context(), &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{name}})
	require.NoError(t, err)
	require.Len(t, out.AutoScalingGroups, 1)
	var before, changed []asgtypes.Tag
	for _, d := range out.AutoScalingGroups[0].Tags {
		if v, ok := tags[aws.ToString(d.Key)]; ok {
			tag := asgtypes.Tag{Key: d.Key, Value: d.Value, PropagateAtLaunch: d.PropagateAtLaunch, ResourceId: aws.String(name), ResourceType: aws.String("auto-scaling-group")}
			before = append(before, tag)
			tag.Value = aws.String(v)
			changed = append(changed, tag)
		}
	}
	require.Len(t, changed, len(tags), "the group has every tag changed")
	set := func(tags []asgtypes.Tag) {
		_, err := asg.CreateOrUpdateTags(t.Context(), &autoscaling.CreateOrUpdateTagsInput{Tags: tags})
		require.NoError(t, err)
	}
	set(changed)
	return func() { set(before) }
}

// TestGateHoldsWhileTheStageBeforeDoesNotServe: the gate opens a stage
// only while the stage before still serves the promotion's release: each
// load balancer and target group its release names has a healthy
// instance of the release's groups, as the load balancer itself says
// (DescribeInstanceHealth, Elastic Load Balancing API Reference
// 2012-06-01; DescribeTargetHealth, Elastic Load Balancing API Reference
// version 2015-12-01). A group detached from one (DetachLoadBalancers,
// DetachLoadBalancerTargetGroups, Amazon EC2 Auto Scaling API Reference:
// its instances are deregistered) holds it, saying which, as long as it
// lasts; once attached again and its instances pass the load balancer's
// health checks, the gate opens. A group of the release's name that is
// not the release's (tagged with another release, or not tagged as made
// by ferry: ferry tags each group it makes) serves nothing of it: the
// gate holds until the group is the release's again. A read that fails, throttled or
// refused, holds it too (fails closed), without failing the promotion.
func TestGateHoldsWhileTheStageBeforeDoesNotServe(t *testing.T) {
	group := naming.GroupName(project, "development", "web", promotionID)
	for _, tt := range []struct {
		name  string
		spoil func(pr *promo) (mend func())
		held  string
	}{
		{"its group detached from its classic load balancer", func(pr *promo) func() {
			asg := pr.h.world.Clients(account, region).AutoScaling
			_, err := asg.DetachLoadBalancers(t.Context(), &autoscaling.DetachLoadBalancersInput{
				AutoScalingGroupName: aws.String(group), LoadBalancerNames: []string{"coinbase-deploy-test-web-elb"}})
			require.NoError(t, err)
			return func() {
				_, err := asg.AttachLoadBalancers(t.Context(), &autoscaling.AttachLoadBalancersInput{
					AutoScalingGroupName: aws.String(group), LoadBalancerNames: []string{"coinbase-deploy-test-web-elb"}})
				require.NoError(t, err)
			}
		}, "development: coinbase-deploy-test-web-elb has no healthy instance of release " + promotionID},
		{"its target group lost its healthy targets", func(pr *promo) func() {
			asg := pr.h.world.Clients(account, region).AutoScaling
			out, err := asg.DescribeAutoScalingGroups(t.Context(), &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{group}})
			require.NoError(t, err)
			require.Len(t, out.AutoScalingGroups, 1)
			arns := out.AutoScalingGroups[0].TargetGroupARNs
			require.Len(t, arns, 1)
			_, err = asg.DetachLoadBalancerTargetGroups(t.Context(), &autoscaling.DetachLoadBalancerTargetGroupsInput{
				AutoScalingGroupName: aws.String(group), TargetGroupARNs: arns})
			require.NoError(t, err)
			return func() {
				_, err := asg.AttachLoadBalancerTargetGroups(t.Context(), &autoscaling.AttachLoadBalancerTargetGroupsInput{
					AutoScalingGroupName: aws.String(group), TargetGroupARNs: arns})
				require.NoError(t, err)
			}
		}, "development: coinbase-deploy-test-web-tg has no healthy instance of release " + promotionID},
		{"its target health read throttled", func(pr *promo) func() {
			_, err := pr.h.world.Faults().Add(sim.Rule{Op: "DescribeTargetHealth", Err: sim.Throttling()})
			require.NoError(t, err)
			return pr.h.world.Faults().Clear
		}, "development: whether release " + promotionID + " serves healthily was not read (held until it is): Throttling: Rate exceeded"},
		{"its deploy role refused", func(pr *promo) func() { // a stage with gates but no alarms holds, it does not fail
			_, err := pr.h.world.Faults().Add(sim.Rule{Op: "AssumeRole", Err: sim.AccessDenied()})
			require.NoError(t, err)
			pr.h.clk.Advance(2 * time.Hour) // past the cached session's expiry: the gate assumes the role again
			return pr.h.world.Faults().Clear
		}, "development: whether release " + promotionID + " serves healthily was not read (held until it is): AccessDenied: User is not authorized to perform this action"},
		{"its group tagged with another release", func(pr *promo) func() {
			return retag(pr, group, map[string]string{naming.TagReleaseID: "other"})
		}, "development: service web has no group of release " + promotionID},
		{"its group of the release's name not made by ferry", func(pr *promo) func() {
			return retag(pr, group, map[string]string{naming.TagDeployWith: "another-deployer"})
		}, "development: service web has no group of release " + promotionID},
		{"its group deleted", func(pr *promo) func() {
			_, err := pr.h.world.Clients(account, region).AutoScaling.DeleteAutoScalingGroup(t.Context(), &autoscaling.DeleteAutoScalingGroupInput{
				AutoScalingGroupName: aws.String(group), ForceDelete: aws.Bool(true)})
			require.NoError(t, err)
			return nil
		}, "development: service web has no group of release " + promotionID},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pr := newPromo(t).started()
			pr.atStage(1, epoch.Add(-time.Hour)) // staging's soak is over
			mend := tt.spoil(pr)
			for range 3 { // as long as it lasts
				pr.h.clk.Advance(time.Duration(tuning.GateRecheckSeconds) * time.Second)
				require.NoError(t, pr.task(execution.TaskGate), "a stage before not serving holds the gate, it fails nothing")
				stage := pr.record().Stages[1]
				assert.Equal(t, ledger.PromotionWaiting, stage.Status)
				assert.Equal(t, []string{tt.held}, stage.Held, "one hold, the same at every check")
				assert.Equal(t, stage.Held, pr.st.Gate.Held)
				assert.False(t, pr.st.Gate.Open)
				assert.Equal(t, tuning.GateRecheckSeconds, pr.st.Gate.WaitSeconds)
			}
			if mend == nil {
				return
			}
			mend()
			for range 20 { // its instances pass the health checks again
				pr.h.clk.Advance(30 * time.Second)
				require.NoError(t, pr.task(execution.TaskGate))
				if pr.st.Gate.Open {
					break
				}
			}
			assert.True(t, pr.st.Gate.Open, "opens once the stage before serves again: %q", pr.st.Gate.Held)
			assert.Equal(t, ledger.PromotionDeploying, pr.record().Stages[1].Status)
		})
	}
}
