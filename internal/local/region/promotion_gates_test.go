package region

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/naming/tags"
	"github.com/ferryhq/ferry/internal/store/ledger"
	"github.com/ferryhq/ferry/internal/tuning"
	"github.com/ferryhq/ferry/statemachine/shape"
)

// The gate scenarios: production's gates (testdata/pipelines/deploy-test.json)
// hold it while something is wrong in staging, the stage before. Each
// promotion is halted once production's soak is over and the gate still
// holds; a gate that let it through would ask for the approval instead,
// which fails the test at once.

// haltWhenOnlyHeld is an observer that writes the promotion's halt
// marker the first time production waits with its soak over: what still
// holds it is what the test is about.
func haltWhenOnlyHeld(r *Region, _ string, ev asl.Event) {
	if ev.StateEntered == nil || ev.StateEntered.Name != shape.StateWaitForGate {
		return
	}
	ctx := context.Background()
	rec, found, err := ledger.New(r.S3(), r.Bucket()).GetPromotion(ctx, testProject, "development", promotionID)
	if err != nil || !found || rec.Stages[2].Status != ledger.PromotionWaiting ||
		slices.ContainsFunc(rec.Stages[2].Held, func(h string) bool { return strings.HasPrefix(h, "soak ") }) {
		return
	}
	_, _ = r.S3().PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(r.Bucket()),
		Key: aws.String(naming.PromotionHaltKey(testProject, "development", promotionID)), Body: bytes.NewReader(nil)})
}

// heldUntilHalted runs the promotion to its end and checks that it was
// halted, production held (waiting, never asked for an approval, never
// deployed) by a reason containing want.
func heldUntilHalted(t *testing.T, pr *promotion, x *asl.Execution, want string) {
	t.Helper()
	done := make(chan asl.Description, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		_ = x.Wait(ctx)
		done <- x.Describe()
	}()
	select {
	case resume := <-pr.approval:
		pr.put(t, naming.PromotionHaltKey(testProject, "development", promotionID), nil)
		require.NoError(t, pr.r.SendTaskFailure(pr.token(t, 2), "ferry.Halted", "the test is over"))
		resume()
		<-done
		t.Fatalf("production asked for its approval: nothing held it (want %q)", want)
	case d := <-done:
		assert.Equal(t, "HaltError", d.Error, d.Cause)
	}
	rec := pr.record(t)
	assert.Equal(t, ledger.PromotionSucceeded, rec.Stages[1].Status, "staging succeeded")
	assert.Equal(t, ledger.PromotionHalted, rec.Stages[2].Status)
	assert.True(t, slices.ContainsFunc(rec.Stages[2].Held, func(h string) bool { return strings.Contains(h, want) }),
		"production held by %q: %q", want, rec.Stages[2].Held)
	assert.Empty(t, pr.current(t, "production-use1"))
	assert.Empty(t, pr.current(t, "production-euw1"))
}

// TestPromotionHeldByAFiringGateAlarm: production's gate alarm is in
// ALARM in staging (an alarm on a metric always above its threshold:
// the world's minutes): production waits, its soak over, and is never
// deployed.
func TestPromotionHeldByAFiringGateAlarm(t *testing.T) {
	pr := newPromotion(t, haltWhenOnlyHeld)
	pr.register(t, pr.configs()...)
	_, err := pr.r.World().Clients("111111111111", "us-east-1").CloudWatch.PutMetricAlarm(context.Background(), &cloudwatch.PutMetricAlarmInput{
		AlarmName: aws.String("coinbase-deploy-test-staging-errors"), Namespace: aws.String("ferry/sim"), MetricName: aws.String("WorldMinutes"),
		Statistic: cwtypes.StatisticMaximum, Period: aws.Int32(10), EvaluationPeriods: aws.Int32(1), Threshold: aws.Float64(0),
		ComparisonOperator: cwtypes.ComparisonOperatorGreaterThanOrEqualToThreshold,
		Tags:               tags.CloudWatch(map[string]string{naming.TagProjectName: testProject, naming.TagConfigName: "staging"}),
	})
	require.NoError(t, err)
	heldUntilHalted(t, pr, pr.start(t), "alarm coinbase-deploy-test-staging-errors is ALARM in staging")
}

// TestPromotionHeldByAMissingGateAlarm: production's gate alarm does not
// exist in staging: a gate that cannot be read holds (fails closed).
//
// While the soak runs it says how long is left, checked again every
// tuning.GateRecheckSeconds (so a halt is read within one); once only the
// alarm holds, the gate is checked again as often.
func TestPromotionHeldByAMissingGateAlarm(t *testing.T) {
	var soak string
	var waits []int
	soaks := 0
	pr := newPromotion(t, func(r *Region, arn string, ev asl.Event) {
		if ev.StateEntered == nil || ev.StateEntered.Name != shape.StateWaitForGate {
			return
		}
		var st execution.Promotion
		if json.Unmarshal([]byte(ev.StateEntered.Input), &st) == nil && st.Stage == 2 && st.Gate != nil {
			for _, h := range st.Gate.Held {
				if strings.HasPrefix(h, "soak ") {
					soak, soaks = cmp.Or(soak, h), soaks+1
				}
			}
			if !slices.ContainsFunc(st.Gate.Held, func(h string) bool { return strings.HasPrefix(h, "soak ") }) {
				waits = append(waits, st.Gate.WaitSeconds)
			}
		}
		haltWhenOnlyHeld(r, arn, ev)
	})
	pr.register(t, pr.configs()...)
	heldUntilHalted(t, pr, pr.start(t), "alarm coinbase-deploy-test-staging-errors is missing in staging")
	assert.Equal(t, 3600/tuning.GateRecheckSeconds, soaks, "held by the soak in waits of the recheck interval (a halt is read within one), the last ending at its end")
	assert.Regexp(t, `^soak 1h: [0-9hms]+ left \(counted from the stage before's last swap\)$`, soak)
	require.NotEmpty(t, waits)
	assert.Equal(t, tuning.GateRecheckSeconds, waits[0], "checked again after the recheck interval")
}

// TestPromotionHeldWhenTheStageBeforeChanged: staging succeeded, then its
// current record went (as a destroy deletes it), or names another
// release (one deployed since): production, whose stage before no longer
// runs the promotion's release, is held.
func TestPromotionHeldWhenTheStageBeforeChanged(t *testing.T) {
	for name, change := range map[string]func(r *Region) error{
		"destroyed": func(r *Region) error {
			_, err := r.S3().DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: aws.String(r.Bucket()),
				Key: aws.String(naming.CurrentKey(testProject, "staging"))})
			return err
		},
		"another release deployed": func(r *Region) error {
			l := ledger.New(r.S3(), r.Bucket())
			cur, _, err := l.GetCurrent(context.Background(), testProject, "staging")
			if err == nil {
				cur.ReleaseID = "20260301T130000Z-other"
				err = l.PutCurrent(context.Background(), testProject, "staging", cur)
			}
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			ends := 0
			pr := newPromotion(t, func(r *Region, arn string, ev asl.Event) {
				if ev.StateEntered != nil && ev.StateEntered.Name == shape.StateWaitForGate {
					haltWhenOnlyHeld(r, arn, ev)
				}
				if ev.StateExited != nil && ev.StateExited.Name == execution.TaskEndStage {
					if ends++; ends == 2 { // staging's stage ended: it runs the release
						assert.NoError(t, change(r))
					}
				}
			})
			pr.register(t, pr.configs()...)
			pr.addStagingAlarm(t)
			heldUntilHalted(t, pr, pr.start(t), "staging does not run artifact ")
		})
	}
}
